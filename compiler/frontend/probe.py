"""The result types of one call, as a kernel would see them: what `wp.map` allocates its outputs with.

`call_result_types(probe, arg_types)` takes a Python function whose body is the single statement
`return f(a0, ..., an)` (or `f(...)`), its parameters of the concrete types `arg_types`; it emits that call
(a @wp.func's specialization, a builtin's typing) into a throwaway module and returns the call's result
types: [] when it returns nothing, one per element of a tuple result. The frontend's errors (no overload
for those types, an error in the function's body) propagate as they would from a kernel.
"""

from __future__ import annotations

import ast
import gc

from mlir import ir
from mlir.dialects import func

from ..context import make_context
from .codegen import KernelEmitter
from .functions import Program
from .source import get_source
from . import types as ft
from .values import Var


def call_result_types(probe, arg_types: dict) -> list:
    try:
        return _emit(get_source(probe), arg_types)
    finally:
        gc.collect()  # no live context may outlast this call: the next compile forks (compiler/contained.py)


def _emit(source, arg_types: dict) -> list:
    tree = source.tree
    stmt = tree.body[0]
    call = stmt.value
    if len(tree.body) != 1 or not isinstance(stmt, (ast.Return, ast.Expr)) or not isinstance(call, ast.Call):
        raise ValueError(f"'{source.name}' must be a single `return f(...)` statement")
    ctx = make_context()
    with ctx, ir.Location.file(source.filename, source.first_line, 1):
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            em = KernelEmitter(source, arg_types, Program())
            names = [a.arg for a in tree.args.args]
            with em.loc(tree):
                f = func.FuncOp(source.name, ([ft.to_mlir(arg_types[n]) for n in names], []))
                entry = f.add_entry_block()
            em.program.kernel_op = f.operation
            with ir.InsertionPoint(entry), em.loc(call):
                for n, arg in zip(names, entry.arguments):
                    em.env[n] = Var(arg, arg_types[n])
                result = em.expr_Call(call)
    if result is None:
        return []
    return [v.type for v in result] if isinstance(result, list) else [result.type]
