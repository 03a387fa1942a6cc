"""`wp.cast(a, dtype)`: `a`'s bits read as a `dtype` of the same size (Warp's `reinterpret_cast`, which
static_asserts equal sizes), for scalars, vectors, matrices and structs alike: `a` goes to a one-element
array on the thread's stack and is read back through an array of `dtype` over the same memory. That array
is one over a raw address, so, as in Warp (where cast is not differentiable), no gradient flows through."""

from __future__ import annotations

import ast

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError

from ..dialects.warp import builders as wb
from . import types as ft
from .resolve import MISSING, resolve_path
from .values import Var


def call(em, node: ast.Call) -> Var:
    given = dict(zip(("a", "dtype"), node.args))
    for kw in node.keywords:
        if kw.arg not in ("a", "dtype") or kw.arg in given:
            raise em.error(node, f"wp.cast() takes the arguments a and dtype, not '{kw.arg}'", CompileTypeError)
        given[kw.arg] = kw.value
    if len(node.args) > 2 or set(given) != {"a", "dtype"}:
        raise em.error(node, "wp.cast() takes the arguments a and dtype", CompileTypeError)
    obj = resolve_path(em.src.func, given["dtype"])
    if obj is MISSING:
        obj = em.local_type(given["dtype"])
    dtype = None if obj is MISSING else ft.from_annotation(obj)
    if dtype is None or isinstance(dtype, ft.ArrayT) or not (wt.is_scalar(dtype) or wt.is_composite(dtype)):
        raise em.error(given["dtype"], "wp.cast(a, dtype): dtype must be a scalar, vector, matrix or struct type",
                       CompileTypeError)
    value = em.expr(given["a"])
    if isinstance(value.type, ft.ArrayT) or not (wt.is_scalar(value.type) or wt.is_composite(value.type)):
        raise em.error(given["a"], f"wp.cast() reinterprets a scalar, vector, matrix or struct, not "
                                   f"{ft.name(value.type)}", CompileTypeError)
    have, want = wt.type_size_in_bytes(value.type), wt.type_size_in_bytes(dtype)
    if have != want:  # Warp: static_assert(sizeof(TRet) == sizeof(T)) in its C++ compile
        raise em.error(node, f"wp.cast(): source and destination must have the same size: "
                             f"{ft.name(value.type)} is {have} bytes, {ft.name(dtype)} is {want}", CompileError)
    if value.type == dtype:
        return value
    i32 = ft.to_mlir(wt.int32)
    zero = em.const(0, wt.int32).value
    held = wb.local_array(ft.to_mlir(value.type), (1,))
    wb.store(held, value.value, [zero])
    address = wb.cast(wb.array_data(held), ft.to_mlir(wt.int64))
    view = wb.array_from_ptr(address, [wb.cast(em.const(1, wt.int32).value, i32)], ft.to_mlir(dtype))
    return Var(wb.load(view, [zero]), dtype)
