// RUN: mlwarp-opt %s --convert-warp-tiles-to-linalg | FileCheck %s --check-prefixes=CHECK,ROWS
// RUN: mlwarp-opt %s --pass-pipeline='builtin.module(convert-warp-tiles-to-linalg{row-vectors=false})' | FileCheck %s --check-prefixes=CHECK,ELEMENTS

// A tile load reads the array at offset + (i, j), or zero past the array's upper extent (Warp's
// bounds_check): a tile wholly inside an array whose rows are contiguous (the inner stride is one
// element) takes a branch that reads each row with one vector load (prefix ROWS, the CPU), or element (i, j)
// as element j of the contiguous row at (offset0 + i, offset1) (prefix ELEMENTS, row-vectors=false: CUDA);
// any other tile, one of tensor.generate checking every element. A store is a loop nest over the tile
// that writes the elements inside the array. The tile type becomes a tensor.

// CHECK-LABEL: func.func @copy
// CHECK-SAME: (%[[A:.+]]: !warp.array<f32, 2 : i64>, %[[B:.+]]: !warp.array<f32, 2 : i64>, %[[I:.+]]: i32, %[[J:.+]]: i32)
// CHECK: %[[END0:.+]] = arith.addi %[[I]], %{{.+}} : i32
// CHECK: arith.cmpi sle, %[[END0]], %{{.+}} : i32
// CHECK: %[[END1:.+]] = arith.addi %[[J]], %{{.+}} : i32
// CHECK: arith.cmpi sle, %[[END1]], %{{.+}} : i32
// CHECK: %[[INSIDE:.+]] = arith.andi
// CHECK: %[[STEP:.+]] = arith.subi
// CHECK: %[[UNIT:.+]] = arith.cmpi eq, %[[STEP]], %{{.+}} : i64
// CHECK: %[[FAST:.+]] = arith.andi %[[INSIDE]], %[[UNIT]] : i1
// CHECK: %[[T:.+]] = scf.if %[[FAST]] -> (tensor<4x8xf32>) {
// ROWS:    %[[EMPTY:.+]] = tensor.empty() : tensor<4x8xf32>
// ROWS:    scf.for %[[ROW:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[PART:.+]] = %[[EMPTY]]) -> (tensor<4x8xf32>)
// ROWS:      %[[RPTR:.+]] = "warp.address"(%[[A]], %{{.+}}, %[[J]])
// ROWS:      %[[RV:.+]] = llvm.load %[[RPTR]] {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// ROWS:      vector.transfer_write %[[RV]], %[[PART]][%[[ROW]], %{{.+}}] {in_bounds = [true]} : vector<8xf32>, tensor<4x8xf32>
// ELEMENTS: tensor.generate {
// ELEMENTS: ^bb0(%[[FR:.+]]: index, %[[FC:.+]]: index):
// ELEMENTS:   %[[ROWPTR:.+]] = "warp.address"(%[[A]], %{{.+}}, %[[J]])
// ELEMENTS:   %[[ROWADDR:.+]] = llvm.ptrtoint %[[ROWPTR]]
// ELEMENTS:   %[[ROWARR:.+]] = "warp.array_from_ptr"(%[[ROWADDR]], %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (i64, i32) -> !warp.array<f32, 1 : i64>
// ELEMENTS:   %[[FV:.+]] = "warp.load"(%[[ROWARR]], %{{.+}})
// ELEMENTS:   tensor.yield %[[FV]] : f32
// CHECK: } else {
// CHECK:   tensor.generate {
// CHECK:   ^bb0(%[[R:.+]]: index, %[[C:.+]]: index):
// CHECK:     %[[R32:.+]] = arith.index_cast %[[R]] : index to i32
// CHECK:     %[[P0:.+]] = arith.addi %[[R32]], %[[I]] : i32
// CHECK:     %[[C32:.+]] = arith.index_cast %[[C]] : index to i32
// CHECK:     %[[P1:.+]] = arith.addi %[[C32]], %[[J]] : i32
// CHECK:     %[[N0:.+]] = "warp.array_dim"(%[[A]]) {dim = 0 : i64}
// CHECK:     arith.cmpi slt, %[[P0]], %[[N0]] : i32
// CHECK:     %[[IN:.+]] = arith.andi
// CHECK:     %[[E:.+]] = scf.if %[[IN]] -> (f32) {
// CHECK:       %[[V:.+]] = "warp.load"(%[[A]], %[[P0]], %[[P1]])
// CHECK:       scf.yield %[[V]] : f32
// CHECK:     } else {
// CHECK:       %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:       scf.yield %[[Z]] : f32
// CHECK:     tensor.yield %[[E]] : f32
// CHECK:   } : tensor<4x8xf32>
// CHECK: scf.for %[[X:.+]] = %{{.+}} to %{{.+}} step
// CHECK:   scf.for %[[Y:.+]] = %{{.+}} to %{{.+}} step
// CHECK:     scf.if %{{.+}} {
// CHECK:       %[[W:.+]] = tensor.extract %[[T]][%[[X]], %[[Y]]] : tensor<4x8xf32>
// CHECK:       "warp.store"(%[[B]], %[[W]], %{{.+}}, %{{.+}})
// CHECK-NOT: warp.tile
func.func @copy(%a: !warp.array<f32, 2>, %b: !warp.array<f32, 2>, %i: i32, %j: i32) {
  %t = "warp.tile_load"(%a, %i, %j) : (!warp.array<f32, 2>, i32, i32) -> !warp.tile<f32, array<i64: 4, 8>>
  "warp.tile_store"(%b, %t, %i, %j) : (!warp.array<f32, 2>, !warp.tile<f32, array<i64: 4, 8>>, i32, i32) -> ()
  return
}

// Rows wider than 64 elements are read element by element in the fast branch (LLVM vectorises that copy): one
// vector<4096xf32> load would be split into registers that are all loaded, and spilled, before the first store.
// CHECK-LABEL: func.func @wide_row
// CHECK: scf.if %{{.+}} -> (tensor<4096xf32>) {
// CHECK-NOT: vector<4096xf32>
// CHECK:   "warp.array_from_ptr"
// CHECK: } else {
func.func @wide_row(%a: !warp.array<f32, 1>, %b: !warp.array<f32, 1>, %i: i32) {
  %t = "warp.tile_load"(%a, %i) : (!warp.array<f32, 1>, i32) -> !warp.tile<f32, array<i64: 4096>>
  "warp.tile_store"(%b, %t, %i) : (!warp.array<f32, 1>, !warp.tile<f32, array<i64: 4096>>, i32) -> ()
  return
}

// A tile a loop carries becomes a tensor the loop carries (its iter_args and results retyped).
// CHECK-LABEL: func.func @carried
// CHECK: %[[INIT:.+]] = tensor.splat %{{.+}} : tensor<4xf32>
// CHECK: %[[OUT:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (tensor<4xf32>)
// CHECK:   linalg.generic {{.+}} ins(%[[ACC]], %[[ACC]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: tensor.extract %[[OUT]]
func.func @carried(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %i0 = arith.constant 0 : i32
  %one = arith.constant 1.0 : f32
  %t0 = "warp.tile_full"(%one) : (f32) -> !warp.tile<f32, array<i64: 4>>
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %t0) -> (!warp.tile<f32, array<i64: 4>>) {
    %s = "warp.add"(%acc, %acc) : (!warp.tile<f32, array<i64: 4>>, !warp.tile<f32, array<i64: 4>>) -> !warp.tile<f32, array<i64: 4>>
    scf.yield %s : !warp.tile<f32, array<i64: 4>>
  }
  %e = "warp.tile_extract"(%r, %i0) : (!warp.tile<f32, array<i64: 4>>, i32) -> f32
  return %e : f32
}

// Left alone: a function without tiles.
// CHECK-LABEL: func.func @scalar
// CHECK-NEXT: %[[S:.+]] = "warp.add"(%arg0, %arg0) : (f32, f32) -> f32
// CHECK-NEXT: return %[[S]]
func.func @scalar(%x: f32) -> f32 {
  %s = "warp.add"(%x, %x) : (f32, f32) -> f32
  return %s : f32
}
