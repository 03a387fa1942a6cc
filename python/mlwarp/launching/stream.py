"""Warp's stream and event API on CUDA devices.

Each device has a current stream (`wp.get_stream`): launches, allocations
and copies on that device go to it unless a `stream=` says otherwise.
Stream and Event are the runtime's classes (runtime/cuda/streams.py)."""

from __future__ import annotations

from mlwarp.runtime.cuda.streams import Event, Stream, _cuda_device
from mlwarp.runtime.device import get_device

__all__ = ["Stream", "Event", "ScopedStream", "get_stream", "set_stream", "record_event", "wait_event",
           "wait_stream", "synchronize_stream", "synchronize_event", "get_event_elapsed_time"]


def get_stream(device=None) -> Stream:
    """The current stream of a CUDA device (default: the current CUDA device)."""
    return _cuda_device(device).stream


def set_stream(stream: Stream, device=None, sync: bool = False) -> None:
    """Makes `stream` the current stream of its device; with sync=True it first waits for the old one."""
    dev = _cuda_device(device) if device is not None else stream.device
    if sync:
        stream.wait_stream(dev.stream)
    dev.stream = stream


class ScopedStream:
    """`with wp.ScopedStream(s):` makes `s` current (and its device the default device) inside; with
    sync_enter (default) `s` first waits for the stream it replaces, with sync_exit the old one then
    waits for `s`."""

    def __init__(self, stream: Stream | None, sync_enter: bool = True, sync_exit: bool = False):
        self.stream = stream
        self.sync_enter, self.sync_exit = sync_enter, sync_exit

    def __enter__(self):
        if self.stream is None:
            return None
        from mlwarp.launching.cuda import ScopedDevice

        self._device_scope = ScopedDevice(self.stream.device)
        self._device_scope.__enter__()
        dev = self.stream.device
        self.saved = dev.stream
        if self.sync_enter and self.saved is not self.stream:
            self.stream.wait_stream(self.saved)
        dev.stream = self.stream
        return self.stream

    def __exit__(self, exc_type, exc_value, traceback):
        if self.stream is None:
            return
        dev = self.stream.device
        dev.stream = self.saved
        if self.sync_exit and self.saved is not self.stream:
            self.saved.wait_stream(self.stream)
        self._device_scope.__exit__(exc_type, exc_value, traceback)


def record_event(event: Event | None = None, external: bool = False) -> Event:
    """Records `event` (a new one when None) on the current stream of the event's (or current) device."""
    stream = get_stream(event.device if event is not None else None)
    return stream.record_event(event, external)


def wait_event(event: Event, external: bool = False) -> None:
    """The current stream (of the current CUDA device) waits for `event`."""
    get_stream().wait_event(event, external)


def wait_stream(other_stream: Stream, event: Event | None = None, external: bool = False) -> None:
    """The current stream waits for the work queued on `other_stream` so far."""
    get_stream().wait_stream(other_stream, event, external)


def synchronize_stream(stream_or_device=None) -> None:
    """Blocks until the work queued on a stream (or on a device's current stream) is done."""
    s = stream_or_device if isinstance(stream_or_device, Stream) else get_stream(stream_or_device)
    s.synchronize()


def synchronize_event(event: Event) -> None:
    event.synchronize()


def get_event_elapsed_time(start_event: Event, end_event: Event, synchronize: bool = True) -> float:
    """Milliseconds between two events recorded with enable_timing=True."""
    if synchronize:
        end_event.synchronize()
    return start_event.elapsed_ms(end_event)
