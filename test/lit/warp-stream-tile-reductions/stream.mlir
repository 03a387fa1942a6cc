// RUN: mlwarp-opt %s --warp-stream-tile-reductions | FileCheck %s
// RUN: mlwarp-opt %s --warp-stream-tile-reductions="row-vectors=false" | FileCheck %s --check-prefix=ELEMENTS

// A whole-tile reduction of a tile loaded only to be reduced becomes a loop over the array's elements at the
// load's place: each element is the one the load would read (zero past the array's upper extent), combined in
// row-major order from the same first value as the tensor reduction (the sum from -0.0; max/min from element
// (0, 0)), 16 elements of a row an iteration (8 for a row of 8). The result is a tile of shape (1,) again (warp.tile_full), for the ops that use it.

// On the CPU (the default) a step's 16 elements are one vector load when they lie inside a contiguous row (the
// inner stride, from the array's first two elements, is the same for every step: hoisted), the rare other
// case element by element (llvm.intr.expect: LLVM moves it out of the loads' way); the vector's lanes are
// then added one by one, in order.
// CHECK-LABEL: func.func @sum(
// CHECK-SAME: %[[A:.+]]: !warp.array<f32, 1 : i64>, %[[OUT:.+]]: !warp.array<f32, 1 : i64>)
// CHECK: %[[OFF:.+]] = "warp.mul"
// CHECK-NOT: warp.tile_load
// CHECK: %[[NEG0:.+]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[C16:.+]] = arith.constant 16 : i32
// CHECK: %[[SUM:.+]] = scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %[[C16]] iter_args(%[[ACC:.+]] = %[[NEG0]]) -> (f32)
// CHECK:   %[[P:.+]] = arith.addi %[[OFF]], %[[K]] : i32
// CHECK:   %[[LAST:.+]] = arith.addi %[[P]], %{{.+}} : i32
// CHECK:   %[[STRIDE:.+]] = arith.subi
// CHECK:   %[[CONTIGUOUS:.+]] = arith.cmpi eq, %[[STRIDE]], %{{.+}} : i64
// CHECK:   %[[INSIDE:.+]] = arith.cmpi slt, %[[LAST]], %{{.+}} : i32
// CHECK:   %[[FITS:.+]] = arith.andi %[[INSIDE]], %[[CONTIGUOUS]] : i1
// CHECK:   %[[LIKELY:.+]] = llvm.intr.expect %[[FITS]]
// CHECK:   %[[V:.+]] = scf.if %[[LIKELY]] -> (vector<16xf32>) {
// CHECK:     %[[AT:.+]] = "warp.address"(%[[A]], %[[P]])
// CHECK:     llvm.load %[[AT]] {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK:   } else {
// CHECK-COUNT-16: "warp.load"
// CHECK:     vector.from_elements
// CHECK:   }
// CHECK:   %[[X0:.+]] = vector.extract %[[V]][0] : f32 from vector<16xf32>
// CHECK:   %[[S0:.+]] = "warp.add"(%[[ACC]], %[[X0]]) : (f32, f32) -> f32
// CHECK:   %[[X1:.+]] = vector.extract %[[V]][1] : f32 from vector<16xf32>
// CHECK:   "warp.add"(%[[S0]], %[[X1]]) : (f32, f32) -> f32
// CHECK-COUNT-14: "warp.add"
// CHECK-NOT: "warp.add"
// CHECK:   scf.yield %{{.+}} : f32
// CHECK: %[[TILE:.+]] = "warp.tile_full"(%[[SUM]]) : (f32) -> !warp.tile<f32, array<i64: 1>>
// CHECK: "warp.tile_atomic_add"(%[[OUT]], %[[TILE]], %{{.+}})
// CHECK-NOT: warp.tile_reduce

// With row-vectors=false (CUDA), element by element: each element the load would read, zero past the extent.
// ELEMENTS-LABEL: func.func @sum(
// ELEMENTS-SAME: %[[A:.+]]: !warp.array<f32, 1 : i64>, %[[OUT:.+]]: !warp.array<f32, 1 : i64>)
// ELEMENTS: %[[OFF:.+]] = "warp.mul"
// ELEMENTS: %[[NEG0:.+]] = arith.constant -0.000000e+00 : f32
// ELEMENTS: %[[SUM:.+]] = scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[NEG0]]) -> (f32)
// ELEMENTS:   %[[P:.+]] = arith.addi %[[OFF]], %[[K]] : i32
// ELEMENTS:   %[[DIM:.+]] = "warp.array_dim"(%[[A]]) {dim = 0 : i64}
// ELEMENTS:   %[[IN:.+]] = arith.cmpi slt, %[[P]], %[[DIM]] : i32
// ELEMENTS:   %[[X:.+]] = scf.if %[[IN]] -> (f32) {
// ELEMENTS:     "warp.load"(%[[A]], %[[P]])
// ELEMENTS:   } else {
// ELEMENTS:     arith.constant 0.000000e+00 : f32
// ELEMENTS:   %[[NEXT:.+]] = "warp.add"(%[[ACC]], %[[X]]) : (f32, f32) -> f32
// ELEMENTS:   %[[K1:.+]] = arith.addi %[[K]], %{{.+}} : i32
// ELEMENTS:   arith.addi %[[OFF]], %[[K1]] : i32
// ELEMENTS:   "warp.add"(%[[NEXT]], %{{.+}}) : (f32, f32) -> f32
// ELEMENTS-COUNT-14: "warp.add"
// ELEMENTS-NOT: "warp.add"
// ELEMENTS-NOT: vector
// ELEMENTS:   scf.yield %{{.+}} : f32
// ELEMENTS: "warp.tile_full"(%[[SUM]])

// A 2-d tile of ints by max: from element (0, 0) (zero if it lies past the array), rows then columns.
// CHECK-LABEL: func.func @max2d(
// CHECK: %[[FIRST:.+]] = scf.if %{{.+}} -> (i32) {
// CHECK: %[[ROWS:.+]] = scf.for %[[R:.+]] = %{{.+}} iter_args(%[[RACC:.+]] = %[[FIRST]]) -> (i32)
// CHECK:   %[[COLS:.+]] = scf.for %[[C:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[CACC:.+]] = %[[RACC]]) -> (i32)
// CHECK:     arith.addi %{{.+}}, %[[R]] : i32
// CHECK:     arith.addi %{{.+}}, %[[C]] : i32
// CHECK:     "warp.max"(%[[CACC]], %{{.+}}) : (i32, i32) -> i32
// CHECK-COUNT-7: "warp.max"
// CHECK-NOT: "warp.max"
// CHECK:     scf.yield
// CHECK:   scf.yield %[[COLS]]
// CHECK: "warp.tile_full"(%[[ROWS]])

// Left alone: argmax, a reduction along an axis, a loaded tile that is also stored, a tile of vectors.
// CHECK-LABEL: func.func @left_alone(
// CHECK: "warp.tile_reduce"(%{{.+}}) {axis = -1 : i64, kind = "argmax"}
// CHECK: "warp.tile_reduce"(%{{.+}}) {axis = 0 : i64, kind = "add"}
// CHECK: %[[STORED:.+]] = "warp.tile_load"
// CHECK: "warp.tile_reduce"(%[[STORED]]) {axis = -1 : i64, kind = "add"}
// CHECK: "warp.tile_store"(%{{.+}}, %[[STORED]]
// CHECK: "warp.tile_reduce"(%{{.+}}) {axis = -1 : i64, kind = "add"} : (!warp.tile<!warp.vec<3 : i64, f32>, array<i64: 16>>)
// CHECK-NOT: scf.for

module attributes {warp.tiles} {
  func.func @sum(%a: !warp.array<f32, 1 : i64>, %out: !warp.array<f32, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %0 = "warp.tid"() : () -> i32
    %1 = "warp.mul"(%0, %c64) : (i32, i32) -> i32
    %t = "warp.tile_load"(%a, %1) : (!warp.array<f32, 1 : i64>, i32) -> !warp.tile<f32, array<i64: 64>>
    %r = "warp.tile_reduce"(%t) {axis = -1 : i64, kind = "add"} : (!warp.tile<f32, array<i64: 64>>) -> !warp.tile<f32, array<i64: 1>>
    %previous_unread = "warp.tile_atomic_add"(%out, %r, %c0) : (!warp.array<f32, 1 : i64>, !warp.tile<f32, array<i64: 1>>, i32) -> !warp.tile<f32, array<i64: 1>>
    return
  }
  func.func @max2d(%a: !warp.array<i32, 2 : i64>, %i: i32, %j: i32) -> !warp.tile<i32, array<i64: 1>> {
    %t = "warp.tile_load"(%a, %i, %j) : (!warp.array<i32, 2 : i64>, i32, i32) -> !warp.tile<i32, array<i64: 4, 8>>
    %r = "warp.tile_reduce"(%t) {axis = -1 : i64, kind = "max"} : (!warp.tile<i32, array<i64: 4, 8>>) -> !warp.tile<i32, array<i64: 1>>
    return %r : !warp.tile<i32, array<i64: 1>>
  }
  func.func @left_alone(%a: !warp.array<f32, 2 : i64>, %b: !warp.array<f32, 2 : i64>, %v: !warp.array<!warp.vec<3 : i64, f32>, 1 : i64>, %i: i32) -> (!warp.tile<i32, array<i64: 1>>, !warp.tile<f32, array<i64: 8>>, !warp.tile<f32, array<i64: 1>>, !warp.tile<!warp.vec<3 : i64, f32>, array<i64: 1>>) {
    %t0 = "warp.tile_load"(%a, %i, %i) : (!warp.array<f32, 2 : i64>, i32, i32) -> !warp.tile<f32, array<i64: 4, 8>>
    %r0 = "warp.tile_reduce"(%t0) {axis = -1 : i64, kind = "argmax"} : (!warp.tile<f32, array<i64: 4, 8>>) -> !warp.tile<i32, array<i64: 1>>
    %t1 = "warp.tile_load"(%a, %i, %i) : (!warp.array<f32, 2 : i64>, i32, i32) -> !warp.tile<f32, array<i64: 4, 8>>
    %r1 = "warp.tile_reduce"(%t1) {axis = 0 : i64, kind = "add"} : (!warp.tile<f32, array<i64: 4, 8>>) -> !warp.tile<f32, array<i64: 8>>
    %t2 = "warp.tile_load"(%a, %i, %i) : (!warp.array<f32, 2 : i64>, i32, i32) -> !warp.tile<f32, array<i64: 4, 8>>
    %r2 = "warp.tile_reduce"(%t2) {axis = -1 : i64, kind = "add"} : (!warp.tile<f32, array<i64: 4, 8>>) -> !warp.tile<f32, array<i64: 1>>
    "warp.tile_store"(%b, %t2, %i, %i) : (!warp.array<f32, 2 : i64>, !warp.tile<f32, array<i64: 4, 8>>, i32, i32) -> ()
    %t3 = "warp.tile_load"(%v, %i) : (!warp.array<!warp.vec<3 : i64, f32>, 1 : i64>, i32) -> !warp.tile<!warp.vec<3 : i64, f32>, array<i64: 16>>
    %r3 = "warp.tile_reduce"(%t3) {axis = -1 : i64, kind = "add"} : (!warp.tile<!warp.vec<3 : i64, f32>, array<i64: 16>>) -> !warp.tile<!warp.vec<3 : i64, f32>, array<i64: 1>>
    return %r0, %r1, %r2, %r3 : !warp.tile<i32, array<i64: 1>>, !warp.tile<f32, array<i64: 8>>, !warp.tile<f32, array<i64: 1>>, !warp.tile<!warp.vec<3 : i64, f32>, array<i64: 1>>
  }
}
