// RUN: mlwarp-opt %s --warp-cpu-entry --warp-cpu-keep-vectors | FileCheck %s

// A kernel whose thread runs a while loop (a traversal: pop until the stack is empty): its thread loop is
// never vectorised, so the module is marked and object_code.py compiles it without LLVM's scalarizer; the
// vec4 arithmetic stays one vector operation.
// CHECK: module attributes {warp.cpu_keep_vectors}
// CHECK-LABEL: func.func @traverse_cpu(
// CHECK: scf.while
// CHECK: arith.mulf %{{.+}}, %{{.+}} : vector<4xf32>
func.func @traverse(%x: vector<4xf32>, %n: i32) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %r:2 = scf.while (%depth = %n, %acc = %x) : (i32, vector<4xf32>) -> (i32, vector<4xf32>) {
    %more = arith.cmpi sgt, %depth, %zero : i32
    scf.condition(%more) %depth, %acc : i32, vector<4xf32>
  } do {
  ^bb0(%d: i32, %a: vector<4xf32>):
    %next = arith.subi %d, %one : i32
    %sq = arith.mulf %a, %a : vector<4xf32>
    scf.yield %next, %sq : i32, vector<4xf32>
  }
  return
}
