// RUN: mlwarp-opt %s --convert-warp-composites-to-vector --convert-warp-builtins-to-arith --convert-warp-arrays-to-llvm --warp-cpu-entry --warp-cpu-interchange-loops --canonicalize --cse | FileCheck %s

// The block's size follows the loads of its uniform loops. When each thread walks its own stretch of an array
// (x[i * n + j]: a row, a tile's sum), the threads of a block read as many streams a row apart, and a block of
// 256 would miss the TLB at every step: the block has 16 threads. Loads the same for every thread, or one
// element apart from thread to thread (x[j * n + i], with the contiguous stride the entry fixes), keep 256;
// with the array's stride read at run time (the entry's strided copy) the distance is not known: 16.
// CHECK-LABEL: func.func @row_sum_cpu(
// CHECK: scf.for %{{.+}} = %arg1 to %arg2 step %c16_i64
// CHECK: } else {
// CHECK: scf.for %{{.+}} = %arg1 to %arg2 step %c16_i64
// CHECK-LABEL: func.func @column_sum_cpu(
// CHECK: scf.for %{{.+}} = %arg1 to %arg2 step %c256_i64
// CHECK: } else {
// CHECK: scf.for %{{.+}} = %arg1 to %arg2 step %c16_i64

// A loop inside a uniform loop, its bounds from the outer loop's induction variable (an adjoint's reverse loop over
// a tape segment): its induction variable is the same for every thread too, x[k * n + i] one element apart: 256.
// CHECK-LABEL: func.func @nested_column_sum_cpu(
// CHECK: scf.for %{{.+}} = %arg1 to %arg2 step %c256_i64

// A buffer made outside the thread loop (a tile's, hoisted by warp-cpu-entry: a reduction's tile of shape (1,)
// on its way to an atomic), stored and read in one stretch after the loop: each thread of the block stores and
// reads it in turn, in the per-thread loop of that stretch. The load x[j] is the same for every thread: 256.
// CHECK-LABEL: func.func @tile_buffer_cpu(
// CHECK: %[[BUF:.+]] = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
// CHECK: scf.for %[[B:.+]] = %arg1 to %arg2 step %c256_i64
// CHECK: scf.for %{{.+}} = %c0_i32 to
// CHECK: scf.for %{{.+}} = %[[B]] to
// CHECK: arith.addf
// CHECK: scf.for %{{.+}} = %[[B]] to
// CHECK-NEXT: arith.subi
// CHECK-NEXT: llvm.getelementptr
// CHECK-NEXT: %[[S:.+]] = llvm.load
// CHECK-NEXT: memref.store %[[S]], %[[BUF]]
// CHECK-NEXT: memref.load %[[BUF]]

// Left alone: the buffer stored before the loop and read after it (the next thread would overwrite it first).
// CHECK-LABEL: func.func @tile_buffer_across_cpu(
// CHECK: memref.store
// CHECK: scf.for %{{.+}} iter_args
// CHECK: memref.load
// CHECK: } {warp.thread_loop}

module {
func.func @row_sum(%x: !warp.array<f32, 1 : i64>, %n: i32, %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %c1 = arith.constant 1 : i32
    %c0 = arith.constant 0 : i32
    %zero = arith.constant 0.000000e+00 : f32
    %i = "warp.tid"() : () -> i32
    %base = "warp.mul"(%i, %n) : (i32, i32) -> i32
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32)  : i32 {
      %p = arith.addi %base, %j : i32
      %v = "warp.load"(%x, %p) : (!warp.array<f32, 1 : i64>, i32) -> f32
      %next = "warp.add"(%acc, %v) : (f32, f32) -> f32
      scf.yield %next : f32
    }
    "warp.store"(%y, %s, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
func.func @column_sum(%x: !warp.array<f32, 1 : i64>, %n: i32, %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %c1 = arith.constant 1 : i32
    %c0 = arith.constant 0 : i32
    %zero = arith.constant 0.000000e+00 : f32
    %i = "warp.tid"() : () -> i32
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32)  : i32 {
      %row = "warp.mul"(%j, %n) : (i32, i32) -> i32
      %p = arith.addi %row, %i : i32
      %v = "warp.load"(%x, %p) : (!warp.array<f32, 1 : i64>, i32) -> f32
      %next = "warp.add"(%acc, %v) : (f32, f32) -> f32
      scf.yield %next : f32
    }
    "warp.store"(%y, %s, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
func.func @nested_column_sum(%x: !warp.array<f32, 1 : i64>, %n: i32, %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %c1 = arith.constant 1 : i32
    %c0 = arith.constant 0 : i32
    %zero = arith.constant 0.000000e+00 : f32
    %i = "warp.tid"() : () -> i32
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32)  : i32 {
      %t = scf.for %k = %c0 to %j step %c1 iter_args(%acc2 = %acc) -> (f32)  : i32 {
        %row = "warp.mul"(%k, %n) : (i32, i32) -> i32
        %p = arith.addi %row, %i : i32
        %v = "warp.load"(%x, %p) : (!warp.array<f32, 1 : i64>, i32) -> f32
        %next = "warp.add"(%acc2, %v) : (f32, f32) -> f32
        scf.yield %next : f32
      }
      scf.yield %t : f32
    }
    "warp.store"(%y, %s, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
func.func @tile_buffer(%x: !warp.array<f32, 1 : i64>, %n: i32, %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %c1 = arith.constant 1 : i32
    %c0 = arith.constant 0 : i32
    %k0 = arith.constant 0 : index
    %zero = arith.constant 0.000000e+00 : f32
    %i = "warp.tid"() : () -> i32
    %buf = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32)  : i32 {
      %v = "warp.load"(%x, %j) : (!warp.array<f32, 1 : i64>, i32) -> f32
      %next = "warp.add"(%acc, %v) : (f32, f32) -> f32
      scf.yield %next : f32
    }
    memref.store %s, %buf[%k0] : memref<1xf32>
    %t = memref.load %buf[%k0] : memref<1xf32>
    "warp.store"(%y, %t, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
func.func @tile_buffer_across(%x: !warp.array<f32, 1 : i64>, %n: i32, %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %c1 = arith.constant 1 : i32
    %c0 = arith.constant 0 : i32
    %k0 = arith.constant 0 : index
    %zero = arith.constant 0.000000e+00 : f32
    %i = "warp.tid"() : () -> i32
    %buf = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
    %x0 = "warp.load"(%x, %i) : (!warp.array<f32, 1 : i64>, i32) -> f32
    memref.store %x0, %buf[%k0] : memref<1xf32>
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32)  : i32 {
      %v = "warp.load"(%x, %j) : (!warp.array<f32, 1 : i64>, i32) -> f32
      %next = "warp.add"(%acc, %v) : (f32, f32) -> f32
      scf.yield %next : f32
    }
    %t = memref.load %buf[%k0] : memref<1xf32>
    %u = "warp.add"(%s, %t) : (f32, f32) -> f32
    "warp.store"(%y, %u, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
