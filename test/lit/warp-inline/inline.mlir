// RUN: mlwarp-opt %s --warp-inline | FileCheck %s

// A kernel calling a @wp.func that calls another: both calls are replaced by
// the callees' bodies (arguments wired to the call's operands, results to the
// returned values) and the private functions are erased.

// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @k(
// CHECK-SAME: %[[A:.+]]: !warp.array<f32, 1 : i64>
// CHECK: %[[I:.+]] = "warp.tid"
// CHECK: %[[X:.+]] = "warp.cast"(%[[I]])
// CHECK: %[[S1:.+]] = "warp.mul"(%[[X]], %[[X]])
// CHECK: %[[S2:.+]] = "warp.mul"(%[[X]], %[[X]])
// CHECK: %[[T:.+]] = "warp.add"(%[[S1]], %[[S2]])
// CHECK: "warp.store"(%[[A]], %[[T]], %[[I]])
// CHECK-NOT: call
// CHECK: return
func.func private @sq_0(%x: f32) -> f32 {
  %0 = "warp.mul"(%x, %x) : (f32, f32) -> f32
  return %0 : f32
}
func.func private @twice_0(%x: f32) -> f32 {
  %0 = call @sq_0(%x) : (f32) -> f32
  %1 = call @sq_0(%x) : (f32) -> f32
  %2 = "warp.add"(%0, %1) : (f32, f32) -> f32
  return %2 : f32
}
func.func @k(%a: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
  %i = "warp.tid"() : () -> i32
  %x = "warp.cast"(%i) : (i32) -> f32
  %y = call @twice_0(%x) : (f32) -> f32
  "warp.store"(%a, %y, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
  return
}
