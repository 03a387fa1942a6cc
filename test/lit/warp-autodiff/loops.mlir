// RUN: mlwarp-opt %s --warp-autodiff --canonicalize --cse | FileCheck %s
// Loops run backwards over their iterations. Iteration j needs its carried state s_j: the pass
// recomputes it by re-running the forward body j times (O(n^2), exact, no memory), unless the
// reverse body does not read the state (then O(n)).

// A static loop (constant bounds, before any unrolling): the same reverse loop, trip count folded to 4.
// CHECK-LABEL: func.func @static_adj(
// CHECK: %[[FWD:.+]] = scf.for
// CHECK: scf.for %[[JJ:.+]] = %{{.+}} to %c4_i32 step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f32)
// CHECK: arith.subi %c3_i32, %[[JJ]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f32)
// CHECK: "warp.exp"

// A dynamic loop (runtime n) whose state enters a nonlinear op: v = v * a + sin(v).
// CHECK-LABEL: func.func @carried_adj(
// CHECK-SAME: %[[X:[^:]+]]: !warp.array<f32, 1 : i64>, %[[Y:[^:]+]]: !warp.array<f32, 1 : i64>, %[[N:[^:]+]]: i32, %[[A:[^:]+]]: f32,
// trip count, then the reverse loop over jj = 0 .. n-1 carrying adj_v and adj_a
// CHECK: %[[T:.+]] = arith.maxsi %[[N]], %{{.+}} : i32
// CHECK: scf.for %[[JJ:.+]] = %{{.+}} to %[[T]] step %{{.+}} iter_args(%[[AV:.+]] = %{{.+}}, %[[AA:.+]] = %{{.+}}) -> (f32, f32)
// j = n - 1 - jj
// CHECK: %[[J:.+]] = arith.subi %{{.+}}, %[[JJ]] : i32
// s_j: the forward loop re-run j times from the initial state
// CHECK: %[[SJ:.+]] = scf.for %{{.+}} = %{{.+}} to %[[J]] step %{{.+}} iter_args(%[[S:.+]] = %{{.+}}) -> (f32)
// CHECK: "warp.mul"(%[[S]], %[[A]])
// CHECK: "warp.sin"(%[[S]])
// the reverse of iteration j at s_j
// CHECK: "warp.cos"(%[[SJ]])
// CHECK: "warp.mul"(%[[A]], %[[AV]])
// CHECK: "warp.mul"(%[[SJ]], %[[AV]])
// CHECK: scf.yield
// CHECK: "warp.store"(%arg4,

// A reduction loop: s += w[k] * x[k]. The reverse body never reads s: no recomputation (and
// adj_s, unchanged by the body, folds out of the loop).
// CHECK-LABEL: func.func @reduction_adj(
// CHECK-SAME: %[[AX:[^:]+]]: !warp.array<f32, 1 : i64>, %[[AW:[^:]+]]: !warp.array<f32, 1 : i64>, %[[AY:[^:]+]]: !warp.array<f32, 1 : i64>, %{{[^:]+}}: i32, %{{[^:]+}}: i64)
// CHECK: %[[G:.+]] = "warp.load"(%[[AY]]
// CHECK: scf.for %[[JJ:.+]] = %{{.+}} to %{{.+}} step %{{.+}} : i32 {
// CHECK-NOT: scf.for
// CHECK: %[[K:.+]] = arith.subi %{{.+}}, %[[JJ]] : i32
// CHECK: %[[XK:.+]] = "warp.load"(%arg0, %[[K]])
// CHECK: %[[WK:.+]] = "warp.load"(%arg1, %[[K]])
// CHECK: %[[GW:.+]] = "warp.mul"(%[[XK]], %[[G]])
// CHECK: %[[GX:.+]] = "warp.mul"(%[[WK]], %[[G]])
// CHECK: "warp.atomic"(%[[AW]], %[[GW]], %[[K]]) {kind = "add"}
// CHECK: "warp.atomic"(%[[AX]], %[[GX]], %[[K]]) {kind = "add"}

// A while loop: first one more forward run counts its iterations.
// CHECK-LABEL: func.func @halving_adj(
// CHECK: %[[COUNT:.+]]:2 = scf.while
// CHECK: arith.addi
// then the reverse loop over the counted iterations, recomputing each iteration's state (sin is
// nonlinear); the constant 0.5 carries no adjoint
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[COUNT]]#1 step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f32)
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f32)
// CHECK: "warp.cos"

module {
  func.func @static(%x: !warp.array<f32, 1 : i64>, %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %x0 = "warp.load"(%x, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %v = scf.for %k = %c0 to %c4 step %c1 iter_args(%s = %x0) -> (f32) : i32 {
      %t = "warp.exp"(%s) : (f32) -> f32
      %u = "warp.mul"(%t, %s) : (f32, f32) -> f32
      scf.yield %u : f32
    }
    "warp.store"(%y, %v, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
  func.func @carried(%x: !warp.array<f32, 1 : i64>, %y: !warp.array<f32, 1 : i64>, %n: i32, %a: f32) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %x0 = "warp.load"(%x, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %v = scf.for %k = %c0 to %n step %c1 iter_args(%s = %x0) -> (f32) : i32 {
      %m = "warp.mul"(%s, %a) : (f32, f32) -> f32
      %t = "warp.sin"(%s) : (f32) -> f32
      %u = "warp.add"(%m, %t) : (f32, f32) -> f32
      scf.yield %u : f32
    }
    "warp.store"(%y, %v, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
  func.func @reduction(%x: !warp.array<f32, 1 : i64>, %w: !warp.array<f32, 1 : i64>, %y: !warp.array<f32, 1 : i64>, %n: i32) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %z = arith.constant 0.0 : f32
    %v = scf.for %k = %c0 to %n step %c1 iter_args(%s = %z) -> (f32) : i32 {
      %xk = "warp.load"(%x, %k) : (!warp.array<f32, 1 : i64>, i32) -> f32
      %wk = "warp.load"(%w, %k) : (!warp.array<f32, 1 : i64>, i32) -> f32
      %p = "warp.mul"(%wk, %xk) : (f32, f32) -> f32
      %u = "warp.add"(%s, %p) : (f32, f32) -> f32
      scf.yield %u : f32
    }
    "warp.store"(%y, %v, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
  func.func @halving(%x: !warp.array<f32, 1 : i64>, %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %x0 = "warp.load"(%x, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %one = arith.constant 1.0 : f32
    %half = arith.constant 0.5 : f32
    %v = scf.while (%s = %x0) : (f32) -> f32 {
      %c = "warp.gt"(%s, %one) : (f32, f32) -> i1
      scf.condition(%c) %s : f32
    } do {
    ^bb0(%s: f32):
      %t = "warp.sin"(%s) : (f32) -> f32
      %u = "warp.mul"(%t, %half) : (f32, f32) -> f32
      scf.yield %u : f32
    }
    "warp.store"(%y, %v, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
