// RUN: mlwarp-opt %s --convert-warp-composites-to-vector | FileCheck %s

// Storing an array into a struct's array field (`r.w = other`) inserts the array's descriptor as Warp's array_t
// (data and grad addresses, int32 shape[4] and strides[4], ndim, flags: what `.numpy()` of such structs shows): the
// !warp.array operand is cast to the descriptor struct (convert-warp-arrays-to-llvm lowers the array next, and
// reconcile-unrealized-casts drops the identity cast that is left), its address, extents and strides copied in; a
// read converts back.

// CHECK-LABEL: func.func @set_array
// CHECK-SAME: (%[[P:.+]]: !llvm.struct<(f32, struct<(i64, i64, array<4 x i32>, array<4 x i32>, i16, i16)>)>, %[[A:.+]]: !warp.array<f32, 1 : i64>)
// CHECK: %[[D:.+]] = builtin.unrealized_conversion_cast %[[A]] : !warp.array<f32, 1 : i64> to !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[Z:.+]] = llvm.mlir.zero : !llvm.struct<(i64, i64, array<4 x i32>, array<4 x i32>, i16, i16)>
// CHECK: %[[DATA:.+]] = llvm.extractvalue %[[D]][0]
// CHECK: %[[ADDR:.+]] = llvm.ptrtoint %[[DATA]] : !llvm.ptr to i64
// CHECK: %[[F0:.+]] = llvm.insertvalue %[[ADDR]], %[[Z]][0]
// CHECK: %[[N:.+]] = llvm.extractvalue %[[D]][1, 0]
// CHECK: %[[N32:.+]] = arith.trunci %[[N]] : i64 to i32
// CHECK: %[[F1:.+]] = llvm.insertvalue %[[N32]], %[[F0]][2, 0]
// CHECK: %[[S:.+]] = llvm.extractvalue %[[D]][2, 0]
// CHECK: %[[S32:.+]] = arith.trunci %[[S]] : i64 to i32
// CHECK: %[[F2:.+]] = llvm.insertvalue %[[S32]], %[[F1]][3, 0]
// CHECK: %[[NDIM:.+]] = arith.constant 1 : i16
// CHECK: %[[F3:.+]] = llvm.insertvalue %[[NDIM]], %[[F2]][4]
// CHECK: %[[Q:.+]] = llvm.insertvalue %[[F3]], %[[P]][1]
// CHECK: %[[RAW:.+]] = llvm.extractvalue %[[Q]][1]
// CHECK: llvm.inttoptr
// CHECK: arith.extsi
// CHECK: arith.extsi
// CHECK: %[[DESC:.+]] = llvm.insertvalue %{{.+}}, %{{.+}}[2, 0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[AV:.+]] = builtin.unrealized_conversion_cast %[[DESC]] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)> to !warp.array<f32, 1 : i64>
// CHECK: "warp.load"(%[[AV]], %{{.+}}) : (!warp.array<f32, 1 : i64>, i32) -> f32
!S = !warp.struct<"S", [f32, !warp.array<f32, 1>]>
func.func @set_array(%p: !S, %a: !warp.array<f32, 1>) -> f32 attributes {warp.kernel} {
  %q = "warp.struct_set"(%p, %a) {field = 1} : (!S, !warp.array<f32, 1>) -> !S
  %arr = "warp.struct_get"(%q) {field = 1} : (!S) -> !warp.array<f32, 1>
  %c0 = arith.constant 0 : i32
  %e = "warp.load"(%arr, %c0) : (!warp.array<f32, 1>, i32) -> f32
  return %e : f32
}
