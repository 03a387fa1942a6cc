"""Ahead-of-time CUDA compilation: kernels compiled here, launched on a GPU machine without MLIR.

`compile_aot_module(kernels, arch=90, module_dir=d)` needs the compiler but no
GPU and no driver: it writes one cache entry per kernel (PTX + cubin for
sm_<arch>) into `d`. On the GPU machine (numpy + cuda-python, no MLIR),
`load_aot_module(kernels, module_dir=d)` loads them; launches then find
them like any cached kernel. The entries are keyed by the kernel's source
and the compiler's .py sources, which that machine has with the package."""

from __future__ import annotations

import importlib
import types

from mlwarp.launching import cuda_compile
from mlwarp.kernels.kernel import Kernel
from mlwarp.runtime.device import get_device

__all__ = ["compile_aot_module", "load_aot_module"]


def kernels_of(module_or_kernels) -> list:
    """The kernels of a Python module (or its name), a Kernel, or a list of either."""
    if isinstance(module_or_kernels, Kernel):
        return [module_or_kernels]
    if isinstance(module_or_kernels, str):
        module_or_kernels = importlib.import_module(module_or_kernels)
    if isinstance(module_or_kernels, types.ModuleType):
        found = [v for v in vars(module_or_kernels).values() if isinstance(v, Kernel)]
        if not found:
            raise ValueError(f"module '{module_or_kernels.__name__}' defines no @wp.kernel")
        return found
    if isinstance(module_or_kernels, (list, tuple)):
        return [k for item in module_or_kernels for k in kernels_of(item)]
    raise TypeError(f"expected a module, a module name, a kernel or a list of them, got "
                    f"{type(module_or_kernels).__name__}")


def _archs(arch, device) -> list:
    if arch is None:
        dev = get_device(device) if device is not None else None
        return [dev.arch if dev is not None and dev.is_cuda else cuda_compile.DEFAULT_ARCH]
    return [int(a) for a in arch] if isinstance(arch, (list, tuple)) else [int(arch)]


def compile_aot_module(module, device=None, arch=None, module_dir=None, use_ptx=None, strip_hash=None) -> list:
    """Compiles every kernel of `module` for each arch (default: the device's, else 90) into `module_dir`
    (default: the kernel cache); returns the entry folders. Needs no GPU."""
    return [cuda_compile.build(k, a, root=module_dir)["dir"] for k in kernels_of(module) for a in _archs(arch, device)]


def load_aot_module(module, device=None, arch=None, module_dir=None, use_ptx=False, strip_hash=False) -> None:
    """Loads every kernel of `module` onto a CUDA device from `module_dir` (then the cache); needs no
    compiler. A kernel missing for the device's arch falls back to older-arch PTX, JIT-compiled."""
    dev = get_device(device)
    if not dev.is_cuda:
        raise RuntimeError(f"load_aot_module loads CUDA kernels; device '{dev}' is not a CUDA device")
    if module_dir is not None:
        cuda_compile.add_aot_dir(module_dir)
    for k in kernels_of(module):
        k._compiled[dev.alias] = cuda_compile.load(k, dev)
