// RUN: mlwarp-opt %s --pass-pipeline='builtin.module(warp-cpu-vectorize-tile-matmul{vector-bits=512})' | FileCheck %s --check-prefix=AVX512
// RUN: mlwarp-opt %s --pass-pipeline='builtin.module(warp-cpu-vectorize-tile-matmul{vector-bits=256})' | FileCheck %s --check-prefix=AVX2

// A float tile_matmul's generic (m, k, n), after bufferization: tiled into R rows x W columns of the
// accumulator, each tile an outer-product kernel: per k, one row of b (W lanes), R broadcasts of a, R fused
// multiply-adds into accumulators that stay in registers, k in increasing order.
// 512-bit registers: W = 32 (two zmm of f32), R = 8 (16 accumulator registers); 256-bit: W = 16, R = 4.

#mk = affine_map<(m, k, n) -> (m, k)>
#kn = affine_map<(m, k, n) -> (k, n)>
#mn = affine_map<(m, k, n) -> (m, n)>

// AVX512-LABEL: func.func @gemm
// AVX512: scf.for %[[M:.+]] = %{{.+}} to %{{.+}} step %c8
// AVX512-NEXT: memref.subview %{{.+}}[%[[M]], 0] [8, 32]
// AVX512-COUNT-8: vector.load %{{.+}} : memref<8x32xf32, strided<[32, 1], offset: ?>>, vector<32xf32>
// AVX512: %[[B0:.+]] = vector.load %{{.+}} : memref<32x32xf32>, vector<32xf32>
// AVX512: %[[A00:.+]] = vector.broadcast %{{.+}} : f32 to vector<32xf32>
// AVX512: vector.fma %[[A00]], %[[B0]], %{{.+}} : vector<32xf32>
// AVX512-COUNT-255: vector.fma
// AVX512-NOT: vector.fma
// AVX512-COUNT-8: vector.store %{{.+}} : memref<8x32xf32, strided<[32, 1], offset: ?>>, vector<32xf32>
// AVX512-NOT: linalg.generic

// AVX2-LABEL: func.func @gemm
// AVX2: scf.for %{{.+}} step %c4
// AVX2: scf.for %{{.+}} step %c16
// AVX2-COUNT-128: vector.fma {{.+}} : vector<16xf32>
// AVX2-NOT: vector.fma
// AVX2-NOT: linalg.generic
func.func @gemm(%a: memref<32x32xf32>, %b: memref<32x32xf32>, %acc: memref<32x32xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<32x32xf32>, memref<32x32xf32>) outs(%acc : memref<32x32xf32>) attrs = {warp.tile_matmul} {
  ^bb0(%x: f32, %y: f32, %c: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// k = 128 > 64: k in steps of 64 (a loop over k outside each tile's outer products), still increasing.
// AVX512-LABEL: func.func @long_k
// AVX2-LABEL: func.func @long_k
// AVX512: scf.for %{{.+}} step %c8
// AVX512: scf.for %{{.+}} step %c64
// AVX512-COUNT-512: vector.fma
// AVX512-NOT: vector.fma
func.func @long_k(%a: memref<8x128xf32>, %b: memref<128x32xf32>, %acc: memref<8x32xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<8x128xf32>, memref<128x32xf32>) outs(%acc : memref<8x32xf32>) attrs = {warp.tile_matmul} {
  ^bb0(%x: f32, %y: f32, %c: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}
