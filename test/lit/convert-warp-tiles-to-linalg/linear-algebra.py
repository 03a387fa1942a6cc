# RUN: %PYTHON %s | FileCheck %s

# Factorisations, solves and the DFT are sequential on one lane: scf loops over the tile tensors. Cholesky,
# column by column: the diagonal's sqrt of A[j, j] minus the sum over k < j, then the column below it.
import mlwarp as wp


@wp.kernel
def factor(a: wp.array2d(dtype=wp.float64), b: wp.array(dtype=wp.float64), x: wp.array(dtype=wp.float64),
           z: wp.array2d(dtype=wp.vec2d)):
    l = wp.tile_cholesky(wp.tile_load(a, shape=(4, 4)))
    wp.tile_store(x, wp.tile_lower_solve(l, wp.tile_load(b, shape=4)))
    t = wp.tile_load(z, shape=(1, 8))
    wp.tile_fft(t)
    wp.tile_store(z, t)
    u = wp.tile_load(z, shape=(1, 6))
    wp.tile_ifft(u)
    wp.tile_store(z, u)


print(factor.to_mlir("warp-opt"))
print(factor.to_mlir("tiles"))

# CHECK-LABEL: func.func @factor(
# CHECK: %[[L:.+]] = "warp.tile_cholesky"(%{{.+}}) {fill = "lower"} : (!warp.tile<f64, array<i64: 4, 4>>) -> !warp.tile<f64, array<i64: 4, 4>>
# CHECK: "warp.tile_solve"(%[[L]], %{{.+}}) {form = "lower"}
# CHECK: "warp.tile_dft"(%{{.+}}) {inverse = 0 : i64} : (!warp.tile<!warp.vec<2 : i64, f64>, array<i64: 1, 8>>)
# CHECK: "warp.tile_dft"(%{{.+}}) {inverse = 1 : i64} : (!warp.tile<!warp.vec<2 : i64, f64>, array<i64: 1, 6>>)

# the FFT's tables (module constants): the twiddles exp(-2 pi i k/8), k < 4, and the bit-reversal permutation
# CHECK-DAG: memref.global "private" constant @{{.+}} : memref<4x2xf64> = dense<{{\[}}[1.000000e+00, -0.000000e+00], [0.70710678118654757, -0.70710678118654746],
# CHECK-DAG: memref.global "private" constant @{{.+}} : memref<8xi32> = dense<[0, 4, 2, 6, 1, 5, 3, 7]>
# CHECK-LABEL: func.func @factor(
# the factorisation: a loop over columns j carrying the factor, the diagonal's sum over k < j, its sqrt
# CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (memref<4x4xf64>)
# CHECK:   scf.for %{{.+}} = %{{.+}} to %[[J]] step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f64)
# CHECK:     "warp.mul"
# CHECK:     "warp.sub"
# CHECK:   "warp.sqrt"
# the FFT of the 8-element row: the rows copied in bit-reversed order, then log2 8 = 3 passes of 8/2 = 4 butterflies
# each, updating the tile in place, no transcendental
# CHECK: %[[PERM:.+]] = memref.load %{{.+}}[%{{.+}}] : memref<8xi32>
# CHECK: memref.load %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : memref<1x8x2xf64>
# CHECK: %[[P1:.+]] = scf.for %{{.+}} = %c0 to %c4 step %c1 iter_args(%[[X1:.+]] = %{{.+}}) -> (memref<1x8x2xf64>)
# CHECK-NOT: warp.cos
# CHECK: memref.store %{{.+}}, %[[X1]]
# CHECK: %[[P2:.+]] = scf.for %{{.+}} = %c0 to %c4 step %c1 iter_args(%{{.+}} = %[[P1]]) -> (memref<1x8x2xf64>)
# CHECK: memref.load %[[TWS:.+]][%{{.+}}, %c0] : memref<4x2xf64>
# CHECK: arith.mulf
# CHECK: scf.for %{{.+}} = %c0 to %c4 step %c1 iter_args(%{{.+}} = %[[P2]]) -> (memref<1x8x2xf64>)
# the 6-element row (not a power of two): the DFT as its sum, each term's twiddle cos/sin
# CHECK: "warp.cos"
# CHECK: "warp.sin"
