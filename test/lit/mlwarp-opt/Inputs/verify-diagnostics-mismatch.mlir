// Errors that do not match their expectations (verify-diagnostics.mlir runs this).

// The error says rank 2, the expectation rank 3: both reported.
func.func @wrong_text(%a: !warp.array<f32, 2>, %i: i32) -> f32 {
  // expected-error@+1 {{rank 3}}
  %0 = "warp.load"(%a, %i) : (!warp.array<f32, 2>, i32) -> f32
  return %0 : f32
}

// -----
func.func @quiet(%a: !warp.array<f32, 1>, %i: i32) -> f32 {
  // expected-error@+1 {{never}}
  %0 = "warp.load"(%a, %i) : (!warp.array<f32, 1>, i32) -> f32
  return %0 : f32
}
