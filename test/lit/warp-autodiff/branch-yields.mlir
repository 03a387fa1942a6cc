// RUN: mlwarp-opt %s --warp-autodiff --canonicalize | FileCheck %s
// The reverse of a branch reads the values it needs from the forward replay: each scf.if of the replay that
// holds one yields it (the other branch yields a zero), from the innermost if out, rather than the reverse
// replaying the branch again inside itself (a copy of the branch per level of nesting).
// Here sin(x * x) in an inner branch needs x * x for its derivative, and u * w[i][i] needs w[i][i].

// CHECK-LABEL: func.func @k_adj(
// CHECK: %[[XI:.+]] = "warp.load"(%arg0
// CHECK: %[[C:.+]] = "warp.gt"(%[[XI]], %[[ZERO:[^)]+]])
// CHECK: %[[D:.+]] = "warp.gt"(%[[XI]]
// the forward replay: the outer if yields w[i][i], u and (from the inner if) x * x besides
// CHECK: %[[F:.+]]:3 = scf.if %[[C]] -> (f32, f32, f32) {
// CHECK-NEXT: %[[G:.+]]:2 = scf.if %[[D]] -> (f32, f32) {
// CHECK-NEXT: %[[M:.+]] = "warp.mul"(%[[XI]], %[[XI]])
// CHECK-NEXT: %[[S:.+]] = "warp.sin"(%[[M]])
// CHECK-NEXT: scf.yield %[[S]], %[[M]] : f32, f32
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[XI]], %[[ZERO]] : f32, f32
// CHECK: %[[WI:.+]] = "warp.load"(
// CHECK: scf.yield %[[WI]], %[[G]]#0, %[[G]]#1 : f32, f32, f32
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[ZERO]], %[[ZERO]], %[[ZERO]] : f32, f32, f32
// CHECK: %[[AV:.+]] = "warp.load"(%arg4
// the reverse: no forward op of the branches again (no warp.sin, no x * x): it reads %F
// CHECK: scf.if %[[C]] -> (f32) {
// CHECK-NEXT: %[[AU:.+]] = "warp.mul"(%[[F]]#0, %[[AV]])
// CHECK-NEXT: %[[AW:.+]] = "warp.mul"(%[[F]]#1, %[[AV]])
// CHECK: "warp.atomic"({{.*}}%[[AW]]
// CHECK-NEXT: scf.if %[[D]] -> (f32) {
// CHECK-NEXT: %[[COS:.+]] = "warp.cos"(%[[F]]#2)
// CHECK-NEXT: %[[AM:.+]] = "warp.mul"(%[[COS]], %[[AU]])
// CHECK-NEXT: "warp.mul"(%[[XI]], %[[AM]])
// CHECK-NOT: warp.sin
// CHECK: return
module {
  func.func @k(%x: !warp.array<f32, 1 : i64>, %y: !warp.array<f32, 1 : i64>, %w: !warp.array<f32, 2 : i64>)
      attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %xi = "warp.load"(%x, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %c = "warp.gt"(%xi, %zero) : (f32, f32) -> i1
    %d = "warp.gt"(%xi, %one) : (f32, f32) -> i1
    %v = scf.if %c -> (f32) {
      %u = scf.if %d -> (f32) {
        %m = "warp.mul"(%xi, %xi) : (f32, f32) -> f32
        %s = "warp.sin"(%m) : (f32) -> f32
        scf.yield %s : f32
      } else {
        scf.yield %xi : f32
      }
      %row = "warp.view"(%w, %i) : (!warp.array<f32, 2 : i64>, i32) -> !warp.array<f32, 1 : i64>
      %wi = "warp.load"(%row, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
      %p = "warp.mul"(%u, %wi) : (f32, f32) -> f32
      scf.yield %p : f32
    } else {
      scf.yield %xi : f32
    }
    "warp.store"(%y, %v, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
