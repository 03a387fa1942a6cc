// RUN: mlwarp-opt %s --convert-warp-builtins-to-arith | FileCheck %s

// Float comparisons are ordered (false with a NaN), except `!=` which is
// unordered (true with a NaN), as in C.
// CHECK-LABEL: func.func @float_compare
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf une
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf ole
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf oge
func.func @float_compare(%a: f32, %b: f32) {
  %0 = "warp.eq"(%a, %b) : (f32, f32) -> i1
  %1 = "warp.ne"(%a, %b) : (f32, f32) -> i1
  %2 = "warp.lt"(%a, %b) : (f32, f32) -> i1
  %3 = "warp.le"(%a, %b) : (f32, f32) -> i1
  %4 = "warp.gt"(%a, %b) : (f32, f32) -> i1
  %5 = "warp.ge"(%a, %b) : (f32, f32) -> i1
  return
}

// CHECK-LABEL: func.func @int_compare
// CHECK: arith.cmpi eq
// CHECK: arith.cmpi ne
// CHECK: arith.cmpi sle
// CHECK: arith.cmpi ugt
func.func @int_compare(%a: i32, %ua: ui32) {
  %0 = "warp.eq"(%a, %a) : (i32, i32) -> i1
  %1 = "warp.ne"(%a, %a) : (i32, i32) -> i1
  %2 = "warp.le"(%a, %a) : (i32, i32) -> i1
  %3 = "warp.gt"(%ua, %ua) : (ui32, ui32) -> i1
  return
}

// `not b` is `b xor true`; `and`/`or` evaluate both sides.
// CHECK-LABEL: func.func @bool_ops
// CHECK-SAME: (%[[P:.+]]: i1, %[[Q:.+]]: i1)
// CHECK: arith.andi %[[P]], %[[Q]] : i1
// CHECK: arith.ori %[[P]], %[[Q]] : i1
// CHECK: %[[TRUE:.+]] = arith.constant true
// CHECK: arith.xori %[[P]], %[[TRUE]] : i1
func.func @bool_ops(%p: i1, %q: i1) -> (i1, i1, i1) {
  %0 = "warp.bool_and"(%p, %q) : (i1, i1) -> i1
  %1 = "warp.bool_or"(%p, %q) : (i1, i1) -> i1
  %2 = "warp.bool_not"(%p) : (i1) -> i1
  return %0, %1, %2 : i1, i1, i1
}

// CHECK-LABEL: func.func @bit_ops
// CHECK: arith.andi %{{.+}}, %{{.+}} : i32
// CHECK: arith.ori %{{.+}}, %{{.+}} : i32
// CHECK: arith.xori %{{.+}}, %{{.+}} : i32
// CHECK: arith.shli %{{.+}}, %{{.+}} : i32
// CHECK: %[[ONES:.+]] = arith.constant -1 : i32
// CHECK: arith.xori %{{.+}}, %[[ONES]] : i32
func.func @bit_ops(%a: i32, %b: i32) {
  %0 = "warp.bit_and"(%a, %b) : (i32, i32) -> i32
  %1 = "warp.bit_or"(%a, %b) : (i32, i32) -> i32
  %2 = "warp.bit_xor"(%a, %b) : (i32, i32) -> i32
  %3 = "warp.lshift"(%a, %b) : (i32, i32) -> i32
  %4 = "warp.invert"(%a) : (i32) -> i32
  return
}
