"""@wp.func_grad in the frontend: a called @wp.func with a custom adjoint is emitted together with that
adjoint (an ordinary @wp.func made by mlwarp/func_grad.py, called with the arguments and the result's
adjoint), and the two private functions point at each other by attributes:
  warp.custom_grad = @<adjoint>   on the function: warp-autodiff calls the adjoint in the reverse sweep
  warp.custom_grad_of = @<func>   on the adjoint
warp-inline leaves marked functions alone until warp-autodiff has used (and removed) the marks."""

from __future__ import annotations

from mlir import ir

CUSTOM_GRAD = "warp.custom_grad"
CUSTOM_GRAD_OF = "warp.custom_grad_of"


def _function_op(kernel_op, symbol):
    """The function `symbol` among the kernel's siblings (walking back from the kernel: they precede it)."""
    for o in kernel_op.operation.block.operations:
        o = o.operation  # (a FuncOp view's `.name` is its symbol)
        if o.name == "func.func" and ir.StringAttr(o.attributes["sym_name"]).value == symbol:
            return o
    raise KeyError(f"no function @{symbol} next to the kernel")


def attach(em, node, function, arg_types, spec) -> None:
    """Emits the custom adjoint of `function` (if it has one) for this specialization and links them."""
    grad = getattr(function, "custom_grad", None)
    if grad is None:
        return
    from .functions import specialize

    gspec = specialize(em, node, grad, grad.overloads[-1], list(arg_types) + list(spec.result_types))
    primal = _function_op(em.program.kernel_op, spec.symbol)
    primal.attributes[CUSTOM_GRAD] = ir.FlatSymbolRefAttr.get(gspec.symbol)
    _function_op(em.program.kernel_op, gspec.symbol).attributes[CUSTOM_GRAD_OF] = ir.FlatSymbolRefAttr.get(spec.symbol)
