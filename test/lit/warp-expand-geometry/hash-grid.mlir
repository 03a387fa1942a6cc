// RUN: mlwarp-opt %s --warp-expand-geometry | FileCheck %s

// A hash-grid query becomes reads of the grid's descriptor (the id is its address: int64 words, the cell
// width's inverse a float32 at f32 index 16), the cell range of the query box and the first cell's
// [start, end) in the sorted point ids, stored into the state struct field by field.
// CHECK-LABEL: func.func @query
// CHECK-NOT: warp.hash_grid_query"
// CHECK: %[[ADDR:.+]] = "warp.cast"(%arg0) : (ui64) -> i64
// CHECK: "warp.array_from_ptr"(%[[ADDR]], %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (i64, i32) -> !warp.array<i64, 1 : i64>
// CHECK: "warp.array_from_ptr"(%[[ADDR]], %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (i64, i32) -> !warp.array<f32, 1 : i64>
// CHECK: math.floor
// CHECK: arith.fptosi
// A query whose x range is inside the grid (0 <= x_start <= x_end < dim_x) walks whole rows: its state
// keeps x at x_end and the first range is [starts[cell(x_start)], ends[cell(x_start) + x_end - x_start]).
// CHECK: %[[XS:.+]] = arith.select %{{.+}}, %c2147483646_i32, %{{.+}} : i32
// CHECK: arith.cmpi sge, %{{.+}}, %{{.+}} : i64
// CHECK-NEXT: %[[XE:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : i32
// CHECK: %[[GE0:.+]] = arith.cmpi sge, %[[XS]], %c0_i32{{.*}} : i32
// CHECK: %[[LE:.+]] = arith.cmpi sle, %[[XS]], %[[XE]] : i32
// CHECK: %[[IN:.+]] = arith.andi %[[GE0]], %[[LE]] : i1
// CHECK: %[[LT:.+]] = arith.cmpi slt, %[[XE]], %{{.+}} : i32
// CHECK: %[[ROWS:.+]] = arith.andi %[[IN]], %[[LT]] : i1
// CHECK: %[[X:.+]] = arith.select %[[ROWS]], %[[XE]], %[[XS]] : i32
// The cell's coordinates mod dims: the division only for a coordinate outside [0, dim).
// CHECK: %[[INX:.+]] = arith.cmpi ult, %[[XS]], %{{.+}} : i32
// CHECK-NEXT: scf.if %[[INX]] -> (i32) {
// CHECK-NEXT: scf.yield %[[XS]] : i32
// CHECK-NEXT: } else {
// CHECK-NEXT: arith.remsi %[[XS]]
// CHECK: %[[SPAN:.+]] = arith.subi %[[X]], %[[XS]] : i32
// CHECK-NEXT: %[[LAST:.+]] = arith.addi %[[CELL:.+]], %[[SPAN]] : i32
// CHECK: "warp.load"(%{{.+}}, %[[CELL]])
// CHECK: "warp.load"(%{{.+}}, %[[LAST]])
// CHECK: "warp.construct"() : () -> !warp.struct<"Q"
// CHECK-COUNT-12: "warp.struct_set"
func.func @query(%id: ui64, %p: !warp.vec<3, f32>, %r: f32) -> !warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]> {
  %q = "warp.hash_grid_query"(%id, %p, %r) : (ui64, !warp.vec<3, f32>, f32) -> !warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>
  return %q : !warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>
}

// query_next: an scf.while over cells while the current one is used up and the range is not exhausted;
// then the point id (point_ids[cell_index]) or the index as it was.
// CHECK-LABEL: func.func @next
// CHECK-NOT: warp.hash_grid_query_next
// CHECK: scf.while
// CHECK: scf.condition
// CHECK: } do {
// A step of a row walk (x_start..x_end inside the grid) stays at x = x_end and takes the next row's
// range; otherwise Warp's cell-by-cell step.
// CHECK: %[[XS:.+]] = "warp.struct_get"(%{{.+}}) {field = 1 : i64}
// CHECK: %[[XE:.+]] = "warp.struct_get"(%{{.+}}) {field = 4 : i64}
// CHECK: %[[IN:.+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK: arith.cmpi slt, %[[XE]], %{{.+}} : i32
// CHECK: %[[ROWS:.+]] = arith.andi %[[IN]], %{{.+}} : i1
// CHECK: %[[WRAP:.+]] = arith.cmpi sgt, %{{.+}}, %[[XE]] : i32
// CHECK: %[[BACK:.+]] = arith.select %[[ROWS]], %[[XE]], %[[XS]] : i32
// CHECK: arith.select %[[WRAP]], %[[BACK]], %{{.+}} : i32
// CHECK: scf.yield %{{.+}}, %{{.+}} : !warp.struct
// The candidate's id, and a prefetch of the built points' point PREFETCH_AHEAD ids on (a hint: the
// descriptor's HG_POINTS word, an id clamped to the built ones).
// CHECK: %[[ID:.+]] = "warp.load"(%{{.+}}, %{{.+}}) : (!warp.array<i32, 1 : i64>, i32) -> i32
// CHECK: %[[AHEAD:.+]] = arith.addi %{{.+}}, %c4_i32{{.*}} : i32
// CHECK: %[[PID:.+]] = "warp.load"(%{{.+}}, %{{.+}}) : (!warp.array<i32, 1 : i64>, i32) -> i32
// CHECK: "warp.load"(%{{.+}}, %c9_i32{{.*}}) : (!warp.array<i64, 1 : i64>, i32) -> i64
// CHECK: arith.muli %{{.+}}, %c12_i64 : i64
// CHECK: %[[PTR:.+]] = llvm.inttoptr %{{.+}} : i64 to !llvm.ptr
// CHECK: "llvm.intr.prefetch"(%[[PTR]]) <{cache = 1 : i32, hint = 3 : i32, rw = 0 : i32}>
// CHECK: %[[NEXT:.+]] = arith.select %{{.+}}, %[[ID]], %arg1 : i32
// CHECK: return %{{.+}}, %{{.+}}, %[[NEXT]]
func.func @next(%q: !warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, %i: i32) -> (i1, !warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32) {
  %f, %q2, %j = "warp.hash_grid_query_next"(%q, %i) : (!warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32) -> (i1, !warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32)
  return %f, %q2, %j : i1, !warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32
}

// point_id: point_ids[index], or -1 when the grid was never built (capacity word 0).
// CHECK-LABEL: func.func @point_id
// CHECK: %[[BUILT:.+]] = arith.cmpi ne
// CHECK: %[[P:.+]] = "warp.load"(%{{.+}}, %{{.+}}) : (!warp.array<i32, 1 : i64>, i32) -> i32
// CHECK: arith.select %[[BUILT]], %[[P]], %c-1_i32
func.func @point_id(%id: ui64, %i: i32) -> i32 {
  %p = "warp.hash_grid_point_id"(%id, %i) : (ui64, i32) -> i32
  return %p : i32
}

// Functions without geometry ops are left alone.
// CHECK-LABEL: func.func @other
// CHECK-NEXT: return %arg0
func.func @other(%x: i32) -> i32 {
  return %x : i32
}
