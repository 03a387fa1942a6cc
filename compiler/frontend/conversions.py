"""Conversions between a kernel's value types: a Python literal or a value as a scalar constructor, an
annotation or a store converts it (convert, literal_as), operand casts (cast), truth values (to_bool,
condition) and the types annotations name (type_from_expr).

Part of the kernel emitter (codegen.KernelEmitter mixes these methods in)."""

from __future__ import annotations

from mlir import ir

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError

from ..dialects.warp import builders as wb
from . import composite_values
from . import types as ft
from .resolve import MISSING, dotted_name, resolve_path
from .values import Var


class ConversionEmitter:
    """Conversions between value types."""

    def literal_as(self, literal, target, node):
        """A Python literal converted as Warp's scalar constructors convert it: ints wrap to the target's width
        (const() keeps the low bits), floats round once to the target, float -> int truncates toward zero."""
        if target is wt.bool_:
            return bool(literal)
        if wt.is_float(target):
            return float(literal)
        if isinstance(literal, float):
            if literal != literal or literal in (float("inf"), float("-inf")):
                raise self.error(node, f"{ft.name(target)}({literal}) has no integer value", CompileError)
            return int(literal)
        return literal

    def convert(self, v: Var, to, node) -> Var:
        """`v` as a `to` where the program asks for that type (a scalar constructor, an annotation, a component
        or element store). A constant (a literal, a captured Python number such as wp.pi or wp.constant(0.1),
        wp.static(), a local bound to one) is still the Python number it was written as: Warp converts that
        number itself, so it is rounded once, to `to`, not through float32 or int32 first. Anything else is
        converted at run time. Operands of builtins keep cast(): there Warp's float literals are float32s."""
        if v.literal is not None and wt.is_scalar(v.type) and wt.is_scalar(to):
            value = self.literal_as(v.literal, to, node)
            if v.type is to and not wt.is_float(to) and type(value) is type(v.literal) and value == v.literal:
                # int(0): the constant already is that number (a float's literal is its unrounded text); the result
                # is no literal: int(-1) declares a variable, as Warp's constructors do
                return Var(v.value, to)
            return self.const(value, to)
        return self.cast(v, to, node)

    def cast(self, v: Var, to, node) -> Var:
        if isinstance(v.type, ft.ArrayT):
            raise self.error(node, f"cannot convert an array to {ft.name(to)}", CompileTypeError)
        if wt.is_composite(v.type) or wt.is_composite(to):
            return composite_values.convert(self, v, to, node)  # vec3 -> vec3d component-wise; else an error
        return Var(wb.cast(v.value, ft.to_mlir(to)), to)

    def to_bool(self, v: Var) -> Var:
        if isinstance(v.type, ft.ArrayT):
            # Warp: an array is true unless null; the launch passes None and empty arrays as null (no elements),
            # so here: true when no dimension is 0
            b = ft.to_mlir(wt.bool_)
            dims = [wb.cast(wb.array_dim(v.value, d), b) for d in range(v.type.ndim)]
            result = dims[0]
            for d in dims[1:]:
                result = wb.builtin("bool_and", [result, d], b)
            return Var(result, wt.bool_)
        return v if v.type is wt.bool_ else Var(wb.cast(v.value, ft.to_mlir(wt.bool_)), wt.bool_)

    def condition(self, node) -> ir.Value:
        return self.to_bool(self.expr(node)).value

    def type_from_expr(self, node):
        obj = resolve_path(self.src.func, node)
        t = ft.from_annotation(obj) if obj is not MISSING else None
        if t is None:
            raise self.error(node, f"unknown type annotation '{dotted_name(node)}'", CompileTypeError)
        return t
