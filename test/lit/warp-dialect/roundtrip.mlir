// RUN: mlwarp-opt %s | mlwarp-opt | FileCheck %s

// Well-typed IR of every op in the table verifies, prints and parses back unchanged.

!A = !warp.array<f32, 2>
!V = !warp.vec<3, f32>
!S = !warp.struct<"P", [!warp.vec<3, f32>, f32, !warp.array<f32, 1>]>

// CHECK-LABEL: func.func @arrays
// CHECK: %[[I:.+]]:2 = "warp.tid"() : () -> (i32, i32)
// CHECK: %[[X:.+]] = "warp.load"(%arg0, %[[I]]#0, %[[I]]#1) : (!warp.array<f32, 2 : i64>, i32, i32) -> f32
// CHECK: "warp.store"(%arg0, %[[X]], %[[I]]#0, %[[I]]#1) : (!warp.array<f32, 2 : i64>, f32, i32, i32) -> ()
// CHECK: "warp.atomic"(%arg0, %[[X]], %[[I]]#0, %[[I]]#1) {kind = "max"} : (!warp.array<f32, 2 : i64>, f32, i32, i32) -> f32
// CHECK: "warp.atomic_cas"(%arg0, %[[X]], %[[X]], %[[I]]#0, %[[I]]#1) : (!warp.array<f32, 2 : i64>, f32, f32, i32, i32) -> f32
// CHECK: "warp.array_dim"(%arg0) {dim = 1 : i64} : (!warp.array<f32, 2 : i64>) -> i32
// CHECK: %[[ROW:.+]] = "warp.view"(%arg0, %[[I]]#0) : (!warp.array<f32, 2 : i64>, i32) -> !warp.array<f32, 1 : i64>
// CHECK: "warp.address"(%[[ROW]], %[[I]]#1) : (!warp.array<f32, 1 : i64>, i32) -> !llvm.ptr
// CHECK: "warp.cast"(%[[X]]) : (f32) -> f64
func.func @arrays(%a: !A) -> f64 attributes {warp.kernel} {
  %i:2 = "warp.tid"() : () -> (i32, i32)
  %x = "warp.load"(%a, %i#0, %i#1) : (!A, i32, i32) -> f32
  "warp.store"(%a, %x, %i#0, %i#1) : (!A, f32, i32, i32) -> ()
  %old = "warp.atomic"(%a, %x, %i#0, %i#1) {kind = "max"} : (!A, f32, i32, i32) -> f32
  %was = "warp.atomic_cas"(%a, %x, %x, %i#0, %i#1) : (!A, f32, f32, i32, i32) -> f32
  %n = "warp.array_dim"(%a) {dim = 1} : (!A) -> i32
  %row = "warp.view"(%a, %i#0) : (!A, i32) -> !warp.array<f32, 1>
  %p = "warp.address"(%row, %i#1) : (!warp.array<f32, 1>, i32) -> !llvm.ptr
  %d = "warp.cast"(%x) : (f32) -> f64
  return %d : f64
}

// CHECK-LABEL: func.func @composites
// CHECK: "warp.construct"(%arg1, %arg1, %arg1) : (f32, f32, f32) -> !warp.vec<3 : i64, f32>
// CHECK: "warp.extract"(%{{.+}}, %arg2) : (!warp.vec<3 : i64, f32>, i32) -> f32
// CHECK: "warp.insert"(%{{.+}}, %arg1, %arg2) : (!warp.vec<3 : i64, f32>, f32, i32) -> !warp.vec<3 : i64, f32>
// CHECK: "warp.struct_get"(%arg0) {field = 2 : i64} : ({{.+}}) -> !warp.array<f32, 1 : i64>
// CHECK: "warp.struct_set"(%arg0, %{{.+}}) {field = 0 : i64} : ({{.+}}, !warp.vec<3 : i64, f32>) -> !warp.struct
// CHECK: "warp.length"(%{{.+}}) : (!warp.vec<3 : i64, f32>) -> f32
func.func @composites(%s: !S, %x: f32, %i: i32) -> (!S, f32) {
  %v = "warp.construct"(%x, %x, %x) : (f32, f32, f32) -> !V
  %c = "warp.extract"(%v, %i) : (!V, i32) -> f32
  %w = "warp.insert"(%v, %x, %i) : (!V, f32, i32) -> !V
  %arr = "warp.struct_get"(%s) {field = 2} : (!S) -> !warp.array<f32, 1>
  %t = "warp.struct_set"(%s, %w) {field = 0} : (!S, !V) -> !S
  %l = "warp.length"(%w) : (!V) -> f32
  return %t, %l : !S, f32
}

// An array field of a struct is its LLVM descriptor between convert-warp-composites-to-vector and
// convert-warp-arrays-to-llvm: the array ops take it (a descriptor has no dtype to check against).
// CHECK-LABEL: func.func @descriptor
// CHECK: "warp.load"(%arg0, %arg1) : (!llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>, i32) -> f32
func.func @descriptor(%d: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>, %i: i32) -> f32 {
  %x = "warp.load"(%d, %i) : (!llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>, i32) -> f32
  return %x : f32
}

// An array over raw memory, without and with the address of its adjoint (the optional `grad`: the segment sizes
// say which operands are the shape).
// CHECK-LABEL: func.func @raw_memory
// CHECK: "warp.array_from_ptr"(%arg0, %arg1, %arg2) {operandSegmentSizes = array<i32: 1, 2, 0>} : (i64, i32, i32) -> !warp.array<f32, 2 : i64>
// CHECK: "warp.array_from_ptr"(%arg0, %arg1, %arg3) {operandSegmentSizes = array<i32: 1, 1, 1>} : (i64, i32, i64) -> !warp.array<f32, 1 : i64>
// CHECK: "warp.array_data"(%{{.+}}) : (!warp.array<f32, 1 : i64>) -> i64
func.func @raw_memory(%p: i64, %n: i32, %m: i32, %g: i64) -> i64 {
  %a = "warp.array_from_ptr"(%p, %n, %m) {operandSegmentSizes = array<i32: 1, 2, 0>} : (i64, i32, i32) -> !A
  %b = "warp.array_from_ptr"(%p, %n, %g) {operandSegmentSizes = array<i32: 1, 1, 1>} : (i64, i32, i64) -> !warp.array<f32, 1>
  %d = "warp.array_data"(%b) : (!warp.array<f32, 1>) -> i64
  return %d : i64
}
