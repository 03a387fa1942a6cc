# RUN: %PYTHON %s | FileCheck %s

# A @wp.func becomes one private func.func per (overload, argument types),
# called with func.call; an early return is a flag plus the $retval local
# merged through scf.if, so the function body stays one structured block.
# The first stage of the pipeline (warp-opt) inlines every call.
import mlwarp as wp


@wp.func
def clamp01(x: float):
    if x < 0.0:
        return 0.0
    if x > 1.0:
        return 1.0
    return x


@wp.func
def twice(x: float):
    return clamp01(x) + clamp01(x)


@wp.kernel
def k(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = twice(a[i])


print(k.to_mlir("warp"))
print(k.to_mlir("warp-opt"))

# twice's one return ends its body: emitted once (first: its callees come as its body calls them), its
# result type that return's, no return flag; clamp01 returns early: a flag and the result merged.
# CHECK-LABEL: func.func private @twice_0(
# CHECK-SAME: %{{.+}}: f32) -> f32
# CHECK-NOT: arith.constant
# CHECK: %[[A:.+]] = call @clamp01_0(%{{.+}}) : (f32) -> f32
# CHECK: %[[B:.+]] = call @clamp01_0(%{{.+}}) : (f32) -> f32
# CHECK: %[[S:.+]] = "warp.add"(%[[A]], %[[B]])
# CHECK-NEXT: return %[[S]] : f32
# CHECK-LABEL: func.func private @clamp01_0(
# CHECK-SAME: %[[X:.+]]: f32) -> f32
# CHECK: %[[R1:.+]]:2 = scf.if %{{.+}} -> (i1, f32)
# CHECK: %[[R2:.+]]:2 = scf.if %{{.+}} -> (i1, f32)
# CHECK: return %{{.+}}#1 : f32
# CHECK-LABEL: func.func @k(
# CHECK: call @twice_0

# After warp-opt: one function, no calls.
# CHECK-LABEL: module
# CHECK-NOT: func.func private
# CHECK-NOT: call @
# CHECK: func.func @k(
# CHECK-NOT: call @
