// RUN: mlwarp-opt %s --pass-pipeline='builtin.module(convert-warp-builtins-to-arith, convert-warp-arrays-to-llvm, warp-cpu-entry, canonicalize, convert-scf-to-cf, convert-math-to-llvm, convert-arith-to-llvm, convert-cf-to-llvm, convert-func-to-llvm, reconcile-unrealized-casts)' | FileCheck %s
// RUN: mlwarp-opt %s --convert-warp-builtins-to-arith --convert-warp-arrays-to-llvm --warp-cpu-entry --canonicalize --convert-scf-to-cf --convert-math-to-llvm --convert-arith-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts | FileCheck %s

// The same lowering spelled pass by pass, mlwarp's passes mixed with upstream
// ones in one pipeline, as a --pass-pipeline or as flags.

// CHECK-LABEL: llvm.func @scale_cpu
// CHECK: llvm.fmul
// CHECK: llvm.store
// CHECK-NOT: "warp.
// CHECK-NOT: scf.
func.func @scale(%x: !warp.array<f32, 1>, %a: f32) attributes {warp.kernel} {
  %i = "warp.tid"() : () -> i32
  %v = "warp.load"(%x, %i) : (!warp.array<f32, 1>, i32) -> f32
  %s = "warp.mul"(%v, %a) : (f32, f32) -> f32
  "warp.store"(%x, %s, %i) : (!warp.array<f32, 1>, f32, i32) -> ()
  return
}
