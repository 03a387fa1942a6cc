"""The vocabulary of the op table (ops.py): constraints on types and attributes, and how an op is declared."""

from __future__ import annotations

from dataclasses import dataclass


# -- constraints -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Is:
    type: str


@dataclass(frozen=True)
class Base:
    name: str  # "warp.array" (a warp type), "!builtin.integer" (a builtin type kind)


@dataclass(frozen=True)
class Array:
    """!warp.array<dtype, N> for any rank N; with `or_descriptor`, also the array's LLVM descriptor: an
    array field of a struct is one from convert-warp-composites-to-vector (which lowers the struct) until
    convert-warp-arrays-to-llvm (which lowers the ops on it), and a descriptor carries no dtype."""

    dtype: object
    or_descriptor: bool = False


MAX_NDIM = 4  # Warp's arrays have 1..4 dimensions


def descriptor_spelling(ndim: int) -> str:
    """The LLVM struct an N-d array lowers to (convert-warp-arrays-to-llvm's descriptor_type)."""
    return f"!llvm.struct<(ptr, array<{ndim} x i64>, array<{ndim} x i64>)>"


@dataclass(frozen=True)
class Tile:
    """!warp.tile<dtype, array<i64: shape...>> for any shape: a tile's elements are values of `dtype`."""

    dtype: object


@dataclass(frozen=True)
class AnyOf:
    options: tuple

    def __init__(self, *options):
        flat = []
        for o in options:
            flat += o.options if isinstance(o, AnyOf) else [o]
        object.__setattr__(self, "options", tuple(flat))


@dataclass(frozen=True)
class AnyType:
    pass


@dataclass(frozen=True)
class Var:
    name: str
    constraint: object


@dataclass(frozen=True)
class AttrBase:
    name: str  # "#builtin.string", "#builtin.integer"


ANY = AnyType()
I32 = Is("i32")
# The number of parameters of each warp type (dialect.TYPES_IRDL): inside irdl.any_of, a base constraint is
# spelled as the type with `irdl.any` parameters (MLIR 22's IRDL loader aborts on irdl.base there).
WARP_TYPE_PARAMS = {"array": 2, "vec": 2, "mat": 3, "quat": 1, "transform": 1, "struct": 2, "tile": 2}
COMPOSITE = AnyOf(*(Base(f"warp.{k}") for k in ("vec", "mat", "quat", "transform", "struct")))


# -- ops -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Operand:
    name: str
    constraint: object
    variadic: bool = False
    optional: bool = False  # 0 or 1 value; ops with such groups carry operandSegmentSizes


@dataclass(frozen=True)
class Result:
    name: str
    constraint: object
    variadic: bool = False
    optional: bool = False  # (resultSegmentSizes)


@dataclass(frozen=True)
class Attr:
    name: str
    constraint: object


@dataclass(frozen=True)
class OpDef:
    name: str  # without the "warp." prefix
    summary: str
    operands: tuple = ()
    results: tuple = ()
    attributes: tuple = ()
    regions: tuple = ()  # region names; each region's one block ends in gpu.yield (IRDL ops are no terminators)

    @property
    def full_name(self) -> str:
        return f"warp.{self.name}"


