"""Warp's runtime queries and build knobs that are host-side: versions, diagnostics, the CPU kernel cache key,
block-size and CUDA kernel queries, wp.ModuleBuildOptions, wp.from_ptr, wp.DeviceLike, wp.map_cuda_device,
wp.clear_lto_cache. What mlwarp cannot do (no CUDA Toolkit, no C++ build) is said where it is asked for, and in
docs/surface.md."""

from __future__ import annotations

import ctypes
import hashlib
import importlib.metadata
import platform
import sys
import warnings

import numpy as np

from mlwarp.core.config import config
from mlwarp.runtime.device import Device, get_device
from mlwarp.types import float32
from mlwarp.arrays.array import array
from mlwarp.launching.cuda import get_cuda_devices
from mlwarp.kernels.kernel import Kernel
from mlwarp.kernels.fingerprint import _toolchain, compiler_fingerprint
from mlwarp.runtime.cuda import driver as drv

__all__ = ["DeviceLike", "get_cuda_driver_version", "get_cuda_toolkit_version", "print_diagnostics",
           "get_cpu_kernel_cache_key", "get_suggested_block_size", "get_cuda_kernel_properties",
           "get_cuda_max_cluster_dim", "map_cuda_device", "clear_lto_cache", "ModuleBuildOptions", "from_ptr"]

DeviceLike = Device | str | None  # (Warp's alias, for annotations)


def _kernel(kernel, what: str):
    if not isinstance(kernel, Kernel):
        raise TypeError(f"{what}() expected a wp.Kernel, got {type(kernel)}")
    return kernel


def get_cuda_driver_version() -> tuple | None:
    """(major, minor) of the installed CUDA driver; None without one (as Warp)."""
    if not drv.available():
        return None
    version = int(drv.call("cuDriverGetVersion"))
    return (version // 1000, (version % 1000) // 10)


def get_cuda_toolkit_version() -> tuple | None:
    """Warp returns the CUDA Toolkit its native library was built with. mlwarp has no native library and uses no
    CUDA Toolkit (its CUDA code comes from LLVM's NVPTX target, loaded through the driver): None, Warp's answer
    when it has no CUDA support."""
    return None


def get_cpu_kernel_cache_key(*, cpu_compiler_flags: str | None = None) -> str:
    """"<Warp version>-<OS>-<machine>-<hash>" naming the CPU code target, as Warp's. The hash is of mlwarp's
    compiler (its sources and MLIR/LLVM versions): Clang flags change nothing in mlwarp's code, so they do not
    enter it (docs/surface.md)."""
    digest = hashlib.sha256(compiler_fingerprint().encode()).hexdigest()[:8]
    return f"{config.version}-{platform.system()}-{platform.machine()}-{digest}"


def get_suggested_block_size(kernel, device: DeviceLike = None) -> tuple:
    """(min_grid_size, block_size) of the CUDA occupancy calculator; (1, 1) on the CPU, as Warp."""
    _kernel(kernel, "get_suggested_block_size")
    dev = get_device(device)
    if not dev.is_cuda:
        return (1, 1)
    if kernel.is_generic:
        raise RuntimeError(
            f"get_suggested_block_size() requires a concrete overload of generic kernel '{kernel.key}'; "
            "create one with wp.overload() and pass the returned kernel")
    raise NotImplementedError("get_suggested_block_size() on a CUDA device: mlwarp's CUDA runtime does not query "
                              "the occupancy calculator (cuOccupancyMaxPotentialBlockSize)")


def get_cuda_kernel_properties(kernel, device: DeviceLike = None, block_dim: int | None = None) -> dict:
    _kernel(kernel, "get_cuda_kernel_properties")
    dev = get_device(device)
    if not dev.is_cuda:
        raise RuntimeError(f"get_cuda_kernel_properties() requires a CUDA device, got '{dev}'")
    raise NotImplementedError("get_cuda_kernel_properties(): mlwarp's CUDA runtime does not query function "
                              "attributes (cuFuncGetAttribute)")


def get_cuda_max_cluster_dim(kernel, device: DeviceLike = None, *, block_dim: int | None = None,
                             dynamic_smem_bytes: int = 0) -> int:
    """The largest thread-block cluster a launch can use; 1 on the CPU (and wherever clusters are not used), as
    Warp. mlwarp's CUDA launches use no clusters: 1 there too."""
    _kernel(kernel, "get_cuda_max_cluster_dim")
    get_device(device)
    return 1


def map_cuda_device(alias: str, context=None):
    """Warp maps a CUDA context it did not make (e.g. another framework's) to a device alias. mlwarp's CUDA
    devices use their primary contexts only."""
    raise NotImplementedError(f"map_cuda_device('{alias}'): mlwarp's CUDA runtime uses each device's primary "
                              "context and cannot adopt another CUDA context")


def clear_lto_cache() -> None:
    """Warp clears its cache of libmathdx LTO objects; mlwarp has none: nothing to clear."""


class ModuleBuildOptions:
    """Warp's extra inputs of a module's C++ build (include dirs, preambles, dependencies). mlwarp builds no C++:
    the options are kept, and a module given non-empty ones says so when it is built (docs/surface.md)."""

    def __init__(self, *, extra_cuda_include_dirs=None, extra_cpu_include_dirs=None, extra_cuda_preamble=None,
                 extra_cpu_preamble=None, extra_build_dependencies=None):
        self.extra_cuda_include_dirs = list(extra_cuda_include_dirs or [])
        self.extra_cpu_include_dirs = list(extra_cpu_include_dirs or [])
        self.extra_cuda_preamble = extra_cuda_preamble or ""
        self.extra_cpu_preamble = extra_cpu_preamble or ""
        self.extra_build_dependencies = list(extra_build_dependencies or [])

    def __repr__(self):
        return f"ModuleBuildOptions({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"


_FROM_PTR_DEPRECATION = """This version of wp.from_ptr() is deprecated. OmniGraph
    applications should use from_omni_graph_ptr() instead. To create an array
    from a C pointer, use the array constructor and pass the ptr argument as a
    uint64 value representing the start address in memory where the existing
    array resides. For example, if using ctypes, pass
    ptr=ctypes.cast(pointer, ctypes.POINTER(ctypes.c_size_t)).contents.value.
    Be sure to also specify the dtype and shape parameters."""


def from_ptr(ptr, length, dtype=None, shape=None, device=None):
    """Deprecated in Warp: an array over `length` elements at the address stored at `ptr` (a pointer to a
    size_t holding the data address, as Warp reads it). Warp 1.19's own version fails after its warning (it
    passes array() a `length` argument array() no longer takes); mlwarp's makes the array it documents."""
    warnings.warn(_FROM_PTR_DEPRECATION, DeprecationWarning, stacklevel=2)
    data = 0 if ptr == 0 else ctypes.cast(ptr, ctypes.POINTER(ctypes.c_size_t)).contents.value
    return array(dtype=dtype if dtype is not None else float32, shape=shape if shape is not None else (length,),
                 ptr=data, device=device, requires_grad=False)


def print_diagnostics() -> dict:
    """Prints the build and runtime environment (Warp's sections, with mlwarp's components) and returns it."""
    info = {"warp_python": config.version, "mlwarp": _mlwarp_version()}
    for name, version in _toolchain():
        info[name] = version
    info["numpy"] = np.__version__
    for pkg in ("torch", "jax", "jaxlib", "cuda-python"):
        try:
            info[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            pass
    info["python"] = sys.version
    info["platform"] = platform.platform()
    cuda = get_cuda_devices()
    info["cuda_enabled"] = bool(cuda)
    info["cuda_toolkit"] = None
    driver = get_cuda_driver_version()
    info["cuda_driver"] = f"{driver[0]}.{driver[1]}" if driver else None
    info["cpu_name"] = platform.processor() or platform.machine()
    info["debug"] = config.mode == "debug"
    info["verify_fp"] = bool(config.verify_fp)
    devices = [{"alias": "cpu", "name": "CPU"}]
    for d in cuda:
        devices.append({"alias": d.alias, "name": d.name, "arch": f"sm_{d.arch}", "sm_count": d.sm_count,
                        "memory_gb": round(d.total_memory / (1024 ** 3), 1),
                        "mempool_enabled": bool(d.is_mempool_enabled)})
    info["devices"] = devices
    w = 18
    lines = ["Software"]
    for label, key in (("Warp (API):", "warp_python"), ("mlwarp:", "mlwarp"), ("NumPy:", "numpy"),
                       ("Python:", "python"), ("Platform:", "platform")):
        lines.append(f"  {label:<{w}}{info[key]}".split("\n")[0])
    for name, version in _toolchain():
        lines.append(f"  {name + ':':<{w}}{version}")
    lines += ["", "CUDA", f"  {'Enabled:':<{w}}{info['cuda_enabled']}", f"  {'Driver:':<{w}}{info['cuda_driver']}",
              "", "Devices"]
    for d in devices:
        lines.append(f"  {d['alias'] + ':':<{w}}{d['name']}")
    print("\n".join(lines))
    return info


def _mlwarp_version() -> str:
    return getattr(sys.modules.get("mlwarp._api"), "__version__", "unknown")  # (loaded: wp.* was used)
