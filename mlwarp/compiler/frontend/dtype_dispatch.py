"""Builtins whose implementation is chosen by a compile-time `dtype=` keyword, as Warp's generic builtins
(`wp.volume_lookup(id, i, j, k, dtype=wp.vec3)`): the callee carries `_wp_dtype_dispatch_(dtype)`, which returns
the @wp.func for that type (or raises TypeError with the message the user sees); the call is then an ordinary
call of that function with the other arguments. The dtype may be a Warp type or a type expression of local
values (`dtype=values.dtype`, type_exprs.py)."""

from __future__ import annotations

import ast

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError

from .resolve import MISSING, resolve_path


def call(em, node: ast.Call, obj):
    name = getattr(obj, "__name__", "function")
    dtype_nodes = [kw.value for kw in node.keywords if kw.arg == "dtype"]
    if not dtype_nodes:
        raise em.error(node, f"wp.{name}() needs the keyword argument dtype= (the volume's value type)", CompileError)
    t = em.local_type(dtype_nodes[0])
    if t is MISSING:
        t = resolve_path(em.src.func, dtype_nodes[0])
    dtype = None if t is MISSING else wt.canonical_type(t)
    if dtype is None:
        raise em.error(dtype_nodes[0], f"wp.{name}(dtype=...) needs a Warp type", CompileTypeError)
    check = getattr(obj, "_wp_dtype_args_check_", None)
    if check is not None:  # argument types the dtype fixes (local variables' types: nothing is emitted twice)
        types = [getattr(em.env.get(a.id), "type", None) if isinstance(a, ast.Name) else None for a in node.args]
        message = check(dtype, types)
        if message:
            raise em.error(node, message, CompileTypeError)
    try:
        target = obj._wp_dtype_dispatch_(dtype)
    except TypeError as e:
        raise em.error(node, str(e), CompileTypeError) from None
    rest = ast.Call(func=node.func, args=node.args, keywords=[kw for kw in node.keywords if kw.arg != "dtype"])
    ast.copy_location(rest, node)
    return em.program.call(em, rest, target)
