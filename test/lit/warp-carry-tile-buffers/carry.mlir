// RUN: mlwarp-opt %s --warp-carry-tile-buffers | FileCheck %s

// A loop that yields a new buffer under a branch (a tile accumulated under `if` in a loop, as one-shot-bufferize
// leaves it) copies it into its iter_arg at the yield, unless it is the iter_arg itself, and yields the iter_arg:
// the new buffer no longer leaves its iteration.

// CHECK-LABEL: func.func @accumulate_under_branch
// CHECK: scf.for {{.+}} iter_args(%[[ACC:.+]] = %{{.+}})
// CHECK: %[[NEW:.+]] = memref.alloc()
// CHECK: %[[PICKED:.+]] = scf.if
// CHECK: %[[P:.+]] = memref.extract_aligned_pointer_as_index %[[PICKED]]
// CHECK: %[[Q:.+]] = memref.extract_aligned_pointer_as_index %[[ACC]]
// CHECK: %[[DIFFERS:.+]] = arith.cmpi ne, %[[P]], %[[Q]]
// CHECK: scf.if %[[DIFFERS]] {
// CHECK-NEXT: memref.copy %[[PICKED]], %[[ACC]]
// CHECK: scf.yield %[[ACC]] : memref<4xf32>
func.func @accumulate_under_branch(%n: index, %c: i1, %x: f32, %init: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (memref<4xf32>) {
    %new = memref.alloc() : memref<4xf32>
    %picked = scf.if %c -> (memref<4xf32>) {
      memref.store %x, %new[%c0] : memref<4xf32>
      scf.yield %new : memref<4xf32>
    } else {
      scf.yield %acc : memref<4xf32>
    }
    scf.yield %picked : memref<4xf32>
  }
  return %r : memref<4xf32>
}

// Two carried tiles swapped: copying one into the other first would overwrite what the second copy reads, so the
// loop keeps its form.

// CHECK-LABEL: func.func @swap
// CHECK-NOT: memref.copy
// CHECK: scf.yield %{{.+}}, %{{.+}} : memref<4xf32>, memref<4xf32>
func.func @swap(%n: index, %a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a, %y = %b) -> (memref<4xf32>, memref<4xf32>) {
    scf.yield %y, %x : memref<4xf32>, memref<4xf32>
  }
  return
}
