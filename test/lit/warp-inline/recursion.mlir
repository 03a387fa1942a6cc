// RUN: not mlwarp-opt %s --warp-inline 2>&1 | FileCheck %s

// The frontend refuses recursive @wp.funcs; a module that has them anyway (written by hand) makes warp-inline
// fail with one line, not inline forever: each inlined body's calls are inlined in turn, and a copy nested
// deeper than there are private functions can only come from a cycle (here @even -> @odd -> @even).
// CHECK: mlwarp-opt: error: {{.*}}recursion.mlir: pass 'warp-inline' failed: warp-inline: calls remain after inlining every private function (recursion?)
// CHECK-NOT: Traceback
func.func private @even(%x: f32) -> f32 {
  %0 = func.call @odd(%x) : (f32) -> f32
  return %0 : f32
}
func.func private @odd(%x: f32) -> f32 {
  %0 = func.call @even(%x) : (f32) -> f32
  return %0 : f32
}
func.func @k(%a: !warp.array<f32, 1>, %x: f32) {
  %0 = func.call @even(%x) : (f32) -> f32
  return
}
