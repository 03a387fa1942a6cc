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


def _type_or_missing(em, node):
    t = em.local_type(node)
    if t is MISSING:
        t = resolve_path(em.src.func, node)
    return t


def call(em, node: ast.Call, obj):
    name = getattr(obj, "__name__", "function")
    dtype_nodes = [kw.value for kw in node.keywords if kw.arg == "dtype"]
    if not dtype_nodes and node.args and _type_or_missing(em, node.args[-1]) is not MISSING and \
            wt.canonical_type(_type_or_missing(em, node.args[-1])) is not None:
        # Warp's signatures end in dtype (volume_lookup(id, i, j, k, dtype)): a type as the last positional
        # argument is the dtype (no run-time argument is a type)
        node = ast.copy_location(ast.Call(func=node.func, args=node.args[:-1],
                                          keywords=[*node.keywords, ast.keyword(arg="dtype", value=node.args[-1])]),
                                 node)
        dtype_nodes = [node.args and node.keywords[-1].value]
    if not dtype_nodes:
        raise em.error(node, f"wp.{name}() needs the keyword argument dtype= (the volume's value type)", CompileError)
    t = _type_or_missing(em, dtype_nodes[0])
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
