"""Warp's vector-like types: vectors, matrices, quaternions, transforms, spatial types.

Each type is a ctypes array of its scalars (row-major for matrices), so a value
has C layout: it is passed to kernels by value and fills arrays as numpy
`(n, *shape)` views. `vector(3, float32) is vec3` (types are cached), so type
identity is the same object in the user API, the runtime and the compiler.
In Python scope the types support Warp's operators; in kernels the compiler
maps them to `!warp.vec/mat/quat/transform` types.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from . import types as wt

_SUFFIX = {wt.float16: "h", wt.float32: "f", wt.float64: "d", wt.int8: "b", wt.uint8: "ub", wt.int16: "s",
           wt.uint16: "us", wt.int32: "i", wt.uint32: "ui", wt.int64: "l", wt.uint64: "ul", wt.bfloat16: "bf",
           wt.bool_: "bool"}


def _to_python(scalar, raw):
    """A stored C value -> the Python value Warp shows (half types are stored as bits)."""
    if scalar is wt.float16:
        return float(np.uint16(raw).view(np.float16))
    if scalar is wt.bfloat16:
        return float(wt.bf16_bits_to_float(raw))
    return raw


def _to_raw(scalar, value):
    if isinstance(value, wt.scalar_base):
        value = value.value
    if scalar is wt.float16:
        return int(np.float16(value).view(np.uint16))
    if scalar is wt.bfloat16:
        return int(wt.float_to_bf16_bits(float(value)))
    if scalar is wt.bool_:
        return bool(value)
    if wt.is_int(scalar):
        return int(scalar._np_(value).item()) if isinstance(value, (int, np.integer)) else int(value)
    return float(value)


class _VectorLike:
    """Python-scope behaviour shared by every vector-like type (mixed into a ctypes.Array subclass)."""

    _wp_composite_ = "vec"
    _wp_scalar_type_ = None
    _shape_ = ()

    def __init__(self, *args):
        n = self._length_
        flat = _flatten_args(args)
        if len(flat) == 0:
            flat = [0] * n
        elif len(flat) == 1 and n != 1:
            flat = flat * n  # fill: wp.vec3(1.0)
        if len(flat) != n:
            raise ValueError(f"{type(self).__name__} takes {n} components (or 1 to fill), got {len(flat)}")
        super().__init__()
        for k, v in enumerate(flat):
            ctypes.Array.__setitem__(self, k, _to_raw(self._wp_scalar_type_, v))

    # -- components ---------------------------------------------------------------
    def _get(self, k):
        return _to_python(self._wp_scalar_type_, ctypes.Array.__getitem__(self, k))

    def _set(self, k, value):
        ctypes.Array.__setitem__(self, k, _to_raw(self._wp_scalar_type_, value))

    def __getitem__(self, key):
        if isinstance(key, slice):
            return [self._get(k) for k in range(*key.indices(self._length_))]
        return self._get(_check_index(key, self._length_))

    def __setitem__(self, key, value):
        self._set(_check_index(key, self._length_), value)

    def __iter__(self):
        return (self._get(k) for k in range(self._length_))

    def __len__(self):
        return self._length_

    def __getattr__(self, name):
        k = _COMPONENTS.get(name)
        if k is not None and k < self._length_ and len(self._shape_) == 1:
            return self._get(k)
        raise AttributeError(f"'{type(self).__name__}' has no attribute '{name}'")

    def __setattr__(self, name, value):
        k = _COMPONENTS.get(name)
        if k is not None and k < self._length_ and len(self._shape_) == 1:
            self._set(k, value)
        else:
            object.__setattr__(self, name, value)

    def numpy(self) -> np.ndarray:
        return np.array(list(self), dtype=np.float32 if wt.is_float(self._wp_scalar_type_) and
                        self._wp_scalar_type_._bits_ == 16 else self._wp_scalar_type_._np_).reshape(self._shape_)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self):
        return f"{type(self).__name__}({list(self)})"

    def __eq__(self, other):
        try:
            return np.array_equal(self.numpy(), np.asarray(other).reshape(self._shape_))
        except (ValueError, TypeError):
            return NotImplemented

    def __hash__(self):
        return hash(tuple(self))

    def _wp_fingerprint_(self, seen=None) -> str:
        """Kernel cache key of a captured constant: its type and components (captures.py)."""
        return f"{type(self).__name__}:{[self._get(k) for k in range(self._length_)]!r}"

    # -- Python-scope arithmetic (Warp's semantics; kernels use the builtin table) ------
    def _same(self, other):
        if type(other) is not type(self):
            raise TypeError(f"unsupported operand types: {type(self).__name__} and {type(other).__name__}")
        return other

    def _new(self, values):
        a = np.asarray(values)
        if wt.is_int(self._wp_scalar_type_):
            a = a.astype(self._wp_scalar_type_._np_)
        return type(self)(*a.reshape(-1).tolist())

    def __add__(self, other):
        return self._new(self.numpy() + self._same(other).numpy())

    def __sub__(self, other):
        return self._new(self.numpy() - self._same(other).numpy())

    def __neg__(self):
        return self._new(-self.numpy())

    def __pos__(self):
        return self

    def __mul__(self, other):
        if _is_scalar_value(other):
            return self._new(self.numpy() * _value(other))
        return NotImplemented

    def __rmul__(self, other):
        if _is_scalar_value(other):
            return self._new(_value(other) * self.numpy())
        return NotImplemented

    def __truediv__(self, other):
        if _is_scalar_value(other):
            s = _value(other)
            if wt.is_int(self._wp_scalar_type_):  # C integer division truncates toward zero
                return self._new(np.trunc(self.numpy() / s))
            return self._new(self.numpy() / s)
        return NotImplemented

    def __rtruediv__(self, other):
        if _is_scalar_value(other):
            return self._new(_value(other) / self.numpy())
        return NotImplemented


class _MatrixLike(_VectorLike):
    _wp_composite_ = "mat"

    def __init__(self, *args):
        rows, cols = self._shape_
        if len(args) == rows and all(isinstance(a, _VectorLike) and len(a) == cols for a in args):
            args = [x for a in args for x in a]  # rows given as vectors
        super().__init__(*args)

    def __getitem__(self, key):
        rows, cols = self._shape_
        if isinstance(key, tuple):
            i, j = key
            return self._get(_check_index(i, rows) * cols + _check_index(j, cols))
        i = _check_index(key, rows)
        return vector(cols, self._wp_scalar_type_)(*[self._get(i * cols + j) for j in range(cols)])

    def __setitem__(self, key, value):
        rows, cols = self._shape_
        if isinstance(key, tuple):
            i, j = key
            self._set(_check_index(i, rows) * cols + _check_index(j, cols), value)
            return
        i = _check_index(key, rows)
        for j, v in enumerate(value):
            self._set(i * cols + j, v)

    def __iter__(self):
        return (self[i] for i in range(self._shape_[0]))

    def __len__(self):
        return self._shape_[0]

    def numpy(self):
        return np.array([self._get(k) for k in range(self._length_)],
                        dtype=np.float32 if self._wp_scalar_type_._bits_ == 16 else self._wp_scalar_type_._np_
                        ).reshape(self._shape_)

    def __repr__(self):
        return f"{type(self).__name__}({self.numpy().tolist()})"

    def __mul__(self, other):
        if isinstance(other, _VectorLike):
            return self.__matmul__(other)
        return super().__mul__(other)

    def __matmul__(self, other):
        if isinstance(other, _MatrixLike):
            r = self.numpy() @ other.numpy()
            return matrix(r.shape, self._wp_scalar_type_)(*r.reshape(-1).tolist())
        if isinstance(other, _VectorLike):
            return vector(self._shape_[0], self._wp_scalar_type_)(*(self.numpy() @ other.numpy()).tolist())
        return NotImplemented

    def __rmatmul__(self, other):
        if isinstance(other, _VectorLike) and not isinstance(other, _MatrixLike):
            return vector(self._shape_[1], self._wp_scalar_type_)(*(other.numpy() @ self.numpy()).tolist())
        return NotImplemented


class _QuatLike(_VectorLike):
    _wp_composite_ = "quat"

    def __mul__(self, other):
        if isinstance(other, _QuatLike):
            x1, y1, z1, w1 = self.numpy().tolist()
            x2, y2, z2, w2 = other.numpy().tolist()
            return type(self)(w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2, w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                              w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2, w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2)
        return super().__mul__(other)


class _TransformLike(_VectorLike):
    _wp_composite_ = "transform"

    def __init__(self, *args):
        if len(args) == 2 and all(isinstance(a, (_VectorLike, list, tuple, np.ndarray)) for a in args):
            args = [*list(args[0]), *list(args[1])]  # transform(p, q)
        elif len(args) == 0:
            args = [0.0] * 6 + [1.0]
        super().__init__(*args)

    @property
    def p(self):
        return vector(3, self._wp_scalar_type_)(*[self._get(k) for k in range(3)])

    @property
    def q(self):
        return quaternion(self._wp_scalar_type_)(*[self._get(k) for k in range(3, 7)])


_COMPONENTS = {"x": 0, "y": 1, "z": 2, "w": 3}


def _is_scalar_value(v) -> bool:
    return isinstance(v, (int, float, np.number, wt.scalar_base)) and not isinstance(v, bool)


def _value(v):
    return v.value if isinstance(v, wt.scalar_base) else v


def _check_index(k, n) -> int:
    if not isinstance(k, (int, np.integer)):
        raise TypeError(f"index must be an integer, got {type(k).__name__}")
    k = int(k)
    if k < 0:
        k += n
    if not 0 <= k < n:
        raise IndexError(f"index {k} out of range for length {n}")
    return k


def _flatten_args(args) -> list:
    out = []
    for a in args:
        if isinstance(a, _VectorLike):
            out.extend(a[k] if not isinstance(a, _MatrixLike) else a._get(k) for k in range(a._length_))
        elif isinstance(a, (list, tuple, np.ndarray)):
            out.extend(np.asarray(a).reshape(-1).tolist())
        else:
            out.append(a)
    return out


def _make(kind_base, name, scalar, shape, base_name=None):
    scalar = wt.canonical_type(scalar)
    if not wt.is_scalar(scalar):
        raise TypeError(f"{base_name or kind_base.__name__} dtype must be a scalar type, got {scalar!r}")
    length = int(np.prod(shape))
    cls = type(name, (kind_base, ctypes.Array), {
        "_type_": scalar._ctype_, "_length_": length, "_shape_": tuple(shape), "_wp_scalar_type_": scalar,
        "_np_": scalar._np_, "__module__": "mlwarp"})
    cls._ctype_ = cls
    return cls


def vector(length: int, dtype=wt.float32):
    """`wp.vec(length, dtype)` / `wp.types.vector`: the vector type, one class per (length, dtype)."""
    return _vector(length, wt.canonical_type(dtype))


@functools.lru_cache(maxsize=None)
def _vector(length, dtype):
    if not isinstance(length, int) or length < 1:
        raise ValueError(f"vector length must be a positive int, got {length!r}")
    return _make(_VectorLike, f"vec{length}{_SUFFIX.get(dtype, '')}", dtype, (length,), "vector")


def _shape2(shape):
    if isinstance(shape, int):
        shape = (shape, shape)
    shape = tuple(shape)
    if len(shape) != 2 or not all(isinstance(s, int) and s >= 1 for s in shape):
        raise ValueError(f"matrix shape must be (rows, cols) of positive ints, got {shape!r}")
    return shape


@functools.lru_cache(maxsize=None)
def _matrix(shape, dtype):
    dtype = wt.canonical_type(dtype)
    r, c = shape
    return _make(_MatrixLike, f"mat{r}{c}{_SUFFIX.get(dtype, '')}", dtype, shape, "matrix")


def matrix(shape, dtype=wt.float32):
    """`wp.mat(shape, dtype)` / `wp.types.matrix`: a row-major matrix type."""
    return _matrix(_shape2(shape), wt.canonical_type(dtype))


def quaternion(dtype=wt.float32):
    return _quaternion(wt.canonical_type(dtype))


@functools.lru_cache(maxsize=None)
def _quaternion(dtype):
    """A quaternion type, components (x, y, z, w) as in Warp."""
    dtype = wt.canonical_type(dtype)
    return _make(_QuatLike, f"quat{_SUFFIX.get(dtype, '')}", dtype, (4,), "quaternion")


def transformation(dtype=wt.float32):
    return _transformation(wt.canonical_type(dtype))


@functools.lru_cache(maxsize=None)
def _transformation(dtype):
    """A rigid transform type: translation p (3) then rotation q (4), as in Warp."""
    dtype = wt.canonical_type(dtype)
    return _make(_TransformLike, f"transform{_SUFFIX.get(dtype, '')}", dtype, (7,), "transformation")


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
    """The n x n identity matrix."""
    return matrix((n, n), dtype)(*[1 if i == j else 0 for i in range(n) for j in range(n)])


def quat_identity(dtype=wt.float32):
    """The identity rotation (0, 0, 0, 1)."""
    return quaternion(dtype)(0, 0, 0, 1)


def transform_identity(dtype=wt.float32):
    """The identity transform: p = 0, q = (0, 0, 0, 1)."""
    return transformation(dtype)(0, 0, 0, 0, 0, 0, 1)


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
        for s, suf in _SUFFIX.items():
            if s not in (wt.bool_, wt.bfloat16):
                out[f"vec{n}{suf}"] = vector(n, s)
        out[f"mat{n}{n}"] = matrix((n, n), wt.float32)
        for s in (wt.float16, wt.float32, wt.float64):
            out[f"mat{n}{n}{_SUFFIX[s]}"] = matrix((n, n), s)
    for s in (wt.float16, wt.float32, wt.float64):
        suf = _SUFFIX[s]
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

# `vector` and `matrix` stay off `wp.*` (they would shadow this module); Warp spells them wp.types.vector.
__all__ = ["quaternion", "transformation", "vec", "mat", "identity", "quat_identity",
           "transform_identity", "quat_to_axis_angle",
           "transform_set_translation", "transform_set_rotation", *ALIASES]


def as_argument(t, value):
    """`value` as a C value of the composite type `t` for a kernel argument (structs pack themselves);
    TypeError when it is not a `t` or a sequence of `t`'s length."""
    if wt.is_struct(t):
        if type(value) is not t:
            raise TypeError(f"expects a struct {t.__name__}, but passed value has type {type(value).__name__}")
        return value._wp_ctype_value_()
    if type(value) is t:
        return value
    if isinstance(value, _VectorLike) and value._length_ == t._length_ and \
            wt.composite_kind(type(value)) == wt.composite_kind(t):
        raise TypeError(f"expects {t.__name__}, but passed value has type {type(value).__name__}")
    try:
        flat = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"expects {t.__name__}, but passed value has type {type(value).__name__}") from None
    if flat.size != t._length_:
        raise TypeError(f"expects {t.__name__} ({t._length_} components), but passed value has {flat.size}")
    return t(*flat.tolist())
