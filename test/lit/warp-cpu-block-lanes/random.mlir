// RUN: mlwarp-opt %s --warp-cpu-block-lanes | FileCheck %s

// tile_randi with 4 lanes as Warp's: lane l draws from its own generator (the state + l) the elements l, l + 4,
// ...: a loop over the lanes writes row l of a (4, 3) tile with tile_random(state + l) of 3 draws, transposed
// (element e = l + 4 j is lane l's j-th draw), its first 10 elements the tile.

// CHECK-LABEL: func.func @random
// CHECK: %[[GRID0:.+]] = "warp.tile_full"(%{{.+}}) : (i32) -> !warp.tile<i32, array<i64: 4, 3>>
// CHECK: %[[GRID:.+]] = scf.for %[[L:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[G:.+]] = %[[GRID0]])
// CHECK: %[[LANE:.+]] = arith.index_cast %[[L]] : index to i32
// CHECK: %[[LU:.+]] = "warp.cast"(%[[LANE]]) : (i32) -> ui32
// CHECK: %[[MINE:.+]] = "warp.add"(%arg1, %[[LU]]) : (ui32, ui32) -> ui32
// CHECK: %[[DRAWN:.+]] = "warp.tile_random"(%[[MINE]]) {kind = "randi"} : (ui32) -> !warp.tile<i32, array<i64: 3>>
// CHECK: %[[ROW:.+]] = "warp.tile_reshape"(%[[DRAWN]]) : (!warp.tile<i32, array<i64: 3>>) -> !warp.tile<i32, array<i64: 1, 3>>
// CHECK: "warp.tile_insert_view"(%[[G]], %[[ROW]], %[[LANE]], %{{.+}})
// CHECK: %[[T:.+]] = "warp.tile_transpose"(%[[GRID]]) : (!warp.tile<i32, array<i64: 4, 3>>) -> !warp.tile<i32, array<i64: 3, 4>>
// CHECK: %[[FLAT:.+]] = "warp.tile_reshape"(%[[T]]) : (!warp.tile<i32, array<i64: 3, 4>>) -> !warp.tile<i32, array<i64: 12>>
// CHECK: "warp.tile_view"(%[[FLAT]], %{{.+}}) {steps = array<i64: 1>} : (!warp.tile<i32, array<i64: 12>>, i32) -> !warp.tile<i32, array<i64: 10>>
module attributes {warp.cpu_lanes = 4 : i64, warp.tiles} {
  func.func @random(%arg0: !warp.array<i32, 1 : i64>, %arg1: ui32) attributes {warp.kernel} {
    %c0 = arith.constant 0 : i32
    %t = "warp.tile_random"(%arg1) {kind = "randi"} : (ui32) -> !warp.tile<i32, array<i64: 10>>
    "warp.tile_store"(%arg0, %t, %c0) : (!warp.array<i32, 1 : i64>, !warp.tile<i32, array<i64: 10>>, i32) -> ()
    return
  }
}
