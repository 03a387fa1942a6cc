"""warp-tag-fusion-producers and warp-erase-fused-producers: around upstream linalg-fuse-elementwise-ops, so that
an element-wise tile op fused into its consumer runs once.

The fusion clones a producer's body into its consumer (tile_map into the tile_sum that reads it) and leaves the
producer to be erased as dead. MLIR erases an op only when it knows it has no effects; a body of warp-dialect ops
(whose effects MLIR does not know), or one that writes memory (a mesh query's traversal stack, an atomic, a printf),
survives with its results dropped, and every element is computed twice: the second copy's stores and atomics happen
twice, and Warp's example_tile_mcgp.py walked every random path twice (2x its run time).

The first pass gives each linalg.generic that the fusion may take (read, and only by linalg.generic ops) a number,
written on the ops of its body (PRODUCER_ATTR): the fusion's clones of them carry it too, into the fused op and
into the op that one is fused into in turn. The second erases a linalg.generic left without results whose number
is also on ops outside it: a reader took a copy of its body, effects included, so nothing it did is lost. A tile op
that nothing reads (a tile_map kept for its effects) gets no number and stays. The numbers are removed after."""

from __future__ import annotations

from mlir import ir

from . import registry
from .ir_walk import ops_named

PRODUCER_ATTR = "warp.fusion_producer"


def _is_read(op) -> bool:
    return any(True for r in op.results for _ in r.uses)


def _fusable_producer(op) -> bool:
    """Read, and only by linalg.generic ops that are read themselves (a reader the fusion erases as dead would
    take the producer's readers away without a copy of its body)."""
    readers = [use.owner for r in op.results for use in r.uses]
    return bool(readers) and all(u.name == "linalg.generic" and _is_read(u) for u in readers)


def _body_ops(generic) -> list:
    """The ops of a linalg.generic's body, its terminator left out (the fusion makes its own)."""
    return list(generic.regions[0].blocks[0].operations)[:-1]


class TagFusionProducers(registry.TagFusionProducers):
    def run(self, module):
        i64 = ir.IntegerType.get_signless(64)
        for number, op in enumerate(o for o in ops_named(module, {"linalg.generic"}) if _fusable_producer(o)):
            for body_op in _body_ops(op):
                body_op.attributes[PRODUCER_ATTR] = ir.IntegerAttr.get(i64, number)


class EraseFusedProducers(registry.EraseFusedProducers):
    def run(self, module):
        owner_of = {}  # number -> the op each op carrying it is directly in
        for op in ops_named(module, lambda name: True):
            if PRODUCER_ATTR in op.attributes:
                number = ir.IntegerAttr(op.attributes[PRODUCER_ATTR]).value
                owner_of.setdefault(number, []).append(op.parent.operation)
        for generic in ops_named(module, {"linalg.generic"}):
            if list(generic.results) or _is_read(generic):
                continue
            numbers = {ir.IntegerAttr(o.attributes[PRODUCER_ATTR]).value for o in _body_ops(generic)
                       if PRODUCER_ATTR in o.attributes}
            if any(any(parent != generic.operation for parent in owner_of[n]) for n in numbers):
                generic.erase()
        for op in ops_named(module, lambda name: True):
            if PRODUCER_ATTR in op.attributes:
                del op.attributes[PRODUCER_ATTR]
