"""Type expressions inside kernels, as Warp's generic code writes them: `type(x)`, `a.dtype` (an array's element
type, a vector's or matrix's scalar type), and chains of them (`type(a).dtype`, `a.dtype.dtype`). They denote a
Warp type at compile time, which the caller then calls as a constructor (`type(x)(0)`, `a.dtype(1.5)`)."""

from __future__ import annotations

import ast
import builtins as py_builtins

from mlwarp.core import types as wt

from . import types as ft
from .resolve import MISSING, lookup


def type_of(em, node):
    """The Warp type (a scalar, composite or struct class, or an ft.ArrayT) `node` denotes, else MISSING.
    Only expressions rooted in a local value or `type(...)` count: `wp.vec3` and other names resolve as usual."""
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id not in em.env and len(node.args) == 1 \
                and not node.keywords and lookup(em.src.func, node.func.id) is py_builtins.type:
            return em.expr(node.args[0]).type
        return MISSING
    if isinstance(node, ast.Attribute) and node.attr == "dtype":
        if isinstance(node.value, ast.Name) and isinstance(em.env.get(node.value.id), object) \
                and node.value.id in em.env and hasattr(em.env[node.value.id], "type"):
            return element_type(em.env[node.value.id].type)
        base = type_of(em, node.value)
        return MISSING if base is MISSING else element_type(base)
    return MISSING


def element_type(t):
    """What `.dtype` of a value or type `t` is: an array's element type, a vector's/matrix's/quaternion's/
    transform's scalar type; MISSING for anything else (scalars and structs have none)."""
    if isinstance(t, ft.ArrayT):
        return t.dtype
    if wt.is_composite(t) and not wt.is_struct(t):
        return t._wp_scalar_type_
    return MISSING
