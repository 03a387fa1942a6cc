// RUN: mlwarp-opt %s --warp-gpu-cooperative-tiles | FileCheck %s

// A tile op under a branch on wp.tid()'s index 1: in a tiled launch over one dimension that index is the lane, and
// not every lane would reach the barriers; over two it is the block's second index. The pass spreads the op and
// records the position (wp.launch_tiled refuses a launch whose lane it is). The adjoint runs whole on lane 0 of
// each block (its body under one scf.if, its buffers left to local memory).

// CHECK: warp.tiled_launch = "{\22cooperative\22: true, \22shared_bytes\22: 16, \22lane_divergent_tid_positions\22: [1]}"
// CHECK-LABEL: func.func @branchy
// CHECK-SAME: warp.cooperative_tiles
// CHECK: %[[T:.+]]:2 = "warp.tid"()
// CHECK: %[[IF:.+]] = arith.cmpi eq, %[[T]]#1
// CHECK: scf.if %[[IF]] {
// CHECK-NEXT: gpu.barrier
// CHECK: gpu.barrier
// CHECK-LABEL: func.func @branchy_adj
// CHECK-SAME: warp.lane_zero_tiles
// CHECK-NEXT: %[[LANE:.+]] = gpu.thread_id x
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[FIRST:.+]] = arith.cmpi eq, %[[LANE]], %[[ZERO]] : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK: memref.alloca() : memref<4xf32>
// CHECK-NEXT: linalg.generic
// CHECK-NOT: gpu.barrier
// CHECK: return
module attributes {warp.tiles} {
  func.func @branchy(%arg0: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %c0 = arith.constant 0 : i32
    %cst = arith.constant 2.0 : f32
    %a = memref.alloca() : memref<4xf32>
    %t:2 = "warp.tid"() : () -> (i32, i32)
    %first = arith.cmpi eq, %t#1, %c0 : i32
    scf.if %first {
      linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
          outs(%a : memref<4xf32>) {
      ^bb0(%out: f32):
        linalg.yield %cst : f32
      }
    }
    return
  }
  func.func @branchy_adj(%arg0: !warp.array<f32, 1 : i64>) attributes {warp.kernel, warp.adjoint_of = "branchy"} {
    %cst = arith.constant 2.0 : f32
    %a = memref.alloca() : memref<4xf32>
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
        outs(%a : memref<4xf32>) {
    ^bb0(%out: f32):
      linalg.yield %cst : f32
    }
    return
  }
}
