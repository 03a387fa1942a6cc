// RUN: mlwarp-opt %s --warp-autodiff | FileCheck %s
// The replay computes the forward values; those no adjoint reads (they fed only the stores the replay skips) are
// erased with the branches and loops that computed only them, by the op table's effects. The lowering would not:
// warp ops declare no effects to MLIR, and a tile op is loops over buffers by then (a dead FFT stayed in the
// adjoint's library). A loop that writes the thread's own array is kept.

// y = fft(x): the adjoint is x's adjoint += ifft(y's adjoint); the replay's forward FFT is gone.
// CHECK-LABEL: func.func @fft_adj(
// CHECK-NOT: "warp.tile_dft"(%{{.+}}) {inverse = 0
// CHECK: "warp.tile_dft"(%{{.+}}) {inverse = 1
// CHECK-NOT: "warp.tile_dft"
// CHECK: "warp.tile_atomic_add"
// CHECK: return
module attributes {warp.tiles} {
  func.func @fft(%x: !warp.array<!warp.vec<2 : i64, f32>, 2 : i64>, %y: !warp.array<!warp.vec<2 : i64, f32>, 2 : i64>)
      attributes {warp.kernel} {
    %i:3 = "warp.tid"() : () -> (i32, i32, i32)
    %c0 = arith.constant 0 : i32
    %t = "warp.tile_load"(%x, %i#0, %c0) : (!warp.array<!warp.vec<2 : i64, f32>, 2 : i64>, i32, i32)
        -> !warp.tile<!warp.vec<2 : i64, f32>, array<i64: 1, 8>>
    %f = "warp.tile_dft"(%t) {inverse = 0 : i64} : (!warp.tile<!warp.vec<2 : i64, f32>, array<i64: 1, 8>>)
        -> !warp.tile<!warp.vec<2 : i64, f32>, array<i64: 1, 8>>
    "warp.tile_store"(%y, %f, %i#0, %c0) : (!warp.array<!warp.vec<2 : i64, f32>, 2 : i64>,
        !warp.tile<!warp.vec<2 : i64, f32>, array<i64: 1, 8>>, i32, i32) -> ()
    return
  }

  // y[i] = x[buf[0]] + (x[i] > 0 ? exp(x[i]) : x[i]), buf a wp.zeros array a loop fills, beside a loop whose sum
  // goes nowhere: the branch's replay stays (its reverse reads the exp it yields), the unused loop goes (sin
  // appears neither in the replay nor in the reverse), the loop that writes the thread's array stays.
  // CHECK-LABEL: func.func @branch_and_loops_adj(
  // CHECK: %[[C:.+]] = "warp.gt"
  // CHECK: scf.if %[[C]] -> (f32) {
  // CHECK: "warp.exp"
  // CHECK: %[[BUF:.+]] = "warp.stack_array"
  // CHECK: scf.for
  // CHECK: "warp.store"(%[[BUF]]
  // CHECK-NOT: "warp.sin"
  // CHECK: return
  func.func @branch_and_loops(%x: !warp.array<f32, 1 : i64>, %y: !warp.array<f32, 1 : i64>, %n: i32)
      attributes {warp.kernel} {
    %i = "warp.tid"() : () -> i32
    %xi = "warp.load"(%x, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c = "warp.gt"(%xi, %zero) : (f32, f32) -> i1
    %v = scf.if %c -> (f32) {
      %e = "warp.exp"(%xi) : (f32) -> f32
      scf.yield %e : f32
    } else {
      scf.yield %xi : f32
    }
    %s = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) : i32 {
      %sk = "warp.sin"(%acc) : (f32) -> f32
      %nx = "warp.add"(%sk, %v) : (f32, f32) -> f32
      scf.yield %nx : f32
    }
    %buf = "warp.stack_array"(%n) : (i32) -> !warp.array<i32, 1 : i64>
    scf.for %k = %c0 to %n step %c1 : i32 {
      "warp.store"(%buf, %k, %k) : (!warp.array<i32, 1 : i64>, i32, i32) -> ()
    }
    %j = "warp.load"(%buf, %c0) : (!warp.array<i32, 1 : i64>, i32) -> i32
    %xj = "warp.load"(%x, %j) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %w = "warp.add"(%xj, %v) : (f32, f32) -> f32
    "warp.store"(%y, %w, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
