// RUN: mlwarp-opt %s --convert-warp-composites-to-vector --convert-warp-builtins-to-arith --convert-warp-arrays-to-llvm --warp-cpu-entry --warp-cpu-interchange-loops --canonicalize --cse | FileCheck %s

// A scatter (wp.atomic_add/atomic_sub into f at per-thread indices, a mass-spring's forces): its possible
// conflicts keep LLVM from vectorising the thread loop, the gathers and arithmetic before it included.
// The body is cut before the first such atomic: per block of 256 threads, the gathers (x[i], x[j]) and the
// force for every thread first, into per-thread buffers (vectorisable), then the atomics, whose addresses
// (&f[i]) are made after the cut from the byte offsets computed before it. A vec3 force goes to a buffer per lane (768 = 3 x 256 floats, lane k
// of thread slot t at k * 256 + t), so the vectorised loop stores each lane with one vector store.
// CHECK-LABEL: func.func @springs_cpu(
// CHECK: llvm.alloca %c768_i64 x f32 {alignment = 64 : i64}
// CHECK: scf.for %[[B:.+]] = %arg1 to %arg2 step %c256_i64
// CHECK: scf.for %[[T:.+]] = %[[B]] to
// CHECK-NOT: llvm.atomicrmw
// CHECK: math.sqrt
// CHECK: %[[SLOT:.+]] = arith.subi %[[T]], %[[B]] : i64
// CHECK: %[[X:.+]] = llvm.extractelement %[[FORCE:.+]][%c0_i64 : i64] : vector<3xf32>
// CHECK: %[[P0:.+]] = llvm.getelementptr %{{.+}}[%[[SLOT]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: llvm.store %[[X]], %[[P0]] : f32, !llvm.ptr
// CHECK: llvm.extractelement %[[FORCE]][%c1_i64 : i64] : vector<3xf32>
// CHECK: arith.addi %[[SLOT]], %c256_i64 : i64
// CHECK-NOT: : vector<3xf32>, !llvm.ptr
// The byte offset of f[j] (the index's wrap and scaling, vectorised with the gathers) goes to a buffer too; the
// scatter reads it and adds it to f's data pointer.
// CHECK: llvm.store %{{.+}}, %{{.+}} : i64, !llvm.ptr
// CHECK: scf.for %{{.+}} = %[[B]] to
// CHECK: %[[OFFSET:.+]] = llvm.load %{{.+}} : !llvm.ptr -> i64
// CHECK: %[[F:.+]] = llvm.getelementptr inbounds %{{.+}}[%[[OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: llvm.atomicrmw fadd %[[F]]
// CHECK: } else {

// Left alone: the ops before the atomic read the array it writes (f[s]), so the order between threads
// stays that of one loop.
// CHECK-LABEL: func.func @reads_what_it_scatters_cpu(
// CHECK-NOT: step %c256_i64
// CHECK: } {warp.thread_loop}

module {
func.func @springs(%arg0: !warp.array<!warp.vec<3 : i64, f32>, 1 : i64>, %arg1: !warp.array<i32, 1 : i64>, %arg2: !warp.array<i32, 1 : i64>, %arg3: !warp.array<!warp.vec<3 : i64, f32>, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %0 = "warp.tid"() : () -> i32
    %1 = "warp.load"(%arg1, %0) : (!warp.array<i32, 1 : i64>, i32) -> i32
    %2 = "warp.load"(%arg2, %0) : (!warp.array<i32, 1 : i64>, i32) -> i32
    %3 = "warp.load"(%arg0, %2) : (!warp.array<!warp.vec<3 : i64, f32>, 1 : i64>, i32) -> !warp.vec<3 : i64, f32>
    %4 = "warp.load"(%arg0, %1) : (!warp.array<!warp.vec<3 : i64, f32>, 1 : i64>, i32) -> !warp.vec<3 : i64, f32>
    %5 = "warp.sub"(%3, %4) : (!warp.vec<3 : i64, f32>, !warp.vec<3 : i64, f32>) -> !warp.vec<3 : i64, f32>
    %6 = "warp.length"(%5) : (!warp.vec<3 : i64, f32>) -> f32
    %7 = "warp.mul"(%5, %6) : (!warp.vec<3 : i64, f32>, f32) -> !warp.vec<3 : i64, f32>
    %8 = "warp.atomic"(%arg3, %7, %1) {kind = "add"} : (!warp.array<!warp.vec<3 : i64, f32>, 1 : i64>, !warp.vec<3 : i64, f32>, i32) -> !warp.vec<3 : i64, f32>
    %9 = "warp.atomic"(%arg3, %7, %2) {kind = "sub"} : (!warp.array<!warp.vec<3 : i64, f32>, 1 : i64>, !warp.vec<3 : i64, f32>, i32) -> !warp.vec<3 : i64, f32>
    return
  }
func.func @reads_what_it_scatters(%arg0: !warp.array<f32, 1 : i64>, %arg1: !warp.array<i32, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %cst = arith.constant 5.000000e-01 : f32
    %0 = "warp.tid"() : () -> i32
    %1 = "warp.load"(%arg0, %0) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %2 = "warp.mul"(%1, %cst) : (f32, f32) -> f32
    %3 = "warp.load"(%arg1, %0) : (!warp.array<i32, 1 : i64>, i32) -> i32
    %4 = "warp.atomic"(%arg0, %2, %3) {kind = "add"} : (!warp.array<f32, 1 : i64>, f32, i32) -> f32
    return
  }
}
