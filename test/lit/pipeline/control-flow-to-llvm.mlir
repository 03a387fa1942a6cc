// RUN: mlwarp-opt %s --mlwarp-pipeline=cpu | FileCheck %s --check-prefix=ONLY-LLVM
// RUN: mlwarp-opt %s --mlwarp-pipeline=cpu | FileCheck %s

// Branches, loops with carried values, 2-D arrays, atomics, casts and unsigned
// integers all reach the LLVM dialect.

// CHECK-LABEL: llvm.func @branchy_cpu
// CHECK: llvm.sitofp
// CHECK: llvm.atomicrmw fadd
// CHECK: llvm.udiv
// CHECK: llvm.return

// ONLY-LLVM-NOT: {{(arith|scf|math|cf|func|warp|vector|memref)\.[a-z_]+}}
// ONLY-LLVM-NOT: unrealized_conversion_cast
// ONLY-LLVM-NOT: ui32
func.func @branchy(%a: !warp.array<f32, 2>, %n: i32, %u: !warp.array<ui32, 1>) attributes {warp.kernel} {
  %t:2 = "warp.tid"() : () -> (i32, i32)
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %fzero = arith.constant 0.0 : f32
  %sum = scf.for %k = %zero to %n step %one iter_args(%acc = %fzero) -> (f32) : i32 {
    %kf = "warp.cast"(%k) : (i32) -> f32
    %c = "warp.gt"(%kf, %acc) : (f32, f32) -> i1
    %next = scf.if %c -> (f32) {
      %v = "warp.load"(%a, %t#0, %t#1) : (!warp.array<f32, 2>, i32, i32) -> f32
      %w = "warp.add"(%acc, %v) : (f32, f32) -> f32
      scf.yield %w : f32
    } else {
      scf.yield %acc : f32
    }
    scf.yield %next : f32
  }
  %old = "warp.atomic"(%a, %sum, %t#0, %t#1) {kind = "add"} : (!warp.array<f32, 2>, f32, i32, i32) -> f32
  %x = "warp.load"(%u, %t#1) : (!warp.array<ui32, 1>, i32) -> ui32
  %q = "warp.div"(%x, %x) : (ui32, ui32) -> ui32
  "warp.store"(%u, %q, %t#1) : (!warp.array<ui32, 1>, ui32, i32) -> ()
  return
}
