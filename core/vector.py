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
import inspect
import typing

import numpy as np

from . import types as wt
from .config import config as _config

_SUFFIX = {wt.float16: "h", wt.float32: "f", wt.float64: "d", wt.int8: "b", wt.uint8: "ub", wt.int16: "s",
           wt.uint16: "us", wt.int32: "i", wt.uint32: "ui", wt.int64: "l", wt.uint64: "ul", wt.bfloat16: "bf",
           wt.bool_: "bool"}



def python_scope_builtin(name: str, args):
    """Builtin `name` evaluated on Python values, as the user API evaluates it (set by python/mlwarp/library/builtins.py: the
    builtin table sits above this layer)."""
    if _python_scope_builtin is None:
        raise RuntimeError(f"wp.{name}() of these values needs mlwarp's builtins (import mlwarp)")
    return _python_scope_builtin(name, args)


_python_scope_builtin = None  # python/mlwarp/library/builtins.py: composite_pyscope.call

def _to_python(scalar, raw):
    """A stored C value -> the Python value Warp shows (half types are stored as bits)."""
    if scalar is wt.float16:
        return float(np.uint16(raw).view(np.float16))
    if scalar is wt.bfloat16:
        return float(wt.bf16_bits_to_float(raw))
    return raw


def _to_raw(scalar, value):
    """A Python, numpy or Warp number -> the stored C value of `scalar` (C conversions: integers wrap).
    TypeError or ValueError when `value` is no number."""
    tv = type(value)
    if tv is float or tv is int:  # the common case: ctypes rounds to float/double and wraps integers itself
        if scalar._kind_ == "float" and scalar._bits_ != 16 or tv is int and scalar._kind_ in ("int", "uint"):
            return value
    if hasattr(value, "__array__") and not isinstance(value, np.ndarray) and np.ndim(value) == 0:
        value = np.asarray(value).item()  # a 0-d tensor of another array library (torch.tensor(1.0))
    if isinstance(value, (str, bytes)) or not _is_number(value):
        raise TypeError(f"not a number: {type(value).__name__}")
    if isinstance(value, wt.scalar_base):
        value = value.value
    if scalar is wt.float16:
        with np.errstate(over="ignore"):
            return int(np.float16(float(value)).view(np.uint16))
    if scalar is wt.bfloat16:
        return int(wt.float_to_bf16_bits(float(value)))
    return scalar._convert(value)


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.number, np.bool_, wt.scalar_base)) or (
        isinstance(v, np.ndarray) and v.ndim == 0)


# Indexing a vector or matrix gives a Python number for these scalar types and an instance of the scalar type
# for the others (`wp.vec3d(...)[0]` is `float64(...)`), as in Warp 1.19; `wp.config.legacy_scalar_return_types`
# gives Python numbers for every type.
_NATIVE = (wt.int32, wt.float32, wt.bool_)


def _export(scalar, python_value):
    if scalar in _NATIVE or _config.legacy_scalar_return_types:
        return python_value
    return scalar(python_value)


def _assign_error(scalar, value):
    return TypeError(f"Expected to assign a `{wt.type_repr(scalar)}` value but got `{type(value).__name__}` instead")


def _seq_values(scalar, value, count):
    """The stored values of the sequence `value` assigned to `count` components (Warp's errors)."""
    try:
        items = list(np.asarray(value) if hasattr(value, "__array__") and np.ndim(value) > 0 else value)
    except TypeError:
        raise TypeError(f"Expected to assign a slice from a sequence of values but got `{type(value).__name__}` "
                        f"instead") from None
    raw = []
    for x in items:
        try:
            raw.append(_to_raw(scalar, x))
        except (TypeError, ValueError, OverflowError):
            raise TypeError(f"Expected to assign a slice from a sequence of `{wt.type_repr(scalar)}` values but "
                            f"got `{type(x).__name__}` instead") from None
    if len(raw) != count:
        raise ValueError("Can only assign sequence of same size")
    return raw


class _VectorLike:
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
            if isinstance(a, _VectorLike) and a._length_ == n:  # copy (converting the scalar type)
                values = a._values()
            elif hasattr(a, "__len__") and not isinstance(a, (str, bytes)) and np.ndim(a) > 0:
                values = _flatten_args([a])  # wp.vec3((1, 2, 3)), wp.vec3(np.array(...))
            elif _is_number(a):
                values = [a] * n  # fill: wp.vec3(1.0)
            else:
                raise TypeError(f"Invalid argument in {self._wp_constructor_} constructor: expected a scalar value, "
                                f"got {type(a).__name__}")
        elif len(args) == n:
            values = args
        else:
            values = _flatten_args(args) if any(np.ndim(a) > 0 for a in args) else args  # vec6(v3, v3)
        if len(values) != n:
            raise ValueError(f"Invalid number of arguments in {self._wp_constructor_} constructor, expected {n} "
                             f"elements, got {len(args) if len(args) != 1 else len(values)}")
        for k, v in enumerate(values):
            try:
                ctypes.Array.__setitem__(self, k, _to_raw(self._wp_scalar_type_, v))
            except (TypeError, ValueError, OverflowError):
                raise TypeError(f"Invalid argument in {self._wp_constructor_} constructor: expected a "
                                f"`{wt.type_repr(self._wp_scalar_type_)}` value, got `{type(v).__name__}`") from None

    _wp_constructor_ = "vector"

    # -- components ---------------------------------------------------------------
    def _get(self, k):
        """Component k (flat, row-major) as a Python number (what the compiler and numpy read)."""
        return _to_python(self._wp_scalar_type_, ctypes.Array.__getitem__(self, k))

    def _set(self, k, value):
        ctypes.Array.__setitem__(self, k, _to_raw(self._wp_scalar_type_, value))

    @classmethod
    def scalar_import(cls, x):
        """Warp's: a component value -> what the vector stores (a float16/bfloat16 vector stores 16-bit float
        bits; other types store the value as given)."""
        scalar = cls._wp_scalar_type_
        return _to_raw(scalar, x) if scalar in (wt.float16, wt.bfloat16) else x

    @classmethod
    def scalar_export(cls, x):
        """Warp's: what the vector stores -> the component value (16-bit float bits -> a Python float)."""
        scalar = cls._wp_scalar_type_
        return _to_python(scalar, x) if scalar in (wt.float16, wt.bfloat16) else x

    def _values(self) -> list:
        return [self._get(k) for k in range(self._length_)]

    def _item(self, k):
        return _export(self._wp_scalar_type_, self._get(k))

    def __getitem__(self, key):
        if isinstance(key, slice):
            idx = range(*key.indices(self._length_))
            return vector(len(idx), self._wp_scalar_type_)(*[self._get(k) for k in idx])
        return self._item(_index(key, self._length_, "int or slice"))

    def __setitem__(self, key, value):
        if isinstance(key, slice):
            idx = range(*key.indices(self._length_))
            if _is_number(value) and not isinstance(value, (str, bytes)):
                raw = [_to_raw(self._wp_scalar_type_, value)] * len(idx)
            else:
                raw = _seq_values(self._wp_scalar_type_, value, len(idx))
            for k, r in zip(idx, raw):
                ctypes.Array.__setitem__(self, k, r)
            return
        k = _index(key, self._length_, "int or slice")
        try:
            self._set(k, value)
        except (TypeError, ValueError, OverflowError):
            raise _assign_error(self._wp_scalar_type_, value) from None

    def __iter__(self):
        return (self._item(k) for k in range(self._length_))

    def __len__(self):
        return self._length_

    def __getattr__(self, name):
        k = _COMPONENTS.get(name)
        if k is not None and k < self._length_ and len(self._shape_) == 1:
            return self._item(k)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        k = _COMPONENTS.get(name)
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
        if not isinstance(other, _VectorLike) or other._shape_ != self._shape_ or \
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
        o = _value(other) if _is_scalar_value(other) else self._same(other).numpy()
        return self._new(np.fmod(s, o) if not wt.is_int(self._wp_scalar_type_) else
                         np.where(o == 0, s, s - o * np.trunc(s / np.where(o == 0, 1, o))))

    def __neg__(self):
        return self._new(-self.numpy())

    def __pos__(self):
        return type(self)(self)

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
            r = _value(other) / self.numpy()
            return self._new(np.trunc(r) if wt.is_int(self._wp_scalar_type_) else r)
        return NotImplemented


class _MatrixLike(_VectorLike):
    _wp_composite_ = "mat"
    _wp_constructor_ = "matrix"

    def __init__(self, *args):
        rows, cols = self._shape_
        if len(args) == 1 and not isinstance(args[0], _VectorLike) and np.ndim(args[0]) > 0:
            args = tuple(args[0])  # mat22(((1, 2), (3, 4))), mat33(np.eye(3)), mat22([1, 2, 3, 4])
        elif len(args) == 1 and isinstance(args[0], _MatrixLike) and args[0]._shape_ == self._shape_:
            args = args[0]._values()  # copy
        if len(args) == rows and rows != self._length_:
            flat = []
            for row in args:  # rows: sequences (or vectors) of `cols` values
                if np.ndim(row) != 1 or len(row) != cols:
                    raise TypeError(f"Invalid argument in matrix constructor, expected row of length {cols}, "
                                    f"got {row}")
                flat.extend(row)
            args = flat
        elif len(args) not in (0, 1, self._length_):
            raise ValueError(f"Invalid number of arguments in matrix constructor, expected {self._length_} "
                             f"elements, got {len(args)}")
        super().__init__(*args)

    def _check_row(self, r, what="row"):
        n = self._shape_[0] if what == "row" else self._shape_[1]
        r = _index(r, n, "int or pair of ints", check=False)
        if not -n <= r < n:
            raise IndexError(f"Invalid {what} index")
        return r + n if r < 0 else r

    def get_row(self, r):
        """Row r as a vector (negative r counts from the end)."""
        rows, cols = self._shape_
        r = self._check_row(r)
        return vector(cols, self._wp_scalar_type_)(*[self._get(r * cols + j) for j in range(cols)])

    def get_col(self, c):
        """Column c as a vector (negative c counts from the end)."""
        rows, cols = self._shape_
        c = self._check_row(c, "column")
        return vector(rows, self._wp_scalar_type_)(*[self._get(i * cols + c) for i in range(rows)])

    def _assign(self, flat_indices, value):
        flat_indices = list(flat_indices)
        if _is_number(value) and not isinstance(value, (str, bytes)):
            raw = [_to_raw(self._wp_scalar_type_, value)] * len(flat_indices)
        else:
            raw = _seq_values(self._wp_scalar_type_, value, len(flat_indices))
        for k, r in zip(flat_indices, raw):
            ctypes.Array.__setitem__(self, k, r)

    def set_row(self, r, v):
        """Sets row r to `v`: a scalar (every element) or a sequence of `cols` values."""
        rows, cols = self._shape_
        r = self._check_row(r)
        self._assign(range(r * cols, (r + 1) * cols), v)

    def set_col(self, c, v):
        """Sets column c to `v`: a scalar (every element) or a sequence of `rows` values."""
        rows, cols = self._shape_
        c = self._check_row(c, "column")
        self._assign(range(c, rows * cols, cols), v)

    def _key2(self, key):
        if len(key) != 2:
            raise KeyError(f"Invalid key, expected one or two indices, got {len(key)}")
        rows, cols = self._shape_
        i, j = key
        ri = range(*i.indices(rows)) if isinstance(i, slice) else [_index(i, rows, "int or pair of ints")]
        cj = range(*j.indices(cols)) if isinstance(j, slice) else [_index(j, cols, "int or pair of ints")]
        return i, j, ri, cj

    def __getitem__(self, key):
        rows, cols = self._shape_
        s = self._wp_scalar_type_
        if isinstance(key, tuple):
            i, j, ri, cj = self._key2(key)
            vals = [[self._get(r * cols + c) for c in cj] for r in ri]
            if not isinstance(i, slice) and not isinstance(j, slice):
                return self._item(ri[0] * cols + cj[0])
            if isinstance(i, slice) and isinstance(j, slice):
                return matrix(_sliced_shape(len(ri), len(cj)), s)(*[x for row in vals for x in row])
            flat = [x for row in vals for x in row]
            return vector(len(flat), s)(*flat)
        if isinstance(key, slice):
            ri = range(*key.indices(rows))
            return matrix(_sliced_shape(len(ri), cols), s)(*[self._get(r * cols + c) for r in ri for c in range(cols)])
        return self.get_row(_index(key, rows, "int or pair of ints", check=False))

    def __setitem__(self, key, value):
        rows, cols = self._shape_
        if isinstance(key, tuple):
            i, j, ri, cj = self._key2(key)
            if not isinstance(i, slice) and not isinstance(j, slice):
                if not _is_number(value) or isinstance(value, (str, bytes)):
                    if np.ndim(value) > 0 and not isinstance(value, (str, bytes)):
                        raise RuntimeError(f"The provided value is expected to be a scalar but got an object of "
                                           f"shape {np.shape(value)} instead")
                    raise _assign_error(self._wp_scalar_type_, value)
                self._set(ri[0] * cols + cj[0], value)
                return
            if not _is_number(value):
                value = np.asarray(value).reshape(-1).tolist() if np.ndim(value) > 0 else value
            self._assign([r * cols + c for r in ri for c in cj], value)
            return
        if isinstance(key, slice):
            ri = range(*key.indices(rows))
            if not _is_number(value):
                value = np.asarray(value).reshape(-1).tolist() if np.ndim(value) > 0 else value
            self._assign([r * cols + c for r in ri for c in range(cols)], value)
            return
        self.set_row(_index(key, rows, "int or pair of ints", check=False), value)

    def __iter__(self):
        return (self.get_row(i) for i in range(self._shape_[0]))

    def __len__(self):
        return self._shape_[0]

    def __str__(self):
        return "[" + ",\n ".join(str(self.get_row(r)) for r in range(self._shape_[0])) + "]"

    def __repr__(self):
        rows = ", ".join(f"[{', '.join(map(repr, self.get_row(r)))}]" for r in range(self._shape_[0]))
        return f"{wt.type_repr(type(self))}([{rows}])"

    def __eq__(self, other):
        if isinstance(other, np.ndarray) and other.shape != self._shape_:
            return False
        try:
            if len(other) != self._shape_[0]:
                return False
            return all(self.get_row(r) == other[r] for r in range(self._shape_[0]))
        except (TypeError, KeyError, IndexError):
            return False

    def __hash__(self):
        return hash(tuple(self._values()))

    def __mul__(self, other):
        if isinstance(other, _VectorLike):
            return self.__matmul__(other)
        return super().__mul__(other)

    def __rmul__(self, other):
        if isinstance(other, _VectorLike):
            return self.__rmatmul__(other)
        return super().__rmul__(other)

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
    _wp_constructor_ = "quaternion"

    def __mul__(self, other):
        if isinstance(other, _QuatLike):
            x1, y1, z1, w1 = self.numpy().tolist()
            x2, y2, z2, w2 = other.numpy().tolist()
            return type(self)(w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2, w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                              w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2, w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2)
        return super().__mul__(other)


class _TransformLike(_VectorLike):
    _wp_composite_ = "transform"
    _wp_constructor_ = "transformation"

    _PQ = inspect.Signature((inspect.Parameter("p", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=(0.0, 0.0, 0.0)),
                             inspect.Parameter("q", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                               default=(0.0, 0.0, 0.0, 1.0))))

    def __init__(self, *args, **kwargs):
        """As Warp's: `()` the identity, `(s)` fills, `(t)` copies, `(p)` with q the identity, `(p, q)` or
        `(p=, q=)` (each a sequence), or the 7 components."""
        if kwargs:
            if len(args) > 2:
                self._PQ.bind_partial(**kwargs)  # an unexpected keyword is named before the positional count
            bound = self._PQ.bind(*args, **kwargs)
            bound.apply_defaults()
            p, q = bound.args
        elif len(args) == 0:
            super().__init__(*([0.0] * 6 + [1.0]))
            return
        elif len(args) == 1:
            a = args[0]
            if np.ndim(a) == 0 or isinstance(a, _VectorLike) and a._length_ == 7:
                if not isinstance(a, _VectorLike) and not _is_number(a):
                    raise TypeError(f"Invalid argument in transformation constructor: expected a scalar value, got "
                                    f"{type(a).__name__}")
                super().__init__(a)  # fill, or copy
                return
            p, q = a, self._PQ.parameters["q"].default
        elif len(args) == 2:
            p, q = args
        else:
            super().__init__(*args)
            return
        for name, v in (("p", p), ("q", q)):
            if np.ndim(v) == 0:
                raise TypeError(f"Invalid argument '{name}' in transformation constructor: expected a sequence, "
                                f"got {type(v).__name__}")
        super().__init__(*_flatten_args([p]), *_flatten_args([q]))

    @property
    def p(self):
        return vector(3, self._wp_scalar_type_)(*[self._get(k) for k in range(3)])

    @p.setter
    def p(self, value):
        self[0:3] = value

    @property
    def q(self):
        return quaternion(self._wp_scalar_type_)(*[self._get(k) for k in range(3, 7)])

    @q.setter
    def q(self, value):
        self[3:7] = value

    def __mul__(self, other):
        if isinstance(other, _TransformLike):  # t * u: transform_multiply, as in kernels
            return python_scope_builtin("mul", [self, other])
        return super().__mul__(other)

    def __setattr__(self, name, value):
        if name in ("p", "q"):
            object.__setattr__(self, name, value)  # the properties
        elif name in _COMPONENTS:
            raise RuntimeError(f"Cannot set attribute {name} of transformation")
        else:
            super().__setattr__(name, value)


_COMPONENTS = {"x": 0, "y": 1, "z": 2, "w": 3}


def _is_scalar_value(v) -> bool:
    return isinstance(v, (int, float, np.number, wt.scalar_base)) and not isinstance(v, bool)


def _value(v):
    return v.value if isinstance(v, wt.scalar_base) else v


def _index(k, n, expected, check=True) -> int:
    """An integer component index (negative counts from the end); KeyError for other keys, as Warp's."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer, wt.int_base)):
        raise KeyError(f"Invalid key {k}, expected {expected}")
    k = int(k)
    if not check:
        return k
    if k < 0:
        k += n
    if not 0 <= k < n:
        raise IndexError(f"index {k} out of range for length {n}")
    return k


def _sliced_shape(rows: int, cols: int) -> tuple:
    """A matrix slice's shape: (0, 0) when it selects nothing (Warp's: m[123:] is a mat00)."""
    return (0, 0) if rows == 0 or cols == 0 else (rows, cols)


def _is_sequence(a) -> bool:
    return not isinstance(a, (str, bytes)) and hasattr(a, "__len__") and np.ndim(a) > 0


def _flatten_args(args) -> list:
    out = []
    for a in args:
        if isinstance(a, _VectorLike):
            out.extend(a._values())
        elif _is_sequence(a):  # lists, tuples, numpy arrays, and other array libraries' (a torch tensor)
            for x in (np.asarray(a) if hasattr(a, "__array__") else a):
                out.extend(_flatten_args([x]))
        else:
            out.append(a)
    return out


def _is_open(x) -> bool:
    """A type parameter left open in a generic annotation: `typing.Any` or a TypeVar (wp.Float, wp.Int, ...)."""
    return x is typing.Any or isinstance(x, typing.TypeVar)


_GENERIC_STR = {"vec": "vec_t", "mat": "mat_t", "quat": "quat_t", "transform": "transform_t"}


def _make(kind_base, name, scalar, shape, base_name=None):
    if not _is_open(scalar):
        scalar = wt.canonical_type(scalar)
        if not wt.is_scalar(scalar):
            raise TypeError(f"{base_name or kind_base.__name__} dtype must be a scalar type, got {scalar!r}")
    generic = _is_open(scalar) or any(_is_open(d) for d in shape)
    length = 0 if any(_is_open(d) for d in shape) else int(np.prod(shape))
    ctype = ctypes.c_float if _is_open(scalar) else scalar._ctype_
    kind = kind_base._wp_composite_
    params = (*shape, scalar) if kind in ("vec", "mat") else (scalar,)
    attrs = {"_type_": ctype, "_length_": length, "_shape_": tuple(shape), "_wp_scalar_type_": scalar,
             "_np_": None if _is_open(scalar) else scalar._np_, "__module__": "mlwarp", "_wp_type_params_": params,
             "_wp_generic_type_str_": _GENERIC_STR[kind]}
    if generic:
        # A generic annotation (`wp.types.vector(length=Any, dtype=wp.Float)`): mlwarp.core.generics reads
        # `_wp_generic_` and asks `_wp_matches_` whether a concrete type instantiates it.
        attrs["_wp_generic_"] = True
        attrs["_wp_matches_"] = classmethod(_matches_template)
    cls = type(name, (kind_base, ctypes.Array), attrs)
    cls._ctype_ = cls
    if generic:
        cls.__name__ = cls.__qualname__ = wt.type_repr(cls)
    return cls


def _scalar_matches(concrete, template) -> bool:
    if template is typing.Any:
        return True
    if isinstance(template, typing.TypeVar):
        return concrete in {wt.canonical_type(c) for c in template.__constraints__}
    return concrete is template


def _matches_template(template, concrete) -> bool:
    """Whether the concrete composite type `concrete` instantiates the generic composite type `template`."""
    if not wt.is_composite(concrete) or getattr(concrete, "_wp_generic_", False) or \
            wt.composite_kind(concrete) != wt.composite_kind(template):
        return False
    if len(concrete._shape_) != len(template._shape_) or not all(
            _is_open(t) or t == c for t, c in zip(template._shape_, concrete._shape_)):
        return False
    return _scalar_matches(concrete._wp_scalar_type_, template._wp_scalar_type_)


def _dtype(dtype):
    return dtype if _is_open(dtype) else wt.canonical_type(dtype)


def _length(n, what):
    if _is_open(n):
        return typing.Any if n is typing.Any else n
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"{what} must be a non-negative int or typing.Any, got {n!r}")
    return int(n)


def vector(length: int, dtype=wt.float32):
    """`wp.vec(length, dtype)` / `wp.types.vector`: the vector type, one class per (length, dtype). `length`
    or `dtype` may be `typing.Any` (and `dtype` wp.Float, wp.Int, wp.Scalar) for a generic annotation."""
    return _vector(_length(length, "vector length"), _dtype(dtype))


@functools.lru_cache(maxsize=None)
def _vector(length, dtype):
    name = f"vec{length}{_SUFFIX.get(dtype, '')}"
    return _make(_VectorLike, name, dtype, (length,), "vector")


def _shape2(shape):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape, shape)
    shape = tuple(shape)
    if len(shape) != 2:
        label = "dimension" if len(shape) == 1 else "dimensions"
        raise ValueError(f"Matrix shape must have exactly two dimensions, got {len(shape)} {label} in shape "
                         f"{shape!r}")
    return tuple(_length(s, "matrix shape entry") for s in shape)


@functools.lru_cache(maxsize=None)
def _matrix(shape, dtype):
    r, c = shape
    return _make(_MatrixLike, f"mat{r}{c}{_SUFFIX.get(dtype, '')}", dtype, shape, "matrix")


def matrix(shape, dtype=wt.float32):
    """`wp.mat(shape, dtype)` / `wp.types.matrix`: a row-major matrix type; a dimension or `dtype` may be
    `typing.Any` (or a TypeVar) for a generic annotation."""
    return _matrix(_shape2(shape), _dtype(dtype))


def quaternion(dtype=wt.float32):
    return _quaternion(_dtype(dtype))


@functools.lru_cache(maxsize=None)
def _quaternion(dtype):
    """A quaternion type, components (x, y, z, w) as in Warp."""
    return _make(_QuatLike, f"quat{_SUFFIX.get(dtype, '')}", dtype, (4,), "quaternion")


def transformation(dtype=wt.float32):
    return _transformation(_dtype(dtype))


@functools.lru_cache(maxsize=None)
def _transformation(dtype):
    """A rigid transform type: translation p (3) then rotation q (4), as in Warp."""
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
        if type(value) is not t and getattr(value, "_wp_indexed_struct_", None) is not t:  # wp.indexedarray
            if hasattr(t, "_wp_mismatch_"):  # a wp.indexedarray's kernel struct says it in array terms
                raise TypeError(t._wp_mismatch_(value))
            if value is None:  # Warp's text
                raise TypeError(f"expects {t.__name__} but got None")
            raise TypeError(f"expects a struct {t.__name__}, but passed value has type {type(value).__name__}")
        return value._wp_ctype_value_()
    if type(value) is t:
        return value
    if value is not None and not hasattr(value, "__len__") and \
            not isinstance(value, (bool, np.bool_, np.integer, np.floating)):
        # a Python int/float or a warp scalar: no broadcast to the components (Warp's text)
        raise TypeError(f"expects {t.__name__} but got a single value of type {type(value).__name__}. Construct the "
                        f"value explicitly, e.g.: {t.__name__}(...)")
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
