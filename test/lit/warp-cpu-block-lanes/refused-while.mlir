// RUN: not mlwarp-opt %s --warp-cpu-block-lanes 2>&1 | FileCheck %s

// A while loop around a tile operation that carries a lane value (here each lane's count) is refused, naming the
// kernel and its line: the lanes' loops could differ.

// CHECK: kernel 'counted' at {{.+}}refused-while.mlir:{{[0-9]+}}: a tile operation inside a while loop whose condition or carried values differ between lanes is not supported with Warp's CPU lanes (wp.config.enable_cpu_blocks, block_dim=4)
module attributes {warp.cpu_lanes = 4 : i64, warp.tiles} {
  func.func @counted(%arg0: !warp.array<i32, 1 : i64>) attributes {warp.kernel} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c3_i32 = arith.constant 3 : i32
    %r = scf.while (%n = %c0_i32) : (i32) -> i32 {
      %more = arith.cmpi slt, %n, %c3_i32 : i32
      scf.condition(%more) %n : i32
    } do {
    ^bb0(%n: i32):
      %t = "warp.tile_full"(%c1_i32) : (i32) -> !warp.tile<i32, array<i64: 4>>
      "warp.tile_store"(%arg0, %t, %c0_i32) : (!warp.array<i32, 1 : i64>, !warp.tile<i32, array<i64: 4>>, i32) -> ()
      %lane = "warp.lane_index"() : () -> i32
      %next = arith.addi %n, %lane : i32
      scf.yield %next : i32
    }
    return
  }
}
