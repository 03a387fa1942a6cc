"""The vector type, and what every vector-like type (matrix_type.py, quaternion_type.py, transform_type.py) is
built from: VectorLike, the Python-scope behaviour they share (construction, components, Warp's operators),
mixed into a ctypes array of the scalars by make_type, which also makes generic annotations (open length or
dtype); `vector(length, dtype)` is cached, so a type is one object wherever it is built."""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from . import types as wt
from .vector_components import (COMPONENTS, assign_error, component_index, export_scalar, is_number, is_scalar_value,
                                is_sequence, plain_value, sequence_values, to_python, to_raw)
from .vector_params import checked_dtype, checked_length, is_open, matches_template


SUFFIX = {wt.float16: "h", wt.float32: "f", wt.float64: "d", wt.int8: "b", wt.uint8: "ub", wt.int16: "s",
           wt.uint16: "us", wt.int32: "i", wt.uint32: "ui", wt.int64: "l", wt.uint64: "ul", wt.bfloat16: "bf",
           wt.bool_: "bool"}


_STORED_AS_IS = (wt.float32, wt.float64)  # scalar types whose components store a Python float as given (to_raw)


class VectorLike:
    """Python-scope behaviour shared by every vector-like type (mixed into a ctypes.Array subclass)."""

    _wp_composite_ = "vec"
    _wp_scalar_type_ = None
    _shape_ = ()

    def __init__(self, *args):
        n = self._length_
        super().__init__()
        if len(args) == 0:
            return
        if len(args) == 1:
            a = args[0]
            if type(a) is np.ndarray and a.ndim == 1 and a.shape[0] == n and a.dtype.kind == "f":
                values = a.tolist()  # (Python floats: each takes to_raw's quick path below)
            elif isinstance(a, VectorLike) and a._length_ == n:  # copy (converting the scalar type)
                values = a._values()
            elif hasattr(a, "__len__") and not isinstance(a, (str, bytes)) and np.ndim(a) > 0:
                values = flatten_args([a])  # wp.vec3((1, 2, 3)), wp.vec3(np.array(...))
            elif is_number(a):
                values = [a] * n  # fill: wp.vec3(1.0)
            else:
                raise TypeError(f"Invalid argument in {self._wp_constructor_} constructor: expected a scalar value, "
                                f"got {type(a).__name__}")
        elif len(args) == n:
            values = args
        else:
            values = flatten_args(args) if any(np.ndim(a) > 0 for a in args) else args  # vec6(v3, v3)
        if len(values) != n:
            raise ValueError(f"Invalid number of arguments in {self._wp_constructor_} constructor, expected {n} "
                             f"elements, got {len(args) if len(args) != 1 else len(values)}")
        if self._wp_scalar_type_ in _STORED_AS_IS and all(type(v) is float for v in values):
            # (what to_raw gives a Python float: the float, stored by ctypes; ctypes' own slice store, not a
            # subclass's __setitem__: a matrix's takes rows)
            ctypes.Array.__setitem__(self, slice(0, n), values)
            return
        for k, v in enumerate(values):
            try:
                ctypes.Array.__setitem__(self, k, to_raw(self._wp_scalar_type_, v))
            except (TypeError, ValueError, OverflowError):
                raise TypeError(f"Invalid argument in {self._wp_constructor_} constructor: expected a "
                                f"`{wt.type_repr(self._wp_scalar_type_)}` value, got `{type(v).__name__}`") from None

    _wp_constructor_ = "vector"

    # -- components ---------------------------------------------------------------
    def _get(self, k):
        """Component k (flat, row-major) as a Python number (what the compiler and numpy read)."""
        return to_python(self._wp_scalar_type_, ctypes.Array.__getitem__(self, k))

    def _set(self, k, value):
        ctypes.Array.__setitem__(self, k, to_raw(self._wp_scalar_type_, value))

    @classmethod
    def scalar_import(cls, x):
        """Warp's: a component value -> what the vector stores (a float16/bfloat16 vector stores 16-bit float
        bits; other types store the value as given)."""
        scalar = cls._wp_scalar_type_
        return to_raw(scalar, x) if scalar in (wt.float16, wt.bfloat16) else x

    @classmethod
    def scalar_export(cls, x):
        """Warp's: what the vector stores -> the component value (16-bit float bits -> a Python float)."""
        scalar = cls._wp_scalar_type_
        return to_python(scalar, x) if scalar in (wt.float16, wt.bfloat16) else x

    def _values(self) -> list:
        return [self._get(k) for k in range(self._length_)]

    def _item(self, k):
        return export_scalar(self._wp_scalar_type_, self._get(k))

    def __getitem__(self, key):
        if isinstance(key, slice):
            idx = range(*key.indices(self._length_))
            return vector(len(idx), self._wp_scalar_type_)(*[self._get(k) for k in idx])
        return self._item(component_index(key, self._length_, "int or slice"))

    def __setitem__(self, key, value):
        if isinstance(key, slice):
            idx = range(*key.indices(self._length_))
            if is_number(value) and not isinstance(value, (str, bytes)):
                raw = [to_raw(self._wp_scalar_type_, value)] * len(idx)
            else:
                raw = sequence_values(self._wp_scalar_type_, value, len(idx))
            for k, r in zip(idx, raw):
                ctypes.Array.__setitem__(self, k, r)
            return
        k = component_index(key, self._length_, "int or slice")
        try:
            self._set(k, value)
        except (TypeError, ValueError, OverflowError):
            raise assign_error(self._wp_scalar_type_, value) from None

    def __iter__(self):
        return (self._item(k) for k in range(self._length_))

    def __len__(self):
        return self._length_

    def __getattr__(self, name):
        k = COMPONENTS.get(name)
        if k is not None and k < self._length_ and len(self._shape_) == 1:
            return self._item(k)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        k = COMPONENTS.get(name)
        if k is not None and k < self._length_ and len(self._shape_) == 1:
            self[k] = value
        elif name and not name.strip("xyzw") and len(self._shape_) == 1:
            # a swizzle-like name (v.xy = ...) would shadow the components without writing them
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        else:
            object.__setattr__(self, name, value)

    def numpy(self) -> np.ndarray:
        s = self._wp_scalar_type_
        dtype = np.float32 if wt.is_float(s) and s._bits_ == 16 else s._np_
        return np.array(self._values(), dtype=dtype).reshape(self._shape_)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __str__(self):
        return f"[{', '.join(map(str, self))}]"

    def __repr__(self):
        return f"{wt.type_repr(type(self))}([{', '.join(map(repr, self))}])"

    def __eq__(self, other):
        """Component by component, as Warp: a vector equals any sequence of equal values (`v == (1, 2, 3)`)."""
        if isinstance(other, np.ndarray) and other.shape != self._shape_:
            return False
        try:
            if len(other) != self._length_:
                return False
            return all(a == b for a, b in zip(self._values(), other))
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(tuple(self._values()))

    def _wp_fingerprint_(self, seen=None) -> str:
        """Kernel cache key of a captured constant: its type and components (captures.py)."""
        return f"{type(self).__name__}:{self._values()!r}"

    @classmethod
    def from_ptr(cls, ptr):
        """A value read from the address `ptr` (the stored bits, half types included), as Warp's."""
        if not ptr:
            raise RuntimeError("NULL pointer exception")
        value = cls()
        ctypes.memmove(ctypes.byref(value), ptr, ctypes.sizeof(cls))
        return value

    # -- Python-scope arithmetic (Warp's semantics; kernels use the builtin table) ------
    def _same(self, other):
        if not isinstance(other, VectorLike) or other._shape_ != self._shape_ or \
                other._wp_scalar_type_ is not self._wp_scalar_type_:
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

    def __mod__(self, other):
        s = self.numpy()
        o = plain_value(other) if is_scalar_value(other) else self._same(other).numpy()
        return self._new(np.fmod(s, o) if not wt.is_int(self._wp_scalar_type_) else
                         np.where(o == 0, s, s - o * np.trunc(s / np.where(o == 0, 1, o))))

    def __neg__(self):
        return self._new(-self.numpy())

    def __pos__(self):
        return type(self)(self)

    def __mul__(self, other):
        if is_scalar_value(other):
            return self._new(self.numpy() * plain_value(other))
        return NotImplemented

    def __rmul__(self, other):
        if is_scalar_value(other):
            return self._new(plain_value(other) * self.numpy())
        return NotImplemented

    def __truediv__(self, other):
        if is_scalar_value(other):
            s = plain_value(other)
            if wt.is_int(self._wp_scalar_type_):  # C integer division truncates toward zero
                return self._new(np.trunc(self.numpy() / s))
            return self._new(self.numpy() / s)
        return NotImplemented

    def __rtruediv__(self, other):
        if is_scalar_value(other):
            r = plain_value(other) / self.numpy()
            return self._new(np.trunc(r) if wt.is_int(self._wp_scalar_type_) else r)
        return NotImplemented


def flatten_args(args) -> list:
    out = []
    for a in args:
        if isinstance(a, VectorLike):
            out.extend(a._values())
        elif is_sequence(a):  # lists, tuples, numpy arrays, and other array libraries' (a torch tensor)
            for x in (np.asarray(a) if hasattr(a, "__array__") else a):
                out.extend(flatten_args([x]))
        else:
            out.append(a)
    return out


_GENERIC_STR = {"vec": "vec_t", "mat": "mat_t", "quat": "quat_t", "transform": "transform_t"}


def make_type(kind_base, name, scalar, shape, base_name=None):
    if not is_open(scalar):
        scalar = wt.canonical_type(scalar)
        if not wt.is_scalar(scalar):
            raise TypeError(f"{base_name or kind_base.__name__} dtype must be a scalar type, got {scalar!r}")
    generic = is_open(scalar) or any(is_open(d) for d in shape)
    length = 0 if any(is_open(d) for d in shape) else int(np.prod(shape))
    ctype = ctypes.c_float if is_open(scalar) else scalar._ctype_
    kind = kind_base._wp_composite_
    params = (*shape, scalar) if kind in ("vec", "mat") else (scalar,)
    attrs = {"_type_": ctype, "_length_": length, "_shape_": tuple(shape), "_wp_scalar_type_": scalar,
             "_np_": None if is_open(scalar) else scalar._np_, "__module__": "mlwarp", "_wp_type_params_": params,
             "_wp_generic_type_str_": _GENERIC_STR[kind]}
    if generic:
        # A generic annotation (`wp.types.vector(length=Any, dtype=wp.Float)`): mlwarp.core.generics reads
        # `_wp_generic_` and asks `_wp_matches_` whether a concrete type instantiates it.
        attrs["_wp_generic_"] = True
        attrs["_wp_matches_"] = classmethod(matches_template)
    cls = type(name, (kind_base, ctypes.Array), attrs)
    cls._ctype_ = cls
    # Warp compares vector-like types by kind, shape and dtype: a client's `class vec9(wp.types.vector(9, ...))`
    # is the same type as vector(9, ...), which subclasses inherit from here (wt.canonical_type reads it).
    cls._wp_structural_ = cls
    if generic:
        cls.__name__ = cls.__qualname__ = wt.type_repr(cls)
    return cls


def vector(length: int, dtype=wt.float32):
    """`wp.vec(length, dtype)` / `wp.types.vector`: the vector type, one class per (length, dtype). `length`
    or `dtype` may be `typing.Any` (and `dtype` wp.Float, wp.Int, wp.Scalar) for a generic annotation."""
    return _vector(checked_length(length, "vector length"), checked_dtype(dtype))


@functools.lru_cache(maxsize=None)
def _vector(length, dtype):
    name = f"vec{length}{SUFFIX.get(dtype, '')}"
    return make_type(VectorLike, name, dtype, (length,), "vector")
