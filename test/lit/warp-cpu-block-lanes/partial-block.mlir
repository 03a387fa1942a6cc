// RUN: mlwarp-opt %s --warp-cpu-block-lanes | FileCheck %s

// A partial block (fewer active lanes than 4): element e of a tile belongs to lane e % 4, and a missing lane's
// elements take no part. In such a block a reduction reads its identity there (-inf for a max), a tile_store writes
// back what the array holds there (the tile loaded from it), a tile_atomic_add adds zero; in a full block the tiles
// are used as they are (the scf.if's else).

// CHECK-LABEL: func.func @partial
// CHECK: %[[ACTIVE:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: %[[ACTIVE32:.+]] = arith.trunci %{{.+}} : i64 to i32
// CHECK: %[[T:.+]] = "warp.tile_load"(%arg0
// CHECK: %[[PARTIAL:.+]] = arith.cmpi slt, %[[ACTIVE]], %c4
// CHECK: %[[MAXIN:.+]] = scf.if %[[PARTIAL]] -> (!warp.tile<f32, array<i64: 2, 4>>) {
// CHECK: %[[E:.+]] = "warp.tile_arange"
// CHECK: %[[E2:.+]] = "warp.tile_reshape"(%[[E]]) : (!warp.tile<i32, array<i64: 8>>) -> !warp.tile<i32, array<i64: 2, 4>>
// CHECK: "warp.tile_map"(%[[E2]], %[[T]])
// CHECK: ^bb0(%[[I:.+]]: i32, %[[X:.+]]: f32):
// CHECK: %[[LANE:.+]] = arith.remsi %[[I]], %c4_i32
// CHECK: %[[HERE:.+]] = arith.cmpi slt, %[[LANE]], %[[ACTIVE32]]
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: arith.select %[[HERE]], %[[X]], %[[NINF]]
// CHECK: } else {
// CHECK: scf.yield %[[T]]
// CHECK: "warp.tile_reduce"(%[[MAXIN]]) {axis = 0 : i64, kind = "max"}
// CHECK: scf.if
// CHECK: %[[OLD:.+]] = "warp.tile_load"(%arg1
// CHECK: "warp.tile_map"(%{{.+}}, %[[T]], %[[OLD]])
// CHECK: "warp.tile_store"(%arg1
// CHECK: scf.if
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.select %{{.+}}, %{{.+}}, %[[ZERO]]
// CHECK: "warp.tile_atomic_add"(%arg1
module attributes {warp.cpu_lanes = 4 : i64, warp.tiles} {
  func.func @partial(%arg0: !warp.array<f32, 2 : i64>, %arg1: !warp.array<f32, 2 : i64>) attributes {warp.kernel} {
    %c0 = arith.constant 0 : i32
    %t = "warp.tile_load"(%arg0, %c0, %c0) : (!warp.array<f32, 2 : i64>, i32, i32) -> !warp.tile<f32, array<i64: 2, 4>>
    %m = "warp.tile_reduce"(%t) {axis = 0 : i64, kind = "max"} : (!warp.tile<f32, array<i64: 2, 4>>) -> !warp.tile<f32, array<i64: 4>>
    "warp.tile_store"(%arg1, %t, %c0, %c0) : (!warp.array<f32, 2 : i64>, !warp.tile<f32, array<i64: 2, 4>>, i32, i32) -> ()
    %previous_unread = "warp.tile_atomic_add"(%arg1, %t, %c0, %c0) : (!warp.array<f32, 2 : i64>, !warp.tile<f32, array<i64: 2, 4>>, i32, i32) -> !warp.tile<f32, array<i64: 2, 4>>
    return
  }
}
