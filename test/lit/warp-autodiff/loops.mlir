// RUN: mlwarp-opt %s --warp-autodiff --canonicalize --cse | FileCheck %s
// Loops run backwards over their iterations. Iteration j needs its carried state s_j: the pass keeps
// the states in a tape on the thread's stack (warp.stack_array), filled by one more forward run, and
// reads them back from last to first: O(n), exact; the results of the body's libm builtins (sin, exp, ...)
// go into the tape beside the states, so the reverse does not call them again. Past TAPE_BYTES the tape
// holds a segment of k iterations and a second array every k-th state (checkpoints); each segment is
// re-run from its checkpoint into the tape. A reverse body that does not read the state (s += x[k]) needs no tape.

// A static loop (constant bounds, before any unrolling): trip count 4 folds to one segment of 4.
// CHECK-LABEL: func.func @static_adj(
// the replay of the loop is erased: its result fed only the store, which the replay skips
// CHECK-NOT: scf.for
// CHECK: %[[CKPT:.+]] = "warp.stack_array"(%c1_i32)
// CHECK: %[[TAPE:.+]] = "warp.stack_array"(%c5_i32)
// CHECK: %[[VALS:.+]] = "warp.stack_array"(%c4_i32)
// CHECK: "warp.store"(%[[TAPE]], %{{.+}}, %c0_i32)
// the tape's fill: tape[t + 1] = s_{t+1}, and exp(s_t) (a libm builtin) in values[t], for t = 0 .. 3
// CHECK: scf.for %[[T:.+]] = %c0_i32 to %c4_i32
// CHECK: %[[E:.+]] = "warp.exp"
// CHECK: %[[T1:.+]] = arith.addi %[[T]], %c1_i32
// CHECK: "warp.store"(%[[TAPE]], %{{.+}}, %[[T1]])
// CHECK: "warp.store"(%[[VALS]], %[[E]], %[[T]])
// the reverse: j = 3 - jj, s_j and exp(s_j) read from the tape, exp not called again
// CHECK: scf.for %[[JJ:.+]] = %c0_i32 to %c4_i32 step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f32)
// CHECK: %[[J:.+]] = arith.subi %c3_i32, %[[JJ]]
// CHECK: "warp.load"(%[[TAPE]], %[[J]])
// CHECK: "warp.load"(%[[VALS]], %[[J]])
// CHECK-NOT: "warp.exp"
// CHECK: scf.yield

// A dynamic loop (runtime n) whose state enters a nonlinear op: v = v * a + sin(v).
// CHECK-LABEL: func.func @carried_adj(
// CHECK-SAME: %[[X:[^:]+]]: !warp.array<f32, 1 : i64>, %[[Y:[^:]+]]: !warp.array<f32, 1 : i64>, %[[N:[^:]+]]: i32, %[[A:[^:]+]]: f32,
// trip count; segment k = n when n iterations (an f32 state and sin's f32 result each) fit in the tape
// (8192), else max(8192, isqrt(n) + 1)
// CHECK: %[[T:.+]] = arith.maxsi %[[N]], %{{.+}} : i32
// CHECK: math.sqrt
// CHECK: %[[FITS:.+]] = arith.cmpi sle, %[[T]], %c8192_i32
// CHECK: arith.select %[[FITS]], %[[T]], %{{.+}}
// CHECK: %[[K:.+]] = arith.maxsi %{{.+}}, %c1_i32
// c = ceil(n / k) checkpoints, a tape of k + 1 states and k values of sin
// CHECK: %[[C:.+]] = arith.divsi %{{.+}}, %[[K]]
// CHECK: %[[CKPT:.+]] = "warp.stack_array"(%{{.+}})
// CHECK: %[[SLOTS:.+]] = arith.addi %[[K]], %c1_i32
// CHECK: %[[TAPE:.+]] = "warp.stack_array"(%[[SLOTS]])
// CHECK: %[[VALS:.+]] = "warp.stack_array"(%[[K]])
// the checkpoints: the forward loop in segments of k, s_{s k} kept in checkpoint s
// CHECK: "warp.store"(%[[CKPT]], %{{.+}}, %c0_i32)
// CHECK: scf.for %[[S:.+]] = %c1_i32 to %[[C]]
// CHECK: scf.for %{{.+}} = %c0_i32 to %[[K]]
// CHECK: "warp.sin"
// CHECK: "warp.store"(%[[CKPT]], %{{.+}}, %[[S]])
// the segments from last to first, carrying adj_v and adj_a
// CHECK: scf.for %{{.+}} = %c0_i32 to %[[C]] step %c1_i32 iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (f32, f32)
// CHECK: %[[START:.+]] = "warp.load"(%[[CKPT]]
// CHECK: "warp.store"(%[[TAPE]], %[[START]], %c0_i32)
// the segment re-run into the tape, sin(s_u) kept
// CHECK: scf.for %[[U:.+]] = %c0_i32 to %[[LEN:.+]] step
// CHECK: %[[SIN:.+]] = "warp.sin"
// CHECK: "warp.store"(%[[TAPE]], %{{.+}}, %{{.+}})
// CHECK: "warp.store"(%[[VALS]], %[[SIN]], %[[U]])
// its reverse at s_j from the tape: cos(s_j) computed, sin(s_j) not (nor read back: its derivative does not
// need it, so that load is erased)
// CHECK: scf.for %{{.+}} = %c0_i32 to %[[LEN]] step %{{.+}} iter_args(%[[AV:.+]] = %{{.+}}, %[[AA:.+]] = %{{.+}}) -> (f32, f32)
// CHECK: %[[SJ:.+]] = "warp.load"(%[[TAPE]]
// CHECK-NOT: "warp.sin"
// CHECK: "warp.cos"(%[[SJ]])
// CHECK: "warp.mul"(%[[A]], %[[AV]])
// CHECK: "warp.mul"(%[[SJ]], %[[AV]])
// CHECK: scf.yield
// CHECK: "warp.store"(%arg4,

// A reduction loop: s += w[k] * x[k]. The reverse body never reads s: no recomputation (and
// adj_s, unchanged by the body, folds out of the loop).
// CHECK-LABEL: func.func @reduction_adj(
// CHECK-SAME: %[[AX:[^:]+]]: !warp.array<f32, 1 : i64>, %[[AW:[^:]+]]: !warp.array<f32, 1 : i64>, %[[AY:[^:]+]]: !warp.array<f32, 1 : i64>, %{{[^:]+}}: i32, %{{[^:]+}}: i64, %{{[^:]+}}: i64)
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
// then the taped reverse over the counted iterations (sin is nonlinear); the constant 0.5 carries no
// adjoint
// CHECK: arith.cmpi sle, %[[COUNT]]#1, %c16384_i32
// CHECK: "warp.stack_array"
// CHECK: "warp.stack_array"
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f32)
// CHECK: "warp.load"
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
