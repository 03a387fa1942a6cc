// RUN: mlwarp-opt %s --warp-gpu-cooperative-tiles | FileCheck %s

// A block's tiles in shared memory, each tile op a loop from the lane index in steps of the block's lanes,
// between barriers: the copy of a constant, an element-wise map, a reduction (one lane per output element: here
// lane 0 alone, in the CPU's order), a tile_store's nest (each element once per block), a single element written
// by the lane-local code (every lane). The lane-local code (the memref.load of the sum, the warp.store) stays as it
// is: every lane runs it. The module says how wp.launch_tiled launches it.

// CHECK: module attributes {warp.tiled_launch = "{\22cooperative\22: true, \22shared_bytes\22: 64, \22lane_divergent_tid_positions\22: []}", warp.tiles}
// CHECK-DAG: memref.global "private" @__tile_shared_scale_0 : memref<4xf32, 3> = uninitialized {alignment = 16 : i64}
// CHECK-DAG: memref.global "private" @__tile_shared_scale_1 : memref<2x4xf32, 3> = uninitialized {alignment = 16 : i64}
// CHECK-DAG: memref.global "private" @__tile_shared_scale_2 : memref<f32, 3> = uninitialized {alignment = 16 : i64}
module attributes {warp.tiles} {
  memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<1.0>
  // CHECK-LABEL: func.func @scale
  // CHECK-SAME: warp.cooperative_tiles
  // CHECK: %[[LANE:.+]] = gpu.thread_id x
  // CHECK: %[[LANES:.+]] = gpu.block_dim x
  // CHECK: %[[G0:.+]] = memref.get_global @__tile_shared_scale_0 : memref<4xf32, 3>
  // CHECK: %[[A:.+]] = memref.memory_space_cast %[[G0]] : memref<4xf32, 3> to memref<4xf32>
  // the copy of the constant (tile_zeros' form)
  // CHECK: gpu.barrier
  // CHECK: scf.for %[[I:.+]] = %[[LANE]] to %{{.+}} step %[[LANES]] {
  // CHECK-NEXT:   %[[V:.+]] = memref.load %{{.+}}[%[[I]]] : memref<4xf32>
  // CHECK-NEXT:   memref.store %[[V]], %[[A]][%[[I]]] : memref<4xf32>
  // CHECK-NEXT: }
  // CHECK-NEXT: gpu.barrier
  // the map over the 2x4 elements, broadcasting a row: element f is (f / 4, f % 4)
  // CHECK: %[[B:.+]] = memref.memory_space_cast %{{.+}} : memref<2x4xf32, 3> to memref<2x4xf32>
  // CHECK: gpu.barrier
  // CHECK: %[[EIGHT:.+]] = arith.constant 8 : index
  // CHECK: scf.for %[[F:.+]] = %[[LANE]] to %[[EIGHT]] step %[[LANES]] {
  // CHECK:   %[[COL:.+]] = arith.remui %[[F]], %{{.+}} : index
  // CHECK:   %[[ROW:.+]] = arith.divui %[[F]], %{{.+}} : index
  // CHECK-NEXT:   %[[X:.+]] = memref.load %[[A]][%[[COL]]] : memref<4xf32>
  // CHECK-NEXT:   %{{.+}} = memref.load %[[B]][%[[ROW]], %[[COL]]] : memref<2x4xf32>
  // CHECK-NEXT:   %[[M:.+]] = arith.mulf %[[X]], %{{.+}} : f32
  // CHECK-NEXT:   memref.store %[[M]], %[[B]][%[[ROW]], %[[COL]]] : memref<2x4xf32>
  // CHECK-NEXT: }
  // CHECK-NEXT: gpu.barrier
  // the sum: no parallel dimension, one iteration (lane 0), its reduction loops inside in row-major order
  // CHECK: %[[S:.+]] = memref.memory_space_cast %{{.+}} : memref<f32, 3> to memref<f32>
  // CHECK: gpu.barrier
  // CHECK: %[[ONE:.+]] = arith.constant 1 : index
  // CHECK: scf.for %{{.+}} = %[[LANE]] to %[[ONE]] step %[[LANES]] {
  // CHECK:   scf.for %[[R:.+]] = %{{.+}} to %{{.+}} step
  // CHECK:     scf.for %[[C:.+]] = %{{.+}} to %{{.+}} step
  // CHECK-NEXT:  memref.load %[[B]][%[[R]], %[[C]]]
  // CHECK-NEXT:  memref.load %[[S]][]
  // CHECK-NEXT:  arith.addf
  // CHECK-NEXT:  memref.store %{{.+}}, %[[S]][]
  // CHECK: gpu.barrier
  // CHECK-NEXT: %[[SUM:.+]] = memref.load %[[S]][] : memref<f32>
  // the tile_store: each of the 4 elements once per block
  // CHECK-NEXT: gpu.barrier
  // CHECK: scf.for %[[E:.+]] = %[[LANE]] to %{{.+}} step %[[LANES]] {
  // CHECK-NEXT:   %[[Y:.+]] = memref.load %[[A]][%[[E]]]
  // CHECK-NEXT:   %[[E32:.+]] = arith.index_cast %[[E]]
  // CHECK-NEXT:   "warp.store"(%arg0, %[[Y]], %[[E32]])
  // CHECK-NEXT: }
  // CHECK-NEXT: gpu.barrier
  // the element written by the lane-local code: by every lane (its own index and value), between barriers
  // CHECK: gpu.barrier
  // CHECK-NEXT: memref.store %[[SUM]], %[[A]][%{{.+}}]
  // CHECK-NEXT: gpu.barrier
  // CHECK-NOT: memref.alloca
  // CHECK-NOT: linalg.
  // CHECK: return
  func.func @scale(%arg0: !warp.array<f32, 1 : i64>) attributes {warp.kernel} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %cst = arith.constant 2.0 : f32
    %zero = arith.constant 0.0 : f32
    %0 = memref.get_global @__constant_4xf32 : memref<4xf32>
    %a = memref.alloca() : memref<4xf32>
    memref.copy %0, %a : memref<4xf32> to memref<4xf32>
    %b = memref.alloca() : memref<2x4xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]} ins(%a : memref<4xf32>) outs(%b : memref<2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %cst : f32
      linalg.yield %m : f32
    }
    %s = memref.alloca() : memref<f32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                    iterator_types = ["reduction", "reduction"]} ins(%b : memref<2x4xf32>) outs(%s : memref<f32>) {
    ^bb0(%in: f32, %out: f32):
      %sum = arith.addf %out, %in : f32
      linalg.yield %sum : f32
    }
    %v = memref.load %s[] : memref<f32>
    scf.for %i = %c0 to %c4 step %c1 {
      %x = memref.load %a[%i] : memref<4xf32>
      %i32 = arith.index_cast %i : index to i32
      "warp.store"(%arg0, %x, %i32) : (!warp.array<f32, 1 : i64>, f32, i32) -> ()
    } {warp.writes_tile = "tile_store"}
    memref.store %v, %a[%c0] : memref<4xf32>
    return
  }
}
