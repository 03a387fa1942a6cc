"""Composite builtins called in Python scope (`wp.dot(a, b)`, `wp.quat_rotate(q, v)` outside a kernel).

The call is typed as in a kernel (the table picks the overload; a call none
accepts raises Warp's Python-scope RuntimeError) and computed with numpy:
floating-point values in float64, then stored in the result type; integer
values in their own type, wrapping as the kernel's arithmetic does
(`wp.dot(wp.vec2i(x, x), wp.vec2i(x, x))` wraps in int32). Scalar results come
back as Python-scope scalar builtins return them (pyscope.scalar_result).
Each function below is the numpy reading of the builtin's definition (the
kernel lowering follows Warp's formulas; tests compare both with numpy).
"""

from __future__ import annotations

import numpy as np

from mlwarp.core import types as wt

from . import pyscope as ps
from .pyscope import no_overload, scalar_result, warp_type


# scalar types a composite stores as numpy's own (not float16/bfloat16 bits)
_STORED_AS_NUMPY = (wt.float32, wt.float64, wt.int8, wt.uint8, wt.int16, wt.uint16, wt.int32, wt.uint32, wt.int64,
                    wt.uint64)


def _type_of(value):
    t = type(value)
    if wt.is_composite(t):
        return t
    return warp_type(value)


def _np(value, t):
    """The value as numpy: floats in float64, integers and bools in their own type."""
    s = wt.scalar_type_of(t)
    dtype = np.float64 if wt.is_float(s) else s._np_
    if wt.is_composite(t):
        return np.asarray(value.numpy()).astype(dtype)
    return np.array(value.value if isinstance(value, wt.scalar_base) else value).astype(dtype)[()]


def _elementwise(f):
    """`f` on numpy scalars, applied to broadcast operands (C integer division and remainder)."""
    def apply(a, b):
        if np.issubdtype(np.result_type(a, b), np.floating):
            return f(a, b)
        x, y = np.broadcast_arrays(a, b)
        return np.array([int(f(int(i), int(j))) for i, j in zip(x.flat, y.flat)], dtype=object).reshape(x.shape)
    return apply


def _wrap(v, s):
    """The integer `v` stored in integer type `s` (two's complement wrap)."""
    bits = s._bits_
    v = int(v) % (1 << bits)
    return v - (1 << bits) if s._kind_ != "uint" and v >= 1 << (bits - 1) else v


def _normalize(v, zero=None):
    n = np.sqrt(v @ v)
    return v / n if n > 0 else np.zeros_like(v) if zero is None else zero


def _cross(a, b):
    """np.cross of two 3-vectors, its products and differences in the same order (numpy's takes ~10 us a call)."""
    a0, a1, a2 = a.tolist()
    b0, b1, b2 = b.tolist()
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def _qmul(a, b):
    va, sa, vb, sb = a[:3], a[3], b[:3], b[3]
    return np.concatenate([sa * vb + sb * va + _cross(va, vb), [sa * sb - va @ vb]])


def _rotate(q, v):
    u, s = q[:3], q[3]
    return v * (2 * s * s - 1) + u * (2 * (u @ v)) + _cross(u, v) * (2 * s)


def _qinv(q):
    return q * np.array([-1, -1, -1, 1])


def _from_axis_angle(axis, angle):
    return np.concatenate([axis * np.sin(angle / 2), [np.cos(angle / 2)]])


def _rpy(roll, pitch, yaw):
    """Roll about x, then pitch about y, then yaw about z: q = q_z(yaw) q_y(pitch) q_x(roll), in (x, y, z, w)."""
    half = lambda axis, angle: _from_axis_angle(np.eye(3)[axis], angle)  # noqa: E731
    return _qmul(_qmul(half(2, yaw), half(1, pitch)), half(0, roll))


def _to_matrix(q):
    return np.stack([_rotate(q, e) for e in np.eye(3)], 1)


def _axis_angle(q):
    """quat_to_axis_angle: the axis on the side of a non-negative w, the angle 2 atan2(|v|, |w|)."""
    v, w = q[:3], q[3]
    n = _normalize(v, np.zeros(3))
    return (-n if w < 0 else n), 2 * np.arctan2(np.sqrt(v @ v), abs(w))


def _slerp(q0, q1, t):
    axis, angle = _axis_angle(_qmul(_qinv(q0), q1))
    return _qmul(q0, _from_axis_angle(axis, t * angle))


def _from_matrix(m):
    """The kernel's branches: the trace when it is non-negative, else the largest diagonal element."""
    e = m[:3, :3]

    def branch(h, others):
        h = np.sqrt(h + 1.0)
        return h * 0.5, [o * (0.5 / h) for o in others]

    tr = e[0, 0] + e[1, 1] + e[2, 2]
    if tr >= 0:
        w, (x, y, z) = branch(tr, [e[2, 1] - e[1, 2], e[0, 2] - e[2, 0], e[1, 0] - e[0, 1]])
    elif e[2, 2] > max(e[0, 0], e[1, 1]) if e[1, 1] > e[0, 0] else e[2, 2] > e[0, 0]:
        z, (x, y, w) = branch(e[2, 2] - (e[0, 0] + e[1, 1]), [e[2, 0] + e[0, 2], e[1, 2] + e[2, 1], e[1, 0] - e[0, 1]])
    elif e[1, 1] > e[0, 0]:
        y, (z, x, w) = branch(e[1, 1] - (e[2, 2] + e[0, 0]), [e[1, 2] + e[2, 1], e[0, 1] + e[1, 0], e[0, 2] - e[2, 0]])
    else:
        x, (y, z, w) = branch(e[0, 0] - (e[1, 1] + e[2, 2]), [e[0, 1] + e[1, 0], e[2, 0] + e[0, 2], e[2, 1] - e[1, 2]])
    return _normalize(np.array([x, y, z, w]), np.array([0, 0, 0, 1.0]))


def _spatial_cross(a, b):  # (wa x wb, va x wb + wa x vb)
    return np.concatenate([_cross(a[:3], b[:3]), _cross(a[3:], b[:3]) + _cross(a[:3], b[3:])])


def _spatial_cross_dual(a, b):  # (wa x wb + va x vb, wa x vb)
    return np.concatenate([_cross(a[:3], b[:3]) + _cross(a[3:], b[3:]), _cross(a[:3], b[3:])])


def _inverse(m):
    d = np.linalg.det(m)
    return np.linalg.inv(m) if d != 0 else np.zeros_like(m)


IMPLS = {
    "dot": lambda a, b: a.reshape(-1) @ b.reshape(-1),
    "cross": _cross,
    "length": lambda v: np.sqrt(v @ v),
    "length_sq": lambda v: v @ v,
    "cw_mul": lambda a, b: a * b,
    "cw_div": _elementwise(ps.c_div),
    "outer": np.outer,
    "transpose": np.transpose,
    "determinant": np.linalg.det,
    "inverse": _inverse,
    "diag": np.diag,
    "get_diag": np.diag,
    "trace": np.trace,
    "ddot": lambda a, b: (a * b).sum(),
    "skew": lambda v: np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]]),
    "argmin": np.argmin,
    "argmax": np.argmax,
    "quat_inverse": _qinv,
    "quat_rotate": _rotate,
    "quat_rotate_inv": lambda q, v: _rotate(_qinv(q), v),
    "quat_from_axis_angle": _from_axis_angle,
    "quat_to_matrix": _to_matrix,
    "quat_rpy": _rpy,
    "quat_slerp": _slerp,
    "quat_to_axis": lambda q: _axis_angle(q)[0],
    "quat_to_angle": lambda q: _axis_angle(q)[1],
    "quat_from_matrix": _from_matrix,
    "spatial_cross": _spatial_cross,
    "spatial_cross_dual": _spatial_cross_dual,
    "spatial_adjoint": lambda r, s: np.block([[r, np.zeros_like(r)], [s, r]]),
    "matrix_from_rows": lambda *rows: np.stack(rows),
    "matrix_from_cols": lambda *cols: np.stack(cols, 1),
    "quat_between_vectors": lambda a, b: _normalize(np.concatenate([_cross(_normalize(a, a), _normalize(b, b)), [
        1 + _normalize(a, a) @ _normalize(b, b)]]), np.array([0, 0, 0, 1.0])),
    "transform_point": lambda t, x: t[:3] + _rotate(t[3:], x),
    "transform_vector": lambda t, x: _rotate(t[3:], x),
    "transform_multiply": lambda a, b: np.concatenate([_rotate(a[3:], b[:3]) + a[:3], _qmul(a[3:], b[3:])]),
    "transform_inverse": lambda t: np.concatenate([-_rotate(_qinv(t[3:]), t[:3]), _qinv(t[3:])]),
    "transform_get_translation": lambda t: t[:3],
    "transform_get_rotation": lambda t: t[3:],
    "spatial_top": lambda v: v[:3],
    "spatial_bottom": lambda v: v[3:],
    "spatial_dot": lambda a, b: a @ b,
    "where": lambda c, a, b: a if c else b,
    "lerp": lambda a, b, t: a * (1 - t) + b * t,
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,  # a composite and a scalar (composite products are picked in `call`)
    "div": _elementwise(ps.c_div),
    "mod": _elementwise(ps.c_mod),
    "neg": lambda a: -a,
    "pos": lambda a: a,
    "abs": np.abs,
    "sign": lambda a: np.where(a < 0, -1, 1).astype(a.dtype),
    "isfinite": lambda a: bool(np.all(np.isfinite(a))),
    "isnan": lambda a: bool(np.any(np.isnan(a))),
    "isinf": lambda a: bool(np.any(np.isinf(a))),
    "bit_and": np.bitwise_and,
    "bit_or": np.bitwise_or,
    "bit_xor": np.bitwise_xor,
    "invert": np.invert,
}


def _normalize_impl(types):
    if wt.composite_kind(types[0]) == "quat":
        return lambda q: _normalize(q, np.array([0, 0, 0, 1.0]))
    return _normalize


def _minmax(name, types):
    if len(types) == 1:
        return np.min if name == "min" else np.max
    return np.minimum if name == "min" else np.maximum


# (name, argument types) -> (numpy function, argument readers, result maker): a call's overload and reading, chosen
# once (a loop of Python-scope calls, a setup making transforms, spent most of a call choosing them)
_plans: dict = {}


def call(name: str, args):
    """Evaluates builtin `name` on Python/Warp values whose types include a composite."""
    try:
        types = tuple(_type_of(a) for a in args)
    except TypeError as e:
        raise no_overload(name, args, e) from None  # a RuntimeError, as in Warp
    plan = _plans.get((name, types))
    if plan is None:
        plan = _plans[(name, types)] = _plan(name, list(types), args)
    impl, readers, store = plan
    with np.errstate(all="ignore"):
        return store(impl(*[read(a) for read, a in zip(readers, args)]))


def _reader(t):
    """The function reading a value of type `t` as numpy (_np)."""
    s = wt.scalar_type_of(t)
    if wt.is_composite(t) and s in _STORED_AS_NUMPY:  # its ctypes storage read in place (then copied)
        stored, computed, shape = s._np_, (np.float64 if wt.is_float(s) else s._np_), t._shape_
        return lambda value: np.frombuffer(value, dtype=stored).astype(computed).reshape(shape)
    if wt.is_scalar(t) and wt.is_float(s):  # (_np's float64 of the number, without an array made first)
        return lambda value, base=wt.scalar_base: np.float64(value.value if isinstance(value, base) else value)
    return lambda value: _np(value, t)


def _storer(result):
    """The function making the call's result of type `result` from numpy's."""
    if wt.is_composite(result):
        s = wt.scalar_type_of(result)
        if wt.is_int(s):  # wraps in the element type (a quotient MIN / -1, say)
            return lambda value: result(*[_wrap(v, s) for v in np.asarray(value).reshape(-1).tolist()])
        return lambda value: result(*np.asarray(value).reshape(-1).tolist())
    if wt.is_scalar(result):
        return lambda value: scalar_result(result, value)
    return lambda value: value


def _plan(name: str, types: list, args) -> tuple:
    """(result type, numpy function) of builtin `name` on `types`; Warp's RuntimeErrors where there is none."""
    from .table import OVERLOADS, resolve, select_overload

    try:
        if name not in OVERLOADS:
            resolve(name, types)
        b = select_overload(name, types, in_kernel=False)
    except TypeError as e:
        raise no_overload(name, args, e) from None  # a RuntimeError, as in Warp
    result = b.result(types)
    if name == "normalize":
        impl = _normalize_impl(types)
    elif name in ("min", "max"):
        impl = _minmax(name, types)
    elif name == "mul" and wt.composite_kind(types[0]) == "quat" and types[0] == types[-1]:
        impl = _qmul
    elif name == "mul" and wt.composite_kind(types[0]) == "transform" and types[0] == types[-1]:
        impl = IMPLS["transform_multiply"]  # a then b, as in kernels (not a component-wise product)
    elif name in ("transform_point", "transform_vector") and wt.composite_kind(types[0]) == "mat":
        w = 1.0 if name == "transform_point" else 0.0
        impl = lambda m, x: (m @ np.append(x, w))[:3]  # noqa: E731
    elif name in ("mul", "matmul") and all(wt.is_composite(t) for t in types):
        impl = np.matmul
    else:
        impl = IMPLS.get(name)
    if impl is None:
        raise RuntimeError(f"wp.{name}() on {', '.join(wt.type_name(t) for t in types)} can only be called "
                           f"inside a kernel")
    return impl, [_reader(t) for t in types], _storer(result)
