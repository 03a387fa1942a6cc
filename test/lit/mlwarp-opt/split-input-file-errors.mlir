// RUN: not mlwarp-opt %s --split-input-file 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t.err

// A chunk that does not parse is reported (with its line in the whole file)
// and the others are still processed; the exit status says something failed.

// CHECK: func.func @first
// CHECK-NEXT: return
// CHECK: // -----
// CHECK: func.func @third

// ERR: mlwarp-opt: error: {{.*}}split-input-file-errors.mlir:21:10: use of undeclared SSA value name
// ERR-NOT: error
func.func @first() {
  return
}

// -----

func.func @second() -> i32 {
  return %nothing : i32
}

// -----

func.func @third() {
  return
}
