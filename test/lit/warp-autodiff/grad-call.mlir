// RUN: mlwarp-opt %s --warp-autodiff | FileCheck %s
// A call of a wp.grad(f) function (warp.grad_of, made by warp-grad-calls) is forward-only, as Warp's grad(): the
// adjoint kernel replays it and sends no adjoint through it (x's adjoint gets only the plain product's). The pass
// then drops the mark, so that the next warp-inline inlines the function.

// CHECK-LABEL: func.func private @square_grad(
// CHECK-NOT: warp.grad_of
// CHECK-LABEL: func.func @k_adj(
// CHECK-SAME: %[[X:[^:]+]]: !warp.array<f32, 1 : i64>, %{{[^:]+}}: !warp.array<f32, 1 : i64>, %[[ADJ_X:[^:]+]]: !warp.array<f32, 1 : i64>, %[[ADJ_Y:[^:]+]]: !warp.array<f32, 1 : i64>
// CHECK: %[[V:.+]] = "warp.load"(%[[X]]
// CHECK: %[[D:.+]] = call @square_grad(%[[V]])
// CHECK: %[[G:.+]] = "warp.load"(%[[ADJ_Y]]
// CHECK: %[[P:.+]] = "warp.mul"(%[[D]], %[[G]])
// CHECK-NEXT: "warp.atomic"(%[[ADJ_X]], %[[P]]
// CHECK-NOT: "warp.atomic"
// CHECK: return
module {
  func.func private @square_grad(%x: f32) -> f32 attributes {warp.grad_of = @square} {
    %c2 = arith.constant 2.0 : f32
    %0 = "warp.mul"(%x, %c2) : (f32, f32) -> f32
    return %0 : f32
  }
  func.func @k(%x: !warp.array<f32, 1 : i64>, %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %c0 = arith.constant 0 : i32
    %i = "warp.tid"() : () -> i32
    %v = "warp.load"(%x, %c0) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %d = call @square_grad(%v) : (f32) -> f32
    %r = "warp.mul"(%d, %v) : (f32, f32) -> f32
    "warp.store"(%y, %r, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
