"""The frontend for composite values: vectors, matrices, quaternions, transforms and structs.

codegen.py hands over (in a few lines each) constructor calls (`wp.vec3(...)`,
`Particle()`), component and field reads (`v.x`, `v[0]`, `m[i, j]`, `m[i]`,
`p.pos`), component writes (`v[0] = ...`, `p.pos.x = ...`, `a[i].pos = ...`:
SSA, so a write builds a new value and assigns it to the base) and captured
composite constants. Composite values are `warp.construct` / `warp.extract` /
`warp.insert` / `warp.struct_get` / `warp.struct_set` ops on dialect types.
"""

from __future__ import annotations

import ast

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileAttributeError, CompileError, CompileIndexError, CompileTypeError, CompileValueError
from mlwarp.core.vector import matrix, quaternion, transformation, vector

from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from . import fabric
from . import slots
from . import types as ft
from .resolve import MISSING, resolve_path
from .syntax import int_literal
from .values import TupleVar, Var

_COMPONENTS = {"x": 0, "y": 1, "z": 2, "w": 3}


def is_composite(t) -> bool:
    return wt.is_composite(t)


# -- constructors ---------------------------------------------------------------------------
def is_constructor(obj) -> bool:
    return wt.is_composite(obj) or _type_function(obj) is not None


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
            flat += [_component(em, a, k) for k in range(_size(a.type))]
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


def _size(t) -> int:
    n = 1
    for s in wt.inner_shape(t):
        n *= s
    return n


def _component(em, v, k):
    """Storage element k of a vector-like value (row-major for matrices)."""
    t = v.type
    scalar = wt.scalar_type_of(t)
    if wt.composite_kind(t) == "mat":
        cols = wt.inner_shape(t)[1]
        idx = [em.const(k // cols, wt.int32).value, em.const(k % cols, wt.int32).value]
    else:
        idx = [em.const(k, wt.int32).value]
    return Var(wc.extract(v.value, idx, ft.to_mlir(scalar)), scalar)


component = _component  # printing.py prints composites component by component


def construct(em, node, T):
    """`T(...)` for a composite type T, or a type function such as `wp.identity(n=3, dtype=float)`."""
    node = _positional_dtype(em, node, T)
    if _type_function(T) is not None:
        return _type_function(T)(em, node)
    if wt.is_struct(T):
        return _struct_value(em, node, T)
    if wt.composite_kind(T) == "transform":
        return _construct_transform(em, node, T)
    if node.keywords:
        _check_typed_keywords(em, node, T)
    return _construct_from(em, node, T, [em.expr(a) for a in node.args])


def _positional_dtype(em, node, T):
    """`wp.quaternion(x, y, z, w, wp.float64)`: Warp's constructors take their dtype as the last positional
    argument too; here it becomes the `dtype=` keyword every constructor reads."""
    if not node.args or any(kw.arg == "dtype" for kw in node.keywords) or wt.is_struct(T):
        return node
    last = node.args[-1]
    obj = em.local_type(last)
    if obj is MISSING:
        obj = resolve_path(em.src.func, last)
    if not (isinstance(obj, type) and wt.is_scalar(wt.canonical_type(obj) or object)):
        return node
    return ast.copy_location(ast.Call(node.func, node.args[:-1], [*node.keywords, ast.keyword("dtype", last)]),
                             node)


def _check_typed_keywords(em, node, T):
    """`mat32d(c, shape=(3, 2))`: Warp's typed constructors take the anonymous constructor's keywords; they
    must agree with the type."""
    kind = wt.composite_kind(T)
    allowed = {"vec": ("length", "dtype"), "mat": ("shape", "dtype")}.get(kind, ("dtype",))
    given = _anon_keywords(em, node, wt.type_name(T), allowed)
    own = {"length": wt.inner_shape(T)[0] if kind == "vec" else None,
           "shape": wt.inner_shape(T) if kind == "mat" else None, "dtype": wt.scalar_type_of(T)}
    for k, v in given.items():
        if v != own[k]:
            shown = v.__name__ if k == "dtype" else v
            raise em.error(node, f"{wt.type_name(T)}() got {k}={shown}, which the type does not have",
                           CompileTypeError)


def _construct_transform(em, node, T, dtype=None):
    """`wp.transform(...)` (T given) or `wp.types.transformation(..., dtype=None)` (T None: the dtype keyword or
    the arguments' scalar type) in a kernel, by Warp's two overloads: `(p, q=identity)` (positional or
    keywords), or 0, 1 (a fill or a copy of the same dtype) or 7 scalar components."""
    pq = [kw for kw in node.keywords if kw.arg in ("p", "q")]
    rest = [kw for kw in node.keywords if kw.arg not in ("p", "q")]
    if T is not None and rest:
        _check_typed_keywords(em, ast.copy_location(ast.Call(func=node.func, args=[], keywords=rest), node), T)
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
            dtype = _inferred_dtype(em, node, args, "transformation")
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
    return _construct_from(em, node, T, args)


def _construct_from(em, node, T, args):
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


def _struct_value(em, node, T):
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
    n = _size(T)
    if wt.composite_kind(T) == "mat":
        cols = wt.inner_shape(T)[1]
        ones = {k for k in range(n) if k // cols == k % cols}
    else:
        ones = {n - 1}
    vals = [em.const(1 if k in ones else 0, scalar).value for k in range(n)]
    return Var(wc.construct(ft.to_mlir(T), vals), T)


def _kw_type(em, node, name, default):
    for kw in node.keywords:
        if kw.arg == name:
            obj = em.local_type(kw.value)  # dtype=x.dtype, dtype=type(x): a type expression (type_exprs.py)
            if obj is MISSING:
                obj = resolve_path(em.src.func, kw.value)
            t = wt.canonical_type(obj) if obj is not MISSING else None
            if t is None:
                raise em.error(kw.value, f"'{name}' must be a type", CompileTypeError)
            return t
    return default


def _identity(em, node):
    n = None
    for kw in node.keywords:
        if kw.arg == "n":
            n = kw.value
    n = n if n is not None else (node.args[0] if node.args else None)
    size = em.static_int(n) if n is not None else None  # a literal or wp.static(len(v) + 1)
    if size is None and n is not None and not isinstance(n, ast.Constant):
        size = em.expr(n).literal  # a local holding a constant
    if not (isinstance(size, int) and not isinstance(size, bool)):
        raise em.error(node, "identity(n, dtype): n must be an integer constant", CompileError)
    dtype = _kw_type(em, node, "dtype", wt.float32)
    if len(node.args) > 1:
        dtype = wt.canonical_type(resolve_path(em.src.func, node.args[1]))
    return identity_value(em, matrix((size, size), dtype))


def _quat_identity(em, node):
    return identity_value(em, quaternion(_kw_type(em, node, "dtype", wt.float32)))


def _transform_identity(em, node):
    return identity_value(em, transformation(_kw_type(em, node, "dtype", wt.float32)))


def tuple_call(em, node, count):
    """`axis, angle = wp.quat_to_axis_angle(q)`: a builtin returning a tuple, as two table builtins; None
    when `node` is not such a call."""
    import sys

    obj = resolve_path(em.src.func, node.func)
    if obj is not getattr(sys.modules["mlwarp.core.vector"], "quat_to_axis_angle"):
        return None
    if count != 2 or len(node.args) != 1 or node.keywords:
        raise em.error(node, "use `axis, angle = wp.quat_to_axis_angle(q)`", CompileError)
    q = em.expr(node.args[0])
    return [em.call_builtin(node, "quat_to_axis", [q]), em.call_builtin(node, "quat_to_angle", [q])]


def _quat_to_axis_angle(em, node):
    """`wp.quat_to_axis_angle(q, axis, angle)`: Warp's output-argument form assigns the axis and the angle to
    the two variables; `t = wp.quat_to_axis_angle(q)` is the tuple (axis, angle)."""
    if len(node.args) != 3 or node.keywords:
        return TupleVar(tuple_call(em, node, 2))
    q = em.expr(node.args[0])
    if wt.composite_kind(q.type) != "quat":
        raise em.error(node, f"quat_to_axis_angle() expects a quaternion, got {ft.name(q.type)}", CompileTypeError)
    axis, angle = em.call_builtin(node, "quat_to_axis", [q]), em.call_builtin(node, "quat_to_angle", [q])
    for target, value in ((node.args[1], axis), (node.args[2], angle)):
        if not isinstance(target, (ast.Name, ast.Attribute, ast.Subscript)):
            raise em.error(target, "quat_to_axis_angle(q, axis, angle): axis and angle must be variables",
                           CompileError)
        if em.expr(target).type != value.type:
            raise em.error(target, f"quat_to_axis_angle(q, axis, angle): expected a {ft.name(value.type)} output, "
                                   f"got {ft.name(em.expr(target).type)}", CompileTypeError)
        em.assign(target, value)
    return None


def _setter(member):
    """`wp.transform_set_translation(t, p)`: assigns `t.p = p` to the first argument's target (SSA)."""

    def emit(em, node):
        if len(node.args) != 2 or node.keywords:
            raise em.error(node, f"transform_set_{'translation' if member == 'p' else 'rotation'}(t, value) takes "
                                 f"two arguments", CompileError)
        t = em.expr(node.args[0])
        if wt.composite_kind(t.type) != "transform":
            raise em.error(node, f"expects a transform, got {ft.name(t.type)}", CompileTypeError)
        target = ast.copy_location(ast.Attribute(value=node.args[0], attr=member, ctx=ast.Store()), node)
        em.assign(node.args[0], with_member(em, target, t, em.expr(node.args[1])))
        return None

    return emit


def is_in_place_setter(obj) -> bool:
    """Whether calling `obj` rebinds its first argument (`wp.transform_set_translation(t, p)`)."""
    import sys

    wv = sys.modules["mlwarp.core.vector"]
    return obj is wv.transform_set_translation or obj is wv.transform_set_rotation


# -- anonymous constructors: wp.types.vector(...), matrix(...), quaternion(...), transformation(...) ---
def _const_int(em, node, what):
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


def _anon_keywords(em, node, name, allowed) -> dict:
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
            out["length"] = _const_int(em, kw.value, "length")
        else:
            if isinstance(kw.value, ast.Tuple):
                shape = tuple(_const_int(em, e, "shape") for e in kw.value.elts)
            else:
                obj = resolve_path(em.src.func, kw.value)
                shape = tuple(obj) if isinstance(obj, (tuple, list)) else None
            if shape is None or len(shape) != 2 or not all(isinstance(d, int) for d in shape):
                raise em.error(kw.value, "the `shape` argument must be a tuple of two constant integers",
                               CompileTypeError)
            out["shape"] = shape
    return out


def _inferred_dtype(em, node, args, what):
    """The one scalar type of `args` (a composite argument counts as its scalar type), as Warp infers it."""
    found = {wt.scalar_type_of(a.type) if wt.is_composite(a.type) else a.type for a in args}
    if len(found) != 1 or not wt.is_scalar(next(iter(found))):
        raise em.error(node, f"all values given when constructing a {what} must have the same type",
                       CompileTypeError)
    return found.pop()


def _check_fill(em, node, arg, dtype, what):
    if arg.literal is None and arg.type is not dtype:
        raise em.error(node, f"the value used to fill this {what} is expected to be of the type `{dtype.__name__}`",
                       CompileTypeError)


def _anon_vector(em, node):
    """`wp.types.vector(*args, length=None, dtype=None)` in a kernel: the type follows Warp's rules (zeros,
    a copy, a fill, or one value per component)."""
    kw = _anon_keywords(em, node, "vector", ("length", "dtype"))
    args = [em.expr(a) for a in node.args]
    length, dtype = kw.get("length"), kw.get("dtype")
    if not args:
        if length is None:
            raise em.error(node, "the `length` argument must be specified when zero-initializing a vector",
                           CompileTypeError)
        dtype = dtype or wt.float32
    elif len(args) == 1 and wt.composite_kind(args[0].type) == "vec":
        given = wt.inner_shape(args[0].type)[0]
        if length is not None and length != given:
            raise em.error(node, f"incompatible vector of length {length} given when copy constructing a vector "
                                 f"of length {given}", CompileTypeError)
        length, dtype = given, dtype or wt.scalar_type_of(args[0].type)
    elif len(args) == 1:
        if length is None:
            raise em.error(node, "the `length` argument must be specified when filling a vector with a value",
                           CompileTypeError)
        if dtype is None:
            dtype = _inferred_dtype(em, node, args, "vector")
        _check_fill(em, node, args[0], dtype, "vector")
    else:
        if length is not None and length != len(args):
            raise em.error(node, f"incompatible number of values given ({len(args)}) when constructing a vector "
                                 f"of length {length}", CompileTypeError)
        length, dtype = len(args), dtype or _inferred_dtype(em, node, args, "vector")
    return _construct_from(em, node, vector(length, dtype), args)


def _is_pos_rot_scale(types) -> bool:
    """(vec3 of floats, quaternion of floats, vec3 of floats): the arguments of Warp's removed
    `matrix(pos, rot, scale, dtype)` overload, which Warp still resolves (and then refuses)."""
    if len(types) != 3:
        return False
    kinds = [wt.composite_kind(t) for t in types]
    return kinds == ["vec", "quat", "vec"] and all(wt.is_float(wt.scalar_type_of(t)) for t in types) and \
        wt.inner_shape(types[0]) == (3,) and wt.inner_shape(types[2]) == (3,)


def _anon_matrix(em, node):
    """`wp.types.matrix(*args, shape=None, dtype=None)` in a kernel, by Warp's rules."""
    kw = _anon_keywords(em, node, "matrix", ("shape", "dtype"))
    args = [em.expr(a) for a in node.args]
    shape, dtype = kw.get("shape"), kw.get("dtype")
    if shape is None and _is_pos_rot_scale([a.type for a in args]):  # Warp's matrix(pos, rot, scale) overload
        raise em.error(node, "the built-in `wp.types.matrix()` to construct a 4x4 matrix from a 3D position, "
                             "quaternion, and 3D scale vector has been removed in favor of `wp.transform_compose()`.",
                       CompileTypeError)
    if not args:
        if shape is None:
            raise em.error(node, "the `shape` argument must be specified when zero-initializing a matrix",
                           CompileTypeError)
        dtype = dtype or wt.float32
    elif len(args) == 1 and wt.composite_kind(args[0].type) == "mat":
        given = wt.inner_shape(args[0].type)
        if shape is not None and tuple(shape) != tuple(given):
            raise em.error(node, f"incompatible matrix of shape {tuple(shape)} given when copy constructing a "
                                 f"matrix of shape {tuple(given)}", CompileTypeError)
        shape, dtype = given, dtype or wt.scalar_type_of(args[0].type)
    elif len(args) == 1:
        if shape is None:
            raise em.error(node, "the `shape` argument must be specified when filling a matrix with a value",
                           CompileTypeError)
        if dtype is None:
            dtype = _inferred_dtype(em, node, args, "matrix")
        _check_fill(em, node, args[0], dtype, "matrix")
    else:
        if shape is None:
            raise em.error(node, "the `shape` argument must be specified when initializing a matrix by value",
                           CompileTypeError)
        if all(wt.composite_kind(a.type) == "vec" for a in args):
            raise em.error(node, "Passing vectors to `wp.matrix()` isn't supported, use `wp.matrix_from_rows()` "
                                 "or `wp.matrix_from_cols()` instead.", CompileTypeError)
        if shape[0] * shape[1] != len(args):
            raise em.error(node, f"incompatible number of values given ({len(args)}) when constructing a matrix "
                                 f"of shape {tuple(shape)}", CompileTypeError)
        dtype = dtype or _inferred_dtype(em, node, args, "matrix")
    return _construct_from(em, node, matrix(tuple(shape), dtype), args)


def _anon_quaternion(em, node):
    """`wp.types.quaternion(*args, dtype=None)` in a kernel: zeros, a conversion of a quaternion, or its
    components (x, y, z, w) / (vec3, w), by Warp's rules."""
    dtype = _anon_keywords(em, node, "quaternion", ("dtype",)).get("dtype")
    args = [em.expr(a) for a in node.args]
    if not args:
        dtype = dtype or wt.float32
        if not wt.is_float(dtype):
            raise em.error(node, f"a float type is expected when zero-initializing a quaternion but got "
                                 f"`{dtype.__name__}` instead", CompileTypeError)
    elif len(args) == 1 and wt.composite_kind(args[0].type) == "quat":
        dtype = dtype or wt.scalar_type_of(args[0].type)
    else:
        dtype = dtype or _inferred_dtype(em, node, args, "quaternion")
    return _construct_from(em, node, quaternion(dtype), args)


def _anon_transformation(em, node):
    """`wp.types.transformation(p, q=identity, dtype=None)` (or 0, 1 or 7 components) in a kernel."""
    rest = [kw for kw in node.keywords if kw.arg not in ("p", "q")]
    dtype = _anon_keywords(em, ast.copy_location(ast.Call(func=node.func, args=[], keywords=rest), node),
                           "transformation", ("dtype",)).get("dtype")
    return _construct_transform(em, node, None, dtype)


def _type_function(obj):
    import sys

    wv = sys.modules["mlwarp.core.vector"]
    return {id(wv.identity): _identity, id(wv.quat_identity): _quat_identity,
            id(wv.transform_identity): _transform_identity,
            id(wv.quat_to_axis_angle): _quat_to_axis_angle,
            id(vector): _anon_vector, id(matrix): _anon_matrix, id(quaternion): _anon_quaternion,
            id(transformation): _anon_transformation,
            id(wv.transform_set_translation): _setter("p"), id(wv.transform_set_rotation): _setter("q")}.get(id(obj))


# -- reads ------------------------------------------------------------------------------------
def _is_indexed(t) -> bool:
    """An indexed or Fabric array's struct (indexed.py, fabric.py handle their indexing, views and attributes)."""
    return getattr(t, "_wp_indexed_", None) is not None or getattr(t, "_wp_fabric_", None) is not None


def _is_local_expr(em, node) -> bool:
    """Whether `node` denotes a kernel value (a local, an element, a call result, any computed value such as
    `(v + w)` or `(-m)`) rather than a Python global (`wp.vec3`, `module.CONSTANT`)."""
    root = node
    while isinstance(root, ast.Attribute):
        root = root.value
    if isinstance(root, ast.Name) and root.id in em.env:  # a local shadows a global of its name: never looked up
        return True
    if isinstance(node, (ast.Name, ast.Attribute)):
        obj = resolve_path(em.src.func, node)
        if obj is not MISSING and not isinstance(obj, type) and wt.is_composite(type(obj)):
            return True  # a captured composite constant: `SELECTOR[0]` with SELECTOR = wp.constant(vec3b(...))
    return not isinstance(root, ast.Name)


def _index_var(em, node, n):
    """An i32 index; a constant negative one counts from the end (`v[-1]` is the last component, as in Warp)."""
    literal = int_literal(node)
    if literal is not None:
        return em.const(literal + n if literal < 0 else literal, wt.int32).value
    v = em.expr(node)
    if not wt.is_int(v.type):
        raise em.error(node, f"indices must be integers, got {ft.name(v.type)}", CompileTypeError)
    return wb.cast(v.value, ft.to_mlir(wt.int32))


def _check_const_index(em, node, idx_node, n):
    literal = int_literal(idx_node)
    if literal is not None and not -n <= literal < n:
        raise em.error(node, f"index {literal} out of range for {n} components", CompileIndexError)


def attribute(em, node):
    """`v.x`, `q.w`, `t.p`, `p.pos`: None when the base is not a composite value."""
    if not _is_local_expr(em, node.value):
        return None
    base = em.expr(node.value)
    if fabric.is_fabric(base.type):  # a.size (fabric.py)
        return fabric.attribute(em, node, base)
    if not wt.is_composite(base.type) or _is_indexed(base.type):
        return None
    return get_member(em, node, base, node.attr)


def _field(em, node, t, name):
    for k, (fname, ftype) in enumerate(t._wp_fields_):
        if fname == name:
            return k, ft.from_annotation(ftype) if wt.is_array(ftype) else ftype
    raise missing_field(em, node, t, name)


def missing_field(em, node, t, name):
    """Warp's AttributeError for `base.name` where the struct `t` has no such field; the fields are a note."""
    base = _node_name(node.value)
    e = em.error(node, f"`{name}` is not an attribute of '{base}' ({t.__module__}.{t.__qualname__})",
                 CompileAttributeError)
    e.add_note(f"struct '{t.__name__}' has the fields: {', '.join(f for f, _ in t._wp_fields_) or '(none)'}")
    return e


def _node_name(node) -> str:
    """How Warp names the base of an attribute in its messages: `p`, `p[...]`, else `<Call>` and the like."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript):
        return f"{_node_name(node.value)}[...]"
    return f"<{type(node).__name__}>"


def get_member(em, node, base, name):
    t = base.type
    kind = wt.composite_kind(t)
    if kind == "struct":
        k, ftype = _field(em, node, t, name)
        return Var(wc.struct_get(base.value, k, ft.to_mlir(ftype)), ftype)
    if kind == "transform" and name in ("p", "q"):
        scalar = wt.scalar_type_of(t)
        part = vector(3, scalar) if name == "p" else quaternion(scalar)
        start = 0 if name == "p" else 3
        comps = [_component(em, base, start + k).value for k in range(_size(part))]
        return Var(wc.construct(ft.to_mlir(part), comps), part)
    k = _COMPONENTS.get(name)
    if kind in ("vec", "quat") and k is not None and k < _size(t):
        return _component(em, base, k)
    if name == "length" and kind in ("vec", "quat", "transform"):  # the type's attributes, read through a value
        length = em.const(wt.inner_shape(t)[0], wt.int32)  # (Warp: v.length of a vector value is its type's)
        length.literal = wt.inner_shape(t)[0]  # a compile-time constant (wp.identity(n=v.length))
        return length
    raise not_an_attribute(em, node, t, name)


def not_an_attribute(em, node, t, name):
    """Warp's AttributeError for `base.name` on a value of type `t` (a vector, matrix, array, ...) without it."""
    return em.error(node, f"`{name}` is not an attribute of '{_node_name(node.value)}' ({ft.name(t)})",
                    CompileAttributeError)


def subscript(em, node):
    """`v[i]`, `m[i, j]`, `m[i]`: None when the base is not a vector-like value."""
    if not _is_local_expr(em, node.value):
        return None
    base = em.expr(node.value)
    if not wt.is_composite(base.type) or _is_indexed(base.type):
        return None
    return get_item(em, node, base, node.slice)


# -- slices: v[1:], v[::-1], m[:], m[0, :2], m[:2, 1], q[:2] (constant bounds; reads and writes) ---------------
def _has_slice(slice_node) -> bool:
    nodes = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
    return any(isinstance(i, ast.Slice) for i in nodes)


def _slice_positions(em, node, s, n) -> list:
    parts = []
    for p in (s.lower, s.upper, s.step):
        parts.append(None if p is None else _const_int(em, p, "slice"))
    if parts[2] == 0:
        raise em.error(node, "slice step cannot be zero", CompileError)
    return list(range(n)[slice(*parts)])


def _slice_plan(em, node, t, slice_node):
    """Per dimension of `t`: an i32 index value or the constant positions a slice selects (dimensions left
    out are whole); and the type of the selection (a vector for one sliced dimension, a matrix for two)."""
    nodes = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
    shape = wt.inner_shape(t)
    if wt.composite_kind(t) not in ("vec", "quat", "mat", "transform") or len(nodes) > len(shape):
        raise em.error(node, f"a {ft.name(t)} takes up to {len(shape)} indices", CompileError)
    plan = []
    for k, n in enumerate(shape):
        i = nodes[k] if k < len(nodes) else ast.Slice(None, None, None)
        if isinstance(i, ast.Slice):
            plan.append(_slice_positions(em, node, i, n))
        else:
            _check_const_index(em, node, i, n)
            plan.append(_index_var(em, i, n))
    kept = [len(p) for p in plan if isinstance(p, list)]
    if 0 in kept:  # a selection of nothing: a zero-length vector, or a (0, 0) matrix (Warp's)
        kept = [0] * len(kept)
    scalar = wt.scalar_type_of(t)
    part = vector(kept[0], scalar) if len(kept) == 1 else matrix(tuple(kept), scalar)
    return plan, part


def _slice_indices(em, plan):
    """The index lists of the selected components, in the selection's storage order."""
    out = [[]]
    for p in plan:
        choices = [em.const(k, wt.int32).value for k in p] if isinstance(p, list) else [p]
        out = [prefix + [c] for prefix in out for c in choices]
    return out


def get_slice(em, node, base, slice_node):
    plan, part = _slice_plan(em, node, base.type, slice_node)
    scalar = ft.to_mlir(wt.scalar_type_of(base.type))
    comps = [wc.extract(base.value, idx, scalar) for idx in _slice_indices(em, plan)]
    return Var(wc.construct(ft.to_mlir(part), comps), part)


def with_slice(em, node, base, slice_node, value):
    """`v[1:] = w`, `m[0, :2] = w`: base with the selected components replaced by value's (Warp's checks)."""
    plan, part = _slice_plan(em, node, base.type, slice_node)
    scalar = wt.scalar_type_of(base.type)
    vt = value.type
    if wt.composite_kind(part) == "vec":
        n = wt.inner_shape(part)[0]
        if not (wt.is_composite(vt) and wt.composite_kind(vt) in ("vec", "quat")):
            raise em.error(node, f"The provided value is expected to be a vector of length {n}, with dtype "
                                 f"{scalar.__name__}.", CompileValueError)
        if wt.inner_shape(vt)[0] != n:
            raise em.error(node, f"The length of the provided vector ({wt.inner_shape(vt)[0]}) isn't compatible "
                                 f"with the given slice (expected {n}).", CompileValueError)
        if wt.scalar_type_of(vt) is not scalar:
            raise em.error(node, f"The provided vector is expected to be of length {n} with dtype "
                                 f"{scalar.__name__}.", CompileValueError)
    else:
        shape = wt.inner_shape(part)
        if not (wt.is_composite(vt) and wt.composite_kind(vt) == "mat"):
            raise em.error(node, f"The provided value is expected to be a matrix of shape {shape}, with dtype "
                                 f"{scalar.__name__}.", CompileValueError)
        if wt.inner_shape(vt) != shape:
            raise em.error(node, f"The shape of the provided matrix ({wt.inner_shape(vt)}) isn't compatible "
                                 f"with the given slice (expected {shape}).", CompileValueError)
        if wt.scalar_type_of(vt) is not scalar:
            raise em.error(node, f"The provided matrix is expected to be of shape {shape} with dtype "
                                 f"{scalar.__name__}.", CompileValueError)
    out = base.value
    for k, idx in enumerate(_slice_indices(em, plan)):
        out = wc.insert(out, _component(em, value, k).value, idx)
    return Var(out, base.type)


def _indices(em, node, t, slice_node):
    idx_nodes = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
    shape = wt.inner_shape(t)
    if not shape:
        raise em.error(node, f"a {ft.name(t)} cannot be indexed", CompileTypeError)
    if len(idx_nodes) > len(shape) or any(isinstance(i, ast.Slice) for i in idx_nodes):
        raise em.error(node, f"a {ft.name(t)} takes up to {len(shape)} integer indices", CompileError)
    for i, n in zip(idx_nodes, shape):
        _check_const_index(em, node, i, n)
    return [_index_var(em, i, n) for i, n in zip(idx_nodes, shape)], idx_nodes


def _element_type(t, count):
    if wt.composite_kind(t) == "mat" and count == 1:
        return vector(wt.inner_shape(t)[1], wt.scalar_type_of(t))
    return wt.scalar_type_of(t)


def get_item(em, node, base, slice_node):
    if _has_slice(slice_node):
        return get_slice(em, node, base, slice_node)
    idx, _ = _indices(em, node, base.type, slice_node)
    et = _element_type(base.type, len(idx))
    return Var(wc.extract(base.value, idx, ft.to_mlir(et)), et)


# -- writes --------------------------------------------------------------------------------------
def assign(em, target, value) -> bool:
    """Handles `base.attr = value` / `base[i] = value` on a composite base; False if `target` is not one."""
    if not isinstance(target, (ast.Attribute, ast.Subscript)) or not _is_local_expr(em, target.value):
        return False
    with slots.slot_target(em, target):
        base = em.expr(target.value)
    if not wt.is_composite(base.type) or _is_indexed(base.type):
        return False
    em.assign(target.value, with_member(em, target, base, value))
    return True


def is_composite_base(em, target) -> bool:
    """Whether an augmented assignment target `x[i]` indexes a composite value (not an array)."""
    if not _is_local_expr(em, target.value):
        return False
    t = em.expr(target.value).type
    return wt.is_composite(t) and not _is_indexed(t)


def with_member(em, target, base, value):
    """`base` with the member named by `target` replaced by `value` (a new SSA value)."""
    t = base.type
    if isinstance(target, ast.Attribute):
        kind = wt.composite_kind(t)
        if kind == "struct":
            k, ftype = _field(em, target, t, target.attr)
            value = _converted(em, target, value, ftype)
            return Var(wc.struct_set(base.value, k, value.value), t)
        if kind == "transform" and target.attr in ("p", "q"):  # t.p = v, t.q = q
            part = get_member(em, target, base, target.attr)
            value = _converted(em, target, value, part.type)
            start = 0 if target.attr == "p" else 3
            out = base.value
            for k in range(_size(part.type)):
                out = wc.insert(out, _component(em, value, k).value, [em.const(start + k, wt.int32).value])
            return Var(out, t)
        k = _COMPONENTS.get(target.attr)
        if kind in ("vec", "quat") and k is not None and k < _size(t):
            value = _converted(em, target, value, wt.scalar_type_of(t))
            return Var(wc.insert(base.value, value.value, [em.const(k, wt.int32).value]), t)
        raise em.error(target, f"'{ft.name(t)}' has no attribute '{target.attr}' to assign", CompileError)
    if _has_slice(target.slice):
        return with_slice(em, target, base, target.slice, value)
    idx, _ = _indices(em, target, t, target.slice)
    value = _converted(em, target, value, _element_type(t, len(idx)))
    return Var(wc.insert(base.value, value.value, idx), t)


def _converted(em, node, value, to):
    if value.type == to:
        return value
    if wt.is_scalar(value.type) and wt.is_scalar(to):
        return em.convert(value, to, node)  # v[0] = 0.1 on a vec3d: 0.1 in float64
    raise em.error(node, f"Composite slot assignment expects value of type {ft.name(to)}, got "
                         f"{ft.name(value.type)}", CompileTypeError)  # Warp's text


# -- captured constants -----------------------------------------------------------------------------
def constant(em, node, obj):
    """A composite value captured from Python (`g = wp.vec3(0.0, -9.8, 0.0)` at module level)."""
    T = type(obj)
    if wt.is_struct(T):
        return _struct_constant(em, node, obj, [])
    scalar = wt.scalar_type_of(T)
    vals = [em.const(obj._get(k), scalar).value for k in range(_size(T))]
    return Var(wc.construct(ft.to_mlir(T), vals), T)


def _struct_constant(em, node, obj, path, root=None):
    """A struct instance captured from Python (`wp.static(make_params())`): its fields' values, as Warp
    builds it; a field Warp cannot build in a kernel (an array, None) is refused with Warp's words."""
    T = type(obj)
    value = Var(wc.construct(ft.to_mlir(T), []), T)
    for k, (name, annotation) in enumerate(T._wp_fields_):
        field = getattr(obj, name)
        t = ft.from_annotation(annotation)
        if wt.is_struct(type(field)):
            part = _struct_constant(em, node, field, [*path, name], root or T)
        elif isinstance(field, (bool, int, float, wt.scalar_base)) and wt.is_scalar(t):
            part = em.const(field.value if isinstance(field, wt.scalar_base) else field, t)
        elif wt.is_composite(type(field)) and type(field) == t:
            part = constant(em, node, field)
        else:
            why = "None is returned" if field is None else "a Warp array cannot be created inside Warp kernels" \
                if isinstance(t, ft.ArrayT) else f"value of type {type(field)} cannot be constructed inside Warp kernels"
            raise em.error(node, f"Static expression returns an unsupported value: the returned Warp struct contains "
                                 f"a data type that cannot be constructed inside Warp kernels: {why} at "
                                 f"{'.'.join([(root or T).__name__, *path])}", CompileError)  # the struct's path
        value = Var(wc.struct_set(value.value, k, part.value), T)
    return value
