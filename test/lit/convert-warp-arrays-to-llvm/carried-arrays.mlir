// RUN: mlwarp-opt %s --convert-warp-arrays-to-llvm | FileCheck %s

// `if c: rows = a` / `else: rows = b` with nothing else in the branches: canonicalization makes the scf.if an
// arith.select of the two arrays, which picks between their descriptors.
// CHECK-LABEL: func.func @select_arrays
// CHECK-SAME: (%[[C:.+]]: i1, %[[A:.+]]: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>, %[[B:.+]]: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>)
// CHECK: %[[R:.+]] = arith.select %[[C]], %[[A]], %[[B]] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: llvm.extractvalue %[[R]][1, 0]
// CHECK-NOT: !warp.array
func.func @select_arrays(%c: i1, %a: !warp.array<f32, 1>, %b: !warp.array<f32, 1>) -> i32 {
  %r = arith.select %c, %a, %b : !warp.array<f32, 1>
  %n = "warp.array_dim"(%r) {dim = 0} : (!warp.array<f32, 1>) -> i32
  return %n : i32
}

// An array field of a struct (convert-warp-composites-to-vector: its descriptor, cast to the array type) that an
// scf.if yields, the other branch yielding the null array a local unassigned there holds: the cast is dropped and
// the scf.if carries descriptors.
// CHECK-LABEL: func.func @struct_field_through_if
// CHECK-SAME: (%[[C:.+]]: i1, %[[D:.+]]: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>)
// CHECK-NOT: unrealized_conversion_cast
// CHECK: %[[R:.+]] = scf.if %[[C]] -> (!llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>)
// CHECK: scf.yield %[[D]]
// CHECK: llvm.inttoptr
// CHECK: llvm.extractvalue %[[R]][1, 0]
// CHECK-NOT: !warp.array
func.func @struct_field_through_if(%c: i1, %d: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>) -> i32 {
  %field = builtin.unrealized_conversion_cast %d : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)> to !warp.array<f32, 1>
  %null = arith.constant 0 : i64
  %empty = arith.constant 0 : i32
  %r = scf.if %c -> (!warp.array<f32, 1>) {
    scf.yield %field : !warp.array<f32, 1>
  } else {
    %z = "warp.array_from_ptr"(%null, %empty) {operandSegmentSizes = array<i32: 1, 1, 0>} : (i64, i32) -> !warp.array<f32, 1>
    scf.yield %z : !warp.array<f32, 1>
  }
  %n = "warp.array_dim"(%r) {dim = 0} : (!warp.array<f32, 1>) -> i32
  return %n : i32
}
