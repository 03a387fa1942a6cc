// RUN: mlwarp-opt %s --warp-autodiff | FileCheck %s
// A read through a row (`r = a[i]; r[j]`, warp.view) accumulates into the same row of a's adjoint: the
// reverse sweep views the adjoint array at the replayed row index, then adds atomically at the column.
// A store through a row reads the adjoint from the same row of out's adjoint.

// CHECK-LABEL: func.func @k_adj(
// CHECK-SAME: %[[A:[^:]+]]: !warp.array<f32, 2 : i64>, %[[OUT:[^:]+]]: !warp.array<f32, 2 : i64>, %[[ADJ_A:[^:]+]]: !warp.array<f32, 2 : i64>, %[[ADJ_OUT:[^:]+]]: !warp.array<f32, 2 : i64>, %{{[^:]+}}: i64, %{{[^:]+}}: i64)
// CHECK: %[[I:.+]]:2 = "warp.tid"()
// CHECK: %[[ROW:.+]] = "warp.view"(%[[A]], %[[I]]#0)
// (out's row in the replay fed only the store, which the replay skips: erased)
// CHECK-NOT: "warp.view"(%[[OUT]]
// reverse of the store: adj_v = adj_out[i][j]
// CHECK: %[[ADJ_OUT_ROW:.+]] = "warp.view"(%[[ADJ_OUT]], %[[I]]#0)
// CHECK: %[[G:.+]] = "warp.load"(%[[ADJ_OUT_ROW]], %[[I]]#1)
// reverse of v = x * x, then of the read x = r[j]
// CHECK: "warp.mul"
// CHECK: %[[ADJ_ROW:.+]] = "warp.view"(%[[ADJ_A]], %[[I]]#0)
// CHECK: "warp.atomic"(%[[ADJ_ROW]], %{{.+}}, %[[I]]#1) {kind = "add"}
module {
  func.func @k(%a: !warp.array<f32, 2 : i64>, %out: !warp.array<f32, 2 : i64>) attributes {warp.kernel} {
    %i:2 = "warp.tid"() : () -> (i32, i32)
    %r = "warp.view"(%a, %i#0) : (!warp.array<f32, 2 : i64>, i32) -> !warp.array<f32, 1 : i64>
    %x = "warp.load"(%r, %i#1) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %v = "warp.mul"(%x, %x) : (f32, f32) -> f32
    %o = "warp.view"(%out, %i#0) : (!warp.array<f32, 2 : i64>, i32) -> !warp.array<f32, 1 : i64>
    "warp.store"(%o, %v, %i#1) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
