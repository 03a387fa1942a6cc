"""What the emitters keep in their environment (`env`: name -> entry), shared by the kernel emitter (codegen.py) and the modules it
hands constructs to (atomics, composite, functions): typed SSA values, names not bound on every path, and the
names of the flag locals."""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from .types import FunctionT, TupleT

BREAK, CONTINUE, RETURN = "$break", "$continue", "$return"
RETVAL = "$retval"  # $retval0, $retval1...: the values a @wp.func returns (functions.py)


@dataclass
class Var:
    value: ir.Value
    type: object  # a Warp scalar type or ft.ArrayT
    literal: object = field(default=None, compare=False, repr=False)  # the Python number of a literal (`x = 0`)


@dataclass
class Unbound:
    """A name that is not defined on every path to here."""

    reason: str


@dataclass
class TupleVar:
    """A tuple value (`t = (1, 2.0, v)`, a @wp.func's tuple result): its parts, each a Var or a TupleVar. It has
    no MLIR value of its own; @wp.func parameters receive its parts as separate arguments (tuples.py)."""

    parts: list
    literal: object = field(default=None, compare=False, repr=False)

    @property
    def type(self):
        return TupleT(tuple(p.type for p in self.parts))


class FunctionVar(TupleVar):
    """A function value (types.FunctionT): no MLIR values, its target known at compile time (functions.py)."""

    def __init__(self, target):
        super().__init__([])
        self.target = target

    @property
    def type(self):
        return FunctionT((), self.target)


def rebinding_message(name: str, to_function: bool) -> str:
    """Warp's error for assigning to a local bound to a function (kernels have no function pointers)."""
    if to_function:
        return (f"Error, rebinding function-valued local '{name}' to a different function is not supported. Warp "
                "does not have function pointers, so a local bound to a function must refer to the same function "
                "throughout the kernel.")
    return (f"Error, rebinding function-valued local '{name}' to a non-function value is not supported. Warp does "
            "not have function pointers, so a local bound to a function must refer to a function throughout the "
            "kernel.")
