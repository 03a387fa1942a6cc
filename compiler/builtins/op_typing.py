"""A builtin op in the IR (`warp.sin`, `warp.add`, ...) checked against the builtin table, as the frontend checked
the call it came from: its operand types resolved with `table.resolve` (the frontend's resolver: Warp's
overloads and wording), its result compared with the type resolve gives. Element-wise builtins on tiles
(`warp.add(tile, tile) -> tile`, a scalar operand broadcast) resolve on the element types; their tiles have one
shape, the result's.

The dialect's verifier (dialects/warp/verify.py) calls `check` on each builtin op. Types outside Warp's (the
vectors and LLVM types of a lowering in progress) are the lowering's business: such an op is not checked.
"""

from __future__ import annotations

from mlir import ir

from mlwarp.core import types as wt
from mlwarp.core.vector import matrix, quaternion, transformation, vector

from ..dialects.warp.typeinfo import MatInfo, QuatInfo, TileInfo, TransformInfo, TypeReader, VecInfo
from ..frontend.types import spelling
from .table import BUILTINS, resolve

_SCALARS = {spelling(t): t for t in wt.scalar_types}


class _Unknown(Exception):
    """A type that is not Warp's (the op is left unchecked)."""


def _scalar(t: ir.Type):
    if not isinstance(t, (ir.IntegerType, ir.FloatType)):
        raise _Unknown
    found = _SCALARS.get(str(t))
    if found is None:
        raise _Unknown
    return found


def warp_type(t: ir.Type, reader: TypeReader):
    """The Warp type (scalar or vector-like) or TileInfo behind an MLIR type; _Unknown for any other."""
    if type(t) is not ir.Type:
        return _scalar(t)
    info = reader.info(t)
    if isinstance(info, TileInfo):
        return info
    if isinstance(info, VecInfo):
        return vector(info.length, _scalar(info.dtype))
    if isinstance(info, MatInfo):
        return matrix((info.rows, info.cols), _scalar(info.dtype))
    if isinstance(info, QuatInfo):
        return quaternion(_scalar(info.dtype))
    if isinstance(info, TransformInfo):
        return transformation(_scalar(info.dtype))
    raise _Unknown  # (a struct, an array: no builtin takes one)


def _names(types) -> str:
    return ", ".join(wt.type_name(t) for t in types)


class BuiltinTyping:
    """`check(op, reader)` for the verifier, remembering each signature it resolved (a walk meets a few
    dozen, each many times). One per walk: it holds types of the walk's context."""

    def __init__(self):
        self._resolved: dict = {}

    def __call__(self, op: ir.Operation, reader: TypeReader) -> str | None:
        name = op.name[len("warp."):]
        if name not in BUILTINS:
            return f"'{name}' is no builtin of the builtin table"
        if len(op.results) != 1:
            return f"a builtin has one result, got {len(op.results)}"
        key = (name, tuple(v.type for v in op.operands), op.results[0].type)
        if key not in self._resolved:
            self._resolved[key] = self._check(name, key[1], key[2], reader)
        return self._resolved[key]

    @staticmethod
    def _check(name, operand_types, result_type, reader) -> str | None:
        try:
            args = [warp_type(t, reader) for t in operand_types]
            result = warp_type(result_type, reader)
        except _Unknown:
            return None
        tiles = [a for a in args if isinstance(a, TileInfo)]
        shape = None
        if tiles or isinstance(result, TileInfo):
            shapes = {t.shape for t in tiles}
            if not isinstance(result, TileInfo) or len(shapes) != 1 or result.shape not in shapes:
                return (f"an element-wise builtin on tiles takes tiles of one shape and gives one of that shape, "
                        f"got ({', '.join(map(str, operand_types))}) -> {result_type}")
            shape = result.shape
            try:
                args = [warp_type(a.dtype, reader) if isinstance(a, TileInfo) else a for a in args]
                result = warp_type(result.dtype, reader)
            except _Unknown:
                return None
        try:
            want = resolve(name, args)
        except TypeError as e:
            return str(e)
        if spelling(want) != spelling(result):  # (a vector subclass names the same type)
            got = wt.type_name(result) if shape is None else f"a tile of {wt.type_name(result)}"
            return f"{name}({_names(args)}) gives {wt.type_name(want)}, the result is {got}"
        return None
