"""`if` statements and the scf.if every branch of the frontend becomes (conditional expressions, short-circuit
`and`/`or`, the rest of a block after a statement that may jump): both sides emitted, the locals either side
changed merged as the scf.if's results; and the exit flags ($break, $continue, $return) that guard code after
a jump.

Part of the kernel emitter (codegen.KernelEmitter mixes these methods in)."""

from __future__ import annotations

import ast

from mlir import ir
from mlir.dialects import scf

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileTypeError

from ..dialects.warp import builders as wb
from ..dialects.warp import composite as wc
from . import tiles, tuples
from . import geometry  # wp.hash_grid_query, wp.bvh_query_next, ...
from . import types as ft
from .resolve import is_static_call, static_value
from .syntax import continuation, read_before_bound
from .values import BREAK, CONTINUE, RETURN, Unbound, Var


class BranchEmitter:
    """`if`, emit_branches (every scf.if of the frontend) and the exit flags."""

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
            if x is y:  # unchanged, or a new local both branches bind to one value from before the if (`v = p`)
                merged[name] = x
                continue
            if isinstance(x, Var) != isinstance(y, Var) and (jumped_else or self.read_after(name, node)):
                # a local only one branch of an `if` assigns, read after it: Warp declares every local at the top
                # of the function, so the other path reads the declaration's value, zero for vectors, matrices,
                # structs and tiles (their constructors zero them), a null array of shape 0 for arrays, and
                # indeterminate for scalars (mlwarp: zero)
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
        for a type with no such value here (tuples: those stay refused). An array's is Warp's
        default-constructed array_t: no data, every dimension 0 (MuJoCo Warp binds a mesh's arrays in the branch
        for meshes and passes them on unread for other shapes)."""
        if isinstance(t, ft.ArrayT):
            null, empty = self.const(0, wt.int64).value, self.const(0, wt.int32).value
            return Var(wb.array_from_ptr(null, [empty] * t.ndim, ft.to_mlir(t.dtype)), t)
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
