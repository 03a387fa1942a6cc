// RUN: mlwarp-opt %s --warp-autodiff | FileCheck %s
// An array over raw memory (warp.array_from_ptr) has an adjoint only when the op has a grad address (Warp's
// array_t grad pointer: wp.mesh_get's points): the adjoint is an array of the same shape over that address,
// accessed only where the address is not 0 (a mesh whose points have no .grad). Without one, reads are constants.

// A read with a grad address adds into it, under the null check; the read without one (%b) adds nothing.
// CHECK-LABEL: func.func @k_adj(
// CHECK-SAME: %[[P:[^:]+]]: i64, %[[G:[^:]+]]: i64, %[[N:[^:]+]]: i32,
// CHECK: %[[TID:.+]] = "warp.tid"()
// (one product: adj_a = b adj_out; the forward product and adj_b, which nothing reads, are erased)
// CHECK: %[[DX:.+]] = "warp.mul"
// CHECK-NOT: "warp.mul"
// CHECK: %[[ADJ:.+]] = "warp.array_from_ptr"(%[[G]], %[[N]]) {operandSegmentSizes = array<i32: 1, 1, 0>}
// CHECK: %[[HAS:.+]] = arith.cmpi ne, %[[G]], %{{.+}} : i64
// CHECK: scf.if %[[HAS]] {
// CHECK-NEXT: "warp.atomic"(%[[ADJ]], %[[DX]], %[[TID]]) {kind = "add"}
// CHECK-NEXT: }
// CHECK-NOT: "warp.atomic"
// CHECK: return

// A store reads its value's adjoint from the grad memory, zero where there is none.
// CHECK-LABEL: func.func @s_adj(
// CHECK-SAME: %[[P:[^:]+]]: i64, %[[G:[^:]+]]: i64, %[[N:[^:]+]]: i32,
// CHECK: %[[ADJ:.+]] = "warp.array_from_ptr"(%[[G]], %[[N]])
// CHECK: %[[HAS:.+]] = arith.cmpi ne, %[[G]], %{{.+}} : i64
// CHECK: %[[DV:.+]] = scf.if %[[HAS]] -> (f32) {
// CHECK-NEXT: %[[R:.+]] = "warp.load"(%[[ADJ]], %{{.+}})
// CHECK-NEXT: scf.yield %[[R]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT: arith.constant 0.0
// CHECK-NEXT: scf.yield
// CHECK: "warp.mul"(%{{.+}}, %[[DV]])

// Through a struct field (mesh_get's MeshData: a zero struct, the array set into it, read back): the adjoint
// is the one of the array set there.
// CHECK-LABEL: func.func @m_adj(
// CHECK-SAME: %[[P:[^:]+]]: i64, %[[G:[^:]+]]: i64, %[[N:[^:]+]]: i32,
// CHECK: %[[ADJ:.+]] = "warp.array_from_ptr"(%[[G]], %[[N]])
// CHECK: scf.if
// CHECK-NEXT: "warp.atomic"(%[[ADJ]], %{{.+}}, %{{.+}}) {kind = "add"}
module {
  func.func @k(%p: i64, %g: i64, %n: i32, %out: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %a = "warp.array_from_ptr"(%p, %n, %g) {operandSegmentSizes = array<i32: 1, 1, 1>} : (i64, i32, i64) -> !warp.array<f32, 1 : i64>
    %b = "warp.array_from_ptr"(%p, %n) {operandSegmentSizes = array<i32: 1, 1, 0>} : (i64, i32) -> !warp.array<f32, 1 : i64>
    %x = "warp.load"(%a, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %y = "warp.load"(%b, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %v = "warp.mul"(%x, %y) : (f32, f32) -> f32
    "warp.store"(%out, %v, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
  func.func @s(%p: i64, %g: i64, %n: i32, %in: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %a = "warp.array_from_ptr"(%p, %n, %g) {operandSegmentSizes = array<i32: 1, 1, 1>} : (i64, i32, i64) -> !warp.array<f32, 1 : i64>
    %x = "warp.load"(%in, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %v = "warp.mul"(%x, %x) : (f32, f32) -> f32
    "warp.store"(%a, %v, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
  func.func @m(%p: i64, %g: i64, %n: i32, %out: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %z = "warp.construct"() : () -> !warp.struct<"M", [!warp.array<f32, 1 : i64>, i32]>
    %a = "warp.array_from_ptr"(%p, %n, %g) {operandSegmentSizes = array<i32: 1, 1, 1>} : (i64, i32, i64) -> !warp.array<f32, 1 : i64>
    %s = "warp.struct_set"(%z, %a) {field = 0 : i64} : (!warp.struct<"M", [!warp.array<f32, 1 : i64>, i32]>, !warp.array<f32, 1 : i64>) -> !warp.struct<"M", [!warp.array<f32, 1 : i64>, i32]>
    %f = "warp.struct_get"(%s) {field = 0 : i64} : (!warp.struct<"M", [!warp.array<f32, 1 : i64>, i32]>) -> !warp.array<f32, 1 : i64>
    %x = "warp.load"(%f, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %v = "warp.mul"(%x, %x) : (f32, f32) -> f32
    "warp.store"(%out, %v, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
