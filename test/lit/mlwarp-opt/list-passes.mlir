// RUN: mlwarp-opt --list-passes | FileCheck %s

// Every mlwarp pass with its description, sorted by name; options follow their
// pass with their default values; then the compiler's stages as pipeline text
// that --pass-pipeline takes back (test/python/test_pipeline_text.py round-trips every line).
// CHECK: mlwarp passes
// CHECK: --convert-warp-arrays-to-llvm Lower warp arrays
// CHECK: --convert-warp-builtins-to-arith Lower warp builtin ops
// CHECK: --warp-cpu-entry Wrap each kernel in a CPU entry point
// CHECK: --warp-unroll-loops Unroll
// CHECK-NEXT: max-unroll={{[0-9]+}} (int, default)

// CHECK: compiler stages (--mlwarp-pipeline=<target>[:<stage>]; or their text as --pass-pipeline=...):
// CHECK: cpu:warp builtin.module()
// CHECK: cpu:lowered builtin.module(convert-warp-composites-to-vector,convert-warp-builtins-to-arith,{{.*}}warp-cpu-entry,
// CHECK: cpu:llvm builtin.module({{.*}}reconcile-unrealized-casts,
// CHECK: cuda:autodiff builtin.module(warp-autodiff{tape-bytes=0},
