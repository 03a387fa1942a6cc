// RUN: mlwarp-opt %s --convert-warp-composites-to-vector | FileCheck %s

// warp.struct_field_grad: the gradient a struct records beside an array field (warp-autodiff's adjoint array
// for a struct read from an array of structs) is the descriptor over the field's fourth member, the grad
// address, with the field's shape and strides.

// CHECK-LABEL: func.func @grad_of_field
// CHECK-SAME: (%[[P:.+]]: !llvm.struct<(f32, struct<(ptr, array<2 x i64>, array<2 x i64>, ptr, i32)>)>)
// CHECK: %[[FIELD:.+]] = llvm.extractvalue %[[P]][1]
// CHECK: %[[GRAD:.+]] = llvm.extractvalue %[[FIELD]][3] : !llvm.struct<(ptr, array<2 x i64>, array<2 x i64>, ptr, i32)>
// CHECK: %[[D0:.+]] = llvm.insertvalue %[[GRAD]], %{{.+}}[0] : !llvm.struct<(ptr, array<2 x i64>, array<2 x i64>)>
// CHECK: %[[SHAPE:.+]] = llvm.extractvalue %[[FIELD]][1]
// CHECK: %[[D1:.+]] = llvm.insertvalue %[[SHAPE]], %[[D0]][1]
// CHECK: %[[STRIDES:.+]] = llvm.extractvalue %[[FIELD]][2]
// CHECK: %[[D2:.+]] = llvm.insertvalue %[[STRIDES]], %[[D1]][2]
// CHECK: builtin.unrealized_conversion_cast %[[D2]] : !llvm.struct<(ptr, array<2 x i64>, array<2 x i64>)> to !warp.array<f32, 2 : i64>
!S = !warp.struct<"S", [f32, !warp.array<f32, 2>]>
func.func @grad_of_field(%p: !S) -> f32 attributes {warp.kernel} {
  %g = "warp.struct_field_grad"(%p) {field = 1} : (!S) -> !warp.array<f32, 2>
  %c0 = arith.constant 0 : i32
  %e = "warp.load"(%g, %c0, %c0) : (!warp.array<f32, 2>, i32, i32) -> f32
  return %e : f32
}
