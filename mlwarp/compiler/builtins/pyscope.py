"""Builtins called in Python scope (`wp.sin(1.0)` outside a kernel), as Warp allows for scalar math.

Arguments are typed as in a kernel: Python floats are float32, ints int32,
bools bool, Warp scalar instances (`wp.float64(2.0)`) keep their type; the
table's type rule checks the call (same errors as in a kernel), and the
builtin's numpy implementation computes in those types. A result of type
int32, float32 or bool is a Python number, any other an instance of the result
type (`wp.add(wp.int8(100), wp.int8(100))` is `int8(-56)`), as in Warp.
"""

from __future__ import annotations

import numpy as np

from mlwarp.core import types as wt


def warp_type(value):
    if isinstance(value, wt.scalar_base):
        return type(value)
    if isinstance(value, bool):
        return wt.bool_
    if isinstance(value, int):
        return wt.int32
    if isinstance(value, float):
        return wt.float32
    if isinstance(value, np.generic):
        return wt.dtype_from_numpy(value.dtype)
    raise TypeError(f"a builtin called from Python takes scalars, got {type(value).__name__}")


def _as_numpy(value, t):
    raw = value.value if isinstance(value, wt.scalar_base) else value
    return np.array(raw).astype(t._np_)[()]


class BuiltinArgumentError(RuntimeError, TypeError):
    """A Python-scope builtin call no signature accepts: a RuntimeError as in Warp, and the TypeError the
    table's type rule raised."""


def python_scope(name: str, impl):
    """Warp's Python-scope call of builtin `name`, computed by `impl` on numpy scalars of the argument types."""

    def call(*args):
        from .table import resolve  # the table imports this module

        types = [warp_type(a) for a in args]
        try:
            result = resolve(name, types)
        except TypeError as e:
            raise BuiltinArgumentError(str(e)) from None
        with np.errstate(all="ignore"):
            r = np.array(impl(*[_as_numpy(a, t) for a, t in zip(args, types)])).astype(result._np_)[()]
        if result in (wt.int32, wt.float32, wt.bool_) or not any(isinstance(a, wt.scalar_base) for a in args):
            return r.item()  # Warp's default types come back as Python numbers
        return result(r)

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
