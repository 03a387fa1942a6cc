// RUN: mlwarp-opt %s --split-input-file --warp-cpu-entry --warp-cpu-keep-vectors | FileCheck %s

// A module with tiles keeps its vectors (a tile matmul's register blocks are vector.fma on vector<16xf32>)...
// CHECK: module attributes {warp.cpu_keep_vectors, warp.tiles}
// CHECK-LABEL: func.func @blocks_cpu(
// CHECK: vector.fma
module attributes {warp.tiles} {
  func.func @blocks(%a: vector<16xf32>, %b: vector<16xf32>) attributes {warp.kernel} {
    %t = "warp.tid"() : () -> i32
    %c = vector.fma %a, %b, %a : vector<16xf32>
    return
  }
}

// -----

// ... unless its lanes run while loops on vec3s with no SIMD-shaped vector about (a mesh query in a tile_map).
// CHECK: module attributes {warp.tiles}
// CHECK-LABEL: func.func @walk_cpu(
// CHECK: scf.while
module attributes {warp.tiles} {
  func.func @walk(%x: vector<3xf32>, %n: i32) attributes {warp.kernel} {
    %t = "warp.tid"() : () -> i32
    %zero = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %r:2 = scf.while (%depth = %n, %acc = %x) : (i32, vector<3xf32>) -> (i32, vector<3xf32>) {
      %more = arith.cmpi sgt, %depth, %zero : i32
      scf.condition(%more) %depth, %acc : i32, vector<3xf32>
    } do {
    ^bb0(%d: i32, %a: vector<3xf32>):
      %next = arith.subi %d, %one : i32
      %sq = arith.mulf %a, %a : vector<3xf32>
      scf.yield %next, %sq : i32, vector<3xf32>
    }
    return
  }
}

// -----

// A while loop beside a matmul: the register blocks decide, the module keeps its vectors.
// CHECK: module attributes {warp.cpu_keep_vectors, warp.tiles}
// CHECK-LABEL: func.func @walk_and_blocks_cpu(
module attributes {warp.tiles} {
  func.func @walk_and_blocks(%x: vector<3xf32>, %n: i32, %a: vector<16xf32>) attributes {warp.kernel} {
    %t = "warp.tid"() : () -> i32
    %zero = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %r:2 = scf.while (%depth = %n, %acc = %x) : (i32, vector<3xf32>) -> (i32, vector<3xf32>) {
      %more = arith.cmpi sgt, %depth, %zero : i32
      scf.condition(%more) %depth, %acc : i32, vector<3xf32>
    } do {
    ^bb0(%d: i32, %v: vector<3xf32>):
      %next = arith.subi %d, %one : i32
      %sq = arith.mulf %v, %v : vector<3xf32>
      scf.yield %next, %sq : i32, vector<3xf32>
    }
    %c = vector.fma %a, %a, %a : vector<16xf32>
    return
  }
}
