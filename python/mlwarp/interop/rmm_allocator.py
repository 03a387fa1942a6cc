"""`wp.utils.AllocatorRmm`: Warp's allocator that takes CUDA array memory from RAPIDS Memory Manager (RMM).

It is a custom allocator (wp.set_cuda_allocator / wp.set_device_allocator / wp.ScopedAllocator, which mlwarp's
CUDA arrays use): each allocation is an `rmm.DeviceBuffer` of the memory resource RMM has current, ordered on the
current stream of the device being allocated on (mlwarp's allocation path makes that device's context current
first, as Warp's context guard does). Without the `rmm` package, creating one raises Warp's ImportError."""

from __future__ import annotations

from mlwarp.runtime.cuda.devices import device_of_current_context

__all__ = ["AllocatorRmm"]


class AllocatorRmm:
    """Allocates Warp device memory through RMM (`rmm.DeviceBuffer`); needs the `rmm` package (Linux, CUDA)."""

    def __init__(self):
        try:
            import rmm  # noqa: F401  (lazy: rmm, an optional package only this allocator needs)
        except ImportError as e:
            raise ImportError(
                "Failed to import 'rmm'. Ensure it is installed and compatible with your CUDA version. "
                "See https://docs.nvidia.com/datascience/install/ for installation instructions.") from e
        self._buffers: dict[int, object] = {}

    @staticmethod
    def _get_rmm_stream():
        """An RMM Stream over the current stream of the CUDA device whose context is current (the device being
        allocated on); mlwarp's Stream speaks the `__cuda_stream__` protocol RMM accepts."""
        from rmm.pylibrmm.stream import Stream as RmmStream  # lazy: rmm (optional)

        return RmmStream(obj=device_of_current_context().stream)

    def allocate(self, size_in_bytes: int) -> int:
        """Allocates device memory via RMM and returns its device pointer (0 for 0 bytes)."""
        if size_in_bytes == 0:
            return 0
        import rmm  # lazy: rmm (optional)

        buf = rmm.DeviceBuffer(size=size_in_bytes, stream=self._get_rmm_stream())
        ptr = buf.ptr
        self._buffers[ptr] = buf
        return ptr

    def deallocate(self, ptr: int, size_in_bytes: int) -> None:
        """Frees device memory by releasing its RMM DeviceBuffer."""
        if ptr == 0:
            return  # a zero-size allocation: nothing was allocated
        try:
            del self._buffers[ptr]
        except KeyError:
            raise RuntimeError(
                f"AllocatorRmm.deallocate called with unrecognized pointer {ptr:#x} "
                f"(size={size_in_bytes}). This may indicate a double-free or a "
                f"pointer that was not allocated by this AllocatorRmm instance.") from None

    def __repr__(self):
        return f"AllocatorRmm(active_buffers={len(self._buffers)})"
