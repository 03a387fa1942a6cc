"""warp-hoist-tile-buffers: a tile buffer allocated on the stack inside a loop or a branch moves to the top of its
function, unless the iteration carries it on.

promote-buffers-to-stack turns the bufferized tiles into `memref.alloca`s where bufferization put them: a tile made
in a loop's body (a tile_load each iteration) is an alloca inside the loop, which LLVM's stack allocation makes anew
every iteration without freeing it until the function returns. upstream buffer-loop-hoisting moves an allocation
out of a loop only when it is directly in the loop's body, not under an scf.if in it, so Warp's
example_tile_block_cholesky.py (its tile loads under `if k > 0` inside the K loop) took 3 KiB of stack per iteration
and overflowed a worker thread's stack at n = 1000.

An alloca of static shape whose buffer (or a view, cast or select of it) never reaches an scf.yield, an
scf.condition, a loop's initial values or a return is dead at the end of the iteration that allocated it: one buffer
for every iteration (and every thread: warp-cpu-entry then finds it at the top) holds the same values. One that an
iteration hands on (a loop-carried tile) stays where it is."""

from __future__ import annotations

from mlir import ir

from . import registry
from .ir_walk import ops_named

# ops whose result is the same buffer (or part of it)
_ALIASING = {"arith.select", "memref.cast", "memref.subview", "memref.collapse_shape", "memref.expand_shape",
             "memref.reinterpret_cast", "memref.memory_space_cast", "memref.transpose", "memref.view"}
_LOOPS = {"scf.for", "scf.while", "scf.parallel", "scf.forall"}


def _encloses(op, inner) -> bool:
    p = inner.parent
    while p is not None and p.name != "builtin.module":
        if p == op:
            return True
        p = p.parent
    return False


def _carried_on(alloca) -> bool:
    """Whether the buffer (or an alias: a view, a select, a loop's or a branch's value it flows into) outlives
    the iteration of a loop around the alloca that made it: yielded to that loop's next iteration, returned, or
    reaching an op that this walk does not follow."""
    stack, seen = [alloca.results[0]], set()
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        for use in v.uses:
            user = use.owner
            name = user.name
            if name in _ALIASING:
                stack += list(user.results)
            elif name == "scf.yield":
                parent = user.parent
                if parent.name in _LOOPS and _encloses(parent, alloca):
                    return True  # the next iteration gets it
                k = use.operand_number
                stack.append(parent.results[k])
                if parent.name == "scf.for":
                    stack.append(parent.regions[0].blocks[0].arguments[k + 1])
            elif name == "scf.for" and use.operand_number >= 3:  # an initial value: the iter_arg, the result
                k = use.operand_number - 3
                stack += [user.regions[0].blocks[0].arguments[k + 1], user.results[k]]
            elif name in ("scf.condition", "scf.while", "func.return", "llvm.return", "func.call", "scf.parallel",
                          "scf.forall", "scf.reduce", "memref.dealloc"):
                return True
    return False


class HoistTileBuffers(registry.HoistTileBuffers):
    def run(self, module):
        for fn in ops_named(module, {"func.func"}):
            if not fn.regions[0].blocks:
                continue
            entry = fn.regions[0].blocks[0]
            first = next(iter(entry.operations), None)
            if first is None:
                continue
            for alloca in ops_named(fn, {"memref.alloca"}):
                if alloca.parent == fn or list(alloca.operands) or _carried_on(alloca):
                    continue
                if not ir.MemRefType(alloca.results[0].type).has_static_shape:
                    continue
                alloca.move_before(first)
