// RUN: mlwarp-opt %s --convert-warp-composites-to-vector | FileCheck %s

// warp.struct_field_grad: the gradient a struct records beside an array field (warp-autodiff's adjoint array
// for a struct read from an array of structs) is the descriptor over the field's grad address (member 1 of
// Warp's array_t), with the field's shape and strides widened to i64, as warp.struct_get builds it over the data.

// CHECK-LABEL: func.func @grad_of_field
// CHECK-SAME: (%[[P:.+]]: !llvm.struct<(f32, struct<(i64, i64, array<4 x i32>, array<4 x i32>, i16, i16)>)>)
// CHECK: %[[FIELD:.+]] = llvm.extractvalue %[[P]][1]
// CHECK: %[[GRAD:.+]] = llvm.extractvalue %[[FIELD]][1] : !llvm.struct<(i64, i64, array<4 x i32>, array<4 x i32>, i16, i16)>
// CHECK: %[[PTR:.+]] = llvm.inttoptr %[[GRAD]] : i64 to !llvm.ptr
// CHECK: %[[D0:.+]] = llvm.insertvalue %[[PTR]], %{{.+}}[0] : !llvm.struct<(ptr, array<2 x i64>, array<2 x i64>)>
// CHECK: %[[N0:.+]] = llvm.extractvalue %[[FIELD]][2, 0]
// CHECK: %[[W0:.+]] = arith.extsi %[[N0]] : i32 to i64
// CHECK: llvm.insertvalue %[[W0]], %[[D0]][1, 0]
// CHECK: %[[S1:.+]] = llvm.extractvalue %[[FIELD]][3, 1]
// CHECK: %[[W1:.+]] = arith.extsi %[[S1]] : i32 to i64
// CHECK: %[[D:.+]] = llvm.insertvalue %[[W1]], %{{.+}}[2, 1]
// CHECK: builtin.unrealized_conversion_cast %[[D]] : !llvm.struct<(ptr, array<2 x i64>, array<2 x i64>)> to !warp.array<f32, 2 : i64>
!S = !warp.struct<"S", [f32, !warp.array<f32, 2>]>
func.func @grad_of_field(%p: !S) -> f32 attributes {warp.kernel} {
  %g = "warp.struct_field_grad"(%p) {field = 1} : (!S) -> !warp.array<f32, 2>
  %c0 = arith.constant 0 : i32
  %e = "warp.load"(%g, %c0, %c0) : (!warp.array<f32, 2>, i32, i32) -> f32
  return %e : f32
}
