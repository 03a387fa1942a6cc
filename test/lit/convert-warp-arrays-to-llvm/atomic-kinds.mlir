// RUN: mlwarp-opt %s --convert-warp-arrays-to-llvm | FileCheck %s

// wp.atomic_min/max/exch/and/or/xor become one atomicrmw each: signed
// min/max on integers, umin/umax for the kinds the frontend gives unsigned
// arrays, fmin/fmax on floats (a NaN loses, as Warp's float min/max).

// CHECK-LABEL: func.func @rmw_kinds
// CHECK: llvm.atomicrmw min %{{.+}}, %{{.+}} monotonic : !llvm.ptr, i32
// CHECK: llvm.atomicrmw max %{{.+}}, %{{.+}} monotonic : !llvm.ptr, i32
// CHECK: llvm.atomicrmw umin %{{.+}}, %{{.+}} monotonic : !llvm.ptr, i32
// CHECK: llvm.atomicrmw umax %{{.+}}, %{{.+}} monotonic : !llvm.ptr, i32
// CHECK: llvm.atomicrmw fmin %{{.+}}, %{{.+}} monotonic : !llvm.ptr, f32
// CHECK: llvm.atomicrmw fmax %{{.+}}, %{{.+}} monotonic : !llvm.ptr, f32
// CHECK: llvm.atomicrmw xchg %{{.+}}, %{{.+}} monotonic : !llvm.ptr, f32
// CHECK: llvm.atomicrmw _and %{{.+}}, %{{.+}} monotonic : !llvm.ptr, i32
// CHECK: llvm.atomicrmw _or %{{.+}}, %{{.+}} monotonic : !llvm.ptr, i32
// CHECK: llvm.atomicrmw _xor %{{.+}}, %{{.+}} monotonic : !llvm.ptr, i32
func.func @rmw_kinds(%n: !warp.array<i32, 1>, %f: !warp.array<f32, 1>, %i: i32, %w: i32, %v: f32) {
  %0 = "warp.atomic"(%n, %w, %i) {kind = "min"} : (!warp.array<i32, 1>, i32, i32) -> i32
  %1 = "warp.atomic"(%n, %w, %i) {kind = "max"} : (!warp.array<i32, 1>, i32, i32) -> i32
  %2 = "warp.atomic"(%n, %w, %i) {kind = "umin"} : (!warp.array<i32, 1>, i32, i32) -> i32
  %3 = "warp.atomic"(%n, %w, %i) {kind = "umax"} : (!warp.array<i32, 1>, i32, i32) -> i32
  %4 = "warp.atomic"(%f, %v, %i) {kind = "min"} : (!warp.array<f32, 1>, f32, i32) -> f32
  %5 = "warp.atomic"(%f, %v, %i) {kind = "max"} : (!warp.array<f32, 1>, f32, i32) -> f32
  %6 = "warp.atomic"(%f, %v, %i) {kind = "exch"} : (!warp.array<f32, 1>, f32, i32) -> f32
  %7 = "warp.atomic"(%n, %w, %i) {kind = "and"} : (!warp.array<i32, 1>, i32, i32) -> i32
  %8 = "warp.atomic"(%n, %w, %i) {kind = "or"} : (!warp.array<i32, 1>, i32, i32) -> i32
  %9 = "warp.atomic"(%n, %w, %i) {kind = "xor"} : (!warp.array<i32, 1>, i32, i32) -> i32
  return
}

// warp.atomic_cas is a cmpxchg returning the old value; floats swap their bits.
// CHECK-LABEL: func.func @cas
// CHECK: %[[P:.+]] = llvm.cmpxchg %{{.+}}, %{{.+}}, %{{.+}} monotonic monotonic : !llvm.ptr, i64
// CHECK: %[[OLD:.+]] = llvm.extractvalue %[[P]][0] : !llvm.struct<(i64, i1)>
// CHECK: %[[C:.+]] = arith.bitcast %{{.+}} : f32 to i32
// CHECK: %[[V:.+]] = arith.bitcast %{{.+}} : f32 to i32
// CHECK: %[[FP:.+]] = llvm.cmpxchg %{{.+}}, %[[C]], %[[V]] monotonic monotonic : !llvm.ptr, i32
// CHECK: %[[BITS:.+]] = llvm.extractvalue %[[FP]][0] : !llvm.struct<(i32, i1)>
// CHECK: %[[FOLD:.+]] = arith.bitcast %[[BITS]] : i32 to f32
// CHECK: return %[[OLD]], %[[FOLD]] : i64, f32
func.func @cas(%l: !warp.array<i64, 2>, %f: !warp.array<f32, 1>, %i: i32, %c: i64, %v: i64, %fc: f32, %fv: f32) -> (i64, f32) {
  %0 = "warp.atomic_cas"(%l, %c, %v, %i, %i) : (!warp.array<i64, 2>, i64, i64, i32, i32) -> i64
  %1 = "warp.atomic_cas"(%f, %fc, %fv, %i) : (!warp.array<f32, 1>, f32, f32, i32) -> f32
  return %0, %1 : i64, f32
}
