// RUN: mlwarp-opt %s --convert-warp-tiles-to-linalg | FileCheck %s

// tile_atomic_add whose result (the array's elements before the add) is read: a loop nest carrying the tile of
// the values each atomic returned, zero past the array's upper extent; not a write nest for CUDA's lanes, and the
// module is marked as assuming one lane per block. One whose result nobody reads stays the plain write nest.

// CHECK: module attributes {warp.one_lane_tiles = "tile_atomic_add's result"}
// CHECK-LABEL: func.func @previous
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<2x4xf32>
// CHECK: %[[OUTER:.+]] = scf.for %[[I:.+]] = {{.+}} iter_args(%[[T0:.+]] = %[[EMPTY]]) -> (tensor<2x4xf32>)
// CHECK:   scf.for %[[J:.+]] = {{.+}} iter_args(%[[T1:.+]] = %[[T0]]) -> (tensor<2x4xf32>)
// CHECK:     %[[OLD:.+]] = scf.if %{{.+}} -> (f32) {
// CHECK:       %[[R:.+]] = "warp.atomic"(%{{.+}}) {kind = "add"}
// CHECK:       scf.yield %[[R]] : f32
// CHECK:     } else {
// CHECK:       scf.yield %{{.+}} : f32
// CHECK:     %[[NEXT:.+]] = tensor.insert %[[OLD]] into %[[T1]][%[[I]], %[[J]]] : tensor<2x4xf32>
// CHECK:     scf.yield %[[NEXT]] : tensor<2x4xf32>
// CHECK-NOT: warp.writes_tile = "tile_atomic_add"
// CHECK: tensor.extract %[[OUTER]]
// CHECK: "warp.store"
// CHECK-LABEL: func.func @unread
// CHECK: "warp.atomic"
// CHECK: {warp.writes_tile = "tile_atomic_add"}
module {
  func.func @previous(%a: !warp.array<f32, 2 : i64>, %out: !warp.array<f32, 2 : i64>, %x: f32) {
    %c0 = arith.constant 0 : i32
    %t = "warp.tile_full"(%x) : (f32) -> !warp.tile<f32, array<i64: 2, 4>>
    %p = "warp.tile_atomic_add"(%a, %t, %c0, %c0) : (!warp.array<f32, 2 : i64>, !warp.tile<f32, array<i64: 2, 4>>, i32, i32) -> !warp.tile<f32, array<i64: 2, 4>>
    "warp.tile_store"(%out, %p, %c0, %c0) : (!warp.array<f32, 2 : i64>, !warp.tile<f32, array<i64: 2, 4>>, i32, i32) -> ()
    return
  }
  func.func @unread(%a: !warp.array<f32, 2 : i64>, %x: f32) {
    %c0 = arith.constant 0 : i32
    %t = "warp.tile_full"(%x) : (f32) -> !warp.tile<f32, array<i64: 2, 4>>
    %p = "warp.tile_atomic_add"(%a, %t, %c0, %c0) : (!warp.array<f32, 2 : i64>, !warp.tile<f32, array<i64: 2, 4>>, i32, i32) -> !warp.tile<f32, array<i64: 2, 4>>
    return
  }
}
