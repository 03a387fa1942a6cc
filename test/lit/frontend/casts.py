# RUN: %PYTHON %s | FileCheck %s

# Conversions are explicit in Warp and each is one warp.cast (its lowering,
# by C's rules, is convert-warp-builtins-to-arith's business).
import mlwarp as wp


@wp.kernel
def conversions(f: wp.array(dtype=float), n: wp.array(dtype=int), u: wp.uint32, d: wp.float64):
    i = wp.tid()
    f[i] = float(n[i])
    n[i] = int(f[i])
    f[i] = wp.float32(d)
    n[i] = int(u)


print(conversions.to_mlir())

# CHECK-LABEL: func.func @conversions
# CHECK-SAME: %[[U:arg[0-9]+]]: ui32, %[[D:arg[0-9]+]]: f64)
# CHECK: %[[NI:.+]] = "warp.load"(%arg1, %{{.+}}) : (!warp.array<i32, 1 : i64>, i32) -> i32
# CHECK: %[[F1:.+]] = "warp.cast"(%[[NI]]) : (i32) -> f32
# CHECK: "warp.store"(%arg0, %[[F1]], %{{.+}})
# CHECK: %[[FI:.+]] = "warp.load"(%arg0, %{{.+}}) : (!warp.array<f32, 1 : i64>, i32) -> f32
# CHECK: %[[N1:.+]] = "warp.cast"(%[[FI]]) : (f32) -> i32
# CHECK: "warp.store"(%arg1, %[[N1]], %{{.+}})
# CHECK: %[[F2:.+]] = "warp.cast"(%[[D]]) : (f64) -> f32
# CHECK: %[[N2:.+]] = "warp.cast"(%[[U]]) : (ui32) -> i32
