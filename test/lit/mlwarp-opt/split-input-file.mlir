// RUN: mlwarp-opt %s --split-input-file --canonicalize | FileCheck %s
// RUN: not mlwarp-opt %s --split-input-file --canonicalize --check-chunk-errors 2>&1 | FileCheck %s --check-prefix=NOPASS

// Each chunk is parsed and processed alone (the same symbol may appear in
// two chunks); the outputs are joined with the same marker.

// CHECK: module {
// CHECK: func.func @f() -> i32 {
// CHECK-NEXT: %[[C:.+]] = arith.constant 1 : i32
// CHECK-NEXT: return %[[C]] : i32
// CHECK: {{^}}}
// CHECK-NEXT: // -----
// CHECK-NEXT: module {
// CHECK: func.func @f() -> f32 {
// CHECK-NEXT: %[[F:.+]] = arith.constant 2.0{{.*}} : f32
// CHECK-NEXT: return %[[F]] : f32
// CHECK-NOT: // -----

// NOPASS: mlwarp-opt: error: unknown pass 'check-chunk-errors'
func.func @f() -> i32 {
  %0 = arith.constant 1 : i32
  return %0 : i32
}

// -----

func.func @f() -> f32 {
  %0 = arith.constant 2.0 : f32
  return %0 : f32
}
