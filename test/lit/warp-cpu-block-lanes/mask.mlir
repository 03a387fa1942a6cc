// RUN: mlwarp-opt %s --warp-cpu-block-lanes | FileCheck %s

// An early return before a tile operation: the lane-dependent scf.if runs once per block when any lane takes it
// (its condition kept per lane as a byte), a tile write in it only then, and its lane-local code only on the lanes
// that took it.

// CHECK-LABEL: func.func @early_return
// CHECK: %[[CARRY:.+]]:2 = scf.for {{.+}} -> (!warp.tile<i32, array<i64: 4>>, !warp.tile<i8, array<i64: 4>>)
// CHECK: arith.extui %{{.+}} : i1 to i8
// CHECK: %[[ANY:.+]] = scf.for {{.+}} -> (i1)
// CHECK: "warp.tile_extract"(%[[CARRY]]#1
// CHECK: arith.ori
// CHECK: scf.if %[[ANY]] {
// CHECK: %[[SOME:.+]] = scf.for {{.+}} -> (i1)
// CHECK: scf.if %[[SOME]] {
// CHECK-NEXT: "warp.tile_store"
// CHECK: scf.for
// CHECK: %[[MINE:.+]] = "warp.tile_extract"(%[[CARRY]]#1
// CHECK: %[[TAKEN:.+]] = arith.trunci %[[MINE]] : i8 to i1
// CHECK: scf.if %[[TAKEN]] {
// CHECK: "warp.store"
module attributes {warp.cpu_lanes = 4 : i64, warp.tiles} {
  func.func @early_return(%arg0: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1.0 : f32
    %0:2 = "warp.tid"() : () -> (i32, i32)
    %keep = "warp.ne"(%0#1, %c0) : (i32, i32) -> i1
    scf.if %keep {
      %t = "warp.tile_full"(%one) : (f32) -> !warp.tile<f32, array<i64: 4>>
      "warp.tile_store"(%arg0, %t, %c0) : (!warp.array<f32, 1 : i64>, !warp.tile<f32, array<i64: 4>>, i32) -> ()
      "warp.store"(%arg0, %one, %0#1) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    }
    return
  }
}
