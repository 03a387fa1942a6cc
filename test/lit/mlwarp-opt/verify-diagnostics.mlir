// -verify-diagnostics checks the errors against the input's expected-error comments: exit status 0 when they
// agree, else one line per expectation not met and per error not expected.

// RUN: mlwarp-opt %s --split-input-file -verify-diagnostics
// RUN: not mlwarp-opt %S/Inputs/verify-diagnostics-mismatch.mlir --split-input-file -verify-diagnostics 2>&1 | FileCheck %s --check-prefix=MISMATCH
// MISMATCH: mlwarp-opt: error: {{.*}}verify-diagnostics-mismatch.mlir:5: expected error "rank 3" on line 6 was not produced
// MISMATCH-NEXT: mlwarp-opt: error: {{.*}}verify-diagnostics-mismatch.mlir:6:8: unexpected error: 'warp.load' op index count: 'indices' has 1 value, operand 'array' has rank 2 (one per dimension)
// MISMATCH-NEXT: mlwarp-opt: error: {{.*}}verify-diagnostics-mismatch.mlir:12: expected error "never" on line 13 was not produced
// MISMATCH-NOT: error:

// Without the flag, the first error of each chunk is the one line it always was.
// RUN: not mlwarp-opt %s --split-input-file 2>&1 | FileCheck %s --check-prefix=PLAIN
// PLAIN: mlwarp-opt: error: {{.*}}verify-diagnostics.mlir:[[# @LINE + 5]]:8: 'warp.load' op index count
// PLAIN-NEXT: mlwarp-opt: error: {{.*}}verify-diagnostics.mlir:[[# @LINE + 11]]:8: 'warp.load' op operand 'indices' #1 must be i32, got f64

func.func @rank(%a: !warp.array<f32, 2>, %i: i32) -> f32 {
  // expected-error@below {{index count}}
  %0 = "warp.load"(%a, %i) : (!warp.array<f32, 2>, i32) -> f32
  return %0 : f32
}

// -----
// IRDL's errors (from the parser) are checked as well.
func.func @irdl(%a: !warp.array<f32, 1>, %x: f64) -> f32 {
  %0 = "warp.load"(%a, %x) : (!warp.array<f32, 1>, f64) -> f32 // expected-error {{must be i32, got f64}}
  return %0 : f32
}

// -----
// A chunk without errors and without expectations passes.
func.func @fine(%a: !warp.array<f32, 1>, %i: i32) -> f32 {
  %0 = "warp.load"(%a, %i) : (!warp.array<f32, 1>, i32) -> f32
  return %0 : f32
}
