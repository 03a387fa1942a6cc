"""The tile builtins that fold or map a tile: wp.tile_sum / max / min / argmax / argmin, tile_reduce (a builtin or a
@wp.func), the scans, and tile_map. Their records are in the tile table, compiler/tiles/table.py."""

from __future__ import annotations

import ast
import math

from mlir import ir
from mlir.dialects import arith, scf

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError

from ..dialects.warp import builders as wb
from . import types as ft
from .resolve import resolve_path
from .tiles import (call_bound, constant_value, elementwise, is_tile, lanes, map_function, tile_arg)
from .values import Var

REDUCTIONS = {"tile_sum": "add", "tile_max": "max", "tile_min": "min", "tile_argmax": "argmax", "tile_argmin": "argmin"}
SCANS = {"tile_scan_inclusive": "add", "tile_scan_exclusive": "add_exclusive", "tile_scan_max_inclusive": "max",
         "tile_scan_min_inclusive": "min"}


# the builtins tile_reduce folds with, and each one's identity (max and min start from an element)
REDUCE_OPS = {"add": 0, "mul": 1, "max": None, "min": None}

def reduce(em, node, name, args) -> Var:
    a = tile_arg(em, args["a"], name, "a")
    if name == "tile_reduce":
        op = resolve_path(em.src.func, args["op"])
        kind = getattr(op, "_wp_builtin_", None)
        if kind not in REDUCE_OPS and em.program.is_function(op):
            return reduce_with_function(em, node, args["op"], a, args.get("axis"))
        if kind not in REDUCE_OPS:
            raise em.error(node, f"wp.tile_reduce(): the operator must be a @wp.func or one of wp.add, wp.mul, "
                                 f"wp.max, wp.min, got {getattr(op, '__name__', op)!r}", CompileError)
    else:
        kind = REDUCTIONS[name]
    if wt.is_struct(a.type.dtype) and name == "tile_reduce":  # (Warp's message: no struct overload of wp.min, ...)
        raise em.error(node, f"tile_reduce() operator {kind} has no overload accepting Warp struct tile element type "
                             f"{ft.name(a.type.dtype)}", CompileTypeError)
    if wt.is_struct(a.type.dtype) and kind != "add":  # (tile_sum adds structs field by field, as Warp's)
        raise em.error(node, f"{name}() does not support Warp struct tile elements", CompileTypeError)
    # Warp's max and min of two vectors are component-wise; no product of two vectors, nor max of matrices
    if wt.is_composite(a.type.dtype) and (kind == "mul" or kind in ("max", "min", "argmax", "argmin") and
                                          wt.composite_kind(a.type.dtype) != "vec"):
        raise em.error(node, f"wp.{name}(): '{kind}' of a tile of {ft.name(a.type.dtype)}", CompileTypeError)
    dtype = wt.int32 if kind in ("argmax", "argmin") else a.type.dtype
    axis = args.get("axis")
    if axis is None:
        t = ft.TileT(dtype, (1,))
        return Var(wb.tile_reduce(a.value, kind, ft.to_mlir(t)), t)
    axis = constant_value(em, axis)
    rank = len(a.type.shape)
    if type(axis) is not int or not -rank <= axis < rank:
        raise em.error(node, f"wp.{name}(): axis must be a constant in [{-rank}, {rank}), got {axis!r}",
                       CompileTypeError)
    axis %= rank
    shape = a.type.shape[:axis] + a.type.shape[axis + 1:] or (1,)
    t = ft.TileT(dtype, shape)
    return Var(wb.tile_reduce(a.value, kind, ft.to_mlir(t), axis if rank > 1 else -1), t)

def reduce_with_function(em, node, fn_node, a: Var, axis_node) -> Var:
    """wp.tile_reduce(f, t, axis=None) with a @wp.func `f(a, b)` of two elements, in Warp's order (f need not be
    associative, nor have an identity). The whole tile (a tile of shape (1,)): with one lane the fold
    f(...f(f(t0, t1), t2)..., tn) in row-major order; with Warp's CPU lanes each lane's fold of its elements
    (l, l + block_dim, ...), then the lanes' partials folded in lane order. Along an axis of a 2-d tile: the first
    row (column) folded with each next one by a tile_map of f, in a loop."""
    dtype, shape = a.type.dtype, a.type.shape
    i32 = ft.to_mlir(wt.int32)
    rank = len(shape)
    axis = None if axis_node is None else constant_value(em, axis_node)
    if axis is not None and (type(axis) is not int or not -rank <= axis < rank):
        raise em.error(node, f"wp.tile_reduce(): axis must be a constant in [{-rank}, {rank}), got {axis!r}",
                       CompileTypeError)
    index = ir.IndexType.get()

    def constant(n):
        return arith.ConstantOp(index, n).result

    if axis is None or rank == 1:
        n = math.prod(shape)
        flat = a.value if rank == 1 else wb.create("tile_reshape", a.value, results=[ft.to_mlir(ft.TileT(dtype, (n,)))]
                                                   ).result

        def element(i):  # (an index)
            return wb.create("tile_extract", flat, [arith.IndexCastOp(i32, i).result], results=[ft.to_mlir(dtype)]).result

        def fold(start, step):
            """f folded over the elements start, start + step, ... (start an index)."""
            loop = scf.ForOp(arith.AddIOp(start, constant(step)).result, constant(n), constant(step), [element(start)])
            with ir.InsertionPoint(loop.body):
                x = Var(element(loop.induction_variable), dtype)
                out = call_on(em, node, fn_node, [Var(loop.inner_iter_args[0], dtype), x], dtype)
                scf.YieldOp([out.value])
            return loop.results[0]

        width = lanes(em)
        if width == 1 or n <= 1:
            total = fold(constant(0), 1)
        else:  # Warp's lanes: lane l folds elements l, l + width, ...; then the lanes' partials, in lane order
            loop = scf.ForOp(constant(1), constant(min(width, n)), constant(1), [fold(constant(0), width)])
            with ir.InsertionPoint(loop.body):
                partial = Var(fold(loop.induction_variable, width), dtype)
                out = call_on(em, node, fn_node, [Var(loop.inner_iter_args[0], dtype), partial], dtype)
                scf.YieldOp([out.value])
            total = loop.results[0]
        t = ft.TileT(dtype, (1,))
        return Var(wb.create("tile_full", total, results=[ft.to_mlir(t)]).result, t)
    if rank != 2:
        raise em.error(node, f"wp.tile_reduce() with a @wp.func along an axis takes a 1-d or 2-d tile here, got "
                             f"{a.type}", CompileTypeError)
    tiles = a.value
    rows, cols = shape
    if axis % 2 == 1:  # fold the columns: the transposed tile's rows
        tiles = wb.create("tile_transpose", tiles, results=[ft.to_mlir(ft.TileT(dtype, (cols, rows)))]).result
        rows, cols = cols, rows
    row_t = ft.TileT(dtype, (cols,))
    zero = arith.ConstantOp(i32, 0).result

    def row(i):
        return wb.tile_view(tiles, [i, zero], ft.to_mlir(row_t))

    loop = scf.ForOp(constant(1), constant(rows), constant(1), [row(zero)])
    with ir.InsertionPoint(loop.body):
        i = arith.IndexCastOp(i32, loop.induction_variable).result
        folded = map_function(em, node, fn_node, [Var(loop.inner_iter_args[0], row_t), Var(row(i), row_t)], (cols,))
        if folded.type != row_t:
            raise em.error(node, _bad_return(fn_node, dtype, folded.type.dtype), CompileTypeError)
        scf.YieldOp([folded.value])
    return Var(loop.results[0], row_t)

def _bad_return(fn_node, dtype, returned) -> str:
    """Warp's message for a tile_reduce function whose result is not the tile's element type."""
    name = ast.unparse(fn_node) if isinstance(fn_node, ast.AST) else getattr(fn_node, "__name__", fn_node)
    return (f"tile_reduce() operator {name} must return the tile element type {ft.name(dtype)}, got "
            f"{ft.name(returned)}")


def call_on(em, node, fn_node, values: list, dtype) -> Var:
    """The @wp.func at `fn_node` called on `values` (Vars) at the insertion point; its result must be a `dtype`."""
    out = call_bound(em, node, fn_node, values)
    if not isinstance(out, Var) or out.type != dtype:
        raise em.error(node, _bad_return(fn_node, dtype, getattr(out, "type", out)), CompileTypeError)
    return out

def tile_map(em, node, name=None, args=None) -> Var:
    if node.keywords or len(node.args) < 2:
        raise em.error(node, "wp.tile_map() takes an operation and one or more tiles", CompileTypeError)
    op = resolve_path(em.src.func, node.args[0])
    name = getattr(op, "_wp_builtin_", None)
    values = [em.expr(a) for a in node.args[1:]]  # tiles, and constants the same for every element
    if not any(is_tile(v) for v in values):
        raise em.error(node, "wp.tile_map() maps over at least one tile", CompileTypeError)
    if name is not None:
        return elementwise(em, node, name, values, mapped=True)
    if not em.program.is_function(op):
        raise em.error(node, "wp.tile_map() maps a Warp builtin or a @wp.func over tiles", CompileTypeError)
    return map_function(em, node, node.args[0], values, next(v.type.shape for v in values if is_tile(v)))


def scan(em, node, name, args) -> Var:
    a = tile_arg(em, args["a"], name, "a")
    if not wt.is_scalar(a.type.dtype):
        raise em.error(node, f"wp.{name}(): a tile of scalars, got {a.type}", CompileTypeError)
    return Var(wb.create("tile_scan", a.value, results=[ft.to_mlir(a.type)],
                         attributes={"kind": ir.StringAttr.get(SCANS[name])}).result, a.type)
