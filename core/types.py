"""Warp's type system: scalar types and array annotations.

A leaf module (numpy + ctypes only) shared by the user API, the runtime and
the compiler, so that type identity is the same object everywhere. `wp.types`
(python/mlwarp/types.py) re-exports it with Warp's `vector` and `matrix` constructors.
"""

from __future__ import annotations

import ctypes
import math
import operator
import typing
from dataclasses import dataclass

import numpy as np


class scalar_base:
    """Base of every scalar type. Calling a type in Python converts a value, as C does: integers wrap modulo
    2**bits (`wp.int8(300)` is `int8(44)`), floats to integers truncate toward zero, floats round to the type's
    precision (overflowing to inf). `.value` is the converted Python number."""

    __module__ = "mlwarp.types"  # the name users import it by

    _np_: type = None
    _ctype_: type = None
    _type_: type = None  # Warp's name for the ctypes type (float16 and bfloat16 are stored as uint16 bits)
    _kind_: str = None  # "int", "uint", "float", "bool"
    _bits_: int = 0
    _length_ = 1

    def __init__(self, x=0):
        self.value = type(self)._convert(x.value if isinstance(x, scalar_base) else x)

    @classmethod
    def _convert(cls, x):
        raise NotImplementedError

    def __str__(self):
        return str(self.value)

    def __repr__(self):
        return f"{type(self).__name__}({self!s})"

    def __format__(self, spec):
        return format(self.value, spec) if spec else str(self)

    def __float__(self):
        return float(self.value)

    def __int__(self):
        return int(self.value)

    def __bool__(self):
        return self.value != 0

    # Arithmetic in Python scope is the builtin of the same name (`wp.float32(1.5) + 2.0` is `wp.add`), as in
    # Warp; mlwarp.builtins installs it (this layer imports nothing above it). An array, vector or matrix operand
    # is left to its own operators (`wp.float16(2) * v`).
    _builtin_ = None  # name -> the Python-scope builtin

    def _apply(self, name, *args):
        if any(is_array(a) or is_composite(type(a)) for a in args):  # the array's or vector's operator decides
            return NotImplemented
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

    def __neg__(self):
        return self._apply("neg", self)

    # Bit operators (integers): Warp's scalar instances lack them, mlwarp's have them so that a @wp.func using
    # them (mlwarp's random numbers: `b >> uint32(28)`) runs in Python scope as it does in a kernel.
    def __rshift__(self, other):
        return self._apply("rshift", self, other)

    def __rrshift__(self, other):
        return self._apply("rshift", other, self)

    def __lshift__(self, other):
        return self._apply("lshift", self, other)

    def __rlshift__(self, other):
        return self._apply("lshift", other, self)

    def __and__(self, other):
        return self._apply("bit_and", self, other)

    def __rand__(self, other):
        return self._apply("bit_and", other, self)

    def __or__(self, other):
        return self._apply("bit_or", self, other)

    def __ror__(self, other):
        return self._apply("bit_or", other, self)

    def __xor__(self, other):
        return self._apply("bit_xor", self, other)

    def __rxor__(self, other):
        return self._apply("bit_xor", other, self)

    def __invert__(self):
        return self._apply("invert", self)

    def __pos__(self):  # Warp's default types come back as Python numbers (as the builtins' results)
        return self.value if type(self) in (int32, float32) else self

    def __abs__(self):  # Warp keeps the type here (wp.abs gives a Python number for int32/float32)
        return type(self)(abs(self.value))

    # Comparisons are by value, as Warp's: a float operand (Python, numpy or Warp) compares as a float, never
    # truncated (`wp.int8(1) != 1.5`); anything that is no number is NotImplemented.
    def _key(self, other):
        raise NotImplementedError

    def _compare(self, other, op):
        try:
            a, b = self._key(other)
        except (TypeError, ValueError):
            return NotImplemented
        return op(a, b)

    def __eq__(self, other):
        return self._compare(other, operator.eq)

    def __ne__(self, other):
        return self._compare(other, operator.ne)

    def __lt__(self, other):
        return self._compare(other, operator.lt)

    def __le__(self, other):
        return self._compare(other, operator.le)

    def __gt__(self, other):
        return self._compare(other, operator.gt)

    def __ge__(self, other):
        return self._compare(other, operator.ge)

    def __hash__(self):  # equal values hash equal: hash(wp.int8(1)) == hash(1.0)
        return hash(self.value)


_FLOAT_LIKE = (float, np.floating)


class int_base(scalar_base):
    """Base of the integer types (int8 .. uint64)."""

    __module__ = "mlwarp.types"

    @classmethod
    def _convert(cls, x):
        if isinstance(x, _FLOAT_LIKE):
            x = math.trunc(float(x))  # C's float -> integer conversion (nan and inf raise)
        else:
            x = operator.index(x)  # TypeError for what is no integer ('str' object cannot be interpreted ...)
        x &= (1 << cls._bits_) - 1
        if cls._kind_ == "int" and x >> (cls._bits_ - 1):
            x -= 1 << cls._bits_
        return x

    def __index__(self):
        return self.value

    def _key(self, other):
        if isinstance(other, (*_FLOAT_LIKE, float_base)):
            return float(self.value), float(other)
        return self.value, operator.index(other) if not isinstance(other, scalar_base) else int(other)


class float_base(scalar_base):
    """Base of the floating-point types (float16, bfloat16, float32, float64).

    Printed as Warp prints its scalars, which keep the number they were given: a value made from an integer
    shows as one (`float32(-1)`, not `float32(-1.0)`), and a rounded value by the shortest decimal that
    reads back as it at the type's precision (`float32(0.1)`, not 0.10000000149011612)."""

    __module__ = "mlwarp.types"
    _from_integer_ = False

    def __init__(self, x=0):
        super().__init__(x)
        if isinstance(x, float_base):
            self._from_integer_ = x._from_integer_
        elif isinstance(x, (int, np.integer, int_base)) and not isinstance(x, (bool, np.bool_)):
            self._from_integer_ = True

    def __str__(self):
        v = self.value
        if self._from_integer_ and isinstance(v, float) and v.is_integer():
            return str(int(v))
        if self._np_ in (np.float16, np.float32) and isinstance(v, float):
            return str(self._np_(v))  # numpy's shortest round-trip spelling at this precision
        return str(v)

    @classmethod
    def _convert(cls, x):
        x = float(x)
        if cls._bits_ == 64:
            return x
        with np.errstate(over="ignore"):  # out of range: inf, as a C conversion
            return float(cls._np_(x))

    def _key(self, other):
        return float(self.value), float(other)  # OverflowError for an int beyond float range, as in Warp

    def __pow__(self, other):
        return self._apply("pow", self, other)

    def __rpow__(self, other):
        return self._apply("pow", other, self)

    def __round__(self, ndigits=None):
        return type(self)(round(self.value, ndigits))


class _bool_base(scalar_base):
    __module__ = "mlwarp.types"

    @classmethod
    def _convert(cls, x):
        return bool(x)

    def _key(self, other):
        return self.value, other.value if isinstance(other, scalar_base) else other


def _scalar(name, np_type, ctype, kind, bits):
    # __module__: users meet the scalar types as mlwarp.types.* (reprs, pickles), the name they import.
    # (Their spelling in the warp dialect is the frontend's: compiler/frontend/types.py `spelling`.)
    # __numpy_dtype__: numpy (2.4 and later) reads `np.dtype(wp.float32)` as float32; bfloat16 has no numpy dtype.
    base = {"int": int_base, "uint": int_base, "float": float_base, "bool": _bool_base}[kind]
    attrs = dict(_np_=np_type, _ctype_=ctype, _type_=ctype, _kind_=kind, _bits_=bits, __module__="mlwarp.types")
    if name != "bfloat16":
        attrs["__numpy_dtype__"] = np.dtype(np_type)
    return type(name, (base,), attrs)


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
bfloat16._convert = classmethod(lambda cls, x: float(bf16_bits_to_float(float_to_bf16_bits(float(x)))))

# Warp's aliases
handle = uint64  # Warp's type of object handles (Mesh, Volume, ...) in parameters and arrays: a uint64
int_ = int32
float_ = float32
half = float16

scalar_types = (int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64, bool_)
int_types = tuple(t for t in scalar_types if t._kind_ in ("int", "uint"))
float_types = tuple(t for t in scalar_types if t._kind_ == "float")
scalar_and_bool_types = (*int_types, *float_types, bool_)

# Warp's generic scalar annotations: a parameter `x: wp.Float` (or a `wp.array(dtype=wp.Int)`, a
# `wp.types.vector(length=3, dtype=wp.Scalar)`) takes any of the constraint types; Python's `int` and `float`
# stand for int32 and float32. `bool` is no Scalar.
Int = typing.TypeVar("Int", int, int8, uint8, int16, uint16, int32, uint32, int64, uint64)
Float = typing.TypeVar("Float", float, float16, bfloat16, float32, float64)
Scalar = typing.TypeVar("Scalar", int, float, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16,
                        bfloat16, float32, float64)
for _tv in (Int, Float, Scalar):
    _tv.__module__ = "mlwarp.types"
del _tv

_python_to_warp = {float: float32, int: int32, bool: bool_}
_numpy_to_warp = {np.dtype(t._np_): t for t in scalar_types if t is not bfloat16}


def is_scalar(x) -> bool:
    return isinstance(x, type) and issubclass(x, scalar_base) and x is not scalar_base


def is_int(x) -> bool:
    return is_scalar(x) and x._kind_ in ("int", "uint")


def is_float(x) -> bool:
    return is_scalar(x) and x._kind_ == "float"


def canonical_type(t):
    """Maps Python's `float`, `int`, `bool` and numpy scalar types to Warp's; None if not a type Warp knows.
    Composite types (vectors, matrices, quaternions, transforms, structs) are their own canonical form, except
    that a subclass of a vector-like type (`class vec9(wp.types.vector(9, float32))`) is the type it derives from,
    as Warp compares such types by kind, shape and dtype."""
    if is_scalar(t):
        return t
    if is_composite(t):
        return getattr(t, "_wp_structural_", t)
    if t in _python_to_warp:
        return _python_to_warp[t]
    if t is None or isinstance(t, str):  # np.dtype(None) is float64; a string is an unresolved annotation
        return None
    try:
        return _warp_of_numpy(np.dtype(t))
    except (TypeError, ValueError):  # numpy 2.4 raises ValueError for an object whose `.dtype` is no dtype
        return None


def type_size(dtype) -> int:
    """Warp's `wp.types.type_size`: the number of scalars in a value of type `dtype` (1 for scalars and structs, 3
    for vec3, 9 for mat33); type_size_in_bytes is its size in memory."""
    t = canonical_type(dtype)
    if t is None:
        raise TypeError("Invalid data type")
    return 1 if is_scalar(t) or is_struct(t) else t._length_


def type_name(t) -> str:
    if is_scalar(t):
        return t.__name__
    if is_array(t):
        return f"array(ndim={t.ndim}, dtype={type_name(t.dtype)})"
    shown = getattr(t, "_wp_type_name_", None)  # an internal struct that stands for an array kind (wp.fabricarray)
    if isinstance(shown, str):
        return shown
    return getattr(t, "__name__", repr(t))


def dtype_to_numpy(warp_dtype):
    t = canonical_type(warp_dtype)
    if t is None or is_composite(t):
        raise TypeError(f"Cannot convert {warp_dtype!r} to a numpy dtype")
    return t._np_


def dtype_from_numpy(numpy_dtype):
    """The Warp scalar type of a numpy dtype; ml_dtypes.bfloat16 is wp.bfloat16, as in Warp."""
    t = _warp_of_numpy(np.dtype(numpy_dtype))
    if t is None:
        raise TypeError(f"Cannot convert numpy dtype {numpy_dtype!r} to a Warp dtype")
    return t


def _warp_of_numpy(dt: np.dtype):
    t = _numpy_to_warp.get(dt)
    return bfloat16 if t is None and is_ml_bfloat16(dt) else t


# -- ml_dtypes: numpy's bfloat16, optional --------------------------------------------------------
# numpy has no bfloat16, so a bfloat16 array stores uint16 bit patterns. When the ml_dtypes package is
# installed (jax brings it), Warp shows those bits as ml_dtypes.bfloat16 values (.numpy(), str()) and reads
# ml_dtypes.bfloat16 data as bfloat16; without it, .numpy() gives the bits, with a warning once.
_ml_dtypes_bfloat16 = _UNSET = object()


def _get_ml_dtypes_bfloat16():
    """ml_dtypes.bfloat16 if the package is installed, else None: imported on first need (it is optional, and
    not cheap to import), then remembered. Warp's name; a test sets `_ml_dtypes_bfloat16 = None` to act
    as if it were missing."""
    global _ml_dtypes_bfloat16
    if _ml_dtypes_bfloat16 is _UNSET:
        try:
            import ml_dtypes  # noqa: PLC0415
            _ml_dtypes_bfloat16 = ml_dtypes.bfloat16
        except ImportError:
            _ml_dtypes_bfloat16 = None
    return _ml_dtypes_bfloat16


def is_ml_bfloat16(dt) -> bool:
    """Whether numpy dtype `dt` is ml_dtypes.bfloat16 (ml_dtypes is imported only for a 2-byte void dtype,
    the kind its dtypes have)."""
    if dt.kind != "V" or dt.itemsize != 2 or dt.fields is not None:
        return False
    ml = _get_ml_dtypes_bfloat16()
    return ml is not None and dt == ml


def bfloat16_shown(storage: np.ndarray, t) -> np.ndarray:
    """`storage` (numpy data of an array of `t`, bfloat16 as bit patterns) as Warp's .numpy() shows it: viewed,
    not copied, as ml_dtypes.bfloat16 when `t` is bfloat16 or a vector/matrix of them and ml_dtypes is
    installed; else `storage` itself."""
    if scalar_type_of(t) is bfloat16 and storage.dtype == np.uint16:
        ml = _get_ml_dtypes_bfloat16()
        if ml is not None:
            return storage.view(ml)
    return storage


def is_generic(annotation) -> bool:
    """`typing.Any`: a @wp.func parameter that takes any type (one overload per call's argument types)."""
    return annotation is typing.Any


def array_element_type(dtype):
    """What an array of `dtype` holds in memory and in kernels: a texture class's kernel struct (its
    `_wp_array_element_`: `wp.array[wp.Texture2D]`), any other type itself."""
    return getattr(dtype, "_wp_array_element_", None) or dtype


def is_array(x) -> bool:
    """An array or an array annotation (`wp.array` and its subclasses carry the `_wp_array_` marker)."""
    return getattr(x if isinstance(x, type) else type(x), "_wp_array_", False) is True


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
def is_composite(x) -> bool:
    return isinstance(x, type) and getattr(x, "_wp_composite_", None) is not None


def composite_kind(t):
    return getattr(t, "_wp_composite_", None) if isinstance(t, type) else None


def is_struct(x) -> bool:
    return composite_kind(x) == "struct"


def same_struct_layout(a, b) -> bool:
    """Whether two struct classes are one struct made twice (a reloaded module's, say): same qualified name and
    the same fields of the same types, so one's values are laid out as the other's."""
    return is_struct(a) and is_struct(b) and a._wp_key_() == b._wp_key_()


def inner_shape(t) -> tuple:
    """The shape one element of dtype `t` adds to a numpy view: (3,) for vec3, (3, 3) for mat33."""
    return tuple(t._shape_) if composite_kind(t) in ("vec", "mat", "quat", "transform") else ()


def numpy_dtype(t) -> np.dtype:
    """The numpy dtype of the scalars in a numpy view of an array of `t` (a structured dtype for structs)."""
    t = canonical_type(t)
    if is_struct(t):
        return t._np_
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
def type_size_in_bytes(dtype) -> int:
    """Bytes in a value of type `dtype` (Python's `float` and `int` are 4, as float32 and int32)."""
    c = canonical_type(dtype)
    if c is None:
        raise TypeError("A concrete type is required" if dtype is typing.Any else f"Invalid data type: {dtype}")
    return ctypes.sizeof(c._ctype_)


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
    """Whether `a` and `b` are the same Warp type: Python's `float`/`int`/`bool` are float32/int32/bool;
    composite types are cached, so one (shape, dtype) is one class (generic ones included); arrays and array
    annotations are equal when their dtypes and ndims are."""
    if a is b:
        return True
    a_arr = is_array(a) and not isinstance(a, type) or isinstance(a, ArrayT)
    b_arr = is_array(b) and not isinstance(b, type) or isinstance(b, ArrayT)
    if a_arr or b_arr:
        return a_arr and b_arr and a.ndim == b.ndim and types_equal(a.dtype, b.dtype)
    ca, cb = canonical_type(a), canonical_type(b)
    return ca is not None and ca is cb


# -- Warp's public type introspection (warp.types): type_is_* take types, is_* take values ----------------------
_PY_TO_WARP = {int: int32, float: float32, bool: bool_}


def type_to_warp(t):
    """Python's `int`, `float` and `bool` as Warp's int32, float32 and bool; any other type unchanged."""
    return _PY_TO_WARP.get(t, t) if isinstance(t, type) else t


def type_is_int(t) -> bool:
    """Whether `t` is an integer type (Python's `int` included)."""
    return type_to_warp(t) in int_types


def type_is_float(t) -> bool:
    """Whether `t` is a floating-point type (Python's `float` included)."""
    return type_to_warp(t) in float_types


def type_is_scalar(t) -> bool:
    """Whether `t` is an integer or floating-point type (bool is not)."""
    return type_is_int(t) or type_is_float(t)


def type_is_composite(t) -> bool:
    """Whether `t` is a vector, matrix, quaternion or transformation type (generic ones included)."""
    return composite_kind(t) in ("vec", "mat", "quat", "transform")


def type_is_value(t) -> bool:
    """Whether `t` is a value type: a scalar (bool included) or a composite type."""
    return t in (int, float, bool) or t in scalar_and_bool_types or type_is_composite(t)


def type_is_struct(t) -> bool:
    return is_struct(t)


def type_is_array(t) -> bool:
    """Whether `t` is one of the array classes (`wp.array`, ...); an array annotation is a value, see is_array."""
    return isinstance(t, type) and getattr(t, "_wp_array_", False) is True


def type_is_tile(t) -> bool:
    """Whether `t` is the tile type (Warp's `wp.tile` class; its instances are tile types with a dtype and shape)."""
    return isinstance(t, type) and getattr(t, "_wp_tile_type_", False) is True


def _value_kind(x):
    return None if isinstance(x, type) else composite_kind(type(x))


def is_vector(x) -> bool:
    """Whether `x` is a vector value (not a type)."""
    return _value_kind(x) == "vec"


def is_matrix(x) -> bool:
    return _value_kind(x) == "mat"


def is_quaternion(x) -> bool:
    return _value_kind(x) == "quat"


def is_transformation(x) -> bool:
    return _value_kind(x) == "transform"


def is_value(x) -> bool:
    """Whether `x` is a value of a value type: a Python or Warp scalar, or a vector, matrix, quaternion or
    transformation."""
    return isinstance(x, (int, float, bool, scalar_base)) or _value_kind(x) in ("vec", "mat", "quat", "transform")


def is_tile(t) -> bool:
    """A tile, or a tile annotation (`wp.tile[float, 8, 4]`, as Warp's are instances of its Tile class)."""
    return not isinstance(t, type) and (getattr(type(t), "_wp_tile_type_", False) is True or
                                        getattr(t, "_wp_tile_annotation_", False) is True)


def type_ctype(dtype):
    """The ctypes type of values of `dtype`: c_float for `float`, c_int32 for `int`; composite types are their
    own."""
    t = type_to_warp(dtype)
    if is_composite(t):
        return t._ctype_ if is_struct(t) and hasattr(t, "_ctype_") else t
    return t._type_


_SHORT = {float16: "h", bfloat16: "bf", float32: "f", float64: "d", int8: "b", int16: "s", int32: "i",
          int64: "l", uint8: "ub", uint16: "us", uint32: "ui", uint64: "ul"}


def type_repr(t) -> str:
    """A type as Warp writes it in messages: `float32`, `vec3f`, `mat22d`, `quatf`, `transformh`,
    `vector(length=5, dtype=float32)`, `matrix(shape=(2, 5), dtype=int8)`, `array(ndim=2, dtype=vec3f)` (an
    annotation) or `array(shape=(4,), dtype=float32)` (an array), `Any`."""
    if t is typing.Any:
        return "Any"
    if isinstance(t, typing.TypeVar):
        return t.__name__
    if is_array(t) and not isinstance(t, type):
        ndim = "Any" if t.ndim is typing.Any else t.ndim
        name = "array" if getattr(type(t), "_wp_array_", False) else type(t).__name__
        if getattr(t, "device", None) is None or getattr(t, "is_annotation", False):
            return f"{name}(ndim={ndim}, dtype={type_repr(t.dtype)})"
        return f"{name}(shape={tuple(t.shape)}, dtype={type_repr(t.dtype)})"
    if isinstance(t, ArrayT):
        return str(t)
    if typing.get_origin(t) is tuple:
        args = typing.get_args(t)
        return f"tuple({', '.join(type_repr(a) for a in args)})" if args else "tuple"
    kind = composite_kind(t)
    if kind in ("vec", "mat", "quat", "transform"):
        s = t._wp_scalar_type_
        sn = _SHORT.get(s)
        if kind == "transform":
            return f"transform{sn}" if sn else f"transform(dtype={type_repr(s)})"
        if kind == "quat":
            return f"quat{sn}" if sn else f"quat(dtype={type_repr(s)})"
        dims = t._shape_
        small = sn is not None and all(isinstance(d, int) and d <= 4 for d in dims)
        shape = ", ".join("Any" if d is typing.Any else str(d) for d in dims)
        if kind == "vec":
            return f"vec{dims[0]}{sn}" if small else f"vector(length={shape}, dtype={type_repr(s)})"
        return f"mat{dims[0]}{dims[1]}{sn}" if small else f"matrix(shape=({shape}), dtype={type_repr(s)})"
    if t in scalar_and_bool_types:
        return t.__name__
    if t in (bool, float, int):
        return t.__name__
    name = getattr(t, "__name__", None)
    if name is None:
        return repr(t)
    return f"{t.__module__}.{getattr(t, '__qualname__', name)}"
