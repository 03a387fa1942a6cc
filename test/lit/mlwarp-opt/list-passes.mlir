// RUN: mlwarp-opt --list-passes | FileCheck %s

// Every mlwarp pass with its description, sorted by name; options follow their
// pass with their default values; then the compiler's stages.
// CHECK: mlwarp passes
// CHECK: --convert-warp-arrays-to-llvm Lower warp arrays
// CHECK: --convert-warp-builtins-to-arith Lower warp builtin ops
// CHECK: --warp-cpu-entry Wrap each kernel in a CPU entry point
// CHECK: --warp-unroll-loops Unroll
// CHECK-NEXT: max-unroll={{[0-9]+}} (int, default)

// CHECK: compiler stages (--mlwarp-pipeline=<target>[:<stage>]):
// CHECK: cpu:lowered {{.*}}convert-warp-builtins-to-arith,{{.*}}warp-cpu-entry
// CHECK: cpu:llvm {{.*}}reconcile-unrealized-casts
