// RUN: mlwarp-opt %s --warp-bounds-check | FileCheck %s

// `a[i]` of a 2-d array (warp.view) checks i against a's first extent: an
// out-of-range i is recorded and the view takes index 0 instead, so the
// accesses through the row stay inside a; the row's own load is checked
// against the row's extent. Both sites name argument 0.

// CHECK: warp.debug_sites = "[{\22op\22: \22view\22, \22arg\22: 0, {{.+}}{\22op\22: \22load\22, \22arg\22: 0,
// CHECK-LABEL: func.func @k(
// CHECK-SAME: %[[A:[^:]+]]: !warp.array<f32, 2 : i64>, %[[I:[^:]+]]: i32, %[[REC:[^:]+]]: !warp.array<i64, 1 : i64>)
// CHECK: %[[N:.+]] = "warp.array_dim"(%[[A]]) {dim = 0 : i64}
// CHECK: %[[OK:.+]] = arith.cmpi ult, %{{.+}}, %[[N]]
// CHECK: %[[SAFE:.+]] = arith.select %[[OK]], %[[I]], %{{.+}} : i32
// CHECK: %[[BAD:.+]] = arith.xori %[[OK]], %{{.+}} : i1
// CHECK: scf.if %[[BAD]] {
// CHECK: "warp.atomic"(%[[REC]]
// CHECK: }
// CHECK: %[[ROW:.+]] = "warp.view"(%[[A]], %[[SAFE]])
// CHECK: "warp.array_dim"(%[[ROW]]) {dim = 0 : i64}
// CHECK: scf.if
// CHECK: "warp.load"(%[[ROW]], %[[I]])
func.func @k(%a: !warp.array<f32, 2>, %i: i32) attributes {warp.kernel} {
  %r = "warp.view"(%a, %i) : (!warp.array<f32, 2>, i32) -> !warp.array<f32, 1>
  %0 = "warp.load"(%r, %i) : (!warp.array<f32, 1>, i32) -> f32
  return
}
