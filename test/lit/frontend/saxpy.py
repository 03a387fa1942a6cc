# RUN: %PYTHON %s | FileCheck %s

# The frontend's output for saxpy: the thread id, array loads and stores, and
# one warp op per operator and builtin call (operators are builtins too).
import mlwarp as wp


@wp.kernel
def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + wp.sin(y[i])


print(saxpy.to_mlir())

# CHECK-LABEL: func.func @saxpy
# CHECK-SAME: (%[[X:.+]]: !warp.array<f32, 1 : i64>, %[[Y:.+]]: !warp.array<f32, 1 : i64>, %[[A:.+]]: f32)
# CHECK-SAME: attributes {warp.kernel}
# CHECK-NEXT: %[[I:.+]] = "warp.tid"() : () -> i32
# CHECK-NEXT: %[[XI:.+]] = "warp.load"(%[[X]], %[[I]]) : (!warp.array<f32, 1 : i64>, i32) -> f32
# CHECK-NEXT: %[[AX:.+]] = "warp.mul"(%[[A]], %[[XI]]) : (f32, f32) -> f32
# CHECK-NEXT: %[[YI:.+]] = "warp.load"(%[[Y]], %[[I]]) : (!warp.array<f32, 1 : i64>, i32) -> f32
# CHECK-NEXT: %[[S:.+]] = "warp.sin"(%[[YI]]) : (f32) -> f32
# CHECK-NEXT: %[[R:.+]] = "warp.add"(%[[AX]], %[[S]]) : (f32, f32) -> f32
# CHECK-NEXT: "warp.store"(%[[Y]], %[[R]], %[[I]]) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
# CHECK-NEXT: return
