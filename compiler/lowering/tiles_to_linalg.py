"""convert-warp-tiles-to-linalg: Warp's tiles as tensors, their ops as linalg and tensor ops.

A `!warp.tile<T, array<i64: M, N>>` becomes `tensor<MxNxT>` (block arguments and loop results too), and:

  warp.tile_load(a, offsets)      tensor.generate: element (i, j) is a[off0 + i, off1 + j], or zero past the
                                  array's upper extent (Warp's bounds_check)
  warp.tile_store(a, t, offsets)  a loop nest over the tile: tensor.extract, warp.store where inside the array
  warp.tile_full(v)               tensor.splat
  warp.tile_arange(start, step)   tensor.generate: start + i * step
  warp.<builtin>(tiles, scalars)  linalg.generic, every map the identity, the builtin on elements in its body
  warp.tile_reduce {kind}         linalg.generic reducing every dimension into a 0-d tensor (in row-major
                                  order, as Warp's CPU loop), then a tensor of shape (1,)
  warp.tile_matmul(a, b, acc)     linalg.generic (m, k, n): acc[m, n] += a[m, k] * b[k, n], n innermost (it
                                  vectorises), each element summed in increasing k; with float32 or float64
                                  operands alike, arith.mulf/addf in its body and `warp.tile_matmul` on it
                                  (the CPU's warp-cpu-vectorize-tile-matmul makes it register-blocked FMAs)
  warp.tile_transpose / broadcast linalg.generic with the transposing / broadcasting input map
  warp.tile_extract / insert      tensor.extract / tensor.insert

The element computations stay warp builtins (warp.add, warp.max, warp.sin, ...), which
convert-warp-builtins-to-arith lowers with the rest. Bufferization (one-shot-bufferize, the CPU stage
table's "tiles" stage) then gives each tile a buffer: an accumulator updated in a loop is updated in place.
Ops without tiles are left alone.
"""

from __future__ import annotations

from mlir import ir

from ..builtins.tile_table import TILE_OPS
from ..dialects.warp import is_tile_type
from ..dialects.warp.views import view
from .tile_lowering import element_of, tensor_type
from .tiles_algebra import AlgebraLowering
from .tiles_memory import MemoryLowering
from .tiles_reductions import ReductionLowering
from .tiles_shapes import ShapeLowering
from ..passes import registry
from ..passes.registry import PassError
from ..passes.ir_walk import ops_named

# On the module: the first tile op (or builtin) whose lowering assumes one lane per block (wp.tile, tile_sort, ...),
# set here or by the frontend. warp-gpu-cooperative-tiles leaves such a module's kernels one thread per block.
ONE_LANE_ATTR = "warp.one_lane_tiles"
# The tile ops whose lowerings are linalg ops, copies, tile-write nests (TILE_WRITE_ATTR) and element reads only
# (the tile table's `spreads`): what warp-gpu-cooperative-tiles can spread over a block's lanes. Builtins on tiles
# (warp.add(tile, tile)) too.
COOPERATIVE_TILE_OPS = frozenset(op.name for op in TILE_OPS.values() if op.spreads)


def _one_lane_name(op) -> str | None:
    """What to call `op` if its lowering assumes one lane per block (ONE_LANE_ATTR), else None."""
    name = op.name[len("warp."):]
    if not op.name.startswith("warp.tile_"):
        return None
    if name not in COOPERATIVE_TILE_OPS:
        return name
    if TILE_OPS[name].spreads_unread and any(True for r in op.results for _ in r.uses):
        return f"{name}'s result"
    return None


def _has_tiles(op) -> bool:
    return any(is_tile_type(v.type) for v in list(op.operands) + list(op.results))


class _Lowering(MemoryLowering, ShapeLowering, ReductionLowering, AlgebraLowering):
    """Every tile op's lowering (the families' methods), as the tile table's record of the op names it."""

    def lower(self, op, signature) -> list:
        """The values replacing `op`'s results; `signature`: its operand and result types before the tiles
        became tensors (a tensor does not say whether its trailing dimensions are a composite's)."""
        self.operand_types, self.result_types = signature
        name = op.name[len("warp."):]
        composite = any(is_tile_type(t) and element_of(t)[2] is not None for t in signature[0] + signature[1])
        record = TILE_OPS.get(name)  # (none: a builtin of the builtin table with tile operands, or a cast)
        op = view(op) or op  # a table op's lowering reads its operands by name (op.tile, op.offsets, ...)
        if composite:
            method = record.lower_composite if record is not None else None
            if method is None and name.startswith("tile_"):
                raise PassError(f"{name} of tiles of vectors or matrices is not supported yet")
            return method(self, op) if method is not None else [self.elementwise_composite(op)]
        method = record.lower if record is not None else None
        if method is not None:
            return method(self, op)
        return [self.elementwise(op)]


def _retype_tiles(root) -> None:
    """Block arguments and results of the ops that merely carry tiles (scf.for, scf.if, func.call) as tensors."""

    def visit(op):
        for region in op.regions:
            for block in region.blocks:
                for a in block.arguments:
                    if is_tile_type(a.type):
                        a.set_type(tensor_type(a.type))
        if not op.name.startswith("warp."):
            for r in op.results:
                if is_tile_type(r.type):
                    r.set_type(tensor_type(r.type))
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)


class ConvertTilesToLinalg(registry.ConvertTilesToLinalg):
    def run(self, module):
        ops = ops_named(module, lambda n: n.startswith("warp."))
        ops = [op for op in ops if _has_tiles(op)]
        if not ops:
            return
        for f in ops_named(module, {"func.func"}):
            ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
            if any(is_tile_type(t) for t in list(ftype.inputs) + list(ftype.results)):
                raise PassError(f"function '{ir.StringAttr(f.attributes['sym_name']).value}' takes or returns a "
                                f"tile: inline it first (warp-inline)")
        signatures = [([v.type for v in op.operands], [r.type for r in op.results]) for op in ops]
        one_lane = next((_one_lane_name(op) for op in ops if _one_lane_name(op) is not None), None)
        if one_lane is not None and ONE_LANE_ATTR not in module.attributes:
            module.attributes[ONE_LANE_ATTR] = ir.StringAttr.get(one_lane)
        with module.location:
            _retype_tiles(module)
        lowering = _Lowering(self.row_vectors)
        for op, signature in zip(ops, signatures):
            with ir.InsertionPoint(op), op.location:
                new = lowering.lower(op, signature)
            for r, v in zip(op.results, new):
                r.replace_all_uses_with(v)
            op.erase()
