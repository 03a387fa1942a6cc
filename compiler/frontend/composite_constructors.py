"""Constructor calls of composite types in kernels: `T(...)` for a vector, matrix, quaternion, transform or
struct type, and the type functions mapped onto composite values: `wp.identity`, `wp.quat_identity`,
`wp.transform_identity`, `wp.quat_to_axis_angle`, `wp.transform_set_translation/rotation`, and the anonymous
constructors `wp.types.vector(...)`, `matrix(...)`, `quaternion(...)`, `transformation(...)` (Warp's rules).

calls.py hands these calls over (is_constructor, construct); the values are built by composite_values.py."""

from __future__ import annotations

import ast

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError
from mlwarp.core.vector import matrix, quaternion, transformation, vector

from . import composite
from . import types as ft
from .composite_values import (anon_keywords, check_typed_keywords, construct_from, construct_transform,
                               identity_value, inferred_dtype, struct_value)
from .resolve import MISSING, resolve_path
from .values import TupleVar


# -- constructors ---------------------------------------------------------------------------
def is_constructor(obj) -> bool:
    return wt.is_composite(obj) or _type_function(obj) is not None


def construct(em, node, T):
    """`T(...)` for a composite type T, or a type function such as `wp.identity(n=3, dtype=float)`."""
    if wt.is_composite(T):
        T = wt.canonical_type(T)  # a client's subclass of a vector type makes values of that vector type
    node = _positional_dtype(em, node, T)
    if _type_function(T) is not None:
        return _type_function(T)(em, node)
    if wt.is_struct(T):
        return struct_value(em, node, T)
    if wt.composite_kind(T) == "transform":
        return construct_transform(em, node, T)
    if node.keywords:
        check_typed_keywords(em, node, T)
    return construct_from(em, node, T, [em.expr(a) for a in node.args])


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
        em.assign(node.args[0], composite.with_member(em, target, t, em.expr(node.args[1])))
        return None

    return emit


def is_in_place_setter(obj) -> bool:
    """Whether calling `obj` rebinds its first argument (`wp.transform_set_translation(t, p)`)."""
    import sys

    wv = sys.modules["mlwarp.core.vector"]
    return obj is wv.transform_set_translation or obj is wv.transform_set_rotation


# -- anonymous constructors: wp.types.vector(...), matrix(...), quaternion(...), transformation(...) ---
def _check_fill(em, node, arg, dtype, what):
    if arg.literal is None and arg.type is not dtype:
        raise em.error(node, f"the value used to fill this {what} is expected to be of the type `{dtype.__name__}`",
                       CompileTypeError)


def _anon_vector(em, node):
    """`wp.types.vector(*args, length=None, dtype=None)` in a kernel: the type follows Warp's rules (zeros,
    a copy, a fill, or one value per component)."""
    kw = anon_keywords(em, node, "vector", ("length", "dtype"))
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
            dtype = inferred_dtype(em, node, args, "vector")
        _check_fill(em, node, args[0], dtype, "vector")
    else:
        if length is not None and length != len(args):
            raise em.error(node, f"incompatible number of values given ({len(args)}) when constructing a vector "
                                 f"of length {length}", CompileTypeError)
        length, dtype = len(args), dtype or inferred_dtype(em, node, args, "vector")
    return construct_from(em, node, vector(length, dtype), args)


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
    kw = anon_keywords(em, node, "matrix", ("shape", "dtype"))
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
            dtype = inferred_dtype(em, node, args, "matrix")
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
        dtype = dtype or inferred_dtype(em, node, args, "matrix")
    return construct_from(em, node, matrix(tuple(shape), dtype), args)


def _anon_quaternion(em, node):
    """`wp.types.quaternion(*args, dtype=None)` in a kernel: zeros, a conversion of a quaternion, or its
    components (x, y, z, w) / (vec3, w), by Warp's rules."""
    dtype = anon_keywords(em, node, "quaternion", ("dtype",)).get("dtype")
    args = [em.expr(a) for a in node.args]
    if not args:
        dtype = dtype or wt.float32
        if not wt.is_float(dtype):
            raise em.error(node, f"a float type is expected when zero-initializing a quaternion but got "
                                 f"`{dtype.__name__}` instead", CompileTypeError)
    elif len(args) == 1 and wt.composite_kind(args[0].type) == "quat":
        dtype = dtype or wt.scalar_type_of(args[0].type)
    else:
        dtype = dtype or inferred_dtype(em, node, args, "quaternion")
    return construct_from(em, node, quaternion(dtype), args)


def _anon_transformation(em, node):
    """`wp.types.transformation(p, q=identity, dtype=None)` (or 0, 1 or 7 components) in a kernel."""
    rest = [kw for kw in node.keywords if kw.arg not in ("p", "q")]
    dtype = anon_keywords(em, ast.copy_location(ast.Call(func=node.func, args=[], keywords=rest), node),
                           "transformation", ("dtype",)).get("dtype")
    return construct_transform(em, node, None, dtype)


def _type_function(obj):
    import sys

    wv = sys.modules["mlwarp.core.vector"]
    return {id(wv.identity): _identity, id(wv.quat_identity): _quat_identity,
            id(wv.transform_identity): _transform_identity,
            id(wv.quat_to_axis_angle): _quat_to_axis_angle,
            id(vector): _anon_vector, id(matrix): _anon_matrix, id(quaternion): _anon_quaternion,
            id(transformation): _anon_transformation,
            id(wv.transform_set_translation): _setter("p"), id(wv.transform_set_rotation): _setter("q")}.get(id(obj))
