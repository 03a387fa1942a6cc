# RUN: %PYTHON %s | FileCheck %s

# `return` inside a branch sets a "returned" flag; the statements after the
# branch run only when it is false (one func.return, at the end).
import mlwarp as wp


@wp.kernel
def positive_only(a: wp.array(dtype=float)):
    i = wp.tid()
    if a[i] < 0.0:
        return
    a[i] = 1.0


print(positive_only.to_mlir())

# CHECK-LABEL: func.func @positive_only
# CHECK: %[[NOT_YET:.+]] = arith.constant false
# CHECK: %[[NEG:.+]] = "warp.lt"(%{{.+}}, %{{.+}}) : (f32, f32) -> i1
# CHECK: %[[RETURNED:.+]] = scf.if %[[NEG]] -> (i1) {
# CHECK:   %[[TRUE:.+]] = arith.constant true
# CHECK:   scf.yield %[[TRUE]] : i1
# CHECK: } else {
# CHECK:   scf.yield %[[NOT_YET]] : i1
# CHECK: }
# CHECK: %[[GO:.+]] = "warp.bool_not"(%[[RETURNED]]) : (i1) -> i1
# CHECK: scf.if %[[GO]] {
# CHECK:   "warp.store"(%arg0, %{{.+}}, %{{.+}})
# CHECK: }
# CHECK: return
# CHECK-NEXT: }
