"""Compiling several kernels at once: one compile process each, up to a number at a time (`compile_ahead`).

mlwarp compiles a kernel at its first launch, in a process of its own (compiler/contained.py); Warp builds a
module's kernels together. Where the kernels a program will launch are known before it launches them
(`wp.load_module`, `Module.load`, a geometry structure's build kernels), they compile side by side on the CPU's
cores and their launches load them from the kernel cache.
"""

from __future__ import annotations

import os
import select

from mlwarp.compiler import contained  # imports no MLIR
from mlwarp.config import config
from mlwarp.runtime import cache


def compile_ahead(kernels, device, max_workers: int | None = None) -> None:
    """Compiles the CPU libraries of those `kernels` that miss the kernel cache, up to `max_workers` (default: the
    CPU count) in compile processes at a time, so that their first launches load them: Warp builds a module's
    kernels at once, mlwarp a kernel at its first launch, one after another. A compile that fails here is left to
    the kernel's launch, which reports it as it would have."""
    if not device.is_cpu or not config.cache_kernels or contained.in_process():
        return
    pending = [(k, key) for k in kernels if device.alias not in k._compiled
               for key in [k.cache_key(device)] if k.cached_entry(key) is None]
    if len(pending) < 2:
        return  # one compile: its launch's own
    compile_side_by_side(pending, max_workers)


def compile_side_by_side(pending, max_workers: int | None = None, root: str | None = None) -> list:
    """Compiles each (kernel, cache key) of `pending` into the kernel cache (or the folder `root`: the library
    cache, python -m mlwarp.kernels.precompile), up to `max_workers` compile processes at a time. Returns the
    [(kernel, exception)] of the compiles that failed."""
    from mlwarp.compiler.driver import compile_cpu  # noqa: F401  (lazy: MLIR, loaded before the forks share it)

    pending = list(pending)
    failed = []
    workers = max(1, max_workers or os.cpu_count() or 1)
    running, kernel_of = [], {}
    while pending or running:
        while pending and len(running) < workers:
            k, key = pending.pop(0)
            child = contained.start(cache.store, (key, k._build), {"root": root}, k.key)
            kernel_of[child] = k
            running.append(child)
        ready, _, _ = select.select(running, [], [])
        for child in ready:
            running.remove(child)
            try:
                child.result()
            except Exception as error:  # noqa: BLE001 (the launch compiles it again and raises)
                failed.append((kernel_of[child], error))
    return failed
