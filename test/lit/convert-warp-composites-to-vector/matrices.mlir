// RUN: mlwarp-opt %s --convert-warp-composites-to-vector | FileCheck %s

// A 2x3 matrix is vector<6 x T>, its rows concatenated.

// CHECK-LABEL: func.func @mat_vec
// CHECK-SAME: (%[[M:.+]]: vector<6xf32>, %[[V:.+]]: vector<3xf32>) -> vector<2xf32>
// CHECK: %[[R0:.+]] = vector.shuffle %[[M]], %[[M]] [0, 1, 2] : vector<6xf32>, vector<6xf32>
// CHECK: %[[R1:.+]] = vector.shuffle %[[M]], %[[M]] [3, 4, 5] : vector<6xf32>, vector<6xf32>
// CHECK: arith.mulf %[[R0]], %[[V]] : vector<3xf32>
// CHECK: arith.mulf %[[R1]], %[[V]] : vector<3xf32>
// CHECK: vector.from_elements %{{.+}}, %{{.+}} : vector<2xf32>
func.func @mat_vec(%m: !warp.mat<2, 3, f32>, %v: !warp.vec<3, f32>) -> !warp.vec<2, f32> {
  %0 = "warp.mul"(%m, %v) : (!warp.mat<2, 3, f32>, !warp.vec<3, f32>) -> !warp.vec<2, f32>
  return %0 : !warp.vec<2, f32>
}

// CHECK-LABEL: func.func @transpose
// CHECK: vector.shuffle %arg0, %arg0 [0, 3, 1, 4, 2, 5] : vector<6xf32>, vector<6xf32>
func.func @transpose(%m: !warp.mat<2, 3, f32>) -> !warp.mat<3, 2, f32> {
  %0 = "warp.transpose"(%m) : (!warp.mat<2, 3, f32>) -> !warp.mat<3, 2, f32>
  return %0 : !warp.mat<3, 2, f32>
}

// m[1, 2] is element 1*3+2; a row m[i] with a dynamic i reads i*3 + j.
// CHECK-LABEL: func.func @elements
// CHECK: vector.extract %arg0[5] : f32 from vector<6xf32>
// CHECK: %[[BASE:.+]] = arith.muli %arg1, %{{.+}} : i32
// CHECK: arith.index_cast %[[BASE]] : i32 to index
// CHECK: %[[B1:.+]] = arith.addi %[[BASE]], %{{.+}} : i32
// CHECK: arith.index_cast %[[B1]] : i32 to index
// CHECK: vector.from_elements %{{.+}}, %{{.+}}, %{{.+}} : vector<3xf32>
func.func @elements(%m: !warp.mat<2, 3, f32>, %i: i32) -> (f32, !warp.vec<3, f32>) {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %e = "warp.extract"(%m, %c1, %c2) : (!warp.mat<2, 3, f32>, i32, i32) -> f32
  %r = "warp.extract"(%m, %i) : (!warp.mat<2, 3, f32>, i32) -> !warp.vec<3, f32>
  return %e, %r : f32, !warp.vec<3, f32>
}
