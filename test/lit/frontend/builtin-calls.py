# RUN: %PYTHON %s | FileCheck %s

# Each builtin call is the op of its builtin table entry, typed by the
# table's result rule: warp.<name>(args) -> result.
import mlwarp as wp


@wp.kernel
def mathy(a: wp.array(dtype=float), n: wp.array(dtype=int)):
    i = wp.tid()
    x = a[i]
    a[i] = wp.sqrt(wp.abs(x)) + wp.exp(x) * wp.log(x) + wp.pow(x, 2.0) + wp.floor(x) - wp.ceil(x)
    a[i] = wp.clamp(wp.min(x, 2.0), 0.0, wp.max(x, 1.0)) + wp.cos(x) / wp.tan(x)
    n[i] = wp.max(n[i], 3)


print(mathy.to_mlir())

# CHECK-LABEL: func.func @mathy
# CHECK: %[[X:.+]] = "warp.load"(%arg0, %{{.+}}) : (!warp.array<f32, 1 : i64>, i32) -> f32
# CHECK: %[[ABS:.+]] = "warp.abs"(%[[X]]) : (f32) -> f32
# CHECK: "warp.sqrt"(%[[ABS]]) : (f32) -> f32
# CHECK: "warp.exp"(%[[X]]) : (f32) -> f32
# CHECK: "warp.log"(%[[X]]) : (f32) -> f32
# CHECK: "warp.pow"(%[[X]], %{{.+}}) : (f32, f32) -> f32
# CHECK: "warp.floor"(%[[X]]) : (f32) -> f32
# CHECK: "warp.ceil"(%[[X]]) : (f32) -> f32
# CHECK: %[[MIN:.+]] = "warp.min"(%[[X]], %{{.+}}) : (f32, f32) -> f32
# CHECK: %[[MAX:.+]] = "warp.max"(%[[X]], %{{.+}}) : (f32, f32) -> f32
# CHECK: "warp.clamp"(%[[MIN]], %{{.+}}, %[[MAX]]) : (f32, f32, f32) -> f32
# CHECK: "warp.cos"(%[[X]]) : (f32) -> f32
# CHECK: "warp.tan"(%[[X]]) : (f32) -> f32
# CHECK: "warp.div"
# Integer arguments pick the integer typing of the same builtin.
# CHECK: "warp.max"(%{{.+}}, %{{.+}}) : (i32, i32) -> i32
