"""The vocabulary of the op table (ops.py): constraints on types and attributes, and how an op is declared.

Records are NamedTuples: immutable, and made at import without the ~0.35 ms of code generation a frozen
dataclass costs in Python 3.11 (a cold compile imports this module). Constraints are told apart by
isinstance, never compared with ==.
"""

from __future__ import annotations

from typing import NamedTuple


class Record:
    """A small immutable record whose class costs ~10 us to make (a NamedTuple class: ~100 us of code generation):
    for the record kinds of which there are many (rules.py's checks, typeinfo.py's types). A subclass lists its
    fields in `__slots__` and the defaults of trailing ones in `DEFAULTS`."""

    __slots__ = ()
    DEFAULTS: dict = {}

    def __init__(self, *args, **kwargs):
        names = self.__slots__
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes {len(names)} fields, got {len(args)}")
        values = {**self.DEFAULTS, **dict(zip(names, args)), **kwargs}
        for name in names:
            object.__setattr__(self, name, values[name])

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other):
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __hash__(self):
        return hash((type(self), *(getattr(self, n) for n in self.__slots__)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(repr(getattr(self, n)) for n in self.__slots__)})"


# -- constraints -----------------------------------------------------------------------------------
class Is(NamedTuple):
    type: str


class Base(NamedTuple):
    name: str  # "warp.array" (a warp type), "!builtin.integer" (a builtin type kind)


class Array(NamedTuple):
    """!warp.array<dtype, N> for any rank N; with `or_descriptor`, also the array's LLVM descriptor: an
    array field of a struct is one from convert-warp-composites-to-vector (which lowers the struct) until
    convert-warp-arrays-to-llvm (which lowers the ops on it), and a descriptor carries no dtype."""

    dtype: object
    or_descriptor: bool = False


MAX_NDIM = 4  # Warp's arrays have 1..4 dimensions


def descriptor_spelling(ndim: int) -> str:
    """The LLVM struct an N-d array lowers to (convert-warp-arrays-to-llvm's descriptor_type)."""
    return f"!llvm.struct<(ptr, array<{ndim} x i64>, array<{ndim} x i64>)>"


class Tile(NamedTuple):
    """!warp.tile<dtype, array<i64: shape...>> for any shape: a tile's elements are values of `dtype`."""

    dtype: object


class AnyOf:
    """Any one of the options (an AnyOf among them is flattened into its options)."""

    __slots__ = ("options",)

    def __init__(self, *options):
        flat = []
        for o in options:
            flat += o.options if isinstance(o, AnyOf) else [o]
        self.options = tuple(flat)

    def __repr__(self) -> str:
        return f"AnyOf{self.options!r}"


class AnyType(NamedTuple):
    pass


class Var(NamedTuple):
    name: str
    constraint: object


class AttrBase(NamedTuple):
    name: str  # "#builtin.string", "#builtin.integer"


ANY = AnyType()
I32 = Is("i32")
# The number of parameters of each warp type (dialect.TYPES_IRDL): inside irdl.any_of, a base constraint is
# spelled as the type with `irdl.any` parameters (MLIR 22's IRDL loader aborts on irdl.base there).
WARP_TYPE_PARAMS = {"array": 2, "vec": 2, "mat": 3, "quat": 1, "transform": 1, "struct": 2, "tile": 2}
COMPOSITE = AnyOf(*(Base(f"warp.{k}") for k in ("vec", "mat", "quat", "transform", "struct")))


# -- ops -------------------------------------------------------------------------------------------
class Operand(NamedTuple):
    name: str
    constraint: object
    variadic: bool = False
    optional: bool = False  # 0 or 1 value; ops with such groups carry operandSegmentSizes


class Result(NamedTuple):
    name: str
    constraint: object
    variadic: bool = False
    optional: bool = False  # (resultSegmentSizes)


class Attr(NamedTuple):
    name: str
    constraint: object


class OpDef(NamedTuple):
    name: str  # without the "warp." prefix
    summary: str
    operands: tuple = ()
    results: tuple = ()
    attributes: tuple = ()
    regions: tuple = ()  # region names; each region's one block ends in gpu.yield (IRDL ops are no terminators)
    checks: tuple = ()  # what relates operands, results and attributes beyond their types (rules.py)
    effect: str = "any"  # rules.PURE, READ, ALLOC or ANY: what warp-cse may erase or merge

    @property
    def full_name(self) -> str:
        return f"warp.{self.name}"


