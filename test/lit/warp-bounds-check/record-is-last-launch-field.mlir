// RUN: mlwarp-opt %s --warp-bounds-check --convert-warp-builtins-to-arith --convert-warp-arrays-to-llvm --warp-cpu-entry | FileCheck %s

// After lowering, the error record is the last field of the launch struct (runtime/abi.py packs it after
// the user's parameters), and no warp op is left.

// CHECK-LABEL: func.func @k_cpu(
// CHECK: llvm.getelementptr %arg0[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<4 x i64>, struct<(ptr, array<1 x i64>, array<1 x i64>)>, struct<(ptr, array<1 x i64>, array<1 x i64>)>)>
// CHECK: llvm.atomicrmw add
// CHECK-NOT: "warp.

func.func @k(%a: !warp.array<f32, 1>) attributes {warp.kernel} {
  %t = "warp.tid"() : () -> i32 loc("user.py":3:9)
  %v = "warp.load"(%a, %t) : (!warp.array<f32, 1>, i32) -> f32 loc("user.py":4:13)
  return
}
