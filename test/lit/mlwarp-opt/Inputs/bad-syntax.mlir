// An input with a syntax error (line 4: no type after the operands).

func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a
  return %0 : i32
}
