"""@wp.func_grad in the frontend: a called @wp.func with a custom adjoint is emitted together with that
adjoint (an ordinary @wp.func made by python/mlwarp/kernels/func_grad.py, called with the arguments and the result's
adjoint; functions.specialize emits both), and `link` makes the two private functions point at each other:
  warp.custom_grad = @<adjoint>   on the function: warp-autodiff calls the adjoint in the reverse sweep
  warp.custom_grad_of = @<func>   on the adjoint
warp-inline leaves marked functions alone until warp-autodiff has used (and removed) the marks."""

from __future__ import annotations

from mlir import ir

CUSTOM_GRAD = "warp.custom_grad"
CUSTOM_GRAD_OF = "warp.custom_grad_of"
CUSTOM_REPLAY, CUSTOM_REPLAY_OF = "warp.custom_replay", "warp.custom_replay_of"  # @wp.func_replay, the same way


def _function_op(kernel_op, symbol):
    """The function `symbol` among the kernel's siblings (walking back from the kernel: they precede it)."""
    for o in kernel_op.operation.block.operations:
        o = o.operation  # (a FuncOp view's `.name` is its symbol)
        if o.name == "func.func" and ir.StringAttr(o.attributes["sym_name"]).value == symbol:
            return o
    raise KeyError(f"no function @{symbol} next to the kernel")


def link(kernel_op, symbol: str, grad_symbol: str) -> None:
    """Marks the specialization `symbol` and its custom adjoint `grad_symbol` (both next to the kernel) as a pair."""
    _function_op(kernel_op, symbol).attributes[CUSTOM_GRAD] = ir.FlatSymbolRefAttr.get(grad_symbol)
    _function_op(kernel_op, grad_symbol).attributes[CUSTOM_GRAD_OF] = ir.FlatSymbolRefAttr.get(symbol)


def link_replay(kernel_op, symbol: str, replay_symbol: str) -> None:
    """Marks the specialization `symbol` and its @wp.func_replay `replay_symbol`: warp-autodiff's forward replay
    calls the replay instead (warp-inline leaves both alone until then)."""
    _function_op(kernel_op, symbol).attributes[CUSTOM_REPLAY] = ir.FlatSymbolRefAttr.get(replay_symbol)
    _function_op(kernel_op, replay_symbol).attributes[CUSTOM_REPLAY_OF] = ir.FlatSymbolRefAttr.get(symbol)
