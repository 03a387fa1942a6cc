// RUN: mlwarp-opt %s --convert-warp-builtins-to-arith | FileCheck %s

// warp.cast follows C: float->int truncates (fptosi/fptoui by the target's
// signedness), int->float by the source's signedness, integer widths by
// trunc/ext (sign- or zero-extending by the source), anything->bool is `!= 0`.

// CHECK-LABEL: func.func @float_float
// CHECK: arith.extf %{{.+}} : f32 to f64
// CHECK: arith.truncf %{{.+}} : f64 to f32
func.func @float_float(%f: f32, %d: f64) -> (f64, f32) {
  %0 = "warp.cast"(%f) : (f32) -> f64
  %1 = "warp.cast"(%d) : (f64) -> f32
  return %0, %1 : f64, f32
}

// CHECK-LABEL: func.func @float_int
// CHECK: arith.fptosi %{{.+}} : f32 to i32
// CHECK: arith.fptoui %{{.+}} : f32 to i32
// CHECK: arith.sitofp %{{.+}} : i64 to f32
// CHECK: arith.uitofp %{{.+}} : i32 to f64
func.func @float_int(%f: f32, %l: i64, %u: ui32) -> (i32, ui32, f32, f64) {
  %0 = "warp.cast"(%f) : (f32) -> i32
  %1 = "warp.cast"(%f) : (f32) -> ui32
  %2 = "warp.cast"(%l) : (i64) -> f32
  %3 = "warp.cast"(%u) : (ui32) -> f64
  return %0, %1, %2, %3 : i32, ui32, f32, f64
}

// CHECK-LABEL: func.func @int_int
// CHECK: arith.trunci %{{.+}} : i64 to i32
// CHECK: arith.extsi %{{.+}} : i32 to i64
// CHECK: arith.extui %{{.+}} : i32 to i64
// CHECK: arith.bitcast %{{.+}} : i32 to i32
func.func @int_int(%i: i32, %l: i64, %u: ui32) -> (i32, i64, i64, ui32) {
  %0 = "warp.cast"(%l) : (i64) -> i32
  %1 = "warp.cast"(%i) : (i32) -> i64
  %2 = "warp.cast"(%u) : (ui32) -> i64
  %3 = "warp.cast"(%i) : (i32) -> ui32
  return %0, %1, %2, %3 : i32, i64, i64, ui32
}

// CHECK-LABEL: func.func @to_bool
// CHECK: %[[FZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.cmpf une, %{{.+}}, %[[FZERO]] : f32
// CHECK: %[[IZERO:.+]] = arith.constant 0 : i32
// CHECK: arith.cmpi ne, %{{.+}}, %[[IZERO]] : i32
func.func @to_bool(%f: f32, %i: i32) -> (i1, i1) {
  %0 = "warp.cast"(%f) : (f32) -> i1
  %1 = "warp.cast"(%i) : (i32) -> i1
  return %0, %1 : i1, i1
}

// A bool is unsigned: it widens with extui (true is 1, not -1) and uitofp.
// CHECK-LABEL: func.func @from_bool
// CHECK: arith.extui %{{.+}} : i1 to i32
// CHECK: arith.uitofp %{{.+}} : i1 to f32
func.func @from_bool(%b: i1) -> (i32, f32) {
  %0 = "warp.cast"(%b) : (i1) -> i32
  %1 = "warp.cast"(%b) : (i1) -> f32
  return %0, %1 : i32, f32
}

// A cast to the same type is no op at all.
// CHECK-LABEL: func.func @identity
// CHECK-SAME: (%[[F:.+]]: f32) -> f32
// CHECK-NEXT: return %[[F]] : f32
func.func @identity(%f: f32) -> f32 {
  %0 = "warp.cast"(%f) : (f32) -> f32
  return %0 : f32
}
