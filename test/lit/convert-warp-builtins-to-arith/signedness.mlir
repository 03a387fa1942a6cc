// RUN: mlwarp-opt %s --convert-warp-builtins-to-arith | FileCheck %s

// Signed and unsigned integers share one MLIR width; the op chosen keeps the
// difference (divsi/divui, remsi/remui, shrsi/shrui, slt/ult), then `ui32`
// becomes `i32` everywhere: arguments, results, array element types.

// CHECK-LABEL: func.func @div_rem
// CHECK-SAME: (%[[A:.+]]: i32, %[[B:.+]]: i32, %[[UA:.+]]: i32, %[[UB:.+]]: i32) -> (i32, i32, i32, i32)
// (Each divisor first passes the guards that integer-division.mlir checks.)
// CHECK: arith.divsi %[[A]], %{{.+}} : i32
// CHECK: arith.divui %[[UA]], %{{.+}} : i32
// CHECK: arith.remsi %[[A]], %{{.+}} : i32
// CHECK: arith.remui %[[UA]], %{{.+}} : i32
func.func @div_rem(%a: i32, %b: i32, %ua: ui32, %ub: ui32) -> (i32, ui32, i32, ui32) {
  %0 = "warp.div"(%a, %b) : (i32, i32) -> i32
  %1 = "warp.div"(%ua, %ub) : (ui32, ui32) -> ui32
  %2 = "warp.mod"(%a, %b) : (i32, i32) -> i32
  %3 = "warp.mod"(%ua, %ub) : (ui32, ui32) -> ui32
  return %0, %1, %2, %3 : i32, ui32, i32, ui32
}

// Python's `//` rounds toward negative infinity for signed integers; for
// unsigned ones plain division already does.
// CHECK-LABEL: func.func @floordiv
// CHECK: arith.floordivsi %{{.+}}, %{{.+}} : i64
// CHECK: arith.divui %{{.+}}, %{{.+}} : i32
func.func @floordiv(%a: i64, %b: i64, %ua: ui32, %ub: ui32) -> (i64, ui32) {
  %0 = "warp.floordiv"(%a, %b) : (i64, i64) -> i64
  %1 = "warp.floordiv"(%ua, %ub) : (ui32, ui32) -> ui32
  return %0, %1 : i64, ui32
}

// CHECK-LABEL: func.func @shift_right
// CHECK: arith.shrsi
// CHECK: arith.shrui
func.func @shift_right(%a: i32, %b: i32, %ua: ui32, %ub: ui32) -> (i32, ui32) {
  %0 = "warp.rshift"(%a, %b) : (i32, i32) -> i32
  %1 = "warp.rshift"(%ua, %ub) : (ui32, ui32) -> ui32
  return %0, %1 : i32, ui32
}

// CHECK-LABEL: func.func @compare
// CHECK: arith.cmpi slt, %{{.+}}, %{{.+}} : i32
// CHECK: arith.cmpi ult, %{{.+}}, %{{.+}} : i32
// CHECK: arith.cmpi sge, %{{.+}}, %{{.+}} : i64
// CHECK: arith.cmpi uge, %{{.+}}, %{{.+}} : i64
func.func @compare(%a: i32, %ua: ui32, %b: i64, %ub: ui64) -> (i1, i1, i1, i1) {
  %0 = "warp.lt"(%a, %a) : (i32, i32) -> i1
  %1 = "warp.lt"(%ua, %ua) : (ui32, ui32) -> i1
  %2 = "warp.ge"(%b, %b) : (i64, i64) -> i1
  %3 = "warp.ge"(%ub, %ub) : (ui64, ui64) -> i1
  return %0, %1, %2, %3 : i1, i1, i1, i1
}

// A value produced by an already-lowered unsigned op (here `0 - x`, whose
// constant is signless) must still be treated as unsigned by its users.
// CHECK-LABEL: func.func @unsigned_after_neg
// CHECK: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK: %[[NEG:.+]] = arith.subi %[[ZERO]], %{{.+}} : i32
// CHECK: arith.divui %[[NEG]], %{{.+}} : i32
// CHECK: arith.shrui %[[NEG]], %{{.+}} : i32
func.func @unsigned_after_neg(%ua: ui32, %ub: ui32) -> (ui32, ui32) {
  %0 = "warp.neg"(%ua) : (ui32) -> ui32
  %1 = "warp.div"(%0, %ub) : (ui32, ui32) -> ui32
  %2 = "warp.rshift"(%0, %ub) : (ui32, ui32) -> ui32
  return %1, %2 : ui32, ui32
}

// Array element types lose their signedness too; the array ops themselves are
// left for convert-warp-arrays-to-llvm.
// CHECK-LABEL: func.func @unsigned_array
// CHECK-SAME: (%[[ARR:.+]]: !warp.array<i32, 1 : i64>, %[[I:.+]]: i32) -> i32
// CHECK: %[[V:.+]] = "warp.load"(%[[ARR]], %[[I]]) : (!warp.array<i32, 1 : i64>, i32) -> i32
// CHECK: arith.divui %[[V]], %{{.+}} : i32
func.func @unsigned_array(%a: !warp.array<ui32, 1>, %i: i32) -> ui32 {
  %0 = "warp.load"(%a, %i) : (!warp.array<ui32, 1>, i32) -> ui32
  %1 = "warp.div"(%0, %0) : (ui32, ui32) -> ui32
  return %1 : ui32
}
