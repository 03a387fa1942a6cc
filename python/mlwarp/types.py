"""`wp.types`: Warp's scalar types, array annotations and type helpers.

Defined in mlwarp.core.types (the bottom layer the compiler and the runtime share); Warp's composite type
constructors `wp.types.vector`, `matrix`, `quaternion` and `transformation` come from mlwarp.core.vector.
Warp's public introspection is here: `type_repr`, `types_equal`, `type_size_in_bytes`, `type_ctype`,
`type_is_int/float/scalar/vector/matrix/quaternion/transformation/composite/value/struct/array/tile` (of types),
`is_vector/matrix/quaternion/transformation/value/tile` (of values), and the generic annotations `Int`,
`Float`, `Scalar`.

mlwarp's own modules read the type-taking helpers of the same names (`is_int(t)`, `is_struct(t)`, ...) from
mlwarp.core.types; here `is_int`, `is_float`, `is_scalar`, `is_struct`, `is_composite` and `is_array` take values,
as Warp's do (`wp.types.is_int(5)` is True, `wp.types.is_int(wp.int32)` False).
"""

from mlwarp.core.types import *  # noqa: F401,F403
from mlwarp.core.vector import matrix, quaternion, transformation, vector  # noqa: F401

from mlwarp.core import types as _core
from mlwarp.kernels.subscript_annotations import ArrayAnnotationBase


def is_int(x) -> bool:
    """Whether `x` is an integer value: a Python int (not a bool) or a Warp integer scalar."""
    return type_is_int(type(x))


def is_float(x) -> bool:
    """Whether `x` is a floating-point value: a Python float or a Warp float scalar."""
    return type_is_float(type(x))


def is_scalar(x) -> bool:
    """Whether `x` is an integer or floating-point value (a bool is not)."""
    return type_is_scalar(type(x))


def is_composite(x) -> bool:
    """Whether `x` is a vector, matrix, quaternion or transformation value (not a type, not a struct)."""
    return not isinstance(x, type) and type_is_composite(type(x))


def is_struct(x) -> bool:
    """Whether `x` is an instance of a `@wp.struct` (the struct class itself is not: see type_is_struct)."""
    return not isinstance(x, type) and _core.is_struct(type(x))


# The array classes, by the marker each family's base class carries (the specialised annotation classes of the
# indexed and fabric families carry a tuple there, not True)
_ARRAY_CLASS_MARKERS = ("_wp_array_", "_wp_indexed_", "_wp_fixedarray_", "_wp_fabric_")


def type_is_array(t) -> bool:
    """Whether `t` is one of Warp's array classes: wp.array, wp.fixedarray, wp.indexedarray, wp.fabricarray,
    wp.indexedfabricarray."""
    return isinstance(t, type) and any(getattr(t, m, None) is True for m in _ARRAY_CLASS_MARKERS)


def is_array(x) -> bool:
    """Whether `x` is an array of one of those classes or an array annotation (`wp.array[float]`,
    `wp.indexedarray(dtype=float)`); the classes themselves are not (see type_is_array)."""
    return not isinstance(x, type) and (type_is_array(type(x)) or isinstance(x, ArrayAnnotationBase) or
                                        _core.is_array(x))
