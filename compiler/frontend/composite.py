"""The frontend for composite values: vectors, matrices, quaternions, transforms and structs.

The emitter hands over (in a few lines each) component and field reads
(`v.x`, `v[0]`, `m[i, j]`, `m[i]`, `v[1:]`, `p.pos`: expressions.py), component
writes (`v[0] = ...`, `p.pos.x = ...`, `a[i].pos = ...`: statements.py; SSA,
so a write builds a new value and assigns it to the base) and captured
composite constants. Composite values are `warp.construct` / `warp.extract` /
`warp.insert` / `warp.struct_get` / `warp.struct_set` ops on dialect types;
constructor calls are composite_constructors.py's, the values they build
composite_values.py's.
"""
from __future__ import annotations

import ast

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileAttributeError, CompileError, CompileIndexError, CompileTypeError, CompileValueError
from mlwarp.core.vector import matrix, quaternion, vector

from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from . import fabric
from . import slots
from . import types as ft
from .composite_values import component, component_count, const_int
from .resolve import MISSING, resolve_path
from .syntax import int_literal
from .values import Var

_COMPONENTS = {"x": 0, "y": 1, "z": 2, "w": 3}


def is_composite(t) -> bool:
    return wt.is_composite(t)


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
        comps = [component(em, base, start + k).value for k in range(component_count(part))]
        return Var(wc.construct(ft.to_mlir(part), comps), part)
    k = _COMPONENTS.get(name)
    if kind in ("vec", "quat") and k is not None and k < component_count(t):
        return component(em, base, k)
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
        parts.append(None if p is None else const_int(em, p, "slice"))
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
        out = wc.insert(out, component(em, value, k).value, idx)
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
            for k in range(component_count(part.type)):
                out = wc.insert(out, component(em, value, k).value, [em.const(start + k, wt.int32).value])
            return Var(out, t)
        k = _COMPONENTS.get(target.attr)
        if kind in ("vec", "quat") and k is not None and k < component_count(t):
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
    T = wt.canonical_type(type(obj))
    if wt.is_struct(T):
        return _struct_constant(em, node, obj, [])
    scalar = wt.scalar_type_of(T)
    vals = [em.const(obj._get(k), scalar).value for k in range(component_count(T))]
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
        elif wt.is_composite(type(field)) and wt.canonical_type(type(field)) == t:
            part = constant(em, node, field)
        else:
            why = "None is returned" if field is None else "a Warp array cannot be created inside Warp kernels" \
                if isinstance(t, ft.ArrayT) else f"value of type {type(field)} cannot be constructed inside Warp kernels"
            raise em.error(node, f"Static expression returns an unsupported value: the returned Warp struct contains "
                                 f"a data type that cannot be constructed inside Warp kernels: {why} at "
                                 f"{'.'.join([(root or T).__name__, *path])}", CompileError)  # the struct's path
        value = Var(wc.struct_set(value.value, k, part.value), T)
    return value
