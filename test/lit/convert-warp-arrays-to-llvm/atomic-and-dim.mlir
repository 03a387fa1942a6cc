// RUN: mlwarp-opt %s --convert-warp-arrays-to-llvm | FileCheck %s

// `a[i] += v` is warp.atomic {kind = "add"}: an atomicrmw at the element
// address (fadd for floats, add for integers); the op returns the old value.

// CHECK-LABEL: func.func @atomic_add
// CHECK: %[[PTR:.+]] = llvm.getelementptr
// CHECK: %[[OLD:.+]] = llvm.atomicrmw fadd %[[PTR]], %{{.+}} monotonic : !llvm.ptr, f32
// CHECK: %[[PTR2:.+]] = llvm.getelementptr
// CHECK: llvm.atomicrmw add %[[PTR2]], %{{.+}} monotonic : !llvm.ptr, i32
// CHECK: return %[[OLD]] : f32
func.func @atomic_add(%f: !warp.array<f32, 1>, %n: !warp.array<i32, 2>, %i: i32, %v: f32, %w: i32) -> f32 {
  %0 = "warp.atomic"(%f, %v, %i) {kind = "add"} : (!warp.array<f32, 1>, f32, i32) -> f32
  %1 = "warp.atomic"(%n, %w, %i, %i) {kind = "add"} : (!warp.array<i32, 2>, i32, i32, i32) -> i32
  return %0 : f32
}

// CHECK-LABEL: func.func @atomic_sub
// CHECK: llvm.atomicrmw fsub %{{.+}}, %{{.+}} monotonic : !llvm.ptr, f64
func.func @atomic_sub(%d: !warp.array<f64, 1>, %i: i32, %v: f64) {
  %0 = "warp.atomic"(%d, %v, %i) {kind = "sub"} : (!warp.array<f64, 1>, f64, i32) -> f64
  return
}

// `a.shape[d]` reads shape[d] of the descriptor, as an i32 (Warp's int).
// CHECK-LABEL: func.func @array_dim
// CHECK-SAME: (%[[A:.+]]: !llvm.struct<(ptr, array<3 x i64>, array<3 x i64>)>)
// CHECK: %[[N:.+]] = llvm.extractvalue %[[A]][1, 2] : !llvm.struct<(ptr, array<3 x i64>, array<3 x i64>)>
// CHECK: %[[N32:.+]] = arith.trunci %[[N]] : i64 to i32
// CHECK: return %[[N32]] : i32
func.func @array_dim(%a: !warp.array<f32, 3>) -> i32 {
  %0 = "warp.array_dim"(%a) {dim = 2 : i64} : (!warp.array<f32, 3>) -> i32
  return %0 : i32
}
