// RUN: mlwarp-opt %s --warp-autodiff | FileCheck %s
// A barrier of Warp's CPU lanes (warp.tile_sync) stays in the forward replay and has its mirror in the reverse
// sweep: the adjoint of what the lanes did after it (here: every lane's read of t[0]) is in before any lane's
// adjoint of what came before (the load that made t).

// CHECK-LABEL: func.func @k_adj(
// forward replay: the barrier (the load and the read fed only the store, which the replay skips: erased)
// CHECK-NOT: "warp.tile_load"
// CHECK: "warp.tile_sync"()
// CHECK-NOT: "warp.tile_extract"
// reverse: the read's adjoint, the barrier, then the load's
// CHECK: "warp.tile_insert"(%{{.+}}, %{{.+}}, %{{.+}}) : (!warp.tile<f32, array<i64: 4>>, f32, i32)
// CHECK: "warp.tile_sync"()
// CHECK: "warp.tile_atomic_add"
module attributes {warp.cpu_lanes = 4 : i64, warp.tiles} {
  func.func @k(%arg0: !warp.array<f32, 1 : i64>, %arg1: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %c0 = arith.constant 0 : i32
    %t = "warp.tile_load"(%arg0, %c0) : (!warp.array<f32, 1 : i64>, i32) -> !warp.tile<f32, array<i64: 4>>
    "warp.tile_sync"() : () -> ()
    %x = "warp.tile_extract"(%t, %c0) : (!warp.tile<f32, array<i64: 4>>, i32) -> f32
    "warp.store"(%arg1, %x, %c0) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
