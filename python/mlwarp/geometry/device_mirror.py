"""Geometry structures on a CUDA device (issue 17): their descriptors and the arrays they own, in device memory.

A structure on a CUDA device is built on the host, as one on the CPU is (build_kernels.py's kernels on every
core, bvh_sah.py), from host copies of the user's device arrays; then the arrays it owns (tree nodes, sorted
point ids, packed triangles, ...) and its descriptor are copied to device memory. The device descriptor is the
host one with each owned array's word replaced by the address of that array's device copy; the words that
point at the user's arrays already hold their device addresses (the structure's `ptr`s), so a kernel sees the
user's in-place edits as on the CPU. The structure's id is the device descriptor's address.

Warp builds CUDA structures on the GPU (LBVH trees, a radix-sorted grid). mlwarp builds them on the host
because there is no GPU on the machines that develop it to test a device build against; the queries, which
only read the descriptor, give the same answers either way.

Device memory is freed (stream-ordered, runtime/cuda/memory.py) with the mirror, i.e. with the structure.
An owned array keeps its allocation across refits while it fits, so the descriptor's address, the structure's
id, never changes."""

from __future__ import annotations

import numpy as np

from mlwarp.runtime.cuda import memory as mem


class DeviceMirror:
    """The device copy of one structure's descriptor (`words` int64) and of the host arrays it owns."""

    def __init__(self, device, words: int):
        self.device = device
        self._words = int(words)
        self._descriptor = mem.Allocation(device, self._words * 8)
        self._owned: dict[int, mem.Allocation] = {}  # descriptor word -> device copy of the array it points at

    @property
    def id(self) -> int:
        """The device address of the descriptor: the structure's uint64 id on this device."""
        return self._descriptor.ptr

    def publish(self, host_descriptor: np.ndarray, owned: dict) -> None:
        """Copies `owned` ({descriptor word: host numpy array}) and then `host_descriptor`, those words set to the
        copies' device addresses, to the device, in the device stream's order (after the kernels already
        queued there, before the ones launched next). Host memory is pageable, which the driver stages before
        the copy returns: the host arrays may change or go once this returns."""
        if host_descriptor.dtype != np.int64 or host_descriptor.size != self._words:
            raise ValueError(f"a descriptor of {self._words} int64 words was expected, got {host_descriptor.size} "
                             f"{host_descriptor.dtype}")
        words = host_descriptor.copy()
        for word, host in owned.items():
            host = np.ascontiguousarray(host)
            alloc = self._owned.get(word)
            if alloc is None or alloc.nbytes < host.nbytes:
                alloc = self._owned[word] = mem.Allocation(self.device, host.nbytes)
            mem.copy_host_to_device(self.device, alloc.ptr, host.ctypes.data, host.nbytes)
            words[word] = alloc.ptr
        mem.copy_host_to_device(self.device, self.id, words.ctypes.data, words.nbytes)

    def read_descriptor(self) -> np.ndarray:
        """The device descriptor's words, copied back (waits for the device's stream)."""
        words = np.empty(self._words, np.int64)
        mem.copy_device_to_host(self.device, words.ctypes.data, self.id, words.nbytes)
        self.device.stream.synchronize()
        return words
