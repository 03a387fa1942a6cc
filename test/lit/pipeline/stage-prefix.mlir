// RUN: mlwarp-opt %s --mlwarp-pipeline=cpu:lowered | FileCheck %s

// Stopping after the "lowered" stage: no warp op is left, but scf, arith and
// math are still there for the "llvm" stage.

// CHECK-LABEL: func.func @k_cpu
// CHECK: scf.for
// CHECK: math.sqrt
// CHECK: llvm.store
// CHECK-NOT: "warp.
func.func @k(%x: !warp.array<f32, 1>) attributes {warp.kernel} {
  %i = "warp.tid"() : () -> i32
  %v = "warp.load"(%x, %i) : (!warp.array<f32, 1>, i32) -> f32
  %s = "warp.sqrt"(%v) : (f32) -> f32
  "warp.store"(%x, %s, %i) : (!warp.array<f32, 1>, f32, i32) -> ()
  return
}
