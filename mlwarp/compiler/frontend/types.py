"""The frontend's view of types: Warp types (from mlwarp.types) and their MLIR spelling."""

from __future__ import annotations

from mlir import ir

from mlwarp.core import types as wt
from mlwarp.core.types import ArrayT

from ..dialects.warp import array_type


def from_annotation(annotation):
    """A kernel argument annotation to a frontend type; None when it is not one Warp accepts."""
    if wt.is_array(annotation):
        return ArrayT(annotation.dtype, annotation.ndim)
    return wt.canonical_type(annotation)


def name(t) -> str:
    return str(t) if isinstance(t, ArrayT) else wt.type_name(t)


def to_mlir(t) -> ir.Type:
    if isinstance(t, ArrayT):
        return array_type(to_mlir(t.dtype), t.ndim)
    return ir.Type.parse(t._mlir_)


_by_mlir = {t._mlir_: t for t in wt.scalar_types}


def from_mlir(t: ir.Type):
    return _by_mlir[str(t)]
