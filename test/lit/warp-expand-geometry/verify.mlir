// RUN: not mlwarp-opt %s 2>&1 | FileCheck %s

// The op table types the queries: the id is a ui64, the state of query_next comes back as its own type.
// CHECK: 'warp.hash_grid_point_id' op operand 'id' must be ui64, got i64
func.func @bad_id(%id: i64, %i: i32) -> i32 {
  %p = "warp.hash_grid_point_id"(%id, %i) : (i64, i32) -> i32
  return %p : i32
}
