// RUN: mlwarp-opt %s --convert-warp-builtins-to-arith | FileCheck %s

// One warp op per operator; the operand type picks the arith op.

// CHECK-LABEL: func.func @arith_ops
// CHECK: arith.addf %{{.+}}, %{{.+}} : f32
// CHECK: arith.addi %{{.+}}, %{{.+}} : i32
// CHECK: arith.subf %{{.+}}, %{{.+}} : f64
// CHECK: arith.subi %{{.+}}, %{{.+}} : i64
// CHECK: arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: arith.muli %{{.+}}, %{{.+}} : i32
// CHECK: arith.divf %{{.+}}, %{{.+}} : f32
// CHECK: arith.remf %{{.+}}, %{{.+}} : f32
func.func @arith_ops(%f: f32, %i: i32, %d: f64, %l: i64) {
  %0 = "warp.add"(%f, %f) : (f32, f32) -> f32
  %1 = "warp.add"(%i, %i) : (i32, i32) -> i32
  %2 = "warp.sub"(%d, %d) : (f64, f64) -> f64
  %3 = "warp.sub"(%l, %l) : (i64, i64) -> i64
  %4 = "warp.mul"(%f, %f) : (f32, f32) -> f32
  %5 = "warp.mul"(%i, %i) : (i32, i32) -> i32
  %6 = "warp.div"(%f, %f) : (f32, f32) -> f32
  %7 = "warp.mod"(%f, %f) : (f32, f32) -> f32
  return
}

// Float floor division is floor(a / b).
// CHECK-LABEL: func.func @float_floordiv
// CHECK: %[[Q:.+]] = arith.divf %{{.+}}, %{{.+}} : f32
// CHECK: math.floor %[[Q]] : f32
func.func @float_floordiv(%a: f32, %b: f32) -> f32 {
  %0 = "warp.floordiv"(%a, %b) : (f32, f32) -> f32
  return %0 : f32
}

// CHECK-LABEL: func.func @neg_abs
// CHECK-SAME: (%[[F:.+]]: f32, %[[I:.+]]: i32, %[[U:.+]]: i32)
// Negation is `0 - x`, as Warp's neg(): -(+0.0) is +0.0, not -0.0.
// CHECK: %[[ZF:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.subf %[[ZF]], %[[F]] : f32
// CHECK-NOT: arith.negf
// CHECK: %[[Z:.+]] = arith.constant 0 : i32
// CHECK: arith.subi %[[Z]], %[[I]] : i32
// CHECK: math.absf %[[F]] : f32
// CHECK: math.absi %[[I]] : i32
// The absolute value of an unsigned integer is the value itself: no op.
// CHECK-NOT: math.absi
// CHECK: return {{.*}}, %[[U]] :
func.func @neg_abs(%f: f32, %i: i32, %u: ui32) -> (f32, i32, f32, i32, ui32) {
  %0 = "warp.neg"(%f) : (f32) -> f32
  %1 = "warp.neg"(%i) : (i32) -> i32
  %2 = "warp.abs"(%f) : (f32) -> f32
  %3 = "warp.abs"(%i) : (i32) -> i32
  %4 = "warp.abs"(%u) : (ui32) -> ui32
  return %0, %1, %2, %3, %4 : f32, i32, f32, i32, ui32
}

// CHECK-LABEL: func.func @math
// CHECK: math.sin
// CHECK: math.cos
// CHECK: math.tan
// CHECK: math.sqrt
// CHECK: math.exp
// CHECK: math.log
// CHECK: math.floor
// CHECK: math.ceil
// CHECK: math.powf %{{.+}}, %{{.+}} : f64
func.func @math(%x: f32, %d: f64) {
  %0 = "warp.sin"(%x) : (f32) -> f32
  %1 = "warp.cos"(%x) : (f32) -> f32
  %2 = "warp.tan"(%x) : (f32) -> f32
  %3 = "warp.sqrt"(%x) : (f32) -> f32
  %4 = "warp.exp"(%x) : (f32) -> f32
  %5 = "warp.log"(%x) : (f32) -> f32
  %6 = "warp.floor"(%x) : (f32) -> f32
  %7 = "warp.ceil"(%x) : (f32) -> f32
  %8 = "warp.pow"(%d, %d) : (f64, f64) -> f64
  return
}
