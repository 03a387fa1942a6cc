// RUN: mlwarp-opt %s --mlwarp-pipeline=cpu | FileCheck %s
// RUN: mlwarp-opt %s --mlwarp-pipeline=cpu | FileCheck %s --check-prefix=ONLY-LLVM

// The compiler's whole CPU stage table (compiler/targets/cpu.py stages()) takes
// a kernel from the warp dialect to the LLVM dialect: nothing else is left.

// CHECK-LABEL: llvm.func @saxpy_cpu
// CHECK-SAME: (%{{.+}}: !llvm.ptr, %[[BEGIN:.+]]: i64, %[[END:.+]]: i64)
// CHECK: llvm.load
// CHECK: llvm.cond_br
// (sin: a call of sinf where warp-cpu-vector-math gives it libmvec variants, an intrinsic elsewhere)
// CHECK: {{llvm.call @sinf|llvm.intr.sin}}
// CHECK: llvm.fmul
// CHECK: llvm.fadd
// CHECK: llvm.store
// CHECK: llvm.return

// ONLY-LLVM-NOT: {{(arith|scf|math|cf|func|warp|vector|memref)\.[a-z_]+}}
// ONLY-LLVM-NOT: unrealized_conversion_cast
func.func @saxpy(%x: !warp.array<f32, 1>, %y: !warp.array<f32, 1>, %a: f32) attributes {warp.kernel} {
  %i = "warp.tid"() : () -> i32
  %xi = "warp.load"(%x, %i) : (!warp.array<f32, 1>, i32) -> f32
  %ax = "warp.mul"(%a, %xi) : (f32, f32) -> f32
  %yi = "warp.load"(%y, %i) : (!warp.array<f32, 1>, i32) -> f32
  %s = "warp.sin"(%yi) : (f32) -> f32
  %r = "warp.add"(%ax, %s) : (f32, f32) -> f32
  "warp.store"(%y, %r, %i) : (!warp.array<f32, 1>, f32, i32) -> ()
  return
}
