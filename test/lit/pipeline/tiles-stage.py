# RUN: %PYTHON %s | FileCheck %s

# The CPU table's "tiles" stage: convert-warp-tiles-to-linalg, elementwise fusion, one-shot-bufferize, buffers
# hoisted out of loops and onto the stack, linalg as loops. The documentation's tiled GEMM: the accumulator
# (tile_zeros) gets one stack buffer that the K loop's matmul updates in place, and the loads' buffers are
# hoisted out of the loop (each iteration writes them before reading). warp-cpu-entry then hoists the buffers
# out of the thread loop, once per launch range.
import mlwarp as wp

TILE_M = wp.constant(8)
TILE_N = wp.constant(4)
TILE_K = wp.constant(8)


@wp.kernel
def gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    sum = wp.tile_zeros(shape=(TILE_M, TILE_N), dtype=wp.float32)
    count = int(A.shape[1] / TILE_K)
    for k in range(0, count):
        a = wp.tile_load(A, shape=(TILE_M, TILE_K), offset=(i * TILE_M, k * TILE_K))
        b = wp.tile_load(B, shape=(TILE_K, TILE_N), offset=(k * TILE_K, j * TILE_N))
        wp.tile_matmul(a, b, sum)
    wp.tile_store(C, sum, offset=(i * TILE_M, j * TILE_N))


print(gemm.to_mlir("tiles"))
print(gemm.to_mlir("lowered"))

# CHECK-LABEL: func.func @gemm(
# CHECK: %[[SUM:.+]] = memref.alloca() {alignment = 64 : i64} : memref<8x4xf32>
# CHECK: %[[A:.+]] = memref.alloca() {alignment = 64 : i64} : memref<8x8xf32>
# CHECK: %[[B:.+]] = memref.alloca() {alignment = 64 : i64} : memref<8x4xf32>
# CHECK: scf.for %{{.+}} iter_args(%[[ACC:.+]] = %[[SUM]]) -> (memref<8x4xf32>)
# CHECK-NOT: memref.alloca
# CHECK:   memref.store %{{.+}}, %[[A]]
# CHECK:   memref.store %{{.+}}, %[[B]]
# CHECK:   %[[OLD:.+]] = memref.load %[[ACC]]
# CHECK:   %[[AB:.+]] = "warp.mul"
# CHECK:   %[[NEW:.+]] = "warp.add"(%[[OLD]], %[[AB]])
# CHECK:   memref.store %[[NEW]], %[[ACC]]
# CHECK-NOT: "warp.tile

# CHECK-LABEL: func.func @gemm_cpu(
# CHECK: memref.alloca() {alignment = 64 : i64} : memref<8x4xf32>
# CHECK: memref.alloca() {alignment = 64 : i64} : memref<8x8xf32>
# CHECK: memref.alloca() {alignment = 64 : i64} : memref<8x4xf32>
# CHECK: scf.if
# CHECK-NOT: memref.alloca
# CHECK: scf.for
