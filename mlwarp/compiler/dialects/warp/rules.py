"""The op table's checks beyond types (ops.py: `OpDef.checks`), and its memory effects (`OpDef.effect`).

IRDL checks each operand and result against its constraint, one at a time; what relates them (an index per
dimension of the array, a field number inside the struct, tile shapes that compose, an attribute among its
values) is declared here, per op, as small records that `verify.py` walks. Like the constraints, a check names
operands, results and attributes by their table names. This module imports no MLIR.

Each record kind is one rule; `RULE_NAMES` gives the words a verifier message starts with
(`'warp.load' op index count: ...`).
"""

from __future__ import annotations

from typing import NamedTuple


class PerDimension(NamedTuple):
    """`group` holds one value per dimension of `of` (an array, its descriptor, or a tile)."""
    group: str
    of: str


class LeadingIndices(NamedTuple):
    """`group` indexes 1..rank-1 leading dimensions of array `of`; `result` is the array of the rest."""
    group: str
    of: str
    result: str


class SliceDims(NamedTuple):
    """warp.slice's {dims}: one entry per leading source dimension (-1 an index: one bound; else bits 1/2/4, the
    bounds that follow), the bounds counted out in `bounds`, the result's rank the slices' and the trailing ones."""
    attr: str
    of: str
    bounds: str
    result: str


class ArrayOfShape(NamedTuple):
    """Array result `result` has as many dimensions as `group` has values (array_from_ptr's shape operands),
    or as attribute `attr` has entries (local_array's {shape}, each extent >= 0); rank 1 when neither is given."""
    result: str
    group: str = ""
    attr: str = ""


class Count(NamedTuple):
    """`group` has one of the `allowed` numbers of values (warp.tid: one per launch dimension, 1..4)."""
    group: str
    allowed: tuple


class OneOf(NamedTuple):
    """String attribute `attr` is one of `values`."""
    attr: str
    values: tuple


class InRange(NamedTuple):
    """Integer attribute `attr` is lo..hi."""
    attr: str
    lo: int
    hi: int


class AxisOf(NamedTuple):
    """Integer attribute `attr` is a dimension of `of` (0..rank-1), or -1 (all of them) where `whole` allows."""
    attr: str
    of: str
    whole: bool = False


class StructField(NamedTuple):
    """{field = k} is a field of struct `aggregate`, and `value` (an operand or the result) has its type."""
    attr: str
    aggregate: str
    value: str


class ComponentAt(NamedTuple):
    """`value` has the type of the component of `aggregate` at `indices`: v[i] and q[i] a scalar, m[i, j] a
    scalar, m[i] a row (a vec of the matrix's columns)."""
    aggregate: str
    indices: str
    value: str


class Components(NamedTuple):
    """warp.construct: `group` is empty (the zero value) or the composite's scalars in storage order (a struct:
    empty only)."""
    group: str
    result: str


class Convertible(NamedTuple):
    """warp.cast: a scalar to a scalar, a composite to one of the same kind and shape, a tile to a tile of the same
    shape (astype)."""
    input: str
    output: str


class TileRank(NamedTuple):
    """Tile `tile` has rank lo..hi."""
    tile: str
    lo: int
    hi: int


class TileShapes(NamedTuple):
    """The shapes of the op's tiles compose as `relation` says (verify.SHAPE_RELATIONS: "matmul",
    "transpose", "reduce", ...); `names` are the tiles it reads, in its order."""
    relation: str
    names: tuple


class TileElements(NamedTuple):
    """warp.tile_map: its body's block takes each input tile's element type; its inputs and results have one
    shape."""


class ElementIs(NamedTuple):
    """Tile `tile`'s element type is `dtype` (tile_dft: vec2 of a float), spelled as MLIR prints it; a `{}` in
    it stands for any float type."""
    tile: str
    dtype: str


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
