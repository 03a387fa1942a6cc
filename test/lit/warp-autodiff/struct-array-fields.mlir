// RUN: mlwarp-opt %s --warp-autodiff | FileCheck %s
// A struct argument's adjoint is a struct of its type; a read of one of its array fields (s.inner.w[i], and
// q.w[i] of a copy q of s with another field replaced) accumulates into the same field of the adjoint struct.

// CHECK-LABEL: func.func @k_adj(
// CHECK-SAME: %[[S:[^:]+]]: !warp.struct<"Outer", [f32, !warp.struct<"S", [f32, !warp.array<f32, 1 : i64>]>]>, %[[Y:[^:]+]]: !warp.array<f32, 1 : i64>, %[[ADJ_S:[^:]+]]: !warp.struct<"Outer", [f32, !warp.struct<"S", [f32, !warp.array<f32, 1 : i64>]>]>, %[[ADJ_Y:[^:]+]]: !warp.array<f32, 1 : i64>, %{{[^:]+}}: i64, %{{[^:]+}}: i64)
// reverse of the store: the adjoint of the sum is adj_y[i]
// CHECK: %[[G:.+]] = "warp.load"(%[[ADJ_Y]],
// reverse of the read q.w[i] (q = s.inner with its scale replaced): adj_s.inner.w[i] +=
// CHECK: %[[ADJ_INNER:.+]] = "warp.struct_get"(%[[ADJ_S]]) {field = 1 : i64}
// CHECK: %[[ADJ_W:.+]] = "warp.struct_get"(%[[ADJ_INNER]]) {field = 1 : i64}
// CHECK: "warp.atomic"(%[[ADJ_W]], %[[G]], %{{.+}}) {kind = "add"}
// reverse of the read s.inner.w[i]: the same field again
// CHECK: %[[ADJ_INNER2:.+]] = "warp.struct_get"(%[[ADJ_S]]) {field = 1 : i64}
// CHECK: %[[ADJ_W2:.+]] = "warp.struct_get"(%[[ADJ_INNER2]]) {field = 1 : i64}
// CHECK: "warp.atomic"(%[[ADJ_W2]], %[[G]], %{{.+}}) {kind = "add"}
module {
  func.func @k(%s: !warp.struct<"Outer", [f32, !warp.struct<"S", [f32, !warp.array<f32, 1 : i64>]>]>,
               %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %three = arith.constant 3.0 : f32
    %i = "warp.tid"() : () -> i32
    %inner = "warp.struct_get"(%s) {field = 1 : i64} : (!warp.struct<"Outer", [f32, !warp.struct<"S", [f32, !warp.array<f32, 1 : i64>]>]>) -> !warp.struct<"S", [f32, !warp.array<f32, 1 : i64>]>
    %w = "warp.struct_get"(%inner) {field = 1 : i64} : (!warp.struct<"S", [f32, !warp.array<f32, 1 : i64>]>) -> !warp.array<f32, 1 : i64>
    %a = "warp.load"(%w, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %q = "warp.struct_set"(%inner, %three) {field = 0 : i64} : (!warp.struct<"S", [f32, !warp.array<f32, 1 : i64>]>, f32) -> !warp.struct<"S", [f32, !warp.array<f32, 1 : i64>]>
    %qw = "warp.struct_get"(%q) {field = 1 : i64} : (!warp.struct<"S", [f32, !warp.array<f32, 1 : i64>]>) -> !warp.array<f32, 1 : i64>
    %b = "warp.load"(%qw, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %sum = "warp.add"(%a, %b) : (f32, f32) -> f32
    "warp.store"(%y, %sum, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
