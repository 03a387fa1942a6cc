// RUN: mlwarp-opt %s --warp-cpu-entry | FileCheck %s

// wp.tid() gives a thread's leading indices (Warp's rule). The runtime folds launch dimensions past a
// kernel's widest wp.tid() into repeated launches (launch_args.py fold_dims), so the linear index spans
// that many dimensions: a 1-index wp.tid() beside a 2-index one is the linear index divided by dims[1]
// (mixed shapes run one flat loop), and the 2-index one splits the linear index as it is.

// CHECK-LABEL: func.func @mixed_cpu
// CHECK: %[[PD1:.+]] = llvm.getelementptr %{{.+}}[0, 0, 1]
// CHECK: %[[D1:.+]] = llvm.load %[[PD1]] : !llvm.ptr -> i64
// CHECK: scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} : i64 {
// CHECK:   %[[ROW:.+]] = arith.divsi %[[T]], %[[D1]] : i64
// CHECK:   arith.trunci %[[ROW]]{{.*}} : i64 to i32
// CHECK:   %[[J:.+]] = arith.remsi %[[T]], %[[D1]] : i64
// CHECK:   %[[I:.+]] = arith.divsi %[[T]], %[[D1]] : i64
// CHECK:   arith.trunci %[[I]]{{.*}} : i64 to i32
// CHECK:   arith.trunci %[[J]]{{.*}} : i64 to i32
func.func @mixed(%n: i32) attributes {warp.kernel} {
  %r = "warp.tid"() : () -> i32
  %t:2 = "warp.tid"() : () -> (i32, i32)
  %s = arith.addi %r, %t#0 : i32
  %u = arith.addi %s, %t#1 : i32
  return
}

// Left alone: one wp.tid() shape, its indices straight from the loop (no division per thread).
// CHECK-LABEL: func.func @flat_cpu
// CHECK: scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} : i64 {
// CHECK-NOT: arith.divsi
// CHECK:   arith.trunci %[[T]]{{.*}} : i64 to i32
func.func @flat(%n: i32) attributes {warp.kernel} {
  %r = "warp.tid"() : () -> i32
  %s = arith.addi %r, %n : i32
  return
}
