// RUN: not mlwarp-opt %s --warp-cpu-block-lanes 2>&1 | FileCheck %s

// A loop around a tile operation that carries a lane value (a scalar per lane) is refused (not yet built), naming
// the kernel and its line.

// CHECK: kernel 'looped' at {{.+}}refused.mlir:{{[0-9]+}}: a tile operation inside a loop that carries a lane value is not supported with Warp's CPU lanes (wp.config.enable_cpu_blocks, block_dim=4)
module attributes {warp.cpu_lanes = 4 : i64, warp.tiles} {
  func.func @looped(%arg0: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %c1 = arith.constant 1 : index
    %one = arith.constant 1.0 : f32
    %i = arith.constant 0 : i32
    %s = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %one) -> (f32) {
      %t = "warp.tile_full"(%acc) : (f32) -> !warp.tile<f32, array<i64: 4>>
      "warp.tile_store"(%arg0, %t, %i) : (!warp.array<f32, 1 : i64>, !warp.tile<f32, array<i64: 4>>, i32) -> ()
      %next = arith.addf %acc, %one : f32
      scf.yield %next : f32
    }
    return
  }
}
