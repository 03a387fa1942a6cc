// RUN: mlwarp-opt %s --arith-emulate-unsupported-floats="source-types=bf16 target-type=f32" --warp-bf16-round-each-op --canonicalize | FileCheck %s --check-prefix=ROUND
// RUN: mlwarp-opt %s --arith-emulate-unsupported-floats="source-types=bf16 target-type=f32" --warp-bf16-round-each-op --arith-expand="include-bf16=true" --convert-arith-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts --warp-bf16-as-i16 | FileCheck %s --check-prefix=BITS

// bfloat16 arithmetic runs in f32 and rounds back after every operation, as
// Warp's (a * s + a rounds the product first): folding must keep the
// truncf/extf pair between the two operations.
// ROUND-LABEL: func.func @fma_like
// ROUND: %[[P:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// ROUND: %[[PB:.+]] = arith.truncf %[[P]] : f32 to bf16
// ROUND: %[[PF:.+]] = arith.extf %[[PB]] : bf16 to f32
// ROUND: arith.addf %[[PF]], %{{.+}} : f32

// In the LLVM dialect no bf16 value is left (they are i16 bit patterns).
// BITS-LABEL: llvm.func @fma_like
// BITS-SAME: (%{{.+}}: i16, %{{.+}}: i16) -> i16
// BITS-NOT: : bf16
// BITS: llvm.return %{{.+}} : i16
func.func @fma_like(%a: bf16, %s: bf16) -> bf16 {
  %0 = arith.mulf %a, %s : bf16
  %1 = arith.addf %0, %a : bf16
  return %1 : bf16
}
