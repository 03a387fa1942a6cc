"""The op table's checks beyond types (ops.py: `OpDef.checks`), and its memory effects (`OpDef.effect`).

IRDL checks each operand and result against its constraint, one at a time; what relates them (an index per
dimension of the array, a field number inside the struct, tile shapes that compose, an attribute among its
values) is declared here, per op, as small records that `verify.py` walks. Like the constraints, a check names
operands, results and attributes by their table names. This module imports no MLIR.

Each record kind is one rule; `RULE_NAMES` gives the words a verifier message starts with
(`'warp.load' op index count: ...`).
"""

from __future__ import annotations

from .opdefs import Record


class PerDimension(Record):
    """`group` holds one value per dimension of `of` (an array, its descriptor, or a tile)."""
    __slots__ = ("group", "of")


class LeadingIndices(Record):
    """`group` indexes 1..rank-1 leading dimensions of array `of`; `result` is the array of the rest."""
    __slots__ = ("group", "of", "result")


class SliceDims(Record):
    """warp.slice's {dims}: one entry per leading source dimension (-1 an index: one bound; else bits 1/2/4, the
    bounds that follow), the bounds counted out in `bounds`, the result's rank the slices' and the trailing ones."""
    __slots__ = ("attr", "of", "bounds", "result")


class ArrayOfShape(Record):
    """Array result `result` has as many dimensions as `group` has values (array_from_ptr's shape operands),
    or as attribute `attr` has entries (local_array's {shape}, each extent >= 0); rank 1 when neither is given."""
    __slots__ = ("result", "group", "attr")
    DEFAULTS = {"group": "", "attr": ""}


class Count(Record):
    """`group` has one of the `allowed` numbers of values (warp.tid: one per launch dimension, 1..4)."""
    __slots__ = ("group", "allowed")


class OneOf(Record):
    """String attribute `attr` is one of `values`."""
    __slots__ = ("attr", "values")


class InRange(Record):
    """Integer attribute `attr` is lo..hi."""
    __slots__ = ("attr", "lo", "hi")


class AxisOf(Record):
    """Integer attribute `attr` is a dimension of `of` (0..rank-1), or -1 (all of them) where `whole` allows."""
    __slots__ = ("attr", "of", "whole")
    DEFAULTS = {"whole": False}


class StructField(Record):
    """{field = k} is a field of struct `aggregate`, and `value` (an operand or the result) has its type."""
    __slots__ = ("attr", "aggregate", "value")


class ComponentAt(Record):
    """`value` has the type of the component of `aggregate` at `indices`: v[i] and q[i] a scalar, m[i, j] a
    scalar, m[i] a row (a vec of the matrix's columns)."""
    __slots__ = ("aggregate", "indices", "value")


class Components(Record):
    """warp.construct: `group` is empty (the zero value) or the composite's scalars in storage order (a struct:
    empty only)."""
    __slots__ = ("group", "result")


class Convertible(Record):
    """warp.cast: a scalar to a scalar, a composite to one of the same kind and shape, a tile to a tile of the same
    shape (astype)."""
    __slots__ = ("input", "output")


class TileRank(Record):
    """Tile `tile` has rank lo..hi."""
    __slots__ = ("tile", "lo", "hi")


class TileShapes(Record):
    """The shapes of the op's tiles compose as `relation` says (verify.SHAPE_RELATIONS: "matmul",
    "transpose", "reduce", ...); `names` are the tiles it reads, in its order."""
    __slots__ = ("relation", "names")


class TileElements(Record):
    """warp.tile_map: its body's block takes each input tile's element type; its inputs and results have one
    shape."""
    __slots__ = ()


class ElementIs(Record):
    """Tile `tile`'s element type is `dtype` (tile_dft: vec2 of a float), spelled as MLIR prints it; a `{}` in
    it stands for any float type."""
    __slots__ = ("tile", "dtype")


RULE_NAMES = {
    PerDimension: "index count", LeadingIndices: "index count", SliceDims: "slice dims", ArrayOfShape: "array rank",
    Count: "value count", OneOf: "attribute value", InRange: "attribute value", AxisOf: "axis",
    StructField: "struct field", ComponentAt: "component type", Components: "components", Convertible: "cast",
    TileRank: "tile rank", TileShapes: "tile shapes", TileElements: "tile map", ElementIs: "element type",
}

# -- memory effects (the warp-cse pass reads them; MLIR 22's IRDL ops carry no traits: see README.md) ------------
PURE = "pure"    # no effect: an unused one is dead, two alike with the same operands are one (CSE)
READ = "read"    # reads memory: dead when unused, never merged (a write may come between)
ALLOC = "alloc"  # a fresh thread-local array: dead when unused, never merged (each is its own memory)
ANY = "any"      # writes memory, synchronises or checks: kept

# the ops that write array memory: an adjoint's replay of the forward computation skips them (as Warp does), and
# the analysis of which arrays a launch overwrites (compiler/array_access.py) follows them
SIDE_EFFECTS = frozenset({"warp.store", "warp.atomic", "warp.atomic_cas", "warp.tile_store", "warp.tile_atomic_add",
                          "warp.tile_store_indexed"})
