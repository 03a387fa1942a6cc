// RUN: mlwarp-opt %s --warp-autodiff | FileCheck %s
// `enable_backward=False` marks the kernel warp.no_backward: no adjoint, and no refusal either.

// CHECK-LABEL: func.func @k(
// CHECK-NOT: func.func @k_adj
module {
  func.func @k(%x: !warp.array<f32, 1 : i64>, %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %i = "warp.tid"() : () -> i32
    %one = arith.constant 1.0 : f32
    %old = "warp.atomic"(%x, %one, %i) {kind = "add"} : (!warp.array<f32, 1 : i64>, f32, i32) -> f32
    "warp.store"(%y, %old, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
