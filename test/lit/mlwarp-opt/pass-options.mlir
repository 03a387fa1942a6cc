// RUN: mlwarp-opt %s --canonicalize="max-iterations=1 top-down=false" | FileCheck %s
// RUN: mlwarp-opt %s --pass-pipeline='builtin.module(func.func(canonicalize{max-iterations=1 top-down=false}), cse)' | FileCheck %s
// RUN: mlwarp-opt %s --pass-pipeline='canonicalize,cse' | FileCheck %s

// Upstream pass options go through as MLIR spells them, as flags or in a
// pipeline, with op-anchored nested pipelines.
// CHECK-LABEL: func.func @f
// CHECK-NEXT: return %arg0 : i32
func.func @f(%a: i32) -> i32 {
  %0 = arith.constant 0 : i32
  %1 = arith.addi %a, %0 : i32
  return %1 : i32
}
