// RUN: mlwarp-opt %s --warp-autodiff | FileCheck %s
// Tile rules: a view's adjoint is written into its region of a zero tile (warp.tile_insert_view at the view's
// offsets); a max over the whole tile (and a min or a product) is differentiated on the tile seen as 1-d
// (tile_reshape, warp.tile_reduce_adjoint along axis 0, reshaped back); a product along an axis by
// warp.tile_reduce_adjoint along that axis.

// CHECK-LABEL: func.func @k_adj(
// CHECK-SAME: %[[A:[^:]+]]: !warp.array<f32, 2 : i64>, %[[I:[^:]+]]: i32,
// forward replay
// CHECK: %[[T:.+]] = "warp.tile_load"(%[[A]]
// the view (reverse order: first)
// CHECK: %[[GV:.+]] = "warp.tile_load"(%{{.+}}) : (!warp.array<f32, 1 : i64>, i32) -> !warp.tile<f32, array<i64: 4>>
// CHECK: "warp.tile_insert_view"(%{{.+}}, %[[GV]], %[[I]], %{{.+}}) {steps = array<i64: 0, 1>} : (!warp.tile<f32, array<i64: 3, 4>>, !warp.tile<f32, array<i64: 4>>, i32, i32) -> !warp.tile<f32, array<i64: 3, 4>>
// the product along axis 1
// CHECK: %[[GP:.+]] = "warp.tile_load"(%{{.+}}) : (!warp.array<f32, 1 : i64>, i32) -> !warp.tile<f32, array<i64: 3>>
// CHECK: "warp.tile_reduce_adjoint"(%[[T]], %[[GP]]) {axis = 1 : i64, kind = "mul"} : (!warp.tile<f32, array<i64: 3, 4>>, !warp.tile<f32, array<i64: 3>>) -> !warp.tile<f32, array<i64: 3, 4>>
// the whole tile's max
// CHECK: %[[GM:.+]] = "warp.tile_load"(%{{.+}}) : (!warp.array<f32, 1 : i64>, i32) -> !warp.tile<f32, array<i64: 1>>
// CHECK: %[[FLAT:.+]] = "warp.tile_reshape"(%[[T]]) : (!warp.tile<f32, array<i64: 3, 4>>) -> !warp.tile<f32, array<i64: 12>>
// CHECK: %[[G:.+]] = "warp.tile_reduce_adjoint"(%[[FLAT]], %[[GM]]) {axis = 0 : i64, kind = "max"} : (!warp.tile<f32, array<i64: 12>>, !warp.tile<f32, array<i64: 1>>) -> !warp.tile<f32, array<i64: 12>>
// CHECK: "warp.tile_reshape"(%[[G]]) : (!warp.tile<f32, array<i64: 12>>) -> !warp.tile<f32, array<i64: 3, 4>>
// CHECK: "warp.tile_atomic_add"
module attributes {warp.tiles} {
  func.func @k(%arg0: !warp.array<f32, 2 : i64>, %arg1: i32, %arg2: !warp.array<f32, 1 : i64>, %arg3: !warp.array<f32, 1 : i64>, %arg4: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %c0_i32 = arith.constant 0 : i32
    %c0_i32_0 = arith.constant 0 : i32
    %0 = "warp.tile_load"(%arg0, %c0_i32, %c0_i32_0) : (!warp.array<f32, 2 : i64>, i32, i32) -> !warp.tile<f32, array<i64: 3, 4>>
    %1 = "warp.tile_reduce"(%0) {axis = -1 : i64, kind = "max"} : (!warp.tile<f32, array<i64: 3, 4>>) -> !warp.tile<f32, array<i64: 1>>
    %c0_i32_1 = arith.constant 0 : i32
    "warp.tile_store"(%arg2, %1, %c0_i32_1) : (!warp.array<f32, 1 : i64>, !warp.tile<f32, array<i64: 1>>, i32) -> ()
    %2 = "warp.tile_reduce"(%0) {axis = 1 : i64, kind = "mul"} : (!warp.tile<f32, array<i64: 3, 4>>) -> !warp.tile<f32, array<i64: 3>>
    %c0_i32_2 = arith.constant 0 : i32
    "warp.tile_store"(%arg3, %2, %c0_i32_2) : (!warp.array<f32, 1 : i64>, !warp.tile<f32, array<i64: 3>>, i32) -> ()
    %c0_i32_3 = arith.constant 0 : i32
    %3 = "warp.tile_view"(%0, %arg1, %c0_i32_3) {steps = array<i64: 0, 1>} : (!warp.tile<f32, array<i64: 3, 4>>, i32, i32) -> !warp.tile<f32, array<i64: 4>>
    %c0_i32_4 = arith.constant 0 : i32
    "warp.tile_store"(%arg4, %3, %c0_i32_4) : (!warp.array<f32, 1 : i64>, !warp.tile<f32, array<i64: 4>>, i32) -> ()
    return
  }
}
