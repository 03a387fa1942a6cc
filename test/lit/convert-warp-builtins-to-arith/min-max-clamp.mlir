// RUN: mlwarp-opt %s --convert-warp-builtins-to-arith | FileCheck %s

// min/max are Warp's C definitions `a < b ? a : b` / `a > b ? a : b` (a compare
// and a select, not arith.minimumf: the NaN behaviour is C's), clamp(x, lo, hi)
// is min(max(lo, x), hi).

// CHECK-LABEL: func.func @float_min_max
// CHECK-SAME: (%[[A:.+]]: f32, %[[B:.+]]: f32)
// CHECK: %[[LT:.+]] = arith.cmpf olt, %[[A]], %[[B]] : f32
// CHECK: %[[MIN:.+]] = arith.select %[[LT]], %[[A]], %[[B]] : f32
// CHECK: %[[GT:.+]] = arith.cmpf ogt, %[[A]], %[[B]] : f32
// CHECK: %[[MAX:.+]] = arith.select %[[GT]], %[[A]], %[[B]] : f32
// CHECK: return %[[MIN]], %[[MAX]]
func.func @float_min_max(%a: f32, %b: f32) -> (f32, f32) {
  %0 = "warp.min"(%a, %b) : (f32, f32) -> f32
  %1 = "warp.max"(%a, %b) : (f32, f32) -> f32
  return %0, %1 : f32, f32
}

// CHECK-LABEL: func.func @int_min_max
// CHECK: arith.cmpi sgt, %{{.+}}, %{{.+}} : i64
// CHECK: arith.select
// CHECK: arith.cmpi ult, %{{.+}}, %{{.+}} : i32
// CHECK: arith.select
func.func @int_min_max(%i: i64, %j: i64, %ua: ui32, %ub: ui32) -> (i64, ui32) {
  %0 = "warp.max"(%i, %j) : (i64, i64) -> i64
  %1 = "warp.min"(%ua, %ub) : (ui32, ui32) -> ui32
  return %0, %1 : i64, ui32
}

// CHECK-LABEL: func.func @clamp
// CHECK-SAME: (%[[X:.+]]: f32, %[[LO:.+]]: f32, %[[HI:.+]]: f32)
// CHECK: %[[C1:.+]] = arith.cmpf ogt, %[[LO]], %[[X]] : f32
// CHECK: %[[LOWER:.+]] = arith.select %[[C1]], %[[LO]], %[[X]] : f32
// CHECK: %[[C2:.+]] = arith.cmpf olt, %[[LOWER]], %[[HI]] : f32
// CHECK: %[[R:.+]] = arith.select %[[C2]], %[[LOWER]], %[[HI]] : f32
// CHECK: return %[[R]] : f32
func.func @clamp(%x: f32, %lo: f32, %hi: f32) -> f32 {
  %0 = "warp.clamp"(%x, %lo, %hi) : (f32, f32, f32) -> f32
  return %0 : f32
}
