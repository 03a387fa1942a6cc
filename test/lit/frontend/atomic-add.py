# RUN: %PYTHON %s | FileCheck %s

# `a[i] += v` on an array is an atomic add, as in Warp (several threads may
# hit one element), not a load, an add and a store. `a[i] -= v` is an atomic sub.
import mlwarp as wp


@wp.kernel
def histogram(bins: wp.array(dtype=int), keys: wp.array(dtype=int), w: wp.array2d(dtype=float)):
    i = wp.tid()
    bins[keys[i]] += 1
    w[i, 0] -= 0.5


print(histogram.to_mlir())

# CHECK-LABEL: func.func @histogram
# CHECK: %[[I:.+]] = "warp.tid"() : () -> i32
# CHECK: %[[KEY:.+]] = "warp.load"(%arg1, %[[I]])
# CHECK: %[[ONE:.+]] = arith.constant 1 : i32
# CHECK: "warp.atomic"(%arg0, %[[ONE]], %[[KEY]]) {kind = "add"} : (!warp.array<i32, 1 : i64>, i32, i32) -> i32
# CHECK: "warp.atomic"(%arg2, %{{.+}}, %[[I]], %{{.+}}) {kind = "sub"} : (!warp.array<f32, 2 : i64>, f32, i32, i32) -> f32
# CHECK-NOT: "warp.store"
# CHECK: return
