// RUN: mlwarp-opt %s --convert-warp-arrays-to-llvm | FileCheck %s

// `a[i, 1:n:2]` of a 2-d array is warp.slice {dims = [-1, 7]}: the index moves the data by i * stride0
// and drops the dimension; the slice's length is ceil(span / |step|) (0 for an empty span or a zero
// step), its stride stride1 * step, and the data moves to its start element (a plain GEP: an empty slice
// may start past the end). The result is a 1-d descriptor.

// CHECK-LABEL: func.func @row_slice
// CHECK-SAME: (%[[A:.+]]: !llvm.struct<(ptr, array<2 x i64>, array<2 x i64>)>
// CHECK: %[[DATA:.+]] = llvm.extractvalue %[[A]][0]
// CHECK: arith.divsi
// CHECK: %[[P:.+]] = llvm.getelementptr %[[DATA]][%{{.+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[D0:.+]] = llvm.insertvalue %[[P]], %{{.+}}[0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: llvm.insertvalue %{{.+}}, %{{.+}}[1, 0]
// CHECK: llvm.insertvalue %{{.+}}, %{{.+}}[2, 0]
func.func @row_slice(%a: !warp.array<f32, 2>, %i: i32, %lo: i32, %hi: i32, %step: i32) -> i32 {
  %0 = "warp.slice"(%a, %i, %lo, %hi, %step) {dims = array<i64: -1, 7>}
      : (!warp.array<f32, 2>, i32, i32, i32, i32) -> !warp.array<f32, 1>
  %1 = "warp.array_dim"(%0) {dim = 0 : i64} : (!warp.array<f32, 1>) -> i32
  return %1 : i32
}

// `a[::-1]` with no bounds: start n - 1 and stop -1 (selected by the step's sign), trailing
// dimensions kept.
// CHECK-LABEL: func.func @reverse_rows
// CHECK: arith.select
// CHECK: llvm.getelementptr
// CHECK-NOT: warp.slice
func.func @reverse_rows(%a: !warp.array<i32, 2>) -> i32 {
  %0 = "warp.slice"(%a) {dims = array<i64: 0>} : (!warp.array<i32, 2>) -> !warp.array<i32, 2>
  %1 = "warp.array_dim"(%0) {dim = 1 : i64} : (!warp.array<i32, 2>) -> i32
  return %1 : i32
}
