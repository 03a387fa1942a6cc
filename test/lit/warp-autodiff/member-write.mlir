// RUN: mlwarp-opt %s --warp-autodiff | FileCheck %s
// `y[i].y = v` is load -> insert -> store of the same element: the reverse of the store reads adj_y[i] and
// then clears it (Warp's in-place member store), so the load's adjoint adds back only the members the
// write left alone. A plain store (`z[i] = v`) reads its adjoint and clears it only when bit 1 of the
// last parameter says the launch passed z's own .grad (Warp 1.19 keeps an adjoint buffer the caller owns).

// CHECK-LABEL: func.func @k_adj(
// CHECK-SAME: %[[Y:[^:]+]]: !warp.array<!warp.vec<3 : i64, f32>, 1 : i64>, %[[Z:[^:]+]]: !warp.array<f32, 1 : i64>, %[[V:[^:]+]]: f32, %[[ADJ_Y:[^:]+]]: !warp.array<!warp.vec<3 : i64, f32>, 1 : i64>, %[[ADJ_Z:[^:]+]]: !warp.array<f32, 1 : i64>, %{{[^:]+}}: f32, %[[OWN:[^:]+]]: i64, %{{[^:]+}}: i64)
// reverse of `z[i] = v`: clear adj_z[i] if z's adjoint is its .grad (reading it into adj_v first: v is a
// by-value argument, whose adjoint nothing reads, so that load is erased)
// CHECK-NOT: "warp.load"(%[[ADJ_Z]]
// CHECK: %[[C1:.+]] = arith.constant 1 : i64
// CHECK: %[[SHIFTED:.+]] = arith.shrui %[[OWN]], %[[C1]] : i64
// CHECK: %[[BIT:.+]] = arith.andi %[[SHIFTED]]
// CHECK: %[[IS_OWN:.+]] = arith.cmpi ne, %[[BIT]]
// CHECK: scf.if %[[IS_OWN]] {
// CHECK-NEXT: %[[Z0:.+]] = arith.constant 0.0
// CHECK-NEXT: "warp.store"(%[[ADJ_Z]], %[[Z0]],
// CHECK-NEXT: }
// reverse of the member write: read adj_y[i], clear it
// CHECK: %[[G:.+]] = "warp.load"(%[[ADJ_Y]], %[[I:.+]]) :
// CHECK: %[[ZERO:.+]] = "warp.construct"() : () -> !warp.vec<3 : i64, f32>
// CHECK: "warp.store"(%[[ADJ_Y]], %[[ZERO]], %[[I]])
// the untouched members flow back through the load's adjoint
// CHECK: "warp.insert"(%[[G]]
// CHECK: "warp.store"(%[[ADJ_Y]]
module {
  func.func @k(%y: !warp.array<!warp.vec<3, f32>, 1 : i64>, %z: !warp.array<f32, 1 : i64>, %v: f32) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %c1 = arith.constant 1 : i32
    %e = "warp.load"(%y, %i) : (!warp.array<!warp.vec<3, f32>, 1 : i64>, i32) -> !warp.vec<3, f32>
    %n = "warp.insert"(%e, %v, %c1) : (!warp.vec<3, f32>, f32, i32) -> !warp.vec<3, f32>
    "warp.store"(%y, %n, %i) : (!warp.array<!warp.vec<3, f32>, 1 : i64>, !warp.vec<3, f32>, i32) -> ()
    "warp.store"(%z, %v, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
