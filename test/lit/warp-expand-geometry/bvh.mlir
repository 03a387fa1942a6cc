// RUN: mlwarp-opt %s --warp-expand-geometry | FileCheck %s

// A ray query keeps 1 / dir (Warp's rcp_dir) and starts at the root's preorder index, stopping at its skip.
// CHECK-LABEL: func.func @ray
// CHECK-NOT: warp.bvh_query_ray
// CHECK: "warp.construct"() : () -> !warp.struct<"BvhQueryRay"
// CHECK: arith.divf %cst{{.*}}, %{{.+}} : f32
// CHECK: "warp.struct_set"
func.func @ray(%id: ui64, %s: !warp.vec<3, f32>, %d: !warp.vec<3, f32>, %root: i32) -> !warp.struct<"BvhQueryRay", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]> {
  %q = "warp.bvh_query_ray"(%id, %s, %d, %root) : (ui64, !warp.vec<3, f32>, !warp.vec<3, f32>, i32) -> !warp.struct<"BvhQueryRay", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>
  return %q : !warp.struct<"BvhQueryRay", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>
}

// next: a stackless preorder loop; each step tests either the next item of a packed leaf (scf.if's then:
// its own box) or the next node (else: go to n + 1 on a hit of an inner node, else to skip[n]).
// The per-kind test is chosen by the struct's name: an AABB query compares, no slab arithmetic.
// CHECK-LABEL: func.func @next_aabb
// CHECK: scf.while
// CHECK: scf.if
// CHECK-NOT: arith.mulf
// CHECK: } else {
// CHECK-NOT: arith.mulf
// CHECK: arith.cmpf ogt
// CHECK: return
func.func @next_aabb(%q: !warp.struct<"BvhQueryAabb", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, %i: i32, %m: f32) -> (i1, i32) {
  %f, %q2, %j = "warp.bvh_query_next"(%q, %i, %m) : (!warp.struct<"BvhQueryAabb", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32, f32) -> (i1, !warp.struct<"BvhQueryAabb", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32)
  return %f, %j : i1, i32
}

// The erased BvhQuery dispatches on its kind field (field 1).
// CHECK-LABEL: func.func @next_erased
// CHECK: "warp.struct_get"(%{{.+}}) {field = 1 : i64}
// CHECK: arith.cmpi eq
func.func @next_erased(%q: !warp.struct<"BvhQuery", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, %i: i32, %m: f32) -> (i1, i32) {
  %f, %q2, %j = "warp.bvh_query_next"(%q, %i, %m) : (!warp.struct<"BvhQuery", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32, f32) -> (i1, !warp.struct<"BvhQuery", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32)
  return %f, %j : i1, i32
}

// A block-wide query's op in a module built for CPU lanes (marked warp.block_level) is left for the pass's run
// after warp-cpu-block-lanes; an unmarked one beside it is lowered.
// CHECK-LABEL: func.func @block_level
// CHECK: "warp.bvh_query_next"(%{{.+}}) {warp.block_level}
// CHECK-NOT: "warp.bvh_query_next"
// CHECK: scf.while
// CHECK: return
func.func @block_level(%q: !warp.struct<"BvhQueryAabb", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, %i: i32, %m: f32) -> (i32, i32) {
  %f, %q2, %j = "warp.bvh_query_next"(%q, %i, %m) {warp.block_level} : (!warp.struct<"BvhQueryAabb", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32, f32) -> (i1, !warp.struct<"BvhQueryAabb", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32)
  %g, %q3, %k = "warp.bvh_query_next"(%q, %i, %m) : (!warp.struct<"BvhQueryAabb", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32, f32) -> (i1, !warp.struct<"BvhQueryAabb", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32)
  return %j, %k : i32, i32
}
