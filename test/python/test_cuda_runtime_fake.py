"""The CUDA runtime (devices, arrays, copies, launch packing, streams, AOT loading) against a fake driver
that runs on the CPU (cuda_fake_driver.py): every path of mlwarp's CUDA code except the GPU itself."""

from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.arrays.cuda_array import CudaArray
from mlwarp.runtime import device as device_registry
from mlwarp.runtime.cuda import devices as cuda_devices
from mlwarp.runtime.cuda import driver as drv

from cuda_fake_driver import FakeDriver
from source_util import where as _where


@wp.kernel
def saxpy(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32), a: wp.float32):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def index_3d(out: wp.array(dtype=wp.int32, ndim=3)):
    i, j, k = wp.tid()
    out[i, j, k] = i * 100 + j * 10 + k


@wp.kernel
def count(bins: wp.array(dtype=wp.int32), values: wp.array(dtype=wp.int32)):
    i = wp.tid()
    wp.atomic_add(bins, values[i] % 4, 1)


@wp.kernel
def square(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.struct
class Weights:
    scale: wp.float32
    w: wp.array(dtype=wp.float32)


@wp.kernel
def weighted(x: wp.array(dtype=wp.float32), s: Weights, y: wp.array(dtype=wp.float32)):
    i = wp.tid()
    y[i] = s.scale * s.w[i] * x[i]


KERNELS = [saxpy, index_3d, count, square, weighted]


@pytest.fixture
def fake(monkeypatch):
    """Two fake sm_90 GPUs in place of the driver; mlwarp's CUDA state is reset before and after."""
    fake = FakeDriver(arches=(90, 90))
    monkeypatch.setattr(drv, "_driver", fake)
    monkeypatch.setattr(drv, "_init_error", None)
    monkeypatch.setattr(cuda_devices, "_devices", None)
    monkeypatch.setattr(device_registry, "_default", None)
    saved = dict(device_registry._devices)
    cpu = wp.get_device("cpu")
    from mlwarp.autodiff.adjoint import adjoint_kernel

    for k in KERNELS:
        fake.cpu_entries[f"{k.key}_cuda"] = k.compiled(cpu)
        fake.cpu_entries[f"{k.key}_adj_cuda"] = adjoint_kernel(k, cpu)
    yield fake
    for k in KERNELS:
        for alias in [a for a in k._compiled if a.startswith("cuda")]:
            del k._compiled[alias]
    device_registry._devices.clear()
    device_registry._devices.update(saved)


def test_devices_and_default(fake):
    assert wp.is_cuda_available() is True
    assert wp.get_cuda_device_count() == 2
    assert [str(d) for d in wp.get_cuda_devices()] == ["cuda:0", "cuda:1"]
    assert str(wp.get_device()) == "cuda:0"  # Warp: the first GPU is the default device
    assert wp.get_device("cuda") is wp.get_device("cuda:0")
    assert wp.get_device("cuda:1").arch == 90 and wp.get_device("cuda:1").name == "Fake GPU 1"
    assert [str(d) for d in wp.get_devices()] == ["cpu", "cuda:0", "cuda:1"]
    with pytest.raises(ValueError, match=r"^Device 'cuda:2' is not available: this machine has 2 CUDA device\(s\)$"):
        wp.get_device("cuda:2")
    with wp.ScopedDevice("cuda:1"):
        assert str(wp.get_device()) == "cuda:1" and wp.get_device("cuda") is wp.get_device("cuda:1")
        assert str(wp.zeros(2).device) == "cuda:1"
    assert str(wp.get_device()) == "cuda:0"
    # the pool keeps freed memory (release threshold = max), set once per device when its context starts
    assert ("cuMemPoolSetAttribute", (("pool", 1), 4, 2**64 - 1)) in fake.calls


def test_arrays_round_trip_and_fill(fake):
    a = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), device="cuda:0")
    assert isinstance(a, CudaArray) and a.device == "cuda:0" and a.shape == (2, 3) and a.strides == (12, 4)
    np.testing.assert_array_equal(a.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3))
    z = wp.zeros((4,), dtype=wp.int32, device="cuda:0")  # fake memory starts as 0xcd: zeros() must clear it
    np.testing.assert_array_equal(z.numpy(), [0, 0, 0, 0])
    z.fill_(7)
    np.testing.assert_array_equal(z.numpy(), [7, 7, 7, 7])
    z.zero_()
    np.testing.assert_array_equal(np.asarray(z), [0, 0, 0, 0])
    assert ("cuMemAllocAsync", (16, int(wp.get_stream("cuda:0").handle))) in fake.calls
    assert not hasattr(a, "__array_interface__")
    assert a.list() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]  # flattened, as Warp's
    assert str(a) == str(a.numpy())


def test_views_on_device(fake):
    host = np.arange(24, dtype=np.float64).reshape(4, 6)
    a = wp.array(host, device="cuda:0")
    col = a[:, 1]
    assert isinstance(col, CudaArray) and col.shape == (4,) and col.strides == (48,) and col.ptr == a.ptr + 8
    np.testing.assert_array_equal(col.numpy(), host[:, 1])
    np.testing.assert_array_equal(a[1:3, ::2].numpy(), host[1:3, ::2])
    np.testing.assert_array_equal(a.transpose().numpy(), host.T)
    np.testing.assert_array_equal(a.reshape((6, 4)).numpy(), host.reshape(6, 4))
    col.fill_(-1.0)  # a strided write touches only the column
    expected = host.copy()
    expected[:, 1] = -1.0
    np.testing.assert_array_equal(a.numpy(), expected)
    c = a[:, 2].contiguous()
    assert c.is_contiguous and c.ptr != a.ptr
    np.testing.assert_array_equal(c.numpy(), host[:, 2])


def test_copy_directions_and_offsets(fake):
    src = wp.array(np.arange(10, dtype=np.int32), device="cpu")
    dev = wp.zeros(10, dtype=wp.int32, device="cuda:0")
    wp.copy(dev, src, dest_offset=2, src_offset=5, count=3)  # H2D
    np.testing.assert_array_equal(dev.numpy(), [0, 0, 5, 6, 7, 0, 0, 0, 0, 0])
    other = wp.zeros(10, dtype=wp.int32, device="cuda:1")
    wp.copy(other, dev)  # D2D (between GPUs)
    np.testing.assert_array_equal(other.numpy(), dev.numpy())
    back = wp.zeros(4, dtype=wp.int32, device="cpu")
    wp.copy(back, dev, dest_offset=1, src_offset=2, count=3)  # D2H
    np.testing.assert_array_equal(back.numpy(), [0, 5, 6, 7])
    # Warp's checks and messages, as for CPU arrays (wp.copy's byte counts)
    with pytest.raises(RuntimeError, match=r"^Trying to copy source buffer with size \(12\) from offset \(32\) is "
                                           r"larger than source size \(40\)$"):
        wp.copy(dev, other, src_offset=8, count=3)
    with pytest.raises(RuntimeError, match=r"^Trying to copy source buffer with size \(12\) to offset \(36\) is "
                                           r"larger than destination size \(40\)$"):
        wp.copy(dev, other, dest_offset=9, count=3)
    with pytest.raises(RuntimeError, match=r"^Incompatible array data types: destination dtype=float64, source "
                                           r"dtype=int32$"):
        wp.copy(wp.zeros(10, dtype=wp.float64, device="cuda:0"), dev)
    bits = wp.zeros(10, dtype=wp.float32, device="cuda:0")  # one size: the bytes, as Warp's memcpy
    wp.copy(bits, dev)
    np.testing.assert_array_equal(bits.numpy().view(np.int32), dev.numpy())


def test_to_device_and_back(fake):
    host = np.array([1.5, 2.5, 3.5], dtype=np.float32)
    a = wp.array(host, device="cpu")
    d0 = a.to("cuda:0")
    d1 = d0.to("cuda:1")
    assert d0.device == "cuda:0" and d1.device == "cuda:1" and d0.to("cuda:0") is d0
    back = d1.to("cpu")
    assert back.device == "cpu" and not isinstance(back, CudaArray)
    np.testing.assert_array_equal(back.numpy(), host)
    np.testing.assert_array_equal(wp.clone(d1).numpy(), host)


def test_launch_packs_device_pointers(fake):
    n = 1000
    x = wp.array(np.arange(n, dtype=np.float32), device="cuda:0")
    y = wp.array(np.ones(n, dtype=np.float32), device="cuda:0")
    wp.launch(saxpy, dim=n, inputs=[x, y, 2.0], device="cuda:0", block_dim=128)
    np.testing.assert_allclose(y.numpy(), 2.0 * np.arange(n) + 1.0)
    (launch,) = fake.launches
    assert launch["name"] == "saxpy_cuda" and launch["block"] == 128 and launch["grid"] == 8
    assert launch["dims"] == [n, 1, 1, 1] and launch["stream"] == int(wp.get_stream("cuda:0").handle)
    assert fake.loaded == ["cubin"]  # built here for sm_90: the cubin, not the PTX


def test_plain_device_launches_take_the_planned_path(fake, monkeypatch):
    # launch_plan.py packs the struct with one struct.Struct and caches each array's fields; the checked
    # path of launch.py (pack_args) is for debug builds, verify_fp and kernels without a plan
    import importlib

    def refuse(*args):
        raise AssertionError("the checked path packed a plain launch")

    for module in ("mlwarp.launching.launch", "mlwarp.launching.cuda_launch"):
        monkeypatch.setattr(importlib.import_module(module), "pack_args", refuse)
    n = 300
    x = wp.array(np.arange(n, dtype=np.float32), device="cuda:0")
    y = wp.array(np.ones(n, dtype=np.float32), device="cuda:0")
    stream = wp.Stream("cuda:0")
    for _ in range(2):
        wp.launch(saxpy, dim=n, inputs=[x, y, 2.0], device="cuda:0", stream=stream, block_dim=64, max_blocks=2)
    np.testing.assert_allclose(y.numpy(), 4.0 * np.arange(n) + 1.0)
    assert x.__dict__["_launch_fields"][2] == (x.ptr, n, 4)  # read once, kept on the array
    from mlwarp.launching.launch_plan import plan_for

    # the driver copies the kernel's whole parameter, trailing padding included
    assert plan_for(saxpy).struct.size == ctypes.sizeof(saxpy.launch_struct) == 32 + 2 * 24 + 4 + 4
    assert [(l["grid"], l["block"], l["stream"]) for l in fake.launches] == [(2, 64, int(stream.handle))] * 2
    with pytest.raises(wp.LaunchError, match=r"^Error launching kernel 'saxpy': block_dim must be an int in "
                                             r"\[1, 1024\], got 0$"):
        wp.launch(saxpy, dim=n, inputs=[x, y, 2.0], device="cuda:0", block_dim=0)
    with pytest.raises(wp.LaunchError, match=re.escape(
            "Error launching kernel 'saxpy', argument 'a' expects float32, but passed value has type str ('two').")):
        wp.launch(saxpy, dim=n, inputs=[x, y, "two"], device="cuda:0")


def test_launch_3d_and_max_blocks(fake):
    out = wp.zeros((3, 4, 5), dtype=wp.int32, device="cuda:0")
    wp.launch(index_3d, dim=(3, 4, 5), inputs=[out], device="cuda:0", max_blocks=1, block_dim=32)
    i, j, k = np.indices((3, 4, 5))
    np.testing.assert_array_equal(out.numpy(), i * 100 + j * 10 + k)
    assert fake.launches[-1]["grid"] == 1 and fake.launches[-1]["dims"] == [3, 4, 5, 1]


def test_launch_errors_name_the_argument(fake):
    x = wp.zeros(4, dtype=wp.float32, device="cuda:1")
    y = wp.zeros(4, dtype=wp.float32, device="cuda:0")
    with pytest.raises(wp.LaunchError, match=r"^Error launching kernel 'saxpy', argument 'x' is an array on device "
                                             r"'cuda:1' but the kernel is launched on device 'cuda:0'\.$"):
        wp.launch(saxpy, dim=4, inputs=[x, y, 1.0], device="cuda:0")
    with pytest.raises(wp.LaunchError, match=r"block_dim must be an int in \[1, 1024\], got 2048$"):
        wp.launch(saxpy, dim=4, inputs=[y, y, 1.0], device="cuda:0", block_dim=2048)
    assert fake.launches == []


class ForeignCudaArray:
    """What CuPy or a torch CUDA tensor offers: only __cuda_array_interface__ (it owns the memory)."""

    def __init__(self, owner: CudaArray):
        self.owner = owner
        self.__cuda_array_interface__ = dict(owner.__cuda_array_interface__)


def test_cuda_array_interface_both_ways(fake):
    bins = wp.zeros(4, dtype=wp.int32, device="cuda:0")
    values = wp.array(np.arange(10, dtype=np.int32), device="cuda:0")
    iface = values.__cuda_array_interface__
    assert iface["shape"] == (10,) and iface["typestr"] == "<i4" and iface["data"] == (values.ptr, False)
    assert iface["strides"] is None and iface["version"] == 3
    foreign_bins, foreign_values = ForeignCudaArray(bins), ForeignCudaArray(values)
    wp.launch(count, dim=10, inputs=[foreign_bins, foreign_values], device="cuda:0")
    np.testing.assert_array_equal(bins.numpy(), [3, 3, 2, 2])
    copied = wp.array(foreign_values, device="cuda:1")  # D2D copy of foreign memory
    np.testing.assert_array_equal(copied.numpy(), np.arange(10))
    from mlwarp.arrays.cuda_array import from_cuda_array_interface

    view = from_cuda_array_interface(foreign_values)
    assert view.ptr == values.ptr and view.device == "cuda:0"


def test_streams_and_events(fake):
    s = wp.Stream("cuda:0")
    default = wp.get_stream("cuda:0")
    assert s is not default and s.device == "cuda:0"
    x = wp.zeros(8, dtype=wp.float32, device="cuda:0")
    with wp.ScopedStream(s):
        assert wp.get_stream() is s
        wp.launch(saxpy, dim=8, inputs=[x, x, 1.0])
    assert wp.get_stream("cuda:0") is default
    assert fake.launches[-1]["stream"] == int(s.handle)
    # entering the scope made `s` wait for the stream it replaced
    waits = [c for c in fake.calls if c[0] == "cuStreamWaitEvent"]
    assert waits and waits[0][1][0] == int(s.handle)
    e = wp.Event("cuda:0")
    assert wp.record_event(e) is e
    wp.wait_event(e)
    wp.synchronize_event(e)
    wp.wait_stream(s)
    wp.synchronize_stream(s)
    assert ("cuStreamSynchronize", (int(s.handle),)) in fake.calls
    wp.synchronize()
    assert ("cuCtxSynchronize", (0,)) in fake.calls
    with pytest.raises(wp.LaunchError, match=r"the stream belongs to device 'cuda:0' but the launch is on 'cuda:1'"):
        wp.launch(saxpy, dim=1, inputs=[x, x, 1.0], device="cuda:1", stream=s)


def test_memory_is_freed_on_the_stream(fake):
    a = wp.zeros(100, dtype=wp.float32, device="cuda:0")
    ptr = a.ptr
    view = a[10:20]
    del a
    assert ptr in fake.buffers  # a view keeps the allocation alive
    del view
    assert ptr not in fake.buffers
    assert fake.freed_on_stream[-1] == (ptr, int(wp.get_stream("cuda:0").handle))


def test_aot_entries_load_without_the_compiler(fake, tmp_path, monkeypatch):
    from mlwarp.launching import cuda_compile

    folders = wp.compile_aot_module([saxpy], arch=90, module_dir=str(tmp_path))
    assert len(folders) == 1 and folders[0].startswith(str(tmp_path))
    monkeypatch.setattr(cuda_compile, "compiler_available", lambda: False)
    monkeypatch.setattr(cuda_compile, "_aot_dirs", [])
    monkeypatch.setattr(cuda_compile, "build", None)  # any compile attempt would fail
    wp.load_aot_module([saxpy], device="cuda:1", module_dir=str(tmp_path))
    x = wp.array(np.ones(5, dtype=np.float32), device="cuda:1")
    wp.launch(saxpy, dim=5, inputs=[x, x, 3.0], device="cuda:1")
    np.testing.assert_array_equal(x.numpy(), np.full(5, 4.0, dtype=np.float32))


def test_newer_gpu_without_compiler_jits_older_ptx(monkeypatch, tmp_path):
    from mlwarp.launching import cuda_compile

    fake = FakeDriver(arches=(100,))  # an sm_100 GPU, kernels compiled for sm_90 only
    monkeypatch.setattr(drv, "_driver", fake)
    monkeypatch.setattr(drv, "_init_error", None)
    monkeypatch.setattr(cuda_devices, "_devices", None)
    monkeypatch.setattr(device_registry, "_default", None)
    saved = dict(device_registry._devices)
    try:
        wp.compile_aot_module(saxpy, arch=90, module_dir=str(tmp_path))
        monkeypatch.setattr(cuda_compile, "compiler_available", lambda: False)
        monkeypatch.setattr(cuda_compile, "_aot_dirs", [str(tmp_path)])
        loaded = cuda_compile.load(saxpy, wp.get_device("cuda:0"))
        assert loaded.image_kind == "ptx" and fake.loaded == ["ptx"]
        monkeypatch.setattr(cuda_compile, "_aot_dirs", [])
        monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path / "empty"))
        with pytest.raises(cuda_compile.KernelNotCompiledError,
                           match=r"^kernel 'saxpy' has no compiled CUDA code for sm_100 or older in .*empty, and the "
                                 r"compiler is not installed here"):
            cuda_compile.load(saxpy, wp.get_device("cuda:0"))
    finally:
        saxpy._compiled.pop("cuda:0", None)
        device_registry._devices.clear()
        device_registry._devices.update(saved)


def test_adjoint_launch_on_the_device(fake):
    xs = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    x = wp.array(xs, device="cuda:0")
    y = wp.zeros(3, dtype=wp.float32, device="cuda:0")
    adj_x = wp.zeros(3, dtype=wp.float32, device="cuda:0")
    adj_y = wp.array(np.ones(3, dtype=np.float32), device="cuda:0")
    wp.launch(square, dim=3, inputs=[x], outputs=[y], adj_inputs=[adj_x], adj_outputs=[adj_y], adjoint=True,
              device="cuda:0")
    np.testing.assert_array_equal(adj_x.numpy(), 2.0 * xs)
    assert fake.launches[-1]["name"] == "square_adj_cuda"
    # an adjoint left as None is zeroed device memory, not host memory
    wp.launch(square, dim=3, inputs=[x], outputs=[y], adj_inputs=[None], adj_outputs=[adj_y], adjoint=True,
              device="cuda:0")


def test_struct_with_device_arrays_forward_and_tape(fake):
    """A struct argument's array fields are device arrays: the kernel reads them at their device addresses,
    and Tape.backward passes their device gradients (a scratch device array for a field without one)."""
    xs, ws = np.array([1.0, -2.0, 3.0], dtype=np.float32), np.array([0.5, 4.0, -1.0], dtype=np.float32)
    x = wp.array(xs, device="cuda:0", requires_grad=True)
    w = wp.array(ws, device="cuda:0", requires_grad=True)
    y = wp.zeros(3, dtype=wp.float32, device="cuda:0", requires_grad=True)
    s = Weights(scale=2.0, w=w)
    tape = wp.Tape()
    with tape:
        wp.launch(weighted, dim=3, inputs=[x, s], outputs=[y], device="cuda:0")
    np.testing.assert_array_equal(y.numpy(), 2.0 * ws * xs)
    tape.backward(grads={y: wp.array(np.ones(3, dtype=np.float32), device="cuda:0")})
    np.testing.assert_array_equal(x.grad.numpy(), 2.0 * ws)
    np.testing.assert_array_equal(w.grad.numpy(), 2.0 * xs)
    assert fake.launches[-1]["name"] == "weighted_adj_cuda"
    s.w = wp.array(ws, device="cuda:0")  # no gradient: its adjoint is zeroed device memory
    x.grad.zero_()
    wp.launch(weighted, dim=3, inputs=[x, s], outputs=[y], adj_inputs=[x.grad, None],
              adj_outputs=[wp.array(np.ones(3, dtype=np.float32), device="cuda:0")], adjoint=True, device="cuda:0")
    np.testing.assert_array_equal(x.grad.numpy(), 2.0 * ws)


# -- debug mode on CUDA: the device error record ---------------------------------------------------------

@wp.kernel
def dbg_shifted_copy(a: wp.array(dtype=wp.float32), b: wp.array(dtype=wp.float32), n: int):
    i = wp.tid()
    b[i] = a[i + n] * 2.0


class RecordSpy:
    """A fake device entry: notes the error-record descriptor of each launch struct (and when it ran among the
    driver calls), then runs `body` (the CPU build of the same kernel, or a function of the record)."""

    def __init__(self, fake, struct, field, body):
        self.fake, self.struct, self.field, self.body = fake, struct, field, body
        self.seen = []

    def run(self, struct_ptr, total):
        slot = getattr(self.struct.from_address(struct_ptr), self.field)
        self.seen.append({"data": slot.data, "shape": slot.shape[0], "stride": slot.strides[0],
                          "calls_before": len(self.fake.calls)})
        self.body(struct_ptr, total, slot)


@pytest.fixture
def debug_fake(fake, monkeypatch):
    """Debug mode on; the debug builds of dbg_shifted_copy (forward, adjoint) run as their CPU debug builds."""
    from mlwarp.autodiff.adjoint import adjoint_kernel
    from mlwarp.launching.debug import for_launch

    monkeypatch.setattr(wp.config, "mode", "debug")
    built = for_launch(dbg_shifted_copy)
    cpu = wp.get_device("cpu")
    fwd, adj = built.compiled(cpu), adjoint_kernel(built, cpu)
    fake.spy = RecordSpy(fake, built.launch_struct, "p3", lambda ptr, total, slot: fwd.run(ptr, total))
    fake.cpu_entries["dbg_shifted_copy_cuda"] = fake.spy
    from mlwarp.autodiff.adjoint import _adjoint_struct

    # 3 arguments, 3 adjoints, the consumed and own-grad bits, then the record
    fake.adj_spy = RecordSpy(fake, _adjoint_struct(built), "p8", lambda ptr, total, slot: adj.run(ptr, total))
    fake.cpu_entries["dbg_shifted_copy_adj_cuda"] = fake.adj_spy
    fake.built = built
    yield fake
    for k in (built, dbg_shifted_copy):
        for alias in [a for a in k._compiled if a.startswith("cuda")]:
            del k._compiled[alias]


def _record_calls(fake, stream, start, stop):
    """(index, name) of the driver calls start..stop that handle a record: allocation and copy back (96 bytes)
    on `stream`, synchronisation of `stream`."""
    return [(i, name) for i, (name, args) in enumerate(fake.calls[start:stop], start)
            if (name in ("cuMemAllocAsync", "cuMemcpyDtoHAsync") and args == (96, stream))
            or (name == "cuStreamSynchronize" and args == (stream,))]


def test_debug_launch_passes_a_device_record_and_raises_what_it_holds(debug_fake):
    fake = debug_fake
    a = wp.array(np.arange(10, dtype=np.float32), device="cuda:0")
    b = wp.zeros(10, dtype=wp.float32, device="cuda:0")
    stream = int(wp.get_stream("cuda:0").handle)
    calls_before = len(fake.calls)
    with pytest.raises(wp.KernelBoundsError) as err:
        wp.launch(dbg_shifted_copy, 10, inputs=[a, b, 3], device="cuda:0")
    calls_after = len(fake.calls)
    assert str(err.value) == (
        f"{_where(dbg_shifted_copy, 'a[i + n]')}: kernel 'dbg_shifted_copy': index [10] is out of bounds reading "
        f"argument 'a' of shape (10,) (thread 7; 3 out-of-bounds accesses in this launch)")
    np.testing.assert_array_equal(b.numpy(), [6, 8, 10, 12, 14, 16, 18, 0, 0, 0])
    (launch,) = fake.launches
    assert launch["name"] == "dbg_shifted_copy_cuda" and launch["stream"] == stream
    (seen,) = fake.spy.seen
    # the hidden trailing parameter is a 12-slot int64 array in fake device memory, freed on the stream after
    assert seen["shape"] == 12 and seen["stride"] == 8 and seen["data"] not in fake.buffers
    assert (seen["data"], stream) in fake.freed_on_stream
    # allocated before the launch; copied back and the stream synchronised after it, on the launch's stream
    order = _record_calls(fake, stream, calls_before, calls_after)
    assert [name for _, name in order] == ["cuMemAllocAsync", "cuMemcpyDtoHAsync", "cuStreamSynchronize"]
    assert order[0][0] < seen["calls_before"] <= order[1][0]


def test_debug_launch_in_bounds_raises_nothing_the_record_was_zeroed(debug_fake):
    # fake device memory starts as 0xcd bytes: an unzeroed record would read as a huge count
    a = wp.array(np.arange(10, dtype=np.float32), device="cuda:0")
    b = wp.zeros(10, dtype=wp.float32, device="cuda:0")
    wp.launch(dbg_shifted_copy, 10, inputs=[a, b, 0], device="cuda:0")
    np.testing.assert_array_equal(b.numpy(), np.arange(10) * 2)
    assert len(debug_fake.spy.seen) == 1 and debug_fake.spy.seen[0]["shape"] == 12


def test_the_message_comes_from_the_device_record(debug_fake):
    # a device kernel that only writes a record: count 2, site 1 (the store of b), thread 4, index [12], shape (10,)
    fake = debug_fake
    from mlwarp.runtime import error_record as rec

    def write_record(ptr, total, slot):
        values = [0] * rec.RECORD_SLOTS
        values[rec.COUNT], values[rec.SITE], values[rec.THREAD], values[rec.NDIM] = 2, 1, 4, 1
        values[rec.INDEX], values[rec.SHAPE] = 12, 10
        (ctypes.c_int64 * rec.RECORD_SLOTS).from_address(slot.data)[:] = values

    import ctypes

    fake.spy.body = write_record
    assert fake.built.compiled(wp.get_device("cuda:0")).meta["debug_sites"][1]["op"] == "store"
    a = wp.array(np.arange(10, dtype=np.float32), device="cuda:0")
    b = wp.zeros(10, dtype=wp.float32, device="cuda:0")
    with pytest.raises(wp.KernelBoundsError) as err:
        wp.launch(dbg_shifted_copy, 10, inputs=[a, b, 0], device="cuda:0")
    assert str(err.value) == (
        f"{_where(dbg_shifted_copy, 'b[i]')}: kernel 'dbg_shifted_copy': index [12] is out of bounds writing "
        f"argument 'b' of shape (10,) (thread 4; 2 out-of-bounds accesses in this launch)")


def test_debug_launch_on_a_user_stream_keeps_the_record_on_it(debug_fake):
    fake = debug_fake
    s = wp.Stream("cuda:0")
    a = wp.array(np.arange(10, dtype=np.float32), device="cuda:0")
    b = wp.zeros(10, dtype=wp.float32, device="cuda:0")
    calls_before = len(fake.calls)
    with pytest.raises(wp.KernelBoundsError, match=r"index \[10\] is out of bounds reading argument 'a' of shape "
                                                   r"\(10,\) \(thread 9\)$"):
        wp.launch(dbg_shifted_copy, 10, inputs=[a, b, 1], device="cuda:0", stream=s)
    assert fake.launches[-1]["stream"] == int(s.handle)
    (seen,) = fake.spy.seen
    assert [name for _, name in _record_calls(fake, int(s.handle), calls_before, len(fake.calls))] == [
        "cuMemAllocAsync", "cuMemcpyDtoHAsync", "cuStreamSynchronize"]
    assert (seen["data"], int(s.handle)) in fake.freed_on_stream


def test_debug_adjoint_launch_on_the_device_checks_bounds(debug_fake):
    fake = debug_fake
    a = wp.array(np.arange(10, dtype=np.float32), device="cuda:0")
    b = wp.zeros(10, dtype=wp.float32, device="cuda:0")
    adj_a = wp.zeros(10, dtype=wp.float32, device="cuda:0")
    adj_b = wp.array(np.ones(10, dtype=np.float32), device="cuda:0")
    wp.launch(dbg_shifted_copy, 10, inputs=[a, b, 0], adjoint=True, adj_inputs=[adj_a, adj_b, 0], device="cuda:0")
    np.testing.assert_array_equal(adj_a.numpy(), np.full(10, 2.0))
    adj_a.zero_()
    with pytest.raises(wp.KernelBoundsError) as err:
        wp.launch(dbg_shifted_copy, 10, inputs=[a, b, 2], adjoint=True, adj_inputs=[adj_a, adj_b, 0],
                  device="cuda:0")
    assert str(err.value).startswith(f"{_where(dbg_shifted_copy, 'a[i + n]')}: kernel 'dbg_shifted_copy': index [10] is "
                                     f"out of bounds reading argument 'a' of shape (10,) (thread 8; ")
    np.testing.assert_array_equal(adj_a.numpy(), [0, 0] + [2.0] * 8)
    assert [launch["name"] for launch in fake.launches] == ["dbg_shifted_copy_adj_cuda"] * 2
    assert all(s["shape"] == 12 and s["data"] not in fake.buffers for s in fake.adj_spy.seen)
    assert [name for name, args in fake.calls if name == "cuMemcpyDtoHAsync" and args[0] == 96] == [
        "cuMemcpyDtoHAsync"] * 2


def test_release_launch_on_the_device_passes_no_record(fake):
    assert wp.config.mode == "release"
    from mlwarp.launching.debug import for_launch

    assert for_launch(dbg_shifted_copy) is dbg_shifted_copy
    assert [f for f, _ in dbg_shifted_copy.launch_struct._fields_] == ["dims", "p0", "p1", "p2"]
    fake.cpu_entries["dbg_shifted_copy_cuda"] = dbg_shifted_copy.compiled(wp.get_device("cpu"))
    a = wp.array(np.arange(10, dtype=np.float32), device="cuda:0")
    b = wp.zeros(10, dtype=wp.float32, device="cuda:0")
    calls_before = len(fake.calls)
    try:
        wp.launch(dbg_shifted_copy, 10, inputs=[a, b, 0], device="cuda:0")
    finally:
        dbg_shifted_copy._compiled.pop("cuda:0", None)
    # no record allocated, copied back or waited for: the launch returns without synchronising
    launch_calls = [name for name, _ in fake.calls[calls_before:]]
    assert [n for n in launch_calls if n in ("cuMemAllocAsync", "cuMemcpyDtoHAsync", "cuStreamSynchronize")] == []
    assert fake.launches[-1]["name"] == "dbg_shifted_copy_cuda"
    np.testing.assert_array_equal(b.numpy(), np.arange(10) * 2)


def test_verify_fp_after_a_device_launch_waits_for_its_stream(fake, monkeypatch):
    monkeypatch.setattr(wp.config, "verify_fp", True)
    stream = wp.Stream("cuda:0")
    x = wp.array(np.array([1.0, np.inf, 2.0], dtype=np.float32), device="cuda:0")
    y = wp.zeros(3, dtype=wp.float32, device="cuda:0")
    before = len(fake.calls)
    with pytest.raises(wp.FloatingPointCheckError, match=re.escape(
            "kernel 'square': argument 'x' holds a non-finite value after the launch (inf at index [1]; "
            "1 non-finite element(s))")):
        wp.launch(square, dim=3, inputs=[x, y], device="cuda:0", stream=stream)
    assert fake.launches[-1]["name"] == "square_cuda" and fake.launches[-1]["stream"] == int(stream.handle)
    names = [name for name, _ in fake.calls[before:]]
    synced = names.index("cuStreamSynchronize")
    assert fake.calls[before + synced][1] == (int(stream.handle),)
    assert names.index("cuMemcpyDtoHAsync") > synced  # read back only once the launch is done
    monkeypatch.setattr(wp.config, "verify_fp", False)
    wp.launch(square, dim=3, inputs=[x, y], device="cuda:0", stream=stream)  # off: nothing checked


def test_record_cmd_on_the_device(fake):
    n = 100
    x = wp.array(np.arange(n, dtype=np.float32), device="cuda:0")
    y = wp.array(np.ones(n, dtype=np.float32), device="cuda:0")
    stream = wp.Stream("cuda:0")
    cmd = wp.launch(saxpy, dim=n, inputs=[x, y, 2.0], device="cuda:0", stream=stream, block_dim=32, record_cmd=True)
    assert isinstance(cmd, wp.Launch) and fake.launches == []  # recorded, not run
    cmd.launch()
    cmd.set_param_by_name("a", 1.0)
    cmd.launch()
    np.testing.assert_allclose(y.numpy(), 3.0 * np.arange(n) + 1.0)
    assert [(l["block"], l["grid"], l["stream"]) for l in fake.launches] == [(32, 4, int(stream.handle))] * 2
    other = wp.Stream("cuda:0")
    cmd.launch(stream=other)
    assert fake.launches[-1]["stream"] == int(other.handle)


# -- kernels run by their CPU builds on a fake GPU (cuda_fake_driver.CpuBackedDriver) ---------------------------
@wp.struct
class Body:
    pos: wp.vec3
    mass: wp.float32
    active: wp.bool


@pytest.fixture
def cpu_backed(monkeypatch):
    """One fake sm_90 GPU whose launches run each kernel's CPU build on the same launch struct."""
    from cuda_fake_driver import install_cpu_backed_gpu

    saved = dict(device_registry._devices)
    yield install_cpu_backed_gpu(monkeypatch.setattr)
    monkeypatch.undo()
    device_registry._devices.clear()
    device_registry._devices.update(saved)


def test_arrays_of_structs_keep_their_fields_on_the_device(cpu_backed):
    @wp.kernel
    def weigh(bodies: wp.array(dtype=Body), out: wp.array(dtype=float)):
        i = wp.tid()
        if bodies[i].active:
            out[i] = bodies[i].mass * bodies[i].pos[1]

    bodies = wp.zeros(3, dtype=Body, device="cuda:0")
    host = bodies.numpy()
    assert host.dtype.names == ("pos", "mass", "active")  # not the interface's "|V20"
    host["pos"], host["mass"], host["active"] = np.arange(9).reshape(3, 3), [1.0, 2.0, 3.0], [True, False, True]
    bodies = wp.array(host, dtype=Body, device="cuda:0")
    out = wp.zeros(3, dtype=float, device="cuda:0")
    wp.launch(weigh, 3, inputs=[bodies, out], device="cuda:0")
    np.testing.assert_array_equal(out.numpy(), [1.0 * 1, 0.0, 3.0 * 7])
    np.testing.assert_array_equal(bodies.numpy()["pos"], np.arange(9).reshape(3, 3))


def test_jvp_on_the_device_makes_its_zero_tangents_there(cpu_backed):
    @wp.kernel
    def f(x: wp.array(dtype=float), y: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = x[i] * x[i] + y[i]

    x0 = np.array([1.0, 2.0, -3.0], np.float32)
    x, y = wp.array(x0, device="cuda:0"), wp.array(np.ones(3, np.float32), device="cuda:0")
    out, tout = wp.zeros(3, dtype=float, device="cuda:0"), wp.zeros(3, dtype=float, device="cuda:0")
    tx = wp.array(np.array([0.5, 1.0, 2.0], np.float32), device="cuda:0")
    wp.jvp(f, 3, inputs=[x, y], outputs=[out], tan_inputs=[tx, None], tan_outputs=[tout], device="cuda:0")
    np.testing.assert_array_equal(out.numpy(), x0 * x0 + 1.0)
    np.testing.assert_array_equal(tout.numpy(), 2.0 * x0 * np.array([0.5, 1.0, 2.0], np.float32))
