// RUN: mlwarp-opt %s --mlwarp-pipeline=cpu | FileCheck %s

// bfloat16 math (here sin and sqrt) runs in f32 and rounds once to bfloat16, as Warp's sinf(float(x)):
// LLVM has no bf16 math intrinsics or libm calls (an intrinsic on the i16 that bfloat16 becomes failed
// to verify). float16 math is left to LLVM (its f16 intrinsics promote the same way).
// CHECK-LABEL: llvm.func @bf16_math
// CHECK-NOT: llvm.intr.sin{{.*}}i16
// CHECK: llvm.call @sinf(%{{.+}}) : (f32) -> f32
// CHECK: llvm.intr.sqrt(%{{.+}}) : (f32) -> f32
// CHECK-NOT: bf16
// CHECK: llvm.return
func.func @bf16_math(%x: bf16) -> bf16 {
  %0 = "warp.sin"(%x) : (bf16) -> bf16
  %1 = "warp.sqrt"(%0) : (bf16) -> bf16
  return %1 : bf16
}
