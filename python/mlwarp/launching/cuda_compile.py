"""CUDA kernels through the kernel cache: one entry per kernel and GPU architecture.

The key is `Kernel.cache_key("sm_<arch>")`: the kernel's source, types and
options, the hash of mlwarp's .py sources, which travel with the package, and
the MLIR/LLVM versions (installed, else the ones mlwarp pins), but nothing of
the host's CPU. So an entry built here for sm_90 with the pinned MLIR is found,
unchanged, on a GPU machine that has the same mlwarp sources and no compiler,
and loaded from there. Without the compiler, a
missing entry for the device's arch falls back to an entry of an older arch
whose PTX the driver JIT-compiles for the device."""

from __future__ import annotations

import importlib.util
import os
import sys
import time

from mlwarp.runtime import cache

DEFAULT_ARCH = 90
# archs probed, newest first, for a PTX fallback when no compiler is installed
KNOWN_ARCHS = (120, 103, 101, 100, 90, 89, 87, 86, 80, 75, 72, 70, 61, 60, 52, 50)

_aot_dirs: list = []  # module_dir folders given to load_aot_module, searched before the cache


class KernelNotCompiledError(RuntimeError):
    pass


def target(arch: int) -> str:
    return f"sm_{int(arch)}"


def cache_key(kernel, arch: int) -> str:
    return kernel.cache_key(target(arch))


def compiler_available() -> bool:
    return importlib.util.find_spec("mlir") is not None


def build(kernel, arch: int = DEFAULT_ARCH, root: str | None = None) -> dict:
    """The cache entry of `kernel` for sm_<arch> in `root` (default: the kernel cache), compiled if missing.
    Needs no GPU and no driver."""
    key = cache_key(kernel, arch)
    meta = cache.lookup(key, root=root)
    if meta is None:
        meta = cache.store(key, lambda folder: _compile(kernel, arch, folder), root=root)
    return meta


def _options(kernel) -> dict:
    """The kernel's options, its backward pass as it or its module declares it (a module's enable_backward=False
    builds no adjoint, and lifts the refusals that only concern the backward pass)."""
    return {**kernel.options, "enable_backward": kernel.declares_backward()}


def _compile(kernel, arch, folder) -> dict:
    from mlwarp.compiler.driver_cuda import compile_cuda  # loads the compiler (and MLIR)

    meta = compile_cuda(kernel.func, kernel._frontend_types(), folder, arch, _options(kernel))
    return dict(meta, kernel=kernel.key)


def find(kernel, arch: int) -> dict:
    """The entry to load on a device of `arch`: an exact one (AOT folders, then the cache, else compiled
    now), or without a compiler the newest older-arch entry (its PTX is JIT-compiled)."""
    roots = list(_aot_dirs) + [None]
    for root in roots:
        meta = cache.lookup(cache_key(kernel, arch), root=root)
        if meta is not None:
            return meta
    if compiler_available():
        return build(kernel, arch)
    for older in (a for a in KNOWN_ARCHS if a < arch):
        for root in roots:
            meta = cache.lookup(cache_key(kernel, older), root=root)
            if meta is not None:
                return meta
    where = ", ".join([*_aot_dirs, cache.cache_dir()])
    raise KernelNotCompiledError(
        f"kernel '{kernel.key}' has no compiled CUDA code for sm_{arch} or older in {where}, and the compiler "
        f"is not installed here (pip install 'mlwarp[compiler]'); compile it where the compiler is, with "
        f"wp.compile_aot_module(..., arch={arch}) or by launching it there, and bring the cache folder along")


def load(kernel, device):
    """The loaded CudaKernel of `kernel` on `device`."""
    from mlwarp.runtime.cuda.module import CudaKernel

    t0 = time.perf_counter()
    meta = find(kernel, device.arch)
    loaded = CudaKernel(meta, device)
    loaded.meta = meta
    if os.environ.get("MLWARP_TIMINGS") == "1":
        print(f"Module {kernel.key} loaded for {device} ({loaded.image_kind}, sm_{meta['arch']}) in "
              f"{(time.perf_counter() - t0) * 1e3:.2f} ms", file=sys.stderr)
    return loaded


def to_mlir(kernel, stage: str, arch: int = DEFAULT_ARCH) -> str:
    """The kernel's CUDA IR after `stage` (or its PTX); a debug build's (mlwarp.launching.debug.for_launch) is
    bounds-checked."""
    from mlwarp.compiler.driver_cuda import emit_ir_cuda  # lazy: MLIR

    return emit_ir_cuda(kernel.func, kernel._frontend_types(), stage, arch, _options(kernel))


def add_aot_dir(path: str) -> None:
    path = os.path.abspath(path)
    if path not in _aot_dirs:
        _aot_dirs.insert(0, path)
