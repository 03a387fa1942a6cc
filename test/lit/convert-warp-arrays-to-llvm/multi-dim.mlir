// RUN: mlwarp-opt %s --convert-warp-arrays-to-llvm | FileCheck %s

// An N-D element is at data + sum(index_d * stride_d): strides are per
// dimension (in bytes), so transposed or sliced views need no copy.

// CHECK-LABEL: func.func @load_2d
// CHECK-SAME: (%[[A:.+]]: !llvm.struct<(ptr, array<2 x i64>, array<2 x i64>)>, %[[I:.+]]: i32, %[[J:.+]]: i32) -> i32
// CHECK: %[[DATA:.+]] = llvm.extractvalue %[[A]][0]
// CHECK: %[[S0:.+]] = llvm.extractvalue %[[A]][2, 0]
// CHECK: %[[N0:.+]] = llvm.extractvalue %[[A]][1, 0]
// CHECK: %[[I64:.+]] = arith.extsi %[[I]] : i32 to i64
// CHECK: %[[I_END:.+]] = arith.addi %[[I64]], %[[N0]] : i64
// CHECK: %[[IW:.+]] = arith.select %{{.+}}, %[[I_END]], %[[I64]] : i64
// CHECK: %[[T0:.+]] = arith.muli %[[IW]], %[[S0]]{{.*}} : i64
// CHECK: %[[S1:.+]] = llvm.extractvalue %[[A]][2, 1]
// CHECK: %[[N1:.+]] = llvm.extractvalue %[[A]][1, 1]
// CHECK: %[[J64:.+]] = arith.extsi %[[J]] : i32 to i64
// CHECK: %[[J_END:.+]] = arith.addi %[[J64]], %[[N1]] : i64
// CHECK: %[[JW:.+]] = arith.select %{{.+}}, %[[J_END]], %[[J64]] : i64
// CHECK: %[[T1:.+]] = arith.muli %[[JW]], %[[S1]]{{.*}} : i64
// CHECK: %[[OFF:.+]] = arith.addi %[[T0]], %[[T1]]{{.*}} : i64
// CHECK: %[[PTR:.+]] = llvm.getelementptr {{.*}}%[[DATA]][%[[OFF]]]
// CHECK: llvm.load %[[PTR]] : !llvm.ptr -> i32
func.func @load_2d(%a: !warp.array<i32, 2>, %i: i32, %j: i32) -> i32 {
  %0 = "warp.load"(%a, %i, %j) : (!warp.array<i32, 2>, i32, i32) -> i32
  return %0 : i32
}

// CHECK-LABEL: func.func @store_3d
// CHECK-SAME: !llvm.struct<(ptr, array<3 x i64>, array<3 x i64>)>
// CHECK: llvm.extractvalue %{{.+}}[2, 0]
// CHECK: llvm.extractvalue %{{.+}}[2, 1]
// CHECK: arith.addi
// CHECK: llvm.extractvalue %{{.+}}[2, 2]
// CHECK: arith.addi
// CHECK: llvm.store %{{.+}}, %{{.+}} : f32, !llvm.ptr
func.func @store_3d(%a: !warp.array<f32, 3>, %i: i32, %j: i32, %k: i32, %v: f32) {
  "warp.store"(%a, %v, %i, %j, %k) : (!warp.array<f32, 3>, f32, i32, i32, i32) -> ()
  return
}

// warp.address is the element pointer itself (no load).
// CHECK-LABEL: func.func @address
// CHECK: %[[PTR:.+]] = llvm.getelementptr
// CHECK-NOT: llvm.load
// CHECK: return %[[PTR]] : !llvm.ptr
func.func @address(%a: !warp.array<f32, 2>, %i: i32, %j: i32) -> !llvm.ptr {
  %0 = "warp.address"(%a, %i, %j) : (!warp.array<f32, 2>, i32, i32) -> !llvm.ptr
  return %0 : !llvm.ptr
}
