// Parses, but does not verify: the function returns nothing.
func.func @f(%a: i32) {
  return %a : i32
}
