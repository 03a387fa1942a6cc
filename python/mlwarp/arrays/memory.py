"""Warp's memory API: MemoryKind, allocators, memory pools, peer access, IPC, and allocation tracking
(wp.ScopedMemoryTracker, wp.print_memory_report).

On the CPU these do what Warp does without CUDA (the same errors, with Warp's messages, or nothing). On a CUDA
device mlwarp allocates through its own driver layer (runtime/cuda/memory.py): memory pools and custom
allocators are honoured there; what mlwarp has no driver path for (IPC, managed memory, access between two
GPUs) raises NotImplementedError naming what is missing (docs/surface.md).
"""

from __future__ import annotations

import enum
import os
import sys
import threading
import weakref
from typing import Callable, Protocol, runtime_checkable

from mlwarp.core.config import config
from mlwarp.runtime import device as _device_module
from mlwarp.runtime.device import get_device
from mlwarp.launching import cuda as _cuda_api
from mlwarp.arrays.array_data import _aligned_zeros
from mlwarp.core.types import is_array
from mlwarp.runtime.cuda import driver as drv
from mlwarp.runtime.cuda import memory as _cuda_memory
from mlwarp.types import type_name

__all__ = [
    "MemoryKind", "Allocator", "CudaManagedAllocator", "get_device_allocator", "set_device_allocator",
    "set_cuda_allocator", "ScopedAllocator", "set_mempool_enabled", "ScopedMempool", "get_mempool_release_threshold",
    "set_mempool_release_threshold", "get_mempool_used_mem_current", "get_mempool_used_mem_high",
    "set_peer_access_enabled", "ScopedPeerAccess", "set_mempool_access_enabled", "ScopedMempoolAccess",
    "can_access", "from_ipc_handle", "event_from_ipc_handle", "ScopedMemoryTracker", "print_memory_report",
]


class MemoryKind(enum.IntEnum):
    """The kind of memory behind an array (Warp's values)."""

    UNKNOWN = 0
    HOST = 1
    PINNED = 2
    CUDA_DEVICE = 3
    CUDA_MEMPOOL = 4
    CUDA_MANAGED = 5


@runtime_checkable
class Allocator(Protocol):
    """What a custom allocator is (Warp's protocol): allocate(size_in_bytes) -> int, deallocate(ptr, size)."""

    def allocate(self, size_in_bytes: int) -> int: ...

    def deallocate(self, ptr: int, size_in_bytes: int) -> None: ...


def _validate_allocator(allocator) -> None:
    if allocator is None:
        return
    if not isinstance(allocator, Allocator) or not callable(getattr(allocator, "allocate", None)) or \
            not callable(getattr(allocator, "deallocate", None)):
        raise TypeError("allocator must implement the Allocator protocol "
                        "(allocate(size_in_bytes) -> int, deallocate(ptr, size_in_bytes) -> None), "
                        f"got {type(allocator)!r}")


class CpuDefaultAllocator:
    """The CPU's allocator, as wp.get_device_allocator("cpu") returns it. mlwarp's CPU arrays own numpy buffers
    (aligned to 64 bytes); this allocator hands out such buffers by address, kept alive until deallocate."""

    deallocate_requires_context_guard = False
    memory_kind = MemoryKind.HOST

    def __init__(self, device=None):
        if device is not None and not get_device(device).is_cpu:
            raise ValueError(f"CpuDefaultAllocator requires a CPU device, got '{device}'")
        self._live = {}

    def allocate(self, size_in_bytes):
        buf = _aligned_zeros((int(size_in_bytes),), "uint8")
        ptr = buf.ctypes.data
        self._live[ptr] = buf
        return ptr

    def deallocate(self, ptr, size_in_bytes):
        self._live.pop(ptr, None)


_cpu_allocator = CpuDefaultAllocator()


class CudaManagedAllocator:
    """Warp's allocator of CUDA managed memory. mlwarp's CUDA runtime has no managed-memory path."""

    deallocate_requires_context_guard = False
    memory_kind = MemoryKind.CUDA_MANAGED

    def allocate(self, size_in_bytes):
        raise NotImplementedError("CudaManagedAllocator: mlwarp's CUDA runtime allocates device memory only "
                                  "(cuMemAlloc/cuMemAllocAsync); managed memory (cuMemAllocManaged) is not implemented")

    def deallocate(self, ptr, size_in_bytes):
        raise NotImplementedError("CudaManagedAllocator: managed memory is not implemented in mlwarp")


def get_device_allocator(device):
    """The allocator new arrays on `device` use: a custom one set with set_device_allocator, else the default."""
    dev = get_device(device)
    if dev.is_cpu:
        return _cpu_allocator
    custom = getattr(dev, "_custom_allocator", None)
    return custom if custom is not None else _cuda_default_allocator(dev)


class _CudaDefaultAllocator:
    memory_kind = MemoryKind.CUDA_DEVICE

    def __init__(self, device):
        self.device = device
        self._live = {}

    def allocate(self, size_in_bytes):
        a = _cuda_memory.Allocation(self.device, size_in_bytes, use_custom=False)
        self._live[a.ptr] = a
        return a.ptr

    def deallocate(self, ptr, size_in_bytes):
        a = self._live.pop(ptr, None)
        if a is not None:
            a.free()


def _cuda_default_allocator(dev):
    found = dev.__dict__.get("_default_allocator")
    if found is None:
        found = dev._default_allocator = _CudaDefaultAllocator(dev)
    return found


_device_module.allocator_of = get_device_allocator  # Device.get_allocator()
_device_module.builtin_allocator_of = (  # Device.default_allocator
    lambda dev: _cpu_allocator if dev.is_cpu else _cuda_default_allocator(dev))


def set_device_allocator(device, allocator) -> None:
    """Arrays allocated on the CUDA `device` from now on take their memory from `allocator` (None: the default)."""
    dev = get_device(device)
    if not dev.is_cuda:
        raise RuntimeError("Custom allocators are only supported on CUDA devices")
    _validate_allocator(allocator)
    dev._custom_allocator = allocator


def set_cuda_allocator(allocator) -> None:
    """set_device_allocator for every CUDA device."""
    _validate_allocator(allocator)
    devices = _cuda_api.get_cuda_devices()
    if not devices:
        raise RuntimeError("set_cuda_allocator: no CUDA devices available")
    for dev in devices:
        dev._custom_allocator = allocator


class ScopedAllocator:
    def __init__(self, device, allocator):
        self.device = get_device(device)
        if not self.device.is_cuda:
            raise RuntimeError("Custom allocators are only supported on CUDA devices")
        _validate_allocator(allocator)
        self.allocator = allocator

    def __enter__(self):
        self.saved = getattr(self.device, "_custom_allocator", None)
        self.device._custom_allocator = self.allocator
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.device._custom_allocator = self.saved


# -- memory pools ------------------------------------------------------------------------------------------------
def set_mempool_enabled(device, enable: bool) -> None:
    """Whether new allocations on a CUDA device come from its stream-ordered pool (cuMemAllocAsync)."""
    dev = get_device(device)
    if dev.is_cuda:
        if enable and not dev.is_mempool_supported:
            raise RuntimeError(f"Device {dev} does not support memory pools")
        dev.is_mempool_enabled = bool(enable)
    elif enable:
        raise ValueError("Memory pools are only supported on CUDA devices")


class ScopedMempool:
    def __init__(self, device, enable: bool):
        self.device = get_device(device)
        self.enable = enable

    def __enter__(self):
        self.saved_setting = bool(self.device.is_mempool_enabled)
        set_mempool_enabled(self.device, self.enable)

    def __exit__(self, exc_type, exc_value, traceback):
        set_mempool_enabled(self.device, self.saved_setting)


def _pool_device(device):
    dev = get_device(device)
    if not dev.is_cuda:
        raise ValueError("Memory pools are only supported on CUDA devices")
    if not dev.is_mempool_supported:
        raise RuntimeError(f"Device {dev} does not support memory pools")
    return dev


def _pool_attribute(dev, name: str, value=None) -> int:
    d = drv.driver()
    dev.context  # (retains the context: the pool is configured)
    pool = drv.call("cuDeviceGetDefaultMemPool", dev.handle)
    attr = getattr(d.CUmemPool_attribute, name)
    if value is None:
        return int(drv.call("cuMemPoolGetAttribute", pool, attr))
    drv.call("cuMemPoolSetAttribute", pool, attr, d.cuuint64_t(int(value)))
    return int(value)


def get_mempool_release_threshold(device=None) -> int:
    return _pool_attribute(_pool_device(device), "CU_MEMPOOL_ATTR_RELEASE_THRESHOLD")


def set_mempool_release_threshold(device, threshold) -> None:
    """Bytes the pool keeps reserved at a synchronize; a value in (0, 1] is a fraction of the device's memory."""
    dev = _pool_device(device)
    if threshold < 0:
        threshold = 0
    elif 0 < threshold <= 1:
        threshold = int(threshold * dev.total_memory)
    _pool_attribute(dev, "CU_MEMPOOL_ATTR_RELEASE_THRESHOLD", threshold)


def get_mempool_used_mem_current(device=None) -> int:
    return _pool_attribute(_pool_device(device), "CU_MEMPOOL_ATTR_USED_MEM_CURRENT")


def get_mempool_used_mem_high(device=None) -> int:
    return _pool_attribute(_pool_device(device), "CU_MEMPOOL_ATTR_USED_MEM_HIGH")


# -- access between devices -------------------------------------------------------------------------------------
def _between_gpus(what: str) -> NotImplementedError:
    return NotImplementedError(f"{what} between two different CUDA devices: mlwarp's CUDA runtime does not enable "
                               "it (no cuCtxEnablePeerAccess / cuMemPoolSetAccess path)")


def set_peer_access_enabled(target_device, peer_device, enable: bool) -> None:
    target, peer = get_device(target_device), get_device(peer_device)
    if not target.is_cuda or not peer.is_cuda:
        if enable:
            raise ValueError("Peer access is only supported between CUDA devices")
        return
    if target is not peer:
        if not _cuda_api.is_peer_access_supported(target, peer):
            if enable:
                raise RuntimeError(f"Device {peer} cannot access device {target}")
            return
        if enable:
            raise _between_gpus("Peer access")


class ScopedPeerAccess:
    def __init__(self, target_device, peer_device, enable: bool):
        self.target_device, self.peer_device, self.enable = target_device, peer_device, enable

    def __enter__(self):
        self.saved_setting = _cuda_api.is_peer_access_enabled(self.target_device, self.peer_device)
        set_peer_access_enabled(self.target_device, self.peer_device, self.enable)

    def __exit__(self, exc_type, exc_value, traceback):
        set_peer_access_enabled(self.target_device, self.peer_device, self.saved_setting)


def set_mempool_access_enabled(target_device, peer_device, enable: bool) -> None:
    target, peer = get_device(target_device), get_device(peer_device)
    if not target.is_cuda or not peer.is_cuda:
        if enable:
            raise ValueError("Memory pool access is only supported between CUDA devices")
        return
    if not target.is_mempool_supported:
        if enable:
            raise RuntimeError(f"Device {target} does not support memory pools")
        return
    if target is not peer:
        if not _cuda_api.is_peer_access_supported(target, peer):
            if enable:
                raise RuntimeError(f"Device {peer} cannot access device {target}")
            return
        if enable:
            raise _between_gpus("Memory pool access")


class ScopedMempoolAccess:
    def __init__(self, target_device, peer_device, enable: bool):
        self.target_device, self.peer_device, self.enable = target_device, peer_device, enable

    def __enter__(self):
        self.saved_setting = _cuda_api.is_mempool_access_enabled(self.target_device, self.peer_device)
        set_mempool_access_enabled(self.target_device, self.peer_device, self.enable)

    def __exit__(self, exc_type, exc_value, traceback):
        set_mempool_access_enabled(self.target_device, self.peer_device, self.saved_setting)


def can_access(device, resource) -> bool:
    """Whether a kernel on `device` can read the array `resource`: the array's own device, or a CUDA device with
    peer access to it (mlwarp enables none between two GPUs; CPU memory is not mapped into CUDA kernels)."""
    dev = get_device(device)
    if not is_array(resource) or getattr(resource, "device", None) is None:
        raise TypeError("wp.can_access() only supports concrete Warp arrays in this release")
    return resource.device == dev


# -- IPC -----------------------------------------------------------------------------------------------------------
def _no_ipc(device) -> RuntimeError:
    dev = get_device(device)
    if not dev.is_cuda:
        return RuntimeError(f"IPC is not supported on device {dev}.")
    return NotImplementedError(f"IPC on device {dev}: mlwarp's CUDA runtime has no CUDA IPC path "
                               "(cuIpcOpenMemHandle / cuIpcOpenEventHandle)")


def from_ipc_handle(handle: bytes, dtype, shape, strides=None, device=None):
    raise _no_ipc(device)


def event_from_ipc_handle(handle, device=None):
    raise _no_ipc(device)


# -- allocation tracking (Warp's report, with its layout) ------------------------------------------------------------
class _Tracker:
    def __init__(self):
        self.enabled = False
        self.lock = threading.Lock()
        self.local = threading.local()  # the scope stack, per thread (as Warp's)
        self.reset()

    def reset(self):
        self.live = {}  # seq -> [size, device alias, tag]
        self.seq = 0
        self.totals = {}  # alias -> [count, bytes, current, peak]
        self.scopes = {}  # (scope, alias) -> [count, bytes]

    def stack(self) -> list:
        s = getattr(self.local, "stack", None)
        if s is None:
            s = self.local.stack = []
        return s

    def record(self, owner, nbytes: int, alias: str, tag: str) -> None:
        scope = "/".join(self.stack())
        with self.lock:
            seq = self.seq
            self.seq += 1
            self.live[seq] = [nbytes, alias, tag]
            t = self.totals.setdefault(alias, [0, 0, 0, 0])
            t[0] += 1
            t[1] += nbytes
            t[2] += nbytes
            t[3] = max(t[3], t[2])
            if scope:
                s = self.scopes.setdefault((scope, alias), [0, 0])
                s[0] += 1
                s[1] += nbytes
        weakref.finalize(owner, self.free, seq)

    def free(self, seq) -> None:
        if not self.enabled:
            return
        with self.lock:
            rec = self.live.pop(seq, None)
            if rec is not None:
                self.totals[rec[1]][2] -= rec[0]

    def report(self, sort_order: int, max_items: int) -> str:
        def fmt(b):
            for unit, shift in (("GB", 30), ("MB", 20), ("KB", 10)):
                if b >= 1 << shift:
                    return f"{b / (1 << shift):.2f} {unit}"
            return f"{b} B"

        def order(alias):
            return (0, int(alias.split(":")[1])) if alias.startswith("cuda") else (1, 0)

        with self.lock:
            live = dict(self.live)
            devs = sorted(self.totals, key=order)
            out = ["Allocation Tracking Report", "  Total allocations:"]
            label = {a: (a + " " * (17 - len(a))) for a in devs}  # "cuda:N" padded as Warp's, "cpu" likewise
            out += [f"    {label[a]}{self.totals[a][0]} ({fmt(self.totals[a][1])})" for a in devs]
            out.append("  Peak usage:")
            out += [f"    {label[a]}{fmt(self.totals[a][3])}" for a in devs]
            out.append("  Live allocations:")
            per = {}
            for size, alias, _tag in live.values():
                p = per.setdefault(alias, [0, 0])
                p[0] += 1
                p[1] += size
            out += [f"    {label[a]}{per[a][0]} ({fmt(per[a][1])})" for a in sorted(per, key=order)]
            if not live:
                out.append("    (none)")
            scopes = sorted({s for s, _ in self.scopes})
            if len(scopes) > 1:
                out += ["", "  Scope breakdown:"]
                for s in scopes:
                    out.append(f"    {s}:")
                    for a in sorted((a for (t, a) in self.scopes if t == s), key=order):
                        c, b = self.scopes[(s, a)]
                        out.append(f"      {a}: {c} allocs, {fmt(b)}")
            label_order = "chronological" if sort_order == 1 else "by size (largest first)"
            for a in sorted(per, key=order):
                recs = sorted(((seq, r) for seq, r in live.items() if r[1] == a),
                              key=(lambda x: x[0]) if sort_order == 1 else (lambda x: (-x[1][0], x[0])))
                out += ["", f"  Live {a} allocations {label_order} (up to {max_items}):"]
                out += [f"    {fmt(r[0])} : {a} : {r[2]}" for _, r in recs[:max_items]]
        return "\n".join(out) + "\n"


tracker = _Tracker()


def alloc_tag(shape, dtype) -> str:
    """Warp's tag of an allocation: "array[<dtype>, <shape>] : <file>:<line> : <function>()" of the first frame
    outside mlwarp."""
    shape = tuple(shape) if hasattr(shape, "__iter__") else (shape,)
    info = f"array[{type_name(dtype)}, {shape[0] if len(shape) == 1 else shape}]"
    frame = sys._getframe(1)
    while frame is not None and (frame.f_globals.get("__package__") or "").split(".")[0] == "mlwarp":
        frame = frame.f_back
    if frame is None:
        return info
    return f"{info} : {os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno} : {frame.f_code.co_name}()"


def _check_sort(sort) -> int:
    if sort not in ("size", "chronological"):
        raise ValueError(f"Invalid sort order {sort!r}; expected 'size' or 'chronological'")
    return 1 if sort == "chronological" else 0


def print_memory_report(file=None, sort="size", max_items=10):
    """Prints the allocations tracked so far (wp.config.track_memory, or inside a wp.ScopedMemoryTracker)."""
    order = _check_sort(sort)
    if config.track_memory and not tracker.enabled:
        tracker.enabled = True
    if not tracker.enabled:
        raise RuntimeError("Allocation tracking is not active. "
                           "Set wp.config.track_memory = True before calling wp.init(), "
                           "or use wp.ScopedMemoryTracker as a context manager.")
    print(tracker.report(order, max_items), file=file or sys.stdout, end="")


class ScopedMemoryTracker:
    """Tracks the arrays allocated inside the scope (CPU and CUDA), under the scope's name (nested scopes:
    "outer/inner"), and prints Warp's allocation report on exit."""

    def __init__(self, name: str = "root", active: bool = True, print: bool = True,
                 report_func: Callable[[str], None] | None = None):
        self.name = name
        self.active = active
        self.print = print
        self.report_func = report_func
        self._did_enable = False

    def __enter__(self):
        if not self.active:
            return self
        tracker.stack().append(self.name)
        if not tracker.enabled:
            tracker.enabled = True
            self._did_enable = True
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self.active:
            return
        stack = tracker.stack()
        if stack:
            stack.pop()
        try:
            if self.print:
                self.report()
        finally:
            if self._did_enable:
                tracker.enabled = False

    def report(self, file=None, sort="size", max_items=10):
        text = tracker.report(_check_sort(sort), max_items)
        if self.report_func is not None:
            self.report_func(text)
        else:
            print(text, file=file or sys.stdout, end="")

    def clear(self):
        """Forgets everything tracked so far (tracking goes on)."""
        with tracker.lock:
            tracker.reset()


def track(owner, nbytes: int, device, shape, dtype) -> None:
    """Records a new array's storage (`owner`: the object whose collection frees it); array.py and cuda_array.py
    call this only while tracking is on (a ScopedMemoryTracker, or wp.config.track_memory)."""
    if not tracker.enabled:  # wp.config.track_memory: tracking from the first allocation on
        tracker.enabled = True
    if nbytes:  # (an empty array allocates nothing, as in Warp)
        tracker.record(owner, int(nbytes), str(device), alloc_tag(shape, dtype))
