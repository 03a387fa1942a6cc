// RUN: mlwarp-opt %s --convert-warp-arrays-to-llvm | FileCheck %s

// A 1-D array argument becomes the descriptor struct {data, shape[1], strides[1]}
// (runtime/abi.py packs the same layout); an element is at data + i * stride,
// the stride in bytes, the index sign-extended to i64; a negative index counts from
// the end (Warp's `a[-1]`): i + shape when i < 0.

// CHECK-LABEL: func.func @load_store
// CHECK-SAME: (%[[A:.+]]: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>, %[[I:.+]]: i32, %[[V:.+]]: f32) -> f32
// CHECK: %[[DATA:.+]] = llvm.extractvalue %[[A]][0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[STRIDE:.+]] = llvm.extractvalue %[[A]][2, 0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[SHAPE:.+]] = llvm.extractvalue %[[A]][1, 0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[I64:.+]] = arith.extsi %[[I]] : i32 to i64
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[I64]], %{{.+}} : i64
// CHECK: %[[FROM_END:.+]] = arith.addi %[[I64]], %[[SHAPE]] : i64
// CHECK: %[[WRAPPED:.+]] = arith.select %[[NEG]], %[[FROM_END]], %[[I64]] : i64
// CHECK: %[[OFF:.+]] = arith.muli %[[WRAPPED]], %[[STRIDE]]{{.*}} : i64
// CHECK: %[[PTR:.+]] = llvm.getelementptr {{.*}}%[[DATA]][%[[OFF]]]{{.*}} : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[X:.+]] = llvm.load %[[PTR]] : !llvm.ptr -> f32
// CHECK: %[[DATA2:.+]] = llvm.extractvalue %[[A]][0]
// CHECK: %[[PTR2:.+]] = llvm.getelementptr {{.*}}%[[DATA2]][%{{.+}}]
// CHECK: llvm.store %[[V]], %[[PTR2]] : f32, !llvm.ptr
// CHECK: return %[[X]] : f32
func.func @load_store(%a: !warp.array<f32, 1>, %i: i32, %v: f32) -> f32 {
  %0 = "warp.load"(%a, %i) : (!warp.array<f32, 1>, i32) -> f32
  "warp.store"(%a, %v, %i) : (!warp.array<f32, 1>, f32, i32) -> ()
  return %0 : f32
}

// A constant index needs no select: a non-negative one is used as it is, a negative one
// is added to the shape.
// CHECK-LABEL: func.func @constant_indices
// CHECK-NOT: arith.select
// CHECK: %[[SHAPE:.+]] = llvm.extractvalue %{{.+}}[1, 0]
// CHECK: %[[M1:.+]] = arith.extsi %{{.+}} : i32 to i64
// CHECK: arith.addi %[[M1]], %[[SHAPE]] : i64
// CHECK-NOT: arith.select
// CHECK: return
func.func @constant_indices(%a: !warp.array<f32, 1>) -> f32 {
  %c2 = arith.constant 2 : i32
  %m1 = arith.constant -1 : i32
  %0 = "warp.load"(%a, %c2) : (!warp.array<f32, 1>, i32) -> f32
  %1 = "warp.load"(%a, %m1) : (!warp.array<f32, 1>, i32) -> f32
  %2 = arith.addf %0, %1 : f32
  return %2 : f32
}

// The element type is the loaded type: f64, i64 and bool arrays load as such.
// CHECK-LABEL: func.func @element_types
// CHECK: llvm.load %{{.+}} : !llvm.ptr -> f64
// CHECK: llvm.load %{{.+}} : !llvm.ptr -> i64
// CHECK: llvm.store %{{.+}}, %{{.+}} : i1, !llvm.ptr
func.func @element_types(%d: !warp.array<f64, 1>, %l: !warp.array<i64, 1>, %b: !warp.array<i1, 1>, %i: i32, %t: i1) {
  %0 = "warp.load"(%d, %i) : (!warp.array<f64, 1>, i32) -> f64
  %1 = "warp.load"(%l, %i) : (!warp.array<i64, 1>, i32) -> i64
  "warp.store"(%b, %t, %i) : (!warp.array<i1, 1>, i1, i32) -> ()
  return
}

// Functions without arrays, and non-array ops, are left as they are.
// CHECK-LABEL: func.func @no_arrays
// CHECK-SAME: (%[[X:.+]]: f32) -> f32 {
// CHECK-NEXT: %[[S:.+]] = "warp.sin"(%[[X]]) : (f32) -> f32
// CHECK-NEXT: return %[[S]] : f32
func.func @no_arrays(%x: f32) -> f32 {
  %0 = "warp.sin"(%x) : (f32) -> f32
  return %0 : f32
}
