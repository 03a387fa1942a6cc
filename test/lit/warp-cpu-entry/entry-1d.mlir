// RUN: mlwarp-opt %s --warp-cpu-entry | FileCheck %s
// RUN: mlwarp-opt %s --warp-cpu-entry | FileCheck %s --check-prefix=GONE

// A kernel `k(params...)` becomes `k_cpu(args: !llvm.ptr, begin: i64, end: i64)`.
// `args` is the launch struct {i64 dims[4], param0, param1, ...} of runtime/abi.py:
// each field is loaded once, before the loop over linear thread ids [begin, end).

// CHECK-LABEL: func.func @scale_cpu
// CHECK-SAME: (%[[ARGS:.+]]: !llvm.ptr, %[[BEGIN:.+]]: i64, %[[END:.+]]: i64) {
// CHECK: %[[P0:.+]] = llvm.getelementptr %[[ARGS]][0, 0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<4 x i64>, struct<(ptr, array<1 x i64>, array<1 x i64>)>, f32)>
// CHECK: llvm.load %[[P0]] : !llvm.ptr -> i64
// CHECK: llvm.getelementptr %[[ARGS]][0, 0, 3]
// CHECK: %[[PX:.+]] = llvm.getelementptr %[[ARGS]][0, 1]
// CHECK: %[[X:.+]] = llvm.load %[[PX]] : !llvm.ptr -> !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[PA:.+]] = llvm.getelementptr %[[ARGS]][0, 2]
// CHECK: %[[A:.+]] = llvm.load %[[PA]] : !llvm.ptr -> f32
// CHECK: scf.for %[[IV:.+]] = %[[BEGIN]] to %[[END]] step %{{.+}} : i64 {
// The 1-D thread id is the linear id itself, as an i32.
// CHECK:   %[[TID:.+]] = arith.trunci %[[IV]]{{.*}} : i64 to i32
// Uses of the parameters now use the loaded fields.
// CHECK:   llvm.extractvalue %[[X]][1, 0]
// CHECK:   arith.mulf %[[A]], %[[A]] : f32
// CHECK:   arith.addi %[[TID]], %[[TID]] : i32
// CHECK: }
// CHECK: return
func.func @scale(%x: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>, %a: f32) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %n = llvm.extractvalue %x[1, 0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  %s = arith.mulf %a, %a : f32
  %u = arith.addi %t, %t : i32
  return
}

// Functions that are not kernels (no `warp.kernel` attribute) are left alone,
// and the kernel itself is replaced by its entry.
// CHECK-LABEL: func.func @helper(%arg0: i32) -> i32 {
// CHECK-NEXT: return %arg0 : i32
// GONE-NOT: func.func @scale(
func.func @helper(%n: i32) -> i32 {
  return %n : i32
}
