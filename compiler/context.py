"""An MLIR context with every dialect mlwarp uses, the warp dialect included."""

import sys
import types

from mlir import ir

from .builtins import BUILTINS
from .builtins.table import fixed_arity
from .dialects.warp import load_dialect

# what tiles lower to (lowering/tiles_to_linalg.py), gpu for gpu.yield, which ends warp.tile_map's body, and
# transform (+ affine), which warp-cpu-vectorize-tile-matmul's script is written in (and its loops use)
TILE_DIALECTS = ("tensor", "linalg", "bufferization", "gpu", "transform", "affine")


# The bindings import `mlir.dialects.<namespace>` whenever they wrap an op or type of a dialect, and
# retry a failed import each time: ~140 failing imports (each a sys.path scan) per compile for `warp`,
# which has no Python module there. An empty one ends that.
sys.modules.setdefault("mlir.dialects.warp", types.ModuleType("mlir.dialects.warp"))


# The dialects the frontend and our Python passes build ops of (a pass cannot load one while the pass
# manager runs threads); upstream passes load the ones they declare, the parser the ones it reads.
# The bindings' default loads every registered dialect (~60): ~8 ms of each compile.
DIALECTS = ("builtin", "func", "arith", "math", "scf", "cf", "llvm", "vector", "gpu", "nvvm", "irdl", "index",
            "ub", "memref")


# Only the CUDA target builds ops of these (targets/cuda/): a CPU build's context goes without them (~1 ms).
CUDA_DIALECTS = ("gpu", "nvvm")


def load_tile_dialects(ctx: ir.Context) -> None:
    """Loads the dialects tile lowering builds ops of (before a pass manager runs)."""
    for name in TILE_DIALECTS:
        ctx.get_dialect_descriptor(name)


def make_context(target: str | None = None) -> ir.Context:
    """`target`: "cpu" leaves out the CUDA target's dialects; None (mlwarp-opt, probes) and "cuda" load all."""
    ctx = ir.Context(load_on_create_dialects=[])
    # No thread pool: a kernel module holds a few functions, so MLIR's threads buy nothing, and compiles fork
    # (contained.py): a live context's pool threads in the parent made the next forked compile hang.
    ctx.enable_multithreading(False)
    for name in DIALECTS:
        if target != "cpu" or name not in CUDA_DIALECTS:
            ctx.get_dialect_descriptor(name)
    if target is None:  # mlwarp-opt may run convert-warp-tiles-to-linalg on any input; a build loads these when
        for name in TILE_DIALECTS:  # its frontend makes a tile (frontend/tiles.py)
            ctx.get_dialect_descriptor(name)
    load_dialect(ctx, builtin_ops={name: fixed_arity(name) for name in BUILTINS})
    return ctx
