"""Warp's device API for CUDA: device queries, the default device, ScopedDevice, synchronisation.

Nothing here imports cuda-python until a CUDA device is asked for; on a
machine without a driver every query answers "no CUDA device" cheaply."""

from __future__ import annotations

from .runtime.cuda import devices as _cuda
from .runtime.cuda import driver as _drv
from .runtime.device import get_device, set_device

__all__ = ["is_cuda_available", "get_cuda_devices", "get_cuda_device_count", "get_cuda_device",
           "get_preferred_device", "ScopedDevice", "synchronize", "synchronize_device", "is_mempool_supported",
           "get_device_arch"]


def is_cuda_available() -> bool:
    return _cuda.count() > 0


def get_cuda_devices() -> list:
    return list(_cuda.devices())


def get_cuda_device_count() -> int:
    return _cuda.count()


def get_cuda_device(ordinal: int | None = None):
    return get_device("cuda" if ordinal is None else f"cuda:{ordinal}")


def get_preferred_device():
    """cuda:0 when a GPU is usable, else the CPU (Warp's rule)."""
    found = _cuda.devices()
    return found[0] if found else get_device("cpu")


def get_device_arch(device=None) -> int | None:
    """The compute capability as an int (90 for sm_90) of a CUDA device; None for the CPU."""
    dev = get_device(device)
    return dev.arch if dev.is_cuda else None


def is_mempool_supported(device=None) -> bool:
    dev = get_device(device)
    return bool(dev.is_cuda and dev.is_mempool_supported)


class ScopedDevice:
    """`with wp.ScopedDevice("cuda:1"):` makes the device the default one (and its context current) inside."""

    def __init__(self, device):
        self.device = get_device(device)

    def __enter__(self):
        self.saved = get_device(None)
        set_device(self.device)
        if self.device.is_cuda:
            self.device.make_current()
        return self.device

    def __exit__(self, *exc):
        set_device(self.saved)
        if self.saved.is_cuda:
            self.saved.make_current()


def synchronize_device(device=None) -> None:
    """Waits for all work queued on a CUDA device (nothing to wait for on the CPU)."""
    dev = get_device(device)
    if dev.is_cuda:
        dev.make_current()
        _drv.call("cuCtxSynchronize")


def synchronize() -> None:
    """Waits for all work queued on every CUDA device this process has used."""
    for dev in _cuda.devices():
        if dev._context is not None:
            synchronize_device(dev)
