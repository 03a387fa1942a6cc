// RUN: mlwarp-opt %s --convert-warp-tiles-to-linalg | FileCheck %s

// warp.tile_sort: a bottom-up merge sort of the keys' row-major sequence with each key's position, one scf.for
// over the output per run width (5 keys: widths 1, 2, 4, three passes); each step takes the left run's key
// unless the left run is done or the right key is strictly less (stable), the two runs' read positions clamped
// into the tile; then the values gathered through the sorted positions.

// CHECK-LABEL: func.func @sort
// CHECK: %[[POS0:.+]] = tensor.generate
// CHECK: } : tensor<5xindex>
// width 1: runs of two
// CHECK: %[[P1:.+]]:4 = scf.for %[[K:.+]] = %{{.+}} to %[[N:.+]] step %{{.+}} iter_args(%[[OK:.+]] = %{{.+}}, %[[OP:.+]] = %{{.+}}, %[[I:.+]] = %{{.+}}, %[[J:.+]] = %{{.+}}) -> (tensor<5xf32>, tensor<5xindex>, index, index)
// CHECK:   %[[C2:.+]] = arith.constant 2 : index
// CHECK:   %[[PAIR:.+]] = arith.divui %[[K]], %[[C2]] : index
// CHECK:   %[[LO:.+]] = arith.muli %[[PAIR]], %{{.+}} : index
// CHECK:   %[[START:.+]] = arith.cmpi eq, %[[K]], %[[LO]] : index
// CHECK:   %[[II:.+]] = arith.select %[[START]], %[[LO]], %[[I]] : index
// CHECK:   %[[CI:.+]] = arith.minui %[[II]], %{{.+}} : index
// CHECK:   %[[CJ:.+]] = arith.minui
// CHECK:   %[[KI:.+]] = tensor.extract %{{.+}}[%[[CI]]] : tensor<5xf32>
// CHECK:   %[[KJ:.+]] = tensor.extract %{{.+}}[%[[CJ]]] : tensor<5xf32>
// CHECK:   %[[LESS:.+]] = "warp.lt"(%[[KJ]], %[[KI]]) : (f32, f32) -> i1
// CHECK:   %[[TAKE:.+]] = arith.andi
// CHECK:   %[[KEY:.+]] = arith.select %[[TAKE]], %[[KI]], %[[KJ]] : f32
// CHECK:   tensor.insert %[[KEY]] into %[[OK]][%[[K]]] : tensor<5xf32>
// CHECK:   scf.yield
// CHECK: }
// widths 2 and 4
// CHECK: scf.for
// CHECK:   arith.constant 4 : index
// CHECK: scf.for
// CHECK:   arith.constant 8 : index
// CHECK-NOT: scf.for
// the values through the positions
// CHECK: tensor.generate
// CHECK:   %[[SRC:.+]] = tensor.extract %{{.+}}[%{{.+}}] : tensor<5xindex>
// CHECK-NEXT:   tensor.extract %{{.+}}[%[[SRC]]] : tensor<5xi32>
// CHECK: } : tensor<5xi32>
func.func @sort(%k: !warp.array<f32, 1>, %v: !warp.array<i32, 1>) {
  %z = arith.constant 0 : i32
  %a = "warp.tile_load"(%k, %z) : (!warp.array<f32, 1>, i32) -> !warp.tile<f32, array<i64: 5>>
  %b = "warp.tile_load"(%v, %z) : (!warp.array<i32, 1>, i32) -> !warp.tile<i32, array<i64: 5>>
  %s:2 = "warp.tile_sort"(%a, %b) : (!warp.tile<f32, array<i64: 5>>, !warp.tile<i32, array<i64: 5>>) -> (!warp.tile<f32, array<i64: 5>>, !warp.tile<i32, array<i64: 5>>)
  "warp.tile_store"(%k, %s#0, %z) : (!warp.array<f32, 1>, !warp.tile<f32, array<i64: 5>>, i32) -> ()
  "warp.tile_store"(%v, %s#1, %z) : (!warp.array<i32, 1>, !warp.tile<i32, array<i64: 5>>, i32) -> ()
  return
}
