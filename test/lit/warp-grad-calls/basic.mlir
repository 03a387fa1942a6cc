// RUN: mlwarp-opt %s --warp-grad-calls | FileCheck %s
// wp.grad(f): the declaration marked warp.grad_of = @f gets f's forward replay, then its reverse sweep with the
// result's adjoint seeded to one; it returns each argument's adjoint (zero for an int argument).

// CHECK-LABEL: func.func private @square_grad(
// CHECK-SAME: %[[X:[^:]+]]: f32) -> f32 attributes {warp.grad_of = @square}
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: "warp.mul"(%[[X]], %[[X]])
// CHECK: %[[A:.+]] = "warp.mul"(%[[X]], %[[ONE]])
// CHECK: %[[B:.+]] = "warp.mul"(%[[X]], %[[ONE]])
// CHECK: %[[SUM:.+]] = "warp.add"(%[[A]], %[[B]])
// CHECK: return %[[SUM]] : f32

// The builtin's rule comes from the builtin table: d atan2(y, x) = (x, -y) / (x^2 + y^2).
// CHECK-LABEL: func.func private @atan2_grad(
// CHECK-SAME: %[[Y:[^:]+]]: f32, %[[X2:[^:]+]]: f32) -> (f32, f32)
// CHECK: "warp.atan2"(%[[Y]], %[[X2]])
// CHECK: %[[DY:.+]] = "warp.div"(%[[X2]], %{{.+}})
// CHECK: %[[NEGY:.+]] = "warp.neg"(%[[Y]])
// CHECK: %[[DX:.+]] = "warp.div"(%[[NEGY]], %{{.+}})
// CHECK: %[[GY:.+]] = "warp.mul"(%[[DY]], %{{.+}})
// CHECK: %[[GX:.+]] = "warp.mul"(%[[DX]], %{{.+}})
// CHECK: return %[[GY]], %[[GX]] : f32, f32

// A vector result: its adjoint seeded to ones in every component (adj_s = 1 + 1 + 1); the int argument's adjoint
// is zero.
// CHECK-LABEL: func.func private @scaled_grad(
// CHECK-SAME: %{{[^:]+}}: f32, %{{[^:]+}}: i32) -> (f32, i32)
// CHECK: %[[C1:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[ONES:.+]] = "warp.construct"(%[[C1]], %[[C1]], %[[C1]]) : (f32, f32, f32) -> !warp.vec<3 : i64, f32>
// CHECK: "warp.extract"(%[[ONES]]
// CHECK: "warp.extract"(%[[ONES]]
// CHECK: %[[S:.+]] = "warp.add"
// CHECK: "warp.extract"(%[[ONES]]
// CHECK: %[[S2:.+]] = "warp.add"(%[[S]]
// CHECK: %[[ZI:.+]] = arith.constant 0 : i32
// CHECK: return %[[S2]], %[[ZI]] : f32, i32

// Calls in f are inlined into the replay (the callee's own definition is left alone).
// CHECK-LABEL: func.func private @outer_grad(
// CHECK-SAME: %[[U:[^:]+]]: f32) -> f32
// CHECK-NOT: call
// CHECK: "warp.sin"(%[[U]])
// CHECK: "warp.cos"(%[[U]])
// CHECK: return

// f with a @wp.func_grad adjoint (warp.custom_grad): the adjoint is called with one as the result's adjoint.
// CHECK-LABEL: func.func private @safe_grad(
// CHECK-SAME: %[[S0:[^:]+]]: f32) -> f32
// CHECK: %[[ONE1:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[G:.+]] = call @safe_adj(%[[S0]], %[[ONE1]]) : (f32, f32) -> f32
// CHECK: return %[[G]] : f32

// A wp.grad call inside f is a constant of f's reverse sweep (Warp's grad() is forward-only): only the other
// factor's adjoint reaches x.
// CHECK-LABEL: func.func private @uses_grad(
// CHECK-SAME: %[[W:[^:]+]]: f32) -> f32
// CHECK: %[[D:.+]] = call @square_grad(%[[W]])
// CHECK: "warp.mul"(%[[D]], %[[W]])
// CHECK: %[[ONE2:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[R:.+]] = "warp.mul"(%[[D]], %[[ONE2]])
// CHECK-NEXT: return %[[R]] : f32

module {
  func.func private @square(%x: f32) -> f32 {
    %0 = "warp.mul"(%x, %x) : (f32, f32) -> f32
    return %0 : f32
  }
  func.func private @square_grad(f32) -> f32 attributes {warp.grad_of = @square}

  func.func private @atan2(%y: f32, %x: f32) -> f32 {
    %0 = "warp.atan2"(%y, %x) : (f32, f32) -> f32
    return %0 : f32
  }
  func.func private @atan2_grad(f32, f32) -> (f32, f32) attributes {warp.grad_of = @atan2}

  func.func private @scaled(%s: f32, %n: i32) -> !warp.vec<3 : i64, f32> {
    %v = "warp.construct"(%s, %s, %s) : (f32, f32, f32) -> !warp.vec<3 : i64, f32>
    return %v : !warp.vec<3 : i64, f32>
  }
  func.func private @scaled_grad(f32, i32) -> (f32, i32) attributes {warp.grad_of = @scaled}

  func.func private @inner(%x: f32) -> f32 {
    %0 = "warp.sin"(%x) : (f32) -> f32
    return %0 : f32
  }
  func.func private @outer(%x: f32) -> f32 {
    %0 = call @inner(%x) : (f32) -> f32
    return %0 : f32
  }
  func.func private @outer_grad(f32) -> f32 attributes {warp.grad_of = @outer}

  func.func private @safe(%x: f32) -> f32 attributes {warp.custom_grad = @safe_adj} {
    %0 = "warp.sqrt"(%x) : (f32) -> f32
    return %0 : f32
  }
  func.func private @safe_adj(%x: f32, %adj: f32) -> f32 attributes {warp.custom_grad_of = @safe} {
    return %adj : f32
  }
  func.func private @safe_grad(f32) -> f32 attributes {warp.grad_of = @safe}

  func.func private @uses(%x: f32) -> f32 {
    %d = call @square_grad(%x) : (f32) -> f32
    %0 = "warp.mul"(%d, %x) : (f32, f32) -> f32
    return %0 : f32
  }
  func.func private @uses_grad(f32) -> f32 attributes {warp.grad_of = @uses}
}
