// RUN: not mlwarp-opt %s --split-input-file 2>&1 | FileCheck %s

// The verifier checks the op table's constraints (compiler/dialects/warp/ops.py): each ill-typed op is
// one line naming the op, the operand or result, what the table asks for and what it got.

// CHECK-NOT: Traceback
// CHECK: verify-errors.mlir:[[@LINE+2]]:8: 'warp.load' op operand 'array' must be a !warp.array (or its LLVM descriptor), got f32
func.func @load_of_a_scalar(%a: f32, %i: i32) -> f32 {
  %0 = "warp.load"(%a, %i) : (f32, i32) -> f32
  return %0 : f32
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.load' op operand 'indices' #1 must be i32, got f64
func.func @f64_index(%a: !warp.array<f32, 1>, %i: f64) -> f32 {
  %0 = "warp.load"(%a, %i) : (!warp.array<f32, 1>, f64) -> f32
  return %0 : f32
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.load' op operand 'indices' #2 must be i32, got i64
func.func @i64_second_index(%a: !warp.array<f32, 2>, %i: i32, %j: i64) -> f32 {
  %0 = "warp.load"(%a, %i, %j) : (!warp.array<f32, 2>, i32, i64) -> f32
  return %0 : f32
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.load' op result 'element' must be f32 (the element type of operand 'array'), got f64
func.func @load_result_mismatch(%a: !warp.array<f32, 1>, %i: i32) -> f64 {
  %0 = "warp.load"(%a, %i) : (!warp.array<f32, 1>, i32) -> f64
  return %0 : f64
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:3: 'warp.store' op operand 'value' must be !warp.vec<3 : i64, f32> (the element type of operand 'array'), got f32
func.func @store_value_mismatch(%a: !warp.array<!warp.vec<3, f32>, 1>, %i: i32, %x: f32) {
  "warp.store"(%a, %x, %i) : (!warp.array<!warp.vec<3, f32>, 1>, f32, i32) -> ()
  return
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.atomic' op operand 'value' must be i32 (the element type of operand 'array'), got f32
func.func @atomic_value_mismatch(%a: !warp.array<i32, 1>, %i: i32, %x: f32) -> i32 {
  %0 = "warp.atomic"(%a, %x, %i) {kind = "add"} : (!warp.array<i32, 1>, f32, i32) -> i32
  return %0 : i32
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.atomic' op result 'old' must be f32 (the element type of operand 'array'), got f64
func.func @atomic_result_mismatch(%a: !warp.array<f32, 1>, %i: i32, %x: f32) -> f64 {
  %0 = "warp.atomic"(%a, %x, %i) {kind = "add"} : (!warp.array<f32, 1>, f32, i32) -> f64
  return %0 : f64
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.atomic' op attribute "kind" is expected but not provided
func.func @atomic_without_kind(%a: !warp.array<f32, 1>, %i: i32, %x: f32) -> f32 {
  %0 = "warp.atomic"(%a, %x, %i) : (!warp.array<f32, 1>, f32, i32) -> f32
  return %0 : f32
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.atomic_cas' op operand 'compare' must be f32 (the element type of operand 'array'), got i32
func.func @cas_compare_mismatch(%a: !warp.array<f32, 1>, %i: i32, %x: f32) -> f32 {
  %0 = "warp.atomic_cas"(%a, %i, %x, %i) : (!warp.array<f32, 1>, i32, f32, i32) -> f32
  return %0 : f32
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.view' op result 'subarray' must be a !warp.array of f32 (the element type of operand 'array'), got !warp.array<f64, 1 : i64>
func.func @view_changes_dtype(%a: !warp.array<f32, 2>, %i: i32) -> !warp.array<f64, 1> {
  %0 = "warp.view"(%a, %i) : (!warp.array<f32, 2>, i32) -> !warp.array<f64, 1>
  return %0 : !warp.array<f64, 1>
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.array_dim' op result 'extent' must be i32, got i64
func.func @array_dim_i64(%a: !warp.array<f32, 2>) -> i64 {
  %0 = "warp.array_dim"(%a) {dim = 1} : (!warp.array<f32, 2>) -> i64
  return %0 : i64
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.address' op operand 'array' must be a !warp.array (or its LLVM descriptor), got i32
func.func @address_of_a_scalar(%i: i32) -> !llvm.ptr {
  %0 = "warp.address"(%i, %i) : (i32, i32) -> !llvm.ptr
  return %0 : !llvm.ptr
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.tid' op result 'ids' #0 must be i32, got index
func.func @tid_index() -> index {
  %0 = "warp.tid"() : () -> index
  return %0 : index
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.insert' op result 'updated' must be !warp.vec<3 : i64, f32> (the type of operand 'aggregate'), got !warp.vec<4 : i64, f32>
func.func @insert_result_mismatch(%v: !warp.vec<3, f32>, %x: f32, %i: i32) -> !warp.vec<4, f32> {
  %0 = "warp.insert"(%v, %x, %i) : (!warp.vec<3, f32>, f32, i32) -> !warp.vec<4, f32>
  return %0 : !warp.vec<4, f32>
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.extract' op operand 'aggregate' must be a vec, mat, quat, transform or struct, got f32
func.func @extract_of_a_scalar(%x: f32, %i: i32) -> f32 {
  %0 = "warp.extract"(%x, %i) : (f32, i32) -> f32
  return %0 : f32
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.construct' op result 'composite' must be a vec, mat, quat, transform or struct, got f32
func.func @construct_a_scalar(%x: f32) -> f32 {
  %0 = "warp.construct"(%x) : (f32) -> f32
  return %0 : f32
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.struct_set' op result 'updated' must be !warp.struct<"A", [f32]> (the type of operand 'aggregate'), got !warp.struct<"B", [f32]>
func.func @struct_set_changes_type(%s: !warp.struct<"A", [f32]>, %x: f32) -> !warp.struct<"B", [f32]> {
  %0 = "warp.struct_set"(%s, %x) {field = 0} : (!warp.struct<"A", [f32]>, f32) -> !warp.struct<"B", [f32]>
  return %0 : !warp.struct<"B", [f32]>
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.load' op takes operands (array, indices...), got 0
func.func @load_without_operands() -> f32 {
  %0 = "warp.load"() : () -> f32
  return %0 : f32
}

// -----
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.array_from_ptr' op operand 'grad' must be i64, got i32
func.func @grad_address_of_i32(%p: i64, %n: i32, %g: i32) {
  %0 = "warp.array_from_ptr"(%p, %n, %g) {operandSegmentSizes = array<i32: 1, 1, 1>} : (i64, i32, i32) -> !warp.array<f32, 1>
  return
}

// -----
// A variadic shape and an optional grad: which operands are which is the attribute's to say.
// CHECK-NEXT: verify-errors.mlir:[[@LINE+2]]:8: 'warp.array_from_ptr' op takes operands (address, shape..., grad?) with an operandSegmentSizes attribute giving each group's count, got 2 operands and segments None
func.func @array_from_ptr_without_segments(%p: i64, %n: i32) {
  %0 = "warp.array_from_ptr"(%p, %n) : (i64, i32) -> !warp.array<f32, 1>
  return
}
// CHECK-NOT: {{.}}
