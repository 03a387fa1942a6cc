// RUN: not mlwarp-opt %s --warp-gpu-kernel 2>&1 | FileCheck %s

// The pass runs after builtins and arrays are lowered; a warp op left over is refused by name.
// CHECK: pass 'warp-gpu-kernel' failed: kernel 'k' still has warp ops; lower builtins and arrays first
// CHECK-NOT: Traceback
func.func @k(%a: !warp.array<f32, 1>) attributes {warp.kernel} {
  %i = "warp.tid"() : () -> i32
  %v = "warp.load"(%a, %i) : (!warp.array<f32, 1>, i32) -> f32
  return
}
