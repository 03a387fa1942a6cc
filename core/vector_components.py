"""How vector-like values (core/vector.py) store and show their components: a stored C value <-> the Python
value Warp shows (half types are stored as bits; integers wrap as C converts them), what indexing returns for
each scalar type, the checks and errors of component indices and assignments, and the `x`/`y`/`z`/`w` names."""

from __future__ import annotations

import numpy as np

from . import types as wt
from .config import config as _config


def to_python(scalar, raw):
    """A stored C value -> the Python value Warp shows (half types are stored as bits)."""
    if scalar is wt.float16:
        return float(np.uint16(raw).view(np.float16))
    if scalar is wt.bfloat16:
        return float(wt.bf16_bits_to_float(raw))
    return raw


def to_raw(scalar, value):
    """A Python, numpy or Warp number -> the stored C value of `scalar` (C conversions: integers wrap).
    TypeError or ValueError when `value` is no number."""
    tv = type(value)
    if tv is float or tv is int:  # the common case: ctypes rounds to float/double and wraps integers itself
        if scalar._kind_ == "float" and scalar._bits_ != 16 or tv is int and scalar._kind_ in ("int", "uint"):
            return value
    if hasattr(value, "__array__") and not isinstance(value, np.ndarray) and np.ndim(value) == 0:
        value = np.asarray(value).item()  # a 0-d tensor of another array library (torch.tensor(1.0))
    if isinstance(value, (str, bytes)) or not is_number(value):
        raise TypeError(f"not a number: {type(value).__name__}")
    if isinstance(value, wt.scalar_base):
        value = value.value
    if scalar is wt.float16:
        with np.errstate(over="ignore"):
            return int(np.float16(float(value)).view(np.uint16))
    if scalar is wt.bfloat16:
        return int(wt.float_to_bf16_bits(float(value)))
    return scalar._convert(value)


def is_number(v) -> bool:
    return isinstance(v, (int, float, np.number, np.bool_, wt.scalar_base)) or (
        isinstance(v, np.ndarray) and v.ndim == 0)


# Indexing a vector or matrix gives a Python number for these scalar types and an instance of the scalar type
# for the others (`wp.vec3d(...)[0]` is `float64(...)`), as in Warp 1.19; `wp.config.legacy_scalar_return_types`
# gives Python numbers for every type.
_NATIVE = (wt.int32, wt.float32, wt.bool_)


def export_scalar(scalar, python_value):
    if scalar in _NATIVE or _config.legacy_scalar_return_types:
        return python_value
    return scalar(python_value)


def assign_error(scalar, value):
    return TypeError(f"Expected to assign a `{wt.type_repr(scalar)}` value but got `{type(value).__name__}` instead")


def sequence_values(scalar, value, count):
    """The stored values of the sequence `value` assigned to `count` components (Warp's errors)."""
    try:
        items = list(np.asarray(value) if hasattr(value, "__array__") and np.ndim(value) > 0 else value)
    except TypeError:
        raise TypeError(f"Expected to assign a slice from a sequence of values but got `{type(value).__name__}` "
                        f"instead") from None
    raw = []
    for x in items:
        try:
            raw.append(to_raw(scalar, x))
        except (TypeError, ValueError, OverflowError):
            raise TypeError(f"Expected to assign a slice from a sequence of `{wt.type_repr(scalar)}` values but "
                            f"got `{type(x).__name__}` instead") from None
    if len(raw) != count:
        raise ValueError("Can only assign sequence of same size")
    return raw


COMPONENTS = {"x": 0, "y": 1, "z": 2, "w": 3}


def is_scalar_value(v) -> bool:
    return isinstance(v, (int, float, np.number, wt.scalar_base)) and not isinstance(v, bool)


def plain_value(v):
    return v.value if isinstance(v, wt.scalar_base) else v


def component_index(k, n, expected, check=True) -> int:
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


def sliced_shape(rows: int, cols: int) -> tuple:
    """A matrix slice's shape: (0, 0) when it selects nothing (Warp's: m[123:] is a mat00)."""
    return (0, 0) if rows == 0 or cols == 0 else (rows, cols)


def is_sequence(a) -> bool:
    return not isinstance(a, (str, bytes)) and hasattr(a, "__len__") and np.ndim(a) > 0
