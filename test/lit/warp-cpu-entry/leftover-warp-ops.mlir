// RUN: not mlwarp-opt %s --warp-cpu-entry 2>&1 | FileCheck %s

// The entry is the last warp step: array and builtin ops must be lowered first.
// CHECK: mlwarp-opt: error: {{.*}}leftover-warp-ops.mlir: pass 'warp-cpu-entry' failed: kernel 'k' still has warp ops; lower builtins and arrays first
func.func @k(%a: f32) attributes {warp.kernel} {
  %0 = "warp.sin"(%a) : (f32) -> f32
  return
}
