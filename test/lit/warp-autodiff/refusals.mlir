// RUN: not mlwarp-opt %s --split-input-file --warp-autodiff="strict=true" 2>&1 | FileCheck %s
// RUN: mlwarp-opt %s --split-input-file --warp-autodiff | FileCheck %s --check-prefix=LENIENT
// By default the kernel keeps running forward, without k_adj, with the reason attached:
// LENIENT: warp.adjoint_error = "{{.*}}cannot differentiate a call of @helper
// LENIENT-NOT: func.func @k_adj
// LENIENT: warp.adjoint_error = "{{.*}}uses the value returned by an atomic operation
// LENIENT-NOT: func.func @k_adj
// What the pass cannot differentiate fails with a message, never a wrong gradient.

// A call that was not inlined (even one without results: it may write arrays).
// CHECK: cannot differentiate a call of @helper; inline wp.func calls before warp-autodiff
module {
  func.func private @helper(!warp.array<f32, 1 : i64>, i32)
  func.func @k(%x: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    func.call @helper(%x, %i) : (!warp.array<f32, 1 : i64>, i32) -> ()
    return
  }
}

// -----

// The value an atomic returns, where a derivative needs it (y = old * x: adj_x = old * adj_y): the adjoint
// does not replay atomics. (Stored as it is, it is not needed: ops.mlir @stores_atomic_result.)
// CHECK: cannot differentiate a kernel that uses the value returned by an atomic operation in a derivative
module {
  func.func @k(%x: !warp.array<f32, 1 : i64>, %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %one = arith.constant 1.0 : f32
    %old = "warp.atomic"(%x, %one, %i) {kind = "add"} : (!warp.array<f32, 1 : i64>, f32, i32) -> f32
    %xi = "warp.load"(%x, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %p = "warp.mul"(%old, %xi) : (f32, f32) -> f32
    "warp.store"(%y, %p, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
