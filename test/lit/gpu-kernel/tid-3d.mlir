// RUN: mlwarp-opt %s --warp-gpu-kernel | FileCheck %s

// A 3-D tid splits the linear index over the launch dims, the last index
// varying fastest (as on the CPU and in Warp): k = i % d2, j = (i / d2) % d1,
// i0 = i / d2 / d1.

// Helper functions move into the gpu.module, ahead of the kernels.
// CHECK: gpu.module @kernels
// CHECK-NEXT: func.func private @use(i32, i32, i32)
// CHECK-LABEL: gpu.func @k3_cuda
// CHECK-DAG: %[[D1:.+]] = llvm.extractvalue %{{.+}}[0, 1]
// CHECK-DAG: %[[D2:.+]] = llvm.extractvalue %{{.+}}[0, 2]
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} : i64 {
// CHECK:   %[[K:.+]] = arith.remsi %[[I]], %[[D2]] : i64
// CHECK:   %[[Q:.+]] = arith.divsi %[[I]], %[[D2]] : i64
// CHECK:   %[[J:.+]] = arith.remsi %[[Q]], %[[D1]] : i64
// CHECK:   %[[I0:.+]] = arith.divsi %[[Q]], %[[D1]] : i64
// CHECK-DAG: %[[I0_32:.+]] = arith.trunci %[[I0]] : i64 to i32
// CHECK-DAG: %[[J_32:.+]] = arith.trunci %[[J]] : i64 to i32
// CHECK-DAG: %[[K_32:.+]] = arith.trunci %[[K]] : i64 to i32
// CHECK:   func.call @use(%[[I0_32]], %[[J_32]], %[[K_32]])
// CHECK-NOT: warp.tid
module {
  func.func private @use(i32, i32, i32)
  func.func @k3() attributes {warp.kernel} {
    %t:3 = "warp.tid"() : () -> (i32, i32, i32)
    func.call @use(%t#0, %t#1, %t#2) : (i32, i32, i32) -> ()
    return
  }
}
