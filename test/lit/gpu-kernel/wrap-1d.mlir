// RUN: mlwarp-opt %s --warp-gpu-kernel | FileCheck %s

// A kernel becomes `gpu.func @<name>_cuda` in `gpu.module @kernels`, taking the
// launch struct {i64 dims[4], params...} (runtime/abi.py) by value. The body runs
// in a grid-stride loop: first index blockIdx.x * blockDim.x + threadIdx.x,
// step gridDim.x * blockDim.x, bound dims[0]*dims[1]*dims[2]*dims[3] (the launch
// guard). Array data pointers become addrspace(1) for their GEPs and memory ops.

// CHECK: module attributes {gpu.container_module}
// CHECK: gpu.module @kernels
// CHECK-LABEL: gpu.func @saxpy_cuda
// CHECK-SAME: (%[[ARGS:.+]]: !llvm.struct<(array<4 x i64>, struct<(ptr, array<1 x i64>, array<1 x i64>)>, f32)>) kernel
// CHECK-DAG: %[[D0:.+]] = llvm.extractvalue %[[ARGS]][0, 0]
// CHECK-DAG: %[[D1:.+]] = llvm.extractvalue %[[ARGS]][0, 1]
// CHECK-DAG: %[[D2:.+]] = llvm.extractvalue %[[ARGS]][0, 2]
// CHECK-DAG: %[[D3:.+]] = llvm.extractvalue %[[ARGS]][0, 3]
// CHECK-DAG: %[[X:.+]] = llvm.extractvalue %[[ARGS]][1]
// CHECK-DAG: %[[A:.+]] = llvm.extractvalue %[[ARGS]][2]
// CHECK: %[[T01:.+]] = arith.muli %[[D0]], %[[D1]] : i64
// CHECK: %[[T012:.+]] = arith.muli %[[T01]], %[[D2]] : i64
// CHECK: %[[TOTAL:.+]] = arith.muli %[[T012]], %[[D3]] : i64
// CHECK: %[[BID:.+]] = gpu.block_id  x
// CHECK: %[[BDIM:.+]] = gpu.block_dim  x
// CHECK: %[[BASE:.+]] = arith.muli %[[BID]], %[[BDIM]] : index
// CHECK: %[[TID:.+]] = gpu.thread_id  x
// CHECK: %[[FIRST:.+]] = arith.addi %[[BASE]], %[[TID]] : index
// CHECK: %[[GDIM:.+]] = gpu.grid_dim  x
// CHECK: %[[STEP:.+]] = arith.muli %[[GDIM]], %{{.+}} : index
// CHECK: %[[FIRST64:.+]] = arith.index_cast %[[FIRST]] : index to i64
// CHECK: %[[STEP64:.+]] = arith.index_cast %[[STEP]] : index to i64
// CHECK: scf.for %[[I:.+]] = %[[FIRST64]] to %[[TOTAL]] step %[[STEP64]] : i64 {
// CHECK:   %[[I32:.+]] = arith.trunci %[[I]] : i64 to i32
// CHECK:   %[[DATA:.+]] = llvm.extractvalue %[[X]][0]
// CHECK:   %[[GLOBAL:.+]] = llvm.addrspacecast %[[DATA]] : !llvm.ptr to !llvm.ptr<1>
// CHECK:   %[[P:.+]] = llvm.getelementptr %[[GLOBAL]][%{{.+}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK:   %[[V:.+]] = llvm.load %[[P]] : !llvm.ptr<1> -> f32
// CHECK:   %[[R:.+]] = arith.mulf %[[A]], %[[V]] : f32
// CHECK:   llvm.store %[[R]], %[[P]] : f32, !llvm.ptr<1>
// CHECK: }
// CHECK: gpu.return
// CHECK-NOT: func.func @saxpy
module {
  func.func @saxpy(%x: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>, %a: f32) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %data = llvm.extractvalue %x[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
    %stride = llvm.extractvalue %x[2, 0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
    %i64 = arith.extsi %i : i32 to i64
    %off = arith.muli %i64, %stride : i64
    %p = llvm.getelementptr %data[%off] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %v = llvm.load %p : !llvm.ptr -> f32
    %r = arith.mulf %a, %v : f32
    llvm.store %r, %p : f32, !llvm.ptr
    return
  }
}
