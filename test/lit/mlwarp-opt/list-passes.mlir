// RUN: mlwarp-opt --list-passes | FileCheck %s

// CHECK: mlwarp passes
// CHECK-DAG: --convert-warp-arrays-to-llvm Lower warp arrays
// CHECK-DAG: --convert-warp-builtins-to-arith Lower warp builtin ops
// CHECK-DAG: --warp-cpu-entry Wrap each kernel in a CPU entry point
