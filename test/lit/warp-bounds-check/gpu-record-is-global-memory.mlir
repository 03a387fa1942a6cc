// RUN: mlwarp-opt %s --warp-bounds-check --convert-warp-builtins-to-arith --convert-warp-arrays-to-llvm --warp-gpu-kernel | FileCheck %s

// On CUDA (a debug build's warp-gpu-kernel), the error record is the last field of the by-value launch
// struct, as on the CPU, and it is global memory like every array: the first-failure claim is an atomicrmw
// on an addrspace(1) pointer (PTX atom.global.add.u64), the record's slots are global stores.

// CHECK: gpu.module @kernels
// CHECK-LABEL: gpu.func @k_cuda
// CHECK-SAME: (%[[ARGS:.+]]: !llvm.struct<(array<4 x i64>, struct<(ptr, array<1 x i64>, array<1 x i64>)>, struct<(ptr, array<1 x i64>, array<1 x i64>)>)>) kernel
// CHECK: %[[REC:.+]] = llvm.extractvalue %[[ARGS]][2]
// CHECK: arith.cmpi ult
// CHECK: scf.if
// CHECK: llvm.load %{{.+}} : !llvm.ptr<1> -> f32
// CHECK: } else {
// CHECK: llvm.extractvalue %[[REC]][0]
// CHECK: llvm.atomicrmw add %{{.+}}, %{{.+}} monotonic : !llvm.ptr<1>, i64
// CHECK: llvm.store %{{.+}}, %{{.+}} : i64, !llvm.ptr<1>
// CHECK-NOT: warp.

func.func @k(%a: !warp.array<f32, 1>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32 loc("user.py":3:9)
  %v = "warp.load"(%a, %t) : (!warp.array<f32, 1>, i32) -> f32 loc("user.py":4:13)
  return
}
