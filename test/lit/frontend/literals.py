# RUN: %PYTHON %s | FileCheck %s

# Literals take Warp's types: a Python float is float32, an int is int32; an
# explicit constructor gives another type (no silent promotion: float64 * 2.0
# is an error in Warp and here).
import mlwarp as wp


@wp.kernel
def literals(a: wp.array(dtype=float), b: wp.array(dtype=int), c: wp.array(dtype=wp.float64), flags: wp.array(dtype=bool)):
    i = wp.tid()
    a[i] = 1.5
    b[i] = b[i] + 3
    c[i] = c[i] * wp.float64(2.0)
    flags[i] = True


print(literals.to_mlir())

# CHECK-LABEL: func.func @literals
# CHECK: %[[F:.+]] = arith.constant 1.500000e+00 : f32
# CHECK: "warp.store"(%arg0, %[[F]], %{{.+}}) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
# CHECK: %[[THREE:.+]] = arith.constant 3 : i32
# CHECK: "warp.add"(%{{.+}}, %[[THREE]]) : (i32, i32) -> i32
# CHECK: %[[TWO:.+]] = arith.constant 2.000000e+00 : f64
# CHECK: "warp.mul"(%{{.+}}, %[[TWO]]) : (f64, f64) -> f64
# CHECK: %[[T:.+]] = arith.constant true
# CHECK: "warp.store"(%arg3, %[[T]], %{{.+}}) : (!warp.array<i1, 1 : i64>, i1, i32) -> ()
