"""The tile builtins that make tiles: wp.tile_zeros / ones / empty / full, tile_arange, tile_randi / tile_randf,
tile_from_thread, wp.tile(x) / wp.untile(t) and wp.block_dim(). Their records are in the tile table,
compiler/tiles/table.py."""

from __future__ import annotations

import ast
import math

from mlir import ir

from mlwarp.core import types as wt
from mlwarp.core import vector as wv
from mlwarp.core.errors import CompileError, CompileTypeError, CompileValueError
from mlwarp.core.types import ArrayT

from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from . import types as ft
from .resolve import MISSING, resolve_path
from .tiles import (HOLDS, MAX_TILE_ELEMENTS, constant_value, dtype_arg, is_tile_element, lane_index, lanes,
                    scalar_arg, sync, tile_arg, tile_shape, zeros)
from .values import Var

FILLS = {"tile_zeros": 0, "tile_ones": 1, "tile_empty": 0}  # the value each fills with (tile_full: its argument)


def full(em, node, name, args) -> Var:
    shape = tile_shape(em, args["shape"], name)
    dtype = dtype_arg(em, args["dtype"], name, wt.float32)
    value = FILLS[name] if name in FILLS else args["value"]
    if name == "tile_full" and args["dtype"] is None and isinstance(value, ast.AST):
        v = em.expr(value)
        if v.literal is None and is_tile_element(v.type):
            dtype = v.type  # Warp: the value's type when no dtype is given
    t = ft.TileT(dtype, shape)
    if wt.is_struct(dtype) and name == "tile_ones":
        raise em.error(node, "tile_ones() does not support Warp struct dtypes; use tile_full() with an explicit value",
                       CompileTypeError)
    if wt.is_struct(dtype) and name in FILLS:  # tile_zeros / tile_empty: every field zero
        fill = wc.construct(ft.to_mlir(dtype), [])
    else:
        fill = scalar_arg(em, value, dtype, name)
    return Var(wb.create("tile_full", fill, results=[ft.to_mlir(t)]).result, t)

def arange(em, node, name=None, args=None) -> Var:
    """wp.tile_arange(stop | start, stop[, step], dtype=float): Warp's rules, its messages. The bounds are
    constants, represented in the output type before the length is counted (a float32 range is counted
    from the values float32 holds), ceil((stop - start) / step) elements (exact for integers)."""
    import numpy as np

    dtype_node = next((kw.value for kw in node.keywords if kw.arg == "dtype"), None)
    extra = [kw.arg for kw in node.keywords if kw.arg not in ("dtype", "storage")]
    if extra:
        raise em.error(node, f"wp.tile_arange() got an unexpected keyword argument '{extra[0]}'", CompileTypeError)
    if not node.args:
        raise em.error(node, "tile_arange() requires at least one positional argument specifying the range",
                       CompileTypeError)
    if len(node.args) > 3:
        raise em.error(node, f"tile_arange() accepts at most 3 positional arguments, got {len(node.args)}",
                       CompileTypeError)
    names = ("stop",) if len(node.args) == 1 else ("start", "stop", "step")[:len(node.args)]
    given = {}
    for name, a in zip(names, node.args):
        value = constant_value(em, a)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise em.error(node, f"tile_arange() arguments must be compile time constants, but {name} is not",
                           CompileError)
        given[name] = value
    start, stop, step = given.get("start", 0), given["stop"], given.get("step", 1)
    dtype = any_dtype_arg(em, dtype_node, wt.float32)
    if not wt.is_scalar(dtype) or dtype is wt.bool_:
        raise em.error(node, f"tile_arange() requires a numeric scalar dtype, but got {ft.name(dtype)}",
                       CompileTypeError)

    def represented(name, value):
        out_of_range = f"tile_arange() {name}={value} is out of range for the output type {ft.name(dtype)}"
        if wt.is_int(dtype):
            if isinstance(value, float):
                if not value.is_integer():
                    raise em.error(node, f"tile_arange() {name}={value} has a fractional part, which the integer "
                                         f"output type {ft.name(dtype)} cannot represent", CompileValueError)
                value = int(value)
            bits = dtype._bits_
            low, high = (0, 2 ** bits - 1) if dtype._kind_ == "uint" else (-2 ** (bits - 1), 2 ** (bits - 1) - 1)
            if not low <= value <= high:
                raise em.error(node, out_of_range, CompileValueError)
            return value
        np_type = {wt.float16: np.float16, wt.float32: np.float32, wt.float64: np.float64}.get(dtype, np.float32)
        if isinstance(value, int):
            try:
                wide = np.int64(value) if value < 0 else np.uint64(value)
            except OverflowError:
                raise em.error(node, f"tile_arange() {name}={value} is too wide to use as an integer bound; write "
                                     f"it as a floating-point literal to build a {ft.name(dtype)} range",
                               CompileValueError) from None
            out = float(np_type(np.float64(wide) if np_type is np.float64 else np.float32(wide)))
        else:
            out = float(np_type(value))
        if math.isfinite(float(value)) and not math.isfinite(out):
            raise em.error(node, out_of_range, CompileValueError)
        return out

    start, stop, step = (represented(n, v) for n, v in (("start", start), ("stop", stop), ("step", step)))
    if step == 0:
        raise em.error(node, "tile_arange() step cannot be zero", CompileValueError)
    if (step > 0 and start >= stop) or (step < 0 and start <= stop):
        raise em.error(node, f"tile_arange() requires a non-empty range, but start={start}, stop={stop}, "
                             f"step={step} produces no elements; zero-length tile dimensions are not supported.",
                       CompileValueError)
    if wt.is_int(dtype):
        n = -((stop - start) // -step)
    else:
        np_type = {wt.float16: np.float16, wt.float64: np.float64}.get(dtype, np.float32)
        quotient = float(np_type((stop - start) / step))
        if not math.isfinite(quotient):
            raise em.error(node, f"tile_arange() start={start}, stop={stop}, step={step} spans more elements than "
                                 f"can be counted; the step is too small for the range.", CompileValueError)
        n = math.ceil(quotient)
    n = max(1, n)
    if n > MAX_TILE_ELEMENTS:
        raise em.error(node, f"wp.tile_arange(): a tile of {n} elements is more than {MAX_TILE_ELEMENTS}",
                       CompileError)
    t = ft.TileT(dtype, (n,))
    op = wb.create("tile_arange", scalar_arg(em, start, dtype, "tile_arange"), scalar_arg(em, step, dtype, "tile_arange"),
                   results=[ft.to_mlir(t)])
    return Var(op.result, t)

def any_dtype_arg(em, node, default):
    """A dtype argument (any Warp type), or `default`."""
    if node is None:
        return default
    obj = em.local_type(node)
    if obj is MISSING:
        obj = resolve_path(em.src.func, node)
    t = ft.from_annotation(obj) if obj is not MISSING and not wt.is_array(obj) else None
    if t is None or isinstance(t, ArrayT):
        raise em.error(node, f"wp.tile_arange(): not a dtype: {getattr(obj, '__name__', obj)!r}", CompileTypeError)
    return t

def random(em, node, name, args) -> Var:
    """wp.tile_randi / wp.tile_randf(shape, rng, min=None, max=None): warp.tile_random from the uint32 state
    (which the call does not advance, as Warp's, which takes it by value)."""
    shape = tile_shape(em, args["shape"], name)
    rng = em.expr(args["rng"])
    if rng.type is not wt.uint32:
        raise em.error(node, f"wp.{name}(): 'rng' must be a uint32 generator state (wp.rand_init), got "
                             f"{ft.name(rng.type)}", CompileTypeError)
    dtype = wt.int32 if name == "tile_randi" else wt.float32
    if len(node.args) == 3 and args["max"] is None:  # Warp's overload (shape, rng, storage)
        if any(kw.arg == "storage" for kw in node.keywords):
            raise em.error(node, f"wp.{name}() got multiple values for argument 'storage'", CompileTypeError)
        args = {**args, "min": None, "storage": args["min"]}
    if constant_value(em, args["storage"]) not in ("register", "shared"):
        raise em.error(node, f"wp.{name}(): storage must be 'register' or 'shared', got "
                             f"{constant_value(em, args['storage'])!r}", CompileValueError)
    given = [args["min"] is not None, args["max"] is not None]
    if any(given) and not all(given):
        raise em.error(node, f"wp.{name}(): pass both 'min' and 'max' or neither", CompileTypeError)
    bounds = [em.cast(em.expr(args[k]), dtype, node).value for k in ("min", "max")] if all(given) else []
    result = ft.TileT(dtype, shape)
    return Var(wb.create("tile_random", rng.value, bounds, results=[ft.to_mlir(result)],
                         attributes={"kind": ir.StringAttr.get(name[5:])}).result, result)

def tile_untile(em, node, name, args=None) -> Var:
    """wp.tile(x, preserve_type=False) / wp.untile(t) with one lane per block: a scalar (or, with preserve_type, a
    composite) as a tile of shape (1,); a vector's (quaternion's, transform's) components as (n, 1), a matrix's as
    (r, c, 1)."""
    width = lanes(em)  # with several lanes, element k along the last dimension is lane k's
    if name == "untile":
        if node.keywords or len(node.args) != 1:
            raise em.error(node, "wp.untile() takes one argument", CompileTypeError)
        t = tile_arg(em, node.args[0], name, "a")
        i32 = [em.const(k, wt.int32).value for k in range(max(t.type.shape) + 1)]
        if width > 1:
            i32[0] = lane_index(em)
        if t.type.shape == (width,):
            return Var(wb.create("tile_extract", t.value, [i32[0]], results=[ft.to_mlir(t.type.dtype)]).result,
                       t.type.dtype)
        if t.type.shape[-1] != width or len(t.type.shape) not in (2, 3) or not wt.is_scalar(t.type.dtype):
            raise em.error(node, f"wp.untile() takes a tile made by wp.tile (one value per lane), got {t.type}",
                           CompileTypeError)
        dims = t.type.shape[:-1]
        target = wv.vector(dims[0], t.type.dtype) if len(dims) == 1 else wv.matrix(dims, t.type.dtype)
        positions = [(k,) for k in range(dims[0])] if len(dims) == 1 else \
            [(r, c) for r in range(dims[0]) for c in range(dims[1])]
        parts = [wb.create("tile_extract", t.value, [i32[k] for k in p] + [i32[0]],
                           results=[ft.to_mlir(t.type.dtype)]).result for p in positions]
        return Var(wc.construct(ft.to_mlir(target), parts), target)
    extra = [kw.arg for kw in node.keywords if kw.arg != "preserve_type"]
    if extra or len(node.args) not in (1, 2):
        raise em.error(node, "wp.tile() takes a value and preserve_type=", CompileTypeError)
    preserve = constant_value(em, next((kw.value for kw in node.keywords if kw.arg == "preserve_type"),
                                  node.args[1] if len(node.args) > 1 else False))
    v = em.expr(node.args[0])
    if not is_tile_element(v.type):
        raise em.error(node, f"wp.tile(): {HOLDS}, got {ft.name(v.type)}", CompileTypeError)
    whole = wt.is_scalar(v.type) or wt.is_struct(v.type) or preserve  # one element per lane (no components)
    if whole and width == 1:
        t = ft.TileT(v.type, (1,))
        return Var(wb.create("tile_full", v.value, results=[ft.to_mlir(t)]).result, t)
    scalar = v.type if whole else v.type._wp_scalar_type_
    dims = () if whole else tuple(v.type._shape_)
    t = ft.TileT(scalar, dims + (width,))
    # with several lanes each lane writes its own element (the block's tile made first), then a barrier
    out = zeros(t).value
    positions = [()] if whole else [(k,) for k in range(dims[0])] if len(dims) == 1 else \
        [(r, c) for r in range(dims[0]) for c in range(dims[1])]
    i32 = [em.const(k, wt.int32).value for k in range(max(dims, default=0) + 1)]
    at = lane_index(em) if width > 1 else i32[0]
    for p in positions:
        part = v.value if whole else wc.extract(v.value, [i32[k] for k in p], ft.to_mlir(scalar))
        out = wb.create("tile_insert", out, part, [i32[k] for k in p] + [at], results=[ft.to_mlir(t)]).result
    sync(em)
    return Var(out, t)

def from_thread(em, node, name, args) -> Var:
    """wp.tile_from_thread(shape, value, thread_idx, storage): a tile filled with lane `thread_idx`'s value. With
    several lanes, each lane writes its value into a block-shared tile of one element per lane, a barrier, then
    every lane reads element `thread_idx` (Warp's broadcast through shared memory); with one lane, the value."""
    shape = tile_shape(em, args["shape"], "tile_from_thread")
    if constant_value(em, args["storage"]) not in ("register", "shared"):
        raise em.error(node, f"wp.tile_from_thread(): storage must be 'register' or 'shared', got "
                             f"{constant_value(em, args['storage'])!r}", CompileValueError)
    v = em.expr(args["value"])
    if not is_tile_element(v.type):
        raise em.error(node, f"wp.tile_from_thread(): {HOLDS}, got {ft.name(v.type)}", CompileTypeError)
    if v.literal is not None:
        v = em.const(v.literal, v.type)
    lane = em.expr(args["thread_idx"])
    if not wt.is_int(lane.type):
        raise em.error(node, f"wp.tile_from_thread(): thread_idx must be an int, got {ft.name(lane.type)}",
                       CompileTypeError)
    value = v.value
    width = lanes(em)
    if width > 1:
        lane = lane if lane.type is wt.int32 else em.cast(lane, wt.int32, node)
        lanes_t = ft.TileT(v.type, (width,))
        shared = wb.create("tile_insert", zeros(lanes_t).value, value, [lane_index(em)],
                           results=[ft.to_mlir(lanes_t)]).result
        sync(em)
        value = wb.create("tile_extract", shared, [lane.value], results=[ft.to_mlir(v.type)]).result
    t = ft.TileT(v.type, shape)
    return Var(wb.create("tile_full", value, results=[ft.to_mlir(t)]).result, t)


def block_dim(em, node, name=None, args=None):
    """wp.block_dim(): the lanes of a block, one on mlwarp's CPU unless built for Warp's CPU lanes."""
    if node.args or node.keywords:
        raise em.error(node, "wp.block_dim() takes no arguments", CompileTypeError)
    return em.const(lanes(em), wt.int32)
