// RUN: mlwarp-opt %s --convert-warp-builtins-to-arith --canonicalize --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s

// After each pass, mlwarp's and upstream ones alike, the IR goes to stderr in
// MLIR's own format.

// CHECK: // -----// IR Dump After ConvertBuiltinsToArith (convert-warp-builtins-to-arith) //----- //
// CHECK-NEXT: module {
// CHECK: %[[Z:.+]] = arith.constant 0 : i32
// CHECK: arith.addi %arg0, %[[Z]] : i32
// CHECK: // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// CHECK-NOT: arith.addi
// CHECK: return %arg0 : i32
func.func @f(%x: i32) -> i32 {
  %z = arith.constant 0 : i32
  %0 = "warp.add"(%x, %z) : (i32, i32) -> i32
  return %0 : i32
}
