"""Which array indices are known non-negative where they are used, so that the array lowering can leave out the
wrap of a negative index (`a[-1]` counts from the end, as Warp's array indexing does) where it cannot happen.

The wrap is a compare and a select on every index LLVM cannot prove non-negative; LLVM folds it for the thread
index on the CPU (cpu_entry.py's assumptions), but the passes between the lowering and LLVM read the address
arithmetic themselves (warp-cpu-interchange-loops recognises strided walks, the privatising passes their
targets), and a select there hides the pattern. The rules, all sound for Warp's i32 index arithmetic (an
overflowing index is undefined, as the lowering's `nsw` flags say):

- a non-negative integer constant, `warp.tid`, an `scf.for` counter whose lower bound is non-negative;
- inside an `scf.for` whose lower bound is non-negative, its upper bound (the body runs only if ub > lb >= 0);
- sums, products, signed quotients and remainders, max, min and selects of non-negative values; sign and zero
  extensions and index casts of them.
"""

from __future__ import annotations

from mlir import ir

_ALL_OPERANDS = {"arith.addi", "arith.muli", "arith.divsi", "arith.floordivsi", "arith.ceildivsi", "arith.minsi",
                 "warp.add", "warp.mul", "warp.min", "arith.extsi", "arith.extui", "arith.index_cast",
                 "arith.index_castui"}
_ANY_OPERAND = {"arith.maxsi", "warp.max"}
_DEPTH = 24  # an index expression deeper than this is not analysed (it is wrapped)


def _operation(owner):
    return getattr(owner, "operation", owner)


def _constant(op) -> int | None:
    if op.name == "arith.constant" and isinstance(op.results[0].type, (ir.IntegerType, ir.IndexType)):
        return ir.IntegerAttr(op.attributes["value"]).value
    return None


def loop_bounds_in_force(at) -> list:
    """The upper bounds of the scf.for loops around `at` (an operation) whose lower bound is non-negative:
    positive wherever `at` runs."""
    bounds, op = [], _operation(at)
    while True:
        try:
            op = _operation(op.parent)
        except (AttributeError, ValueError):
            break
        if op is None or op.name in ("func.func", "builtin.module"):
            break
        if op.name == "scf.for" and non_negative(op.operands[0], None):
            bounds.append(op.operands[1])
    return bounds


def non_negative(value: ir.Value, at=None, _bounds=None, _depth: int = 0) -> bool:
    """Whether `value` is known >= 0 where operation `at` uses it (None: anywhere)."""
    if _depth > _DEPTH:
        return False
    if _bounds is None:
        _bounds = loop_bounds_in_force(at) if at is not None else []
    if any(value == b for b in _bounds):
        return True
    owner = value.owner
    if isinstance(owner, ir.Block):  # a block argument: a loop counter
        parent = _operation(owner.owner)
        if parent.name == "scf.for" and ir.BlockArgument(value).arg_number == 0:
            return non_negative(parent.operands[0], None, [], _depth + 1)
        return False
    op = _operation(owner)
    constant = _constant(op)
    if constant is not None:
        return constant >= 0
    if op.name == "warp.tid":
        return True
    operands = list(op.operands)
    if op.name == "arith.select":
        operands = operands[1:]
    elif op.name in _ANY_OPERAND:
        return any(non_negative(v, None, _bounds, _depth + 1) for v in operands)
    elif op.name not in _ALL_OPERANDS:
        return False
    return bool(operands) and all(non_negative(v, None, _bounds, _depth + 1) for v in operands)
