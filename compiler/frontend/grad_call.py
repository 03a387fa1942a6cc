"""`wp.grad(f)(args...)` in kernel code (Warp 1.19's grad()): the adjoint of each input of f, the adjoint of its
result(s) seeded to ones (`T(1)` of each result type) and the inputs' adjoints starting at zero; one value for one
input, a tuple for several.

`wp.grad(f)` is a function value (a FunctionVar whose target is a mlwarp.kernels.grad_call.GradWrapper): called at once, or
bound to a local and called later (Warp refuses rebinding that local to anything but another wp.grad(...)).
Calling it emits, next to the kernel,
  - f's specialization for the argument types (a @wp.func: functions.specialize; a builtin: a private function
    whose body is the one builtin op, so its derivative rule is the builtin table's),
  - a body-less private function `@<f>_grad_N(args) -> (adjoints)` with `warp.grad_of = @<f's symbol>`,
and a `func.call` of the latter. The pass warp-grad-calls (passes/grad_calls.py) gives it its body: f's forward
replay then the reverse sweep of warp-autodiff (or f's @wp.func_grad adjoint). The call is forward-only: in a
kernel with a backward pass its results are constants (warp-autodiff replays the call and sends no adjoint
through it), and the build warns, with Warp's message.
"""

from __future__ import annotations

import ast

from mlir import ir
from mlir.dialects import func

from mlwarp.core.grad_wrapper import GradWrapper
from mlwarp.core.errors import CompileError, CompileTypeError

from ..builtins.derivatives import NOT_DIFFERENTIABLE, rule_of
from . import keywords
from . import types as ft
from .resolve import MISSING, resolve_path
from .values import FunctionVar, TupleVar, Var

GRAD_OF = "warp.grad_of"  # on the generated function: the symbol of the function it is the gradient of


def is_grad(obj) -> bool:
    """`wp.grad` itself (python/mlwarp/kernels/grad_call.py marks it)."""
    return getattr(obj, "_wp_grad_", False) is True


def is_wrapper(v) -> bool:
    """A local or value holding `wp.grad(f)`."""
    return isinstance(v, FunctionVar) and isinstance(v.target, GradWrapper)


def reassign_message(name: str) -> str:
    return (f"Cannot reassign local '{name}' after binding it to wp.grad(...). Warp treats wp.grad(...) results as "
            f"static function handles; use a different local variable for the new value.")


def _is_target(obj) -> bool:
    return (getattr(obj, "_wp_function_", False) is True and not isinstance(obj, type)) \
        or getattr(obj, "_wp_builtin_", None) is not None


def wrapper(em, node: ast.Call) -> FunctionVar:
    """`wp.grad(f)`: a function value."""
    if len(node.args) != 1 or node.keywords:
        raise em.error(node, "grad() expects exactly one function argument", CompileError)
    arg = node.args[0]
    local = em.env.get(arg.id) if isinstance(arg, ast.Name) else None
    if isinstance(local, FunctionVar):
        target = local.target
    elif local is not None:
        target = local  # a value: a Var (Warp's message names its Var)
    elif isinstance(arg, (ast.Name, ast.Attribute)) and resolve_path(em.src.func, arg) is not MISSING:
        target = resolve_path(em.src.func, arg)
    else:
        v = em.expr(arg, allow_tuple=True)
        target = v.target if isinstance(v, FunctionVar) else v
    if not _is_target(target):
        got = "Var" if isinstance(target, (Var, TupleVar)) else type(target).__name__
        raise em.error(node, f"grad() expects a Warp function, got {got}", CompileError)
    return FunctionVar(GradWrapper(target))


def call(em, node: ast.Call, grad_wrapper):
    """`wp.grad(f)(args...)`: a Var, or a list of Vars (a tuple) for several inputs."""
    target = grad_wrapper.func
    if getattr(target, "_wp_builtin_", None) is not None:
        key, symbol, args = _builtin_target(em, node, target._wp_builtin_)
    else:
        key, symbol, args = em.program.grad_target(em, node, target)  # (functions.py: it specializes f)
    program = em.program
    if not getattr(em.src.func, "_wp_custom_adjoint_", False):  # (a @wp.func_grad body's calls are its adjoint)
        program.grad_warnings.append(
            f'grad() call for function "{key}" is used in a kernel with enable_backward=True. The gradient call '
            f'does NOT participate in automatic differentiation - gradients will not flow through this call in the '
            f'backward pass.')
    inputs = [a for a in args if not isinstance(a, FunctionVar)]  # (function parameters have no adjoint)
    cached = program.grad_functions.get(symbol)
    if cached is None:
        types = [ft.to_mlir(a.type) for a in inputs]
        cached = program.fresh_symbol(f"{symbol}_grad")
        with ir.InsertionPoint(program.kernel_op), em.loc(node):
            f = func.FuncOp(cached, (types, types), visibility="private")
        f.attributes[GRAD_OF] = ir.FlatSymbolRefAttr.get(symbol)
        program.grad_functions[symbol] = cached
    with em.loc(node):
        op = func.CallOp([ft.to_mlir(a.type) for a in inputs], ir.FlatSymbolRefAttr.get(cached),
                         [a.value for a in inputs])
    results = [Var(r, a.type) for r, a in zip(op.results, inputs)]
    return results[0] if len(results) == 1 else results


def check_inputs(em, node, key, args):
    for a in args:
        if isinstance(a, FunctionVar):
            continue
        if isinstance(a, TupleVar) or not isinstance(a, Var):
            raise em.error(node, f"mlwarp: wp.grad('{key}') takes no tuple arguments", CompileTypeError)
        if isinstance(a.type, ft.ArrayT) or not ft.to_mlir(a.type):
            raise em.error(node, f"mlwarp: wp.grad('{key}') takes values, not arrays: an array argument has no "
                                 f"adjoint value to return", CompileTypeError)


def _builtin_target(em, node, name):
    """A builtin: a private function `(args) -> result` whose body is the builtin's call (one per name and types)."""
    if node.keywords:
        node = keywords.positional(em, node, name)
    args = [em.expr(a) for a in node.args]
    check_inputs(em, node, name, args)
    program = em.program
    key = ("builtin", name, tuple(a.type for a in args))
    found = program.grad_targets.get(key)
    if found is not None:
        return name, found, args
    symbol = program.fresh_symbol(f"builtin_{name}")
    types = [ft.to_mlir(a.type) for a in args]
    with ir.InsertionPoint(program.kernel_op), em.loc(node):
        f = func.FuncOp(symbol, (types, []), visibility="private")
        entry = f.add_entry_block()
    with ir.InsertionPoint(entry), em.loc(node):
        out = em.call_builtin(node, name, [Var(v, a.type) for v, a in zip(entry.arguments, args)])
        owner = out.value.owner if isinstance(out.value, ir.OpResult) else None
        rule = rule_of(name, [v.type for v in owner.operands]) \
            if owner is not None and owner.name == f"warp.{name}" else None
        if rule is NOT_DIFFERENTIABLE or not getattr(rule, "differentiable", True):  # the builtin table's word
            f.operation.erase()
            raise em.error(node, f"Cannot compute gradient of non-differentiable function '{name}'", CompileError)
        func.ReturnOp([out.value])
    f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, [out.value.type]))
    program.grad_targets[key] = symbol
    return name, symbol, args


__all__ = ["GRAD_OF", "call", "is_grad", "is_wrapper", "reassign_message", "wrapper"]
