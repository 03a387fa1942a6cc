// RUN: mlwarp-opt %s --warp-cpu-block-lanes | FileCheck %s

// A kernel built for 4 lanes: the lane values computed before the cooperative tile_full (%x and wp.tid()'s lane
// index) are kept per lane in carrier tiles of 4 elements (written at the end of the first lane loop); the tile
// operation runs once, between the loops: on the first lane's %x when every lane holds the same %x (a loop over
// the lanes tests it), else once per lane, element e of the result from lane e % 4's run (tile-operands.mlir);
// wp.tid()'s lane is the loop's lane (the block's base thread plus it, split over the launch dims), and the
// second loop reads each lane's elements back.

// CHECK-LABEL: func.func @gather
// CHECK: %[[BLOCK:.+]] = "warp.tid"() {warp.linear} : () -> i32
// CHECK: "warp.launch_dim"() {dim = 0 : i64}
// CHECK: "warp.launch_dim"() {dim = 3 : i64}
// CHECK: %[[BASE:.+]] = arith.muli %{{.+}}, %c4_i64 : i64
// CHECK: %[[ACTIVE:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: %[[INIT_I:.+]] = "warp.tile_full"(%{{.+}}) : (i32) -> !warp.tile<i32, array<i64: 4>>
// CHECK: %[[INIT_X:.+]] = "warp.tile_full"(%{{.+}}) : (f32) -> !warp.tile<f32, array<i64: 4>>
// CHECK: %[[C:.+]]:2 = scf.for %[[L:.+]] = %{{.+}} to %[[ACTIVE]] step %{{.+}} iter_args(%[[CI:.+]] = %[[INIT_I]], %[[CX:.+]] = %[[INIT_X]])
// CHECK: %[[LANE:.+]] = arith.index_cast %[[L]] : index to i32
// CHECK: arith.addi %[[BASE]], %{{.+}} : i64
// CHECK: %[[X:.+]] = "warp.load"
// CHECK: %[[WI:.+]] = "warp.tile_insert"(%[[CI]], %{{.+}}, %[[LANE]])
// CHECK: %[[WX:.+]] = "warp.tile_insert"(%[[CX]], %[[X]], %[[LANE]])
// CHECK: scf.yield %[[WI]], %[[WX]]
// CHECK: %[[FIRST:.+]] = "warp.tile_extract"(%[[C]]#1, %c0_i32{{.*}})
// CHECK: %[[SAME:.+]] = scf.for {{.+}} -> (i1)
// CHECK: "warp.eq"(%{{.+}}, %[[FIRST]])
// CHECK: scf.if %[[SAME]] -> (!warp.tile<f32, array<i64: 1>>)
// CHECK: "warp.tile_full"(%[[FIRST]]) : (f32) -> !warp.tile<f32, array<i64: 1>>
// CHECK: } else {
// CHECK: scf.for
// CHECK: "warp.tile_full"(%{{.+}}) : (f32) -> !warp.tile<f32, array<i64: 1>>
// CHECK-NOT: warp.tile_sync
// CHECK: scf.for %[[L2:.+]] = %{{.+}} to %[[ACTIVE]]
// CHECK: %[[LANE2:.+]] = arith.index_cast %[[L2]] : index to i32
// CHECK: %[[MINE:.+]] = "warp.tile_extract"(%[[C]]#1, %[[LANE2]])
// CHECK: %[[INDEX:.+]] = "warp.tile_extract"(%[[C]]#0, %[[LANE2]])
// CHECK: "warp.store"(%arg1, %[[MINE]], %[[INDEX]])
// CHECK: return
module attributes {warp.cpu_lanes = 4 : i64, warp.tiles} {
  func.func @gather(%arg0: !warp.array<f32, 1 : i64>, %arg1: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %0:2 = "warp.tid"() : () -> (i32, i32)
    %x = "warp.load"(%arg0, %0#1) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %t = "warp.tile_full"(%x) : (f32) -> !warp.tile<f32, array<i64: 1>>
    "warp.tile_sync"() : () -> ()
    "warp.store"(%arg1, %x, %0#1) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
