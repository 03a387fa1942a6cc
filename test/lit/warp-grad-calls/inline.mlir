// RUN: mlwarp-opt %s --warp-grad-calls --warp-inline | FileCheck %s
// warp-inline leaves a wp.grad function (warp.grad_of) and its call until warp-autodiff has seen them; the
// function's primal, used by nothing once the gradient has its body, goes.

// CHECK-NOT: func.func private @square(
// CHECK-LABEL: func.func private @square_grad(
// CHECK-SAME: attributes {warp.grad_of = @square}
// CHECK-LABEL: func.func @k(
// CHECK: call @square_grad(
module {
  func.func private @square(%x: f32) -> f32 {
    %0 = "warp.mul"(%x, %x) : (f32, f32) -> f32
    return %0 : f32
  }
  func.func private @square_grad(f32) -> f32 attributes {warp.grad_of = @square}
  func.func @k(%y: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %v = "warp.load"(%y, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %d = call @square_grad(%v) : (f32) -> f32
    "warp.store"(%y, %d, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
