// RUN: mlwarp-opt %s --mlir-print-debuginfo | FileCheck %s
// RUN: mlwarp-opt %s --split-input-file --mlir-print-debuginfo | FileCheck %s --check-prefix=SPLIT

// Locations name the input file, so IR printed with its locations (or a later
// error) points back to the .mlir line.
// CHECK: func.func @f(%arg0: f32 loc("{{.*}}debuginfo.mlir":[[@LINE+2]]:14)) -> f32 {
// CHECK: #loc{{[0-9]*}} = loc("{{.*}}debuginfo.mlir":[[@LINE+2]]:3)
func.func @f(%x: f32) -> f32 {
  return %x : f32
}

// With --split-input-file each chunk is parsed on its own, but line numbers
// are still those of the whole file.
// SPLIT: loc("{{.*}}debuginfo.mlir":[[@LINE-5]]:3)
