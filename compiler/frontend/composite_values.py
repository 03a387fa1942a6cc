"""Composite values built from scalars: the component rules of the typed constructors (`wp.vec3(...)`,
`wp.mat22d(m)`, transforms from p and q, structs from their fields), component-wise conversions, identity
values, and the constant arguments (integers, `length=` / `shape=` / `dtype=` keywords) constructors read.

composite_constructors.py dispatches constructor calls here; composite.py reads and writes components."""

from __future__ import annotations

import ast

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError
from mlwarp.core.vector import quaternion, transformation

from ..dialects.warp import composite as wc
from . import types as ft
from .resolve import MISSING, resolve_path
from .syntax import int_literal
from .values import Var


def _scalar_args(em, node, T, args) -> list:
    """The constructor arguments of a vector-like T as T's scalars, in storage order."""
    scalar = wt.scalar_type_of(T)
    n = 1
    for s in wt.inner_shape(T):
        n *= s
    if not args:
        return None
    kind = wt.composite_kind(T)
    if len(args) == 1 and kind in ("vec", "mat") and wt.composite_kind(args[0].type) == kind and \
            wt.inner_shape(args[0].type) != wt.inner_shape(T):  # Warp's messages (its order of the shapes)
        if kind == "vec":
            raise em.error(node, f"incompatible vector of length {wt.inner_shape(T)[0]} given when copy "
                                 f"constructing a vector of length {wt.inner_shape(args[0].type)[0]}",
                           CompileTypeError)
        raise em.error(node, f"incompatible matrix of shape {wt.inner_shape(T)} given when copy constructing "
                             f"a matrix of shape {wt.inner_shape(args[0].type)}", CompileTypeError)
    flat = []
    for a in args:
        if wt.is_composite(a.type) and not wt.is_struct(a.type):
            flat += [component(em, a, k) for k in range(component_count(a.type))]
        elif wt.is_scalar(a.type):
            flat.append(a)
        else:
            raise em.error(node, f"{wt.type_name(T)}() cannot take a {ft.name(a.type)}", CompileTypeError)
    fill = len(flat) == 1 and n > 1
    if fill:
        flat = flat * n  # fill: wp.vec3(1.0)
    if len(flat) != n:
        if kind == "vec" and all(wt.is_scalar(a.type) for a in args):
            raise em.error(node, f"incompatible number of values given ({len(flat)}) when constructing a vector "
                                 f"of length {n}", CompileTypeError)
        if kind == "mat" and all(wt.is_scalar(a.type) for a in args):
            raise em.error(node, f"incompatible number of values given ({len(flat)}) when constructing a matrix "
                                 f"of shape {wt.inner_shape(T)}", CompileTypeError)
        raise em.error(node, f"{wt.type_name(T)}() takes {n} components (or one value to fill), got {len(flat)}",
                       CompileTypeError)
    converting = len(args) == 1 and wt.is_composite(args[0].type)  # wp.vec3d(v): a component-wise conversion
    out = []
    for v in flat:
        if v.literal is not None or v.type is scalar or converting:  # a constant: exact in T's scalar type
            out.append(v if v.type is scalar else em.convert(v, scalar, node))
        else:  # as Warp: a variable of another scalar type is an error, not a silent conversion
            what = _KIND_NAMES.get(wt.composite_kind(T), "vector")
            raise em.error(node, f"the value used to fill this {what} is expected to be of the type "
                                 f"`{scalar.__name__}`" if fill else
                           f"all values used to initialize this {what} are expected to be of the type "
                           f"`{scalar.__name__}`", CompileTypeError)
    return out


_KIND_NAMES = {"vec": "vector", "mat": "matrix", "quat": "quaternion", "transform": "transform"}


def component_count(t) -> int:
    n = 1
    for s in wt.inner_shape(t):
        n *= s
    return n


def component(em, v, k):
    """Storage element k of a vector-like value (row-major for matrices)."""
    t = v.type
    scalar = wt.scalar_type_of(t)
    if wt.composite_kind(t) == "mat":
        cols = wt.inner_shape(t)[1]
        idx = [em.const(k // cols, wt.int32).value, em.const(k % cols, wt.int32).value]
    else:
        idx = [em.const(k, wt.int32).value]
    return Var(wc.extract(v.value, idx, ft.to_mlir(scalar)), scalar)


def check_typed_keywords(em, node, T):
    """`mat32d(c, shape=(3, 2))`: Warp's typed constructors take the anonymous constructor's keywords; they
    must agree with the type."""
    kind = wt.composite_kind(T)
    allowed = {"vec": ("length", "dtype"), "mat": ("shape", "dtype")}.get(kind, ("dtype",))
    given = anon_keywords(em, node, wt.type_name(T), allowed)
    own = {"length": wt.inner_shape(T)[0] if kind == "vec" else None,
           "shape": wt.inner_shape(T) if kind == "mat" else None, "dtype": wt.scalar_type_of(T)}
    for k, v in given.items():
        if v != own[k]:
            shown = v.__name__ if k == "dtype" else v
            raise em.error(node, f"{wt.type_name(T)}() got {k}={shown}, which the type does not have",
                           CompileTypeError)


def construct_transform(em, node, T, dtype=None):
    """`wp.transform(...)` (T given) or `wp.types.transformation(..., dtype=None)` (T None: the dtype keyword or
    the arguments' scalar type) in a kernel, by Warp's two overloads: `(p, q=identity)` (positional or
    keywords), or 0, 1 (a fill or a copy of the same dtype) or 7 scalar components."""
    pq = [kw for kw in node.keywords if kw.arg in ("p", "q")]
    rest = [kw for kw in node.keywords if kw.arg not in ("p", "q")]
    if T is not None and rest:
        check_typed_keywords(em, ast.copy_location(ast.Call(func=node.func, args=[], keywords=rest), node), T)
    name = wt.type_name(T) if T is not None else "transformation"
    if pq:
        if len(node.args) > 2:
            raise em.error(node, f"{name}() takes p and q, got {len(node.args)} positional values and keywords",
                           CompileTypeError)
        given = dict(zip(("p", "q"), node.args))
        for kw in pq:
            if kw.arg in given:
                raise em.error(node, f"{name}() got multiple values for argument '{kw.arg}'", CompileTypeError)
            given[kw.arg] = kw.value
        if "p" not in given:
            raise em.error(node, f"{name}() missing required argument 'p'", CompileTypeError)
        args = [em.expr(given["p"])] + ([em.expr(given["q"])] if "q" in given else [])
    else:
        args = [em.expr(a) for a in node.args]
    if T is None:
        if args and dtype is None:
            dtype = inferred_dtype(em, node, args, "transformation")
        T = transformation(dtype or wt.float32)
    scalar = wt.scalar_type_of(T)
    if len(args) == 1 and wt.composite_kind(args[0].type) == "transform":
        source = wt.scalar_type_of(args[0].type)
        if source is not scalar:
            raise em.error(node, f"copy constructing a transform requires matching source and target dtypes, got "
                                 f"`{source.__name__}` and `{scalar.__name__}`", CompileError)
    elif len(args) == 1 and wt.composite_kind(args[0].type) == "vec" and wt.inner_shape(args[0].type) == (3,):
        args = [args[0], identity_value(em, quaternion(scalar))]  # wp.transform(p): the identity rotation
    elif all(wt.is_scalar(a.type) for a in args) and len(args) not in (0, 1, 7):
        raise em.error(node, f"incompatible number of values given ({len(args)}) when constructing a transform; "
                             f"expected 0, 1, or 7", CompileError)
    return construct_from(em, node, T, args)


def construct_from(em, node, T, args):
    mt = ft.to_mlir(T)
    if wt.composite_kind(T) == "transform" and len(args) == 2:
        p, q = args
        if wt.inner_shape(p.type) != (3,) or wt.composite_kind(q.type) != "quat":
            raise em.error(node, f"{wt.type_name(T)}(p, q) takes a 3-vector and a quaternion, got "
                                 f"{ft.name(p.type)} and {ft.name(q.type)}", CompileTypeError)
    if wt.composite_kind(T) == "mat" and any(wt.composite_kind(a.type) == "vec" for a in args):
        raise em.error(node, "Passing vectors to `wp.matrix()` isn't supported, use `wp.matrix_from_rows()` or "
                             "`wp.matrix_from_cols()` instead.", CompileTypeError)
    scalars = _scalar_args(em, node, T, args)
    return Var(wc.construct(mt, [s.value for s in scalars] if scalars else []), T)


def struct_value(em, node, T):
    """`S()`: a zero struct; `S(a, b)` / `S(b=..., a=...)`: every field, each of its exact type (Warp's value
    constructor)."""
    fields = T._wp_fields_
    value = Var(wc.construct(ft.to_mlir(T), []), T)
    if not node.args and not node.keywords:
        return value
    given = dict(zip([f for f, _ in fields], node.args))
    for kw in node.keywords:
        if kw.arg is None or kw.arg in given:
            given = {}
            break
        given[kw.arg] = kw.value
    args = {name: em.expr(n) for name, n in given.items()}
    if len(node.args) > len(fields) or set(args) != {f for f, _ in fields} or \
            any(args[f].type != ft.from_annotation(t) for f, t in fields):
        types = ", ".join(ft.name(em.expr(a).type) for a in node.args) if not args else \
            ", ".join(ft.name(v.type) for v in args.values())
        raise em.error(node, f"Couldn't find function overload for '{T.__name__}' that matched inputs with types: "
                             f"[{types}]", CompileTypeError)
    for k, (f, _) in enumerate(fields):
        value = Var(wc.struct_set(value.value, k, args[f].value), T)
    return value


def convert(em, v, to, node):
    """A composite value converted to another composite type of the same kind and shape (component-wise
    casts, as the constructor `wp.vec3d(v)`); anything else is a type error."""
    t = v.type
    if not (wt.is_composite(t) and wt.is_composite(to) and not wt.is_struct(t) and
            wt.composite_kind(t) == wt.composite_kind(to) and wt.inner_shape(t) == wt.inner_shape(to)):
        raise em.error(node, f"cannot convert {ft.name(t)} to {ft.name(to)}", CompileTypeError)
    scalars = _scalar_args(em, node, to, [v])
    return Var(wc.construct(ft.to_mlir(to), [s.value for s in scalars]), to)


def identity_value(em, T):
    """The identity quaternion (0, 0, 0, 1), transform (0, 0, 0, 0, 0, 0, 1) or matrix of type T."""
    scalar = wt.scalar_type_of(T)
    n = component_count(T)
    if wt.composite_kind(T) == "mat":
        cols = wt.inner_shape(T)[1]
        ones = {k for k in range(n) if k // cols == k % cols}
    else:
        ones = {n - 1}
    vals = [em.const(1 if k in ones else 0, scalar).value for k in range(n)]
    return Var(wc.construct(ft.to_mlir(T), vals), T)


# -- constant arguments: integers, and the keywords of the anonymous constructors ------------------------
def const_int(em, node, what):
    value = int_literal(node)
    local = em.env.get(node.id) if isinstance(node, ast.Name) else None
    if value is None and local is not None:  # a local bound to a constant (`stop = 3; v[0:stop]`), as in Warp
        literal = getattr(local, "literal", None)
        value = literal if isinstance(literal, int) and not isinstance(literal, bool) else None
    elif value is None:
        obj = resolve_path(em.src.func, node)
        value = obj if isinstance(obj, int) and not isinstance(obj, bool) else None
    if value is None:
        raise em.error(node, f"the `{what}` argument must be a constant integer", CompileTypeError)
    return value


def anon_keywords(em, node, name, allowed) -> dict:
    """The constant keywords of an anonymous constructor: length (int), shape (two ints), dtype (a type)."""
    out = {}
    for kw in node.keywords:
        if kw.arg not in allowed:
            raise em.error(node, f"{name}() got an unexpected keyword argument '{kw.arg}'", CompileError)
        if kw.arg == "dtype":
            obj = em.local_type(kw.value)  # dtype=x.dtype, dtype=type(x) (type_exprs.py)
            if obj is MISSING:
                obj = resolve_path(em.src.func, kw.value)
            t = wt.canonical_type(obj) if obj is not MISSING else None
            if t is None or not wt.is_scalar(t):
                raise em.error(kw.value, "the `dtype` argument must be a scalar type", CompileTypeError)
            out["dtype"] = t
        elif kw.arg == "length":
            out["length"] = const_int(em, kw.value, "length")
        else:
            if isinstance(kw.value, ast.Tuple):
                shape = tuple(const_int(em, e, "shape") for e in kw.value.elts)
            else:
                obj = resolve_path(em.src.func, kw.value)
                shape = tuple(obj) if isinstance(obj, (tuple, list)) else None
            if shape is None or len(shape) != 2 or not all(isinstance(d, int) for d in shape):
                raise em.error(kw.value, "the `shape` argument must be a tuple of two constant integers",
                               CompileTypeError)
            out["shape"] = shape
    return out


def inferred_dtype(em, node, args, what):
    """The one scalar type of `args` (a composite argument counts as its scalar type), as Warp infers it."""
    found = {wt.scalar_type_of(a.type) if wt.is_composite(a.type) else a.type for a in args}
    if len(found) != 1 or not wt.is_scalar(next(iter(found))):
        raise em.error(node, f"all values given when constructing a {what} must have the same type",
                       CompileTypeError)
    return found.pop()
