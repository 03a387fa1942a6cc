// RUN: mlwarp-opt %s --convert-warp-composites-to-vector | FileCheck %s

// Storing an array into a struct's array field (`r.w = other`) inserts the array's descriptor: the
// !warp.array operand is cast to the descriptor struct (convert-warp-arrays-to-llvm lowers the array next,
// and reconcile-unrealized-casts drops the identity cast that is left).

// CHECK-LABEL: func.func @set_array
// CHECK-SAME: (%[[P:.+]]: !llvm.struct<(f32, struct<(ptr, array<1 x i64>, array<1 x i64>)>)>, %[[A:.+]]: !warp.array<f32, 1 : i64>)
// CHECK: %[[D:.+]] = builtin.unrealized_conversion_cast %[[A]] : !warp.array<f32, 1 : i64> to !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[Q:.+]] = llvm.insertvalue %[[D]], %[[P]][1]
// CHECK: %[[ARR:.+]] = llvm.extractvalue %[[Q]][1]
// CHECK: %[[AV:.+]] = builtin.unrealized_conversion_cast %[[ARR]] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)> to !warp.array<f32, 1 : i64>
// CHECK: "warp.load"(%[[AV]], %{{.+}}) : (!warp.array<f32, 1 : i64>, i32) -> f32
!S = !warp.struct<"S", [f32, !warp.array<f32, 1>]>
func.func @set_array(%p: !S, %a: !warp.array<f32, 1>) -> f32 attributes {warp.kernel} {
  %q = "warp.struct_set"(%p, %a) {field = 1} : (!S, !warp.array<f32, 1>) -> !S
  %arr = "warp.struct_get"(%q) {field = 1} : (!S) -> !warp.array<f32, 1>
  %c0 = arith.constant 0 : i32
  %e = "warp.load"(%arr, %c0) : (!warp.array<f32, 1>, i32) -> f32
  return %e : f32
}
