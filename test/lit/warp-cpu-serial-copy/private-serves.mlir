// RUN: mlwarp-opt %s --warp-cpu-entry --warp-cpu-privatize-scatter --warp-cpu-serial-copy | FileCheck %s

// An entry whose `_private` copy has no atomic left (every atomic sums into an array the entry only sums into:
// mass-spring's forces) gets no `_serial` copy: it would be the same function, one more body for LLVM. The
// runtime runs `_private` on one thread.
// CHECK-LABEL: func.func @forces_cpu(
// CHECK: llvm.atomicrmw fadd
// CHECK-NOT: func.func @forces_cpu_serial
// CHECK-LABEL: func.func @forces_cpu_private(
// CHECK-NOT: llvm.atomicrmw
// CHECK: arith.addf
// CHECK-NOT: func.func @forces_cpu_serial
func.func @forces(%f: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                  %idx: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %ip = llvm.extractvalue %idx[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %ia = llvm.getelementptr inbounds %ip[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %j = llvm.load %ia : !llvm.ptr -> i32
  %j64 = arith.extsi %j : i32 to i64
  %fp = llvm.extractvalue %f[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %fa = llvm.getelementptr inbounds %fp[%j64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %one = arith.constant 1.0 : f32
  %old = llvm.atomicrmw fadd %fa, %one monotonic : !llvm.ptr, f32
  return
}

// One whose `_private` copy keeps an atomic (a max: it does not commute with a sum moved to the end) still gets
// its `_serial` copy, with that max plain too.
// CHECK-LABEL: func.func @sum_and_peak_cpu(
// CHECK-LABEL: func.func @sum_and_peak_cpu_serial(
// CHECK-NOT: llvm.atomicrmw
// CHECK: arith.maxnumf
// CHECK-LABEL: func.func @sum_and_peak_cpu_private(
// CHECK: llvm.atomicrmw fmax
func.func @sum_and_peak(%f: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                        %peak: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %x = arith.sitofp %t : i32 to f32
  %fp = llvm.extractvalue %f[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %fa = llvm.getelementptr inbounds %fp[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %old = llvm.atomicrmw fadd %fa, %x monotonic : !llvm.ptr, f32
  %pp = llvm.extractvalue %peak[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %m = llvm.atomicrmw fmax %pp, %x monotonic : !llvm.ptr, f32
  return
}
