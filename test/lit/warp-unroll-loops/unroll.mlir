// RUN: mlwarp-opt %s --warp-unroll-loops | FileCheck %s
// RUN: mlwarp-opt %s --pass-pipeline='builtin.module(warp-unroll-loops{max-unroll=2})' | FileCheck %s --check-prefix=LIMIT2

// A constant loop of 4 iterations carrying a sum: unrolled (default limit 16)
// into 4 adds, the induction variable becoming the constants 1, 3, 5, 7.
// CHECK-LABEL: func.func @sum_odd
// CHECK-NOT: scf.for
// CHECK: arith.constant 2 : i32
// CHECK: %[[C1:[^ ]+]] = arith.constant 1 : i32
// CHECK: %[[S1:[^ ]+]] = "warp.add"(%{{.+}}, %[[C1]])
// CHECK: %[[C3:[^ ]+]] = arith.constant 3 : i32
// CHECK: %[[S2:[^ ]+]] = "warp.add"(%[[S1]], %[[C3]])
// CHECK: %[[C5:[^ ]+]] = arith.constant 5 : i32
// CHECK: %[[S3:[^ ]+]] = "warp.add"(%[[S2]], %[[C5]])
// CHECK: %[[C7:[^ ]+]] = arith.constant 7 : i32
// CHECK: %[[S4:[^ ]+]] = "warp.add"(%[[S3]], %[[C7]])
// CHECK: return %[[S4]]
// With max-unroll=2 the same loop stays a loop.
// LIMIT2-LABEL: func.func @sum_odd
// LIMIT2: scf.for
func.func @sum_odd(%init: i32) -> i32 {
  %lb = arith.constant 1 : i32
  %ub = arith.constant 9 : i32
  %st = arith.constant 2 : i32
  %r = scf.for %i = %lb to %ub step %st iter_args(%acc = %init) -> (i32) : i32 {
    %n = "warp.add"(%acc, %i) : (i32, i32) -> i32
    scf.yield %n : i32
  }
  return %r : i32
}

// 20 iterations is more than 16: the loop stays.
// CHECK-LABEL: func.func @too_long
// CHECK: scf.for
func.func @too_long(%a: !warp.array<f32, 1 : i64>) {
  %lb = arith.constant 0 : i32
  %ub = arith.constant 20 : i32
  %st = arith.constant 1 : i32
  %v = arith.constant 1.0 : f32
  scf.for %i = %lb to %ub step %st : i32 {
    "warp.store"(%a, %v, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
  }
  return
}

// A runtime bound: the loop stays.
// CHECK-LABEL: func.func @runtime_bound
// CHECK: scf.for
func.func @runtime_bound(%a: !warp.array<f32, 1 : i64>, %n: i32) {
  %lb = arith.constant 0 : i32
  %st = arith.constant 1 : i32
  %v = arith.constant 1.0 : f32
  scf.for %i = %lb to %n step %st : i32 {
    "warp.store"(%a, %v, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
  }
  return
}

// Nested constant loops (2 x 3): the inner loop is unrolled first, then the
// outer one copies the unrolled body: 6 stores, no loop left.
// CHECK-LABEL: func.func @nested
// CHECK-NOT: scf.for
// CHECK-COUNT-6: "warp.store"
// CHECK-NOT: "warp.store"
// CHECK: return
func.func @nested(%a: !warp.array<f32, 2 : i64>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %v = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c2 step %c1 : i32 {
    scf.for %j = %c0 to %c3 step %c1 : i32 {
      "warp.store"(%a, %v, %i, %j) : (!warp.array<f32, 2 : i64>, f32, i32, i32) -> ()
    }
  }
  return
}

// Zero iterations: the loop disappears and its results are the initial values.
// CHECK-LABEL: func.func @empty
// CHECK-NOT: scf.for
// CHECK: return %arg0
func.func @empty(%init: f32) -> f32 {
  %c0 = arith.constant 5 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %c0 step %c1 iter_args(%acc = %init) -> (f32) : i32 {
    %n = "warp.add"(%acc, %acc) : (f32, f32) -> f32
    scf.yield %n : f32
  }
  return %r : f32
}
