"""wp.tile_stack and its push / pop / clear / count (a stack is the tuple of its slots and its count). Its records are
in the tile table, compiler/tiles/table.py."""

from __future__ import annotations

import ast

from mlir import ir
from mlir.dialects import arith, scf

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileTypeError, CompileValueError

from ..dialects.warp import builders as wb
from . import types as ft
from .resolve import MISSING
from .tiles import (constant_value, dtype_arg, is_tile, lanes, sync, type_name, zero_value, zeros)
from .values import TupleVar, Var


def stack(em, node, name, args):
    """wp.tile_stack and its operations with one lane per block: a stack is the pair (a tile of `capacity` slots,
    the count), a tuple the frontend carries through branches and loops part by part; push, pop and clear rebind
    the stack's variable (Warp's stacks are block-shared state)."""
    if name == "tile_stack":
        capacity = constant_value(em, args["capacity"])
        if capacity is MISSING:
            raise em.error(node, "wp.tile_stack() requires capacity to be a compile-time constant", CompileValueError)
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:  # (Warp's words)
            raise em.error(node, f"wp.tile_stack() requires capacity to be a positive integer, got {capacity!r}",
                           CompileValueError)
        dtype = dtype_arg(em, args["dtype"], name, None)
        if lanes(em) > 1:  # the count is block-shared too: a tile of one element the lanes update in turn
            return TupleVar([zeros(ft.TileT(dtype, (capacity,))), zeros(ft.TileT(wt.int32, (1,)))])
        return TupleVar([zeros(ft.TileT(dtype, (capacity,))), em.const(0, wt.int32)])
    stack = em.expr(args["s"], allow_tuple=True)
    count_type = ft.TileT(wt.int32, (1,)) if lanes(em) > 1 else wt.int32
    if not (isinstance(stack, TupleVar) and len(stack.parts) == 2 and is_tile(stack.parts[0])
            and stack.parts[1].type == count_type):
        raise em.error(node, f"wp.{name}(): 's' must be a stack made by wp.tile_stack", CompileTypeError)
    data, count = stack.parts
    capacity = data.type.shape[0]
    i32 = ft.to_mlir(wt.int32)

    def const(n):
        return arith.ConstantOp(i32, n).result

    if lanes(em) > 1:
        return _lane_stack(em, node, name, args, data, count, const)
    if name == "tile_stack_count":
        return count
    if name == "tile_stack_clear":
        new = TupleVar([data, em.const(0, wt.int32)])
    elif name == "tile_stack_push":
        value = _push_value(em, node, args, data)
        has = em.to_bool(em.expr(args["has_value"])).value
        room = arith.CmpIOp(arith.CmpIPredicate.slt, count.value, const(capacity)).result
        push = arith.AndIOp(has, room).result
        branch = scf.IfOp(push, [data.value.type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([wb.create("tile_insert", data.value, value.value, [count.value],
                                   results=[data.value.type]).result])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([data.value])
        slot = arith.SelectOp(push, count.value, const(-1)).result
        grown = arith.AddIOp(count.value, arith.ExtUIOp(i32, push).result).result
        new = TupleVar([Var(branch.results[0], data.type), Var(grown, wt.int32)])
        result = Var(slot, wt.int32)
    else:  # pop: the last pushed value and its slot, or (zero, -1) when empty
        some = arith.CmpIOp(arith.CmpIPredicate.sgt, count.value, const(0)).result
        top = arith.MaxSIOp(arith.SubIOp(count.value, const(1)).result, const(0)).result
        element_t = ft.to_mlir(data.type.dtype)
        branch = scf.IfOp(some, [element_t], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([wb.create("tile_extract", data.value, [top], results=[element_t]).result])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([zero_value(data.type.dtype)])
        slot = arith.SelectOp(some, top, const(-1)).result
        shrunk = arith.SubIOp(count.value, arith.ExtUIOp(i32, some).result).result
        new = TupleVar([data, Var(shrunk, wt.int32)])
        result = TupleVar([Var(branch.results[0], data.type.dtype), Var(slot, wt.int32)])
    if not isinstance(args["s"], ast.Name):
        raise em.error(node, f"wp.{name}(): the stack must be a variable", CompileTypeError)
    em.assign(args["s"], new)
    return None if name == "tile_stack_clear" else result

def _push_value(em, node, args, data):
    """tile_stack_push's value, of the stack's dtype (Warp's rule: no conversion, a float pushed on an int stack
    is refused)."""
    value = em.expr(args["value"])
    if value.type is not data.type.dtype:
        raise em.error(node, f"wp.tile_stack_push(): the value's type {type_name(value.type)} does not match the "
                             f"stack's dtype {type_name(data.type.dtype)}", CompileTypeError)
    return value

def _lane_stack(em, node, name, args, data, count_tile, const):
    """The stack operations with several lanes per block, as Warp's CPU fibers run them: a barrier, then each lane
    in turn pushes (or pops) one value, its slot its own, then a barrier, so every lane sees the same count after.
    The count is a tile of one element; a push past the capacity (or a pop of an empty stack) gets slot -1."""
    i32 = ft.to_mlir(wt.int32)
    zero = const(0)
    if name == "tile_stack_count":
        return Var(wb.create("tile_extract", count_tile.value, [zero], results=[i32]).result, wt.int32)
    sync(em)
    count = wb.create("tile_extract", count_tile.value, [zero], results=[i32]).result
    capacity = data.type.shape[0]
    result = None
    if name == "tile_stack_clear":
        data_out, count_out = data.value, const(0)
    elif name == "tile_stack_push":
        value = _push_value(em, node, args, data)
        has = em.to_bool(em.expr(args["has_value"])).value
        room = arith.CmpIOp(arith.CmpIPredicate.slt, count, const(capacity)).result
        push = arith.AndIOp(has, room).result
        branch = scf.IfOp(push, [data.value.type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([wb.create("tile_insert", data.value, value.value, [count],
                                   results=[data.value.type]).result])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([data.value])
        data_out = branch.results[0]
        count_out = arith.AddIOp(count, arith.ExtUIOp(i32, push).result).result
        result = Var(arith.SelectOp(push, count, const(-1)).result, wt.int32)
    else:  # pop: the last pushed value and its slot, or (zero, -1) when empty
        some = arith.CmpIOp(arith.CmpIPredicate.sgt, count, const(0)).result
        top = arith.MaxSIOp(arith.SubIOp(count, const(1)).result, const(0)).result
        element_t = ft.to_mlir(data.type.dtype)
        branch = scf.IfOp(some, [element_t], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([wb.create("tile_extract", data.value, [top], results=[element_t]).result])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([zero_value(data.type.dtype)])
        data_out = data.value
        count_out = arith.SubIOp(count, arith.ExtUIOp(i32, some).result).result
        result = TupleVar([Var(branch.results[0], data.type.dtype),
                           Var(arith.SelectOp(some, top, const(-1)).result, wt.int32)])
    counted = wb.create("tile_insert", count_tile.value, count_out, [zero], results=[count_tile.value.type]).result
    sync(em)
    if not isinstance(args["s"], ast.Name):
        raise em.error(node, f"wp.{name}(): the stack must be a variable", CompileTypeError)
    em.assign(args["s"], TupleVar([Var(data_out, data.type), Var(counted, count_tile.type)]))
    return result
