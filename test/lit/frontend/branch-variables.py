# RUN: %PYTHON %s | FileCheck %s

# A local one branch of an `if` assigns and the code after reads: an scf.if result, zero on the other path (Warp's
# locals are declared at the top of the function). A local only a loop assigns and the code after reads: carried
# by the loop from a zero. A local each of two ifs assigns and reads itself: no result at all.
import mlwarp as wp


@wp.kernel
def one_branch(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    if a[i] > 0.0:
        x = a[i] * 2.0
    out[i] = x


@wp.kernel
def loop_only(a: wp.array(dtype=float), n: int, out: wp.array(dtype=float)):
    i = wp.tid()
    for j in range(n):
        y = a[j]
    out[i] = y


@wp.kernel
def sibling_ifs(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    if a[i] > 0.0:
        t = a[i]
        out[i] = t
    if a[i] < 0.0:
        t = -a[i]
        out[i] = t


print(one_branch.to_mlir())
print(loop_only.to_mlir())
print(sibling_ifs.to_mlir())

# CHECK-LABEL: func.func @one_branch
# CHECK: "warp.gt"
# CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
# CHECK: %[[X:.+]] = scf.if %{{.+}} -> (f32) {
# CHECK: %[[TWICE:.+]] = "warp.mul"
# CHECK: scf.yield %[[TWICE]] : f32
# CHECK: } else {
# CHECK: scf.yield %[[ZERO]] : f32
# CHECK: "warp.store"(%{{.+}}, %[[X]], %{{.+}})

# CHECK-LABEL: func.func @loop_only
# CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
# CHECK: %[[Y:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[ZERO]]) -> (f32)
# CHECK: "warp.store"(%{{.+}}, %[[Y]], %{{.+}})

# CHECK-LABEL: func.func @sibling_ifs
# CHECK-NOT: scf.if {{.+}} ->
# CHECK: return
