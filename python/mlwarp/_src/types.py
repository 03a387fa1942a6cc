"""`warp._src.types`: Warp's type module under its internal path. Clients import from it what `warp.types`
also has (Newton's viewer: `type_scalar_type`, `type_length`), and what only the internal module has: `Any`
(typing's, which Warp's module imports) and the subscript type hints `Vector[dtype, Literal[n]]`,
`Matrix[dtype, Literal[r], Literal[c]]`, `Quaternion[dtype]`, `Transformation[dtype]` (Newton's Kamino solver
annotates with `Vector[Any, Int]`).

The hints subscripted with concrete parameters are the runtime types (`Vector[wp.float32, Literal[3]]` is
`wp.vec3f`, as `wp.types.vector(3, wp.float32)`); with a TypeVar (or `Any` next to one) they stay generic
aliases, for static typing only.
"""

import typing
from typing import Any, Generic, Literal, TypeVar  # noqa: F401 (Any: what clients import from here)

import numpy as np

from mlwarp.core.types import Float, Scalar, canonical_type
from mlwarp.core.vector import matrix, quaternion, transformation, vector
from mlwarp.types import *  # noqa: F401,F403
from mlwarp import types as _types
from mlwarp.core.refs import Reference  # noqa: F401  (wp.ref[T]'s class, which Warp defines here)
from mlwarp.core import vector as _vectors
from mlwarp.arrays.array import array  # noqa: F401  (Warp's module defines the class here)

Length = TypeVar("Length", bound=int)
Rows = TypeVar("Rows", bound=int)
Cols = TypeVar("Cols", bound=int)


def _warp_type(dtype):
    found = canonical_type(dtype)
    if found is None:
        raise TypeError(f"{dtype!r} is not a Warp scalar type")
    return found


def _positive_int(value, what: str) -> int:
    if typing.get_origin(value) is Literal:
        args = typing.get_args(value)
        if len(args) != 1:
            raise TypeError(f"Expected a single Literal value, got Literal{list(args)}")
        value = args[0]
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise TypeError(f"{what} must be a positive integer, got {value!r}")
    return value


def _is_open(params) -> bool:
    return any(isinstance(p, TypeVar) for p in params)


class Vector(Generic[Scalar, Length]):
    """`Vector[dtype, Literal[length]]`: the type `wp.types.vector(length, dtype)`."""

    def __class_getitem__(cls, params):
        params = params if isinstance(params, tuple) else (params,)
        if _is_open(params):
            return super().__class_getitem__(params)
        if len(params) != 2:
            raise TypeError(f"Vector requires 2 parameters (dtype, length), got {len(params)}")
        return vector(_positive_int(params[1], "Vector length"), _warp_type(params[0]))


class Matrix(Generic[Scalar, Rows, Cols]):
    """`Matrix[dtype, Literal[rows], Literal[cols]]`: the type `wp.types.matrix((rows, cols), dtype)`."""

    def __class_getitem__(cls, params):
        params = params if isinstance(params, tuple) else (params,)
        if _is_open(params):
            return super().__class_getitem__(params)
        if len(params) != 3:
            raise TypeError(f"Matrix requires 3 parameters (dtype, rows, cols), got {len(params)}")
        shape = (_positive_int(params[1], "Matrix rows"), _positive_int(params[2], "Matrix cols"))
        return matrix(shape, _warp_type(params[0]))


class Quaternion(Generic[Float]):
    """`Quaternion[dtype]`: the type `wp.types.quaternion(dtype)`."""

    def __class_getitem__(cls, params):
        if isinstance(params, TypeVar):
            return super().__class_getitem__(params)
        return quaternion(_warp_type(params))


class Transformation(Generic[Float]):
    """`Transformation[dtype]`: the type `wp.types.transformation(dtype)`."""

    def __class_getitem__(cls, params):
        if isinstance(params, TypeVar):
            return super().__class_getitem__(params)
        return transformation(_warp_type(params))


# Warp's type tables (warp/_src/types.py), which its tests and clients read: the composite types by scalar, numpy's
# scalar types and dtypes to Warp's, Warp's to numpy's (bfloat16 as its uint16 bits), the types atomics refuse.
vector_types = tuple(getattr(_vectors, f"{kind}{suffix}")
                     for kind in ("vec2", "vec3", "vec4") for suffix in ("b", "ub", "s", "us", "i", "ui", "l", "ul", "h", "f", "d")) \
    + tuple(getattr(_vectors, f"{kind}{suffix}") for kind in ("mat22", "mat33", "mat44", "quat", "transform",
                                                            "spatial_vector", "spatial_matrix") for suffix in "hfd")
_NUMPY_SCALARS = ((np.bool_, _types.bool_), (np.int8, _types.int8), (np.uint8, _types.uint8), (np.int16, _types.int16),
                  (np.uint16, _types.uint16), (np.int32, _types.int32), (np.int64, _types.int64),
                  (np.uint32, _types.uint32), (np.uint64, _types.uint64), (np.byte, _types.int8),
                  (np.ubyte, _types.uint8), (np.float16, _types.float16), (np.float32, _types.float32),
                  (np.float64, _types.float64))
np_dtype_to_warp_type = {**dict(_NUMPY_SCALARS), **{np.dtype(n): w for n, w in _NUMPY_SCALARS}}
warp_type_to_np_dtype = {_types.bool_: np.bool_, _types.int8: np.int8, _types.int16: np.int16, _types.int32: np.int32,
                         _types.int64: np.int64, _types.uint8: np.uint8, _types.uint16: np.uint16,
                         _types.uint32: np.uint32, _types.uint64: np.uint64, _types.handle: np.uint64,
                         _types.float16: np.float16, _types.bfloat16: np.uint16, _types.float32: np.float32,
                         _types.float64: np.float64}
non_atomic_types = (_types.int8, _types.uint8, _types.int16, _types.uint16)
# Warp's scalar tables, in its order; scalar_types has no bool (mlwarp.core.types' own table, which the compiler
# iterates, does: a test looping over this one would launch a bool overload with 17)
int_types = (_types.int8, _types.uint8, _types.int16, _types.uint16, _types.int32, _types.uint32, _types.int64,
             _types.uint64)
float_types = (_types.float16, _types.bfloat16, _types.float32, _types.float64)
scalar_types = int_types + float_types
scalar_and_bool_types = (*scalar_types, _types.bool_)
