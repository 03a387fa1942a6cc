"""The tile builtins that read and write arrays: wp.tile_load, tile_store, tile_atomic_add, tile_load_indexed,
tile_store_indexed, tile_atomic_add_indexed, and the per-element tile_scatter_add / tile_scatter_masked. Their
records (parameters, ops, lane behaviour) are in the tile table, compiler/tiles/table.py."""

from __future__ import annotations


from mlir import ir
from mlir.dialects import scf

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError

from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from . import types as ft
from .tiles import (array_arg, constant_value, int32_arg, offsets_arg, sync, tile_arg,
                    tile_shape, updatable, write_back)
from .values import Var


# -- the builtins -------------------------------------------------------------------------------------------
def load(em, node, name, args) -> Var:
    arr = array_arg(em, args["a"], "tile_load")
    shape = tile_shape(em, args["shape"], "tile_load")
    if len(shape) != arr.type.ndim:
        raise em.error(node, f"tile_load() array argument must have same number of dimensions as the tile shape, "
                             f"trying to perform an {len(shape)} dimensional load from an array with "
                             f"{arr.type.ndim} dimensions.", CompileTypeError)
    offsets = offsets_arg(em, args["offset"], arr.type.ndim, "tile_load")
    t = ft.TileT(arr.type.dtype, shape)
    return Var(wb.create("tile_load", arr.value, offsets, results=[ft.to_mlir(t)]).result, t)

def store(em, node, name, args) -> None:
    """tile_store, or tile_atomic_add (the same checks, an atomic add that returns the tile of previous values)."""
    arr = array_arg(em, args["a"], name)
    t = tile_arg(em, args["t"], name, "t")
    if t.type.dtype is not arr.type.dtype:
        raise em.error(node, f"{name}() 'a' and 't' arguments must have the same dtype, got "
                             f"{ft.name(arr.type.dtype)} and {ft.name(t.type.dtype)}", CompileTypeError)
    if len(t.type.shape) != arr.type.ndim:
        raise em.error(node, f"{name}() array argument must have same number of dimensions as the tile shape, "
                             f"trying to perform an {len(t.type.shape)} dimensional store to an array with "
                             f"{arr.type.ndim} dimensions.", CompileTypeError)
    if name == "tile_atomic_add":
        check_atomic_dtype(em, node, t.type.dtype, name)
    offsets = offsets_arg(em, args["offset"], arr.type.ndim, name)
    op = wb.create(name, arr.value, t.value, offsets)
    # tile_atomic_add's result: the array's elements before the add (Warp 1.19)
    return Var(op.results[0], t.type) if name == "tile_atomic_add" else None

ATOMIC_SCALARS = (wt.int32, wt.uint32, wt.int64, wt.uint64, wt.float16, wt.bfloat16, wt.float32, wt.float64)

def indexed(em, node, name, args):
    """tile_load_indexed / tile_store_indexed / tile_atomic_add_indexed: a gather or scatter along one axis."""
    arr = array_arg(em, args["a"], name)
    indices = tile_arg(em, args["indices"], name, "indices")
    if indices.type.dtype is not wt.int32 or len(indices.type.shape) != 1:
        raise em.error(node, f"wp.{name}(): 'indices' must be a 1-d tile of int32, got {indices.type}",
                       CompileTypeError)
    axis = constant_value(em, args["axis"])
    if type(axis) is not int or not 0 <= axis < arr.type.ndim:
        raise em.error(node, f"wp.{name}(): axis must be a constant in [0, {arr.type.ndim}), got {axis!r}",
                       CompileTypeError)
    i64 = ir.IntegerType.get_signless(64)
    offsets = offsets_arg(em, args["offset"], arr.type.ndim, name)
    if name == "tile_load_indexed":
        shape = tile_shape(em, args["shape"], name)
        if len(shape) != arr.type.ndim or shape[axis] != indices.type.shape[0]:
            raise em.error(node, f"wp.{name}(): the shape {shape} must have the array's {arr.type.ndim} dimensions "
                                 f"and {indices.type.shape[0]} (the indices) along axis {axis}", CompileTypeError)
        t = ft.TileT(arr.type.dtype, shape)
        op = wb.create("tile_load_indexed", arr.value, indices.value, offsets, results=[ft.to_mlir(t)],
                       attributes={"axis": ir.IntegerAttr.get(i64, axis)})
        return Var(op.result, t)
    t = tile_arg(em, args["t"], name, "t")
    if t.type.dtype is not arr.type.dtype or len(t.type.shape) != arr.type.ndim or \
            t.type.shape[axis] != indices.type.shape[0]:
        raise em.error(node, f"wp.{name}(): the tile {t.type} must have the array's dtype and dimensions and "
                             f"{indices.type.shape[0]} (the indices) along axis {axis}", CompileTypeError)
    if name == "tile_atomic_add_indexed":
        check_atomic_dtype(em, node, t.type.dtype, name)
    op = wb.create("tile_store_indexed", arr.value, indices.value, t.value, offsets,
                   attributes={"axis": ir.IntegerAttr.get(i64, axis),
                               "atomic": ir.IntegerAttr.get(i64, int(name == "tile_atomic_add_indexed"))})
    # tile_atomic_add_indexed's result: the elements before the add (Warp 1.19)
    return Var(op.results[0], t.type) if name == "tile_atomic_add_indexed" else None

def scatter(em, node, name, args=None):
    """wp.tile_scatter_add(a, i, ..., value, has_value, atomic=True) / wp.tile_scatter_masked(a, i, ..., value,
    has_value) with one lane per block: when has_value, element (i, ...) of `a` becomes a[i, ...] + value (or
    value); the tile's variable is rebound (Warp updates the shared tile in place). The update is a branch on
    has_value around tile_extract / tile_insert, so an index that is invalid while has_value is false is never
    touched, and warp-autodiff differentiates it through those ops (the value's adjoint is the tile's at (i, ...);
    a masked write clears it there)."""
    keywords = {kw.arg: kw.value for kw in node.keywords}
    allowed = {"a", "i", "j", "k", "l", "value", "has_value"} | ({"atomic"} if name == "tile_scatter_add" else set())
    for kw in keywords:
        if kw not in allowed:
            raise em.error(node, f"wp.{name}() got an unexpected keyword argument '{kw}'", CompileTypeError)
    positional = list(node.args)
    target = positional.pop(0) if positional else keywords.pop("a", None)
    if target is None:
        raise em.error(node, f"wp.{name}() missing required argument 'a'", CompileTypeError)
    tile = tile_arg(em, target, name, "a")
    rank = len(tile.type.shape)
    extra = ["atomic"] if name == "tile_scatter_add" else []
    # the indices: the positional arguments before value and has_value (and atomic, when all are positional)
    trailing = sum(n not in keywords for n in ("value", "has_value"))
    count = len(positional) - trailing - (1 if extra and "atomic" not in keywords and
                                          len(positional) == rank + trailing + 1 else 0)
    count += sum(n in keywords for n in "ijkl")
    if count != rank:
        prefix = "tile_scatter_add:" if name == "tile_scatter_add" else "tile_scatter_masked()"
        raise em.error(node, f"{prefix} incorrect number of indices ({count}) for tile shape {tile.type.shape}",
                       CompileTypeError)
    names = ["i", "j", "k", "l"][:rank] + ["value", "has_value"] + extra
    bound = dict(zip(names, positional))
    for kw, v in keywords.items():
        if kw not in names or kw in bound:
            raise em.error(node, f"wp.{name}() got an unexpected keyword argument '{kw}'" if kw not in names else
                           f"wp.{name}() got multiple values for argument '{kw}'", CompileTypeError)
        bound[kw] = v
    for n in ("value", "has_value"):
        if n not in bound:
            raise em.error(node, f"wp.{name}() missing required argument '{n}'", CompileTypeError)
    if "atomic" in bound and not isinstance(constant_value(em, bound["atomic"]), bool):
        raise em.error(node, "tile_scatter_add() 'atomic' must be a compile-time constant (True or False), not a "
                             "runtime variable", CompileTypeError)
    value = em.expr(bound["value"])
    if value.type is not tile.type.dtype:
        raise em.error(node, f"{name}() 'value' type must match tile dtype, got {ft.name(value.type)} and tile dtype "
                             f"{ft.name(tile.type.dtype)}", CompileTypeError)
    has = em.to_bool(em.expr(bound["has_value"])).value
    indices = [int32_arg(em, bound[n]) for n in names[:rank]]
    element_t = ft.to_mlir(tile.type.dtype)
    sync(em)  # with several lanes: each lane's update in turn, between barriers (Warp's fibers)
    branch = scf.IfOp(has, [tile.value.type], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        new = value.value
        if name == "tile_scatter_add":
            old = wb.create("tile_extract", tile.value, indices, results=[element_t]).result
            new = wc.struct_fieldwise("add", old, value.value) if wt.is_struct(tile.type.dtype) else \
                wb.builtin("add", [old, value.value], element_t)  # (structs field by field, as Warp's)
        scf.YieldOp([wb.create("tile_insert", tile.value, new, indices, results=[tile.value.type]).result])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([tile.value])
    sync(em)
    if not updatable(em, target):
        raise em.error(node, f"wp.{name}(): the tile it updates must be a variable", CompileTypeError)
    write_back(em, target, Var(branch.results[0], tile.type))
    return None


def check_atomic_dtype(em, node, dtype, name) -> None:
    """Warp's rule for tile atomics: the scalars with a CUDA atomicAdd (not bool or 8/16-bit ints); structs (their
    fields of such types added, the others left as they are)."""
    if wt.is_struct(dtype):
        return
    scalar = getattr(dtype, "_wp_scalar_type_", dtype)
    if scalar not in ATOMIC_SCALARS:
        raise em.error(node, f"{name}() only supports tiles with [u]int32, [u]int64, float16, bfloat16, float32, or "
                             f"float64 as the underlying scalar type, but got {ft.name(dtype)}", CompileError)
