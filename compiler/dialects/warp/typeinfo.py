"""Typed accessors for the warp dialect's types: rank and dtype of a !warp.array, shape and dtype of a
!warp.tile, length / rows / cols / dtype of the composites, fields of a struct.

The types are IRDL (dynamic) types, and MLIR 22 exposes no parameter accessor for those, neither in the
Python bindings nor in the C API: a parameter can only be read off the printed type. This module is the one
place that does so; everything else asks it for a typed record. Printing a type costs ~5-10 us, so a
`TypeReader` remembers each type it read (equal types hash equal: uniqued in their context). A reader must
not outlive the context of its types (it holds them): make one per walk (the verifier does).

    reader = TypeReader()
    a = reader.array(t)    # ArrayInfo(dtype=f32, rank=2), or None when t is no !warp.array
    reader.rank(t)         # an array's or a tile's rank, or an array descriptor's (its LLVM struct)
"""

from __future__ import annotations

from mlir import ir

from .explain import split_top_level
from .opdefs import Record


class ArrayInfo(Record):
    __slots__ = ("dtype", "rank")


class TileInfo(Record):
    __slots__ = ("dtype", "shape")

    @property
    def rank(self) -> int:
        return len(self.shape)


class VecInfo(Record):
    __slots__ = ("length", "dtype")


class MatInfo(Record):
    __slots__ = ("rows", "cols", "dtype")


class QuatInfo(Record):
    __slots__ = ("dtype",)


class TransformInfo(Record):
    __slots__ = ("dtype",)


class StructInfo(Record):
    __slots__ = ("name", "fields")


class DescriptorInfo(Record):
    """An array's LLVM descriptor (an array field of a lowered struct): its rank, no dtype."""
    __slots__ = ("rank",)


_DESCRIPTOR_HEAD = "!llvm.struct<(ptr, array<"


def _int(text: str) -> int:
    return int(text.split(":")[0])


def read(t: ir.Type):
    """The typed record of a warp type (or an array descriptor), None for any other type. Prints `t`."""
    # warp types come back as plain ir.Type (dynamic types have no class); builtin ones, and LLVM's once its
    # Python module is loaded, as their own classes: of those only an LLVM struct can be a descriptor
    if type(t) is not ir.Type and type(t).__name__ != "StructType":
        return None
    text = str(t)
    if text.startswith(_DESCRIPTOR_HEAD):
        return DescriptorInfo(_int(text[len(_DESCRIPTOR_HEAD):].split(" x ", 1)[0]))
    if not text.startswith("!warp."):
        return None
    kind, _, rest = text[len("!warp."):].partition("<")
    params = split_top_level(rest[:-1])
    if kind == "array":
        return ArrayInfo(ir.Type.parse(params[0]), _int(params[1]))
    if kind == "tile":
        shape = params[1][len("array<i64:"):-1] if params[1].startswith("array<i64:") else ""
        return TileInfo(ir.Type.parse(params[0]), tuple(int(d) for d in shape.split(",") if d.strip()))
    if kind == "vec":
        return VecInfo(_int(params[0]), ir.Type.parse(params[1]))
    if kind == "mat":
        return MatInfo(_int(params[0]), _int(params[1]), ir.Type.parse(params[2]))
    if kind == "quat":
        return QuatInfo(ir.Type.parse(params[0]))
    if kind == "transform":
        return TransformInfo(ir.Type.parse(params[0]))
    if kind == "struct":
        fields = params[1].strip()[1:-1]
        return StructInfo(params[0].strip('"'), tuple(ir.Type.parse(f) for f in split_top_level(fields)))
    return None


class TypeReader:
    """`read`, remembered per type (see the module's docstring)."""

    __slots__ = ("_seen",)

    def __init__(self):
        self._seen: dict = {}

    def info(self, t: ir.Type):
        try:
            return self._seen[t]
        except KeyError:
            found = self._seen[t] = read(t)
            return found

    def _of(self, t, cls):
        found = self.info(t)
        return found if isinstance(found, cls) else None

    def array(self, t) -> ArrayInfo | None:
        return self._of(t, ArrayInfo)

    def tile(self, t) -> TileInfo | None:
        return self._of(t, TileInfo)

    def struct(self, t) -> StructInfo | None:
        return self._of(t, StructInfo)

    def rank(self, t) -> int | None:
        """The rank of an array, its descriptor or a tile; None for another type."""
        found = self.info(t)
        return found.rank if isinstance(found, (ArrayInfo, DescriptorInfo, TileInfo)) else None


def component_count(info) -> int | None:
    """How many scalars a vec, mat, quat or transform holds (its construct's operand count)."""
    if isinstance(info, VecInfo):
        return info.length
    if isinstance(info, MatInfo):
        return info.rows * info.cols
    if isinstance(info, QuatInfo):
        return 4
    if isinstance(info, TransformInfo):
        return 7
    return None
