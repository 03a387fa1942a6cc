"""Writes into a member of an array element: Warp's "array slots" (`a[i].x = v`, `a[i][j] *= s`, `h.values[i].p`).

The target's chain of attributes and subscripts is evaluated under `slot_target`: an array subscript in it (the
element the member belongs to) reports a non-integer index in Warp's words for slot writes, and tells the caller
that the target is a slot. Warp's backward pass cannot differentiate an augmented assignment into a slot other
than `+=` / `-=` (which it does atomically) when the result carries a derivative: `refuse_slot_adjoint` records
that as a refusal of the adjoint (a kernel compiled with its backward pass fails to build, as Warp's module).
"""

from __future__ import annotations

import ast
import contextlib

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError

SLOT_INDICES = "Array slot write indices must be integers or slices"  # Warp's words
SLOT_AUGASSIGN = ("Differentiable composite slot augmented assignments with this operator are not supported with "
                  "backward code generation enabled. Write the result to a separate array, or use "
                  "enable_backward=False for forward-only code.")  # Warp's words


class SlotTarget:
    """The subscripts below a member-write target (by identity) and whether one of them indexed an array."""

    def __init__(self, subscripts: frozenset):
        self.subscripts = subscripts
        self.array_rooted = False


NO_SLOT = SlotTarget(frozenset())


@contextlib.contextmanager
def slot_target(em, target):
    """While `target` (or what it is a member of) is evaluated, em.array_access reports into the returned record
    (see `indexed_array`)."""
    subscripts, node = set(), getattr(target, "value", None)
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript):
            subscripts.add(id(node))
        node = node.value
    outer = em.slot
    em.slot = SlotTarget(frozenset(subscripts))
    try:
        yield em.slot
    finally:
        em.slot = outer


def indexed_array(em, node: ast.Subscript) -> bool:
    """Called by em.array_access for `node`: whether it is the element of a slot being written (then its indices
    must be integers in Warp's words); marks the slot as rooted in an array."""
    if id(node) not in em.slot.subscripts:
        return False
    em.slot.array_rooted = True
    return True


def _differentiable(t) -> bool:  # Warp's is_differentiable_value_type
    return wt.is_struct(t) or wt.is_float(wt.scalar_type_of(t) if wt.is_composite(t) else t)


def refuse_slot_adjoint(em, node, slot: SlotTarget, opname: str, result) -> None:
    if slot.array_rooted and opname not in ("add", "sub") and _differentiable(result.type):
        em.program.backward_refusals.append(em.error(node, SLOT_AUGASSIGN, CompileError))
