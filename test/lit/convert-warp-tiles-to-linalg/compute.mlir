// RUN: mlwarp-opt %s --convert-warp-tiles-to-linalg | FileCheck %s

// Element-wise builtins, reductions, matmul, transpose and broadcast become linalg.generic ops; the element
// computation in each body stays a warp builtin (lowered later with the others by
// convert-warp-builtins-to-arith). A scalar operand is used in the body as it is.

// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[TO0:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[MK:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[KN:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[MN:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[T:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @compute
// CHECK-SAME: (%{{.+}}, %[[S:.+]]: f32)

// t * s
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A:[a-z0-9_]+]] : tensor<2x3xf32>)
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK:   %[[M:.+]] = "warp.mul"(%[[X]], %[[S]]) : (f32, f32) -> f32
// CHECK:   linalg.yield %[[M]] : f32

// tile_sum: every dimension reduced, in row-major order, into a 0-d tensor from -0.0 (so a tile of -0.0 sums to
// -0.0, as Warp's sum from the first element), then a tensor of shape (1,)
// CHECK: %[[NZ:.+]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[Z0:[a-z0-9_]+]] = tensor.from_elements %[[NZ]] : tensor<f32>
// CHECK: %[[RED:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[TO0]]], iterator_types = ["reduction", "reduction"]}
// CHECK-SAME: ins(%[[A]] : tensor<2x3xf32>) outs(%[[Z0]] : tensor<f32>)
// CHECK:   "warp.add"
// CHECK: %[[SUM:.+]] = tensor.extract %[[RED]][] : tensor<f32>
// CHECK: tensor.from_elements %[[SUM]] : tensor<1xf32>

// tile_argmax: the value and its flat index, the first of equal maxima kept (a strict greater-than)
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[TO0]], #[[TO0]]], iterator_types = ["reduction", "reduction"]}
// CHECK:   linalg.index 0
// CHECK:   linalg.index 1
// CHECK:   "warp.gt"
// CHECK:   arith.select
// CHECK: tensor<1xi32>

// tile_matmul over (m, k, n): acc[m, n] += a[m, k] * b[k, n], n innermost (contiguous in b and acc: the loop
// LLVM vectorises), each acc[m, n] still summed in increasing k; float operands alike: arith in the body
// (a contraction linalg's vectoriser reads; `contract`: each product fused with its addition) and warp.tile_matmul on the op (warp-cpu-vectorize-tile-matmul's)
// CHECK: linalg.generic {indexing_maps = [#[[MK]], #[[KN]], #[[MN]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: attrs = {warp.tile_matmul}
// CHECK:   %[[P:.+]] = arith.mulf {{.+}} fastmath<contract> : f32
// CHECK:   arith.addf %{{.+}}, %[[P]] fastmath<contract> : f32

// transpose and broadcast: the input's map
// CHECK: linalg.generic {indexing_maps = [#[[T]], #[[ID2]]]
// (the broadcast's input map (d0, d1, d2) -> (d1, d2) is the matmul's b map: one #map)
// CHECK: linalg.generic {indexing_maps = [#[[KN]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-NOT: warp.tile_
func.func @compute(%a: !warp.array<f32, 2>, %b: !warp.array<f32, 2>, %out: !warp.array<f32, 1>, %idx: !warp.array<i32, 1>, %c: !warp.array<f32, 2>, %d: !warp.array<f32, 3>, %s: f32) {
  %i0 = arith.constant 0 : i32
  %ta = "warp.tile_load"(%a, %i0, %i0) : (!warp.array<f32, 2>, i32, i32) -> !warp.tile<f32, array<i64: 2, 3>>
  %tb = "warp.tile_load"(%b, %i0, %i0) : (!warp.array<f32, 2>, i32, i32) -> !warp.tile<f32, array<i64: 3, 2>>
  %m = "warp.mul"(%ta, %s) : (!warp.tile<f32, array<i64: 2, 3>>, f32) -> !warp.tile<f32, array<i64: 2, 3>>
  %sum = "warp.tile_reduce"(%ta) {axis = -1 : i64, kind = "add"} : (!warp.tile<f32, array<i64: 2, 3>>) -> !warp.tile<f32, array<i64: 1>>
  "warp.tile_store"(%out, %sum, %i0) : (!warp.array<f32, 1>, !warp.tile<f32, array<i64: 1>>, i32) -> ()
  %arg = "warp.tile_reduce"(%ta) {axis = -1 : i64, kind = "argmax"} : (!warp.tile<f32, array<i64: 2, 3>>) -> !warp.tile<i32, array<i64: 1>>
  "warp.tile_store"(%idx, %arg, %i0) : (!warp.array<i32, 1>, !warp.tile<i32, array<i64: 1>>, i32) -> ()
  %z = arith.constant 0.0 : f32
  %acc = "warp.tile_full"(%z) : (f32) -> !warp.tile<f32, array<i64: 2, 2>>
  %p = "warp.tile_matmul"(%ta, %tb, %acc) : (!warp.tile<f32, array<i64: 2, 3>>, !warp.tile<f32, array<i64: 3, 2>>, !warp.tile<f32, array<i64: 2, 2>>) -> !warp.tile<f32, array<i64: 2, 2>>
  "warp.tile_store"(%c, %p, %i0, %i0) : (!warp.array<f32, 2>, !warp.tile<f32, array<i64: 2, 2>>, i32, i32) -> ()
  %t = "warp.tile_transpose"(%m) : (!warp.tile<f32, array<i64: 2, 3>>) -> !warp.tile<f32, array<i64: 3, 2>>
  "warp.tile_store"(%b, %t, %i0, %i0) : (!warp.array<f32, 2>, !warp.tile<f32, array<i64: 3, 2>>, i32, i32) -> ()
  %bc = "warp.tile_broadcast"(%ta) : (!warp.tile<f32, array<i64: 2, 3>>) -> !warp.tile<f32, array<i64: 4, 2, 3>>
  "warp.tile_store"(%d, %bc, %i0, %i0, %i0) : (!warp.array<f32, 3>, !warp.tile<f32, array<i64: 4, 2, 3>>, i32, i32, i32) -> ()
  return
}

// An integer tile_matmul keeps warp builtins in its body and no warp.tile_matmul: it stays loops.
// CHECK-LABEL: func.func @int_matmul
// CHECK: linalg.generic
// CHECK-NOT: warp.tile_matmul
// CHECK:   %[[P:.+]] = "warp.mul"
// CHECK:   "warp.add"(%{{.+}}, %[[P]])
func.func @int_matmul(%a: !warp.array<i32, 2>, %c: !warp.array<i32, 2>) {
  %i0 = arith.constant 0 : i32
  %ta = "warp.tile_load"(%a, %i0, %i0) : (!warp.array<i32, 2>, i32, i32) -> !warp.tile<i32, array<i64: 2, 2>>
  %acc = "warp.tile_full"(%i0) : (i32) -> !warp.tile<i32, array<i64: 2, 2>>
  %p = "warp.tile_matmul"(%ta, %ta, %acc) : (!warp.tile<i32, array<i64: 2, 2>>, !warp.tile<i32, array<i64: 2, 2>>, !warp.tile<i32, array<i64: 2, 2>>) -> !warp.tile<i32, array<i64: 2, 2>>
  "warp.tile_store"(%c, %p, %i0, %i0) : (!warp.array<i32, 2>, !warp.tile<i32, array<i64: 2, 2>>, i32, i32) -> ()
  return
}
