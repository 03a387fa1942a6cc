// RUN: mlwarp-opt %s --warp-cpu-entry --warp-cpu-keep-vectors | FileCheck %s

// Without a while loop the module is left unmarked: its thread loop may vectorise across threads once the
// scalarizer has split its vectors (a counted scf.for inside does not mark it either).
// CHECK-NOT: warp.cpu_keep_vectors
// CHECK-LABEL: func.func @scale_cpu(
// CHECK: arith.mulf %{{.+}}, %{{.+}} : vector<4xf32>
func.func @scale(%x: vector<4xf32>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %x) -> (vector<4xf32>) {
    %sq = arith.mulf %a, %a : vector<4xf32>
    scf.yield %sq : vector<4xf32>
  }
  return
}
