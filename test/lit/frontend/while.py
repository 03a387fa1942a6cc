# RUN: %PYTHON %s | FileCheck %s

# `while` is scf.while: the condition in the "before" region, the body in the
# "after" region, the locals it reassigns carried as loop values.
import mlwarp as wp


@wp.kernel
def doubling(a: wp.array(dtype=int), n: int):
    i = int(0)
    while i < n:
        i = i * 2 + 1
    a[0] = i


print(doubling.to_mlir())

# CHECK-LABEL: func.func @doubling
# CHECK-SAME: (%{{.+}}: !warp.array<i32, 1 : i64>, %[[N:.+]]: i32)
# CHECK: %[[INIT:.+]] = arith.constant 0 : i32
# CHECK: %[[FINAL:.+]] = scf.while (%[[I:.+]] = %[[INIT]]) : (i32) -> i32 {
# CHECK:   %[[C:.+]] = "warp.lt"(%[[I]], %[[N]]) : (i32, i32) -> i1
# CHECK:   scf.condition(%[[C]]) %[[I]] : i32
# CHECK: } do {
# CHECK: ^bb0(%[[J:.+]]: i32):
# CHECK:   %[[M:.+]] = "warp.mul"(%[[J]], %{{.+}}) : (i32, i32) -> i32
# CHECK:   %[[NEXT:.+]] = "warp.add"(%[[M]], %{{.+}}) : (i32, i32) -> i32
# CHECK:   scf.yield %[[NEXT]] : i32
# CHECK: }
# CHECK: "warp.store"(%arg0, %[[FINAL]], %{{.+}})
