// RUN: mlwarp-opt %s --warp-autodiff | FileCheck %s
// The adjoint of each op class: builtins (rules from the table), array reads (atomic add into the
// adjoint array), writes (read the output's adjoint), atomics, casts. The replay skips effects.

// CHECK-LABEL: func.func @k(
// CHECK-LABEL: func.func @k_adj(
// CHECK-SAME: %[[X:[^:]+]]: !warp.array<f32, 1 : i64>, %[[Y:[^:]+]]: !warp.array<f32, 1 : i64>, %[[L:[^:]+]]: !warp.array<f32, 1 : i64>,
// CHECK-SAME: %[[AX:[^:]+]]: !warp.array<f32, 1 : i64>, %[[AY:[^:]+]]: !warp.array<f32, 1 : i64>, %[[AL:[^:]+]]: !warp.array<f32, 1 : i64>, %{{[^:]+}}: i64, %{{[^:]+}}: i64)
// CHECK-SAME: warp.adjoint_of = "k"
// forward replay: loads and the builtins, no store, no atomic (and not p = s * x, which fed only those: the
// replay's values that no adjoint reads are erased)
// CHECK: %[[I:.+]] = "warp.tid"()
// CHECK: %[[XI:.+]] = "warp.load"(%[[X]], %[[I]])
// CHECK: %[[S:.+]] = "warp.sin"(%[[XI]])
// CHECK-NOT: "warp.mul"(%[[S]], %[[XI]])
// CHECK-NOT: "warp.store"
// CHECK-NOT: "warp.atomic"
// reverse: l[0] += p  ->  adj_p = adj_l[0]
// CHECK: %[[AP1:.+]] = "warp.load"(%[[AL]], %{{.+}})
// y[i] = p  ->  adj_p += adj_y[i]
// CHECK: %[[AP2:.+]] = "warp.load"(%[[AY]], %[[I]])
// CHECK: %[[AP:.+]] = "warp.add"(%[[AP1]], %[[AP2]])
// mul: adj_s = x * adj_p, adj_x = s * adj_p
// CHECK: %[[AS:.+]] = "warp.mul"(%[[XI]], %[[AP]])
// CHECK: %[[AX1:.+]] = "warp.mul"(%[[S]], %[[AP]])
// sin: adj_x += cos(x) * adj_s
// CHECK: %[[C:.+]] = "warp.cos"(%[[XI]])
// CHECK: %[[AX2:.+]] = "warp.mul"(%[[C]], %[[AS]])
// CHECK: %[[AXT:.+]] = "warp.add"(%[[AX1]], %[[AX2]])
// the two reads of x[i] (one SSA value) go into adj_x[i]; x is only ever read at the thread's own index,
// so no other thread writes adj_x[i]: a plain read-add-write, no atomic
// CHECK: %[[OLD:.+]] = "warp.load"(%[[AX]], %[[I]])
// CHECK: %[[NEW:.+]] = "warp.add"(%[[OLD]], %[[AXT]])
// CHECK: "warp.store"(%[[AX]], %[[NEW]], %[[I]])
// CHECK: return

// x read at another index too: threads share adjoint elements, so the accumulation is atomic
// CHECK-LABEL: func.func @shared_adj(
// CHECK-SAME: %[[AX:[^:]+]]: !warp.array<f32, 1 : i64>, %{{[^:]+}}: !warp.array<f32, 1 : i64>, %{{[^:]+}}: i64, %{{[^:]+}}: i64)
// CHECK: "warp.atomic"(%[[AX]], %{{.+}}, %{{.+}}) {kind = "add"}
// CHECK: "warp.atomic"(%[[AX]], %{{.+}}, %{{.+}}) {kind = "add"}
// out[i] = wp.atomic_min(slot, i, v[i]): the replay skips the atomic (a zero stands in for the returned value; the
// store that reads it is skipped too), the returned value's adjoint is dropped, and v[i] gets slot's adjoint where
// the element holds v[i] after the forward launch, or both are NaN (Warp's adj_atomic_minmax)
// CHECK-LABEL: func.func @stores_atomic_result_adj(
// CHECK-SAME: %[[SLOT:[^:]+]]: !warp.array<f32, 1 : i64>, %[[V:[^:]+]]: !warp.array<f32, 1 : i64>, %{{[^:]+}}: !warp.array<f32, 1 : i64>,
// CHECK-SAME: %[[ASLOT:[^:]+]]: !warp.array<f32, 1 : i64>, %[[AV:[^:]+]]: !warp.array<f32, 1 : i64>,
// CHECK: %[[VI:.+]] = "warp.load"(%[[V]], %[[I:.+]])
// CHECK-NOT: "warp.atomic"
// CHECK: %[[G:.+]] = "warp.load"(%[[ASLOT]], %[[I]])
// CHECK: %[[FINAL:.+]] = "warp.load"(%[[SLOT]], %[[I]])
// CHECK: %[[SAME:.+]] = arith.cmpf oeq, %[[VI]], %[[FINAL]]
// CHECK: %[[WON:.+]] = arith.ori %[[SAME]], %{{.+}}
// CHECK: %[[ADJ:.+]] = arith.select %[[WON]], %[[G]], %{{.+}}
// CHECK: "warp.add"(%{{.+}}, %[[ADJ]])
// CHECK: return
module {
  func.func @k(%x: !warp.array<f32, 1 : i64>, %y: !warp.array<f32, 1 : i64>, %l: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %xi = "warp.load"(%x, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %s = "warp.sin"(%xi) : (f32) -> f32
    %p = "warp.mul"(%s, %xi) : (f32, f32) -> f32
    "warp.store"(%y, %p, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    %c0 = arith.constant 0 : i32
    %old = "warp.atomic"(%l, %p, %c0) {kind = "add"} : (!warp.array<f32, 1 : i64>, f32, i32) -> f32
    return
  }
  func.func @shared(%x: !warp.array<f32, 1 : i64>, %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %c0 = arith.constant 0 : i32
    %xi = "warp.load"(%x, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %x0 = "warp.load"(%x, %c0) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %p = "warp.mul"(%xi, %x0) : (f32, f32) -> f32
    "warp.store"(%y, %p, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
  func.func @stores_atomic_result(%slot: !warp.array<f32, 1 : i64>, %v: !warp.array<f32, 1 : i64>,
                                   %out: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %vi = "warp.load"(%v, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %old = "warp.atomic"(%slot, %vi, %i) {kind = "min"} : (!warp.array<f32, 1 : i64>, f32, i32) -> f32
    "warp.store"(%out, %old, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
