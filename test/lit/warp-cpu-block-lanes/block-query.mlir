// RUN: mlwarp-opt %s --warp-cpu-block-lanes | FileCheck %s

// A block-wide BVH query (wp.tile_bvh_query_aabb, then `while wp.tile_query_valid(q)` around
// tile_bvh_query_next): its ops (marked warp.block_level by the frontend) run once per block, outside the lane
// loops, and so does the scf.while (its condition and the query it carries are block-level); inside it the lane
// loop threads the item's tile (-1, the item written at element 0) from lane to lane, and each lane untiles its
// own element. The marks are dropped: warp-expand-geometry lowers the ops next.

// CHECK-LABEL: func.func @query
// CHECK: %[[Q:.+]] = "warp.bvh_query_aabb"(%arg0, %arg1, %arg2, %{{.+}}) :
// CHECK-NOT: scf.for
// CHECK: scf.while
// CHECK: %[[N:.+]]:3 = "warp.bvh_query_next"(%{{.+}}) :
// CHECK: %[[NONE:.+]] = "warp.tile_full"
// CHECK: scf.for %[[L:.+]] = %c0 to %{{.+}} step %c1 iter_args(%[[C:.+]] = %[[NONE]])
// CHECK: %[[LANE:.+]] = arith.index_cast %[[L]] : index to i32
// CHECK: %[[T:.+]] = "warp.tile_insert"(%[[C]], %[[N]]#2, %c0_i32)
// CHECK: "warp.tile_extract"(%[[T]], %[[LANE]])
// CHECK: "warp.atomic"
// CHECK: scf.yield
// CHECK-NOT: warp.block_level
module attributes {warp.cpu_lanes = 4 : i64, warp.tiles} {
  func.func @query(%arg0: ui64, %arg1: !warp.vec<3 : i64, f32>, %arg2: !warp.vec<3 : i64, f32>, %arg3: !warp.array<i32, 1 : i64>) attributes {warp.kernel, warp.no_backward} {
    %cst = arith.constant 3.40282347E+38 : f32
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c-1_i32 = arith.constant -1 : i32
    %0 = "warp.bvh_query_aabb"(%arg0, %arg1, %arg2, %c-1_i32) {warp.block_level} : (ui64, !warp.vec<3 : i64, f32>, !warp.vec<3 : i64, f32>, i32) -> !warp.struct<"BvhQueryTiled", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>
    %1 = "warp.struct_set"(%0, %c1_i32) {field = 18 : i64} : (!warp.struct<"BvhQueryTiled", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32) -> !warp.struct<"BvhQueryTiled", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>
    %2 = scf.while (%arg4 = %1) : (!warp.struct<"BvhQueryTiled", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>) -> !warp.struct<"BvhQueryTiled", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]> {
      %3 = "warp.struct_get"(%arg4) {field = 18 : i64} : (!warp.struct<"BvhQueryTiled", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>) -> i32
      %4 = arith.cmpi ne, %3, %c0_i32 : i32
      scf.condition(%4) %arg4 : !warp.struct<"BvhQueryTiled", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>
    } do {
    ^bb0(%arg4: !warp.struct<"BvhQueryTiled", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>):
      %3:3 = "warp.bvh_query_next"(%arg4, %c-1_i32, %cst) {warp.block_level} : (!warp.struct<"BvhQueryTiled", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32, f32) -> (i1, !warp.struct<"BvhQueryTiled", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32)
      %4 = arith.extui %3#0 : i1 to i32
      %5 = "warp.struct_set"(%3#1, %4) {field = 18 : i64} : (!warp.struct<"BvhQueryTiled", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32) -> !warp.struct<"BvhQueryTiled", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>
      %6 = "warp.tile_full"(%c-1_i32) : (i32) -> !warp.tile<i32, array<i64: 4>>
      %7 = "warp.tile_insert"(%6, %3#2, %c0_i32) : (!warp.tile<i32, array<i64: 4>>, i32, i32) -> !warp.tile<i32, array<i64: 4>>
      %8 = "warp.lane_index"() : () -> i32
      %9 = "warp.tile_extract"(%7, %8) : (!warp.tile<i32, array<i64: 4>>, i32) -> i32
      %10 = "warp.ge"(%9, %c0_i32) : (i32, i32) -> i1
      scf.if %10 {
        %11 = "warp.atomic"(%arg3, %c1_i32, %9) {kind = "add"} : (!warp.array<i32, 1 : i64>, i32, i32) -> i32
      }
      scf.yield %5 : !warp.struct<"BvhQueryTiled", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>
    }
    return
  }
}
