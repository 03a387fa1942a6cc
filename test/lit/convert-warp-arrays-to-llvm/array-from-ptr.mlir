// RUN: mlwarp-opt %s --convert-warp-arrays-to-llvm | FileCheck %s

// wp.array(ptr=..., shape=(n, m)) in a kernel: a row-major descriptor over the address, byte strides from the
// element size. A grad address (wp.mesh_get's points) has no place in the descriptor: warp-autodiff, run
// before, built its adjoint arrays over it, so the lowering reads the shape past it and leaves it unused.

// CHECK-LABEL: func.func @raw
// CHECK-SAME: (%[[P:[^:]+]]: i64, %[[N:[^:]+]]: i32, %[[M:[^:]+]]: i32, %[[G:[^:]+]]: i64)
// CHECK: %[[N64:.+]] = arith.extsi %[[N]] : i32 to i64
// CHECK: %[[M64:.+]] = arith.extsi %[[M]] : i32 to i64
// CHECK: %[[U:.+]] = llvm.mlir.undef : !llvm.struct<(ptr, array<2 x i64>, array<2 x i64>)>
// CHECK: %[[PTR:.+]] = llvm.inttoptr %[[P]] : i64 to !llvm.ptr
// CHECK: llvm.insertvalue %[[PTR]], %[[U]][0]
// CHECK: %[[C4:.+]] = arith.constant 4 : i64
// CHECK: %[[ROW:.+]] = arith.muli %[[C4]], %[[M64]]
// CHECK: llvm.insertvalue %[[N64]], %{{.+}}[1, 0]
// CHECK: llvm.insertvalue %[[ROW]], %{{.+}}[2, 0]
// CHECK: llvm.insertvalue %[[M64]], %{{.+}}[1, 1]
// CHECK: llvm.insertvalue %[[C4]], %{{.+}}[2, 1]
// CHECK-NOT: %[[G]]
// CHECK: return
func.func @raw(%p: i64, %n: i32, %m: i32, %g: i64) -> f32 {
  %a = "warp.array_from_ptr"(%p, %n, %m, %g) {operandSegmentSizes = array<i32: 1, 2, 1>} : (i64, i32, i32, i64) -> !warp.array<f32, 2>
  %x = "warp.load"(%a, %n, %m) : (!warp.array<f32, 2>, i32, i32) -> f32
  return %x : f32
}
