"""Arrays over raw addresses inside kernels, as Warp: `a.ptr` (the data address, a uint64) and
`wp.array(ptr=..., shape=(...), dtype=...)` (a C-contiguous array over that memory; the shape's entries may be
run-time ints, the dtype a Warp type). Such an array is no kernel argument, so it has no adjoint: as in Warp
(whose such arrays have a null grad), warp-autodiff and warp-jvp take its loads as constants and give its stores no
adjoint (autodiff_ir.from_raw_pointer), so mesh and volume queries reading their structures through such arrays
differentiate in the query point as Warp's do.

mlwarp's own functions may also pass `grad=address` (0 at run time: none): the array then has an adjoint over
that memory, as a Warp array_t built with a grad pointer (wp.mesh_get's points and velocities: Warp's Mesh holds
the user's arrays, grads included). Warp's kernel-language wp.array() takes no grad, so user code may not either."""

from __future__ import annotations

import ast

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError

from ..dialects.warp import builders as wb
from . import types as ft
from .resolve import MISSING, resolve_path
from .values import Var


def is_array_class(obj) -> bool:
    """wp.array itself (the class: its instances carry the same marker)."""
    return isinstance(obj, type) and getattr(obj, "_wp_array_", False)


def ptr_attribute(em, node: ast.Attribute):
    """`a.ptr` of an array variable; None for anything else."""
    if node.attr != "ptr" or not isinstance(node.value, ast.Name):
        return None
    v = em.env.get(node.value.id)
    if not isinstance(v, Var) or not isinstance(v.type, ft.ArrayT):
        return None
    return Var(wb.cast(wb.array_data(v.value), ft.to_mlir(wt.uint64)), wt.uint64)


def construct(em, node: ast.Call) -> Var:
    """`wp.array(ptr=address, shape=(n, ...), dtype=T)`, its arguments also positional (Warp's signature
    `array(ptr, shape, dtype)`)."""
    order = ("ptr", "shape", "dtype")
    given = dict(zip(order, node.args))
    dup = any(k.arg in given for k in node.keywords)
    given.update((k.arg, k.value) for k in node.keywords)
    allowed = {"ptr", "shape", "dtype"} | ({"grad"} if _internal(em) else set())
    if len(node.args) > len(order) or dup or set(given) - allowed or not {"ptr", "shape"} <= set(given):
        raise em.error(node, "wp.array() in a kernel takes the arguments ptr, shape and dtype "
                             "(an array over existing memory)", CompileError)
    if "dtype" not in given and not _internal(em):  # Warp's array(ptr, shape, dtype) has no default dtype
        ptr_t = ft.name(em.expr(given["ptr"]).type)
        items = given["shape"].elts if isinstance(given["shape"], ast.Tuple) else [given["shape"]]
        shape_t = ", ".join(ft.name(em.expr(i).type) for i in items)
        raise em.error(node, f"Couldn't find function overload for 'array' that matched inputs with types: "
                             f"[{ptr_t}, tuple({shape_t})]", CompileTypeError)
    dtype = wt.float32
    if "dtype" in given:
        obj = resolve_path(em.src.func, given["dtype"])
        dtype = None if obj is MISSING else wt.canonical_type(obj)
        if dtype is None:
            raise em.error(given["dtype"], "wp.array(dtype=...) in a kernel needs a Warp type", CompileTypeError)
    address = em.expr(given["ptr"])
    if not wt.is_int(address.type):
        raise em.error(given["ptr"], f"wp.array(ptr=...) takes an integer address, got {ft.name(address.type)}",
                       CompileTypeError)
    items = given["shape"].elts if isinstance(given["shape"], ast.Tuple) else [given["shape"]]
    if not 1 <= len(items) <= 4:
        raise em.error(given["shape"], f"wp.array(shape=...) in a kernel needs 1 to 4 dimensions, got {len(items)}",
                       CompileError)
    shape = []
    for item in items:
        n = em.expr(item)
        if not wt.is_int(n.type):
            raise em.error(item, f"array shapes must be integers, got {ft.name(n.type)}", CompileTypeError)
        shape.append(wb.cast(n.value, ft.to_mlir(wt.int32)))
    i64 = wb.cast(address.value, ft.to_mlir(wt.int64))
    grad = None
    if "grad" in given:
        g = em.expr(given["grad"])
        if not wt.is_int(g.type):
            raise em.error(given["grad"], f"wp.array(grad=...) takes an integer address, got {ft.name(g.type)}",
                           CompileTypeError)
        grad = wb.cast(g.value, ft.to_mlir(wt.int64))
    return Var(wb.array_from_ptr(i64, shape, ft.to_mlir(dtype), grad), ft.ArrayT(dtype, len(shape)))


def _internal(em) -> bool:
    """Whether the function being compiled is one of mlwarp's own (the geometry functions)."""
    return (getattr(em.src.func, "__module__", None) or "").startswith("mlwarp.")
