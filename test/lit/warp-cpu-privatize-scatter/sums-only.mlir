// RUN: mlwarp-opt %s --warp-cpu-entry --warp-cpu-privatize-scatter | FileCheck %s

// The table's flags word (index 3): SUMS_ONLY (1) when `<entry>_private` writes memory through its private sums
// and its own stack slots alone, so the runtime may run it against scratch copies to see where each chunk's sums
// land (runtime/cpu.py chunk orders); 0 when it also stores to an array, calls a function or keeps an atomic.

// A sum and a store into a stack slot (a local the kernel spills): SUMS_ONLY.
// CHECK-LABEL: llvm.mlir.global external constant @sum_and_local_cpu_private_params()
// CHECK: %[[ONE:.+]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: llvm.insertvalue %[[ONE]], %{{.+}}[3]
func.func @sum_and_local(%f: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                         %idx: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %c1 = arith.constant 1 : i64
  %slot = llvm.alloca %c1 x f32 : (i64) -> !llvm.ptr
  %ip = llvm.extractvalue %idx[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %ia = llvm.getelementptr inbounds %ip[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %j = llvm.load %ia : !llvm.ptr -> i32
  %j64 = arith.extsi %j : i32 to i64
  %x = arith.sitofp %j : i32 to f32
  llvm.store %x, %slot : f32, !llvm.ptr
  %y = llvm.load %slot : !llvm.ptr -> f32
  %fp = llvm.extractvalue %f[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %fa = llvm.getelementptr inbounds %fp[%j64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %o = llvm.atomicrmw fadd %fa, %y monotonic : !llvm.ptr, f32
  return
}

// A sum and a store into another array: running the copy twice would store twice (flags 0).
// CHECK-LABEL: llvm.mlir.global external constant @sum_and_store_cpu_private_params()
// CHECK: %[[ZERO:.+]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: llvm.insertvalue %[[ZERO]], %{{.+}}[3]
func.func @sum_and_store(%f: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                         %out: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %x = arith.sitofp %t : i32 to f32
  %fp = llvm.extractvalue %f[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %fa = llvm.getelementptr inbounds %fp[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %o = llvm.atomicrmw fadd %fa, %x monotonic : !llvm.ptr, f32
  %op = llvm.extractvalue %out[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %oa = llvm.getelementptr inbounds %op[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %x, %oa : f32, !llvm.ptr
  return
}

// A sum and a call (a print): flags 0.
// CHECK-LABEL: llvm.mlir.global external constant @sum_and_call_cpu_private_params()
// CHECK: %[[NONE:.+]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: llvm.insertvalue %[[NONE]], %{{.+}}[3]
llvm.func @report(i32)
func.func @sum_and_call(%f: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %x = arith.sitofp %t : i32 to f32
  %fp = llvm.extractvalue %f[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %fa = llvm.getelementptr inbounds %fp[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %o = llvm.atomicrmw fadd %fa, %x monotonic : !llvm.ptr, f32
  llvm.call @report(%t) : (i32) -> ()
  return
}
