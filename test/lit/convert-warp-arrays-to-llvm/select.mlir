// RUN: mlwarp-opt %s --convert-warp-arrays-to-llvm | FileCheck %s

// `v = a if c else b`, or a branch that binds a variable to another array made before it (Newton's
// multicontact picks its vertex and face polygons so), is an arith.select of two arrays: it selects between
// their descriptors, and the load through it reads the selected one.

// CHECK-LABEL: func.func @pick
// CHECK: %[[A:.+]] = llvm.insertvalue %{{.+}}[2, 0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[B:.+]] = llvm.insertvalue %{{.+}}[2, 0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[S:.+]] = arith.select %{{.+}}, %[[A]], %[[B]] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: llvm.extractvalue %[[S]][0]
// CHECK: llvm.load
func.func @pick(%p: i64, %q: i64, %n: i32, %c: i1) -> f32 {
  %a = "warp.array_from_ptr"(%p, %n) {operandSegmentSizes = array<i32: 1, 1, 0>} : (i64, i32) -> !warp.array<f32, 1>
  %b = "warp.array_from_ptr"(%q, %n) {operandSegmentSizes = array<i32: 1, 1, 0>} : (i64, i32) -> !warp.array<f32, 1>
  %s = arith.select %c, %a, %b : !warp.array<f32, 1>
  %i = arith.constant 0 : i32
  %x = "warp.load"(%s, %i) : (!warp.array<f32, 1>, i32) -> f32
  return %x : f32
}
