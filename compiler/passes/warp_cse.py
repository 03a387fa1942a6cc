"""warp-cse: common-subexpression and dead-code elimination of warp ops, by the effects the op table declares.

Upstream `cse` and `canonicalize` leave warp ops alone: they erase or merge an op only when it says it has no
memory effects (the Pure trait or MemoryEffectOpInterface), and MLIR 22 gives an IRDL-defined op neither (IRDL
declares no traits, dynamic ops answer no trait query, and interfaces cannot be attached from Python). So the
table says it instead (`OpDef.effect`, rules.py): this pass reads it.

  - pure ops (a builtin, cast, extract, a tile op on values, tid, ...): one op of the same name, operands,
    attributes and result types earlier in the same block or an enclosing one (through structured control flow:
    scf, affine) stands for a later one; an unused one is erased;
  - reads (load, tile_load, geometry queries) and thread-local allocations (local_array, stack_array): erased
    when unused, never merged;
  - everything else (stores, atomics, asserts, barriers, tile_map, any non-warp op) is kept as it is.

Regions of other ops (func.func, gpu.func, ...) start afresh: a value of an enclosing block may not be visible
there (an op isolated from above), and this pass cannot ask MLIR which ops are.
"""

from __future__ import annotations

from collections import ChainMap

from mlir import ir

from ..dialects.warp.ops import BY_NAME
from ..dialects.warp.rules import ALLOC, ANY, PURE, READ
from . import registry

# ops whose regions see the values of the blocks around them (not isolated from above)
_SEES_OUTSIDE = {"scf.for", "scf.if", "scf.while", "scf.parallel", "scf.forall", "scf.execute_region",
                 "scf.index_switch", "affine.for", "affine.if", "affine.parallel"}
_ERASABLE = (PURE, READ, ALLOC)


def effect(op: ir.Operation) -> str:
    """The effect the op table declares for a warp op (a builtin-table op: pure); ANY for any other op."""
    name = op.name
    if not name.startswith("warp."):
        return ANY
    opdef = BY_NAME.get(name[len("warp."):])
    return PURE if opdef is None else opdef.effect


def _key(op: ir.Operation):
    attrs = op.attributes
    return (op.name, tuple(op.operands), tuple(r.type for r in op.results),
            tuple((a.name, a.attr) for a in (attrs[k] for k in range(len(attrs)))))


class WarpCse(registry.WarpCse):
    def run(self, module):
        for region in module.operation.regions:
            self._cse_region(region, ChainMap())
        for region in module.operation.regions:
            self._dce_region(region)

    def _cse_region(self, region, scope: ChainMap) -> None:
        for block in region.blocks:
            known = scope.new_child()
            for op in list(block.operations):
                op = op.operation
                inner = known if op.name in _SEES_OUTSIDE else ChainMap()
                for r in op.regions:
                    self._cse_region(r, inner)
                if len(op.regions) or effect(op) != PURE:
                    continue
                key = _key(op)
                same = known.get(key)
                if same is None:
                    known[key] = op
                    continue
                for mine, theirs in zip(op.results, same.results):
                    mine.replace_all_uses_with(theirs)
                op.erase()

    def _dce_region(self, region) -> None:
        for block in region.blocks:
            for op in reversed(list(block.operations)):  # users first: a chain of dead ops goes in one sweep
                op = op.operation
                for r in op.regions:
                    self._dce_region(r)
                if len(op.results) and effect(op) in _ERASABLE and not len(op.regions) and \
                        all(not any(True for _ in r.uses) for r in op.results):
                    op.erase()
