// RUN: mlwarp-opt %s --split-input-file --pass-pipeline="builtin.module(warp-bf16-as-i16)" | FileCheck %s

// The build marks a frontend output with no bfloat16 in it `warp.no_bf16` (compiler/build.py); the two bf16
// passes then skip the module without walking it. Unmarked, the same function's bf16 becomes i16.
// CHECK-LABEL: llvm.func @marked
// CHECK-SAME: bf16
// CHECK: llvm.return %{{.+}} : bf16
module attributes {warp.no_bf16} {
  llvm.func @marked(%x: bf16) -> bf16 {
    llvm.return %x : bf16
  }
}

// -----

// CHECK-LABEL: llvm.func @unmarked
// CHECK-SAME: i16
// CHECK: llvm.return %{{.+}} : i16
module {
  llvm.func @unmarked(%x: bf16) -> bf16 {
    llvm.return %x : bf16
  }
}
