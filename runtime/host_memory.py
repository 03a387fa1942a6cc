"""Numpy views of CPU memory someone else owns (a raw pointer, a torch tensor, a DLPack producer): what a CPU
wp.array's storage is then. The CPU counterpart of runtime/cuda/memory.py's DeviceView."""

from __future__ import annotations

import numpy as np

from mlwarp.core import types as wt


class ExternalMemory:
    """Exposes foreign memory to numpy; the numpy view's `.base` is this object, which keeps `owner` alive
    and calls `deleter(ptr, size_bytes)` when the last view is gone."""

    def __init__(self, ptr, shape, strides, np_dtype, owner, deleter, readonly=False):
        self.__array_interface__ = {"data": (int(ptr), readonly), "shape": shape, "strides": strides,
                                    "typestr": np_dtype.str, "version": 3}
        self.owner = owner
        self._deleter = deleter
        self._ptr = int(ptr)
        self._bytes = int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize

    def __del__(self):
        if self._deleter is not None:
            self._deleter(self._ptr, self._bytes)


def wrap_pointer(ptr, shape, strides, wdt, owner=None, deleter=None, readonly=False) -> np.ndarray:
    """A numpy view of CPU memory at `ptr` holding elements of Warp type `wdt` (byte `strides` of the array
    dimensions, C-contiguous when None)."""
    np_dt = wt.numpy_dtype(wdt)
    inner_shape = wt.inner_shape(wdt)
    full_shape = shape + inner_shape
    inner = np.empty(inner_shape, dtype=np_dt).strides if inner_shape else ()
    strides = None if strides is None else tuple(int(s) for s in strides) + inner
    if int(np.prod(full_shape, dtype=np.int64)) == 0:
        return np.empty(full_shape, dtype=np_dt)
    if not ptr:
        raise ValueError("Cannot wrap a null pointer in a non-empty array")
    return np.asarray(ExternalMemory(ptr, full_shape, strides, np_dt, owner, deleter, readonly))
