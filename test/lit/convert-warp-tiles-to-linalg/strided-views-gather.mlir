// RUN: mlwarp-opt %s --convert-warp-tiles-to-linalg | FileCheck %s

// A view's {steps}: element j of a kept dimension d is the tile's at offset_d + step_d * j (t[::2, ::-1]); a
// dimension of step 0 is dropped, read at its offset (t[:, 3]: the middle of the tile, not a leading dimension).
// Its insertion keeps the part's element where (i - offset) is an exact multiple of the step inside the part.
// tile_gather: element k along the axis is the tile's at indices[k], a negative index plus the extent.
// tile_gather_add: each position adds the part's slices whose (wrapped) index is that position, in order.

// CHECK-LABEL: func.func @strided
// CHECK: tensor.generate
// CHECK: ^bb0(%[[A:.+]]: index, %[[B:.+]]: index):
// CHECK:   %[[SA:.+]] = arith.muli %[[A]], %c2 : index
// CHECK:   %[[R:.+]] = arith.addi %{{.+}}, %[[SA]] : index
// CHECK:   %[[SB:.+]] = arith.muli %[[B]], %c-1 : index
// CHECK:   %[[C:.+]] = arith.addi %{{.+}}, %[[SB]] : index
// CHECK:   tensor.extract %{{.+}}[%[[R]], %[[C]]] : tensor<4x6xf32>
// CHECK: } : tensor<2x6xf32>
// the column: dimension 1 dropped, dimension 0 whole
// CHECK: tensor.generate
// CHECK: ^bb0(%[[K:.+]]: index):
// CHECK:   %[[ROW:.+]] = arith.addi %{{.+}}, %[[K]] : index
// CHECK:   tensor.extract %{{.+}}[%[[ROW]], %{{.+}}] : tensor<4x6xf32>
// CHECK: } : tensor<4xf32>
// the insertion of the strided part: an exact multiple of the step, inside the part
// CHECK: tensor.generate
// CHECK:   %[[REL:.+]] = arith.subi
// CHECK:   %[[J:.+]] = arith.divsi %[[REL]], %c2
// CHECK:   %[[BACK:.+]] = arith.muli %[[J]], %c2
// CHECK:   arith.cmpi eq, %[[BACK]], %[[REL]]
// CHECK:   arith.cmpi sge, %[[J]]
// CHECK:   arith.cmpi slt, %[[J]]
// CHECK:   scf.if
// CHECK:     tensor.extract %{{.+}} : tensor<2x6xf32>
// CHECK:   } else {
// CHECK: } : tensor<4x6xf32>
// CHECK-NOT: warp.tile_
func.func @strided(%a: !warp.array<f32, 2>, %out: !warp.array<f32, 1>) {
  %z = arith.constant 0 : i32
  %five = arith.constant 5 : i32
  %three = arith.constant 3 : i32
  %t = "warp.tile_load"(%a, %z, %z) : (!warp.array<f32, 2>, i32, i32) -> !warp.tile<f32, array<i64: 4, 6>>
  %v = "warp.tile_view"(%t, %z, %five) {steps = array<i64: 2, -1>} : (!warp.tile<f32, array<i64: 4, 6>>, i32, i32) -> !warp.tile<f32, array<i64: 2, 6>>
  %c = "warp.tile_view"(%t, %z, %three) {steps = array<i64: 1, 0>} : (!warp.tile<f32, array<i64: 4, 6>>, i32, i32) -> !warp.tile<f32, array<i64: 4>>
  %u = "warp.tile_insert_view"(%t, %v, %z, %five) {steps = array<i64: 2, -1>} : (!warp.tile<f32, array<i64: 4, 6>>, !warp.tile<f32, array<i64: 2, 6>>, i32, i32) -> !warp.tile<f32, array<i64: 4, 6>>
  "warp.tile_store"(%out, %c, %z) : (!warp.array<f32, 1>, !warp.tile<f32, array<i64: 4>>, i32) -> ()
  "warp.tile_store"(%a, %u, %z, %z) : (!warp.array<f32, 2>, !warp.tile<f32, array<i64: 4, 6>>, i32, i32) -> ()
  return
}

// CHECK-LABEL: func.func @gather
// CHECK: tensor.generate
// CHECK: ^bb0(%[[R:.+]]: index, %[[C:.+]]: index):
// CHECK:   %[[I:.+]] = tensor.extract %{{.+}}[%[[R]]] : tensor<3xi32>
// CHECK:   %[[II:.+]] = arith.index_cast %[[I]] : i32 to index
// CHECK:   %[[NEG:.+]] = arith.cmpi slt, %[[II]], %c0
// CHECK:   %[[UP:.+]] = arith.addi %[[II]], %c4
// CHECK:   %[[W:.+]] = arith.select %[[NEG]], %[[UP]], %[[II]]
// CHECK:   tensor.extract %{{.+}}[%[[W]], %[[C]]] : tensor<4x6xf32>
// CHECK: } : tensor<3x6xf32>
// the adjoint's sum over the indices
// CHECK: tensor.generate
// CHECK:   scf.for
// CHECK:     arith.cmpi eq
// CHECK:     scf.if
// CHECK:       "warp.add"
// CHECK: } : tensor<4x6xf32>
// CHECK-NOT: warp.tile_
func.func @gather(%a: !warp.array<f32, 2>, %idx: !warp.array<i32, 1>, %out: !warp.array<f32, 2>) {
  %z = arith.constant 0 : i32
  %t = "warp.tile_load"(%a, %z, %z) : (!warp.array<f32, 2>, i32, i32) -> !warp.tile<f32, array<i64: 4, 6>>
  %i = "warp.tile_load"(%idx, %z) : (!warp.array<i32, 1>, i32) -> !warp.tile<i32, array<i64: 3>>
  %g = "warp.tile_gather"(%t, %i) {axis = 0 : i64} : (!warp.tile<f32, array<i64: 4, 6>>, !warp.tile<i32, array<i64: 3>>) -> !warp.tile<f32, array<i64: 3, 6>>
  %s = "warp.tile_gather_add"(%t, %g, %i) {axis = 0 : i64} : (!warp.tile<f32, array<i64: 4, 6>>, !warp.tile<f32, array<i64: 3, 6>>, !warp.tile<i32, array<i64: 3>>) -> !warp.tile<f32, array<i64: 4, 6>>
  "warp.tile_store"(%out, %g, %z, %z) : (!warp.array<f32, 2>, !warp.tile<f32, array<i64: 3, 6>>, i32, i32) -> ()
  "warp.tile_store"(%a, %s, %z, %z) : (!warp.array<f32, 2>, !warp.tile<f32, array<i64: 4, 6>>, i32, i32) -> ()
  return
}
