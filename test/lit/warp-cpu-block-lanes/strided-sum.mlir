// RUN: mlwarp-opt %s --warp-cpu-block-lanes | FileCheck %s

// A whole-tile sum with 4 lanes in Warp's order: the 10 elements' first 8 as rows of 4 reduced along axis 0 (lane
// l's partial: elements l, l + 4), the last 2 added to the first two partials, then the partials folded in lane
// order. A max keeps its one reduction (its result does not depend on the order), and so does a sum of a tile of
// at most 4 elements. (Each reduction's input is first the tile with a partial block's missing lanes' elements
// replaced by the identity: partial-block.mlir.)

// CHECK-LABEL: func.func @sums
// CHECK: %[[T:.+]] = scf.if %{{.+}} -> (!warp.tile<f32, array<i64: 10>>)
// CHECK: %[[MAIN:.+]] = "warp.tile_view"(%[[T]], %{{.+}}) {steps = array<i64: 1>} : (!warp.tile<f32, array<i64: 10>>, i32) -> !warp.tile<f32, array<i64: 8>>
// CHECK: %[[GRID:.+]] = "warp.tile_reshape"(%[[MAIN]]) : (!warp.tile<f32, array<i64: 8>>) -> !warp.tile<f32, array<i64: 2, 4>>
// CHECK: %[[PARTS:.+]] = "warp.tile_reduce"(%[[GRID]]) {axis = 0 : i64, kind = "add"} : (!warp.tile<f32, array<i64: 2, 4>>) -> !warp.tile<f32, array<i64: 4>>
// CHECK: %[[TAIL:.+]] = "warp.tile_view"(%[[T]], %{{.+}}) {steps = array<i64: 1>} : (!warp.tile<f32, array<i64: 10>>, i32) -> !warp.tile<f32, array<i64: 2>>
// CHECK: %[[HEAD:.+]] = "warp.tile_view"(%[[PARTS]], %{{.+}}) {steps = array<i64: 1>} : (!warp.tile<f32, array<i64: 4>>, i32) -> !warp.tile<f32, array<i64: 2>>
// CHECK: %[[BOTH:.+]] = "warp.add"(%[[HEAD]], %[[TAIL]])
// CHECK: %[[FIXED:.+]] = "warp.tile_insert_view"(%[[PARTS]], %[[BOTH]], %{{.+}})
// CHECK: "warp.tile_reduce"(%[[FIXED]]) {axis = -1 : i64, kind = "add"} : (!warp.tile<f32, array<i64: 4>>) -> !warp.tile<f32, array<i64: 1>>
// CHECK: %[[TM:.+]] = scf.if %{{.+}} -> (!warp.tile<f32, array<i64: 10>>)
// CHECK: "warp.tile_reduce"(%[[TM]]) {axis = -1 : i64, kind = "max"}
// CHECK: "warp.tile_reduce"(%{{.+}}) {axis = -1 : i64, kind = "add"} : (!warp.tile<f32, array<i64: 3>>)
module attributes {warp.cpu_lanes = 4 : i64, warp.tiles} {
  func.func @sums(%arg0: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %c0 = arith.constant 0 : i32
    %t = "warp.tile_load"(%arg0, %c0) : (!warp.array<f32, 1 : i64>, i32) -> !warp.tile<f32, array<i64: 10>>
    %s = "warp.tile_reduce"(%t) {axis = -1 : i64, kind = "add"} : (!warp.tile<f32, array<i64: 10>>) -> !warp.tile<f32, array<i64: 1>>
    %m = "warp.tile_reduce"(%t) {axis = -1 : i64, kind = "max"} : (!warp.tile<f32, array<i64: 10>>) -> !warp.tile<f32, array<i64: 1>>
    %small = "warp.tile_load"(%arg0, %c0) : (!warp.array<f32, 1 : i64>, i32) -> !warp.tile<f32, array<i64: 3>>
    %ss = "warp.tile_reduce"(%small) {axis = -1 : i64, kind = "add"} : (!warp.tile<f32, array<i64: 3>>) -> !warp.tile<f32, array<i64: 1>>
    "warp.tile_store"(%arg0, %s, %c0) : (!warp.array<f32, 1 : i64>, !warp.tile<f32, array<i64: 1>>, i32) -> ()
    "warp.tile_store"(%arg0, %m, %c0) : (!warp.array<f32, 1 : i64>, !warp.tile<f32, array<i64: 1>>, i32) -> ()
    "warp.tile_store"(%arg0, %ss, %c0) : (!warp.array<f32, 1 : i64>, !warp.tile<f32, array<i64: 1>>, i32) -> ()
    return
  }
}
