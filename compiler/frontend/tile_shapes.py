"""The tile builtins that reshape or retype a tile: wp.tile_reshape, tile_squeeze, tile_assign, tile_astype,
tile_transpose, tile_broadcast. Their records are in the tile table, compiler/tiles/table.py."""

from __future__ import annotations

import ast
import math


from mlwarp.core import types as wt
from mlwarp.core.errors import CompileTypeError, CompileValueError

from ..dialects.warp import builders as wb
from . import types as ft
from .tiles import (broadcastable, dtype_arg, tile_shape, constant_value, dense_strides, int32_arg, is_tile, offsets_arg, tile_arg, updatable, write_back)
from .values import Var


def assign_tile(em, node, name=None, args=None) -> None:
    """wp.tile_assign(dst, src, offset=None): `src` written into `dst` at `offset` (default the origin;
    warp.tile_insert_view), its elements converted to dst's type; wp.tile_assign(dst, i, ..., value): one element
    (tile_insert). `dst`'s variable is rebound (Warp writes it in place)."""
    keywords = {kw.arg: kw.value for kw in node.keywords}
    for kw in keywords:
        if kw not in ("dst", "src", "offset"):
            raise em.error(node, f"wp.tile_assign() got an unexpected keyword argument '{kw}'", CompileTypeError)
    positional = list(node.args)
    target = positional.pop(0) if positional else keywords.get("dst")
    if target is None:
        raise em.error(node, "wp.tile_assign() missing required argument 'dst'", CompileTypeError)
    dst = tile_arg(em, target, "tile_assign", "dst")
    if not updatable(em, target):
        raise em.error(node, "wp.tile_assign(): 'dst' is written in place: it must be a variable", CompileTypeError)
    shape = dst.type.shape
    src_node = keywords.get("src", positional[0] if positional else None)
    src = em.expr(src_node) if src_node is not None else None
    if src is not None and is_tile(src) and len(positional) <= 2:
        offset_node = keywords.get("offset", positional[1] if len(positional) > 1 else None)
        if len(src.type.shape) != len(shape):
            raise em.error(node, f"tile_assign() destination and source tiles must have the same rank, got "
                                 f"{len(shape)} and {len(src.type.shape)}", CompileValueError)
        if offset_node is None and any(a > b for a, b in zip(src.type.shape, shape)):
            raise em.error(node, f"tile_assign() source tile of shape {src.type.shape} does not fit within "
                                 f"destination tile of shape {shape}", CompileValueError)
        if src.type.dtype is not dst.type.dtype:
            if wt.is_composite(src.type.dtype) or wt.is_composite(dst.type.dtype):
                raise em.error(node, f"tile_assign() of a tile of {ft.name(src.type.dtype)} into a tile of "
                                     f"{ft.name(dst.type.dtype)}", CompileTypeError)
            converted = ft.TileT(dst.type.dtype, src.type.shape)
            src = Var(wb.create("cast", src.value, results=[ft.to_mlir(converted)]).result, converted)
        offsets = offsets_arg(em, offset_node, len(shape), "tile_assign")
        for d, item in enumerate(offset_node.elts if isinstance(offset_node, ast.Tuple) else
                                 ([offset_node] if offset_node is not None else [])):
            value = constant_value(em, item)
            if type(value) is int and not 0 <= value <= shape[d] - src.type.shape[d]:
                raise em.error(node, f"tile_assign(): a source of shape {src.type.shape} at offset {value} of "
                                     f"dimension {d} lies outside the destination's extent {shape[d]}",
                               CompileValueError)
        updated = wb.tile_insert_view(dst.value, src.value, offsets)
    else:  # tile_assign(dst, i, ..., value)
        if "src" in keywords or "offset" in keywords or len(positional) != len(shape) + 1:
            raise em.error(node, f"wp.tile_assign() takes a source tile (and an offset), or one index per dimension "
                                 f"of the tile {shape} and a value", CompileTypeError)
        value = em.expr(positional[-1])
        if value.type is not dst.type.dtype:
            value = em.convert(value, dst.type.dtype, node)
        indices = [int32_arg(em, i) for i in positional[:-1]]
        updated = wb.create("tile_insert", dst.value, value.value, indices, results=[dst.value.type]).result
    write_back(em, target, Var(updated, dst.type))
    return None

def reshape(em, node, name, args) -> Var:
    t = tile_arg(em, args["t"], name, "t")
    shape = t.type.shape
    strides = getattr(t, "strides", None)  # a view's (tile_views.py): Warp reshapes a view in place, dense ones only
    if strides is not None and any(n != 1 and s != d for n, s, d in zip(shape, strides, dense_strides(shape))):
        raise em.error(node, f"tile_reshape() requires a contiguous tile; a tile view with shape {shape} and strides "
                             f"{strides} cannot be reshaped in place. Copy the view into a new tile first, e.g. with "
                             f"wp.tile_assign().", CompileValueError)
    if name == "tile_squeeze":
        axis = constant_value(em, args["axis"]) if args["axis"] is not None else None
        axes = tuple(range(len(shape))) if axis is None else (axis,) if type(axis) is int else axis
        if not isinstance(axes, tuple) or any(type(a) is not int for a in axes):
            raise em.error(node, "wp.tile_squeeze(): axis must be a constant int or tuple of ints", CompileTypeError)
        for a in axes:
            if not -len(shape) <= a < len(shape):
                raise em.error(node, f"tile_squeeze() axis {a} is out of bounds for tile with {len(shape)} dimensions",
                               CompileValueError)
        axes = {a % len(shape) for a in axes}
        if axis is not None and any(shape[a] != 1 for a in axes):
            raise em.error(node, f"wp.tile_squeeze(): axis {axis} of a tile of shape {shape} is not of length 1",
                           CompileTypeError)
        new = tuple(n for k, n in enumerate(shape) if not (k in axes and n == 1)) or (1,)
    else:
        value = constant_value(em, args["shape"])
        value = (value,) if type(value) is int else value
        if not isinstance(value, tuple) or any(type(d) is not int for d in value):
            raise em.error(node, "wp.tile_reshape(): the shape must be a constant int or tuple of ints",
                           CompileTypeError)
        total = math.prod(shape)
        if value.count(-1) == 1:
            known = math.prod(d for d in value if d != -1)
            value = tuple(total // known if d == -1 else d for d in value)
        if math.prod(value) != total or any(d <= 0 for d in value):
            raise em.error(node, f"wp.tile_reshape(): cannot reshape a tile of shape {shape} into {value}",
                           CompileTypeError)
        new = value
    result = ft.TileT(t.type.dtype, new)
    return Var(wb.create("tile_reshape", t.value, results=[ft.to_mlir(result)]).result, result)


def astype(em, node, name, args) -> Var:
    t = tile_arg(em, args["t"], name, "t")
    dtype = dtype_arg(em, args["dtype"], name, None)
    if wt.is_composite(dtype) or wt.is_composite(t.type.dtype):
        raise em.error(node, "wp.tile_astype() converts tiles of scalars", CompileTypeError)
    result = ft.TileT(dtype, t.type.shape)
    return Var(wb.create("cast", t.value, results=[ft.to_mlir(result)]).result, result)


def transpose(em, node, name, args) -> Var:
    a = tile_arg(em, args["a"], name, "a")
    if len(a.type.shape) != 2:
        raise em.error(node, f"wp.tile_transpose() takes a 2-d tile, got {a.type}", CompileTypeError)
    t = ft.TileT(a.type.dtype, tuple(reversed(a.type.shape)))
    return Var(wb.create("tile_transpose", a.value, results=[ft.to_mlir(t)]).result, t)


def broadcast(em, node, name, args) -> Var:
    a = tile_arg(em, args["a"], name, "a")
    wanted = constant_value(em, args["shape"])
    if isinstance(wanted, tuple) and not 1 <= len(wanted) <= 4:
        raise em.error(node, f"tile_broadcast() output must have between one and four dimensions, got "
                             f"{len(wanted)}", CompileValueError)
    shape = tile_shape(em, args["shape"], name)
    if not broadcastable(a.type.shape, shape):
        raise em.error(node, f"wp.tile_broadcast(): a tile of shape {a.type.shape} does not broadcast to "
                             f"{shape}", CompileTypeError)
    t = ft.TileT(a.type.dtype, shape)
    return Var(wb.create("tile_broadcast", a.value, results=[ft.to_mlir(t)]).result, t)
