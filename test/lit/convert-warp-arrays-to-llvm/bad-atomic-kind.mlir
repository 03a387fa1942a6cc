// RUN: not mlwarp-opt %s --convert-warp-arrays-to-llvm 2>&1 | FileCheck %s

// A pass that refuses its input fails with one line naming the pass and the reason.
// CHECK: mlwarp-opt: error: {{.*}}bad-atomic-kind.mlir: pass 'convert-warp-arrays-to-llvm' failed: warp.atomic kind 'bogus' is not supported on f32
// CHECK-NOT: Traceback
func.func @k(%a: !warp.array<f32, 1>, %i: i32, %v: f32) {
  %0 = "warp.atomic"(%a, %v, %i) {kind = "bogus"} : (!warp.array<f32, 1>, f32, i32) -> f32
  return
}
