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
    """A CUDA stream of one device. `Stream(device, priority)` creates a new non-blocking stream (priority -1 high
    or 0 default, other values clamped, as Warp); `Stream(device, cuda_stream=handle)` wraps a foreign one (torch,
    CuPy; None is the legacy NULL stream), which this object then does not destroy."""

    def __new__(cls, *args, **kwargs):
        instance = super().__new__(cls)
        instance.handle = None  # (so that __del__ of a stream whose __init__ raised destroys nothing)
        instance._owner = False
        return instance

    def __init__(self, device=None, priority: int = 0, **kwargs):
        unknown = set(kwargs) - {"cuda_stream"}
        if unknown:
            raise TypeError(f"Stream() got an unexpected keyword argument {sorted(unknown)[0]!r}")
        device = _cuda_device(device)
        self.device = device
        device.make_current()
        d = drv.driver()
        self._cached_event = None
        # cuda_stream is a keyword of its own: None is a valid value (CUDA's legacy NULL stream), as in Warp
        if "cuda_stream" in kwargs:
            cuda_stream = kwargs["cuda_stream"]
            self.handle = cuda_stream if isinstance(cuda_stream, d.CUstream) else d.CUstream(int(cuda_stream or 0))
        else:
            if not isinstance(priority, int):
                raise TypeError("Stream priority must be an integer.")
            flags = d.CUstream_flags.CU_STREAM_NON_BLOCKING
            self.handle = drv.call("cuStreamCreateWithPriority", flags, max(-1, min(priority, 0)))
            self._owner = True

    @property
    def cuda_stream(self) -> int:
        """The raw CUstream handle as an int (for torch.cuda.ExternalStream / cupy ExternalStream)."""
        return int(self.handle)

    def __cuda_stream__(self):
        """The CUDA stream protocol (cuda-python, RMM, CuPy): (version 0, the CUstream handle as an int)."""
        return (0, int(self.handle))

    @property
    def cached_event(self) -> Event:
        """The event this stream records for others to wait on (wait_stream), made on first use."""
        if self._cached_event is None:
            self._cached_event = Event(self.device)
        return self._cached_event

    def record_event(self, event: Event | None = None, external: bool = False) -> Event:
        """Records `event` (a new one when None) on this stream. `external` records it as an external event node
        of a stream capture (CU_EVENT_RECORD_EXTERNAL); outside a capture it changes nothing, as in Warp."""
        if event is None:
            event = Event(self.device)
        elif event.device != self.device:
            raise RuntimeError(f"Event from device {event.device} cannot be recorded on stream from device "
                               f"{self.device}")
        self.device.make_current()
        if external:
            flag = drv.driver().CUevent_record_flags.CU_EVENT_RECORD_EXTERNAL
            drv.call("cuEventRecordWithFlags", event.handle, self.handle, flag)
        else:
            drv.call("cuEventRecord", event.handle, self.handle)
        return event

    def wait_event(self, event: Event, external: bool = False) -> None:
        """Work queued on this stream from now on waits for `event` (as an external event node of a stream
        capture with `external`: CU_EVENT_WAIT_EXTERNAL)."""
        flags = drv.driver().CUevent_wait_flags.CU_EVENT_WAIT_EXTERNAL if external else 0
        drv.call("cuStreamWaitEvent", self.handle, event.handle, flags)

    def wait_stream(self, other_stream: Stream, event: Event | None = None, external: bool = False) -> None:
        """This stream waits until the work queued on `other_stream` so far is done (through `event`, by default
        `other_stream.cached_event`)."""
        if event is None:
            event = other_stream.cached_event
        other_stream.record_event(event, external)
        self.wait_event(event, external)

    def synchronize(self) -> None:
        drv.call("cuStreamSynchronize", self.handle)

    @property
    def is_complete(self) -> bool:
        d = drv.driver()
        (err,) = d.cuStreamQuery(self.handle)
        return err == d.CUresult.CUDA_SUCCESS

    @property
    def is_capturing(self) -> bool:
        """Whether a CUDA stream capture is recording this stream (cuStreamIsCapturing)."""
        status = drv.call("cuStreamIsCapturing", self.handle)
        return status == drv.driver().CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE

    @property
    def is_blocking(self) -> bool:
        """Whether the stream synchronizes with the legacy NULL stream (streams mlwarp creates do not)."""
        flags = int(drv.call("cuStreamGetFlags", self.handle))
        return not flags & int(drv.driver().CUstream_flags.CU_STREAM_NON_BLOCKING)

    @property
    def priority(self) -> int:
        """The stream's priority (cuStreamGetPriority): -1 high, 0 default."""
        return int(drv.call("cuStreamGetPriority", self.handle))

    def __del__(self):
        if getattr(self, "_owner", False) and drv._driver is not None:
            try:
                drv._driver.cuStreamDestroy(self.handle)
            except Exception:
                pass

    def __repr__(self):
        return f"Stream(device={self.device}, handle=0x{int(self.handle):x})"


class Event:
    """A CUDA event of one device (Warp's API): timing disabled unless enable_timing; `interprocess` makes it
    shareable between processes; `cuda_event` wraps an existing handle (not destroyed by this object)."""

    class Flags:
        """Warp's (and CUDA's) event creation flags."""

        DEFAULT = 0x0
        BLOCKING_SYNC = 0x1
        DISABLE_TIMING = 0x2
        INTERPROCESS = 0x4

    def __new__(cls, *args, **kwargs):
        instance = super().__new__(cls)
        instance._owner = False
        return instance

    def __init__(self, device=None, cuda_event=None, enable_timing: bool = False, interprocess: bool = False):
        device = _cuda_device(device)
        self.device = device
        self.enable_timing = enable_timing
        if cuda_event is not None:
            self.handle = cuda_event
            return
        flags = Event.Flags.DEFAULT
        if not enable_timing:
            flags |= Event.Flags.DISABLE_TIMING
        if interprocess:
            if enable_timing:
                raise ValueError("The combination of 'enable_timing=True' and 'interprocess=True' is not allowed.")
            flags |= Event.Flags.INTERPROCESS
        device.make_current()
        self.handle = drv.call("cuEventCreate", flags)
        self._owner = True

    @property
    def cuda_event(self):
        """The CUevent handle (Warp's name)."""
        return self.handle

    def ipc_handle(self) -> bytes:
        """Warp's CUDA IPC handle of the event. mlwarp has no CUDA IPC path."""
        raise NotImplementedError("Event.ipc_handle(): mlwarp's CUDA runtime has no CUDA IPC path "
                                  "(cuIpcGetEventHandle / cuIpcOpenEventHandle)")

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
        if self._owner and drv._driver is not None:
            try:
                drv._driver.cuEventDestroy(self.handle)
            except Exception:
                pass
