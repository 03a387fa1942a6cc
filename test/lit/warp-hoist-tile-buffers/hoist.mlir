// RUN: mlwarp-opt %s --warp-hoist-tile-buffers | FileCheck %s

// A stack tile buffer allocated under a branch inside a loop (a tile loaded each iteration) moves to the top of
// the function: one buffer for every iteration instead of new stack each one. A buffer an iteration hands on
// (yielded, here through a select) stays in the loop.

// CHECK-LABEL: func.func @k
// CHECK-NEXT: %[[HOISTED:.+]] = memref.alloca() : memref<4x4xf32>
// CHECK: scf.for
// CHECK: scf.if
// CHECK-NOT: memref.alloca() : memref<4x4xf32>
// CHECK: memref.store %{{.+}}, %[[HOISTED]]
// CHECK: scf.for {{.+}} iter_args
// CHECK-NEXT: %[[CARRIED:.+]] = memref.alloca() : memref<2xf32>
// CHECK: arith.select %{{.+}}, %[[CARRIED]]
func.func @k(%n: index, %c: i1, %x: f32, %init: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.if %c {
      %t = memref.alloca() : memref<4x4xf32>
      memref.store %x, %t[%c0, %c0] : memref<4x4xf32>
    }
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (memref<2xf32>) {
    %b = memref.alloca() : memref<2xf32>
    memref.store %x, %b[%c0] : memref<2xf32>
    %s = arith.select %c, %b, %acc : memref<2xf32>
    scf.yield %s : memref<2xf32>
  }
  return
}
