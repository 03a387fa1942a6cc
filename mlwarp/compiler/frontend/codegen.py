"""Python AST -> warp dialect, for one kernel.

Locals live in SSA form: `env` maps each name to a typed value, `if` merges
branches through scf.if results, loops carry reassigned names as iter_args.
`break`, `continue` and `return` set flag locals ($break, $continue,
$return); the statements after one that may jump run under a guard, so the
IR stays structured (scf) for the unroll and autodiff passes.
"""

from __future__ import annotations

import ast
import warnings

from mlir import ir
from mlir.dialects import arith, func, scf

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileAttributeError, CompileError, CompileKeyError, CompileTypeError, UnsupportedSyntaxError

from ..builtins import resolve
from ..builtins.table import converted_arg_types
from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from . import (atomics, augassign, composite, fabric, fixed, indexed, keywords, operators, printing, ptr_arrays,
               refs, slicing, slots, tile_algebra, tiles, tuples, type_exprs)
from . import dtype_dispatch
from . import grad_call  # wp.grad(f)(x)
from . import hints  # prefetch(a[i])
from . import bitcast  # wp.cast(a, dtype)
from . import starred  # f(*v), wp.vec4(*v3, 1.0): starred arguments become their components
from . import native_calls  # @wp.func_native calls
from . import geometry  # wp.hash_grid_query, wp.bvh_query_next, ...
from . import tile_views  # t[i], t[a:b, :], t[indices, :], wp.tile_view: views alias their tile
from . import types as ft
from .resolve import (MISSING, StaticError, dotted_name, is_static_call, missing_function_message,
                      python_function_builtin, resolve_path, static_value)
from .source import Source
from .syntax import (assigned_names, contains_return, continuation, first_never_supported, int_literal, may_jump,
                     member_write_roots, read_before_bound, read_outside, unsupported_message)
from .values import BREAK, CONTINUE, RETURN, RETVAL, FunctionVar, TupleVar, Unbound, Var, rebinding_message


_BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
    ast.Mod: "mod", ast.Pow: "pow", ast.BitAnd: "bit_and", ast.BitOr: "bit_or", ast.BitXor: "bit_xor",
    ast.LShift: "lshift", ast.RShift: "rshift", ast.MatMult: "matmul",
}
_CMPOPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
_CMP_SYMBOLS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
KERNEL_RETURN = "Warp kernels cannot return values. Write results to output arguments, and omit the return " \
                "annotation or use `-> None`."
_CASTS = {float: wt.float32, int: wt.int32, bool: wt.bool_}


_MAX_STATIC_UNROLL = 4096  # iterations of a loop unrolled for wp.static() over its variable


class KernelEmitter:
    def __init__(self, source: Source, arg_types: dict, program):
        """`program`: the functions.Program the kernel's emitters share, which also emits their @wp.func calls
        (functions.py builds on this class, so this module hands those calls to it instead of importing it)."""
        self.src = source
        self.arg_types = arg_types
        self.program = program
        self.env: dict = {}
        self.tid_dims = 0
        self.static_loop_values: dict = {}  # loop variables of loops unrolled for wp.static (stmt_For)
        # loops being emitted once to learn the types of the names they must carry without a definition before
        # them: {name: its type once some statement assigned it, else None}, innermost last (emit_loop)
        self.loop_pending: list = []
        self.reads_after: dict = {}  # id(statement) -> names the code after it may read before assigning
        self.slot = slots.NO_SLOT  # the member-write target being evaluated (slots.py)

    # -- diagnostics --------------------------------------------------------------
    def error(self, node, message, cls=CompileError):
        return cls(message, self.src.filename, self.src.file_line(node), self.src.text(node), self.src.name)

    def loc(self, node) -> ir.Location:
        return ir.Location.file(self.src.filename, self.src.file_line(node), getattr(node, "col_offset", 0) + 1)

    # -- entry ----------------------------------------------------------------------
    def emit_kernel(self) -> func.FuncOp:
        tree = self.src.tree
        bad = first_never_supported(tree)
        if bad is not None:
            raise self.error(bad, unsupported_message(bad), UnsupportedSyntaxError)
        r = tree.returns  # `-> None` / `-> types.NoneType` only; the annotation as evaluated at the definition
        a = getattr(self.src.func, "__annotations__", {}).get("return", None) if r is not None else None
        if isinstance(a, str):  # postponed annotations: resolved by name
            a = None if a in ("None", "NoneType", "types.NoneType") else resolve_path(self.src.func, r)
        if a is not None and a is not type(None):
            raise self.error(tree.returns, KERNEL_RETURN, CompileTypeError)
        names = [a.arg for a in tree.args.args]
        inputs = [ft.to_mlir(self.arg_types[n]) for n in names]
        with self.loc(tree):
            f = func.FuncOp(self.src.name, (inputs, []))
            f.attributes["warp.kernel"] = ir.UnitAttr.get()
            entry = f.add_entry_block()
        self.program.kernel_op = f.operation  # @wp.func specializations go before the kernel
        with ir.InsertionPoint(entry):
            for n, arg in zip(names, entry.arguments):
                self.env[n] = Var(arg, self.arg_types[n])
            if contains_return(tree.body):
                self.env[RETURN] = self.const(False, wt.bool_)
            self.emit_block(tree.body)
            with self.loc(tree):
                func.ReturnOp([])
        return f

    # -- statements -------------------------------------------------------------------
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
        opname = _BINOPS.get(type(node.op))
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
            self.assign(t, self.binop(node, opname, self.expr(t), value))
            tiles.sync(self)
        else:
            with slots.slot_target(self, t) as slot:
                current = self.expr(t)
            result = self.binop(node, opname, current, self.expr(node.value))
            slots.refuse_slot_adjoint(self, node, slot, opname, result)
            self.assign(t, result)
        for n in hidden:
            self.env.pop(n, None)

    def assign(self, target, value: Var):
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

    def stmt_If(self, node):
        if is_static_call(self.src.func, node.test):  # `if wp.static(flag):` only the branch taken is compiled
            taken = static_value(self.src.func, node.test, self.static_scope())
            self.emit_block(node.body if taken else node.orelse)
            return
        self.emit_if(self.condition(node.test), node.body, node.orelse, node)

    def emit_if(self, cond: ir.Value, then_stmts, else_stmts, node):
        """Emits both branches, then an scf.if whose results are the names either branch changed."""
        self.emit_branches(cond, lambda: self.emit_block(then_stmts), lambda: self.emit_block(else_stmts), node)

    def emit_branches(self, cond: ir.Value, emit_then, emit_else, node, what="the if", jumped_else=False):
        """An scf.if over two emitters. Its results: the value each emitter returns (a Var, or None for
        statements), then every local either branch changed (assignments, and also states that a
        `wp.randf(state)` in a conditional expression or an `and`/`or` operand advances). Returns the value.
        `jumped_else`: the else path is the one where a `return`/`break`/`continue` jumped past the then
        statements, so a local they first assign has the unassigned value there (what an enclosing `if` merges:
        `if c: (if d: return); x = a` else `x = b` reads a or b after it, never a refusal or a stray zero)."""
        before = dict(self.env)
        tmp = scf.IfOp(cond, [], has_else=True)
        envs, values = [], []
        for block, emit in ((tmp.then_block, emit_then), (tmp.else_block, emit_else)):
            self.env = dict(before)
            with ir.InsertionPoint(block):
                values.append(emit())
            envs.append(self.env)
        then_env, else_env = envs
        before, then_env, else_env, shapes = tuples.flatten_changed(self, node, before, then_env, else_env, what)
        a, b = values
        if a is not None and a.type != b.type:
            raise self.error(node, f"the branches of a conditional expression have different types: "
                                   f"{ft.name(a.type)} and {ft.name(b.type)}", CompileTypeError)
        merged, names = dict(before), []
        for name in dict.fromkeys([*then_env, *else_env]):
            x, y = then_env.get(name), else_env.get(name)
            if x is y:
                continue
            if isinstance(x, Var) != isinstance(y, Var) and (jumped_else or self.read_after(name, node)):
                # a local only one branch of an `if` assigns, read after it: Warp declares every local at the top
                # of the function, so the other path reads the declaration's value, zero for vectors, matrices,
                # structs and tiles (their constructors zero them) and indeterminate for scalars (mlwarp: zero)
                made = x if isinstance(x, Var) else y
                with ir.InsertionPoint(tmp):
                    zero = self.unassigned_value(made.type)
                if zero is not None:
                    (else_env if made is x else then_env)[name] = zero
                    x, y = then_env[name], else_env[name]
            if isinstance(x, Var) and isinstance(y, Var):
                erased = geometry.merged_query_type(x.type, y.type) if x.type != y.type else None
                if erased is not None:  # BVH queries of two kinds: both as the erased wp.BvhQuery, as in Warp
                    for env, block in ((then_env, tmp.then_block), (else_env, tmp.else_block)):
                        with ir.InsertionPoint(block):
                            env[name] = geometry.erase_query(env[name], erased)
                    x, y = then_env[name], else_env[name]
                if x.type != y.type:
                    raise self.error(node, f"variable '{name}' has type {ft.name(x.type)} in one branch and "
                                           f"{ft.name(y.type)} in the other", CompileTypeError)
                names.append(name)
            else:
                merged[name] = Unbound(f"'{name}' is not defined on every path through {what} at line "
                                       f"{self.src.file_line(node)}")
        result_types = ([a.value.type] if a is not None else []) + [then_env[n].value.type for n in names]
        final = scf.IfOp(cond, result_types, has_else=True)
        for block, env, value, tmp_block in ((final.then_block, then_env, a, tmp.then_block),
                                             (final.else_block, else_env, b, tmp.else_block)):
            with ir.InsertionPoint(block):
                y = scf.YieldOp(([value.value] if value is not None else []) + [env[n].value for n in names])
            for op in list(tmp_block.operations):
                op.move_before(y)
        tmp.erase()
        results = list(final.results)
        result = Var(results.pop(0), a.type) if a is not None else None
        for n, r in zip(names, results):
            merged[n] = Var(r, then_env[n].type)
        self.env = tuples.unflatten(merged, shapes)  # tuples changed by a branch: merged part by part
        return result

    def unassigned_value(self, t):
        """The value of a local of type `t` on a path that has not assigned it (see emit_branches), or None
        for a type with no such value here (arrays, tuples, queries: those stay refused)."""
        if wt.is_scalar(t):
            return self.const(0, t)
        if wt.is_composite(t):
            return Var(wc.construct(ft.to_mlir(t), []), t)
        if isinstance(t, ft.TileT):
            return tiles.zeros(t)
        return None

    def read_after(self, name: str, node) -> bool:
        """Whether the code after the statement `node` (an `if` or a loop, not an implicit branch of the
        compiler's, such as the rest of a block after an early return) may read `name` before assigning it."""
        if not isinstance(node, (ast.If, ast.For, ast.While)):
            return False
        if id(node) not in self.reads_after:
            self.reads_after[id(node)] = read_before_bound(continuation(self.src.tree, node), set())
        return name in self.reads_after[id(node)]

    # -- loops ----------------------------------------------------------------------
    def stmt_For(self, node):
        if node.orelse:
            raise self.error(node, "unsupported: for ... else", UnsupportedSyntaxError)
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "unsupported: a for-loop target other than a name", UnsupportedSyntaxError)
        if geometry.is_query_iteration(self, node.iter):  # for index in wp.hash_grid_query(...) (geometry.py)
            return geometry.emit_for(self, node)
        it = node.iter
        backwards = isinstance(it, ast.Call) and resolve_path(self.src.func, it.func) is reversed \
            and len(it.args) == 1 and not it.keywords
        if backwards:
            it = it.args[0]
        if not (isinstance(it, ast.Call) and resolve_path(self.src.func, it.func) is range):
            raise self.error(it, "unsupported: for-loops iterate over range(...), reversed(range(...)) or a geometry "
                                 "query (wp.hash_grid_query, wp.bvh_query_*, wp.mesh_query_aabb / _sphere) only",
                             UnsupportedSyntaxError)
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.error(it, "range() takes 1 to 3 positional arguments", UnsupportedSyntaxError)
        if self.unroll_for_static(node, it, backwards):
            return
        args = [self.expr(a) for a in it.args]
        args = [self.const(int(a.literal), wt.int32) if type(a.literal) is bool else a for a in args]
        for a, n in zip(args, it.args):
            if a.type is not wt.int32:
                raise self.error(n, f"range() arguments must be int32, got {ft.name(a.type)}", CompileTypeError)
        start, end, step = (self.const(0, wt.int32), args[0], None) if len(args) == 1 else (args[0], args[1], None)
        step_const = 1 if len(args) < 3 else int_literal(it.args[2])
        if len(args) == 3 and step_const is None:
            step = args[2]
        if step_const == 0:
            raise self.error(it, "range() step must not be zero", CompileError)
        if backwards:  # k over the trip count n; i = start + (n - 1) * step - k * step
            st_val = step if step is not None else self.const(step_const, wt.int32)
            n = self.trip_count(start, end, st_val, step_const)
            last = arith.AddIOp(start.value, arith.MulIOp(arith.SubIOp(n, self.const(1, wt.int32).value).result,
                                                          st_val.value).result).result
            neg = arith.SubIOp(self.const(0, wt.int32).value, st_val.value).result
            lo, hi, st = self.const(0, wt.int32), Var(n, wt.int32), self.const(1, wt.int32)
            to_i = (Var(last, wt.int32), Var(neg, wt.int32))
        elif step_const is not None and step_const > 0:
            lo, hi, st = start, end, self.const(step_const, wt.int32)
            to_i = None
        else:  # iterate k over the trip count; i = start + k * step
            st_val = step if step is not None else self.const(step_const, wt.int32)
            lo, hi, st = self.const(0, wt.int32), Var(self.trip_count(start, end, st_val, step_const), wt.int32), \
                self.const(1, wt.int32)
            to_i = (start, st_val)
        name = node.target.id
        if name in self.static_loop_values:  # a loop rebinding an unrolled loop's variable: after it, wp.static()
            bounds = [self.static_int(a) for a in it.args]  # sees its last value (Python's rule), unknown if dynamic
            values = range(*bounds) if None not in bounds else None
            if values is None:
                self.static_loop_values.pop(name)
            elif len(values):
                self.static_loop_values[name] = values[0] if backwards else values[-1]
        if (name not in self.env or isinstance(self.env[name], Unbound)) and read_outside(self.src.tree, node, name):
            self.env[name] = start  # read after the loop: it keeps its last value there, as in Python
        self.emit_loop(node, node.body, lo, hi, st, to_i, node.target.id)

    def unroll_for_static(self, node, it, backwards) -> bool:
        """A loop over a constant range whose body reads its variable in wp.static(): unrolled here, each copy
        of the body with the variable a constant that wp.static() sees (Warp unrolls such loops, so
        `wp.static(table[i])` works there); True if it was. A `continue` ends its copy of the body."""
        name = node.target.id
        body = ast.Module(body=node.body, type_ignores=[])
        reads = any(is_static_call(self.src.func, call) and any(isinstance(n, ast.Name) and n.id == name
                                                                for n in ast.walk(call))
                    for call in ast.walk(body))
        bounds = [self.static_int(a) for a in it.args]
        if not reads or None in bounds or may_jump(body, only=(ast.Break,)) or contains_return(node.body):
            return False
        continues = may_jump(body, only=(ast.Continue,))
        values = range(*bounds)
        if len(values) > _MAX_STATIC_UNROLL:
            raise self.error(it, f"a loop whose variable wp.static() reads is unrolled: {len(values)} iterations "
                                 f"exceed {_MAX_STATIC_UNROLL}", CompileError)
        outer = self.static_loop_values.get(name, MISSING)
        outer_flags = {f: self.env.pop(f) for f in (BREAK, CONTINUE) if f in self.env}  # an enclosing loop's
        for value in (reversed(values) if backwards else values):
            self.env[name] = self.const(value, wt.int32)
            self.static_loop_values[name] = value
            if continues:
                self.env[CONTINUE] = self.const(False, wt.bool_)
            self.emit_block(node.body)
            self.env.pop(CONTINUE, None)
        self.env.update(outer_flags)
        if len(values):  # after the loop its variable keeps its last value (Python's rule)
            self.static_loop_values[name] = values[0] if backwards else values[-1]
        elif outer is MISSING:
            self.static_loop_values.pop(name, None)
        else:
            self.static_loop_values[name] = outer
        return True

    def trip_count(self, start: Var, end: Var, step: Var, step_const) -> ir.Value:
        """max(0, ceil((end - start) / step)) for a step of either sign."""
        zero, one = self.const(0, wt.int32).value, self.const(1, wt.int32).value

        def count(span, stride):  # (span + stride - 1) / stride, clamped at 0
            n = arith.DivSIOp(arith.SubIOp(arith.AddIOp(span, stride).result, one).result, stride).result
            return arith.MaxSIOp(n, zero).result

        is_zero = None
        if step_const is None:  # a runtime step of 0 runs no iterations (instead of dividing by zero)
            is_zero = arith.CmpIOp(arith.CmpIPredicate.eq, step.value, zero).result
            step = Var(arith.SelectOp(is_zero, one, step.value).result, wt.int32)
        up = lambda: count(arith.SubIOp(end.value, start.value).result, step.value)
        down = lambda: count(arith.SubIOp(start.value, end.value).result, arith.SubIOp(zero, step.value).result)
        if step_const is not None:
            return up() if step_const > 0 else down()
        positive = arith.CmpIOp(arith.CmpIPredicate.sgt, step.value, zero).result
        return arith.SelectOp(is_zero, zero, arith.SelectOp(positive, up(), down()).result).result

    def stmt_While(self, node):
        if node.orelse:
            raise self.error(node, "unsupported: while ... else", UnsupportedSyntaxError)
        self.emit_loop(node, node.body, None, None, None, None, None)

    def emit_loop(self, node, body, lo, hi, step, to_i, var_name):
        """A range loop (lo/hi/step given) or a while loop (node.test). scf.for when the body cannot
        leave early, else scf.while with the exit flags in its condition.

        A name the body assigns but nothing defines before the loop is carried through it when it is read after
        the loop or may be read before the body assigns it (from the iteration before): Warp's locals are C
        variables declared at the top of the function, so they keep their last value across iterations and
        after the loop, and hold their declaration's value before any assignment (zero here, as in
        emit_branches). Its type is what the body assigns it: the loop is emitted once in a scratch block to
        learn it."""
        bound = {n for n, v in self.env.items() if isinstance(v, (Var, TupleVar))} | {var_name}
        early = read_before_bound(body, bound)
        pending = {n: None for n in dict.fromkeys(assigned_names(body))
                   if n not in bound and (n in early or self.read_after(n, node))}
        if pending:
            before = dict(self.env)
            true = self.const(True, wt.bool_).value
            scratch = scf.IfOp(true, [], has_else=False)
            self.loop_pending.append(pending)
            try:
                with ir.InsertionPoint(scratch.then_block):
                    self.emit_loop_once(node, body, lo, hi, step, to_i, var_name)
            finally:
                self.loop_pending.pop()
                scratch.erase()
                true.owner.erase()
                self.env = before
            for n, t in pending.items():
                zero = self.unassigned_value(t) if t is not None else None
                if zero is not None:
                    self.env[n] = zero
        self.emit_loop_once(node, body, lo, hi, step, to_i, var_name)

    def emit_loop_once(self, node, body, lo, hi, step, to_i, var_name):
        shapes = tuples.flatten_loop(self, node, body, var_name)  # tuples the body reassigns: carried by part
        outer = dict(self.env)
        saved_flags = {f: self.env.pop(f) for f in (BREAK, CONTINUE) if f in self.env}
        block = ast.Module(body=body, type_ignores=[])
        breaks = may_jump(block, only=(ast.Break,))
        continues = may_jump(block, only=(ast.Continue,))
        returns = contains_return(body)
        if breaks:
            self.env[BREAK] = self.const(False, wt.bool_)
        inner = dict(self.env)
        test_stmts = [ast.Expr(node.test)] if lo is None else []  # a while test may advance names (geometry.py)
        carried = [n for n in dict.fromkeys(assigned_names(body) + self.updated_in_place(body + test_stmts))
                   if isinstance(self.env.get(n), Var)] + tuples.leaf_names(self.env, shapes)
        carried += [f for f in (BREAK, RETURN) if f in self.env and (f == BREAK or returns)]
        carried += [n for n in self.env if n.startswith(RETVAL) and returns]
        carried = list(dict.fromkeys(carried))
        if var_name is not None and isinstance(self.env.get(var_name), Var):
            carried.append(var_name)  # defined before the loop: keeps its last value after it, as in Python
        elif var_name in carried:
            carried.remove(var_name)
        inits = [self.env[n] for n in carried]
        is_while = lo is None
        structured = not is_while and not breaks and not returns

        def body_env(values, iv, in_body=True):
            self.env = {**inner, **{n: Var(v, i.type) for n, v, i in zip(carried, values, inits)}}
            if continues and in_body:
                self.env[CONTINUE] = self.const(False, wt.bool_)
            if iv is not None:
                if to_i is None:
                    self.env[var_name] = Var(iv, wt.int32)
                else:
                    start, st = to_i
                    self.env[var_name] = Var(arith.AddIOp(start.value, arith.MulIOp(iv, st.value).result).result,
                                             wt.int32)
            self.env = tuples.unflatten(self.env, shapes)

        def finish_body():
            self.env.pop(CONTINUE, None)
            tuples.reflatten(self, node, shapes)
            for n, i in zip(carried, inits):
                v = self.env.get(n)
                if not isinstance(v, Var):
                    raise self.error(node, (v.reason if v else f"'{n}' is not defined") + " at the end of the loop")
                if v.type != i.type:
                    raise self.error(node, f"loop variable '{n}' changes type from {ft.name(i.type)} to "
                                           f"{ft.name(v.type)} inside the loop", CompileTypeError)
            return [self.env[n].value for n in carried]

        if structured:
            loop = scf.ForOp(lo.value, hi.value, step.value, [v.value for v in inits])
            with ir.InsertionPoint(loop.body):
                body_env(list(loop.inner_iter_args), loop.induction_variable)
                self.emit_block(body)
                scf.YieldOp(finish_body())
            results = list(loop.results)
        else:
            state = ([lo] if not is_while else []) + inits
            types = [s.value.type for s in state]
            loop = scf.WhileOp(types, [s.value for s in state])
            before = loop.before.blocks.append(*types)
            after = loop.after.blocks.append(*types)
            with ir.InsertionPoint(before):
                args = list(before.arguments)
                iv = args.pop(0) if not is_while else None
                body_env(args, None, in_body=False)
                keep_going = self.not_jumped(flags=(BREAK, RETURN))
                test = self.condition(node.test) if is_while else \
                    self.call_builtin(node, "lt", [Var(iv, wt.int32), hi]).value
                keep_going = test if keep_going is None else \
                    self.call_builtin(node, "bool_and", [Var(keep_going, wt.bool_), Var(test, wt.bool_)]).value
                passed = list(before.arguments)
                if is_while:  # what the test rebound (wp.hash_grid_query_next(query, index)) goes on
                    passed = [self.env[n].value if isinstance(self.env.get(n), Var) else a
                              for n, a in zip(carried, passed)]
                scf.ConditionOp(keep_going, passed)
            with ir.InsertionPoint(after):
                args = list(after.arguments)
                iv = args.pop(0) if not is_while else None
                body_env(args, iv)
                self.emit_block(body)
                nxt = [] if is_while else [arith.AddIOp(iv, step.value).result]
                scf.YieldOp(nxt + finish_body())
            results = list(loop.results)[0 if is_while else 1:]
        env = dict(outer)
        for n, r, i in zip(carried, results, inits):
            env[n] = Var(r, i.type)
        env = tuples.unflatten(env, shapes)
        for n in assigned_names(body):
            if n not in env or isinstance(env[n], Unbound):
                env[n] = Unbound(f"'{n}' is assigned inside the loop at line {self.src.file_line(node)} "
                                 f"and not defined before it")
        env.pop(BREAK, None)
        env.update(saved_flags)
        self.env = env

    def updated_in_place(self, stmts) -> list:
        """Locals that `stmts` change without naming them as an assignment target: composites whose members
        are written (`u[j] = ...`, `s.v.z += ...`) and tiles whose elements are, states that `wp.randf(state)`-like calls advance,
        transforms that `wp.transform_set_translation(t, p)`-like calls set, and wp.ref[T] arguments."""
        found = [n for n in member_write_roots(stmts)  # a tile's element write too (`t[i, j] = v`)
                 if isinstance(self.env.get(n), Var) and (wt.is_composite(self.env[n].type) or tiles.is_tile(self.env[n]))
                 or isinstance(self.env.get(n), tile_views.TileViewRef) or n not in self.env]  # (a view bound inside)
        for s in stmts:
            for n in ast.walk(s):
                if isinstance(n, ast.Call) and n.args:
                    obj = resolve_path(self.src.func, n.func)
                    if isinstance(n.args[0], ast.Name) and (getattr(obj, "_wp_stateful_", None)
                                                            or composite.is_in_place_setter(obj)):
                        found.append(n.args[0].id)
                    found += [n.args[k].id for k in geometry.OUT_ARGS.get(getattr(obj, "_wp_intrinsic_", None), ())
                              if k < len(n.args) and isinstance(n.args[k], ast.Name)]
                tile = getattr(resolve_path(self.src.func, n.func), "_wp_tile_", None) if isinstance(n, ast.Call) else None
                if tile is not None:
                    found += tiles.updated_names(n, tile)  # wp.tile_matmul(a, b, out) updates out
                    found += tile_algebra.updated_names(n, tile)  # wp.tile_axpy(alpha, src, dest) updates dest
        found += refs.updated_by_reference(self, stmts, lambda f: resolve_path(self.src.func, f))  # f(x): wp.ref
        return tile_views.updated_roots(self, found, stmts)  # (a view local's updates are its tile's)

    def not_jumped(self, flags=(BREAK, CONTINUE, RETURN)):
        """i1: no exit flag is set (None when no flag is live)."""
        result = None
        for f in flags:
            v = self.env.get(f)
            if isinstance(v, Var):
                nv = self.call_builtin(None, "bool_not", [v])
                result = nv if result is None else self.call_builtin(None, "bool_and", [result, nv])
        if result is None:
            return None if flags != (BREAK, CONTINUE, RETURN) else self.const(True, wt.bool_).value
        return result.value

    # -- expressions --------------------------------------------------------------------
    def expr(self, node, allow_none=False, allow_tuple=False) -> Var:
        handler = getattr(self, "expr_" + type(node).__name__, None)
        if handler is None:
            raise self.error(node, unsupported_message(node),
                             UnsupportedSyntaxError)
        with self.loc(node):
            try:
                v = handler(node)
            except StaticError as e:  # a wp.static() expression Python could not evaluate
                raise self.error(node, str(e), CompileError) from None
        if v is None and not allow_none:
            raise self.error(node, "this expression has no value", CompileError)
        if isinstance(v, list):  # several results of a @wp.func: a tuple
            v = TupleVar(v)
        if isinstance(v, TupleVar) and not allow_tuple:
            raise tuples.misuse(self, node, v)
        return v

    def tuple_values(self, node, count) -> list:
        if starred.has_starred(node):  # a, b = f(*v): the tuple paths below read the call's arguments themselves
            with starred.expanded(self, node) as call:
                return self.tuple_values(call, count)
        if isinstance(node, ast.Tuple):
            if len(node.elts) != count:
                raise self.error(node, f"cannot unpack {len(node.elts)} values into {count} names")
            return [self.expr(e, allow_tuple=True) for e in node.elts]
        parts = composite.tuple_call(self, node, count) if isinstance(node, ast.Call) else None
        if parts is not None:  # axis, angle = wp.quat_to_axis_angle(q)
            return parts
        parts = self.program.tuple_call(self, node, count)
        if parts is not None:  # a, b = f(x) with a @wp.func returning a tuple
            return parts
        if isinstance(node, ast.Call) and self.intrinsic(node.func) == "tid":
            with self.loc(node):
                return self.call_tid(node, count)
        v = self.expr(node, allow_tuple=True)
        if isinstance(v, TupleVar):  # a, b = t
            return tuples.unpack(self, node, v, count)
        raise self.error(node, f"cannot unpack a {ft.name(v.type)} into {count} names", CompileTypeError)

    def constant_locals(self) -> dict:
        """The locals wp.static() sees as Python values: those holding a literal (`n = 4`), as Warp's constant
        variables, and composites as stand-ins of their type's length (`wp.static(len(v))`, as Warp's len())."""
        out = {}
        for name, v in self.env.items():
            if type(v) is not Var:
                continue
            if v.literal is not None:
                out[name] = v.literal
            elif wt.is_composite(v.type) and not wt.is_struct(v.type):
                out[name] = _SizedStandIn(ft.name(v.type), wt.inner_shape(v.type)[0])
        return out

    def static_int(self, node):
        """A range() bound known at compile time: an int literal or `wp.static(...)` of an int or bool (Warp
        keeps a static bool's literal kind: range(wp.static(True)) is range(1)); else None."""
        found = int_literal(node)
        if found is None and is_static_call(self.src.func, node):
            value = static_value(self.src.func, node, self.static_scope())
            if isinstance(value, (bool, int)) and not isinstance(value, wt.scalar_base):
                found = int(value)
        return found

    def static_scope(self) -> dict:
        """The locals a wp.static() expression evaluated now sees."""
        return {**self.constant_locals(), **tiles.static_locals(self), **tuples.static_locals(self),
                **self.static_loop_values}

    def const(self, value, t) -> Var:
        mt = ft.to_mlir(t)
        if wt.is_float(t):
            return Var(arith.ConstantOp(mt, ir.FloatAttr.get(mt, float(value))).result, t)
        return Var(wb.int_constant(mt, int(bool(value)) if ir.IntegerType(mt).width == 1 else int(value)), t)

    def expr_Constant(self, node):
        v = node.value
        if isinstance(v, (bool, int, float)):  # marked as a literal: a wp.ref[T] argument cannot be one (refs.py)
            t = wt.bool_ if isinstance(v, bool) else wt.float32 if isinstance(v, float) else \
                wt.int32 if -(2 ** 31) <= v < 2 ** 31 else wt.int64
            c = self.const(v, t)
            c.literal = v
            return c
        raise self.error(node, f"unsupported constant {v!r} ({type(v).__name__})", UnsupportedSyntaxError)

    def expr_Name(self, node):
        v = self.env.get(node.id)
        if isinstance(v, (Var, TupleVar)):
            return v
        if isinstance(v, tile_views.TileViewRef):
            return tile_views.read_ref(self, node, v)
        for pending in reversed(self.loop_pending):  # a loop's first emission (emit_loop): any value will do
            if node.id in pending:
                if pending[node.id] is None:
                    raise self.error(node, f"'{node.id}' is read before any assignment to it in the loop; define "
                                           f"it before the loop", CompileError)
                zero = self.unassigned_value(pending[node.id])
                if zero is not None:
                    return zero
                break
        if isinstance(v, Unbound):
            raise self.error(node, v.reason, CompileError)
        return self.global_value(node, resolve_path(self.src.func, node))

    def expr_Attribute(self, node):
        rank = slicing.ndim_attribute(self, node) or ptr_arrays.ptr_attribute(self, node)  # a.ndim, a.ptr
        if rank is not None:
            return rank
        member = composite.attribute(self, node)  # v.x, t.p, p.pos
        if member is not None:
            return member
        if isinstance(node.value, ast.Name) and isinstance(self.env.get(node.value.id), Var):
            raise composite.not_an_attribute(self, node, self.env[node.value.id].type, node.attr)
        return self.global_value(node, resolve_path(self.src.func, node))

    def global_value(self, node, obj):
        """A captured Python value becomes a compile-time constant, as in Warp."""
        if obj is MISSING and isinstance(node, ast.Name):  # Warp's KeyError
            raise self.error(node, f"Referencing undefined symbol: {node.id}", CompileKeyError)
        if obj is MISSING:
            raise self.error(node, f"undefined name '{dotted_name(node)}'", CompileError)
        if isinstance(obj, (bool, int, float)):  # typed as the literal would be, and marked as one (wp.PI)
            return self.expr_Constant(ast.Constant(obj))
        if isinstance(obj, wt.scalar_base):
            return self.const(obj.value, type(obj))
        if wt.is_composite(type(obj)):
            return composite.constant(self, node, obj)
        if isinstance(obj, tuple):
            return tuples.from_global(self, node, obj)
        if self.program.is_function(obj) and not isinstance(obj, type) or getattr(obj, "_wp_builtin_", None) \
                or getattr(obj, "_wp_intrinsic_", None):  # a function as a value: g in f(g, x) (functions.py)
            return FunctionVar(obj)
        raise self.error(node, f"'{dotted_name(node)}' refers to a Python {type(obj).__name__}, which kernels "
                               f"cannot use", CompileError)

    def binop(self, node, opname, a: Var, b: Var) -> Var:
        if isinstance(a.type, ft.ArrayT) or isinstance(b.type, ft.ArrayT):
            raise self.error(node, f"operator '{opname}' is not defined for arrays", CompileTypeError)
        user = operators.user_overload(self, node, opname, [a, b])  # a @wp.func named `add`: operators.py
        return user if user is not None else self.call_builtin(node, opname, [a, b])

    def expr_BinOp(self, node):
        opname = _BINOPS.get(type(node.op))
        if opname is None:
            raise self.error(node, f"unsupported operator {type(node.op).__name__}", UnsupportedSyntaxError)
        return self.binop(node, opname, self.expr(node.left), self.expr(node.right))

    def expr_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            return self.call_builtin(node, "bool_not", [self.to_bool(self.expr(node.operand))])
        v = self.expr(node.operand)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.USub) and isinstance(v, Var) and type(v.literal) in (int, float):
            # -3, -wp.pi, -y (y = 0.1): a constant still, as Warp folds them, so wp.float64(-wp.pi) stays exact
            return self.expr_Constant(ast.Constant(-v.literal))
        return self.call_builtin(node, "neg" if isinstance(node.op, ast.USub) else "invert", [v])

    def expr_BoolOp(self, node):
        """`and`/`or` short-circuit, as in Python and Warp: an operand that calls or indexes (it may have
        effects or read out of bounds: `i < n and a[i] > 0`) runs under an scf.if; plain operands are
        combined without a branch."""
        is_and = isinstance(node.op, ast.And)
        name = "bool_and" if is_and else "bool_or"
        result = self.to_bool(self.expr(node.values[0]))
        for v in node.values[1:]:
            if not any(isinstance(n, (ast.Call, ast.Subscript)) for n in ast.walk(v)):
                result = self.call_builtin(node, name, [result, self.to_bool(self.expr(v))])
                continue
            evaluate = lambda v=v: self.to_bool(self.expr(v))  # noqa: E731
            decided = lambda: self.const(not is_and, wt.bool_)  # noqa: E731
            result = self.emit_branches(result.value, *((evaluate, decided) if is_and else (decided, evaluate)), node,
                                        what=f"the '{'and' if is_and else 'or'}'")
        return result

    def expr_Compare(self, node):
        result, left = None, self.expr(node.left)
        for op, comp in zip(node.ops, node.comparators):
            name = _CMPOPS.get(type(op))
            if name is None:
                raise self.error(node, f"unsupported comparison {type(op).__name__}", UnsupportedSyntaxError)
            right = self.expr(comp)
            if result is not None and left.type != right.type:  # as Warp, which chains only one type's operands
                raise self.error(node, f"Cannot chain comparisons of unequal types: {ft.name(left.type)} "
                                       f"{_CMP_SYMBOLS[type(op)]} {ft.name(right.type)}.", CompileTypeError)
            c = self.call_builtin(node, name, [left, right])
            result = c if result is None else self.call_builtin(node, "bool_and", [result, c])
            left = right
        return result

    def expr_IfExp(self, node):
        return self.emit_branches(self.condition(node.test), lambda: self.expr(node.body), lambda: self.expr(node.orelse),
                                  node, what="the conditional expression")

    def expr_Tuple(self, node):
        return tuples.build(self, node)  # (a, b): a tuple value (tuples.py)

    def expr_Subscript(self, node):
        base = node.value
        part = tuples.subscript(self, node)  # t[0], f(x)[1]
        if part is not None:
            return part
        if isinstance(base, ast.Attribute) and base.attr == "shape":
            arr = self.expr(base.value)
            if indexed.is_indexed(arr.type) and int_literal(node.slice) in range(arr.type._wp_indexed_[1]):
                return indexed.dim(arr, int_literal(node.slice))  # wp.indexedarray: indexed.py
            if isinstance(arr.type, ft.ArrayT):
                dim = int_literal(node.slice)
                if dim is not None and arr.type.ndim <= dim < 4:  # as Warp: the unused dimensions are 0
                    return self.const(0, wt.int32)
                if dim is None or not 0 <= dim < arr.type.ndim:
                    raise self.error(node, f"shape index must be a constant in 0..{arr.type.ndim - 1}")
                return Var(wb.array_dim(arr.value, dim), wt.int32)
        part = tile_views.subscript(self, node)  # t[i, j], t[i], t[a:b, :], t[indices, :], wp.tile_sum(t)[0]
        if part is not None:
            return part
        element = composite.subscript(self, node)  # v[0], m[i, j], m[i]
        if element is not None:
            return element
        if slicing.is_slicing(node):  # a[1:3], a[i, ::-1]: a strided view (slicing.py)
            arr = self.expr(node.value)
            if isinstance(arr.type, ft.ArrayT):
                return slicing.build(self, node, arr)
        arr, indices = self.array_access(node, allow_view=True)
        if indices is None:  # a[i] of a 2-d indexed array: its 1-d indexed row
            return arr
        if len(indices) < arr.type.ndim:  # a[i] of a 2-d array: its row, a 1-d array (as in Warp)
            return Var(wb.view(arr.value, indices), ft.ArrayT(arr.type.dtype, arr.type.ndim - len(indices)))
        return Var(wb.load(arr.value, indices), arr.type.dtype)

    def array_access(self, node: ast.Subscript, allow_view=False):
        """The array and i32 indices of `a[i, j]`; with `allow_view`, fewer indices than dimensions
        (the leading ones of a sub-array view)."""
        slot_element = slots.indexed_array(self, node)
        arr = self.expr(node.value)
        if indexed.is_indexed(arr.type):
            ndim = arr.type._wp_indexed_[1]
        elif fabric.is_fabric(arr.type):
            ndim = fabric.rank(self, node, arr.type)
        elif isinstance(arr.type, ft.ArrayT):
            ndim = arr.type.ndim
        else:
            raise self.error(node, f"cannot index a value of type {ft.name(arr.type)}", CompileTypeError)
        idx_nodes = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(i, ast.Slice) for i in idx_nodes):
            raise self.error(node, "unsupported: slicing an array inside a kernel", UnsupportedSyntaxError)
        if len(idx_nodes) > ndim:  # also `a2d[0][1, 2]`: the view a2d[0] is 1-d (Warp's text)
            raise self.error(node, slicing.too_many_indices(len(idx_nodes), ndim), CompileError)
        if len(idx_nodes) < ndim and not allow_view:
            raise self.error(node, f"a {ndim}-d array needs {ndim} indices, got "
                                   f"{len(idx_nodes)}", CompileError)
        indices = []
        for i in idx_nodes:
            v = self.expr(i)
            if not wt.is_int(v.type):
                raise self.error(i, slots.SLOT_INDICES if slot_element else
                                 f"array indices must be integers, got {ft.name(v.type)}", CompileTypeError)
            indices.append(wb.cast(v.value, ft.to_mlir(wt.int32)))
        if indexed.is_indexed(arr.type):  # data[i0[i] + i * u0, ...] (indexed.py)
            return indexed.access(self, node, arr, indices, allow_view)
        if fabric.is_fabric(arr.type):  # the element's bucket's memory (fabric.py)
            return fabric.access(self, node, arr, indices, allow_view)
        return arr, indices

    def expr_Call(self, node):
        if starred.has_starred(node):
            with starred.expanded(self, node) as call:
                return self.expr_Call(call)
        if is_static_call(self.src.func, node):  # wp.static(expr): a compile-time value
            return self.global_value(node, static_value(self.src.func, node, self.static_scope()))
        if isinstance(node.func, ast.Call) and grad_call.is_grad(resolve_path(self.src.func, node.func.func)):
            called = self.expr(node.func, allow_tuple=True)  # wp.grad(f)(x): a call of the function value it gave
            return grad_call.call(self, node, called.target)
        if isinstance(node.func, ast.Name) and grad_call.is_wrapper(self.env.get(node.func.id)):
            return grad_call.call(self, node, self.env[node.func.id].target)  # g = wp.grad(f); g(x)
        if is_static_call(self.src.func, node.func):  # wp.static(funcs[i])(...): evaluated with the constant
            obj = static_value(self.src.func, node.func, self.static_scope())  # locals (an unrolled loop's i)
        else:
            obj = self.local_type(node.func)  # a local shadows a global of the same name
        if isinstance(node.func, ast.Name) and isinstance(self.env.get(node.func.id), FunctionVar):
            obj = self.env[node.func.id].target  # g(x) for a function value g: a call of its target
            if not (self.program.is_function(obj) or getattr(obj, "_wp_builtin_", None)):
                raise self.error(node, f"'{node.func.id}' holds '{getattr(obj, '__name__', obj)}', which cannot be "
                                       f"called through a function value", CompileError)
        if obj is MISSING:
            obj = resolve_path(self.src.func, node.func)
        if grad_call.is_grad(obj):  # wp.grad(f): a function value (grad_call.py)
            return grad_call.wrapper(self, node)
        if composite.is_constructor(obj):  # wp.vec3(...), Particle(), wp.identity(n=3, dtype=float)
            return composite.construct(self, node, obj)
        if self.program.is_function(obj):  # a @wp.func (keyword arguments and defaults allowed)
            return self.program.call(self, node, obj)
        if getattr(obj, "_wp_dtype_dispatch_", None):  # wp.volume_lookup(..., dtype=T): dtype_dispatch.py
            return dtype_dispatch.call(self, node, obj)
        if getattr(obj, "_wp_stateful_", None):  # wp.randf(state): advances the state variable (random.py)
            return self.program.call_stateful(self, node, obj)
        if obj is print or getattr(obj, "_wp_intrinsic_", None) in printing.STATEMENTS:  # printing.py
            return printing.call(self, node, "print" if obj is print else obj._wp_intrinsic_)
        if getattr(obj, "_wp_local_array_", False):  # wp.zeros(shape, dtype): a fixed-size array (fixed.py)
            return fixed.zeros(self, node)
        if ptr_arrays.is_array_class(obj):  # wp.array(ptr=..., shape=..., dtype=...): over existing memory
            return ptr_arrays.construct(self, node)
        if getattr(obj, "_wp_native_barrier_", False):  # @wp.func_native("WP_TILE_SYNC();"): native.py
            if node.args or node.keywords:
                raise self.error(node, f"'{obj.key}' (a barrier snippet) takes no arguments", CompileTypeError)
            tiles.mark_cooperative(self)  # the block's lanes meet at it (Warp's CPU lanes; CUDA's block)
            tiles.sync(self)
            return None
        if native_calls.is_native(obj):  # @wp.func_native: its C++ compiled with the kernel (native_calls.py)
            return native_calls.call(self, node, obj)
        if getattr(obj, "_wp_removed_", None):  # e.g. wp.select: Warp's message points to the replacement
            raise self.error(node, obj._wp_removed_, CompileError)
        tile = getattr(obj, "_wp_tile_", None)
        if tile in tile_views.BUILTINS:  # wp.tile_view, wp.tile_extract (tile_views.py)
            return tile_views.call(self, node, tile)
        if tile is not None:  # wp.tile_load, wp.tile_matmul, ... (tiles.py); wp.tile_dot, ... (tile_algebra.py)
            return (tile_algebra if tile_algebra.handles(tile) else tiles).call(self, node, tile)
        if getattr(obj, "_wp_intrinsic_", None) == "cast":  # wp.cast(a, dtype): a's bits as a dtype (bitcast.py)
            return bitcast.call(self, node)
        if getattr(obj, "_wp_intrinsic_", None) == "breakpoint":  # wp.breakpoint(): see debug_break
            return self.debug_break(node)
        if obj is MISSING and node.keywords and self.intrinsic(node.func) is None:  # no such function: say so
            if isinstance(node.func, ast.Name):
                raise self.error(node, f"Referencing undefined symbol: {node.func.id}", CompileKeyError)
            raise self.error(node, missing_function_message(self.src.func, node.func), CompileAttributeError)
        if node.keywords:  # wp.pow(y=4.0, x=2.0): by Warp's parameter names (keywords.py)
            name = getattr(obj, "_wp_builtin_", None) or python_function_builtin(obj)
            if name is None:
                raise self.error(node, "unsupported: keyword arguments in a builtin call", UnsupportedSyntaxError)
            node = keywords.positional(self, node, name)
        if obj is len:
            return self.call_len(node)
        target = _CASTS.get(obj) if isinstance(obj, type) and obj in _CASTS else obj
        if wt.is_scalar(target):
            if not node.args:  # float32(): zero, as Warp's scalar constructors
                return self.const(0, target)
            if len(node.args) != 1:
                raise self.error(node, f"{ft.name(target)}() takes zero or one argument")
            # wp.float64(-0.3), wp.float64(wp.pi), wp.float64(y) with y = 0.1: one float64 constant, never a
            # float32 one widened; wp.int8(300) wraps to 44, as in Warp
            return self.convert(self.expr(node.args[0]), target, node)
        name = getattr(obj, "_wp_builtin_", None) or python_function_builtin(obj)
        if name is not None:
            return self.call_builtin(node, name, [self.expr(a) for a in node.args])
        intrinsic = self.intrinsic(node.func)
        if intrinsic == "tid":
            return self.call_tid(node, 1)[0]
        if intrinsic is not None and intrinsic.startswith("atomic_"):  # atomics.py: every wp.atomic_*
            return atomics.call(self, node, intrinsic[len("atomic_"):])
        if intrinsic in geometry.INTRINSICS:  # wp.hash_grid_query, wp.bvh_query_next, ... (geometry.py)
            return geometry.call(self, node, intrinsic, obj)
        if intrinsic == "unot":  # wp.unot(a): Warp's spelling of `not a`
            if len(node.args) != 1 or node.keywords:
                raise self.error(node, "unot(a) takes one argument", CompileTypeError)
            return self.call_builtin(node, "bool_not", [self.to_bool(self.expr(node.args[0]))])
        if intrinsic == "address_of":  # refs.py
            return refs.address_of(self, node)
        if intrinsic == "prefetch":  # hints.py
            return hints.prefetch(self, node)
        t = tuples.builtin_call(self, node)  # t = wp.quat_to_axis_angle(q)
        if t is not None:
            return t
        what = dotted_name(node.func)
        if obj is MISSING and isinstance(node.func, ast.Name):  # a name defined nowhere: Warp's KeyError
            raise self.error(node, f"Referencing undefined symbol: {node.func.id}", CompileKeyError)
        inner = node.func.func if isinstance(node.func, ast.Call) else None  # typez(i)(0): the inner name first
        if obj is MISSING and isinstance(inner, ast.Name) and inner.id not in self.env and \
                resolve_path(self.src.func, inner) is MISSING:
            raise self.error(node, f"Referencing undefined symbol: {inner.id}", CompileKeyError)
        if obj is MISSING:
            raise self.error(node, missing_function_message(self.src.func, node.func), CompileAttributeError)
        raise self.error(node, f"calling '{what}' ({type(obj).__name__}) is not supported in kernels: only "
                               f"Warp builtins and @wp.func functions can be called", CompileError)

    def local_type(self, node):
        """The type a type expression of local values denotes (`type(x)`, `a.dtype`: type_exprs.py), else
        MISSING."""
        return type_exprs.type_of(self, node)

    def literal_as(self, literal, target, node):
        """A Python literal converted as Warp's scalar constructors convert it: ints wrap to the target's width
        (const() keeps the low bits), floats round once to the target, float -> int truncates toward zero."""
        if target is wt.bool_:
            return bool(literal)
        if wt.is_float(target):
            return float(literal)
        if isinstance(literal, float):
            if literal != literal or literal in (float("inf"), float("-inf")):
                raise self.error(node, f"{ft.name(target)}({literal}) has no integer value", CompileError)
            return int(literal)
        return literal

    def call_len(self, node) -> Var:
        """`len(a)`: an array's first extent; `len(v)`: a vector's, quaternion's or matrix's first dimension (a
        constant), as in Warp."""
        if len(node.args) != 1:
            raise self.error(node, "len() takes exactly one argument")
        v = self.expr(node.args[0], allow_tuple=True)
        if isinstance(v, TupleVar):
            return self.const(tuples.length(v), wt.int32)
        if isinstance(v.type, ft.ArrayT):
            return Var(wb.array_dim(v.value, 0), wt.int32)
        if indexed.is_indexed(v.type):
            return indexed.dim(v, 0)
        if fabric.is_fabric(v.type):  # Warp's len() takes no Fabric array (its size: `a.size`)
            raise self.error(node, f"Couldn't find function overload for 'len' that matched inputs with types: "
                                   f"[{ft.name(v.type)}]", CompileTypeError)
        if wt.is_composite(v.type) and not wt.is_struct(v.type):
            return self.const(wt.inner_shape(v.type)[0], wt.int32)
        raise self.error(node, f"len() takes an array, a tuple, a vector, a quaternion or a matrix, not a "
                               f"{ft.name(v.type)}", CompileTypeError)

    def debug_break(self, node):
        """`wp.breakpoint()`: Warp's executes a trap instruction, which without an attached debugger ends the
        process (SIGTRAP). mlwarp compiles it to nothing and says so once per call site: a kernel a user launches
        never takes the process down (docs/surface.md lists it among the deliberate differences)."""
        if node.args or node.keywords:
            raise self.error(node, "wp.breakpoint() takes no arguments", CompileTypeError)
        warnings.warn_explicit("wp.breakpoint() does not stop in a debugger under mlwarp and is ignored (use "
                               "print() or wp.printf, or assert with wp.config.mode = 'debug')", UserWarning,
                               self.src.filename, self.src.file_line(node))
        return None

    def intrinsic(self, func_node):
        return getattr(resolve_path(self.src.func, func_node), "_wp_intrinsic_", None)

    def call_tid(self, node, count) -> list:
        if node.args:
            raise self.error(node, "wp.tid() takes no arguments")
        if not 1 <= count <= 4:
            raise self.error(node, f"wp.tid() gives 1 to 4 indices, not {count}")
        self.tid_dims = max(self.tid_dims, count)
        return [Var(v, wt.int32) for v in wb.tid(count)]

    def call_builtin(self, node, name, args) -> Var:
        if any(tiles.is_tile(a) for a in args):  # element-wise on tiles: a + b, t * 2.0, wp.sin(t) (tiles.py)
            return tiles.elementwise(self, node, name, args)
        if name == "where" and len(args) == 3 and isinstance(args[0].type, ft.ArrayT) and \
                not isinstance(args[0].type, getattr(ft, "IndexedArrayT", ())):
            # Warp's where(arr, a, b) (array.h): `a` unless the array's data pointer is null (None, empty)
            args = [Var(wb.cast(wb.array_data(args[0].value), ft.to_mlir(wt.uint64)), wt.uint64), *args[1:]]
        for a in args:
            if isinstance(a.type, ft.ArrayT):
                raise self.error(node, f"'{name}' does not take arrays", CompileTypeError)
        targets = converted_arg_types(name, [a.type for a in args])
        args = [a if a.type == t else self.cast(a, t, node) for a, t in zip(args, targets)]
        try:
            rt = resolve(name, [a.type for a in args])
        except TypeError as e:
            raise self.error(node, kernel_scope_message(name, [a.type for a in args], str(e)),
                             CompileTypeError) from None
        return Var(wb.builtin(name, [a.value for a in args], ft.to_mlir(rt)), rt)

    def convert(self, v: Var, to, node) -> Var:
        """`v` as a `to` where the program asks for that type (a scalar constructor, an annotation, a component
        or element store). A constant (a literal, a captured Python number such as wp.pi or wp.constant(0.1),
        wp.static(), a local bound to one) is still the Python number it was written as: Warp converts that
        number itself, so it is rounded once, to `to`, not through float32 or int32 first. Anything else is
        converted at run time. Operands of builtins keep cast(): there Warp's float literals are float32s."""
        if v.literal is not None and wt.is_scalar(v.type) and wt.is_scalar(to):
            value = self.literal_as(v.literal, to, node)
            if v.type is to and not wt.is_float(to) and type(value) is type(v.literal) and value == v.literal:
                # int(0): the constant already is that number (a float's literal is its unrounded text); the result
                # is no literal: int(-1) declares a variable, as Warp's constructors do
                return Var(v.value, to)
            return self.const(value, to)
        return self.cast(v, to, node)

    def cast(self, v: Var, to, node) -> Var:
        if isinstance(v.type, ft.ArrayT):
            raise self.error(node, f"cannot convert an array to {ft.name(to)}", CompileTypeError)
        if wt.is_composite(v.type) or wt.is_composite(to):
            return composite.convert(self, v, to, node)  # vec3 -> vec3d component-wise; else an error
        return Var(wb.cast(v.value, ft.to_mlir(to)), to)

    def to_bool(self, v: Var) -> Var:
        if isinstance(v.type, ft.ArrayT):
            # Warp: an array is true unless null; the launch passes None and empty arrays as null (no elements),
            # so here: true when no dimension is 0
            b = ft.to_mlir(wt.bool_)
            dims = [wb.cast(wb.array_dim(v.value, d), b) for d in range(v.type.ndim)]
            result = dims[0]
            for d in dims[1:]:
                result = wb.builtin("bool_and", [result, d], b)
            return Var(result, wt.bool_)
        return v if v.type is wt.bool_ else Var(wb.cast(v.value, ft.to_mlir(wt.bool_)), wt.bool_)

    def condition(self, node) -> ir.Value:
        return self.to_bool(self.expr(node)).value

    def type_from_expr(self, node):
        obj = resolve_path(self.src.func, node)
        t = ft.from_annotation(obj) if obj is not MISSING else None
        if t is None:
            raise self.error(node, f"unknown type annotation '{dotted_name(node)}'", CompileTypeError)
        return t


class _SizedStandIn:
    """What wp.static() sees of a vector, matrix, quaternion or transform local: its type's length."""

    def __init__(self, type_name, length):
        self.type_name, self.length = type_name, length

    def __len__(self):
        return self.length

    def __repr__(self):
        return f"<runtime {self.type_name}>"


def kernel_scope_message(name: str, arg_types, message: str) -> str:
    """A builtin's resolution error as Warp words it in a kernel: no overload for the arguments' types is
    "Couldn't find function overload for 'name' that matched inputs with types: [...]" there (the table words it as
    Warp's Python scope does), a wrong number of arguments included; its other errors (types that must be the same,
    ...) read the same in both."""
    if not message.startswith(("Couldn't find a function ", f"'{name}' takes ")):
        return message
    return (f"Couldn't find function overload for '{name}' that matched inputs with types: "
            f"[{', '.join(wt.type_repr(t) for t in arg_types)}]")
