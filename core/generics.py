"""Generic annotations (Warp's templates) and the concrete types that instantiate them.

A kernel or @wp.func parameter is generic when its annotation leaves something open: `typing.Any`, an array
annotation whose dtype or ndim is `Any` (`wp.array(dtype=Any)`, `wp.array[Any]`, `wp.array[float, Any]`), or a
composite type whose length, shape or scalar type is `Any` (`wp.types.vector(length=Any, dtype=float)`, whose
class carries `_wp_generic_ = True`). A kernel with generic parameters is compiled once per concrete argument
types (`wp.overload`, or inferred from a launch's arguments, as Warp does).

Concrete types here are what the frontend types values with: scalar and composite classes, `ArrayT` for arrays
(array annotations and `ArrayParam`s are read through their `dtype`/`ndim`).
"""

from __future__ import annotations

import typing

import numpy as np

from . import types as wt

Any = typing.Any


def _is_array_like(t) -> bool:
    return wt.is_array(t) or isinstance(t, wt.ArrayT) or type(t).__name__ == "ArrayParam"


def is_generic(annotation) -> bool:
    """Whether `annotation` leaves a type open (see the module's docstring)."""
    if annotation is Any or isinstance(annotation, typing.TypeVar):
        return True
    if _is_array_like(annotation):
        return annotation.ndim is Any or is_generic(annotation.dtype)
    return getattr(annotation, "_wp_generic_", False) is True


def matches_template(concrete, template) -> bool:
    """Whether the concrete type `concrete` instantiates `template` (equal, when the template is concrete)."""
    if template is Any:
        return True
    if isinstance(template, typing.TypeVar):  # wp.Float, wp.Int, wp.Scalar: one of its constraints
        allowed = template.__constraints__ or ((template.__bound__,) if template.__bound__ else ())
        return not allowed or any(matches_template(concrete, a) for a in allowed)
    if _is_array_like(template):
        if not _is_array_like(concrete):
            return False
        ndim_ok = template.ndim is Any or template.ndim == concrete.ndim
        return ndim_ok and matches_template(concrete.dtype, template.dtype)
    if getattr(template, "_wp_generic_", False) is True:
        matches = getattr(template, "_wp_matches_", None)
        return bool(matches(concrete)) if matches is not None else False
    t = wt.canonical_type(template)
    return t is not None and wt.canonical_type(concrete) is t


def describe(t) -> str:
    """A type as Warp's messages spell it."""
    if t is Any:
        return "Any"
    if isinstance(t, typing.TypeVar):
        return f"~{t.__name__}"
    if _is_array_like(t):
        ndim = "Any" if t.ndim is Any else t.ndim
        return f"array(ndim={ndim}, dtype={describe(t.dtype)})"
    return wt.type_name(t)


def value_type(value):
    """The concrete type of a launch argument, as Warp infers it for a generic kernel (Python `int` is int32,
    `float` float32, `bool` bool); None when the value has none mlwarp knows."""
    if isinstance(value, bool):
        return wt.bool_
    if isinstance(value, int):
        return wt.int32
    if isinstance(value, float):
        return wt.float32
    if wt.is_array(value) and not getattr(value, "is_annotation", False):
        return wt.ArrayT(value.dtype, value.ndim)
    indexed = getattr(value, "_wp_indexed_struct_", None)  # a wp.indexedarray: its kernel struct
    if indexed is not None:
        return indexed
    t = type(value)
    if wt.is_scalar(t) or wt.is_composite(t):
        return t
    if isinstance(value, np.generic):
        return wt.canonical_type(value.dtype.type)
    return None
