"""`wp.zeros(shape, dtype)` inside kernels and @wp.func: Warp's fixed-size arrays (`wp.fixedarray`).

The array lives on the thread's stack: `warp.local_array {shape}` gives an ordinary `!warp.array<dtype, N>`,
so indexing, views (`arr[i]`), `.shape`, atomics and passing it to a @wp.func taking `wp.array` are those of
any array. `convert-warp-arrays-to-llvm` allocates its bytes at the top of the function and zeroes them
where the call is. The shape must be a constant (int literals or captured Python ints), as in Warp.
"""

from __future__ import annotations

import ast

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError
from mlwarp.core.types import ArrayT

from ..dialects.warp import builders as wb
from . import types as ft
from .resolve import MISSING, resolve_path
from .syntax import int_literal
from .values import Var

SHAPE_NOT_CONSTANT = "the `shape` argument must be specified as a constant when zero-initializing an array"


def _constant_int(em, node):
    literal = int_literal(node)
    if literal is not None:
        return literal
    if isinstance(node, (ast.Name, ast.Attribute)) and not (isinstance(node, ast.Name) and node.id in em.env):
        value = resolve_path(em.src.func, node)
        if type(value) is int:
            return value
    return None


def _shape(em, node) -> tuple:
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    shape = tuple(_constant_int(em, n) for n in items)
    if not shape or any(n is None for n in shape):
        raise em.error(node, SHAPE_NOT_CONSTANT, CompileError)
    if len(shape) > 4:
        raise em.error(node, f"a fixed-size array has 1 to 4 dimensions, got {len(shape)}", CompileError)
    if any(n <= 0 for n in shape):
        raise em.error(node, f"a fixed-size array's dimensions must be positive, got {shape}", CompileError)
    return shape


def placeholder(t: ArrayT) -> Var:
    """An array of type `t` a @wp.func's result holds before its `return` sets it (one element per dimension:
    the results' values are SSA, so every path needs one)."""
    return Var(wb.local_array(ft.to_mlir(t.dtype), (1,) * t.ndim), t)


def zeros(em, node: ast.Call) -> Var:
    """`wp.zeros(shape, dtype=float)` in a kernel: a zero-filled fixed-size array."""
    given = dict(zip(("shape", "dtype"), node.args))
    if len(node.args) > 2:
        raise em.error(node, "wp.zeros() in a kernel takes shape and dtype", CompileError)
    for kw in node.keywords:
        if kw.arg not in ("shape", "dtype") or kw.arg in given:
            raise em.error(node, f"wp.zeros() in a kernel takes shape and dtype, not '{kw.arg}'", CompileError)
        given[kw.arg] = kw.value
    if "shape" not in given:
        raise em.error(node, SHAPE_NOT_CONSTANT, CompileError)
    shape = _shape(em, given["shape"])
    dtype = wt.float32
    if "dtype" in given:
        obj = resolve_path(em.src.func, given["dtype"])
        dtype = ft.from_annotation(obj) if obj is not MISSING and not wt.is_array(obj) else None
        if dtype is None or isinstance(dtype, ArrayT) or getattr(dtype, "_wp_indexed_", None) is not None or \
                getattr(dtype, "_wp_fabric_", None) is not None:
            raise em.error(node, "wp.zeros() in a kernel needs a scalar, vector, matrix or struct dtype",
                           CompileError)
    return Var(wb.local_array(ft.to_mlir(dtype), shape), ArrayT(dtype, len(shape)))
