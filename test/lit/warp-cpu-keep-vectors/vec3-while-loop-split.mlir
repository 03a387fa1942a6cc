// RUN: mlwarp-opt %s --warp-cpu-entry --warp-cpu-keep-vectors | FileCheck %s

// A while loop whose arithmetic is on 3-lane vectors (a closest-point traversal's vec3 math) leaves the module
// unmarked: LLVM's form of a vec3 is a 4-lane register with a dead lane and horizontal adds, split scalars
// are faster; a vector<4xf32> only loaded and taken apart is no SIMD code either.
// CHECK-NOT: warp.cpu_keep_vectors
// CHECK-LABEL: func.func @closest_cpu(
// CHECK: scf.while
// CHECK: arith.mulf %{{.+}}, %{{.+}} : vector<3xf32>
func.func @closest(%x: vector<3xf32>, %box: vector<4xf32>, %n: i32) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %r:2 = scf.while (%depth = %n, %acc = %x) : (i32, vector<3xf32>) -> (i32, vector<3xf32>) {
    %more = arith.cmpi sgt, %depth, %zero : i32
    scf.condition(%more) %depth, %acc : i32, vector<3xf32>
  } do {
  ^bb0(%d: i32, %a: vector<3xf32>):
    %next = arith.subi %d, %one : i32
    %lo = vector.extract %box[0] : f32 from vector<4xf32>
    %s = vector.broadcast %lo : f32 to vector<3xf32>
    %sq = arith.mulf %a, %s : vector<3xf32>
    scf.yield %next, %sq : i32, vector<3xf32>
  }
  return
}
