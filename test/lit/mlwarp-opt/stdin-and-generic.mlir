// RUN: mlwarp-opt < %s | FileCheck %s
// RUN: mlwarp-opt - < %s | FileCheck %s
// RUN: mlwarp-opt --mlir-print-op-generic %s | FileCheck %s --check-prefix=GENERIC

// With no pass the IR is parsed, verified and printed back.
// CHECK-LABEL: func.func @f(%arg0: !warp.array<f32, 2 : i64>, %arg1: i32) -> f32
// CHECK: "warp.load"(%arg0, %arg1, %arg1) : (!warp.array<f32, 2 : i64>, i32, i32) -> f32

// GENERIC: "builtin.module"() ({
// GENERIC: "func.func"() <{function_type = (!warp.array<f32, 2 : i64>, i32) -> f32, sym_name = "f"}>
// GENERIC: "func.return"
func.func @f(%a: !warp.array<f32, 2>, %i: i32) -> f32 {
  %0 = "warp.load"(%a, %i, %i) : (!warp.array<f32, 2>, i32, i32) -> f32
  return %0 : f32
}
