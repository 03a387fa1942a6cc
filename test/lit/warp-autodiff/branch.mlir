// RUN: mlwarp-opt %s --warp-autodiff --canonicalize | FileCheck %s
// The reverse of an scf.if is an scf.if on the same (replayed) condition; each branch reverses its forward
// branch, reading the forward replay's values (branch-yields.mlir: the replay yields those it needs), and
// yields the adjoints of the values it reads from outside.

// CHECK-LABEL: func.func @k_adj(
// CHECK: %[[XI:.+]] = "warp.load"(%arg0
// CHECK: %[[C:.+]] = "warp.gt"(%[[XI]]
// the forward replay of the branch is gone: its result fed only the store, which the replay skips
// CHECK-NOT: scf.if %[[C]] {
// CHECK: %[[AV:.+]] = "warp.load"(%arg3
// reverse: then: v = x * x  ->  adj_x = x * adj_v + x * adj_v (x * x is not computed again); else: v = x
// -> adj_x = adj_v
// CHECK: %[[AX:.+]] = scf.if %[[C]] -> (f32) {
// CHECK-NEXT: %[[A1:.+]] = "warp.mul"(%[[XI]], %[[AV]])
// CHECK-NEXT: %[[A2:.+]] = "warp.mul"(%[[XI]], %[[AV]])
// CHECK-NEXT: %[[S:.+]] = "warp.add"(%[[A1]], %[[A2]])
// CHECK-NEXT: scf.yield %[[S]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[AV]] : f32
// adj_x[i] += adj_x (x is read at the thread's index only: no atomic needed)
// CHECK: %[[OLD:.+]] = "warp.load"(%arg2,
// CHECK: %[[NEW:.+]] = "warp.add"(%[[OLD]], %[[AX]])
// CHECK: "warp.store"(%arg2, %[[NEW]],
module {
  func.func @k(%x: !warp.array<f32, 1 : i64>, %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %xi = "warp.load"(%x, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %zero = arith.constant 0.0 : f32
    %c = "warp.gt"(%xi, %zero) : (f32, f32) -> i1
    %v = scf.if %c -> (f32) {
      %m = "warp.mul"(%xi, %xi) : (f32, f32) -> f32
      scf.yield %m : f32
    } else {
      scf.yield %xi : f32
    }
    "warp.store"(%y, %v, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
