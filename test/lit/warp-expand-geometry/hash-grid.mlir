// RUN: mlwarp-opt %s --warp-expand-geometry | FileCheck %s

// A hash-grid query becomes reads of the grid's descriptor (the id is its address: int64 words, the cell
// width's inverse of a float32 query a float32 at f32 index 16), the cell range of the query box and the first cell's
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
// CHECK: %[[INSIDE:.+]] = arith.andi %[[IN]], %[[LT]] : i1
// A grouped query (the call's flag and the grid's HG_HAS_GROUPS word) steps cell by cell.
// CHECK: %[[UNGROUPED:.+]] = arith.cmpi eq, %[[GROUPED:.+]], %c0_i32{{.*}} : i32
// CHECK: %[[ROWS:.+]] = arith.andi %[[INSIDE]], %[[UNGROUPED]] : i1
// CHECK: %[[X:.+]] = arith.select %[[ROWS]], %[[XE]], %[[XS]] : i32
// The cell's coordinates mod dims: the division only for a coordinate outside [0, dim).
// CHECK: %[[INX:.+]] = arith.cmpi ult, %[[XS]], %{{.+}} : i32
// CHECK-NEXT: scf.if %[[INX]] -> (i32) {
// CHECK-NEXT: scf.yield %[[XS]] : i32
// CHECK-NEXT: } else {
// CHECK-NEXT: arith.remsi %[[XS]]
// CHECK: %[[SPAN:.+]] = arith.subi %[[X]], %[[XS]] : i32
// CHECK-NEXT: %[[LAST:.+]] = arith.addi %[[CELL:.+]], %[[SPAN]] : i32
// CHECK: %[[START:.+]] = "warp.load"(%{{.+}}, %[[CELL]])
// CHECK: %[[END:.+]] = "warp.load"(%{{.+}}, %[[LAST]])
// A grouped query narrows the cell's range to its group's points: two binary searches (lower bounds) over the
// sorted positions' groups, compared as uint32.
// CHECK: %[[NARROW:.+]] = arith.cmpi ne, %[[GROUPED]], %c0_i32{{.*}} : i32
// CHECK-NEXT: %[[RANGE:.+]]:2 = scf.if %[[NARROW]] -> (i32, i32) {
// CHECK: %[[FIRST:.+]]:2 = scf.while (%[[LO:.+]] = %[[START]], %[[HI:.+]] = %[[END]]) : (i32, i32) -> (i32, i32) {
// CHECK: arith.cmpi ult, %{{.+}}, %arg3 : i32
// CHECK: scf.while (%{{.+}} = %[[FIRST]]#0, %{{.+}} = %[[END]]) : (i32, i32) -> (i32, i32) {
// CHECK: arith.cmpi ule, %{{.+}}, %arg3 : i32
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[START]], %[[END]] : i32, i32
// A grid never built (capacity word 0) starts the query with an empty range.
// CHECK: %[[BUILT:.+]] = arith.cmpi ne, %{{.+}}, %c0_i64{{.*}} : i64
// CHECK-NEXT: arith.select %[[BUILT]], %[[RANGE]]#1, %[[RANGE]]#0 : i32
// CHECK: "warp.construct"() : () -> !warp.struct<"Q"
// CHECK-COUNT-14: "warp.struct_set"
func.func @query(%id: ui64, %p: !warp.vec<3, f32>, %r: f32, %g: i32, %grouped: i32) -> !warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]> {
  %q = "warp.hash_grid_query"(%id, %p, %r, %g, %grouped) : (ui64, !warp.vec<3, f32>, f32, i32, i32) -> !warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>
  return %q : !warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>
}

// query_next: a candidate left in the current range is taken at once (the descriptor's words read before the
// branch, so that a loop around the query reads them once): its id, the state's cell_index advanced. Only a used-up
// range goes on to an scf.while over cells while the current one is used up and the range is not exhausted; then
// the point id (point_ids[cell_index]) or the index as it was.
// CHECK-LABEL: func.func @next
// CHECK-NOT: warp.hash_grid_query_next
// CHECK: %[[CI:.+]] = "warp.struct_get"(%arg0) {field = 10 : i64}
// CHECK: %[[CE:.+]] = "warp.struct_get"(%arg0) {field = 11 : i64}
// CHECK: %[[LEFT:.+]] = arith.cmpi slt, %[[CI]], %[[CE]] : i32
// CHECK: %[[R:.+]]:3 = scf.if %[[LEFT]] -> (i1, !warp.struct
// CHECK: %[[CI1:.+]] = arith.addi %[[CI]], %c1_i32{{.*}} : i32
// CHECK: "warp.struct_set"(%arg0, %[[CI1]]) {field = 10 : i64}
// CHECK: %[[QUICK:.+]] = "warp.load"(%{{.+}}, %[[CI]]) : (!warp.array<i32, 1 : i64>, i32) -> i32
// CHECK: scf.yield %true, %{{.+}}, %[[QUICK]]
// CHECK: } else {
// CHECK: scf.while
// CHECK: scf.condition
// CHECK: } do {
// A step of a row walk (x_start..x_end inside the grid) stays at x = x_end and takes the next row's
// range; otherwise Warp's cell-by-cell step.
// CHECK: %[[XS:.+]] = "warp.struct_get"(%{{.+}}) {field = 1 : i64}
// CHECK: %[[XE:.+]] = "warp.struct_get"(%{{.+}}) {field = 4 : i64}
// CHECK: %[[GROUPED:.+]] = "warp.struct_get"(%{{.+}}) {field = 13 : i64}
// CHECK: %[[IN:.+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK: arith.cmpi slt, %[[XE]], %{{.+}} : i32
// CHECK: %[[INSIDE:.+]] = arith.andi %[[IN]], %{{.+}} : i1
// CHECK: %[[UNGROUPED:.+]] = arith.cmpi eq, %[[GROUPED]], %c0_i32{{.*}} : i32
// CHECK: %[[ROWS:.+]] = arith.andi %[[INSIDE]], %[[UNGROUPED]] : i1
// CHECK: %[[WRAP:.+]] = arith.cmpi sgt, %{{.+}}, %[[XE]] : i32
// CHECK: %[[BACK:.+]] = arith.select %[[ROWS]], %[[XE]], %[[XS]] : i32
// CHECK: arith.select %[[WRAP]], %[[BACK]], %{{.+}} : i32
// CHECK: scf.yield %{{.+}}, %{{.+}} : !warp.struct
// The candidate's id (no prefetch: per candidate, it cost dense grids more than it saved sparse ones).
// CHECK: %[[ID:.+]] = "warp.load"(%{{.+}}, %{{.+}}) : (!warp.array<i32, 1 : i64>, i32) -> i32
// CHECK-NOT: llvm.intr.prefetch
// CHECK: %[[NEXT:.+]] = arith.select %{{.+}}, %[[ID]], %arg1 : i32
// CHECK: scf.yield %{{.+}}, %{{.+}}, %[[NEXT]]
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @next(%q: !warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, %i: i32) -> (i1, !warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32) {
  %f, %q2, %j = "warp.hash_grid_query_next"(%q, %i) : (!warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32) -> (i1, !warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32)
  return %f, %q2, %j : i1, !warp.struct<"Q", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>, i32
}

// A float64 query: its arithmetic in f64 with the f64 inverse (descriptor word 10), and Warp's double
// hash_grid_cell_coord (INT_MAX - 1 from 2^31 - 2 on).
// CHECK-LABEL: func.func @query_f64
// CHECK: %[[INV:.+]] = "warp.load"(%{{.+}}, %c10_i32{{.*}}) : (!warp.array<f64, 1 : i64>, i32) -> f64
// CHECK: %[[LO:.+]] = arith.subf %{{.+}}, %arg2 : f64
// CHECK-NEXT: %[[S:.+]] = arith.mulf %[[LO]], %[[INV]] : f64
// CHECK-NEXT: %[[F:.+]] = math.floor %[[S]] : f64
// CHECK: arith.cmpf oge, %[[F]], %cst{{.*}} : f64
func.func @query_f64(%id: ui64, %p: !warp.vec<3, f64>, %r: f64, %g: i32, %grouped: i32) -> !warp.struct<"QD", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]> {
  %q = "warp.hash_grid_query"(%id, %p, %r, %g, %grouped) : (ui64, !warp.vec<3, f64>, f64, i32, i32) -> !warp.struct<"QD", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>
  return %q : !warp.struct<"QD", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>
}

// A float16 query: each operation in f16 (rounded to half, as Warp's), the half inverse (word 11, at f16 index
// 44), and the cell coordinate of the half as a float.
// CHECK-LABEL: func.func @query_f16
// CHECK: %[[INV:.+]] = "warp.load"(%{{.+}}, %c44_i32{{.*}}) : (!warp.array<f16, 1 : i64>, i32) -> f16
// CHECK: %[[LO:.+]] = arith.subf %{{.+}}, %arg2 : f16
// CHECK-NEXT: %[[S:.+]] = arith.mulf %[[LO]], %[[INV]] : f16
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[S]] : f16 to f32
// CHECK-NEXT: math.floor %[[W]] : f32
func.func @query_f16(%id: ui64, %p: !warp.vec<3, f16>, %r: f16, %g: i32, %grouped: i32) -> !warp.struct<"QH", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]> {
  %q = "warp.hash_grid_query"(%id, %p, %r, %g, %grouped) : (ui64, !warp.vec<3, f16>, f16, i32, i32) -> !warp.struct<"QH", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>
  return %q : !warp.struct<"QH", [ui64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32]>
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
