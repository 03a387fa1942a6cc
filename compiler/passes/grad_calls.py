"""warp-grad-calls: the bodies of the functions `wp.grad(f)` calls (Warp 1.19's grad(); frontend/grad_call.py).

The frontend declares, for f's specialization `@f(args) -> (results)`, a body-less private function

    func.func private @f_grad(args) -> (one adjoint per argument) attributes {warp.grad_of = @f}

and this pass gives it its body, with warp-autodiff's reverse sweep (ReverseBuilder: the builtin table's
derivative rules, loops, branches, composites):
  - f has a @wp.func_grad adjoint (warp.custom_grad): a call of it with the arguments and ones as the results'
    adjoints (Warp uses the custom adjoint);
  - otherwise: f's body (with the @wp.func calls in it inlined; calls of @wp.func_grad functions are kept, as
    warp-autodiff keeps them) replayed, then reversed with each result's adjoint seeded to ones (`T(1)`: every
    component of a vector, matrix or quaternion is 1) and every argument's adjoint starting at zero; it returns
    the arguments' adjoints (zero for an argument without a derivative, e.g. an int).
It runs before warp-inline. The function stays marked `warp.grad_of` until warp-autodiff has run: warp-inline leaves
it (so the kernel's backward pass sees one call), warp-autodiff replays the call and sends no adjoint through it
(Warp's grad() is forward-only), then drops the mark so the next warp-inline inlines it.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func

from ..dialects.warp import composite as wc
from ..dialects.warp import builders as wb
from .autodiff import ReverseBuilder, custom_grads, symbol
from .autodiff_ir import body_ops, clone_ops, is_diff, terminator
from .inline import inline_call
from . import registry
from .registry import PassError
from .ir_walk import ops_named

GRAD_OF = "warp.grad_of"
# what marks a function warp-inline must leave alone while this pass or warp-autodiff needs it as it is
_KEPT = ("warp.custom_grad", "warp.custom_grad_of", "warp.custom_replay", "warp.custom_replay_of", GRAD_OF)


def ones(t: ir.Type) -> ir.Value:
    """T(1): 1 for a scalar, every component 1 for a vector, matrix or quaternion (Warp's seed of adj_ret)."""
    if isinstance(t, ir.FloatType):
        return arith.ConstantOp(t, ir.FloatAttr.get(t, 1.0)).result
    c = wc.composite(t)
    if c is None:
        if isinstance(t, ir.IntegerType):
            signless = ir.IntegerType.get_signless(t.width)
            return wb.cast(arith.ConstantOp(signless, ir.IntegerAttr.get(signless, 1)).result, t)
        raise PassError(f"warp-grad-calls: cannot seed an adjoint of type {t}")
    if c.kind == "struct":
        return wc.construct(t, [ones(f) for f in c.fields])
    n = 1
    for d in c.shape:
        n *= d
    return wc.construct(t, [ones(c.dtype)] * n)


def _function_type(f) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)


def _inlinable(f) -> bool:
    return len(f.regions[0].blocks) > 0 and not any(a in f.attributes for a in _KEPT)


def _inline_calls(work, funcs: dict) -> None:
    """Inlines the calls of plain private functions in `work`, theirs too (the frontend refuses recursion)."""
    for _ in range(len(funcs) + 1):
        calls = [c for c in ops_named(work, {"func.call"})
                 if (callee := ir.FlatSymbolRefAttr(c.attributes["callee"]).value) in funcs and _inlinable(funcs[callee])]
        if not calls:
            return
        for c in calls:
            inline_call(c, funcs[ir.FlatSymbolRefAttr(c.attributes["callee"]).value])
    raise PassError("warp-grad-calls: calls remain after inlining every function (recursion?)")


def build_gradient(g, primal, funcs: dict, grads: dict) -> None:
    """Gives the declaration `g` (warp.grad_of = @primal) its body; see the module's text."""
    inputs = list(_function_type(g).inputs)
    if list(_function_type(primal).inputs) != inputs:
        raise PassError(f"warp-grad-calls: @{symbol(g)} takes ({', '.join(map(str, inputs))}), "
                        f"@{symbol(primal)} ({', '.join(map(str, _function_type(primal).inputs))})")
    with g.location:
        entry = g.regions[0].blocks.append(*inputs)
    with ir.InsertionPoint(entry), g.location:
        custom = grads.get(symbol(primal))
        if custom is not None:
            seeds = [ones(t) for t in _function_type(primal).results]
            call = func.CallOp(list(_function_type(custom).results), ir.FlatSymbolRefAttr.get(symbol(custom)),
                               list(entry.arguments) + seeds)
            func.ReturnOp(list(call.results))
            return
        work = primal.clone(False)  # detached: the calls in it inlined, then replayed and reversed here
        try:
            _inline_calls(work, funcs)
            block = work.regions[0].blocks[0]
            mapping = dict(zip(block.arguments, entry.arguments))
            ops = body_ops(block)
            clone_ops(ops, mapping)
            adj = {}
            for v in terminator(block).operands:
                if is_diff(v.type):  # (an int result has no adjoint)
                    ReverseBuilder.accumulate(adj, v, ones(v.type))
            ReverseBuilder({}, frozenset(), grads, constant_calls=gradient_functions(funcs)).reverse(ops, mapping, adj)
            func.ReturnOp([ReverseBuilder.adj_or_zero(adj, a) for a in block.arguments])
        finally:
            work.erase()


def gradient_functions(funcs: dict) -> frozenset:
    """The symbols of the functions that wp.grad calls call (forward-only: no adjoint flows through them)."""
    return frozenset(name for name, f in funcs.items() if GRAD_OF in f.attributes)


class GradCalls(registry.GradCalls):
    def run(self, module):
        funcs = {symbol(f): f for f in ops_named(module, {"func.func"})}
        grads = custom_grads(module)
        for f in list(funcs.values()):
            if GRAD_OF in f.attributes and not f.regions[0].blocks:
                primal = funcs.get(ir.FlatSymbolRefAttr(f.attributes[GRAD_OF]).value)
                if primal is None:
                    raise PassError(f"warp-grad-calls: @{symbol(f)} is the gradient of "
                                    f"{f.attributes[GRAD_OF]}, which the module does not define")
                build_gradient(f, primal, funcs, grads)
