"""warp-inline: replaces every `func.call` of a private function by a copy of its body, then erases the
private functions, so later passes (unrolling, autodiff, lowering) see each kernel as one function.

The frontend emits a @wp.func as a private `func.func` whose body is one block ending in `func.return`
(early returns are structured as scf flags), and refuses recursion, so inlining always terminates.
Upstream's `inline` pass cannot do this: warp ops have no inliner interface.
"""

from __future__ import annotations

from mlir import ir

from . import registry
from .registry import PassError
from .ir_walk import ops_named


def _symbol(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _callee(call) -> str:
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def inline_call(call, callee) -> list:
    """Inlines one call: clones the callee, moves its body before the call, wires arguments and results.
    Returns the ops moved (the callee's body, its return left out)."""
    blocks = list(callee.regions[0].blocks)
    if len(blocks) != 1:
        raise PassError(f"warp-inline: '{_symbol(callee)}' has {len(blocks)} blocks; only single-block "
                        f"(structured) functions can be inlined")
    copy = callee.clone(False)  # detached: only its body is moved into the caller
    body = copy.regions[0].blocks[0]
    for arg, operand in zip(body.arguments, call.operands):
        arg.replace_all_uses_with(operand)
    ret, moved = None, []
    for op in list(body.operations):
        if op.name == "func.return":
            ret = op
            break
        op.move_before(call)
        moved.append(op)
    if ret is None:
        raise PassError(f"warp-inline: '{_symbol(callee)}' does not end in func.return")
    for result, value in zip(call.results, ret.operands):
        result.replace_all_uses_with(value)
    call.erase()
    copy.erase()
    return moved


class Inline(registry.Inline):
    def run(self, module):
        private = {_symbol(f): f for f in ops_named(module, {"func.func"})
                   if "sym_visibility" in f.attributes
                   and ir.StringAttr(f.attributes["sym_visibility"]).value == "private"
                   and len(f.regions[0].blocks) > 0
                   and not _custom_grad_linked(f)}
        if not private:
            return
        # The calls of the module, then those of each body inlined (its own calls, inlined in turn): one walk of
        # the module and one of each copy (a walk per round of the module as it grows was a tenth of a mesh-query
        # kernel's passes). A copy nested deeper than there are functions means recursion.
        work = [(c, 0) for c in ops_named(module, {"func.call"}) if _callee(c) in private]
        while work:
            call, depth = work.pop()
            if depth > len(private):
                raise PassError("warp-inline: calls remain after inlining every private function (recursion?)")
            for op in inline_call(call, private[_callee(call)]):
                work += [(c, depth + 1) for c in ops_named(op, {"func.call"}) if _callee(c) in private]
        for f in private.values():  # (no call of them is left)
            f.erase()


def _custom_grad_linked(f) -> bool:
    """@wp.func_grad: a function and its custom adjoint stay until warp-autodiff has used them (@wp.func_replay: the
    same; the function a wp.grad(f) call calls, too: warp-autodiff sees that call as a constant)."""
    return any(a in f.attributes for a in ("warp.custom_grad", "warp.custom_grad_of", "warp.custom_replay",
                                           "warp.custom_replay_of", "warp.grad_of"))

