// RUN: mlwarp-opt %s --convert-warp-builtins-to-arith --canonicalize --cse | FileCheck %s

// asin/acos clamp their argument to [-1, 1] first, with Warp's fmax/fmin (x >= -1 ? x : -1, then
// <= 1 ? . : 1), so that a dot product of unit vectors rounding past 1 is not NaN (NaN becomes -1).
// CHECK-LABEL: func.func @asin_acos
// CHECK-SAME: (%[[X:.+]]: f32)
// CHECK-DAG: %[[LO:.+]] = arith.constant -1.000000e+00 : f32
// CHECK-DAG: %[[HI:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[GE:.+]] = arith.cmpf oge, %[[X]], %[[LO]] : f32
// CHECK: %[[M:.+]] = arith.select %[[GE]], %[[X]], %[[LO]] : f32
// CHECK: %[[LE:.+]] = arith.cmpf ole, %[[M]], %[[HI]] : f32
// CHECK: %[[C:.+]] = arith.select %[[LE]], %[[M]], %[[HI]] : f32
// CHECK: math.asin %[[C]] : f32
// CHECK: math.acos %[[C]] : f32
func.func @asin_acos(%x: f32) -> (f32, f32) {
  %0 = "warp.asin"(%x) : (f32) -> f32
  %1 = "warp.acos"(%x) : (f32) -> f32
  return %0, %1 : f32, f32
}

// atan2 at y == x == 0 is C's (+-0 or +-pi by the signs), selected explicitly: the constant folder
// of math.atan2 would make atan2(0, 0) NaN.
// CHECK-LABEL: func.func @atan2
// CHECK-SAME: (%[[Y:.+]]: f32, %[[X:.+]]: f32)
// CHECK: %[[BOTH:.+]] = arith.andi
// CHECK: %[[ATAN:.+]] = math.atan2 %[[Y]], %[[X]] : f32
// CHECK: arith.select %[[BOTH]], %{{.+}}, %[[ATAN]] : f32
func.func @atan2(%y: f32, %x: f32) -> f32 {
  %0 = "warp.atan2"(%y, %x) : (f32, f32) -> f32
  return %0 : f32
}

// The folded values: atan2(+0, +0) = +0, atan2(-0, +0) = -0, atan2(+0, -0) = pi, atan2(-0, -0) = -pi.
// CHECK-LABEL: func.func @atan2_folded
// CHECK-DAG: %[[PZ:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[NZ:.+]] = arith.constant -0.000000e+00 : f32
// CHECK-DAG: %[[PI:.+]] = arith.constant 3.14159274 : f32
// CHECK-DAG: %[[NPI:.+]] = arith.constant -3.14159274 : f32
// CHECK-NOT: math.atan2
// CHECK: return %[[PZ]], %[[NZ]], %[[PI]], %[[NPI]]
func.func @atan2_folded() -> (f32, f32, f32, f32) {
  %p = arith.constant 0.0 : f32
  %n = arith.constant -0.0 : f32
  %0 = "warp.atan2"(%p, %p) : (f32, f32) -> f32
  %1 = "warp.atan2"(%n, %p) : (f32, f32) -> f32
  %2 = "warp.atan2"(%p, %n) : (f32, f32) -> f32
  %3 = "warp.atan2"(%n, %n) : (f32, f32) -> f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}

// where(cond, a, b) on scalars: a select; an integer condition is `cond != 0`.
// CHECK-LABEL: func.func @where
// CHECK-SAME: (%[[C:.+]]: i32, %[[B:.+]]: i1, %[[X:.+]]: f32, %[[Y:.+]]: f32)
// CHECK: %[[NZ:.+]] = arith.cmpi ne, %[[C]], %{{.+}} : i32
// CHECK: arith.select %[[NZ]], %[[X]], %[[Y]] : f32
// CHECK: arith.select %[[B]], %[[X]], %[[Y]] : f32
func.func @where(%c: i32, %b: i1, %x: f32, %y: f32) -> (f32, f32) {
  %0 = "warp.where"(%c, %x, %y) : (i32, f32, f32) -> f32
  %1 = "warp.where"(%b, %x, %y) : (i1, f32, f32) -> f32
  return %0, %1 : f32, f32
}
