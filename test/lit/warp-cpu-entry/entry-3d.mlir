// RUN: mlwarp-opt %s --warp-cpu-entry | FileCheck %s

// A 3-D launch: the linear range [begin, end) runs as a loop over rows (the
// linear id divided by dims[2]) around an inner loop over the last index, so
// no division is done per thread. The row number splits into (i, j) as
// (row / dims[1], row % dims[1]): the last index varies fastest, as in Warp.

// CHECK-LABEL: func.func @grid_cpu
// CHECK-SAME: (%[[ARGS:.+]]: !llvm.ptr, %[[BEGIN:.+]]: i64, %[[END:.+]]: i64)
// CHECK: %[[PD1:.+]] = llvm.getelementptr %[[ARGS]][0, 0, 1]
// CHECK: %[[D1:.+]] = llvm.load %[[PD1]] : !llvm.ptr -> i64
// CHECK: %[[PD2:.+]] = llvm.getelementptr %[[ARGS]][0, 0, 2]
// CHECK: %[[D2:.+]] = llvm.load %[[PD2]] : !llvm.ptr -> i64
// CHECK: %[[ROWS_BEGIN:.+]] = arith.divsi %[[BEGIN]], %[[D2]] : i64
// CHECK: %[[ROWS_END:.+]] = arith.divsi %{{.+}}, %[[D2]] : i64
// CHECK: scf.for %[[ROW:.+]] = %[[ROWS_BEGIN]] to %[[ROWS_END]] step %{{.+}} : i64 {
// CHECK:   %[[J:.+]] = arith.remsi %[[ROW]], %[[D1]] : i64
// CHECK:   %[[I:.+]] = arith.divsi %[[ROW]], %[[D1]] : i64
// CHECK:   scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} : i64 {
// CHECK:     %[[I32:.+]] = arith.trunci %[[I]]{{.*}} : i64 to i32
// CHECK:     %[[J32:.+]] = arith.trunci %[[J]]{{.*}} : i64 to i32
// CHECK:     %[[K32:.+]] = arith.trunci %[[K]]{{.*}} : i64 to i32
// CHECK:     %[[S:.+]] = arith.addi %[[I32]], %[[K32]] : i32
// CHECK:     arith.addi %[[S]], %[[J32]] : i32
func.func @grid(%n: i32) attributes {warp.kernel} {
  %t:3 = "warp.tid"() : () -> (i32, i32, i32)
  %s = arith.addi %t#0, %t#2 : i32
  %u = arith.addi %s, %t#1 : i32
  return
}

// The inner loop covers only the part of each row inside [begin, end): a range
// split across CPU threads may start and end mid-row.
// CHECK-LABEL: func.func @pair_cpu
// CHECK-SAME: (%{{.+}}: !llvm.ptr, %[[BEGIN:.+]]: i64, %[[END:.+]]: i64)
// CHECK: scf.for %[[ROW:.+]] = {{.+}} : i64 {
// CHECK:   %[[BASE:.+]] = arith.muli %[[ROW]], %[[D:.+]] : i64
// CHECK:   %[[FROM:.+]] = arith.subi %[[BEGIN]], %[[BASE]] : i64
// CHECK:   %[[LO:.+]] = arith.maxsi %[[FROM]], %{{.+}} : i64
// CHECK:   %[[TO:.+]] = arith.subi %[[END]], %[[BASE]] : i64
// CHECK:   %[[HI:.+]] = arith.minsi %[[TO]], %[[D]] : i64
// CHECK:   scf.for %{{.+}} = %[[LO]] to %[[HI]] step
func.func @pair(%n: i32) attributes {warp.kernel} {
  %t:2 = "warp.tid"() : () -> (i32, i32)
  %s = arith.addi %t#0, %t#1 : i32
  return
}
