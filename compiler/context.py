"""An MLIR context with every dialect mlwarp uses, the warp dialect included."""

import sys
import types

from mlir import ir

from .builtins import BUILTINS
from .builtins.table import fixed_arity
from .contained import in_compile_process
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


# target -> a context made by the process that forks the compile processes (prepare_context), which the first
# make_context of each compile process takes: its copy of it, made once instead of once a compile
_prepared: dict = {}


def prepare_context(target: str) -> None:
    """Makes a context for `target`'s compiles ahead, in the process that forks them: making one (the dialects
    loaded, the warp dialect's IRDL read) was ~5 ms of every compile process, ~13 ms the first in a process."""
    if target not in _prepared:
        _prepared[target] = _new_context(target)


def make_context(target: str | None = None) -> ir.Context:
    """`target`: "cpu" leaves out the CUDA target's dialects; None (mlwarp-opt, probes) and "cuda" load all."""
    if in_compile_process():  # (its copy of the prepared one: unused by the process it was forked from)
        prepared = _prepared.pop(target, None)
        if prepared is not None:
            return prepared
    return _new_context(target)


def _new_context(target: str | None) -> ir.Context:
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
