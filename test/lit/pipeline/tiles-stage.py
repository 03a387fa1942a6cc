# RUN: %PYTHON %s | FileCheck %s

# The CPU table's "tiles" stage: convert-warp-tiles-to-linalg, elementwise fusion, one-shot-bufferize, buffers
# hoisted out of loops and onto the stack, float matmuls vectorised where n fills vector registers, linalg as
# loops. The documentation's tiled GEMM: the accumulator (tile_zeros) gets one stack buffer that the K loop's
# matmul updates in place, and each load's two buffers (the fast branch's, written a row vector at a time,
# and the checked one's)
# are hoisted out of the loop (each iteration writes one before reading it). warp-cpu-entry then hoists the buffers
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
# CHECK: %[[AF:.+]] = memref.alloca() {alignment = 64 : i64} : memref<8x8xf32>
# CHECK: %[[AS:.+]] = memref.alloca() {alignment = 64 : i64} : memref<8x8xf32>
# CHECK: %[[BF:.+]] = memref.alloca() {alignment = 64 : i64} : memref<8x4xf32>
# CHECK: %[[BS:.+]] = memref.alloca() {alignment = 64 : i64} : memref<8x4xf32>
# CHECK: scf.for %{{.+}} iter_args(%[[ACC:.+]] = %[[SUM]]) -> (memref<8x4xf32>)
# CHECK-NOT: memref.alloca
# CHECK:   %[[A:.+]] = scf.if %{{.+}} -> (memref<8x8xf32>) {
# CHECK:     scf.for %{{.+}} iter_args(%[[AROWS:.+]] = %[[AF]])
# CHECK:       vector.transfer_write %{{.+}}, %[[AROWS]][%{{.+}}, %{{.+}}] {in_bounds = [true]} : vector<8xf32>
# CHECK:   } else {
# CHECK:     memref.store %{{.+}}, %[[AS]]
# CHECK:     scf.yield %[[AS]]
# CHECK:   %[[B:.+]] = scf.if %{{.+}} -> (memref<8x4xf32>) {
# CHECK:     scf.for %{{.+}} iter_args(%[[BROWS:.+]] = %[[BF]])
# CHECK:       vector.transfer_write %{{.+}}, %[[BROWS]][%{{.+}}, %{{.+}}] {in_bounds = [true]} : vector<4xf32>
# CHECK:     memref.store %{{.+}}, %[[BS]]
# (n = 4 fills no vector register: warp-cpu-vectorize-tile-matmul leaves this matmul to the loops)
# CHECK:   memref.load %[[A]]
# CHECK:   memref.load %[[B]]
# CHECK:   %[[OLD:.+]] = memref.load %[[ACC]]
# CHECK:   %[[AB:.+]] = arith.mulf
# CHECK:   %[[NEW:.+]] = arith.addf %[[OLD]], %[[AB]]
# CHECK:   memref.store %[[NEW]], %[[ACC]]
# CHECK-NOT: "warp.tile

# CHECK-LABEL: func.func @gemm_cpu(
# CHECK: memref.alloca() {alignment = 64 : i64} : memref<8x4xf32>
# CHECK: memref.alloca() {alignment = 64 : i64} : memref<8x8xf32>
# CHECK: memref.alloca() {alignment = 64 : i64} : memref<8x8xf32>
# CHECK: memref.alloca() {alignment = 64 : i64} : memref<8x4xf32>
# CHECK: memref.alloca() {alignment = 64 : i64} : memref<8x4xf32>
# CHECK: scf.if
# CHECK-NOT: memref.alloca
# CHECK: scf.for
