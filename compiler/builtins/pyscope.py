"""Builtins called in Python scope (`wp.sin(1.0)` outside a kernel), as Warp allows for scalar math.

Arguments are typed as in a kernel: Python floats are float32, ints int32,
bools bool, Warp scalar instances (`wp.float64(2.0)`) and numpy scalars
(`np.float64(2.0)`) keep their type; the table's type rule checks the call,
and the builtin's numpy implementation computes in those types. A call no
signature accepts raises Warp's Python-scope RuntimeError, which names the
arguments as Python sees them (`'int16, int'`). A result of type int32,
float32 or bool is a Python number, any other an instance of the result type
(`wp.add(wp.int8(100), wp.int8(100))` is `int8(-56)`), as in Warp;
`wp.config.legacy_scalar_return_types` gives Python numbers for all.
"""

from __future__ import annotations

import numpy as np

from mlwarp.core import types as wt
from mlwarp.core.config import config


def warp_type(value):
    if isinstance(value, wt.scalar_base):
        return type(value)
    if isinstance(value, np.generic):  # before float: np.float64 is a subclass of float
        return wt.dtype_from_numpy(value.dtype)
    if isinstance(value, bool):
        return wt.bool_
    if isinstance(value, int):
        return wt.int32
    if isinstance(value, float):
        return wt.float32
    raise TypeError(f"a builtin called from Python takes scalars, got {type(value).__name__}")


def _compute_dtype(t):
    """The numpy type a builtin computes `t` in: its own, but bfloat16 (stored as uint16 bits) in float32, which
    holds every bfloat16 exactly, as Warp's C bfloat16 arithmetic does before rounding its result."""
    return np.float32 if t is wt.bfloat16 else t._np_


def _as_numpy(value, t):
    raw = value.value if isinstance(value, wt.scalar_base) else value
    return np.array(raw).astype(_compute_dtype(t))[()]


class BuiltinArgumentError(RuntimeError, TypeError):
    """A Python-scope builtin call no signature accepts: a RuntimeError as in Warp, and the TypeError the
    table's type rule raised."""


def python_type_name(value) -> str:
    """An argument's type as Warp's Python-scope errors name it: Python numbers `int`/`float`/`bool`, numpy
    scalars by numpy's name, Warp scalars and composites by Warp's."""
    t = type(value)
    if isinstance(value, wt.scalar_base) or wt.is_composite(t):
        return wt.type_name(t)
    return t.__name__


# The table's own words for "no signature takes these types"; a type rule's specific complaint (where()'s
# operand types, say) is kept as it is.
_GENERIC = ("Couldn't find a function", "Input types must be the same", "'", "a builtin called from Python")


def no_overload(name: str, args, error: TypeError | None = None) -> BuiltinArgumentError:
    """Warp's error for a Python-scope call no overload accepts."""
    if error is not None and not str(error).startswith(_GENERIC):
        return BuiltinArgumentError(str(error))
    names = ", ".join(python_type_name(a) for a in args)
    return BuiltinArgumentError(f"Couldn't find a function '{name}' compatible with the arguments '{names}'")


def scalar_result(result, value):
    """A scalar result as Warp's Python scope returns it: int32/float32/bool (or every type with
    `wp.config.legacy_scalar_return_types`) as a Python number, the others as an instance of the type."""
    if result is wt.bfloat16:  # rounded to the nearest bfloat16 by the type
        r = result(float(np.float32(value)))
        return r.value if config.legacy_scalar_return_types else r
    r = np.array(value).astype(result._np_)[()]
    if result in (wt.int32, wt.float32, wt.bool_) or config.legacy_scalar_return_types:
        return r.item()
    return result(r)


def python_scope(name: str, impl):
    """Warp's Python-scope call of builtin `name`, computed by `impl` on numpy scalars of the argument types."""

    def call(*args):
        from .table import resolve  # the table imports this module

        try:
            types = [warp_type(a) for a in args]
            result = resolve(name, types)
        except TypeError as e:
            raise no_overload(name, args, e) from None
        with np.errstate(all="ignore"):
            return scalar_result(result, impl(*[_as_numpy(a, t) for a, t in zip(args, types)]))

    call.__name__ = name
    return call


# -- C semantics on numpy scalars, for the implementations ----------------------------------------
def c_div(a, b):
    """C division: floats as IEEE, integers truncating toward zero; integer x / 0 is 0 as in kernels
    (vecmath.int_division; MIN / -1 wraps when the caller stores the result in the type)."""
    if np.issubdtype(np.asarray(a).dtype, np.floating):
        return a / b
    if int(b) == 0:
        return 0
    q = abs(int(a)) // abs(int(b))
    return q if (int(a) < 0) == (int(b) < 0) else -q


def c_mod(a, b):
    """C's % and fmod: the remainder has the sign of the dividend; integer x % 0 is x, as in kernels."""
    if np.issubdtype(np.asarray(a).dtype, np.floating):
        return np.fmod(a, b)
    return int(a) - int(b) * c_div(a, b)


def floordiv(a, b):
    if np.issubdtype(np.asarray(a).dtype, np.floating):
        return np.floor(a / b)
    return 0 if int(b) == 0 else int(a) // int(b)


def fmin(a, b):
    """Warp's float min: the non-NaN operand when one is NaN (C fmin); integers compare."""
    return a if a <= b else (b if b == b else a)


def fmax(a, b):
    return a if a >= b else (b if b == b else a)


def c_round(x):
    """C round: halves away from zero (numpy's round goes to even)."""
    v = float(x)
    if not np.isfinite(v):
        return x
    whole = np.floor(abs(v))
    r = whole + (1.0 if abs(v) - whole >= 0.5 else 0.0)  # exact: the fraction of a float is a float
    return np.copysign(r, v)


def in_double(f):
    """`f` evaluated in float64 and rounded once to the argument's type: correctly rounded in nearly all
    cases, as glibc's sinf/expf that kernels call (numpy's own float32 loops are less accurate)."""
    return lambda *xs: f(*[np.float64(x) for x in xs])
