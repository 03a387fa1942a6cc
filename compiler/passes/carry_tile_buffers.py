"""warp-carry-tile-buffers: a loop that hands a new tile buffer to its next iteration copies it into the buffer
it carries instead, so that no buffer outlives the iteration that allocated it.

one-shot-bufferize (`allow-return-allocs-from-loops`) gives a tile made in a loop's body, and yielded to the next
iteration, a fresh `memref.alloc` each iteration: a tile accumulated under a branch in a loop (`if c: acc += t`)
yields either the carried buffer or the new one. Nothing frees the buffer an iteration stops carrying (upstream's
ownership-based deallocation refuses the warp dialect's ops, whose memory effects are unknown), so every iteration
took heap that was never given back, and promote-buffers-to-stack keeps such a buffer on the heap because it leaves
the loop's body.

Here the loop's `scf.yield` copies each such value into the iteration's own buffer (the iter_arg; skipped at run
time when the value is that buffer) and yields the iter_arg: the loop carries one buffer, the one it was given
(one-shot-bufferize treats a loop's initial values as written, so that buffer is the loop's own). The new buffer
then dies with its iteration: promote-buffers-to-stack puts it on the stack and warp-hoist-tile-buffers moves it
to the function's top, one buffer for all iterations.

The copies are made one after the other, so a yielded value that may alias another iter_arg of the same loop (a
swap of two carried tiles) or that this walk cannot follow to its buffer keeps the loop's old form."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref, scf

from . import registry
from .ir_walk import ops_named

_FRESH = {"memref.alloc", "memref.alloca", "memref.get_global"}  # buffers that alias no iter_arg


def _sources_safe(value, loop, own) -> bool | None:
    """Whether every buffer `value` may be is a fresh one or the loop's own iter_arg `own` (None: it may be another
    iter_arg of the loop, or a value this walk does not follow)."""
    stack, seen = [value], set()
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if isinstance(v, ir.BlockArgument):
            if v == own:
                continue
            return None
        op = v.owner
        name = op.name
        if name in _FRESH:
            continue
        k = ir.OpResult(v).result_number
        if name == "scf.if":
            for region in op.regions:
                for block in region.blocks:
                    stack.append(block.operations[-1].operands[k])
        elif name == "arith.select":
            stack += [op.operands[1], op.operands[2]]
        elif name == "scf.for" and _carries_in_place(op, k):
            stack.append(op.operands[3 + k])  # the result is its initial value's buffer
        else:
            return None
    return True


def _carries_in_place(loop, k: int) -> bool:
    body = loop.regions[0].blocks[0]
    return body.operations[-1].operands[k] == body.arguments[k + 1]


def _address(buffer) -> ir.Value:
    return memref.ExtractAlignedPointerAsIndexOp(buffer).result


def carry_in_place(loop) -> None:
    body = loop.regions[0].blocks[0]
    yield_op = body.operations[-1]
    for k, value in enumerate(list(yield_op.operands)):
        own = body.arguments[k + 1]
        if value == own or not isinstance(value.type, ir.MemRefType):
            continue
        if not ir.MemRefType(value.type).has_static_shape or _sources_safe(value, loop, own) is None:
            continue
        with ir.InsertionPoint(yield_op), yield_op.location:
            differs = arith.CmpIOp(arith.CmpIPredicate.ne, _address(value), _address(own)).result
            branch = scf.IfOp(differs)
            with ir.InsertionPoint(branch.then_block):
                memref.CopyOp(value, own)
                scf.YieldOp([])
        yield_op.operands[k] = own


class CarryTileBuffers(registry.CarryTileBuffers):
    def run(self, module):
        # inner loops first: an outer loop's walk then sees an inner loop that carries its buffer in place
        for loop in reversed(ops_named(module, {"scf.for"})):
            carry_in_place(loop)
