"""CUDA streams and events (driver handles with Warp's Python API around them)."""

from __future__ import annotations

from ..device import get_device
from . import driver as drv


def _cuda_device(device):
    """A CudaDevice from a device, a name or None (the default device when it is a GPU, else cuda:0)."""
    dev = get_device(device)
    if device is None and not dev.is_cuda:
        dev = get_device("cuda")
    if not dev.is_cuda:
        raise RuntimeError(f"Device '{dev}' is not a CUDA device: streams and events exist on CUDA devices only")
    return dev


class Stream:
    """A CUDA stream of one device. `Stream(device)` creates a new non-blocking stream; `Stream(device,
    cuda_stream=handle)` wraps a foreign one (torch, CuPy), which this object then does not destroy."""

    def __init__(self, device=None, priority: int = 0, cuda_stream=None):
        device = _cuda_device(device)
        self.device = device
        device.make_current()
        d = drv.driver()
        if cuda_stream is not None:
            self.handle = cuda_stream if isinstance(cuda_stream, d.CUstream) else d.CUstream(int(cuda_stream))
            self._owner = False
        else:
            flags = d.CUstream_flags.CU_STREAM_NON_BLOCKING
            self.handle = drv.call("cuStreamCreateWithPriority", flags, priority)
            self._owner = True
        self._cached_event = None

    @property
    def cuda_stream(self) -> int:
        """The raw CUstream handle as an int (for torch.cuda.ExternalStream / cupy ExternalStream)."""
        return int(self.handle)

    def __cuda_stream__(self):
        """The CUDA stream protocol (cuda-python, RMM, CuPy): (version 0, the CUstream handle as an int)."""
        return (0, int(self.handle))

    def record_event(self, event=None):
        event = event or Event(self.device)
        self.device.make_current()
        drv.call("cuEventRecord", event.handle, self.handle)
        return event

    def wait_event(self, event) -> None:
        drv.call("cuStreamWaitEvent", self.handle, event.handle, 0)

    def wait_stream(self, other) -> None:
        """This stream waits until the work queued on `other` so far is done."""
        if self._cached_event is None:
            self._cached_event = Event(other.device)
        other.record_event(self._cached_event)
        self.wait_event(self._cached_event)

    def synchronize(self) -> None:
        drv.call("cuStreamSynchronize", self.handle)

    @property
    def is_complete(self) -> bool:
        d = drv.driver()
        (err,) = d.cuStreamQuery(self.handle)
        return err == d.CUresult.CUDA_SUCCESS

    def __del__(self):
        if getattr(self, "_owner", False) and drv._driver is not None:
            try:
                drv._driver.cuStreamDestroy(self.handle)
            except Exception:
                pass

    def __repr__(self):
        return f"Stream(device={self.device}, handle=0x{int(self.handle):x})"


class Event:
    def __init__(self, device=None, enable_timing: bool = False):
        device = _cuda_device(device)
        self.device = device
        device.make_current()
        d = drv.driver()
        flags = 0 if enable_timing else int(d.CUevent_flags.CU_EVENT_DISABLE_TIMING)
        self.handle = drv.call("cuEventCreate", flags)
        self.enable_timing = enable_timing

    def synchronize(self) -> None:
        drv.call("cuEventSynchronize", self.handle)

    @property
    def is_complete(self) -> bool:
        d = drv.driver()
        (err,) = d.cuEventQuery(self.handle)
        return err == d.CUresult.CUDA_SUCCESS

    def elapsed_ms(self, end) -> float:
        return drv.call("cuEventElapsedTime", self.handle, end.handle)

    def __del__(self):
        if drv._driver is not None and hasattr(self, "handle"):
            try:
                drv._driver.cuEventDestroy(self.handle)
            except Exception:
                pass
