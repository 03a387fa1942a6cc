"""The frontend's view of types: Warp types (from mlwarp.core.types) and their spelling in the warp dialect."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from mlwarp.core import types as wt
from mlwarp.core.types import ArrayT

from ..dialects.warp import array_type


def from_annotation(annotation):
    """A kernel argument annotation to a frontend type; None when it is not one Warp accepts."""
    indexed = getattr(annotation, "_wp_indexed_struct_", None)  # wp.indexedarray[...]: its struct (indexed.py)
    if indexed is not None:
        return indexed
    if getattr(annotation, "_wp_tile_annotation_", False):  # wp.tile[float, M, N] (tiles.py)
        dtype = wt.canonical_type(annotation.dtype)
        return TileT(dtype, annotation.shape) if dtype is not None else None
    if getattr(annotation, "_wp_fixedarray_", False):  # wp.fixedarray(shape, dtype): an array (fixed.py)
        return ArrayT(annotation.dtype, annotation.ndim)
    if wt.is_array(annotation):  # an array of textures holds their kernel structs (texture.py)
        return ArrayT(wt.array_element_type(annotation.dtype), annotation.ndim)
    return wt.canonical_type(annotation)


@dataclass(frozen=True)
class TupleT:
    """The type of a tuple value in a kernel (tuples.py): a compile-time group of values, never one MLIR value."""

    types: tuple

    def __str__(self):
        return f"tuple[{', '.join(name(t) for t in self.types)}]"


@dataclass(frozen=True)
class FunctionT(TupleT):
    """The type of a function value (`g` of a `g: wp.Function` parameter, `f = wp.sin`): its target, a @wp.func
    or a builtin, known at compile time. A group of no values (a TupleT of none), so it passes through calls,
    branches and loops as an empty tuple does; a function called with one is specialized per target."""

    target: object = None

    def __str__(self):
        return "Function"


@dataclass(frozen=True)
class TileT:
    """The type of a tile value in a kernel (tiles.py): `shape` elements of `dtype`, a Warp scalar or composite."""

    dtype: object
    shape: tuple

    def __str__(self):
        return f"tile(shape={self.shape}, dtype={name(self.dtype)})"


def name(t) -> str:
    return str(t) if isinstance(t, (ArrayT, TupleT, TileT)) else wt.type_name(t)


_SCALAR_SPELLING = {"int": "i", "uint": "ui", "float": "f"}


def spelling(t) -> str:
    """The warp dialect's spelling of a Warp type: `f32`, `!warp.vec<3, f32>`, `!warp.struct<"S", [...]>`."""
    if isinstance(t, ArrayT) or wt.is_array(t):
        return f"!warp.array<{spelling(t.dtype)}, {t.ndim}>"
    if isinstance(t, TileT):
        return f"!warp.tile<{spelling(t.dtype)}, array<i64: {', '.join(str(d) for d in t.shape)}>>"
    kind = wt.composite_kind(t)
    if kind is None:
        if t is wt.bool_:
            return "i1"
        return "bf16" if t is wt.bfloat16 else f"{_SCALAR_SPELLING[t._kind_]}{t._bits_}"
    if kind == "struct":
        return f'!warp.struct<"{t.__name__}", [{", ".join(spelling(f) for _, f in t._wp_fields_)}]>'
    s = spelling(t._wp_scalar_type_)
    if kind == "vec":
        return f"!warp.vec<{t._shape_[0]}, {s}>"
    if kind == "mat":
        return f"!warp.mat<{t._shape_[0]}, {t._shape_[1]}, {s}>"
    return f"!warp.{kind}<{s}>"  # quat, transform


def to_mlir(t) -> ir.Type:
    if isinstance(t, ArrayT):
        return array_type(to_mlir(t.dtype), t.ndim)
    return ir.Type.parse(spelling(t))


_by_mlir = {spelling(t): t for t in wt.scalar_types}


def from_mlir(t: ir.Type):
    return _by_mlir[str(t)]
