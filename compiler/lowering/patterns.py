"""One-op lowerings as rewrite patterns: MLIR's RewritePatternSet and walk driver, from Python.

    lower_ops(module, {views.LoadOp: lower_load, views.StoreOp: lower_store, ...})

A lowering takes the op as its named view (`op.array`, `op.indices`, `op.kind`: dialects/warp/views.py)
and builds what replaces it; the insertion point is before the op and the location is the op's, so it
just calls builders. It returns the replacing value, a list of values (one per result), None for an
op without results (then the op is erased), or UNMATCHED to leave the op as it is. A key is a view class
or an op name ("arith.addi").

The driver is `mlir.rewrite.walk_and_apply_patterns`: every op under `root` once, in block order, nested
ops before the op that holds them, in place; no folding, no dead-code removal, and the ops a lowering
builds are not visited again. So a lowering sees its operands already lowered when they come from ops
before it (a warp.view's descriptor, for the load from the view), as a hand-written walk in program
order does, and the output is the same op for op. An exception raised by a lowering (a PassError) stops
the walk and reaches the caller unchanged.
"""

from __future__ import annotations

from mlir import ir, rewrite


# what a lowering returns to leave its op as it is (a later pass lowers it)
UNMATCHED = object()


def _pattern(lower):
    def apply(op, rewriter):
        with rewriter.ip, op.location:
            new = lower(op)
        if new is UNMATCHED:
            return True
        if new is None:
            rewriter.erase_op(op.operation)
        else:
            rewriter.replace_op(op.operation, [new] if isinstance(new, ir.Value) else list(new))
        # None: the pattern matched (the bindings read a true value as "did not match")

    return apply


def lower_ops(root, lowerings: dict) -> None:
    """Replaces each op under `root` that `lowerings` has a function for by what that function builds."""
    patterns = rewrite.RewritePatternSet()
    for kind, lower in lowerings.items():
        patterns.add(kind, _pattern(lower))
    rewrite.walk_and_apply_patterns(root.operation, patterns.freeze())


__all__ = ["UNMATCHED", "lower_ops"]
