# RUN: %PYTHON %s | FileCheck %s

# `for i in range(...)` is an scf.for over i32 with the loop-carried locals as
# iter_args. range(stop), range(start, stop) and a positive constant step map
# directly; a negative step loops over the trip count
# max((start - stop + |step| - 1) / |step|, 0) and computes i = start + k * step.
import mlwarp as wp


@wp.kernel
def one_arg(a: wp.array(dtype=int), n: int):
    s = int(0)
    for i in range(n):
        s = s + i
    a[0] = s


@wp.kernel
def two_args(a: wp.array(dtype=int), n: int):
    s = int(0)
    for i in range(2, n):
        s = s + i
    a[0] = s


@wp.kernel
def three_args(a: wp.array(dtype=int), n: int):
    s = int(0)
    for i in range(1, n, 3):
        s = s + i
    a[0] = s


@wp.kernel
def negative_step(a: wp.array(dtype=int), n: int):
    s = int(0)
    for i in range(n, 0, -2):
        s = s + i
    a[0] = s


for k in (one_arg, two_args, three_args, negative_step):
    print(k.to_mlir())

# Constants print as %c<value>_<type> (with a suffix when repeated).

# CHECK-LABEL: func.func @one_arg
# CHECK-SAME: (%{{.+}}: !warp.array<i32, 1 : i64>, %[[N:.+]]: i32)
# CHECK: %[[SUM:.+]] = scf.for %[[I:.+]] = %c0_i32{{[_0-9]*}} to %[[N]] step %c1_i32{{[_0-9]*}} iter_args(%[[ACC:.+]] = %c0_i32{{[_0-9]*}}) -> (i32) : i32 {
# CHECK:   %[[NEXT:.+]] = "warp.add"(%[[ACC]], %[[I]]) : (i32, i32) -> i32
# CHECK:   scf.yield %[[NEXT]] : i32
# CHECK: "warp.store"(%arg0, %[[SUM]], %{{.+}})

# CHECK-LABEL: func.func @two_args
# CHECK: scf.for %{{.+}} = %c2_i32{{[_0-9]*}} to %arg1 step %c1_i32{{[_0-9]*}} iter_args

# CHECK-LABEL: func.func @three_args
# CHECK: scf.for %{{.+}} = %c1_i32{{[_0-9]*}} to %arg1 step %c3_i32{{[_0-9]*}} iter_args

# CHECK-LABEL: func.func @negative_step
# CHECK-SAME: (%{{.+}}: !warp.array<i32, 1 : i64>, %[[N:.+]]: i32)
# CHECK: %[[SPAN:.+]] = arith.subi %[[N]], %c0_i32{{[_0-9]*}} : i32
# CHECK: %[[MAG:.+]] = arith.subi %c0_i32{{[_0-9]*}}, %c-2_i32{{[_0-9]*}} : i32
# CHECK: %[[T1:.+]] = arith.addi %[[SPAN]], %[[MAG]] : i32
# CHECK: %[[T2:.+]] = arith.subi %[[T1]], %c1_i32{{[_0-9]*}} : i32
# CHECK: %[[T3:.+]] = arith.divsi %[[T2]], %[[MAG]] : i32
# CHECK: %[[TRIPS:.+]] = arith.maxsi %[[T3]], %c0_i32{{[_0-9]*}} : i32
# CHECK: scf.for %[[K:.+]] = %c0_i32{{[_0-9]*}} to %[[TRIPS]] step %c1_i32{{[_0-9]*}} iter_args(%[[ACC:.+]] = %c0_i32{{[_0-9]*}}) -> (i32) : i32 {
# CHECK:   %[[OFF:.+]] = arith.muli %[[K]], %c-2_i32{{[_0-9]*}} : i32
# CHECK:   %[[I:.+]] = arith.addi %[[N]], %[[OFF]] : i32
# CHECK:   "warp.add"(%[[ACC]], %[[I]]) : (i32, i32) -> i32
