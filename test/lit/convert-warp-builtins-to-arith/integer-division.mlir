// RUN: mlwarp-opt %s --convert-warp-builtins-to-arith | FileCheck %s

// Integer division is defined for every operand: LLVM's sdiv/udiv are undefined (x86 traps with
// SIGFPE) for a zero divisor and for MIN / -1. The divisor becomes 1 in those cases and selects give
// the result: for b == -1 the quotient is 0 - a (wrapping: -128 // -1 == -128 in int8, as Warp's
// narrow division), the remainder 0; for b == 0 the quotient is 0, the remainder a.
// CHECK-LABEL: func.func @signed_div
// CHECK-SAME: (%[[A:.+]]: i8, %[[B:.+]]: i8)
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : i8
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1 : i8
// CHECK-DAG: %[[MINUS_ONE:.+]] = arith.constant -1 : i8
// CHECK-DAG: %[[B_ZERO:.+]] = arith.cmpi eq, %[[B]], %[[ZERO]] : i8
// CHECK-DAG: %[[B_MINUS_ONE:.+]] = arith.cmpi eq, %[[B]], %[[MINUS_ONE]] : i8
// CHECK: %[[UNSAFE:.+]] = arith.ori %[[B_ZERO]], %[[B_MINUS_ONE]] : i1
// CHECK: %[[SAFE:.+]] = arith.select %[[UNSAFE]], %[[ONE]], %[[B]] : i8
// CHECK: %[[Q:.+]] = arith.divsi %[[A]], %[[SAFE]] : i8
// CHECK: %[[NEG:.+]] = arith.subi %[[ZERO]], %[[A]] : i8
// CHECK: %[[Q1:.+]] = arith.select %[[B_MINUS_ONE]], %[[NEG]], %[[Q]] : i8
// CHECK: %[[Q2:.+]] = arith.select %[[B_ZERO]], %[[ZERO]], %[[Q1]] : i8
// CHECK: return %[[Q2]]
func.func @signed_div(%a: i8, %b: i8) -> i8 {
  %0 = "warp.div"(%a, %b) : (i8, i8) -> i8
  return %0 : i8
}

// CHECK-LABEL: func.func @signed_rem_and_floordiv
// CHECK-SAME: (%[[A:.+]]: i32, %[[B:.+]]: i32)
// CHECK: %[[R:.+]] = arith.remsi %[[A]], %{{.+}} : i32
// CHECK: %[[R1:.+]] = arith.select %{{.+}}, %[[ZERO:.+]], %[[R]] : i32
// CHECK: %[[R2:.+]] = arith.select %{{.+}}, %[[A]], %[[R1]] : i32
// CHECK: arith.floordivsi %[[A]], %{{.+}} : i32
// CHECK: return %[[R2]]
func.func @signed_rem_and_floordiv(%a: i32, %b: i32) -> (i32, i32) {
  %0 = "warp.mod"(%a, %b) : (i32, i32) -> i32
  %1 = "warp.floordiv"(%a, %b) : (i32, i32) -> i32
  return %0, %1 : i32, i32
}

// Unsigned division only needs the zero-divisor guard.
// CHECK-LABEL: func.func @unsigned_div
// CHECK-SAME: (%[[A:.+]]: i16, %[[B:.+]]: i16)
// CHECK-NOT: arith.constant -1
// CHECK: %[[B_ZERO:.+]] = arith.cmpi eq, %[[B]], %{{.+}} : i16
// CHECK: %[[SAFE:.+]] = arith.select %[[B_ZERO]], %{{.+}}, %[[B]] : i16
// CHECK: %[[Q:.+]] = arith.divui %[[A]], %[[SAFE]] : i16
// CHECK: arith.select %[[B_ZERO]], %{{.+}}, %[[Q]] : i16
func.func @unsigned_div(%a: ui16, %b: ui16) -> ui16 {
  %0 = "warp.div"(%a, %b) : (ui16, ui16) -> ui16
  return %0 : ui16
}

// Float division is IEEE (x / 0 is inf or NaN): no guard.
// CHECK-LABEL: func.func @float_div
// CHECK-NEXT: arith.divf
// CHECK-NEXT: return
func.func @float_div(%a: f32, %b: f32) -> f32 {
  %0 = "warp.div"(%a, %b) : (f32, f32) -> f32
  return %0 : f32
}
