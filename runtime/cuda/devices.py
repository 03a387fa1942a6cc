"""CUDA devices: one `CudaDevice` per GPU, created on first use, each with its primary context and a
default stream of its own (not the legacy NULL stream, so that work on other streams overlaps it).

The device registry (../device.py) resolves "cuda" and "cuda:N" through this module's `devices` and `get`,
registered as it loads (runtime/__init__.py imports it)."""

from __future__ import annotations

import threading

from .. import device as registry
from ..device import Device, get_device
from . import driver as drv
from .streams import Stream

_devices: list | None = None
_lock = threading.Lock()


class CudaDevice(Device):
    def __init__(self, ordinal: int):
        super().__init__(registry._runtime, f"cuda:{ordinal}", ordinal, is_primary=True)
        self.handle = drv.call("cuDeviceGet", ordinal)
        d = drv.driver()
        attr = d.CUdevice_attribute
        major = drv.call("cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.handle)
        minor = drv.call("cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.handle)
        self.arch = major * 10 + minor
        self.name = drv.call("cuDeviceGetName", 256, self.handle).split(b"\0", 1)[0].decode()
        self.sm_count = drv.call("cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, self.handle)
        self.is_mempool_supported = bool(drv.call(
            "cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, self.handle))
        self.is_mempool_enabled = self.is_mempool_supported  # the context's first use configures the pool
        self._total_memory = drv.call("cuDeviceTotalMem", self.handle)
        self._stream = None
        self._null_stream = None
        self._init_lock = threading.Lock()

    is_ipc_supported = False  # (mlwarp has no CUDA IPC path: docs/surface.md)

    def _attribute(self, name: str) -> bool:
        return bool(drv.call("cuDeviceGetAttribute", getattr(drv.driver().CUdevice_attribute, name), self.handle))

    # Warp's capability flags, from the driver
    is_uva = property(lambda self: self._attribute("CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING"))
    is_managed_memory_supported = property(lambda self: self._attribute("CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY"))
    is_concurrent_managed_access_supported = property(
        lambda self: self._attribute("CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS"))
    is_cpu_memory_access_from_gpu_supported = property(
        lambda self: self._attribute("CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS"))
    is_cpu_gpu_atomic_supported = property(
        lambda self: self._attribute("CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED"))
    is_gpu_memory_access_from_cpu_supported = property(
        lambda self: self._attribute("CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES"))

    @property
    def max_shared_memory_per_block(self) -> int:
        """The opt-in maximum of shared memory per block, in bytes (queried on first use)."""
        found = self.__dict__.get("_max_smem")
        if found is None:
            attr = drv.driver().CUdevice_attribute
            found = self._max_smem = drv.call(
                "cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, self.handle)
        return found

    @property
    def context(self):
        """The device's primary context, retained on first use (and its memory pool configured)."""
        if self._context is None:
            with self._init_lock:
                if self._context is None:
                    ctx = drv.call("cuDevicePrimaryCtxRetain", self.handle)
                    drv.call("cuCtxSetCurrent", ctx)
                    if self.is_mempool_supported:
                        _keep_pool_memory(self)
                    self._context = ctx
        return self._context

    def make_current(self) -> None:
        drv.call("cuCtxSetCurrent", self.context)

    def _swap_context(self, context):
        previous = drv.call("cuCtxGetCurrent")
        drv.call("cuCtxSetCurrent", self.context if context is None else context)
        return previous

    @property
    def total_memory(self) -> int:
        """Bytes of device memory (cuDeviceTotalMem)."""
        return self._total_memory

    @property
    def free_memory(self) -> int:
        """Bytes of device memory free now (cuMemGetInfo)."""
        with self.context_guard:
            free, _total = drv.call("cuMemGetInfo")
        return int(free)

    @property
    def stream(self):
        """The stream work on this device goes to unless a `ScopedStream`/`set_stream` says otherwise."""
        if self._stream is None:
            self._stream = Stream(self)
        return self._stream

    @stream.setter
    def stream(self, s):
        if s.device is not self:
            raise ValueError(f"stream of device '{s.device}' cannot be the stream of '{self}'")
        self._stream = s

    def set_stream(self, stream, sync: bool = True) -> None:
        """Makes `stream` this device's current stream; with `sync` it first waits for the work queued on the
        stream it replaces (as Warp's)."""
        if stream.device is not self:
            raise RuntimeError(f"Stream from device {stream.device} cannot be used on device {self}")
        if sync and self._stream is not None and self._stream is not stream:
            stream.wait_stream(self._stream)
        self._stream = stream

    @property
    def null_stream(self):
        """CUDA's legacy NULL stream of this device, as a Stream (made on first use)."""
        if self._null_stream is None:
            self._null_stream = Stream(self, cuda_stream=None)
        return self._null_stream


def _keep_pool_memory(dev) -> None:
    """Freed blocks stay in the stream-ordered pool instead of going back to the OS at each sync (as Warp)."""
    d = drv.driver()
    pool = drv.call("cuDeviceGetDefaultMemPool", dev.handle)
    threshold = d.cuuint64_t(0xFFFFFFFFFFFFFFFF)
    drv.call("cuMemPoolSetAttribute", pool, d.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, threshold)


def devices() -> list:
    """Every CUDA device of this machine (empty without a driver, cuda-python or GPU)."""
    global _devices
    if _devices is None:
        with _lock:
            if _devices is None:
                if not drv.available():
                    _devices = []
                else:
                    _devices = [CudaDevice(i) for i in range(drv.call("cuDeviceGetCount"))]
                    for dev in _devices:  # so that `array.device == "cuda:0"` and get_devices() see them
                        registry._devices[dev.alias] = dev
    return _devices


def count() -> int:
    return len(devices())


def parse_alias(ident: str) -> int | None:
    """"cuda" -> None (the current CUDA device), "cuda:N" -> N; ValueError for anything else."""
    if ident == "cuda":
        return None
    head, _, tail = ident.partition(":")
    if head != "cuda" or not tail.isdigit():
        raise ValueError(f"Invalid device identifier: {ident!r}")
    return int(tail)


def get(ident: str) -> CudaDevice:
    ordinal = parse_alias(ident)
    found = devices()
    if not found:
        raise ValueError(f"Device '{ident}' is not available: {drv.unavailable_reason() or 'no CUDA device'}")
    if ordinal is None:
        return current()
    if ordinal >= len(found):
        raise ValueError(f"Device '{ident}' is not available: this machine has {len(found)} CUDA device(s)")
    return found[ordinal]


def current() -> CudaDevice:
    """The device "cuda" means: the default device (set_device/ScopedDevice) when it is a GPU, else cuda:0."""
    dev = get_device(None)
    return dev if isinstance(dev, CudaDevice) else devices()[0]


registry.register_cuda(devices, get)


def device_of_current_context() -> CudaDevice:
    """The device whose primary context is current on this thread (mlwarp makes a device's context current
    before allocating on it); the current CUDA device when no device's context is."""
    ctx = drv.call("cuCtxGetCurrent")
    found = next((dev for dev in devices() if dev._context is not None and dev._context == ctx), None)
    return found if found is not None else current()
