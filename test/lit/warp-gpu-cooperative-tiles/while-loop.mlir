// RUN: mlwarp-opt %s --warp-gpu-cooperative-tiles | FileCheck %s

// A tile op inside an scf.while: the pass does not prove that every lane runs the loop's iterations together (the
// barriers), so the module keeps one thread per block, untouched.

// CHECK: warp.tiled_launch = "{\22cooperative\22: false, \22reason\22: \22kernel 'looped': a tile operation inside scf.while\22}"
// CHECK-LABEL: func.func @looped
// CHECK-NOT: gpu.barrier
// CHECK: scf.while
// CHECK: linalg.generic
module attributes {warp.tiles} {
  func.func @looped(%arg0: !warp.array<f32, 1 : i64>, %n: i32) attributes {warp.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %cst = arith.constant 2.0 : f32
    %a = memref.alloca() : memref<4xf32>
    %r = scf.while (%k = %c0) : (i32) -> i32 {
      %go = arith.cmpi slt, %k, %n : i32
      scf.condition(%go) %k : i32
    } do {
    ^bb0(%k: i32):
      linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
          outs(%a : memref<4xf32>) {
      ^bb0(%out: f32):
        linalg.yield %cst : f32
      }
      %next = arith.addi %k, %c1 : i32
      scf.yield %next : i32
    }
    return
  }
}
