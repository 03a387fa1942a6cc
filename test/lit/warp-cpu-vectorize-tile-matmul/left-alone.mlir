// RUN: mlwarp-opt %s --pass-pipeline='builtin.module(warp-cpu-vectorize-tile-matmul{vector-bits=512})' | FileCheck %s
// RUN: not mlwarp-opt %s --pass-pipeline='builtin.module(warp-cpu-vectorize-tile-matmul{vector-bits=100})' 2>&1 | FileCheck %s --check-prefix=BITS

// Left alone: a matmul whose n fills no vector register (n = 4, 16 lanes of f32), a generic without
// warp.tile_matmul, and a matmul on tensors (before bufferization).

#mk = affine_map<(m, k, n) -> (m, k)>
#kn = affine_map<(m, k, n) -> (k, n)>
#mn = affine_map<(m, k, n) -> (m, n)>

// CHECK-LABEL: func.func @narrow
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @narrow(%a: memref<8x8xf32>, %b: memref<8x4xf32>, %acc: memref<8x4xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<8x8xf32>, memref<8x4xf32>) outs(%acc : memref<8x4xf32>) attrs = {warp.tile_matmul} {
  ^bb0(%x: f32, %y: f32, %c: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @unmarked
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @unmarked(%a: memref<32x32xf32>, %b: memref<32x32xf32>, %acc: memref<32x32xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<32x32xf32>, memref<32x32xf32>) outs(%acc : memref<32x32xf32>) {
  ^bb0(%x: f32, %y: f32, %c: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @tensors
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @tensors(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>, %acc: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %r = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : tensor<32x32xf32>, tensor<32x32xf32>) outs(%acc : tensor<32x32xf32>) attrs = {warp.tile_matmul} {
  ^bb0(%x: f32, %y: f32, %c: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}

// BITS: warp-cpu-vectorize-tile-matmul: vector-bits=100; expected 128, 256 or 512
