// RUN: mlwarp-opt %s --warp-cpu-forward-sums | FileCheck %s

// Sums into one base at overlapping bytes (an f64 at 0, then an f32 at 4) are not one group: the f32 is read
// from memory after the f64's store. The f32 sums at 4 and at 0 are one group, of other components than the f64
// group before it, so it loads too (a group asks only the group just before it, and only when their components
// match), and the loop's first group (the f64) is not the last's shape: nothing carried between iterations.
// CHECK-LABEL: func.func @overlap_cpu_private(
// CHECK-NOT: scf.if
// CHECK: return
func.func @overlap_cpu_private(%f: !llvm.ptr, %a: !llvm.ptr, %lo: i64, %hi: i64) {
  %c1 = arith.constant 1 : i64
  %d = arith.constant 1.0 : f64
  %s = arith.constant 2.0 : f32
  scf.for %t = %lo to %hi step %c1 : i64 {
    %ap = llvm.getelementptr inbounds %a[%t] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %i = llvm.load %ap : !llvm.ptr -> i64
    %p = llvm.getelementptr inbounds %f[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %w0 = llvm.load %p : !llvm.ptr -> f64
    %w1 = arith.addf %w0, %d : f64
    llvm.store %w1, %p : f64, !llvm.ptr
    %p4 = llvm.getelementptr %p[4] : (!llvm.ptr) -> !llvm.ptr, i8
    %n0 = llvm.load %p4 : !llvm.ptr -> f32
    %n1 = arith.addf %n0, %s : f32
    llvm.store %n1, %p4 : f32, !llvm.ptr
    %m0 = llvm.load %p : !llvm.ptr -> f32
    %m1 = arith.subf %m0, %s : f32
    llvm.store %m1, %p : f32, !llvm.ptr
  }
  return
}
