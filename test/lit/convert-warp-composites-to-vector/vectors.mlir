// RUN: mlwarp-opt %s --convert-warp-composites-to-vector | FileCheck %s

// Vectors become 1-D MLIR vectors; construct/extract/insert become vector ops,
// component-wise builtins arith ops on whole vectors, a scalar operand is broadcast.

// CHECK-LABEL: func.func @components
// CHECK-SAME: (%[[X:.+]]: f32, %[[Y:.+]]: f32, %[[I:.+]]: i32) -> (vector<3xf32>, f32, f32)
// CHECK: %[[V:.+]] = vector.from_elements %[[X]], %[[Y]], %[[X]] : vector<3xf32>
// CHECK: %[[W:.+]] = vector.insert %[[Y]], %[[V]] [2] : f32 into vector<3xf32>
// CHECK: %[[E:.+]] = vector.extract %[[W]][1] : f32 from vector<3xf32>
// A dynamic position is clamped to the last component (minui: a negative i32 is past it too), so that one that
// folds to a constant out of range never becomes an invalid static position.
// CHECK: %[[LAST:.+]] = arith.constant 2 : index
// CHECK: %[[IDX:.+]] = arith.index_cast %[[I]] : i32 to index
// CHECK: %[[POS:.+]] = arith.minui %[[IDX]], %[[LAST]] : index
// CHECK: %[[D:.+]] = vector.extract %[[W]][%[[POS]]] : f32 from vector<3xf32>
// CHECK: return %[[W]], %[[E]], %[[D]]
func.func @components(%x: f32, %y: f32, %i: i32) -> (!warp.vec<3, f32>, f32, f32) {
  %v = "warp.construct"(%x, %y, %x) : (f32, f32, f32) -> !warp.vec<3, f32>
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %w = "warp.insert"(%v, %y, %c2) : (!warp.vec<3, f32>, f32, i32) -> !warp.vec<3, f32>
  %e = "warp.extract"(%w, %c1) : (!warp.vec<3, f32>, i32) -> f32
  %d = "warp.extract"(%w, %i) : (!warp.vec<3, f32>, i32) -> f32
  return %w, %e, %d : !warp.vec<3, f32>, f32, f32
}

// A constant position out of range (undefined in Warp; code that a branch makes dead can hold one once @wp.func
// calls are inlined and loops unrolled) is the last component, not an invalid vector.insert/extract.
// CHECK-LABEL: func.func @constant_out_of_range
// CHECK: %[[V:.+]] = vector.insert %arg1, %arg0 [2] : f32 into vector<3xf32>
// CHECK: vector.extract %[[V]][2] : f32 from vector<3xf32>
func.func @constant_out_of_range(%v: !warp.vec<3, f32>, %y: f32) -> f32 {
  %c3 = arith.constant 3 : i32
  %cm1 = arith.constant -1 : i32
  %w = "warp.insert"(%v, %y, %c3) : (!warp.vec<3, f32>, f32, i32) -> !warp.vec<3, f32>
  %e = "warp.extract"(%w, %cm1) : (!warp.vec<3, f32>, i32) -> f32
  return %e : f32
}

// CHECK-LABEL: func.func @arithmetic
// CHECK: %[[S:.+]] = arith.addf %arg0, %arg1 : vector<3xf32>
// CHECK: %[[B:.+]] = vector.broadcast %arg2 : f32 to vector<3xf32>
// CHECK: %[[M:.+]] = arith.mulf %[[S]], %[[B]] : vector<3xf32>
// CHECK: arith.negf %[[M]] : vector<3xf32>
func.func @arithmetic(%a: !warp.vec<3, f32>, %b: !warp.vec<3, f32>, %s: f32) -> !warp.vec<3, f32> {
  %0 = "warp.add"(%a, %b) : (!warp.vec<3, f32>, !warp.vec<3, f32>) -> !warp.vec<3, f32>
  %1 = "warp.mul"(%0, %s) : (!warp.vec<3, f32>, f32) -> !warp.vec<3, f32>
  %2 = "warp.neg"(%1) : (!warp.vec<3, f32>) -> !warp.vec<3, f32>
  return %2 : !warp.vec<3, f32>
}

// dot multiplies component-wise, then adds left to right (Warp's order).
// CHECK-LABEL: func.func @dot
// CHECK: %[[P:.+]] = arith.mulf %arg0, %arg1 : vector<3xf32>
// CHECK-DAG: %[[P0:.+]] = vector.extract %[[P]][0]
// CHECK-DAG: %[[P1:.+]] = vector.extract %[[P]][1]
// CHECK-DAG: %[[P2:.+]] = vector.extract %[[P]][2]
// CHECK: %[[S01:.+]] = arith.addf %[[P0]], %[[P1]] : f32
// CHECK: arith.addf %[[S01]], %[[P2]] : f32
func.func @dot(%a: !warp.vec<3, f32>, %b: !warp.vec<3, f32>) -> f32 {
  %0 = "warp.dot"(%a, %b) : (!warp.vec<3, f32>, !warp.vec<3, f32>) -> f32
  return %0 : f32
}

// Unsigned vectors lower to signless vectors but keep unsigned semantics; a
// scalar result for the not-yet-lowered rest of the kernel is bridged by a cast.
// CHECK-LABEL: func.func @unsigned
// CHECK: arith.divui %{{.+}}, %{{.+}} : vector<2xi32>
// CHECK: arith.cmpi ugt
// CHECK: builtin.unrealized_conversion_cast %{{.+}} : i32 to ui32
func.func @unsigned(%a: !warp.vec<2, ui32>, %b: !warp.vec<2, ui32>) -> (!warp.vec<2, ui32>, ui32) {
  %0 = "warp.cw_div"(%a, %b) : (!warp.vec<2, ui32>, !warp.vec<2, ui32>) -> !warp.vec<2, ui32>
  %1 = "warp.max"(%a) : (!warp.vec<2, ui32>) -> ui32
  return %0, %1 : !warp.vec<2, ui32>, ui32
}
