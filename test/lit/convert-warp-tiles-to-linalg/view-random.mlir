// RUN: mlwarp-opt %s --convert-warp-tiles-to-linalg | FileCheck %s

// tile_view: a tensor.generate reading the tile at the offsets plus the view's indices (a view that drops the
// leading dimension reads it at its offset); tile_insert_view (the view's adjoint): a tensor.generate choosing,
// element by element, the part inside the region and the tile outside it.
// tile_random: Warp's PCG from the state (a warp.cast of the uint32 state's bits), then one scf.for over the
// elements in row-major order, each advancing the state and inserting its number.

// CHECK-LABEL: func.func @views
// CHECK-SAME: (%{{[a-z0-9_]+}}: !warp.array<f32, 2 : i64>, %[[I:[a-z0-9_]+]]: i32, %[[J:[a-z0-9_]+]]: i32,
// the tile loaded, then the view: the offsets as indices
// CHECK: %[[T:[0-9]+]] = scf.if %{{.+}} -> (tensor<4x6xf32>)
// CHECK: %[[I0:.+]] = arith.index_cast %[[I]] : i32 to index
// CHECK: %[[J0:.+]] = arith.index_cast %[[J]] : i32 to index
// CHECK: tensor.generate
// CHECK: ^bb0(%[[A:.+]]: index, %[[B:.+]]: index):
// CHECK:   %[[R:.+]] = arith.addi %[[I0]], %[[A]] : index
// CHECK:   %[[C:.+]] = arith.addi %[[J0]], %[[B]] : index
// CHECK:   tensor.extract %[[T]][%[[R]], %[[C]]] : tensor<4x6xf32>
// CHECK: } : tensor<2x3xf32>
// the row: dimension 0 at its offset
// CHECK: tensor.generate
// CHECK: ^bb0(%[[K:.+]]: index):
// CHECK:   %[[COL:.+]] = arith.addi %{{.+}}, %[[K]] : index
// CHECK:   tensor.extract %[[T]][%{{.+}}, %[[COL]]] : tensor<4x6xf32>
// CHECK: } : tensor<6xf32>
// the insertion: inside the region the part's element at the index less the offset, else the tile's
// CHECK: tensor.generate
// CHECK:   %[[DR:.+]] = arith.subi
// CHECK:   arith.cmpi sge
// CHECK:   arith.cmpi slt, %[[DR]]
// CHECK:   %[[DC:.+]] = arith.subi
// CHECK:   scf.if
// CHECK:     tensor.extract %{{.+}}[%[[DR]], %[[DC]]] : tensor<2x3xf32>
// CHECK:   } else {
// CHECK:     tensor.extract %[[T]]
// CHECK: } : tensor<4x6xf32>
// CHECK-NOT: warp.tile_
func.func @views(%a: !warp.array<f32, 2>, %i: i32, %j: i32, %out: !warp.array<f32, 1>) {
  %z = arith.constant 0 : i32
  %t = "warp.tile_load"(%a, %z, %z) : (!warp.array<f32, 2>, i32, i32) -> !warp.tile<f32, array<i64: 4, 6>>
  %v = "warp.tile_view"(%t, %i, %j) {steps = array<i64: 1, 1>} : (!warp.tile<f32, array<i64: 4, 6>>, i32, i32) -> !warp.tile<f32, array<i64: 2, 3>>
  %r = "warp.tile_view"(%t, %i, %z) {steps = array<i64: 0, 1>} : (!warp.tile<f32, array<i64: 4, 6>>, i32, i32) -> !warp.tile<f32, array<i64: 6>>
  %u = "warp.tile_insert_view"(%t, %v, %j, %i) {steps = array<i64: 1, 1>} : (!warp.tile<f32, array<i64: 4, 6>>, !warp.tile<f32, array<i64: 2, 3>>, i32, i32) -> !warp.tile<f32, array<i64: 4, 6>>
  "warp.tile_store"(%out, %r, %z) : (!warp.array<f32, 1>, !warp.tile<f32, array<i64: 6>>, i32) -> ()
  "warp.tile_store"(%a, %u, %z, %z) : (!warp.array<f32, 2>, !warp.tile<f32, array<i64: 4, 6>>, i32, i32) -> ()
  return
}

// CHECK-LABEL: func.func @random
// CHECK: %[[S:.+]] = "warp.cast"(%{{.+}}) : (ui32) -> i32
// CHECK: arith.muli %[[S]]
// CHECK: scf.for %[[N:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[OUT:.+]] = %{{.+}}, %[[ST:.+]] = %{{.+}}) -> (tensor<2x3xi32>, i32)
// CHECK:   arith.muli %[[ST]]
// CHECK:   arith.shrui
// CHECK:   arith.xori
// CHECK:   %[[NEXT:.+]] = arith.xori
// CHECK:   %[[V:.+]] = arith.remui %[[NEXT]], %{{.+}} : i32
// CHECK:   %[[W:.+]] = arith.addi %[[V]], %{{.+}} : i32
// CHECK:   %[[INS:.+]] = tensor.insert %[[W]] into %[[OUT]]
// CHECK:   scf.yield %[[INS]], %[[NEXT]] : tensor<2x3xi32>, i32
// randf: the top 24 bits over 2^24
// CHECK: scf.for
// CHECK:   arith.shrui %{{.+}}, %{{.+}} : i32
// CHECK:   arith.uitofp %{{.+}} : i32 to f32
// CHECK:   arith.mulf %{{.+}} : f32
// CHECK:   tensor.insert
// CHECK-NOT: warp.tile_
func.func @random(%state: ui32, %lo: i32, %hi: i32, %x: !warp.array<i32, 2>, %y: !warp.array<f32, 1>) {
  %z = arith.constant 0 : i32
  %a = "warp.tile_random"(%state, %lo, %hi) {kind = "randi"} : (ui32, i32, i32) -> !warp.tile<i32, array<i64: 2, 3>>
  %b = "warp.tile_random"(%state) {kind = "randf"} : (ui32) -> !warp.tile<f32, array<i64: 4>>
  "warp.tile_store"(%x, %a, %z, %z) : (!warp.array<i32, 2>, !warp.tile<i32, array<i64: 2, 3>>, i32, i32) -> ()
  "warp.tile_store"(%y, %b, %z) : (!warp.array<f32, 1>, !warp.tile<f32, array<i64: 4>>, i32) -> ()
  return
}
