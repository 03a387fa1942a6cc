"""The parameters of vector-like types (core/vector.py): a vector's length, a matrix's shape and a dtype, checked
as Warp checks them, and the open ones of generic annotations (`typing.Any`, a TypeVar such as wp.Float) with
the test of whether a concrete type instantiates such a template."""

from __future__ import annotations

import typing

import numpy as np

from . import types as wt


def is_open(x) -> bool:
    """A type parameter left open in a generic annotation: `typing.Any` or a TypeVar (wp.Float, wp.Int, ...)."""
    return x is typing.Any or isinstance(x, typing.TypeVar)


def _scalar_matches(concrete, template) -> bool:
    if template is typing.Any:
        return True
    if isinstance(template, typing.TypeVar):
        return concrete in {wt.canonical_type(c) for c in template.__constraints__}
    return concrete is template


def matches_template(template, concrete) -> bool:
    """Whether the concrete composite type `concrete` instantiates the generic composite type `template`."""
    if not wt.is_composite(concrete) or getattr(concrete, "_wp_generic_", False) or \
            wt.composite_kind(concrete) != wt.composite_kind(template):
        return False
    if len(concrete._shape_) != len(template._shape_) or not all(
            is_open(t) or t == c for t, c in zip(template._shape_, concrete._shape_)):
        return False
    return _scalar_matches(concrete._wp_scalar_type_, template._wp_scalar_type_)


def checked_dtype(dtype):
    return dtype if is_open(dtype) else wt.canonical_type(dtype)


def checked_length(n, what):
    if is_open(n):
        return typing.Any if n is typing.Any else n
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"{what} must be a non-negative int or typing.Any, got {n!r}")
    return int(n)


def matrix_shape(shape):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape, shape)
    shape = tuple(shape)
    if len(shape) != 2:
        label = "dimension" if len(shape) == 1 else "dimensions"
        raise ValueError(f"Matrix shape must have exactly two dimensions, got {len(shape)} {label} in shape "
                         f"{shape!r}")
    return tuple(checked_length(s, "matrix shape entry") for s in shape)
