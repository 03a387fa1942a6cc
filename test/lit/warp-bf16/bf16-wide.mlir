// RUN: mlwarp-opt %s --arith-emulate-unsupported-floats="source-types=bf16 target-type=f32" --warp-bf16-round-each-op | FileCheck %s
// RUN: mlwarp-opt %s --arith-emulate-unsupported-floats="source-types=bf16 target-type=f32" --warp-bf16-round-each-op --arith-expand="include-bf16=true" --convert-arith-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts --warp-bf16-as-i16 | FileCheck %s --check-prefix=BITS

// bfloat16 <-> f64 (wp.degrees on a bfloat16 computes in double) goes through
// f32, as Warp's bfloat16 converts only from and to float: arith-expand
// expands only the f32 conversions, and a bf16 -> f64 extf reached the LLVM
// dialect on i16 ('llvm.fpext' op operand #0 must be floating point).
// CHECK-LABEL: func.func @wide
// CHECK: %[[A:.+]] = arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[B:.+]] = arith.extf %[[A]] : f32 to f64
// CHECK: %[[M:.+]] = arith.mulf %[[B]], %{{.+}} : f64
// CHECK: %[[C:.+]] = arith.truncf %[[M]] : f64 to f32
// CHECK: arith.truncf %[[C]] : f32 to bf16
// CHECK-LABEL: func.func @wide_vector
// CHECK: arith.extf %{{.+}} : vector<3xbf16> to vector<3xf32>
// CHECK: arith.extf %{{.+}} : vector<3xf32> to vector<3xf64>

// BITS-LABEL: llvm.func @wide
// BITS: llvm.fpext %{{.+}} : f32 to f64
// BITS: llvm.fptrunc %{{.+}} : f64 to f32
// BITS: llvm.return %{{.+}} : i16
func.func @wide(%a: bf16, %s: f64) -> bf16 {
  %0 = arith.extf %a : bf16 to f64
  %1 = arith.mulf %0, %s : f64
  %2 = arith.truncf %1 : f64 to bf16
  return %2 : bf16
}

func.func @wide_vector(%a: vector<3xbf16>) -> vector<3xf64> {
  %0 = arith.extf %a : vector<3xbf16> to vector<3xf64>
  return %0 : vector<3xf64>
}
