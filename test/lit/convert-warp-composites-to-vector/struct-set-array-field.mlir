// RUN: mlwarp-opt %s --convert-warp-composites-to-vector | FileCheck %s

// A struct's array field stores the array's descriptor, then its gradient's address and its ndim (runtime/abi.py's
// field_descriptor). Storing an array into the field (`r.w = other`) copies the descriptor's data, shape and
// strides, records no gradient (a null address) and the ndim; reading the field back builds the array's descriptor
// from the first three (convert-warp-arrays-to-llvm lowers the array next, and reconcile-unrealized-casts
// drops the identity casts that are left).

// CHECK-LABEL: func.func @set_array
// CHECK-SAME: (%[[P:.+]]: !llvm.struct<(f32, struct<(ptr, array<1 x i64>, array<1 x i64>, ptr, i32)>)>, %[[A:.+]]: !warp.array<f32, 1 : i64>)
// CHECK: %[[D:.+]] = builtin.unrealized_conversion_cast %[[A]] : !warp.array<f32, 1 : i64> to !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[DATA:.+]] = llvm.extractvalue %[[D]][0]
// CHECK: %[[F0:.+]] = llvm.insertvalue %[[DATA]], %{{.+}}[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>, ptr, i32)>
// CHECK: %[[NULL:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[NOGRAD:.+]] = llvm.insertvalue %[[NULL]], %{{.+}}[3]
// CHECK: %[[NDIM:.+]] = arith.constant 1 : i32
// CHECK: %[[FIELD:.+]] = llvm.insertvalue %[[NDIM]], %[[NOGRAD]][4]
// CHECK: %[[Q:.+]] = llvm.insertvalue %[[FIELD]], %[[P]][1]
// CHECK: %[[ARR:.+]] = llvm.extractvalue %[[Q]][1]
// CHECK: %[[READ:.+]] = llvm.extractvalue %[[ARR]][0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>, ptr, i32)>
// CHECK: %[[BUILT:.+]] = llvm.insertvalue %{{.+}}, %{{.+}}[2] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[AV:.+]] = builtin.unrealized_conversion_cast %[[BUILT]] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)> to !warp.array<f32, 1 : i64>
// CHECK: "warp.load"(%[[AV]], %{{.+}}) : (!warp.array<f32, 1 : i64>, i32) -> f32
!S = !warp.struct<"S", [f32, !warp.array<f32, 1>]>
func.func @set_array(%p: !S, %a: !warp.array<f32, 1>) -> f32 attributes {warp.kernel} {
  %q = "warp.struct_set"(%p, %a) {field = 1} : (!S, !warp.array<f32, 1>) -> !S
  %arr = "warp.struct_get"(%q) {field = 1} : (!S) -> !warp.array<f32, 1>
  %c0 = arith.constant 0 : i32
  %e = "warp.load"(%arr, %c0) : (!warp.array<f32, 1>, i32) -> f32
  return %e : f32
}
