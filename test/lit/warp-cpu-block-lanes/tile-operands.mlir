// RUN: mlwarp-opt %s --warp-cpu-block-lanes | FileCheck %s

// Tile operations whose operands differ between lanes, as Warp's lanes run them: each lane computes the elements
// it owns (element e is lane e % 4's) with its own operands. A run-time test over the lanes keeps the common case
// (every lane the same operands) one operation on the first lane's; otherwise the operation runs once per lane.

// tile_full(a[lane]): per lane, its run's elements selected where the owner tile (arange % 4) is the lane; the
// store then sees the merged tile (through the partial block's selection, partial-block.mlir).
// CHECK-LABEL: func.func @full_of_lane_values
// CHECK: %[[SAME:.+]] = scf.for {{.+}} -> (i1)
// CHECK: %[[T:.+]] = scf.if %[[SAME]] -> (!warp.tile<f32, array<i64: 8>>)
// CHECK: "warp.tile_full"
// CHECK: } else {
// CHECK: %[[INDEX:.+]] = "warp.tile_arange"
// CHECK: %[[OWNER:.+]] = "warp.tile_map"(%[[INDEX]])
// CHECK: arith.remsi %{{.+}}, %c4_i32
// CHECK: scf.for %[[L:.+]] = {{.+}} iter_args(%[[MERGED:.+]] = %{{.+}})
// CHECK: %[[LANE:.+]] = arith.index_cast %[[L]] : index to i32
// CHECK: %[[MINE:.+]] = "warp.tile_full"
// CHECK: "warp.tile_map"(%[[OWNER]], %[[MINE]], %[[MERGED]])
// CHECK: arith.cmpi eq, %{{.+}}, %[[LANE]] : i32
// CHECK: arith.select
// CHECK: "warp.tile_map"(%{{.+}}, %[[T]], %{{.+}})
// CHECK: "warp.tile_store"(%arg1
module attributes {warp.cpu_lanes = 4 : i64, warp.tiles} {
  func.func @full_of_lane_values(%arg0: !warp.array<f32, 1 : i64>, %arg1: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %0:2 = "warp.tid"() : () -> (i32, i32)
    %x = "warp.load"(%arg0, %0#1) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %t = "warp.tile_full"(%x) : (f32) -> !warp.tile<f32, array<i64: 8>>
    %c0 = arith.constant 0 : i32
    "warp.tile_store"(%arg1, %t, %c0) : (!warp.array<f32, 1 : i64>, !warp.tile<f32, array<i64: 8>>, i32) -> ()
    return
  }

// A store at each lane's own offset writes only that lane's elements there: the others are what the array holds
// (a tile_load at the same offset).
// CHECK-LABEL: func.func @store_at_lane_offsets
// CHECK: scf.if %{{.+}} {
// CHECK: "warp.tile_store"(%arg1, %{{.+}}, %[[FIRST:.+]])
// CHECK: } else {
// CHECK: scf.for
// CHECK: %[[OFFSET:.+]] = "warp.tile_extract"
// CHECK: %[[HELD:.+]] = "warp.tile_load"(%arg1, %[[OFFSET]])
// CHECK: %[[OWN:.+]] = "warp.tile_map"(%{{.+}}, %{{.+}}, %[[HELD]])
// CHECK: "warp.tile_store"(%arg1, %[[OWN]], %[[OFFSET]])
  func.func @store_at_lane_offsets(%arg0: !warp.array<f32, 1 : i64>, %arg1: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %0:2 = "warp.tid"() : () -> (i32, i32)
    %c0 = arith.constant 0 : i32
    %t = "warp.tile_load"(%arg0, %c0) : (!warp.array<f32, 1 : i64>, i32) -> !warp.tile<f32, array<i64: 8>>
    "warp.tile_store"(%arg1, %t, %0#1) : (!warp.array<f32, 1 : i64>, !warp.tile<f32, array<i64: 8>>, i32) -> ()
    return
  }

// Left alone: operands the same on every lane by construction (kernel arguments, constants, block-level values)
// need no test (the scf.if left is the partial block's, partial-block.mlir).
// CHECK-LABEL: func.func @uniform_operands
// CHECK-NOT: warp.eq
// CHECK: "warp.tile_full"(%arg2) : (f32) -> !warp.tile<f32, array<i64: 8>>
// CHECK-NOT: warp.eq
// CHECK: return
  func.func @uniform_operands(%arg0: !warp.array<f32, 1 : i64>, %arg1: !warp.array<f32, 1 : i64>, %arg2: f32) attributes {warp.kernel} {
    %t = "warp.tile_full"(%arg2) : (f32) -> !warp.tile<f32, array<i64: 8>>
    %c0 = arith.constant 0 : i32
    "warp.tile_store"(%arg1, %t, %c0) : (!warp.array<f32, 1 : i64>, !warp.tile<f32, array<i64: 8>>, i32) -> ()
    return
  }
}
