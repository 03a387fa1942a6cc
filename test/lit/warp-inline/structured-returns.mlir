// RUN: mlwarp-opt %s --warp-inline | FileCheck %s

// A function with an early return (the frontend's scf.if form), a tuple
// result and an array argument; a function without results called for its
// side effect. Nested regions of the callee are copied whole.

// CHECK-LABEL: func.func @k(
// CHECK-SAME: %[[A:[^:]+]]: !warp.array<f32, 1 : i64>
// CHECK: %[[X:.+]] = "warp.load"(%[[A]]
// CHECK: %[[IF:.+]]:2 = scf.if
// CHECK: "warp.neg"(%[[X]])
// CHECK: "warp.store"(%[[A]], %[[IF]]#0
// CHECK: "warp.store"(%[[A]], %[[IF]]#1
// CHECK-NOT: call
// CHECK-NOT: func.func private
func.func private @absdup_0(%x: f32) -> (f32, f32) {
  %zero = arith.constant 0.0 : f32
  %neg = "warp.lt"(%x, %zero) : (f32, f32) -> i1
  %r:2 = scf.if %neg -> (f32, f32) {
    %n = "warp.neg"(%x) : (f32) -> f32
    scf.yield %n, %n : f32, f32
  } else {
    scf.yield %x, %x : f32, f32
  }
  return %r#0, %r#1 : f32, f32
}
func.func private @put_0(%a: !warp.array<f32, 1 : i64>, %v: f32, %i: i32) {
  "warp.store"(%a, %v, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
  return
}
func.func @k(%a: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %x = "warp.load"(%a, %c0) : (!warp.array<f32, 1 : i64>, i32) -> f32
  %p:2 = call @absdup_0(%x) : (f32) -> (f32, f32)
  call @put_0(%a, %p#0, %c0) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
  call @put_0(%a, %p#1, %c1) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
  return
}
