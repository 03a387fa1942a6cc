"""`for` over range(...) / reversed(range(...)) and `while`: scf.for when the body cannot leave early, else
scf.while with the exit flags in its condition; loops over a constant range whose variable wp.static() reads
are unrolled. Names the body reassigns (or updates in place) are carried as the loop's iter_args.

Part of the kernel emitter (codegen.KernelEmitter mixes these methods in)."""

from __future__ import annotations

import ast

from mlir import ir
from mlir.dialects import arith, scf

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError, UnsupportedSyntaxError

from . import composite_constructors, refs, tile_calls, tiles, tuples
from . import geometry  # wp.hash_grid_query, wp.bvh_query_next, ...
from . import tile_views  # t[i], t[a:b, :], t[indices, :], wp.tile_view: views alias their tile
from . import types as ft
from .resolve import MISSING, is_static_call, resolve_path
from .syntax import (assigned_names, contains_return, int_literal, may_jump, member_write_roots, read_before_bound,
                     read_outside, walk)
from .values import BREAK, CONTINUE, RETURN, RETVAL, TupleVar, Unbound, Var


_MAX_STATIC_UNROLL = 4096  # iterations of a loop unrolled for wp.static() over its variable


class LoopEmitter:
    """`for` and `while` loops."""

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
                                                                for n in walk(call))
                    for call in walk(body))
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
            for n in walk(s):
                if isinstance(n, ast.Call) and n.args:
                    obj = resolve_path(self.src.func, n.func)
                    if isinstance(n.args[0], ast.Name) and (getattr(obj, "_wp_stateful_", None)
                                                            or composite_constructors.is_in_place_setter(obj)):
                        found.append(n.args[0].id)
                    found += [n.args[k].id for k in geometry.OUT_ARGS.get(getattr(obj, "_wp_intrinsic_", None), ())
                              if k < len(n.args) and isinstance(n.args[k], ast.Name)]
                tile = getattr(resolve_path(self.src.func, n.func), "_wp_tile_", None) if isinstance(n, ast.Call) else None
                if tile is not None:  # wp.tile_matmul(a, b, out) updates out, wp.tile_axpy(alpha, src, dest) dest
                    found += tile_calls.updated_names(n, tile)
        found += refs.updated_by_reference(self, stmts, lambda f: resolve_path(self.src.func, f))  # f(x): wp.ref
        return tile_views.updated_roots(self, found, stmts)  # (a view local's updates are its tile's)
