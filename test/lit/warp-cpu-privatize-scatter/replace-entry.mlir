// RUN: mlwarp-opt %s --warp-cpu-entry --warp-cpu-privatize-scatter="replace-entry=true" | FileCheck %s

// An adjoint library's privatize-scatter (replace-entry): the entry whose atomics into `f` only sum becomes
// `<entry>_private` itself, its adds plain, with its table; no atomic form of it is left. An entry with nothing
// to privatize (its one atomic is a max) keeps its name and its atomic.
// CHECK-NOT: func.func @springs_cpu(
// CHECK-LABEL: func.func @springs_cpu_private(
// CHECK-NOT: llvm.atomicrmw
// CHECK: arith.addf
// CHECK: arith.subf
// CHECK: llvm.mlir.global external constant @springs_cpu_private_params()
// CHECK-LABEL: func.func @peak_cpu(
// CHECK: llvm.atomicrmw max
// CHECK-NOT: @peak_cpu_private
func.func @springs(%f: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                   %idx: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>,
                   %v: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %ip = llvm.extractvalue %idx[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %ia = llvm.getelementptr inbounds %ip[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %j = llvm.load %ia : !llvm.ptr -> i32
  %j64 = arith.extsi %j : i32 to i64
  %vp = llvm.extractvalue %v[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %va = llvm.getelementptr inbounds %vp[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %x = llvm.load %va : !llvm.ptr -> f32
  %fp = llvm.extractvalue %f[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %fa = llvm.getelementptr inbounds %fp[%j64] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %o1 = llvm.atomicrmw fadd %fa, %x monotonic : !llvm.ptr, f32
  %fb = llvm.getelementptr inbounds %fp[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %o2 = llvm.atomicrmw fsub %fb, %x monotonic : !llvm.ptr, f32
  return
}

func.func @peak(%peak: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %i = arith.extsi %t : i32 to i64
  %pp = llvm.extractvalue %peak[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %pa = llvm.getelementptr inbounds %pp[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %o = llvm.atomicrmw max %pa, %t monotonic : !llvm.ptr, i32
  return
}
