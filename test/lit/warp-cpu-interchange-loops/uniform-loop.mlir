// RUN: mlwarp-opt %s --convert-warp-composites-to-vector --convert-warp-builtins-to-arith --convert-warp-arrays-to-llvm --warp-cpu-entry --warp-cpu-interchange-loops --canonicalize --cse | FileCheck %s

// `for s in range(n)` with n a kernel argument: the thread loop runs in blocks of 256 threads; per block,
// what precedes the loop runs for each thread (x[i], w = 2 x[i]) and keeps what the rest reads in stack
// buffers of 256 entries (x[i] and w); the loop's state starts from x[i]; the loop over s runs the body
// for each thread of the block (the innermost loop, with the sin: LLVM vectorises it), then the rest
// (y[i] = v + w) reads the buffers. Both copies of the thread loop (contiguous and strided) change.
// CHECK-LABEL: func.func @uniform_cpu(
// CHECK: scf.if
// CHECK: scf.for %[[B:.+]] = %arg1 to %arg2 step %c256_i64
// CHECK: %[[END:.+]] = arith.minsi %{{.+}}, %arg2
// CHECK: scf.for %[[I:.+]] = %[[B]] to %[[END]] step %c1_i64
// CHECK: %[[X:.+]] = llvm.load %{{.+}} : !llvm.ptr -> f32
// CHECK: %[[W:.+]] = arith.mulf %[[X]], %cst
// CHECK-DAG: llvm.store %[[X]], %{{.+}} : f32
// CHECK-DAG: llvm.store %[[W]], %{{.+}} : f32
// the state's initial value
// CHECK: scf.for %{{.+}} = %[[B]] to %[[END]] step %c1_i64
// CHECK: scf.for %{{.+}} = %c0_i32 to %{{.+}} step %c1_i32 : i32 {
// CHECK-NEXT: scf.for %[[J:.+]] = %[[B]] to %[[END]] step %c1_i64
// CHECK-NEXT: %[[OFF:.+]] = arith.subi %[[J]], %[[B]]
// CHECK-NEXT: %[[SLOT:.+]] = llvm.getelementptr %{{.+}}[%[[OFF]]]
// CHECK-NEXT: %[[V:.+]] = llvm.load %[[SLOT]] : !llvm.ptr -> f32
// CHECK-NEXT: math.sin %[[V]]
// CHECK: llvm.store %{{.+}}, %[[SLOT]]
// CHECK: scf.for %{{.+}} = %[[B]] to %[[END]] step %c1_i64
// CHECK: arith.addf
// CHECK: } else {
// CHECK: scf.for %{{.+}} = %arg1 to %arg2 step %c256_i64
// CHECK: math.sin
// CHECK: return

// Left alone: a trip count read per thread (m[i]), the loop running whole per thread ...
// CHECK-LABEL: func.func @per_thread_cpu(
// CHECK-NOT: llvm.alloca
// CHECK: scf.for %{{.+}} = %arg1 to %arg2 step %c1_i64
// CHECK: scf.for %{{.+}} iter_args
// CHECK: } {warp.thread_loop}

// A loop in a loop, both of thread-invariant bounds: each runs once per block, the inner body per thread
// innermost; the inner loop starts from the outer one's state and its result is the outer one's next state.
// CHECK-LABEL: func.func @nested_cpu(
// CHECK: scf.for %[[B:.+]] = %arg1 to %arg2 step %c256_i64
// CHECK: scf.for %{{.+}} = %c0_i32 to %[[N:.+]] step %c1_i32 : i32 {
// CHECK: scf.for %{{.+}} = %[[B]] to
// CHECK: scf.for %{{.+}} = %c0_i32 to %[[N]] step %c1_i32 : i32 {
// CHECK-NEXT: scf.for %{{.+}} = %[[B]] to
// CHECK: arith.mulf
// CHECK: scf.for %{{.+}} = %[[B]] to
// CHECK: } else {

// ... and a kernel with a wp.zeros array (one stack array serves every thread in turn).
// CHECK-LABEL: func.func @local_array_cpu(
// CHECK: llvm.alloca %{{.+}} x !llvm.array<16 x i8>
// CHECK-NOT: llvm.alloca
// CHECK: } {warp.thread_loop}

module {
func.func @uniform(%arg0: !warp.array<f32, 1 : i64>, %arg1: f32, %arg2: i32, %arg3: !warp.array<f32, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %c1_i32 = arith.constant 1 : i32
    %c0_i32 = arith.constant 0 : i32
    %cst = arith.constant 2.000000e+00 : f32
    %0 = "warp.tid"() : () -> i32
    %1 = "warp.load"(%arg0, %0) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %2 = "warp.mul"(%1, %cst) : (f32, f32) -> f32
    %3 = scf.for %arg4 = %c0_i32 to %arg2 step %c1_i32 iter_args(%arg5 = %1) -> (f32)  : i32 {
      %5 = "warp.sin"(%arg5) : (f32) -> f32
      %6 = "warp.mul"(%arg1, %5) : (f32, f32) -> f32
      %7 = "warp.add"(%arg5, %6) : (f32, f32) -> f32
      scf.yield %7 : f32
    }
    %4 = "warp.add"(%3, %2) : (f32, f32) -> f32
    "warp.store"(%arg3, %4, %0) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
func.func @per_thread(%arg0: !warp.array<f32, 1 : i64>, %arg1: !warp.array<i32, 1 : i64>, %arg2: !warp.array<f32, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %cst = arith.constant 5.000000e-01 : f32
    %c1_i32 = arith.constant 1 : i32
    %c0_i32 = arith.constant 0 : i32
    %0 = "warp.tid"() : () -> i32
    %1 = "warp.load"(%arg0, %0) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %2 = "warp.load"(%arg1, %0) : (!warp.array<i32, 1 : i64>, i32) -> i32
    %3 = scf.for %arg3 = %c0_i32 to %2 step %c1_i32 iter_args(%arg4 = %1) -> (f32)  : i32 {
      %4 = "warp.mul"(%arg4, %cst) : (f32, f32) -> f32
      scf.yield %4 : f32
    }
    "warp.store"(%arg2, %3, %0) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
func.func @nested(%arg0: !warp.array<f32, 1 : i64>, %arg1: i32, %arg2: !warp.array<f32, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %cst = arith.constant 5.000000e-01 : f32
    %c1_i32 = arith.constant 1 : i32
    %c0_i32 = arith.constant 0 : i32
    %0 = "warp.tid"() : () -> i32
    %1 = "warp.load"(%arg0, %0) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %2 = scf.for %arg3 = %c0_i32 to %arg1 step %c1_i32 iter_args(%arg4 = %1) -> (f32)  : i32 {
      %3 = scf.for %arg5 = %c0_i32 to %arg1 step %c1_i32 iter_args(%arg6 = %arg4) -> (f32)  : i32 {
        %4 = "warp.mul"(%arg6, %cst) : (f32, f32) -> f32
        scf.yield %4 : f32
      }
      scf.yield %3 : f32
    }
    "warp.store"(%arg2, %2, %0) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
func.func @local_array(%arg0: !warp.array<f32, 1 : i64>, %arg1: i32, %arg2: !warp.array<f32, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %c4_i32 = arith.constant 4 : i32
    %c1_i32 = arith.constant 1 : i32
    %c0_i32 = arith.constant 0 : i32
    %0 = "warp.tid"() : () -> i32
    %1 = "warp.local_array"() {shape = array<i64: 4>} : () -> !warp.array<f32, 1 : i64>
    %2 = "warp.load"(%arg0, %0) : (!warp.array<f32, 1 : i64>, i32) -> f32
    %3 = scf.for %arg3 = %c0_i32 to %arg1 step %c1_i32 iter_args(%arg4 = %2) -> (f32)  : i32 {
      %4 = "warp.mod"(%arg3, %c4_i32) : (i32, i32) -> i32
      "warp.store"(%1, %arg4, %4) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
      %5 = "warp.load"(%1, %c0_i32) : (!warp.array<f32, 1 : i64>, i32) -> f32
      %6 = "warp.add"(%arg4, %5) : (f32, f32) -> f32
      scf.yield %6 : f32
    }
    "warp.store"(%arg2, %3, %0) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    return
  }
}
