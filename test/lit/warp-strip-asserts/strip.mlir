// RUN: mlwarp-opt %s --warp-strip-asserts | FileCheck %s

// A release build: each warp.assert is erased (Warp compiles C's assert out of release builds); the ops that
// computed its condition stay (the usual dead-code elimination takes the pure ones), and so does everything else.

// CHECK-LABEL: func.func @k(
// CHECK: %[[X:.+]] = "warp.load"
// CHECK: "warp.ge"(%[[X]], %{{.+}})
// CHECK-NOT: warp.assert
// CHECK: "warp.store"(%arg0, %[[X]], %arg1)
// CHECK-NOT: warp.assert
// CHECK: return
func.func @k(%a: !warp.array<f32, 1>, %i: i32) attributes {warp.kernel} {
  %x = "warp.load"(%a, %i) : (!warp.array<f32, 1>, i32) -> f32
  %zero = arith.constant 0.0 : f32
  %ok = "warp.ge"(%x, %zero) : (f32, f32) -> i1
  "warp.assert"(%ok) {message = "assert a[i] >= 0.0"} : (i1) -> ()
  "warp.store"(%a, %x, %i) : (!warp.array<f32, 1>, f32, i32) -> ()
  return
}
