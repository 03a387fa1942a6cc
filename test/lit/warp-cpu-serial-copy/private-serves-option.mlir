// RUN: mlwarp-opt %s --warp-cpu-entry --warp-cpu-privatize-scatter --warp-cpu-serial-copy="private-serves=true" | FileCheck %s
// RUN: mlwarp-opt %s --warp-cpu-entry --warp-cpu-privatize-scatter --warp-cpu-serial-copy | FileCheck %s --check-prefix=DEFAULT

// An adjoint library's serial copy (private-serves): the entry's `_private` copy keeps an atomic (a max: it does
// not commute with a sum moved to the end), and still no `_serial` copy is made; the runtime runs `_private` on
// one thread, that max atomic there. By default the `_serial` copy is made, with the max plain.
// CHECK-LABEL: func.func @sum_and_peak_cpu(
// CHECK-NOT: func.func @sum_and_peak_cpu_serial
// CHECK-LABEL: func.func @sum_and_peak_cpu_private(
// CHECK-NOT: llvm.atomicrmw fadd
// CHECK: llvm.atomicrmw fmax
// CHECK-NOT: func.func @sum_and_peak_cpu_serial
// DEFAULT-LABEL: func.func @sum_and_peak_cpu_serial(
// DEFAULT-NOT: llvm.atomicrmw
// DEFAULT: arith.maxnumf

// An entry with atomics and no `_private` copy (its only atomic is a max) keeps its `_serial` copy either way.
// CHECK-LABEL: func.func @peak_cpu(
// CHECK-LABEL: func.func @peak_cpu_serial(
// CHECK-NOT: llvm.atomicrmw
// CHECK: arith.maxnumf
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

func.func @peak(%peak: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %x = arith.sitofp %t : i32 to f32
  %pp = llvm.extractvalue %peak[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %m = llvm.atomicrmw fmax %pp, %x monotonic : !llvm.ptr, f32
  return
}
