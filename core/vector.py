"""Warp's vector-like types: vectors, matrices, quaternions, transforms, spatial types.

Each type is a ctypes array of its scalars (row-major for matrices), so a value
has C layout: it is passed to kernels by value and fills arrays as numpy
`(n, *shape)` views. `vector(3, float32) is vec3` (types are cached), so type
identity is the same object in the user API, the runtime and the compiler.
In Python scope the types support Warp's operators; in kernels the compiler
maps them to `!warp.vec/mat/quat/transform` types.

Each kind is a module of its own (vector_type.py, matrix_type.py, quaternion_type.py, transform_type.py; their
components: vector_components.py, their parameters: vector_params.py); this module has the spatial types,
the named aliases (vec3, mat33d, ...), the type functions (wp.identity, ...) and kernel-argument values.
"""

from __future__ import annotations

import numpy as np

from . import types as wt
from .function_signature import BuiltinSignature, declare_builtin
from .matrix_type import matrix
from .quaternion_type import quaternion
from .transform_type import transformation
from .vector_type import SUFFIX, VectorLike, vector


def spatial_vector_type(dtype=wt.float32):
    """Warp's spatial vector (angular, linear): the 6-vector type itself, so that spatial matrices times
    spatial vectors and vec6 values mix as Warp allows (Warp compares vectors by length and dtype)."""
    return vector(6, dtype)


def spatial_matrix_type(dtype=wt.float32):
    return matrix((6, 6), dtype)


vec = vector
mat = matrix


# Type functions: callable from Python and (mapped by the frontend) inside kernels.
def identity(n: int, dtype=wt.float32):
    """The n x n identity matrix (dtype None: float32)."""
    return matrix((n, n), wt.float32 if dtype is None else dtype)(*[1 if i == j else 0 for i in range(n) for j in range(n)])


def quat_identity(dtype=wt.float32):
    """The identity rotation (0, 0, 0, 1) (dtype None: float32)."""
    return quaternion(wt.float32 if dtype is None else dtype)(0, 0, 0, 1)


def transform_identity(dtype=wt.float32):
    """The identity transform: p = 0, q = (0, 0, 0, 1) (dtype None: float32)."""
    return transformation(wt.float32 if dtype is None else dtype)(0, 0, 0, 0, 0, 0, 1)


def transform_set_translation(t, p):
    """Sets t's translation in place (also in kernels, where `t` must be a local or a member)."""
    for k in range(3):
        t[k] = p[k]


def transform_set_rotation(t, q):
    """Sets t's rotation in place (also in kernels, where `t` must be a local or a member)."""
    for k in range(4):
        t[3 + k] = q[k]


def quat_to_axis_angle(q):
    """(axis, angle) of a unit quaternion: `axis, angle = wp.quat_to_axis_angle(q)` (also in kernels)."""
    x, y, z, w = (float(c) for c in q)
    v = np.array([x, y, z])
    n = float(np.sqrt(v @ v))
    axis = v / n if n > 0 else np.zeros(3)
    if w < 0:
        axis = -axis
    s = type(q)._wp_scalar_type_
    return vector(3, s)(*axis.tolist()), float(2.0 * np.arctan2(n, abs(w)))


def _aliases() -> dict:
    out = {}
    for n in (2, 3, 4):
        out[f"vec{n}"] = vector(n, wt.float32)
        for s, suf in SUFFIX.items():
            if s not in (wt.bool_, wt.bfloat16):
                out[f"vec{n}{suf}"] = vector(n, s)
        out[f"mat{n}{n}"] = matrix((n, n), wt.float32)
        for s in (wt.float16, wt.float32, wt.float64):
            out[f"mat{n}{n}{SUFFIX[s]}"] = matrix((n, n), s)
    for s in (wt.float16, wt.float32, wt.float64):
        suf = SUFFIX[s]
        out[f"quat{suf}"] = quaternion(s)
        out[f"transform{suf}"] = transformation(s)
        out[f"spatial_vector{suf}"] = spatial_vector_type(s)
        out[f"spatial_matrix{suf}"] = spatial_matrix_type(s)
    out["quat"] = quaternion(wt.float32)
    out["transform"] = transformation(wt.float32)
    out["spatial_vector"] = spatial_vector_type(wt.float32)
    out["spatial_matrix"] = spatial_matrix_type(wt.float32)
    return out


ALIASES = _aliases()
globals().update(ALIASES)


def _declare_type_functions() -> None:
    """Warp's overloads of the type functions: one per float type where Python can call them with a concrete
    type (Warp exports them so), then the generic one."""
    floats = (wt.float16, wt.float32, wt.float64)
    quat_t, xform_t, vec_t = quaternion(wt.Float), transformation(wt.Float), vector(3, wt.Float)
    declare_builtin(identity, [BuiltinSignature("identity", {"n": int, "dtype": wt.Scalar})])
    declare_builtin(quat_identity, [BuiltinSignature("quat_identity", {"dtype": wt.Float})])
    declare_builtin(transform_identity, [BuiltinSignature("transform_identity", {"dtype": wt.Float})])
    declare_builtin(quat_to_axis_angle, [
        *(BuiltinSignature("quat_to_axis_angle", {"quat": quaternion(s)}, (vector(3, s), s)) for s in floats),
        BuiltinSignature("quat_to_axis_angle", {"quat": quat_t})])
    declare_builtin(transform_set_translation, [
        *(BuiltinSignature("transform_set_translation", {"xform": transformation(s), "p": vector(3, s)})
          for s in floats),
        BuiltinSignature("transform_set_translation", {"xform": xform_t, "p": vec_t})])
    declare_builtin(transform_set_rotation, [
        *(BuiltinSignature("transform_set_rotation", {"xform": transformation(s), "q": quaternion(s)})
          for s in floats),
        BuiltinSignature("transform_set_rotation", {"xform": xform_t, "q": quat_t})])


_declare_type_functions()

# `vector` and `matrix` stay off `wp.*` (they would shadow this module); Warp spells them wp.types.vector.
__all__ = ["quaternion", "transformation", "vec", "mat", "identity", "quat_identity",
           "transform_identity", "quat_to_axis_angle",
           "transform_set_translation", "transform_set_rotation", *ALIASES]


def as_argument(t, value):
    """`value` as a C value of the composite type `t` for a kernel argument (structs pack themselves);
    TypeError when it is not a `t` or a sequence of `t`'s length."""
    if wt.is_struct(t):
        if type(value) is not t and getattr(value, "_wp_indexed_struct_", None) is not t and \
                not wt.same_struct_layout(type(value), t):  # (a reloaded module's class of the same layout)
            if hasattr(t, "_wp_mismatch_"):  # a wp.indexedarray's kernel struct says it in array terms
                raise TypeError(t._wp_mismatch_(value))
            if value is None:  # Warp's text
                raise TypeError(f"expects {t.__name__} but got None")
            raise TypeError(f"expects a struct {t.__name__}, but passed value has type {type(value).__name__}")
        c_value = value._wp_ctype_value_()
        if type(value) is not t and type(c_value) is not t._ctype_:  # the same layout, another class's C type
            c_value = t._ctype_.from_buffer_copy(c_value)
        return c_value
    if type(value) is t:
        return value
    if value is not None and not hasattr(value, "__len__") and \
            not isinstance(value, (bool, np.bool_, np.integer, np.floating)):
        # a Python int/float or a warp scalar: no broadcast to the components (Warp's text)
        raise TypeError(f"expects {t.__name__} but got a single value of type {type(value).__name__}. Construct the "
                        f"value explicitly, e.g.: {t.__name__}(...)")
    if isinstance(value, VectorLike) and value._length_ == t._length_ and \
            wt.composite_kind(type(value)) == wt.composite_kind(t):
        raise TypeError(f"expects {t.__name__}, but passed value has type {type(value).__name__}")
    try:
        flat = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"expects {t.__name__}, but passed value has type {type(value).__name__}") from None
    if flat.size != t._length_:
        raise TypeError(f"expects {t.__name__} ({t._length_} components), but passed value has {flat.size}")
    return t(*flat.tolist())
