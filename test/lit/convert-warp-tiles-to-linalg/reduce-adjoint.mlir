// RUN: mlwarp-opt %s --convert-warp-tiles-to-linalg | FileCheck %s

// warp.tile_reduce_adjoint (the adjoints of tile_max / tile_min / a product, along an axis): for max, the first
// maximum's position along the axis of each slice (a loop from position 1, a strict warp.gt as tile_argmax's),
// then each element gets its slice's adjoint at that position and zero elsewhere; for mul, each element's slice
// adjoint times the product of the slice's other elements (a loop multiplying by one at its own position).

// CHECK-LABEL: func.func @reduce_adjoints
// CHECK: %[[T:[0-9]+]] = scf.if %{{.+}} -> (tensor<3x4xf32>)
// CHECK: %[[G:[0-9]+]] = scf.if %{{.+}} -> (tensor<3xf32>)
// the positions of the maxima (after the adjoint's load)
// CHECK: } : tensor<3xf32>
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[POS:.+]] = tensor.generate
// CHECK: ^bb0(%[[R:.+]]: index):
// CHECK:   %[[FIRST:.+]] = tensor.extract %[[T]][%[[R]], %{{.+}}] : tensor<3x4xf32>
// CHECK:   %[[FOUND:.+]]:2 = scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[BEST:.+]] = %[[FIRST]], %{{.+}} = %{{.+}}) -> (f32, index)
// CHECK:     %[[X:.+]] = tensor.extract %[[T]][%[[R]], %[[K]]]
// CHECK:     "warp.gt"(%[[X]], %[[BEST]])
// CHECK:   tensor.yield %[[FOUND]]#1 : index
// CHECK: } : tensor<3xindex>
// CHECK: tensor.generate
// CHECK: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK:   %[[P:.+]] = tensor.extract %[[POS]][%[[I]]] : tensor<3xindex>
// CHECK:   %[[HIT:.+]] = arith.cmpi eq, %[[J]], %[[P]] : index
// CHECK:   %[[GI:.+]] = tensor.extract %[[G]][%[[I]]] : tensor<3xf32>
// CHECK:   arith.select %[[HIT]], %[[GI]], %{{.+}} : f32
// CHECK: } : tensor<3x4xf32>
// the product of the others
// CHECK: tensor.generate
// CHECK: ^bb0(%[[I2:.+]]: index, %[[J2:.+]]: index):
// CHECK:   %[[OTHERS:.+]] = scf.for %[[K2:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (f32)
// CHECK:     %[[OWN:.+]] = arith.cmpi eq, %[[K2]], %[[J2]] : index
// CHECK:     %[[Y:.+]] = tensor.extract %[[T]][%[[I2]], %[[K2]]]
// CHECK:     %[[F:.+]] = arith.select %[[OWN]], %{{.+}}, %[[Y]] : f32
// CHECK:     "warp.mul"(%[[ACC]], %[[F]])
// CHECK:   %[[GI2:.+]] = tensor.extract %[[G]][%[[I2]]] : tensor<3xf32>
// CHECK:   "warp.mul"(%[[GI2]], %[[OTHERS]])
// CHECK: } : tensor<3x4xf32>
// CHECK-NOT: warp.tile_
func.func @reduce_adjoints(%a: !warp.array<f32, 2>, %g: !warp.array<f32, 1>) {
  %z = arith.constant 0 : i32
  %t = "warp.tile_load"(%a, %z, %z) : (!warp.array<f32, 2>, i32, i32) -> !warp.tile<f32, array<i64: 3, 4>>
  %gt = "warp.tile_load"(%g, %z) : (!warp.array<f32, 1>, i32) -> !warp.tile<f32, array<i64: 3>>
  %m = "warp.tile_reduce_adjoint"(%t, %gt) {axis = 1 : i64, kind = "max"} : (!warp.tile<f32, array<i64: 3, 4>>, !warp.tile<f32, array<i64: 3>>) -> !warp.tile<f32, array<i64: 3, 4>>
  %p = "warp.tile_reduce_adjoint"(%t, %gt) {axis = 1 : i64, kind = "mul"} : (!warp.tile<f32, array<i64: 3, 4>>, !warp.tile<f32, array<i64: 3>>) -> !warp.tile<f32, array<i64: 3, 4>>
  "warp.tile_store"(%a, %m, %z, %z) : (!warp.array<f32, 2>, !warp.tile<f32, array<i64: 3, 4>>, i32, i32) -> ()
  "warp.tile_store"(%a, %p, %z, %z) : (!warp.array<f32, 2>, !warp.tile<f32, array<i64: 3, 4>>, i32, i32) -> ()
  return
}
