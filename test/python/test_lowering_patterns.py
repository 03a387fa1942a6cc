"""lowering/patterns.py: one-op lowerings applied as MLIR rewrite patterns (walk driver)."""

import pytest
from mlir import ir
from mlir.dialects import arith

from mlwarp.compiler.context import make_context
from mlwarp.compiler.dialects.warp import views
from mlwarp.compiler.lowering.patterns import lower_ops
from mlwarp.compiler.passes.registry import PassError

SOURCE = """
func.func @k(%a: !warp.array<i32, 1 : i64>, %i: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %unused = arith.addi %c1, %c2 : i32
  %x = "warp.load"(%a, %i) : (!warp.array<i32, 1 : i64>, i32) -> i32
  %y = "warp.load"(%a, %x) : (!warp.array<i32, 1 : i64>, i32) -> i32
  "warp.store"(%a, %y, %i) : (!warp.array<i32, 1 : i64>, i32, i32) -> ()
  return %y : i32
}
"""


@pytest.fixture
def module():
    with make_context(), ir.Location.unknown():
        yield ir.Module.parse(SOURCE)


def test_each_op_is_replaced_by_what_its_function_builds(module):
    seen = []

    def load(op):  # stands for "the element": index * 10
        seen.append((type(op), op.indices[0]))
        return arith.MulIOp(op.indices[0], arith.ConstantOp(op.indices[0].type, 10).result).result

    lower_ops(module.operation, {views.LoadOp: load, "warp.store": lambda op: None})
    text = str(module)
    # both loads, in block order, each seeing its operands as lowered so far (the second load's index is
    # the first one's replacement); the store erased; no folding, no dead-code removal
    assert [t for t, _ in seen] == [views.LoadOp, views.LoadOp]
    assert isinstance(seen[1][1].owner, arith.MulIOp)
    assert '"warp.' not in text  # no warp op left
    assert text.count("arith.muli") == 2 and "%0 = arith.addi %c1_i32, %c2_i32 : i32" in text
    ops = [op.operation.name for op in module.body.operations[0].regions[0].blocks[0].operations]
    assert ops == ["arith.constant", "arith.constant", "arith.addi", "arith.constant", "arith.muli",
                   "arith.constant", "arith.muli", "func.return"]


def test_an_error_in_a_lowering_reaches_the_caller(module):
    def refuse(op):
        raise PassError(f"cannot lower {op.operation.name} of {op.array.type}")

    with pytest.raises(PassError, match=r"^cannot lower warp.load of !warp.array<i32, 1 : i64>$"):
        lower_ops(module.operation, {views.LoadOp: refuse})
