// RUN: mlwarp-opt %s --warp-cpu-block-lanes | FileCheck %s

// In an adjoint, a lane's adjoint of a tile element it read is written into a fresh zero tile (warp-autodiff's
// tile_insert(zeros, adj, i)): as an addition (z[i] + adj) the tile carried from lane to lane holds the sum of
// the lanes' contributions.

// CHECK-LABEL: func.func @k_adj
// CHECK: %[[Z:.+]] = "warp.tile_full"(%{{.+}}) : (f32) -> !warp.tile<f32, array<i64: 4>>
// CHECK: scf.for {{.+}} iter_args(%[[C:.+]] = %[[Z]]
// CHECK: %[[OLD:.+]] = "warp.tile_extract"(%[[C]], %c0_i32)
// CHECK: %[[SUM:.+]] = "warp.add"(%[[OLD]], %{{.+}})
// CHECK: "warp.tile_insert"(%[[C]], %[[SUM]], %c0_i32)
module attributes {warp.cpu_lanes = 4 : i64, warp.tiles} {
  func.func @k_adj(%arg0: !warp.array<f32, 1 : i64>, %arg1: !warp.array<f32, 1 : i64>) attributes {warp.adjoint_of = "k", warp.kernel} {
    %c0_i32 = arith.constant 0 : i32
    %zero = arith.constant 0.0 : f32
    %0:2 = "warp.tid"() : () -> (i32, i32)
    %g = "warp.load"(%arg1, %0#1) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %z = "warp.tile_full"(%zero) : (f32) -> !warp.tile<f32, array<i64: 4>>
    %c = "warp.tile_insert"(%z, %g, %c0_i32) : (!warp.tile<f32, array<i64: 4>>, f32, i32) -> !warp.tile<f32, array<i64: 4>>
    %previous_unread = "warp.tile_atomic_add"(%arg0, %c, %c0_i32) : (!warp.array<f32, 1 : i64>, !warp.tile<f32, array<i64: 4>>, i32) -> !warp.tile<f32, array<i64: 4>>
    return
  }
}
