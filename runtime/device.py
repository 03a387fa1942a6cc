"""Devices by name ("cpu", "cuda:N"); the default device.

The registry knows no CUDA itself: runtime/cuda/devices.py registers its lookups here as it loads (the
package mlwarp.runtime imports it, so any import of this module has them), which keeps the dependency one
way: the CUDA devices and streams import this module, never the reverse."""

from __future__ import annotations

import os
import platform
import sys

from . import capture as _capture


class Device:
    # what Warp's CPU device answers (CudaDevice sets its own from the driver)
    ordinal = -1
    sm_count = 0
    max_shared_memory_per_block = 0
    is_mempool_supported = False
    is_mempool_enabled = False
    # Warp's CPU device answers these so (CudaDevice sets its own where they differ)
    is_primary = False
    is_uva = False
    is_ipc_supported = False
    is_managed_memory_supported = False
    is_cubin_supported = False
    is_concurrent_managed_access_supported = False
    is_cpu_gpu_atomic_supported = False
    is_cpu_memory_access_from_gpu_supported = False
    is_gpu_memory_access_from_cpu_supported = False
    uuid = None
    pci_bus_id = None
    arch = 0
    null_stream = None  # CUDA's legacy NULL stream (CudaDevice); none on the CPU, as in Warp
    _custom_allocator = None

    def can_access(self, other) -> bool:
        """Whether kernels on this device can use memory of `other`'s allocator: the same device; mlwarp enables
        no access between different devices (CPU memory is not mapped into CUDA kernels)."""
        return get_device(other) is self

    @property
    def context(self):
        """The device's CUDA context (CudaDevice); None on the CPU, as in Warp."""
        return self._context

    @property
    def has_context(self) -> bool:
        """Whether the device has a CUDA context (a CUDA device's primary context is retained on first use)."""
        return self._context is not None

    @property
    def stream(self):
        """The current stream of a CUDA device (CudaDevice); the CPU has none: Warp's RuntimeError."""
        raise RuntimeError(f"Device {self} is not a CUDA device")

    @stream.setter
    def stream(self, stream):
        self.set_stream(stream)

    def set_stream(self, stream, sync: bool = True) -> None:
        """Makes `stream` this CUDA device's current stream (CudaDevice); the CPU has none: Warp's RuntimeError."""
        raise RuntimeError(f"Device {self} is not a CUDA device")

    @property
    def has_stream(self) -> bool:
        """Whether the device has a current stream (a CUDA device's is made on first use)."""
        return getattr(self, "_stream", None) is not None

    def make_current(self) -> None:
        """Makes the device's CUDA context current on this thread; nothing on the CPU."""

    @property
    def context_guard(self):
        """`with device.context_guard:` makes the device's context current inside and restores the previous one
        after (nothing on the CPU), as Warp's ContextGuard."""
        return _ContextGuard(self)

    def _swap_context(self, context):
        """Makes `context` (None: this device's) current and returns the one that was; nothing on the CPU."""
        return None

    @property
    def total_memory(self) -> int:
        """Bytes of memory: the machine's physical memory for the CPU (psutil's, as Warp; os.sysconf without
        psutil, where Warp returns 0)."""
        return _host_memory("total")

    @property
    def free_memory(self) -> int:
        """Bytes of memory free according to the OS (for the CPU: psutil's `free`, else os.sysconf's
        available pages, the same number on Linux)."""
        return _host_memory("free")

    @property
    def default_allocator(self):
        """The device's built-in allocator (what arrays use when no custom allocator is set)."""
        return builtin_allocator_of(self)

    @property
    def pinned_allocator(self):
        """The CPU's allocator of pinned memory in Warp; mlwarp allocates no pinned memory, so it is the CPU's
        default allocator (None for a CUDA device, which has none in Warp either)."""
        return builtin_allocator_of(self) if self.is_cpu else None

    def get_allocator(self, pinned: bool = False):
        """The allocator new arrays on this device use (a custom one on CUDA, when set)."""
        return allocator_of(self)

    def get_cuda_compile_arch(self):
        """The sm_XX (as an int) kernels are compiled for on this device; None for the CPU (as Warp)."""
        return getattr(self, "arch", None) if self.is_cuda else None

    def get_cuda_output_format(self, preferred_cuda_output: str | None = None):
        """Warp's "ptx"/"cubin" choice; None for the CPU (as Warp). mlwarp's CUDA target loads PTX whatever is
        preferred (Warp too gives "ptx" where it cannot make a cubin, as mlwarp cannot)."""
        return "ptx" if self.is_cuda else None

    def __init__(self, runtime, alias: str, ordinal: int = -1, is_primary: bool = False, context=None):
        """Warp's parameters; mlwarp's runtime makes its devices (`runtime` is the mlwarp.runtime package)."""
        if ordinal != -1 and not is_primary and context is None:
            raise RuntimeError("A non-primary CUDA device requires a valid context, got context=None for device "
                               f"ordinal {ordinal}")
        self.runtime = runtime
        self.alias = alias
        self.ordinal = ordinal
        self.is_primary = is_primary
        self._context = context
        # plain attributes, not properties: every launch reads them (an alias never changes)
        self.is_cpu = alias == "cpu"
        self.is_cuda = alias.startswith("cuda")
        if self.is_cpu:
            self.name = platform.processor() or "CPU"

    @property
    def is_capturing(self) -> bool:
        """Whether a graph capture (wp.capture_begin) is recording the work issued on this device."""
        return _capture.active is not None and _capture.active.device is self

    def __str__(self):
        return self.alias

    def __repr__(self):
        return f'"{self.alias}"'

    def __eq__(self, other):
        if isinstance(other, str):
            other = _devices.get(other, other)
        return self is other

    def __hash__(self):
        return hash(self.alias)


class _ContextGuard:
    def __init__(self, device):
        self.device = device

    def __enter__(self):
        self._saved = self.device._swap_context(None)

    def __exit__(self, exc_type, exc_value, traceback):
        if self._saved is not None:
            self.device._swap_context(self._saved)


def _host_memory(which: str) -> int:
    try:
        import psutil  # lazy: psutil (optional, as in Warp)

        return getattr(psutil.virtual_memory(), which)
    except ModuleNotFoundError:
        pages = "SC_PHYS_PAGES" if which == "total" else "SC_AVPHYS_PAGES"
        return os.sysconf(pages) * os.sysconf("SC_PAGE_SIZE")


def allocator_of(device):
    """Replaced by python/mlwarp/arrays/memory.py as it loads (wp.get_device_allocator): runtime/ imports nothing above it."""
    raise RuntimeError("mlwarp.arrays.memory is not loaded")


def builtin_allocator_of(device):
    """Replaced by python/mlwarp/arrays/memory.py as it loads (the built-in allocator, custom ones aside)."""
    raise RuntimeError("mlwarp.arrays.memory is not loaded")


# the runtime package, which owns the devices (Device.runtime; it is importing this module now)
_runtime = sys.modules[__name__.rpartition(".")[0]]
_devices = {"cpu": Device(_runtime, "cpu")}
_default = None  # decided on first use: cuda:0 when a GPU is usable, else the CPU (as Warp)
_cuda_devices = None  # runtime/cuda/devices.py: devices() (every GPU, registered in _devices on first call)
_cuda_get = None  # and get(ident) ("cuda", "cuda:N"; loads cuda-python on first use only)


def register_cuda(devices, get) -> None:
    """How the registry enumerates and looks up CUDA devices (runtime/cuda/devices.py calls it as it loads)."""
    global _cuda_devices, _cuda_get
    _cuda_devices, _cuda_get = devices, get


def get_device(ident=None) -> Device:
    """Resolves None, a name or a Device to a Device; raises ValueError for an unknown name."""
    if ident is None:
        return _default if _default is not None else _first_default()
    if isinstance(ident, Device):
        return ident
    if isinstance(ident, str):
        dev = _devices.get(ident)
        if dev is not None:
            return dev
        if ident == "cuda" or ident.startswith("cuda:"):
            return _cuda_get(ident)
    raise ValueError(f"Invalid device identifier: {ident!r}")


def get_devices() -> list:
    _first_default()  # registers the CUDA devices, if any
    return list(_devices.values())


def _first_default() -> Device:
    global _default
    if _default is None:
        found = _cuda_devices()  # cheap without a driver: no libcuda, no cuda-python import
        _default = found[0] if found else _devices["cpu"]
    return _default


def set_device(ident) -> None:
    global _default
    _default = get_device(ident)


def unregister(alias: str) -> Device:
    """Removes a CUDA device's alias (wp.unmap_cuda_device); RuntimeError, as Warp's, for any other name."""
    _first_default()
    dev = _devices.get(alias)
    if dev is None or not dev.is_cuda:
        raise RuntimeError(f"Invalid CUDA device alias '{alias}'")
    del _devices[alias]
    return dev
