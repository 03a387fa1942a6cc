// RUN: mlwarp-opt %s --split-input-file -verify-diagnostics

// The warp verifier's rules beyond IRDL's types (compiler/dialects/warp/rules.py, declared per op in ops.py;
// builtin ops against the builtin table): one ill-typed op per chunk, its error one line naming the op and the
// rule. Each of these passed the verifier before it had the rules, and most lowered to wrong code.

// A 2-d array read with one index: the lowering would address row 0's i-th element.
func.func @load_one_index_of_2d(%a: !warp.array<f32, 2>, %i: i32) -> f32 {
  // expected-error@+1 {{'warp.load' op index count: 'indices' has 1 value, operand 'array' has rank 2 (one per dimension)}}
  %0 = "warp.load"(%a, %i) : (!warp.array<f32, 2>, i32) -> f32
  return %0 : f32
}

// -----
func.func @store_three_indices_of_2d(%a: !warp.array<f32, 2>, %i: i32, %x: f32) {
  // expected-error@+1 {{'warp.store' op index count: 'indices' has 3 values, operand 'array' has rank 2}}
  "warp.store"(%a, %x, %i, %i, %i) : (!warp.array<f32, 2>, f32, i32, i32, i32) -> ()
  return
}

// -----
func.func @view_result_rank(%a: !warp.array<f32, 3>, %i: i32) -> !warp.array<f32, 1> {
  // expected-error@+1 {{'warp.view' op index count: result 'subarray' has rank 1, 1 of operand 'array''s 3 dimensions indexed leave 2}}
  %0 = "warp.view"(%a, %i) : (!warp.array<f32, 3>, i32) -> !warp.array<f32, 1>
  return %0 : !warp.array<f32, 1>
}

// -----
func.func @slice_bounds(%a: !warp.array<f32, 2>, %i: i32) -> !warp.array<f32, 2> {
  // start and stop of dimension 0 (bits 1 and 2) need two bounds
  // expected-error@+1 {{'warp.slice' op slice dims: {dims} = [3] reads 2 bounds, 'bounds' has 1}}
  %0 = "warp.slice"(%a, %i) {dims = array<i64: 3>} : (!warp.array<f32, 2>, i32) -> !warp.array<f32, 2>
  return %0 : !warp.array<f32, 2>
}

// -----
func.func @array_from_ptr_rank(%p: i64, %n: i32) -> !warp.array<f32, 2> {
  // expected-error@+1 {{'warp.array_from_ptr' op array rank: result 'array' has rank 2, 'shape' has 1 value}}
  %0 = "warp.array_from_ptr"(%p, %n) {operandSegmentSizes = array<i32: 1, 1, 0>} : (i64, i32) -> !warp.array<f32, 2>
  return %0 : !warp.array<f32, 2>
}

// -----
func.func @local_array_rank() -> !warp.array<f32, 1> {
  // expected-error@+1 {{'warp.local_array' op array rank: result 'array' has rank 1, {shape} has 2 extents}}
  %0 = "warp.local_array"() {shape = array<i64: 2, 3>} : () -> !warp.array<f32, 1>
  return %0 : !warp.array<f32, 1>
}

// -----
func.func @tid_five_dims() {
  // expected-error@+1 {{'warp.tid' op value count: 'ids' has 5 values, allowed: 1, 2, 3, 4}}
  %0:5 = "warp.tid"() : () -> (i32, i32, i32, i32, i32)
  return
}

// -----
func.func @atomic_kind(%a: !warp.array<f32, 1>, %i: i32, %x: f32) -> f32 {
  // expected-error@+1 {{'warp.atomic' op attribute value: {kind = "frobnicate"} must be one of "add", "sub", "min", "max"}}
  %0 = "warp.atomic"(%a, %x, %i) {kind = "frobnicate"} : (!warp.array<f32, 1>, f32, i32) -> f32
  return %0 : f32
}

// -----
func.func @launch_dim_five() -> i32 {
  // expected-error@+1 {{'warp.launch_dim' op attribute value: {dim = 4} must be 0..3}}
  %0 = "warp.launch_dim"() {dim = 4} : () -> i32
  return %0 : i32
}

// -----
func.func @array_dim_past_rank(%a: !warp.array<f32, 2>) -> i32 {
  // expected-error@+1 {{'warp.array_dim' op axis: {dim = 2} must be a dimension of operand 'array' (0..1)}}
  %0 = "warp.array_dim"(%a) {dim = 2} : (!warp.array<f32, 2>) -> i32
  return %0 : i32
}

// -----
func.func @struct_field_number(%s: !warp.struct<"P", [f32, i32]>) -> f32 {
  // expected-error@+1 {{'warp.struct_get' op struct field: {field = 2} is not a field of struct "P" (2 fields)}}
  %0 = "warp.struct_get"(%s) {field = 2} : (!warp.struct<"P", [f32, i32]>) -> f32
  return %0 : f32
}

// -----
func.func @struct_field_grad_type(%s: !warp.struct<"H", [!warp.array<f32, 1>]>) -> !warp.array<f32, 2> {
  // expected-error@+1 {{'warp.struct_field_grad' op struct field: result 'grad' must be !warp.array<f32, 1 : i64> (field 0 of struct "H"), got !warp.array<f32, 2 : i64>}}
  %0 = "warp.struct_field_grad"(%s) {field = 0} : (!warp.struct<"H", [!warp.array<f32, 1>]>) -> !warp.array<f32, 2>
  return %0 : !warp.array<f32, 2>
}

// -----
func.func @struct_field_grad_of_a_scalar(%s: !warp.struct<"H", [f32]>) -> f32 {
  // expected-error@+1 {{'warp.struct_field_grad' op result 'grad' must be a !warp.array, got f32}}
  %0 = "warp.struct_field_grad"(%s) {field = 0} : (!warp.struct<"H", [f32]>) -> f32
  return %0 : f32
}

// -----
func.func @struct_field_type(%s: !warp.struct<"P", [f32, i32]>, %x: f32) -> !warp.struct<"P", [f32, i32]> {
  // expected-error@+1 {{'warp.struct_set' op struct field: operand 'element' must be i32 (field 1 of struct "P"), got f32}}
  %0 = "warp.struct_set"(%s, %x) {field = 1} : (!warp.struct<"P", [f32, i32]>, f32) -> !warp.struct<"P", [f32, i32]>
  return %0 : !warp.struct<"P", [f32, i32]>
}

// -----
func.func @extract_wrong_type(%v: !warp.vec<3, f32>, %i: i32) -> f64 {
  // expected-error@+1 {{'warp.extract' op component type: result 'element' must be f32 (the component of !warp.vec<3 : i64, f32>), got f64}}
  %0 = "warp.extract"(%v, %i) : (!warp.vec<3, f32>, i32) -> f64
  return %0 : f64
}

// -----
func.func @matrix_row(%m: !warp.mat<2, 3, f32>, %i: i32, %r: !warp.vec<2, f32>) -> !warp.mat<2, 3, f32> {
  // a row of a 2x3 matrix is a vec3
  // expected-error@+1 {{'warp.insert' op component type: operand 'element' must be !warp.vec<3 : i64, f32> (the component of !warp.mat<2 : i64, 3 : i64, f32>), got !warp.vec<2 : i64, f32>}}
  %0 = "warp.insert"(%m, %r, %i) : (!warp.mat<2, 3, f32>, !warp.vec<2, f32>, i32) -> !warp.mat<2, 3, f32>
  return %0 : !warp.mat<2, 3, f32>
}

// -----
func.func @construct_count(%x: f32) -> !warp.vec<3, f32> {
  // expected-error@+1 {{'warp.construct' op components: !warp.vec<3 : i64, f32> takes 3 components (or none: zero), got 2}}
  %0 = "warp.construct"(%x, %x) : (f32, f32) -> !warp.vec<3, f32>
  return %0 : !warp.vec<3, f32>
}

// -----
func.func @cast_shape(%v: !warp.vec<3, f32>) -> !warp.vec<4, f64> {
  // expected-error@+1 {{'warp.cast' op cast: !warp.vec<3 : i64, f32> does not convert to !warp.vec<4 : i64, f64> (scalars convert to scalars, composites and tiles to the same kind and shape)}}
  %0 = "warp.cast"(%v) : (!warp.vec<3, f32>) -> !warp.vec<4, f64>
  return %0 : !warp.vec<4, f64>
}

// -----
func.func @arange_2d(%x: f32) -> !warp.tile<f32, array<i64: 2, 2>> {
  // expected-error@+1 {{'warp.tile_arange' op tile rank: result 'tile' has rank 2, must be 1}}
  %0 = "warp.tile_arange"(%x, %x) : (f32, f32) -> !warp.tile<f32, array<i64: 2, 2>>
  return %0 : !warp.tile<f32, array<i64: 2, 2>>
}

// -----
func.func @matmul_shapes(%a: !warp.tile<f32, array<i64: 4, 8>>, %b: !warp.tile<f32, array<i64: 4, 8>>,
                         %c: !warp.tile<f32, array<i64: 4, 8>>) -> !warp.tile<f32, array<i64: 4, 8>> {
  // expected-error@+1 {{'warp.tile_matmul' op tile shapes: a (M, K) times b (K, N) accumulates into (M, N): 'a' (4, 8), 'b' (4, 8), 'acc' (4, 8)}}
  %0 = "warp.tile_matmul"(%a, %b, %c) : (!warp.tile<f32, array<i64: 4, 8>>, !warp.tile<f32, array<i64: 4, 8>>, !warp.tile<f32, array<i64: 4, 8>>) -> !warp.tile<f32, array<i64: 4, 8>>
  return %0 : !warp.tile<f32, array<i64: 4, 8>>
}

// -----
func.func @reduce_axis_shape(%t: !warp.tile<f32, array<i64: 4, 8>>) -> !warp.tile<f32, array<i64: 8>> {
  // expected-error@+1 {{'warp.tile_reduce' op tile shapes: (4, 8) reduced along {axis = 1} is (4,)}}
  %0 = "warp.tile_reduce"(%t) {kind = "add", axis = 1} : (!warp.tile<f32, array<i64: 4, 8>>) -> !warp.tile<f32, array<i64: 8>>
  return %0 : !warp.tile<f32, array<i64: 8>>
}

// -----
func.func @tile_load_rank(%a: !warp.array<f32, 2>, %i: i32) -> !warp.tile<f32, array<i64: 8>> {
  // expected-error@+1 {{'warp.tile_load' op tile shapes: a tile of rank 1 moves to or from an array of rank 2}}
  %0 = "warp.tile_load"(%a, %i, %i) : (!warp.array<f32, 2>, i32, i32) -> !warp.tile<f32, array<i64: 8>>
  return %0 : !warp.tile<f32, array<i64: 8>>
}

// -----
func.func @dft_of_scalars(%t: !warp.tile<f32, array<i64: 1, 8>>) -> !warp.tile<f32, array<i64: 1, 8>> {
  // expected-error@+1 {{'warp.tile_dft' op element type: operand 'tile' has elements f32, must be !warp.vec<2 : i64, a float>}}
  %0 = "warp.tile_dft"(%t) {inverse = 0} : (!warp.tile<f32, array<i64: 1, 8>>) -> !warp.tile<f32, array<i64: 1, 8>>
  return %0 : !warp.tile<f32, array<i64: 1, 8>>
}

// -----
func.func @random_one_bound(%s: ui32, %x: f32) -> !warp.tile<f32, array<i64: 8>> {
  // expected-error@+1 {{'warp.tile_random' op value count: 'bounds' has 1 value, allowed: 0, 2}}
  %0 = "warp.tile_random"(%s, %x) {kind = "randf"} : (ui32, f32) -> !warp.tile<f32, array<i64: 8>>
  return %0 : !warp.tile<f32, array<i64: 8>>
}

// -----
func.func @tile_map_body(%t: !warp.tile<f32, array<i64: 8>>) -> !warp.tile<f32, array<i64: 8>> {
  // expected-error@+1 {{'warp.tile_map' op tile map: its body takes (f64), the input tiles' elements are (f32)}}
  %0 = "warp.tile_map"(%t) ({
  ^bb0(%x: f64):
    %y = "warp.cast"(%x) : (f64) -> f32
    gpu.yield %y : f32
  }) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>,
      resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (!warp.tile<f32, array<i64: 8>>) -> !warp.tile<f32, array<i64: 8>>
  return %0 : !warp.tile<f32, array<i64: 8>>
}

// -----
// Warp's arrays have 1..4 dimensions, wherever the type appears.
// expected-error@+1 {{'func.func' op type: argument #0: !warp.array<f32, 7 : i64> has 7 dimensions; Warp's arrays have 1..4}}
func.func @seven_dims(%a: !warp.array<f32, 7>) {
  return
}

// -----
// Builtin ops are checked against the builtin table with the frontend's resolver: warp.sin of three operands
// lowered to math.sin of the first.
func.func @sin_three_operands(%x: f32) -> i1 {
  // expected-error@+1 {{'warp.sin' op builtin signature: 'sin' takes 1 argument(s), got 3: ['float32', 'float32', 'float32']}}
  %0 = "warp.sin"(%x, %x, %x) : (f32, f32, f32) -> i1
  return %0 : i1
}

// -----
func.func @sin_result(%x: f32) -> i1 {
  // expected-error@+1 {{'warp.sin' op builtin signature: sin(float32) gives float32, the result is bool}}
  %0 = "warp.sin"(%x) : (f32) -> i1
  return %0 : i1
}

// -----
func.func @add_mixed_floats(%x: f32, %y: f64) -> f32 {
  // expected-error@+1 {{'warp.add' op builtin signature: Input types must be the same, got ['float32', 'float64']}}
  %0 = "warp.add"(%x, %y) : (f32, f64) -> f32
  return %0 : f32
}

// -----
func.func @cross_of_vec2(%a: !warp.vec<2, f32>) -> !warp.vec<2, f32> {
  // expected-error@+1 {{'warp.cross' op builtin signature: Couldn't find a function 'cross' compatible with the arguments 'vec2f, vec2f'}}
  %0 = "warp.cross"(%a, %a) : (!warp.vec<2, f32>, !warp.vec<2, f32>) -> !warp.vec<2, f32>
  return %0 : !warp.vec<2, f32>
}

// -----
func.func @tiles_of_two_shapes(%a: !warp.tile<f32, array<i64: 8>>, %b: !warp.tile<f32, array<i64: 4>>) -> !warp.tile<f32, array<i64: 8>> {
  // expected-error@+1 {{'warp.add' op builtin signature: an element-wise builtin on tiles takes tiles of one shape and gives one of that shape}}
  %0 = "warp.add"(%a, %b) : (!warp.tile<f32, array<i64: 8>>, !warp.tile<f32, array<i64: 4>>) -> !warp.tile<f32, array<i64: 8>>
  return %0 : !warp.tile<f32, array<i64: 8>>
}

// -----
// An array field of a lowered struct is its LLVM descriptor: its rank is still checked.
func.func @descriptor_one_index(%d: !llvm.struct<(ptr, array<2 x i64>, array<2 x i64>)>, %i: i32) -> f32 {
  // expected-error@+1 {{'warp.load' op index count: 'indices' has 1 value, operand 'array' has rank 2 (one per dimension)}}
  %0 = "warp.load"(%d, %i) : (!llvm.struct<(ptr, array<2 x i64>, array<2 x i64>)>, i32) -> f32
  return %0 : f32
}
