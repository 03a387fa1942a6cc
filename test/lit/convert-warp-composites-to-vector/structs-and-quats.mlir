// RUN: mlwarp-opt %s --convert-warp-composites-to-vector | FileCheck %s

// A struct is an !llvm.struct in C layout: a vec3 field is stored as
// !llvm.array<3 x f32>, an array field as Warp's array_t, read back as the array's descriptor.

// CHECK-LABEL: func.func @fields
// CHECK-SAME: (%[[P:.+]]: !llvm.struct<(array<3 x f32>, f32, struct<(i64, i64, array<4 x i32>, array<4 x i32>, i16, i16)>)>, %[[X:.+]]: f32)
// CHECK: %[[POS:.+]] = llvm.extractvalue %[[P]][0] : !llvm.struct<(array<3 x f32>, f32, struct<(i64, i64, array<4 x i32>, array<4 x i32>, i16, i16)>)>
// CHECK: vector.from_elements %{{.+}}, %{{.+}}, %{{.+}} : vector<3xf32>
// CHECK: %[[Q:.+]] = llvm.insertvalue %[[X]], %[[P]][1]
// CHECK: %[[RAW:.+]] = llvm.extractvalue %[[Q]][2]
// CHECK: %[[ADDR:.+]] = llvm.extractvalue %[[RAW]][0]
// CHECK: llvm.inttoptr %[[ADDR]] : i64 to !llvm.ptr
// CHECK: %[[N:.+]] = llvm.extractvalue %[[RAW]][2, 0]
// CHECK: arith.extsi %[[N]] : i32 to i64
// CHECK: %[[DESC:.+]] = llvm.insertvalue %{{.+}}, %{{.+}}[2, 0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[AV:.+]] = builtin.unrealized_conversion_cast %[[DESC]] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)> to !warp.array<f32, 1 : i64>
// CHECK: "warp.load"(%[[AV]], %{{.+}}) : (!warp.array<f32, 1 : i64>, i32) -> f32
!S = !warp.struct<"S", [!warp.vec<3, f32>, f32, !warp.array<f32, 1>]>
func.func @fields(%p: !S, %x: f32) -> (!warp.vec<3, f32>, f32) attributes {warp.kernel} {
  %pos = "warp.struct_get"(%p) {field = 0} : (!S) -> !warp.vec<3, f32>
  %q = "warp.struct_set"(%p, %x) {field = 1} : (!S, f32) -> !S
  %arr = "warp.struct_get"(%q) {field = 2} : (!S) -> !warp.array<f32, 1>
  %c0 = arith.constant 0 : i32
  %e = "warp.load"(%arr, %c0) : (!warp.array<f32, 1>, i32) -> f32
  return %pos, %e : !warp.vec<3, f32>, f32
}

// CHECK-LABEL: func.func @zero_struct
// CHECK: llvm.mlir.zero : !llvm.struct<(array<3 x f32>, f32, struct<(i64, i64, array<4 x i32>, array<4 x i32>, i16, i16)>)>
func.func @zero_struct() -> !S {
  %s = "warp.construct"() : () -> !S
  return %s : !S
}

// Quaternions are vector<4 x T>; quat_rotate is Warp's formula in scalar arith.
// CHECK-LABEL: func.func @rotate
// CHECK-SAME: (%{{.+}}: vector<4xf32>, %{{.+}}: vector<3xf32>) -> vector<3xf32>
// CHECK-NOT: warp.
// CHECK: vector.from_elements %{{.+}}, %{{.+}}, %{{.+}} : vector<3xf32>
func.func @rotate(%q: !warp.quat<f32>, %v: !warp.vec<3, f32>) -> !warp.vec<3, f32> {
  %0 = "warp.quat_rotate"(%q, %v) : (!warp.quat<f32>, !warp.vec<3, f32>) -> !warp.vec<3, f32>
  return %0 : !warp.vec<3, f32>
}
