// RUN: mlwarp-opt %s --split-input-file --warp-cse | FileCheck %s
// RUN: mlwarp-opt %s --split-input-file --cse --canonicalize | FileCheck %s --check-prefix=UPSTREAM

// warp-cse merges repeated pure warp ops and erases unused ones, by the effects the op table declares
// (rules.py); upstream cse and canonicalize cannot (MLIR 22's IRDL ops declare no traits): they keep all.

// CHECK-LABEL: func.func @repeated_sin
// CHECK-NEXT: %[[S:.+]] = "warp.sin"(%arg0) : (f32) -> f32
// CHECK-NEXT: %[[A:.+]] = "warp.add"(%[[S]], %[[S]]) : (f32, f32) -> f32
// CHECK-NEXT: return %[[A]]
// UPSTREAM-LABEL: func.func @repeated_sin
// UPSTREAM-COUNT-2: "warp.sin"
func.func @repeated_sin(%x: f32) -> f32 {
  %0 = "warp.sin"(%x) : (f32) -> f32
  %1 = "warp.sin"(%x) : (f32) -> f32
  %2 = "warp.add"(%0, %1) : (f32, f32) -> f32
  return %2 : f32
}

// -----
// A dead chain goes at once; a dead load goes (it only reads); a store stays.
// CHECK-LABEL: func.func @dead
// CHECK-NEXT: "warp.store"
// CHECK-NEXT: return
// UPSTREAM-LABEL: func.func @dead
// UPSTREAM: "warp.load"
// UPSTREAM: "warp.sin"
// UPSTREAM: "warp.cos"
func.func @dead(%a: !warp.array<f32, 1>, %i: i32, %x: f32) {
  %0 = "warp.load"(%a, %i) : (!warp.array<f32, 1>, i32) -> f32
  %1 = "warp.sin"(%0) : (f32) -> f32
  %2 = "warp.cos"(%1) : (f32) -> f32
  "warp.store"(%a, %x, %i) : (!warp.array<f32, 1>, f32, i32) -> ()
  return
}

// -----
// Loads are never merged (a store may come between); two local arrays are two arrays.
// CHECK-LABEL: func.func @reads_and_allocations
// CHECK-COUNT-2: "warp.load"
// CHECK-COUNT-2: "warp.local_array"
func.func @reads_and_allocations(%a: !warp.array<f32, 1>, %i: i32) -> (f32, f32, !warp.array<f32, 1>, !warp.array<f32, 1>) {
  %0 = "warp.load"(%a, %i) : (!warp.array<f32, 1>, i32) -> f32
  %1 = "warp.load"(%a, %i) : (!warp.array<f32, 1>, i32) -> f32
  %2 = "warp.local_array"() {shape = array<i64: 4>} : () -> !warp.array<f32, 1>
  %3 = "warp.local_array"() {shape = array<i64: 4>} : () -> !warp.array<f32, 1>
  return %0, %1, %2, %3 : f32, f32, !warp.array<f32, 1>, !warp.array<f32, 1>
}

// -----
// An op inside a loop reuses the one before it; different attributes or result types are different ops.
// CHECK-LABEL: func.func @nested
// CHECK: %[[D:.+]] = "warp.array_dim"(%arg0) {dim = 0 : i64}
// CHECK: "warp.array_dim"(%arg0) {dim = 1 : i64}
// CHECK: scf.for
// CHECK-NOT: "warp.array_dim"
// CHECK: "warp.store"(%arg0, %{{.+}}, %[[D]]
// CHECK: "warp.cast"(%arg1) : (f32) -> f64
// CHECK: "warp.cast"(%arg1) : (f32) -> f16
func.func @nested(%a: !warp.array<f32, 2>, %x: f32) -> (i32, f64, f16) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %0 = "warp.array_dim"(%a) {dim = 0} : (!warp.array<f32, 2>) -> i32
  %1 = "warp.array_dim"(%a) {dim = 1} : (!warp.array<f32, 2>) -> i32
  scf.for %k = %c0 to %c4 step %c1 {
    %2 = "warp.array_dim"(%a) {dim = 0} : (!warp.array<f32, 2>) -> i32
    "warp.store"(%a, %x, %2, %1) : (!warp.array<f32, 2>, f32, i32, i32) -> ()
  }
  %3 = "warp.cast"(%x) : (f32) -> f64
  %4 = "warp.cast"(%x) : (f32) -> f16
  return %1, %3, %4 : i32, f64, f16
}
