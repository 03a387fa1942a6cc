"""Compiles mlwarp's own kernels into the library cache ahead of their first use:
`python -m mlwarp.kernels.precompile`.

Warp ships its mesh and BVH builders compiled in its wheel; mlwarp's are kernels (python/mlwarp/geometry/), which
a process compiles on its first wp.Mesh, wp.Bvh or wp.HashGrid: ~4 s of CPU on a cold kernel cache, more than a
small program's own kernels. The optimizers' step kernels (warp.optim SGD and Adam) are here too, for the
parameter types they are launched with, and the CPU thread pool's library (runtime/cpu_pool.py), which a process
otherwise builds before its first parallel launch (~0.3 s), and the compiler passes' native op finder
(compiler/passes/op_finder.py). scripts/setup-env.sh runs this step once mlwarp is
installed; it writes the library cache (runtime/cache.py library_dir: the environment's share/mlwarp/kernel-library,
or MLWARP_LIBRARY_CACHE_DIR), which launches read after the kernel cache and which wp.clear_kernel_cache() does not
clear. The entries are keyed as the kernel cache's (the kernel's source, the compiler fingerprint, the CPU): after a compiler change they miss
and the kernels compile lazily into the kernel cache, until this step runs again. Run again, it compiles only what
is missing; `--prune` also removes the entries that the current keys no longer name.

    python -m mlwarp.kernels.precompile [--dir FOLDER] [--workers N] [--prune] [--list]
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from mlwarp.arrays.array import array
from mlwarp.kernels.kernel import Kernel
from mlwarp.kernels.parallel_compile import compile_side_by_side
from mlwarp.runtime import cache, cpu_pool
from mlwarp.optim import adam, sgd
from mlwarp.runtime.device import get_device
from mlwarp.types import float16, float32, float64

# The modules whose kernels the geometry structures launch themselves (builds, refits, grid builds); not the
# generic ones, which are compiled per argument types.
LIBRARY_MODULES = (
    "mlwarp.geometry.build_kernels",
    "mlwarp.geometry.bvh_median",
    "mlwarp.geometry.bvh_sah",
    "mlwarp.geometry.refit",
    "mlwarp.geometry.mesh",
    "mlwarp.geometry.bvh",
    "mlwarp.geometry.hashgrid",
)


def library_kernels() -> list:
    """The non-generic @wp.kernel objects defined in LIBRARY_MODULES, in a stable order, then the optimizers'
    instances (optimizer_instances)."""
    found, seen = [], set()
    for name in LIBRARY_MODULES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (isinstance(value, Kernel) and not value.is_generic and value.is_library_kernel()
                    and value.func.__module__ == name and id(value) not in seen):
                seen.add(id(value))
                found.append(value)
    return found + optimizer_instances()


def optimizer_instances() -> list:
    """The instances of warp.optim's step kernels that SGD and Adam launch on float16, float32 and float64
    parameters (their arrays flattened to scalars: optim/elementwise.py flat_scalars; Adam's float16 moments are
    float32): a training loop's first optimizer step otherwise compiles one after its backward pass."""
    found = []
    for scalar in (float16, float32, float64):
        a = array(dtype=scalar)
        found.append(sgd._sgd_step.add_overload([a, a, scalar, scalar, scalar, scalar, int, int, a]))
        moment = adam.moment_dtype(scalar)
        m = array(dtype=moment)
        found.append(adam._adam_step.add_overload([a, m, m, moment, moment, moment, moment, moment, a]))
    return found


def precompile(folder: str | None = None, max_workers: int | None = None, prune: bool = False) -> dict:
    """Compiles the library kernels that `folder` (default: the library cache) lacks for the CPU. Returns
    {"compiled": [names], "present": [names], "failed": [(name, error)], "pruned": [entry names]}. Raises
    PermissionError when the folder cannot be written."""
    folder = folder or cache.library_dir()
    os.makedirs(folder, exist_ok=True)
    if not os.access(folder, os.W_OK):
        raise PermissionError(f"the library cache folder '{folder}' is not writable")
    from mlwarp.compiler.passes import op_finder  # lazy: MLIR (the compiles below load it anyway)
    from mlwarp.compiler.targets.cpu.object_code import write_object  # lazy: MLIR, LLVM

    # (before the compiles: the compiler's import builds the op finder where the library cache lacks it)
    finder_there = os.path.exists(os.path.join(folder, op_finder.entry_name(), "op_finder.so"))
    device = get_device("cpu")
    keyed = [(k, k.cache_key(device)) for k in library_kernels()]
    missing = [(k, key) for k, key in keyed if cache.lookup(key, folder) is None]
    failed = compile_side_by_side(missing, max_workers, root=folder)
    failed = [(k.key, e) for k, e in failed]
    failed_names = {name for name, _ in failed}
    pool = []  # [(name, compiled now)]: the pool library, where there is a native pool
    if cpu_pool.supported():
        there = os.path.exists(os.path.join(folder, cpu_pool.entry_name(), "pool.so"))
        try:
            cpu_pool.build_into(folder)
            pool.append(("cpu_pool", not there))
        except Exception as e:  # noqa: BLE001  (no linker: processes build the pool into their kernel cache, or not)
            failed.append(("cpu_pool", e))
    if op_finder.supported():  # (the compiler's: its passes' native walk, built by the kernels' LLVM and linker)
        try:
            op_finder.build_into(folder, write_object)
            pool.append(("op_finder", not finder_there))
        except Exception as e:  # noqa: BLE001  (no linker: the passes walk in Python)
            failed.append(("op_finder", e))
    pruned = []
    if prune:
        wanted = {key for _, key in keyed} | {entry for name, entry in (("cpu_pool", cpu_pool.entry_name()),
                                                                       ("op_finder", op_finder.entry_name()))
                                              if any(n == name for n, _ in pool)}
        for name in sorted(os.listdir(folder)):
            if name not in wanted and not cache._in_flight(os.path.join(folder, name), name):
                cache._remove(os.path.join(folder, name))
                pruned.append(name)
    return {"compiled": [k.key for k, _ in missing if k.key not in failed_names] + [n for n, new in pool if new],
            "present": [k.key for k, key in keyed if (k, key) not in missing] + [n for n, new in pool if not new],
            "failed": [(name, str(e).splitlines()[0] if str(e) else type(e).__name__) for name, e in failed],
            "pruned": pruned}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mlwarp.kernels.precompile", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", help="the library cache folder (default: MLWARP_LIBRARY_CACHE_DIR, else "
                                      "<environment>/share/mlwarp/kernel-library)")
    parser.add_argument("--workers", type=int, help="compile processes at a time (default: the CPU count)")
    parser.add_argument("--prune", action="store_true", help="remove entries the current keys do not name")
    parser.add_argument("--list", action="store_true", help="print the library kernels and exit")
    options = parser.parse_args(argv)
    if options.list:
        for k in library_kernels():
            print(f"{k.func.__module__}.{k.key}")
        return 0
    folder = options.dir or cache.library_dir()
    try:
        outcome = precompile(folder, options.workers, options.prune)
    except OSError as error:  # an installation this user cannot write: the kernels compile on first use
        print(f"mlwarp.kernels.precompile: {error}; mlwarp's kernels will compile on first use instead",
              file=sys.stderr)
        return 0
    print(f"mlwarp.kernels.precompile: {folder}: {len(outcome['compiled'])} compiled, {len(outcome['present'])} "
          f"already there, {len(outcome['failed'])} failed"
          + (f", {len(outcome['pruned'])} pruned" if options.prune else ""))
    for name, error in outcome["failed"]:
        print(f"  {name}: {error}", file=sys.stderr)
    return 1 if outcome["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
