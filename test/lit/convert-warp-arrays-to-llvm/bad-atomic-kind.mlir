// RUN: not mlwarp-opt %s --convert-warp-arrays-to-llvm 2>&1 | FileCheck %s

// A pass that refuses its input fails with one line naming the pass and the reason: a bitwise atomic of a float
// (the verifier accepts the kind, one of Warp's; the lowering has no float `and`). A kind that is none of them
// the verifier refuses before any pass runs (warp-dialect/verify-rules.mlir).
// CHECK: mlwarp-opt: error: {{.*}}bad-atomic-kind.mlir: pass 'convert-warp-arrays-to-llvm' failed: warp.atomic kind 'and' is not supported on f32
// CHECK-NOT: Traceback
func.func @k(%a: !warp.array<f32, 1>, %i: i32, %v: f32) {
  %0 = "warp.atomic"(%a, %v, %i) {kind = "and"} : (!warp.array<f32, 1>, f32, i32) -> f32
  return
}
