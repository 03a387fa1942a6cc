"""Warp's type system: scalar types and array annotations.

A leaf module (numpy + ctypes only) shared by the user API, the runtime and
the compiler, so that type identity is the same object everywhere. `wp.types`
(mlwarp/types.py) re-exports it with Warp's `vector` and `matrix` constructors.
"""

from __future__ import annotations

import ctypes
import typing
from dataclasses import dataclass

import numpy as np


class scalar_base:
    """Base of every scalar type. Calling a type in Python converts a value."""

    __module__ = "mlwarp.types"  # the name users import it by

    _np_: type = None
    _ctype_: type = None
    _kind_: str = None  # "int", "uint", "float", "bool"
    _bits_: int = 0

    def __init__(self, x=0):
        if self._kind_ == "bool":
            self.value = bool(x)
        elif type(self) is bfloat16:
            self.value = float(bf16_bits_to_float(float_to_bf16_bits(float(x))))
        else:
            self.value = self._np_(x).item()

    def __repr__(self):
        return f"{type(self).__name__}({self.value!r})"

    def __float__(self):
        return float(self.value)

    def __int__(self):
        return int(self.value)

    def __bool__(self):
        return bool(self.value)

    def __eq__(self, other):
        return self.value == (other.value if isinstance(other, scalar_base) else other)

    def __hash__(self):
        return hash(self.value)

    # Arithmetic in Python scope is the builtin of the same name (`wp.float32(1.5) + 2.0` is `wp.add`), as in
    # Warp; mlwarp.builtins installs it (this layer imports nothing above it).
    _builtin_ = None  # name -> the Python-scope builtin

    def _apply(self, name, *args):
        return scalar_base._builtin_(name)(*args)

    def __add__(self, other):
        return self._apply("add", self, other)

    def __radd__(self, other):
        return self._apply("add", other, self)

    def __sub__(self, other):
        return self._apply("sub", self, other)

    def __rsub__(self, other):
        return self._apply("sub", other, self)

    def __mul__(self, other):
        return self._apply("mul", self, other)

    def __rmul__(self, other):
        return self._apply("mul", other, self)

    def __truediv__(self, other):
        return self._apply("div", self, other)

    def __rtruediv__(self, other):
        return self._apply("div", other, self)

    def __mod__(self, other):
        return self._apply("mod", self, other)

    def __rmod__(self, other):
        return self._apply("mod", other, self)

    def __pow__(self, other):
        return self._apply("pow", self, other)

    def __rpow__(self, other):
        return self._apply("pow", other, self)

    def __neg__(self):
        return self._apply("neg", self)

    def __pos__(self):  # Warp's default types come back as Python numbers (as the builtins' results)
        return self.value if type(self) in (int32, float32) else self

    def __abs__(self):  # Warp keeps the type here (wp.abs gives a Python number for int32/float32)
        return type(self)(abs(self.value))

    def __round__(self, ndigits=None):
        return round(self.value, ndigits)

    def _compare(self, other, op):
        return op(self.value, other.value if isinstance(other, scalar_base) else other)

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)


def _scalar(name, np_type, ctype, kind, bits):
    # __module__: users meet the scalar types as mlwarp.types.* (reprs, pickles), the name they import.
    # (Their spelling in the warp dialect is the frontend's: compiler/frontend/types.py `spelling`.)
    return type(name, (scalar_base,), dict(_np_=np_type, _ctype_=ctype, _kind_=kind, _bits_=bits,
                                           __module__="mlwarp.types"))


int8 = _scalar("int8", np.int8, ctypes.c_int8, "int", 8)
int16 = _scalar("int16", np.int16, ctypes.c_int16, "int", 16)
int32 = _scalar("int32", np.int32, ctypes.c_int32, "int", 32)
int64 = _scalar("int64", np.int64, ctypes.c_int64, "int", 64)
uint8 = _scalar("uint8", np.uint8, ctypes.c_uint8, "uint", 8)
uint16 = _scalar("uint16", np.uint16, ctypes.c_uint16, "uint", 16)
uint32 = _scalar("uint32", np.uint32, ctypes.c_uint32, "uint", 32)
uint64 = _scalar("uint64", np.uint64, ctypes.c_uint64, "uint", 64)
float16 = _scalar("float16", np.float16, ctypes.c_uint16, "float", 16)
float32 = _scalar("float32", np.float32, ctypes.c_float, "float", 32)
float64 = _scalar("float64", np.float64, ctypes.c_double, "float", 64)
bool_ = _scalar("bool", np.bool_, ctypes.c_bool, "bool", 8)
# bfloat16 has no numpy dtype: arrays hold its bit patterns as uint16, as in Warp.
bfloat16 = _scalar("bfloat16", np.uint16, ctypes.c_uint16, "float", 16)

# Warp's aliases
int_ = int32
float_ = float32
half = float16

scalar_types = (int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64, bool_)
int_types = tuple(t for t in scalar_types if t._kind_ in ("int", "uint"))
float_types = tuple(t for t in scalar_types if t._kind_ == "float")

_python_to_warp = {float: float32, int: int32, bool: bool_}
_numpy_to_warp = {np.dtype(t._np_): t for t in scalar_types if t is not bfloat16}


def is_scalar(t) -> bool:
    return isinstance(t, type) and issubclass(t, scalar_base) and t is not scalar_base


def is_int(t) -> bool:
    return is_scalar(t) and t._kind_ in ("int", "uint")


def is_float(t) -> bool:
    return is_scalar(t) and t._kind_ == "float"


def canonical_type(t):
    """Maps Python's `float`, `int`, `bool` and numpy scalar types to Warp's; None if not a type Warp knows.
    Composite types (vectors, matrices, quaternions, transforms, structs) are their own canonical form."""
    if is_scalar(t) or is_composite(t):
        return t
    if t in _python_to_warp:
        return _python_to_warp[t]
    if t is None or isinstance(t, str):  # np.dtype(None) is float64; a string is an unresolved annotation
        return None
    try:
        return _numpy_to_warp.get(np.dtype(t))
    except TypeError:
        return None


def type_size(t) -> int:
    return ctypes.sizeof(canonical_type(t)._ctype_)


def type_name(t) -> str:
    if is_scalar(t):
        return t.__name__
    if is_array(t):
        return f"array(ndim={t.ndim}, dtype={type_name(t.dtype)})"
    return getattr(t, "__name__", repr(t))


def dtype_to_numpy(warp_dtype):
    t = canonical_type(warp_dtype)
    if t is None or is_composite(t):
        raise TypeError(f"Cannot convert {warp_dtype!r} to a numpy dtype")
    return t._np_


def dtype_from_numpy(numpy_dtype):
    t = _numpy_to_warp.get(np.dtype(numpy_dtype))
    if t is None:
        raise TypeError(f"Cannot convert numpy dtype {numpy_dtype!r} to a Warp dtype")
    return t


def is_generic(annotation) -> bool:
    """`typing.Any`: a @wp.func parameter that takes any type (one overload per call's argument types)."""
    return annotation is typing.Any


def is_array(t) -> bool:
    """An array or an array annotation (`wp.array` and its subclasses carry the `_wp_array_` marker)."""
    return getattr(t if isinstance(t, type) else type(t), "_wp_array_", False) is True


@dataclass(frozen=True)
class ArrayT:
    """The type of an array value in a kernel: what the frontend types arguments and views with, and what the
    runtime hands it (here, not in the compiler: building a kernel's argument types imports no MLIR)."""

    dtype: type
    ndim: int

    def __str__(self):
        return f"array(ndim={self.ndim}, dtype={type_name(self.dtype)})"


# -- bfloat16 conversions (round to nearest even, as the hardware does) ----------------
def float_to_bf16_bits(x):
    """float32 values -> bfloat16 bit patterns (uint16), NaN kept quiet."""
    f = np.asarray(x, dtype=np.float32)
    b = f.view(np.uint32).astype(np.uint64)
    rounded = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(f)
    if np.any(nan):
        rounded = np.where(nan, ((b >> 16) | 0x40).astype(np.uint16), rounded)
    return rounded if rounded.ndim else rounded[()]


def bf16_bits_to_float(bits):
    """bfloat16 bit patterns (uint16) -> float32 values."""
    b = np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16
    out = b.view(np.float32)
    return out if out.ndim else out[()]


# -- composite types (vectors, matrices, quaternions, transforms, structs) ------------
# A composite type is a class with `_wp_composite_` ("vec", "mat", "quat", "transform",
# "struct"); vector.py and struct.py define them. Helpers here keep the runtime and the
# compiler independent of those modules.
def is_composite(t) -> bool:
    return isinstance(t, type) and getattr(t, "_wp_composite_", None) is not None


def composite_kind(t):
    return getattr(t, "_wp_composite_", None) if isinstance(t, type) else None


def is_struct(t) -> bool:
    return composite_kind(t) == "struct"


def inner_shape(t) -> tuple:
    """The shape one element of dtype `t` adds to a numpy view: (3,) for vec3, (3, 3) for mat33."""
    return tuple(t._shape_) if composite_kind(t) in ("vec", "mat", "quat", "transform") else ()


def numpy_dtype(t) -> np.dtype:
    """The numpy dtype of the scalars in a numpy view of an array of `t` (a structured dtype for structs)."""
    t = canonical_type(t)
    if is_struct(t):
        return t.numpy_dtype()
    if is_composite(t):
        return np.dtype(t._wp_scalar_type_._np_)
    return np.dtype(t._np_)


def scalar_type_of(t):
    """The scalar type of a vector-like type, or `t` itself for scalars."""
    return getattr(t, "_wp_scalar_type_", t)


def type_key(t) -> str:
    """A string that changes whenever `t`'s layout or meaning does (kernel cache keys)."""
    if is_struct(t):
        return t._wp_key_()
    return type_name(t)


# -- Warp's wp.types helpers for composite types ----------------------------------------------------
def type_size_in_bytes(t) -> int:
    return type_size(t)


def type_length(t) -> int:
    """Number of scalars in a value of type `t` (1 for scalars)."""
    n = 1
    for s in inner_shape(t):
        n *= s
    return n


def type_scalar_type(t):
    return scalar_type_of(canonical_type(t))


def type_is_vector(t) -> bool:
    return composite_kind(t) == "vec"


def type_is_matrix(t) -> bool:
    return composite_kind(t) == "mat"


def type_is_quaternion(t) -> bool:
    return composite_kind(t) == "quat"


def type_is_transformation(t) -> bool:
    return composite_kind(t) == "transform"


def types_equal(a, b) -> bool:
    """Warp compares types by identity after canonicalising (float -> float32); composite types are cached,
    so one (length, dtype) is one class."""
    return canonical_type(a) is canonical_type(b)
