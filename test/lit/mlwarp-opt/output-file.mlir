// RUN: rm -f %t
// RUN: mlwarp-opt %s --canonicalize -o %t | count 0
// RUN: FileCheck %s < %t
// RUN: mlwarp-opt %s --canonicalize -o=%t.eq && FileCheck %s < %t.eq

// `-o FILE` writes the result there and nothing to stdout.
// CHECK-LABEL: func.func @f
// CHECK-NEXT: return %arg0 : i32
func.func @f(%a: i32) -> i32 {
  %0 = arith.constant 0 : i32
  %1 = arith.addi %a, %0 : i32
  return %1 : i32
}
