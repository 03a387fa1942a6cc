// RUN: mlwarp-opt %s --pass-pipeline="builtin.module(warp-tag-fusion-producers,linalg-fuse-elementwise-ops,warp-erase-fused-producers)" | FileCheck %s

// A map whose body has effects MLIR cannot see through (a warp op: MLIR does not know its effects) fused
// into the sum that reads it: the fusion leaves the map without results; it is erased, so its body runs once, in
// the fused sum. A map nothing reads is not the fusion's and stays (its effects are the point of it).

#id = affine_map<(d0) -> (d0)>
#to_scalar = affine_map<(d0) -> ()>

// CHECK-LABEL: func.func @map_then_sum
func.func @map_then_sum(%x: tensor<16xf32>, %init: tensor<f32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<16xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = "warp.sin"(%in) : (f32) -> f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#id, #to_scalar], iterator_types = ["reduction"]} ins(%m : tensor<16xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  %unread = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %w = "warp.cos"(%in) : (f32) -> f32
    linalg.yield %w : f32
  } -> tensor<16xf32>
  return %s : tensor<f32>
}
// the map's body once, in the fused sum, and the unread map kept (its results dropped); no tag left behind
// CHECK-NOT: warp.fusion_producer
// CHECK: linalg.generic {{.+}} iterator_types = ["reduction"]
// CHECK: "warp.sin"
// CHECK-NOT: "warp.sin"
// CHECK: "warp.cos"
// CHECK-NOT: "warp.sin"
// CHECK: return
