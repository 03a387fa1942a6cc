"""Statements of a kernel or function body: blocks, assignments (plain, annotated, augmented: atomics on
array elements, member writes of composites, tile element updates), assert, and the `return` / `break` /
`continue` that set the exit flags branches.py guards the rest of a block with.

Part of the kernel emitter (codegen.KernelEmitter mixes these methods in)."""

from __future__ import annotations

import ast

from mlir import ir

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError, UnsupportedSyntaxError

from ..dialects.warp import builders as wb
from . import augassign, composite, slots, tiles, tuples
from . import grad_call  # wp.grad(f)(x)
from . import tile_views  # t[i], t[a:b, :], t[indices, :], wp.tile_view: views alias their tile
from . import types as ft
from .expressions import BINOPS
from .syntax import may_jump, unsupported_message
from .values import BREAK, CONTINUE, RETURN, FunctionVar, Var, rebinding_message


KERNEL_RETURN = "Warp kernels cannot return values. Write results to output arguments, and omit the return " \
                "annotation or use `-> None`."


class StatementEmitter:
    """What the emitter does with each statement kind (`stmt_<ast class>`)."""

    def emit_block(self, stmts):
        for k, stmt in enumerate(stmts):
            with self.loc(stmt):
                self.emit_stmt(stmt)
            for pending in self.loop_pending:
                for n, t in pending.items():
                    if t is None and isinstance(self.env.get(n), Var):
                        pending[n] = self.env[n].type
            rest = stmts[k + 1:]
            if rest and may_jump(stmt):
                with self.loc(rest[0]):  # the rest runs unless the statement returned, broke or continued
                    self.emit_branches(self.not_jumped(), lambda: self.emit_block(rest), lambda: None, rest[0],
                                       jumped_else=True)
                return

    def emit_stmt(self, node):
        handler = getattr(self, "stmt_" + type(node).__name__, None)
        if handler is None:
            raise self.error(node, unsupported_message(node),
                             UnsupportedSyntaxError)
        handler(node)

    def stmt_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring
        self.expr(node.value, allow_none=True, allow_tuple=True)  # a call's value, a tuple too, is discarded

    def stmt_Pass(self, node):
        pass

    def stmt_Assign(self, node):
        if len(node.targets) != 1:
            raise self.error(node, "unsupported: chained assignment (a = b = c)", UnsupportedSyntaxError)
        target = node.targets[0]
        if isinstance(target, ast.Tuple):
            values = self.tuple_values(node.value, len(target.elts))
            for t, v in zip(target.elts, values):
                if not (isinstance(t, ast.Name) and tile_views.bind(self, node, t.id, v)):
                    self.assign(t, v)
        else:
            value = self.expr(node.value, allow_tuple=True)  # t = (a, b) binds a tuple (tuples.py)
            if not (isinstance(target, ast.Name) and tile_views.bind(self, node, target.id, value)):
                self.assign(target, value)  # (a plain rebinding: not an update through a view, tile_views.py)

    def stmt_AnnAssign(self, node):
        if node.value is None:
            raise self.error(node, "unsupported: a declaration without a value", UnsupportedSyntaxError)
        value = self.expr(node.value)
        declared = self.type_from_expr(node.annotation)
        if declared is not None and declared != value.type:
            value = self.convert(value, declared, node)  # x: wp.float64 = 0.1 is 0.1 in float64
        if not (isinstance(node.target, ast.Name) and tile_views.bind(self, node, node.target.id, value)):
            self.assign(node.target, value)

    def stmt_AugAssign(self, node):
        opname = BINOPS.get(type(node.op))
        if opname is None:
            raise self.error(node, f"unsupported operator {type(node.op).__name__}", UnsupportedSyntaxError)
        if isinstance(node.target, ast.Name) and grad_call.is_wrapper(self.env.get(node.target.id)):
            raise self.error(node, grad_call.reassign_message(node.target.id))
        t, hidden = augassign.hoist_indices(self, node.target)  # a[f(i)] += x: f runs once (augassign.py)
        tile_target = isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and \
            tile_views.is_tile_name(self, t.value.id)  # t[i, j] += x: read, add, write the element (tile_views.py)
        if tile_target and tile_views.is_view_target(self, t):
            raise self.error(node, "Compound assignment to a tile view (e.g. `t[a:b, :] += x` or `t[i] += x`) is not "
                                   "supported. Read the view, update it, and assign it back explicitly.", CompileError)
        if isinstance(t, ast.Subscript) and opname in ("add", "sub") and not composite.is_composite_base(self, t) \
                and not tile_target:
            arr, indices = self.array_access(t)
            value = self.expr(node.value)
            self.check_store_type(node, arr, value, f"atomic_{opname}")  # Warp names the atomic
            wb.atomic(opname, arr.value, value.value, indices)
        elif tile_target and tiles.lanes(self) > 1:
            # Warp's t[i] += x (-=, &=, |=, ^=) from every lane: an atomic update of the block's element, then a
            # barrier; the barrier before it too, so that the lanes' plain writes of the element come first
            value = self.expr(node.value)
            tiles.sync(self)
            current = self.expr(t)
            self.assign(t, tiles.struct_element_update(self, node, opname, current, value)
                        if wt.is_struct(current.type) else self.binop(node, opname, current, value))
            tiles.sync(self)
        else:
            with slots.slot_target(self, t) as slot:
                current = self.expr(t)
            element = current.type.dtype if tiles.is_tile(current) else current.type if tile_target else None
            if opname in ("bit_and", "bit_or", "bit_xor") and element is not None and wt.is_struct(element):
                raise self.error(node, "Tile bitwise inplace operators do not support Warp struct tile elements",
                                 CompileTypeError)  # (Warp's message)
            value = self.expr(node.value)
            if tile_target and wt.is_struct(current.type):  # t[i] += s on a tile of structs
                result = tiles.struct_element_update(self, node, opname, current, value)
            else:
                result = self.binop(node, opname, current, value)
            slots.refuse_slot_adjoint(self, node, slot, opname, result)
            self.assign(t, result, augmented=True)
        for n in hidden:
            self.env.pop(n, None)

    def assign(self, target, value: Var, augmented: bool = False):
        old = self.env.get(target.id) if isinstance(target, ast.Name) else None
        if grad_call.is_wrapper(old) and not grad_call.is_wrapper(value):  # Warp's: g = wp.grad(f); g = 1.0
            raise self.error(target, grad_call.reassign_message(target.id))
        if isinstance(target, ast.Name) and grad_call.is_wrapper(value):  # a static handle: rebinding it is allowed
            self.env[target.id] = value
            return
        if isinstance(old, FunctionVar) and not grad_call.is_wrapper(value) and not (isinstance(value, FunctionVar) and value.target is old.target):
            raise self.error(target, rebinding_message(target.id, isinstance(value, FunctionVar)))
        if tuples.assign(self, target, value):  # t = (a, b); (a, b), c = t; t[0] = x is refused
            return
        if tile_views.assign(self, target, value):  # t[i, j] = x, t[a:b, :] = src on a tile variable (tile_views.py)
            return
        if isinstance(target, ast.Name) and tiles.is_tile(value) and tile_views.write_root(self, target.id, value):
            return  # an in-place update of a view local (wp.tile_assign(v, src), v[j] = x): its tile's elements
        if composite.assign(self, target, value):  # v.x = ..., v[0] = ..., p.pos = ..., a[i].pos = ...
            return
        if isinstance(target, ast.Name):
            old = self.env.get(target.id)
            # as Warp's types_equal: arrays of one dtype are one type whatever their rank (sub = a[:2]; sub = a[1])
            same_arrays = isinstance(old, Var) and isinstance(old.type, ft.ArrayT) and \
                isinstance(value.type, ft.ArrayT) and old.type.dtype == value.type.dtype
            if isinstance(old, Var) and old.type != value.type and target.id in getattr(self, "ref_params", ()):
                raise self.error(target, (f"Error, augmented assignment to ref parameter `{target.id}` "
                                          f"({ft.name(old.type)}) produces different type ({ft.name(value.type)})")
                                 if augmented else (f"Error, assigning to ref parameter '{target.id}' "
                                                    f"({ft.name(old.type)}) with value of different type "
                                                    f"({ft.name(value.type)})"), CompileTypeError)
            if isinstance(old, Var) and old.type != value.type and not same_arrays:
                raise self.error(target, f"assigning to existing symbol {target.id} ({ft.name(old.type)})"
                                         f" with different type ({ft.name(value.type)})", CompileTypeError)
            self.env[target.id] = value
        elif isinstance(target, ast.Subscript):
            arr, indices = self.array_access(target)
            self.check_store_type(target, arr, value)
            wb.store(arr.value, value.value, indices)
        else:
            raise self.error(target, f"unsupported assignment target: {type(target).__name__}",
                             UnsupportedSyntaxError)

    def check_store_type(self, node, arr: Var, value: Var, what="array_store"):
        if value.type != arr.type.dtype:
            raise self.error(node, f"{what}() value argument type ({ft.name(value.type)}) must be of the "
                                   f"same type as the array ({ft.name(arr.type.dtype)})", CompileTypeError)

    def stmt_Assert(self, node):
        """`assert condition[, message]`: the condition is evaluated, and checked in debug builds only (a false one
        makes the launch raise wp.KernelAssertionError), as Warp compiles C's assert (NDEBUG in release builds)."""
        text = " ".join(self.src.text(node).split())  # (the statement on one line)
        wb.create("assert", self.condition(node.test), attributes={"message": ir.StringAttr.get(text)})

    def stmt_Return(self, node):
        if node.value is not None:  # `return None` too, as in Warp
            raise self.error(node, KERNEL_RETURN, CompileTypeError)
        self.env[RETURN] = self.const(True, wt.bool_)

    def stmt_Break(self, node):
        self.env[BREAK] = self.const(True, wt.bool_)

    def stmt_Continue(self, node):
        self.env[CONTINUE] = self.const(True, wt.bool_)
