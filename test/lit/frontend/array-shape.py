# RUN: %PYTHON %s | FileCheck %s

# `a.shape[d]` is warp.array_dim {dim = d}, an i32 like Warp's int.
import mlwarp as wp


@wp.kernel
def last_column(m: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    cols = m.shape[1]
    rows = m.shape[0]
    if i < rows:
        out[i] = m[i, cols - 1]


print(last_column.to_mlir())

# CHECK-LABEL: func.func @last_column
# CHECK-SAME: (%[[M:.+]]: !warp.array<f32, 2 : i64>,
# CHECK: %[[COLS:.+]] = "warp.array_dim"(%[[M]]) {dim = 1 : i64} : (!warp.array<f32, 2 : i64>) -> i32
# CHECK: %[[ROWS:.+]] = "warp.array_dim"(%[[M]]) {dim = 0 : i64} : (!warp.array<f32, 2 : i64>) -> i32
# CHECK: "warp.lt"(%{{.+}}, %[[ROWS]]) : (i32, i32) -> i1
# CHECK: %[[LAST:.+]] = "warp.sub"(%[[COLS]], %{{.+}}) : (i32, i32) -> i32
# CHECK: "warp.load"(%[[M]], %{{.+}}, %[[LAST]])
