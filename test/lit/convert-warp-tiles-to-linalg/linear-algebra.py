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


print(factor.to_mlir("warp-opt"))
print(factor.to_mlir("tiles"))

# CHECK-LABEL: func.func @factor(
# CHECK: %[[L:.+]] = "warp.tile_cholesky"(%{{.+}}) {fill = "lower"} : (!warp.tile<f64, array<i64: 4, 4>>) -> !warp.tile<f64, array<i64: 4, 4>>
# CHECK: "warp.tile_solve"(%[[L]], %{{.+}}) {form = "lower"}
# CHECK: "warp.tile_dft"(%{{.+}}) {inverse = 0 : i64} : (!warp.tile<!warp.vec<2 : i64, f64>, array<i64: 1, 8>>)

# CHECK-LABEL: func.func @factor(
# the factorisation: a loop over columns j carrying the factor, the diagonal's sum over k < j, its sqrt
# CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (memref<4x4xf64>)
# CHECK:   scf.for %{{.+}} = %{{.+}} to %[[J]] step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f64)
# CHECK:     "warp.mul"
# CHECK:     "warp.sub"
# CHECK:   "warp.sqrt"
# the DFT: for each output element, the sum over n of x[n] times the twiddle cos/sin
# CHECK: "warp.cos"
# CHECK: "warp.sin"
