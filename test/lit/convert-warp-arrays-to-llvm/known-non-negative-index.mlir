// RUN: mlwarp-opt %s --convert-warp-arrays-to-llvm | FileCheck %s

// The wrap of a negative index (i + shape when i < 0, Warp's `a[-1]`) is left out where the index is known
// non-negative (lowering/index_signs.py): the thread index, a loop counter from 0, the loop's upper bound
// inside its body, sums and products of those. Passes after the lowering read these addresses as affine
// walks (warp-cpu-interchange-loops' strided walks), which a select would hide.

// CHECK-LABEL: func.func @row_sum
// CHECK-NOT: arith.select
// CHECK: scf.for
// CHECK-NOT: arith.select
// CHECK: llvm.load
// CHECK-NOT: arith.select
// CHECK: return
func.func @row_sum(%x: !warp.array<f32, 1 : i64>, %n: i32, %y: !warp.array<f32, 1 : i64>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %i = "warp.tid"() : () -> i32
  %base = arith.muli %i, %n : i32
  %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) : i32 {
    %p = arith.addi %base, %j : i32
    %v = "warp.load"(%x, %p) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %next = arith.addf %acc, %v : f32
    scf.yield %next : f32
  }
  "warp.store"(%y, %s, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
  return
}

// Outside the loop nothing is known of %n, and i - 1 may be negative: both are wrapped.
// CHECK-LABEL: func.func @maybe_negative
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: llvm.load
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: llvm.store
func.func @maybe_negative(%x: !warp.array<f32, 1 : i64>, %n: i32) {
  %c1 = arith.constant 1 : i32
  %i = "warp.tid"() : () -> i32
  %v = "warp.load"(%x, %n) : (!warp.array<f32, 1 : i64>, i32) -> f32
  %prev = arith.subi %i, %c1 : i32
  "warp.store"(%x, %v, %prev) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
  return
}
