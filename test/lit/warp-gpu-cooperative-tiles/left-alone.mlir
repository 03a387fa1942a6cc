// RUN: mlwarp-opt %s --warp-gpu-cooperative-tiles | FileCheck %s

// A module whose lowering assumed one lane per block (convert-warp-tiles-to-linalg or the frontend marked it:
// here tile_sort) is left as it was: its linalg ops become each thread's loops (convert-linalg-to-loops), its
// buffers stay allocas (local memory), and the module says why, for wp.launch_tiled (dim + [1]).

// CHECK: module attributes {warp.one_lane_tiles = "tile_sort", warp.tiled_launch = "{\22cooperative\22: false, \22reason\22: \22tile_sort assumes one lane per block\22}", warp.tiles}
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func @sorted
// CHECK-NOT: warp.cooperative_tiles
// CHECK-NOT: gpu.
// CHECK: memref.alloca() : memref<4xf32>
// CHECK: linalg.generic
// CHECK: return
module attributes {warp.tiles, warp.one_lane_tiles = "tile_sort"} {
  func.func @sorted(%arg0: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
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
