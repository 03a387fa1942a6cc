// RUN: mlwarp-opt %s --warp-cpu-block-lanes | FileCheck %s

// A block-shared tile that lane-local code updates (the frontend's scatter: a branch around tile_insert): the lane
// loop carries it from lane to lane, each lane updating what the lanes before it left, and the code after the
// barrier reads the loop's result (every lane's update).

// CHECK-LABEL: func.func @scatter
// CHECK: %[[T0:.+]] = "warp.tile_full"
// CHECK: %[[DONE:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[T:.+]] = %[[T0]]) -> (!warp.tile<f32, array<i64: 4>>)
// CHECK: %[[OLD:.+]] = "warp.tile_extract"(%[[T]]
// CHECK: %[[NEW:.+]] = "warp.tile_insert"(%[[T]]
// CHECK: scf.yield %[[NEW]]
// CHECK: scf.for
// CHECK: "warp.tile_extract"(%[[DONE]], %c0_i32)
module attributes {warp.cpu_lanes = 4 : i64, warp.tiles} {
  func.func @scatter(%arg0: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1.0 : f32
    %t0 = "warp.tile_full"(%one) : (f32) -> !warp.tile<f32, array<i64: 4>>
    "warp.tile_sync"() : () -> ()
    %old = "warp.tile_extract"(%t0, %c0) : (!warp.tile<f32, array<i64: 4>>, i32) -> f32
    %sum = arith.addf %old, %one : f32
    %t1 = "warp.tile_insert"(%t0, %sum, %c0) : (!warp.tile<f32, array<i64: 4>>, f32, i32) -> !warp.tile<f32, array<i64: 4>>
    "warp.tile_sync"() : () -> ()
    %v = "warp.tile_extract"(%t1, %c0) : (!warp.tile<f32, array<i64: 4>>, i32) -> f32
    "warp.store"(%arg0, %v, %c0) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
