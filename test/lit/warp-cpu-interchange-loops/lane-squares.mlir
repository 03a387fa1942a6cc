// RUN: mlwarp-opt %s --convert-warp-composites-to-vector --convert-warp-builtins-to-arith --convert-warp-arrays-to-llvm --warp-cpu-entry --warp-cpu-interchange-loops --canonicalize --cse | FileCheck %s

// A vector each thread loads from its own row and takes apart lane by lane (warp-stream-tile-reductions' step of a
// tile sum): the stretch is cut after the load. The load runs for each square of 4 threads of the 16-thread
// block at once, unrolled, its 4 vectors transposed in registers (4 * log2(4) shuffles) into the vector's lane-
// major buffer: lane k of the block's threads side by side, so the chain of additions after the cut, in a loop
// over the threads, reads consecutive slots (LLVM vectorises it). The block's last threads that fill no square
// load in a loop and store lane by lane.
// CHECK-LABEL: func.func @row_sums_cpu(
// CHECK: %[[LANES:.+]] = llvm.alloca %c64_i64 x f32
// CHECK: scf.for %[[B:.+]] = %arg1 to %arg2 step %c16_i64
// CHECK: scf.for %{{.+}} = %c0_i32 to %c64_i32 step %c4_i32
// CHECK:   scf.for %[[SQ:.+]] = %[[B]] to %{{.+}} step %c4_i64
// CHECK:     scf.if
// CHECK:       %[[R0:.+]] = llvm.load %{{.+}} {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK:       %[[R1:.+]] = llvm.load %{{.+}} {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK:       %[[R2:.+]] = llvm.load %{{.+}} {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK:       %[[R3:.+]] = llvm.load %{{.+}} {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK:       %[[H0:.+]] = llvm.shufflevector %[[R0]], %[[R2]] [0, 1, 4, 5]
// CHECK:       %[[H1:.+]] = llvm.shufflevector %[[R0]], %[[R2]] [2, 3, 6, 7]
// CHECK:       %[[H2:.+]] = llvm.shufflevector %[[R1]], %[[R3]] [0, 1, 4, 5]
// CHECK:       %[[H3:.+]] = llvm.shufflevector %[[R1]], %[[R3]] [2, 3, 6, 7]
// CHECK:       %[[C0:.+]] = llvm.shufflevector %[[H0]], %[[H2]] [0, 4, 2, 6]
// CHECK:       %[[C1:.+]] = llvm.shufflevector %[[H0]], %[[H2]] [1, 5, 3, 7]
// CHECK:       %[[C2:.+]] = llvm.shufflevector %[[H1]], %[[H3]] [0, 4, 2, 6]
// CHECK:       %[[C3:.+]] = llvm.shufflevector %[[H1]], %[[H3]] [1, 5, 3, 7]
// CHECK:       llvm.store %[[C0]], %{{.+}} {alignment = 4 : i64} : vector<4xf32>, !llvm.ptr
// CHECK:       llvm.store %[[C1]], %{{.+}} {alignment = 4 : i64} : vector<4xf32>, !llvm.ptr
// CHECK:       llvm.store %[[C2]], %{{.+}} {alignment = 4 : i64} : vector<4xf32>, !llvm.ptr
// CHECK:       llvm.store %[[C3]], %{{.+}} {alignment = 4 : i64} : vector<4xf32>, !llvm.ptr
// CHECK:     } else {
// CHECK:       scf.for
// CHECK:         %[[V:.+]] = llvm.load %{{.+}} {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK-COUNT-4: llvm.extractelement %[[V]]
// CHECK:   scf.for %{{.+}} = %[[B]] to
// CHECK-COUNT-4: arith.addf
// CHECK: } else {

// Left alone: a vector that is also used whole (stored to an array) stays in one stretch with its uses.
// CHECK-LABEL: func.func @used_whole_cpu(
// CHECK-NOT: llvm.shufflevector
// CHECK: %[[W:.+]] = llvm.load %{{.+}} {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK-NEXT: llvm.getelementptr
// CHECK-NEXT: llvm.store %[[W]]
// CHECK-NEXT: vector.extract %[[W]][0]
// CHECK-NOT: llvm.shufflevector

module {
func.func @row_sums(%x: !warp.array<f32, 1 : i64>, %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %c0 = arith.constant 0 : i32
    %c4 = arith.constant 4 : i32
    %c64 = arith.constant 64 : i32
    %neg0 = arith.constant -0.000000e+00 : f32
    %i = "warp.tid"() : () -> i32
    %base = "warp.mul"(%i, %c64) : (i32, i32) -> i32
    %s = scf.for %k = %c0 to %c64 step %c4 iter_args(%acc = %neg0) -> (f32)  : i32 {
      %p = arith.addi %base, %k : i32
      %at = "warp.address"(%x, %p) : (!warp.array<f32, 1 : i64>, i32) -> !llvm.ptr
      %v = llvm.load %at {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
      %x0 = vector.extract %v[0] : f32 from vector<4xf32>
      %a0 = "warp.add"(%acc, %x0) : (f32, f32) -> f32
      %x1 = vector.extract %v[1] : f32 from vector<4xf32>
      %a1 = "warp.add"(%a0, %x1) : (f32, f32) -> f32
      %x2 = vector.extract %v[2] : f32 from vector<4xf32>
      %a2 = "warp.add"(%a1, %x2) : (f32, f32) -> f32
      %x3 = vector.extract %v[3] : f32 from vector<4xf32>
      %a3 = "warp.add"(%a2, %x3) : (f32, f32) -> f32
      scf.yield %a3 : f32
    }
    "warp.store"(%y, %s, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
func.func @used_whole(%x: !warp.array<f32, 1 : i64>, %y: !warp.array<f32, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %c0 = arith.constant 0 : i32
    %c4 = arith.constant 4 : i32
    %c64 = arith.constant 64 : i32
    %neg0 = arith.constant -0.000000e+00 : f32
    %i = "warp.tid"() : () -> i32
    %base = "warp.mul"(%i, %c64) : (i32, i32) -> i32
    %s = scf.for %k = %c0 to %c64 step %c4 iter_args(%acc = %neg0) -> (f32)  : i32 {
      %p = arith.addi %base, %k : i32
      %at = "warp.address"(%x, %p) : (!warp.array<f32, 1 : i64>, i32) -> !llvm.ptr
      %v = llvm.load %at {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
      %out = "warp.address"(%y, %p) : (!warp.array<f32, 1 : i64>, i32) -> !llvm.ptr
      llvm.store %v, %out {alignment = 4 : i64} : vector<4xf32>, !llvm.ptr
      %x0 = vector.extract %v[0] : f32 from vector<4xf32>
      %a0 = "warp.add"(%acc, %x0) : (f32, f32) -> f32
      scf.yield %a0 : f32
    }
    "warp.store"(%y, %s, %i) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
