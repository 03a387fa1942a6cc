"""warp-unroll-loops{max-unroll=N}: `scf.for` loops whose bounds and step are constants and whose trip
count is at most N are replaced by N copies of their body, as Warp unrolls `range` loops with
compile-time bounds (N defaults to `wp.config.max_unroll`, 16 as in Warp). Other loops stay loops.

Runs after canonicalize, which folds the frontend's trip-count arithmetic for constant negative steps
into constants. Inner loops are unrolled first, so an unrolled outer loop copies unrolled inner bodies.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from . import registry
from .ir_walk import ops_named


def constant_int(value: ir.Value):
    """The integer a value is defined as by an arith.constant, else None."""
    if not isinstance(value, ir.OpResult):
        return None  # a block argument
    op = value.owner
    op = op.operation if isinstance(op, ir.OpView) else op
    if op.name != "arith.constant":
        return None
    attr = op.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def trip_count(loop) -> int | None:
    lb, ub, step = (constant_int(v) for v in list(loop.operands)[:3])
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return max(0, (ub - lb + step - 1) // step)


def unroll(loop, count: int) -> None:
    """Replaces `loop` (an scf.for with constant bounds) by `count` copies of its body."""
    lb, _, step = (constant_int(v) for v in list(loop.operands)[:3])
    iv_type = loop.operands[0].type
    current = list(loop.operands)[3:]  # the iter_args' initial values
    for k in range(count):
        with ir.InsertionPoint(loop), loop.location:
            iv = arith.ConstantOp(iv_type, lb + k * step).result
        copy = loop.clone(False)  # detached: its body is moved out below
        body = copy.regions[0].blocks[0]
        args = list(body.arguments)
        args[0].replace_all_uses_with(iv)
        for a, v in zip(args[1:], current):
            a.replace_all_uses_with(v)
        for op in list(body.operations):
            if op.name == "scf.yield":
                current = list(op.operands)
                break
            op.move_before(loop)
        copy.erase()
    for result, value in zip(loop.results, current):
        result.replace_all_uses_with(value)
    loop.erase()


class UnrollLoops(registry.UnrollLoops):
    def run(self, module):
        limit = self.max_unroll
        loops = ops_named(module, {"scf.for"})
        for loop in reversed(loops):  # post-order: inner loops first
            n = trip_count(loop)
            if n is not None and n <= limit:
                unroll(loop, n)
