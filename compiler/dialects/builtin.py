"""The one builtin-dialect op builder mlwarp's passes use, so that the `builtin` namespace resolves here
(dialects/__init__.py) instead of importing `mlir.dialects.builtin` (~3 ms, with `mlir.extras`)."""

from __future__ import annotations

from mlir import ir


def unrealized_conversion_cast(outputs, inputs, *, loc=None, ip=None):
    """As `mlir.dialects.builtin.unrealized_conversion_cast`: the single result, or the results."""
    op = ir.Operation.create("builtin.unrealized_conversion_cast", results=list(outputs), operands=list(inputs),
                             loc=loc, ip=ip)
    return op.results[0] if len(op.results) == 1 else op.results
