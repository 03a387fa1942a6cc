// RUN: mlwarp-opt %s --mlwarp-pipeline=cuda | FileCheck %s
// RUN: mlwarp-opt %s --mlwarp-pipeline=cuda | FileCheck %s --check-prefix=ONLY-LLVM

// The CUDA stage table (compiler/targets/cuda.py stages()) takes a kernel from the
// warp dialect to an NVVM-targeted gpu.module of LLVM-dialect code: the thread
// index from the PTX special registers, math as libdevice calls (linked when
// gpu-module-to-binary emits PTX), atomics on global pointers.

// CHECK: gpu.module @kernels [#nvvm.target<O = 3, chip = "sm_90">]
// CHECK-LABEL: llvm.func @saxpy_cuda
// CHECK-SAME: kernel
// CHECK-DAG: nvvm.read.ptx.sreg.ctaid.x
// CHECK-DAG: nvvm.read.ptx.sreg.ntid.x
// CHECK-DAG: nvvm.read.ptx.sreg.tid.x
// CHECK-DAG: nvvm.read.ptx.sreg.nctaid.x
// CHECK: llvm.load %{{.+}} : !llvm.ptr<1> -> f32
// CHECK: llvm.call @__nv_sinf
// CHECK: llvm.store %{{.+}}, %{{.+}} : f32, !llvm.ptr<1>
// CHECK: llvm.atomicrmw fadd %{{.+}}, %{{.+}} monotonic : !llvm.ptr<1>, f32

// ONLY-LLVM-NOT: {{(arith|scf|math|cf|func|warp|vector|memref)\.[a-z_]+}}
// ONLY-LLVM-NOT: unrealized_conversion_cast
func.func @saxpy(%x: !warp.array<f32, 1>, %y: !warp.array<f32, 1>, %a: f32) attributes {warp.kernel} {
  %i = "warp.tid"() : () -> i32
  %xi = "warp.load"(%x, %i) : (!warp.array<f32, 1>, i32) -> f32
  %s = "warp.sin"(%xi) : (f32) -> f32
  %r = "warp.mul"(%a, %s) : (f32, f32) -> f32
  "warp.store"(%y, %r, %i) : (!warp.array<f32, 1>, f32, i32) -> ()
  %old = "warp.atomic"(%y, %a, %i) {kind = "add"} : (!warp.array<f32, 1>, f32, i32) -> f32
  return
}
