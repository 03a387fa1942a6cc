// RUN: mlwarp-opt %s --warp-cpu-entry | FileCheck %s

// With the element sizes that convert-warp-arrays-to-llvm records
// (`warp.elem_bytes`), the loop is versioned: when every array's innermost
// stride equals its element size, a copy of the loop sees that stride as a
// constant (consecutive accesses LLVM can vectorise); otherwise the generic copy runs.

// CHECK-LABEL: func.func @copy_cpu
// CHECK: %[[X:.+]] = llvm.load %{{.+}} : !llvm.ptr -> !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[Y:.+]] = llvm.load %{{.+}} : !llvm.ptr -> !llvm.struct<(ptr, array<2 x i64>, array<2 x i64>)>
// CHECK: %[[C4:.+]] = arith.constant 4 : i64
// CHECK: %[[SX:.+]] = llvm.extractvalue %[[X]][2, 0]
// CHECK: %[[OKX:.+]] = arith.cmpi eq, %[[SX]], %[[C4]] : i64
// CHECK: %[[XFAST:.+]] = llvm.insertvalue %[[C4]], %[[X]][2, 0]
// CHECK: %[[C8:.+]] = arith.constant 8 : i64
// The innermost stride of a 2-D array is strides[1].
// CHECK: %[[SY:.+]] = llvm.extractvalue %[[Y]][2, 1]
// CHECK: %[[OKY:.+]] = arith.cmpi eq, %[[SY]], %[[C8]] : i64
// CHECK: %[[OK:.+]] = arith.andi %[[OKX]], %[[OKY]] : i1
// CHECK: scf.if %[[OK]] {
// CHECK:   scf.for
// CHECK:     llvm.extractvalue %[[XFAST]][2, 0]
// CHECK: } else {
// CHECK:   scf.for
// CHECK:     llvm.extractvalue %[[X]][2, 0]
// CHECK: }
func.func @copy(%x: !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>, %y: !llvm.struct<(ptr, array<2 x i64>, array<2 x i64>)>) attributes {warp.kernel, warp.elem_bytes = array<i64: 4, 8>} {
  %t = "warp.tid"() : () -> i32
  %d = llvm.extractvalue %x[2, 0] : !llvm.struct<(ptr, array<1 x i64>, array<1 x i64>)>
  return
}
