# RUN: %PYTHON %s | FileCheck %s

# A range loop containing `break` becomes an scf.while whose carried values
# are the counter, the locals and a "broke" flag tested in the condition.
# `continue` sets a flag that guards the rest of the body; both flags are
# plain i1 values (scf has no early exits).
import mlwarp as wp


@wp.kernel
def odd_sum_below_five(a: wp.array(dtype=int), n: int):
    s = int(0)
    for i in range(n):
        if i == 5:
            break
        if i % 2 == 0:
            continue
        s = s + i
    a[0] = s


print(odd_sum_below_five.to_mlir())

# CHECK-LABEL: func.func @odd_sum_below_five
# CHECK-SAME: (%{{.+}}: !warp.array<i32, 1 : i64>, %[[N:.+]]: i32)
# CHECK: %[[NOBREAK:.+]] = arith.constant false
# CHECK: %[[LOOP:.+]]:3 = scf.while (%[[I:.+]] = %{{.+}}, %[[S:.+]] = %{{.+}}, %[[BROKE:.+]] = %[[NOBREAK]]) : (i32, i32, i1) -> (i32, i32, i1) {
# The loop runs while it has not broken and i < n.
# CHECK:   %[[GOING:.+]] = "warp.bool_not"(%[[BROKE]]) : (i1) -> i1
# CHECK:   %[[INRANGE:.+]] = "warp.lt"(%[[I]], %[[N]]) : (i32, i32) -> i1
# CHECK:   %[[COND:.+]] = "warp.bool_and"(%[[GOING]], %[[INRANGE]]) : (i1, i1) -> i1
# CHECK:   scf.condition(%[[COND]])
# CHECK: } do {
# CHECK: ^bb0(%[[I2:.+]]: i32, %[[S2:.+]]: i32, %[[BROKE2:.+]]: i1):
# `break` sets the flag...
# CHECK:   %[[IS5:.+]] = "warp.eq"(%[[I2]], %{{.+}}) : (i32, i32) -> i1
# CHECK:   %[[BRK:.+]] = scf.if %[[IS5]] -> (i1) {
# CHECK:     %[[TRUE:.+]] = arith.constant true
# CHECK:     scf.yield %[[TRUE]] : i1
# CHECK:   } else {
# CHECK:     scf.yield %[[BROKE2]] : i1
# CHECK:   }
# ... which guards the rest of the body.
# CHECK:   %[[NOTBRK:.+]] = "warp.bool_not"(%[[BRK]]) : (i1) -> i1
# CHECK:   scf.if %{{.+}} -> (i32, i1) {
# CHECK:     "warp.mod"(%[[I2]], %{{.+}}) : (i32, i32) -> i32
# `continue` sets its own flag, tested before `s = s + i`.
# CHECK:     %[[CONT:.+]] = scf.if %{{.+}} -> (i1) {
# CHECK:     "warp.bool_not"(%[[CONT]]) : (i1) -> i1
# CHECK:     scf.if %{{.+}} -> (i32) {
# CHECK:       "warp.add"(%[[S2]], %[[I2]]) : (i32, i32) -> i32
# The counter steps and the flag is carried to the condition.
# CHECK:   %[[INEXT:.+]] = arith.addi %[[I2]], %{{.+}} : i32
# CHECK:   scf.yield %[[INEXT]], %{{.+}}, %[[BRK]] : i32, i32, i1
# CHECK: "warp.store"(%arg0, %[[LOOP]]#1, %{{.+}})
