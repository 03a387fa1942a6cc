// RUN: mlwarp-opt %s --warp-cpu-block-lanes | FileCheck %s

// Without warp.cpu_lanes (the default build: one lane per block) the pass changes nothing.

// CHECK-LABEL: func.func @one_lane
// CHECK-NEXT: %[[T:.+]]:2 = "warp.tid"() : () -> (i32, i32)
// CHECK-NEXT: "warp.load"(%arg0, %[[T]]#1)
// CHECK-NEXT: "warp.tile_full"
// CHECK-NEXT: return
module attributes {warp.tiles} {
  func.func @one_lane(%arg0: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %0:2 = "warp.tid"() : () -> (i32, i32)
    %x = "warp.load"(%arg0, %0#1) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %t = "warp.tile_full"(%x) : (f32) -> !warp.tile<f32, array<i64: 1>>
    return
  }
}
