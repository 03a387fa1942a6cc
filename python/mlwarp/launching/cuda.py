"""Warp's device API for CUDA: device queries, the default device, ScopedDevice, synchronisation.

Nothing here imports cuda-python until a CUDA device is asked for; on a
machine without a driver every query answers "no CUDA device" cheaply."""

from __future__ import annotations

from mlwarp.runtime.cuda import devices as _cuda
from mlwarp.runtime.cuda import driver as _drv
from mlwarp.launching.cuda_compile import KNOWN_ARCHS
from mlwarp.runtime.device import get_device, set_device, unregister

__all__ = ["is_cuda_available", "get_cuda_devices", "get_cuda_device_count", "get_cuda_device",
           "get_preferred_device", "ScopedDevice", "synchronize", "synchronize_device", "is_mempool_supported",
           "get_device_arch", "is_mempool_enabled", "is_mempool_access_supported", "is_mempool_access_enabled",
           "is_peer_access_supported", "is_peer_access_enabled", "unmap_cuda_device", "get_cuda_supported_archs"]


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


def is_mempool_enabled(device=None) -> bool:
    return bool(get_device(device).is_mempool_enabled)


def is_peer_access_supported(target_device, peer_device) -> bool:
    """Whether `peer_device` can read memory allocated on `target_device` (False unless both are CUDA devices)."""
    target, peer = get_device(target_device), get_device(peer_device)
    if not (target.is_cuda and peer.is_cuda):
        return False
    if target is peer:
        return True
    return bool(_drv.call("cuDeviceCanAccessPeer", peer.handle, target.handle))


def is_peer_access_enabled(target_device, peer_device) -> bool:
    """True for a CUDA device and itself; mlwarp enables no access between two different GPUs."""
    target, peer = get_device(target_device), get_device(peer_device)
    return bool(target.is_cuda and peer.is_cuda and target is peer)


def is_mempool_access_supported(target_device, peer_device) -> bool:
    target = get_device(target_device)
    return bool(target.is_mempool_supported and is_peer_access_supported(target, peer_device))


def is_mempool_access_enabled(target_device, peer_device) -> bool:
    target, peer = get_device(target_device), get_device(peer_device)
    return bool(target.is_cuda and peer.is_cuda and target.is_mempool_supported and target is peer)


def unmap_cuda_device(alias: str) -> None:
    """Forgets a CUDA device alias; RuntimeError("Invalid CUDA device alias '<alias>'") for any other name."""
    unregister(alias)


def get_cuda_supported_archs() -> list:
    """The sm_XX architectures mlwarp's CUDA target compiles for, lowest first; [] without a CUDA device (as
    Warp's, whose list comes from NVRTC only when CUDA is available)."""
    return sorted(KNOWN_ARCHS) if is_cuda_available() else []


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

    def __exit__(self, exc_type, exc_value, traceback):
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
