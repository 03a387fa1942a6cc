"""Warp 1.19's members of Device, Stream and Event: on the CPU device as Warp answers them (values and messages
recorded from warp-lang 1.19.0 on a CPU-only machine), and on CUDA devices against the fake driver
(cuda_fake_driver.py): which driver call each makes, with which flags. The tests do not import warp-lang."""

import os
import platform

import pytest

import mlwarp as wp
from mlwarp import runtime
from mlwarp.runtime import device as device_registry
from mlwarp.runtime.cuda import devices as cuda_devices
from mlwarp.runtime.cuda import driver as drv

from cuda_fake_driver import FakeDriver


@pytest.fixture
def fake(monkeypatch):
    """Two fake sm_90 GPUs in place of the driver; mlwarp's CUDA state is reset before and after."""
    fake = FakeDriver(arches=(90, 90))
    monkeypatch.setattr(drv, "_driver", fake)
    monkeypatch.setattr(drv, "_init_error", None)
    monkeypatch.setattr(cuda_devices, "_devices", None)
    monkeypatch.setattr(device_registry, "_default", None)
    saved = dict(device_registry._devices)
    yield fake
    device_registry._devices.clear()
    device_registry._devices.update(saved)


def test_cpu_device_members():
    cpu = wp.get_device("cpu")
    # warp-lang 1.19.0 on the CPU: context None, arch 0, no stream, the processor's name
    assert cpu.context is None and cpu.has_context is False and cpu.arch == 0 and cpu.ordinal == -1
    assert cpu.name == (platform.processor() or "CPU")
    assert cpu.has_stream is False and cpu.null_stream is None and cpu.is_primary is False
    assert cpu.runtime is runtime
    with pytest.raises(RuntimeError, match=r"^Device cpu is not a CUDA device$"):
        cpu.stream
    with pytest.raises(RuntimeError, match=r"^Device cpu is not a CUDA device$"):
        cpu.set_stream(None)
    cpu.make_current()  # nothing to make current
    with cpu.context_guard:
        pass
    page = os.sysconf("SC_PAGE_SIZE")
    assert cpu.total_memory == os.sysconf("SC_PHYS_PAGES") * page
    assert 0 < cpu.free_memory <= cpu.total_memory
    assert cpu.default_allocator is wp.get_device_allocator("cpu") is cpu.pinned_allocator
    ptr = cpu.default_allocator.allocate(64)
    assert ptr % 64 == 0
    cpu.default_allocator.deallocate(ptr, 64)


def test_device_constructor_rule():
    with pytest.raises(RuntimeError, match=r"^A non-primary CUDA device requires a valid context, got context=None "
                                           r"for device ordinal 3$"):
        wp.Device(runtime, "cuda:3", 3, is_primary=False)


def test_cuda_device_members(fake):
    dev = wp.get_device("cuda:0")
    assert dev.runtime is runtime and dev.ordinal == 0 and dev.is_primary is True
    assert dev.has_context is False and dev.has_stream is False
    assert dev.context is not None and dev.has_context is True  # retained on first use
    assert dev.total_memory == 1 << 30
    a = wp.zeros(1024, dtype=wp.uint8, device=dev)
    assert dev.free_memory == (1 << 30) - 1024 and a.size == 1024
    assert dev.pinned_allocator is None and dev.default_allocator is wp.get_device_allocator(dev)
    # context_guard: the device's context inside, the previous one restored after
    other = wp.get_device("cuda:1")
    other.make_current()
    assert fake.current == 1
    with dev.context_guard:
        assert fake.current == 0
    assert fake.current == 1


def test_set_stream_and_null_stream(fake):
    dev = wp.get_device("cuda:0")
    old = dev.stream
    s = wp.Stream(dev)
    fake.calls.clear()
    dev.set_stream(s)  # sync=True: `s` waits for the stream it replaces
    assert dev.stream is s and dev.has_stream
    assert [c[0] for c in fake.calls] == ["cuEventRecord", "cuStreamWaitEvent"]
    assert fake.calls[0][1][1] == int(old.handle) and fake.calls[1][1][0] == int(s.handle)
    fake.calls.clear()
    dev.set_stream(old, sync=False)
    assert dev.stream is old and fake.calls == []
    with pytest.raises(RuntimeError, match=r"^Stream from device cuda:1 cannot be used on device cuda:0$"):
        dev.set_stream(wp.Stream("cuda:1"))
    assert int(dev.null_stream.handle) == 0 and dev.null_stream is dev.null_stream
    assert dev.null_stream.is_blocking is True  # the legacy NULL stream synchronizes with others


def test_stream_members(fake):
    s = wp.Stream("cuda:0", priority=-5)  # clamped to -1, as Warp
    assert s.priority == -1 and s.is_blocking is False and s.is_capturing is False
    fake.capturing_streams.add(int(s.handle))
    assert s.is_capturing is True
    assert wp.Stream("cuda:0").priority == 0
    assert s.__cuda_stream__() == (0, int(s.handle))
    with pytest.raises(TypeError, match=r"^Stream priority must be an integer\.$"):
        wp.Stream("cuda:0", priority=0.5)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'stream'"):
        wp.Stream("cuda:0", stream=1)
    foreign = wp.Stream("cuda:0", cuda_stream=1234)
    assert foreign.cuda_stream == 1234 and foreign._owner is False
    # cached_event: made once, on the stream's device
    assert s.cached_event is s.cached_event and s.cached_event.device == "cuda:0"


def test_record_wait_external(fake):
    s, t = wp.Stream("cuda:0"), wp.Stream("cuda:0")
    e = wp.Event("cuda:0")
    fake.calls.clear()
    assert s.record_event(e, external=True) is e
    s.wait_event(e, external=True)
    assert fake.calls == [("cuEventRecordWithFlags", (int(e.handle), int(s.handle), 1)),
                          ("cuStreamWaitEvent", (int(s.handle), int(e.handle), 1))]
    fake.calls.clear()
    s.wait_stream(t)  # through t's cached event
    assert fake.calls == [("cuEventRecord", (int(t.cached_event.handle), int(t.handle))),
                          ("cuStreamWaitEvent", (int(s.handle), int(t.cached_event.handle)))]
    fake.calls.clear()
    with wp.ScopedStream(s, sync_enter=False):
        wp.wait_stream(t, e, external=True)
        assert wp.record_event(e, external=True) is e
    assert fake.calls == [("cuEventRecordWithFlags", (int(e.handle), int(t.handle), 1)),
                          ("cuStreamWaitEvent", (int(s.handle), int(e.handle), 1)),
                          ("cuEventRecordWithFlags", (int(e.handle), int(s.handle), 1))]
    with pytest.raises(RuntimeError, match=r"^Event from device cuda:1 cannot be recorded on stream from device "
                                           r"cuda:0$"):
        s.record_event(wp.Event("cuda:1"))


def test_event_members(fake):
    assert wp.Event.Flags.DEFAULT == 0 and wp.Event.Flags.BLOCKING_SYNC == 1
    assert wp.Event.Flags.DISABLE_TIMING == 2 and wp.Event.Flags.INTERPROCESS == 4
    e = wp.Event("cuda:0", interprocess=True)
    assert fake.event_flags[int(e.handle)] == 2 | 4  # timing disabled, interprocess
    assert fake.event_flags[int(wp.Event("cuda:0", enable_timing=True).handle)] == 0
    with pytest.raises(ValueError, match=r"^The combination of 'enable_timing=True' and 'interprocess=True' is not "
                                         r"allowed\.$"):
        wp.Event("cuda:0", enable_timing=True, interprocess=True)
    wrapped = wp.Event("cuda:0", cuda_event=e.handle)
    assert wrapped.cuda_event is e.handle and wrapped._owner is False
    with pytest.raises(NotImplementedError, match=r"^Event\.ipc_handle\(\): mlwarp's CUDA runtime has no CUDA IPC "
                                                  r"path"):
        e.ipc_handle()


def test_events_need_a_cuda_device():
    with pytest.raises((RuntimeError, ValueError)):
        wp.Event("cpu")
