"""Device memory: stream-ordered allocation from the device's memory pool (cuMemAllocAsync /
cuMemFreeAsync, plain cuMemAlloc where pools are unsupported), and async copies and fills."""

from __future__ import annotations

import numpy as np

from . import driver as drv


class Allocation:
    """`nbytes` of device memory, freed (stream-ordered) when this object goes away: on `stream` when one was
    given (the memory is used on that stream), else on the device's current stream.

    It also exposes the memory to numpy through `__array_interface__`: CUDA arrays
    keep their geometry (shape, byte strides, views) in a numpy array over the
    device address, which mlwarp never reads from the host."""

    def __init__(self, device, nbytes: int, stream=None, use_custom=True):
        self.device = device
        self.nbytes = int(nbytes)
        self.ptr = 0
        self._pooled = False
        self._stream = stream
        self._custom = None
        if self.nbytes == 0:
            return
        device.make_current()
        custom = getattr(device, "_custom_allocator", None) if use_custom else None
        if custom is not None:  # wp.set_device_allocator / wp.ScopedAllocator
            self.ptr = int(custom.allocate(self.nbytes))
            self._custom = custom
        elif device.is_mempool_enabled:  # (wp.set_mempool_enabled(device, False): plain cuMemAlloc)
            stream = stream or device.stream
            self.ptr = int(drv.call("cuMemAllocAsync", self.nbytes, stream.handle))
            self._pooled = True
        else:
            self.ptr = int(drv.call("cuMemAlloc", self.nbytes))

    def free(self) -> None:
        if not self.ptr or drv._driver is None:
            return
        ptr, self.ptr = self.ptr, 0
        if self._custom is not None:
            self._custom.deallocate(ptr, self.nbytes)
            return
        try:
            self.device.make_current()
            if self._pooled:
                drv.call("cuMemFreeAsync", ptr, (self._stream or self.device.stream).handle)
            else:
                drv.call("cuMemFree", ptr)
        except Exception:  # interpreter shutdown: the driver frees everything with the context
            pass

    def __del__(self):
        self.free()


class DeviceView:
    """An object numpy accepts (`np.asarray`) as an array at a device address; `owner` stays alive with it."""

    def __init__(self, ptr: int, shape: tuple, strides, np_dtype, owner):
        self.__array_interface__ = {"data": (int(ptr), False), "shape": tuple(shape),
                                    "strides": None if strides is None else tuple(strides),
                                    "typestr": np_dtype.str, "version": 3}
        self.owner = owner


def device_array(ptr: int, shape: tuple, strides, np_dtype, owner) -> np.ndarray:
    """The numpy geometry view of `shape` elements of `np_dtype` at a device address (never read by numpy).
    A struct's dtype is restored by a view: the array interface's typestr is only "|V<size>", and its descr
    would turn padding into named fields."""
    view = np.asarray(DeviceView(ptr, shape, strides, np_dtype, owner))
    return view.view(np_dtype) if np_dtype.fields is not None else view


def _stream(device, stream):
    return (stream or device.stream).handle


def copy_host_to_device(device, dst: int, src_host: int, nbytes: int, stream=None) -> None:
    if nbytes:
        device.make_current()
        drv.call("cuMemcpyHtoDAsync", dst, src_host, nbytes, _stream(device, stream))


def copy_device_to_host(device, dst_host: int, src: int, nbytes: int, stream=None) -> None:
    if nbytes:
        device.make_current()
        drv.call("cuMemcpyDtoHAsync", dst_host, src, nbytes, _stream(device, stream))


def copy_device_to_device(device, dst: int, src: int, nbytes: int, stream=None) -> None:
    """Works between devices too (unified addressing: the driver routes peer copies)."""
    if nbytes:
        device.make_current()
        drv.call("cuMemcpyAsync", dst, src, nbytes, _stream(device, stream))


def memset8(device, dst: int, value: int, nbytes: int, stream=None) -> None:
    if nbytes:
        device.make_current()
        drv.call("cuMemsetD8Async", dst, value & 0xFF, nbytes, _stream(device, stream))
