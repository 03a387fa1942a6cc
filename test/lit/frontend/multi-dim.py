# RUN: %PYTHON %s | FileCheck %s

# A k-dimensional launch: one warp.tid with k i32 results, unpacked by the
# tuple assignment; multi-dimensional subscripts become one index operand per
# dimension.
import mlwarp as wp


@wp.kernel
def copy3(a: wp.array(dtype=float, ndim=3), b: wp.array3d(dtype=float)):
    i, j, k = wp.tid()
    b[i, j, k] = a[k, j, i]


@wp.kernel
def row(m: wp.array2d(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i, j = wp.tid()
    out[j] = m[i, j]


print(copy3.to_mlir())
print(row.to_mlir())

# CHECK-LABEL: func.func @copy3
# CHECK-SAME: (%[[A:.+]]: !warp.array<f32, 3 : i64>, %[[B:.+]]: !warp.array<f32, 3 : i64>)
# CHECK: %[[T:.+]]:3 = "warp.tid"() : () -> (i32, i32, i32)
# CHECK: %[[V:.+]] = "warp.load"(%[[A]], %[[T]]#2, %[[T]]#1, %[[T]]#0) : (!warp.array<f32, 3 : i64>, i32, i32, i32) -> f32
# CHECK: "warp.store"(%[[B]], %[[V]], %[[T]]#0, %[[T]]#1, %[[T]]#2) : (!warp.array<f32, 3 : i64>, f32, i32, i32, i32) -> ()

# CHECK-LABEL: func.func @row
# CHECK-SAME: (%[[M:.+]]: !warp.array<f64, 2 : i64>, %[[OUT:.+]]: !warp.array<f64, 1 : i64>)
# CHECK: %[[T:.+]]:2 = "warp.tid"() : () -> (i32, i32)
# CHECK: %[[V:.+]] = "warp.load"(%[[M]], %[[T]]#0, %[[T]]#1) : (!warp.array<f64, 2 : i64>, i32, i32) -> f64
# CHECK: "warp.store"(%[[OUT]], %[[V]], %[[T]]#1)
