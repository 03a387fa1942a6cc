// RUN: mlwarp-opt %s --convert-warp-arrays-to-llvm | FileCheck %s

// warp.stack_array (warp-autodiff's loop tapes): `length` elements allocated where the op is, after a
// stack save that is restored before the block's terminator, so an array made in a loop body is freed
// at the end of each iteration; not zeroed (no memset); a 1-d descriptor of shape `length`, byte stride
// the element's size (a vec3, vector<3xf32> once composites are lowered: 12).

// CHECK-LABEL: func.func @tape
// CHECK: scf.for
// CHECK: %[[SP:.+]] = llvm.intr.stacksave : !llvm.ptr
// CHECK: %[[LEN:.+]] = arith.extsi %{{.+}} : i32 to i64
// CHECK: %[[BUF:.+]] = llvm.alloca %[[LEN]] x !llvm.array<12 x i8> {alignment = 16 : i64}
// CHECK-NOT: memset
// CHECK: llvm.insertvalue %[[BUF]], %{{.+}}[0]
// CHECK: llvm.insertvalue %[[LEN]], %{{.+}}[1, 0]
// CHECK: llvm.insertvalue %{{.+}}, %{{.+}}[2, 0]
// CHECK: llvm.store
// CHECK: llvm.load
// CHECK: llvm.intr.stackrestore %[[SP]] : !llvm.ptr
// CHECK-NEXT: }
// CHECK: return
func.func @tape(%n: i32, %v: vector<3xf32>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %k = %c0 to %n step %c1 : i32 {
    %a = "warp.stack_array"(%n) : (i32) -> !warp.array<vector<3xf32>, 1>
    "warp.store"(%a, %v, %k) : (!warp.array<vector<3xf32>, 1>, vector<3xf32>, i32) -> ()
    %w = "warp.load"(%a, %k) : (!warp.array<vector<3xf32>, 1>, i32) -> vector<3xf32>
    scf.yield
  }
  return
}
