// RUN: not mlwarp-opt %s 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: mlwarp-opt %s --allow-unregistered-dialect --canonicalize | FileCheck %s

// Ops of dialects that are not loaded are refused unless asked for, as in mlir-opt.
// REFUSED: mlwarp-opt: error: {{.*}}unregistered-dialect.mlir:[[@LINE+5]]:12: operation being parsed with an unregistered dialect

// CHECK-LABEL: func.func @f
// CHECK-NEXT: "foo.bar"() : () -> ()
func.func @f() {
  "foo.bar"() : () -> ()
  return
}
