// RUN: mlwarp-opt %s --convert-warp-builtins-to-arith | FileCheck %s

// min/max are compares and selects. Integers: `a < b ? a : b`. Floats follow
// Warp's C fmin/fmax, where a NaN operand loses to a number:
// min(a, b) = a <= b ? a : (b == b ? b : a). clamp(x, lo, hi) = min(max(lo, x), hi).

// CHECK-LABEL: func.func @float_min_max
// CHECK-SAME: (%[[A:.+]]: f32, %[[B:.+]]: f32)
// CHECK: %[[BNUM:.+]] = arith.cmpf oeq, %[[B]], %[[B]] : f32
// CHECK: %[[NOTNAN:.+]] = arith.select %[[BNUM]], %[[B]], %[[A]] : f32
// CHECK: %[[LE:.+]] = arith.cmpf ole, %[[A]], %[[B]] : f32
// CHECK: %[[MIN:.+]] = arith.select %[[LE]], %[[A]], %[[NOTNAN]] : f32
// CHECK: %[[GE:.+]] = arith.cmpf oge, %[[A]], %[[B]] : f32
// CHECK: %[[MAX:.+]] = arith.select %[[GE]], %[[A]], %{{.+}} : f32
// CHECK: return %[[MIN]], %[[MAX]]
func.func @float_min_max(%a: f32, %b: f32) -> (f32, f32) {
  %0 = "warp.min"(%a, %b) : (f32, f32) -> f32
  %1 = "warp.max"(%a, %b) : (f32, f32) -> f32
  return %0, %1 : f32, f32
}

// CHECK-LABEL: func.func @int_min_max
// CHECK-SAME: (%[[I:.+]]: i64, %[[J:.+]]: i64, %[[UA:.+]]: i32, %[[UB:.+]]: i32)
// CHECK: %[[GT:.+]] = arith.cmpi sgt, %[[I]], %[[J]] : i64
// CHECK: arith.select %[[GT]], %[[I]], %[[J]] : i64
// CHECK: %[[LT:.+]] = arith.cmpi ult, %[[UA]], %[[UB]] : i32
// CHECK: arith.select %[[LT]], %[[UA]], %[[UB]] : i32
func.func @int_min_max(%i: i64, %j: i64, %ua: ui32, %ub: ui32) -> (i64, ui32) {
  %0 = "warp.max"(%i, %j) : (i64, i64) -> i64
  %1 = "warp.min"(%ua, %ub) : (ui32, ui32) -> ui32
  return %0, %1 : i64, ui32
}

// CHECK-LABEL: func.func @clamp
// CHECK-SAME: (%[[X:.+]]: f32, %[[LO:.+]]: f32, %[[HI:.+]]: f32)
// CHECK: %[[C1:.+]] = arith.cmpf oge, %[[LO]], %[[X]] : f32
// CHECK: %[[LOWER:.+]] = arith.select %[[C1]], %[[LO]], %{{.+}} : f32
// CHECK: %[[C2:.+]] = arith.cmpf ole, %[[LOWER]], %[[HI]] : f32
// CHECK: %[[R:.+]] = arith.select %[[C2]], %[[LOWER]], %{{.+}} : f32
// CHECK: return %[[R]] : f32
func.func @clamp(%x: f32, %lo: f32, %hi: f32) -> f32 {
  %0 = "warp.clamp"(%x, %lo, %hi) : (f32, f32, f32) -> f32
  return %0 : f32
}

// Integer clamp: two integer selects, no NaN handling.
// CHECK-LABEL: func.func @int_clamp
// CHECK: arith.cmpi sgt
// CHECK: arith.cmpi slt
// CHECK-NOT: arith.cmpi eq
// CHECK: return
func.func @int_clamp(%x: i32, %lo: i32, %hi: i32) -> i32 {
  %0 = "warp.clamp"(%x, %lo, %hi) : (i32, i32, i32) -> i32
  return %0 : i32
}
