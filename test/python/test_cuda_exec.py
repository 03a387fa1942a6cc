"""Kernels executed on every device: the CPU always, each CUDA device when one is present (skipped, with the
reason, on a machine without a GPU). The same numerics are checked against numpy on each device."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import mlwarp as wp

from source_util import where as _where

CUDA = wp.is_cuda_available()
NO_GPU = "no CUDA device on this machine (needs a GPU, its driver and cuda-python)"

DEVICES = ["cpu", pytest.param("cuda:0", marks=pytest.mark.skipif(not CUDA, reason=NO_GPU))]
GPU_ONLY = pytest.mark.skipif(not CUDA, reason=NO_GPU)


@wp.kernel
def saxpy(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32), a: wp.float32):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def math_f32(x: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32, ndim=2)):
    i = wp.tid()
    v = x[i]
    out[i, 0] = wp.sin(v)
    out[i, 1] = wp.cos(v)
    out[i, 2] = wp.exp(v)
    out[i, 3] = wp.log(v)
    out[i, 4] = wp.sqrt(v)
    out[i, 5] = wp.tan(v)
    out[i, 6] = v ** 1.5
    out[i, 7] = wp.floor(v * 3.0) + wp.ceil(v * 3.0)


@wp.kernel
def math_f64(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64, ndim=2)):
    i = wp.tid()
    v = x[i]
    out[i, 0] = wp.sin(v)
    out[i, 1] = wp.exp(v)
    out[i, 2] = wp.log(v)
    out[i, 3] = wp.sqrt(v)


@wp.kernel
def index_4d(out: wp.array(dtype=wp.int32, ndim=4)):
    i, j, k, l = wp.tid()
    out[i, j, k, l] = i * 1000 + j * 100 + k * 10 + l


@wp.kernel
def histogram(values: wp.array(dtype=wp.int32), bins: wp.array(dtype=wp.int32), total: wp.array(dtype=wp.float32)):
    i = wp.tid()
    wp.atomic_add(bins, values[i] % 8, 1)
    wp.atomic_add(total, 0, 0.5)


@wp.kernel
def int_ops(a: wp.array(dtype=wp.int64), b: wp.array(dtype=wp.uint32), out: wp.array(dtype=wp.int64)):
    i = wp.tid()
    out[i] = a[i] // wp.int64(3) + a[i] % wp.int64(5) + wp.int64(b[i] >> wp.uint32(1))


def test_saxpy(device):
    n = 10_000
    rng = np.random.default_rng(1)
    xs, ys = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    x, y = wp.array(xs, device=device), wp.array(ys, device=device)
    wp.launch(saxpy, dim=n, inputs=[x, y, 2.5], device=device)
    np.testing.assert_allclose(y.numpy(), np.float32(2.5) * xs + ys, rtol=1e-6)


def test_math_builtins_float32(device):
    xs = np.linspace(0.1, 3.0, 257, dtype=np.float32)
    x = wp.array(xs, device=device)
    out = wp.zeros((len(xs), 8), dtype=wp.float32, device=device)
    wp.launch(math_f32, dim=len(xs), inputs=[x, out], device=device)
    expect = np.stack([np.sin(xs), np.cos(xs), np.exp(xs), np.log(xs), np.sqrt(xs), np.tan(xs), xs ** 1.5,
                       np.floor(xs * 3) + np.ceil(xs * 3)], axis=1)
    np.testing.assert_allclose(out.numpy(), expect, rtol=2e-6, atol=1e-6)


def test_math_builtins_float64(device):
    xs = np.linspace(0.1, 30.0, 129)
    x = wp.array(xs, dtype=wp.float64, device=device)
    out = wp.zeros((len(xs), 4), dtype=wp.float64, device=device)
    wp.launch(math_f64, dim=len(xs), inputs=[x, out], device=device)
    np.testing.assert_allclose(out.numpy(), np.stack([np.sin(xs), np.exp(xs), np.log(xs), np.sqrt(xs)], 1),
                               rtol=1e-14)


@pytest.mark.parametrize("block_dim,max_blocks", [(256, 0), (32, 0), (64, 3), (1024, 1)])
def test_4d_launch_covers_every_index(device, block_dim, max_blocks):
    shape = (3, 5, 7, 2)
    out = wp.full(shape, -1, dtype=wp.int32, device=device)
    wp.launch(index_4d, dim=shape, inputs=[out], device=device, block_dim=block_dim, max_blocks=max_blocks)
    i, j, k, l = np.indices(shape)
    np.testing.assert_array_equal(out.numpy(), i * 1000 + j * 100 + k * 10 + l)


def test_atomics(device):
    values = np.arange(1000, dtype=np.int32) * 7
    bins = wp.zeros(8, dtype=wp.int32, device=device)
    total = wp.zeros(1, dtype=wp.float32, device=device)
    wp.launch(histogram, dim=len(values), inputs=[wp.array(values, device=device), bins, total], device=device)
    np.testing.assert_array_equal(bins.numpy(), np.bincount(values % 8, minlength=8))
    assert total.numpy()[0] == 500.0


def test_integer_ops(device):
    a = np.array([-7, -1, 0, 5, 17, 2**40], dtype=np.int64)
    b = np.array([1, 2, 3, 2**31, 9, 0], dtype=np.uint32)
    out = wp.zeros(len(a), dtype=wp.int64, device=device)
    wp.launch(int_ops, dim=len(a), inputs=[wp.array(a, device=device), wp.array(b, device=device), out],
              device=device)
    np.testing.assert_array_equal(out.numpy(), a // 3 + np.fmod(a, 5) + (b >> 1).astype(np.int64))


def test_empty_launch_and_strided_views(device):
    x = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4), device=device)
    col = x[:, 1]
    y = wp.zeros(3, dtype=wp.float32, device=device)
    wp.launch(saxpy, dim=0, inputs=[col, y, 1.0], device=device)
    np.testing.assert_array_equal(y.numpy(), [0, 0, 0])
    wp.launch(saxpy, dim=3, inputs=[col, y, 2.0], device=device)
    np.testing.assert_array_equal(y.numpy(), [2, 10, 18])


@GPU_ONLY
def test_copies_with_offsets_on_streams():
    dev = wp.get_device("cuda:0")
    s = wp.Stream(dev)
    src = wp.array(np.arange(100, dtype=np.float64), device="cpu")
    d = wp.zeros(100, dtype=wp.float64, device=dev)
    wp.copy(d, src, dest_offset=10, src_offset=20, count=30, stream=s)
    wp.synchronize_stream(s)
    expect = np.zeros(100)
    expect[10:40] = np.arange(20, 50)
    np.testing.assert_array_equal(d.numpy(), expect)
    d2 = wp.empty(100, dtype=wp.float64, device=dev)
    wp.copy(d2, d)
    back = wp.zeros(100, dtype=wp.float64, device="cpu")
    wp.copy(back, d2)
    np.testing.assert_array_equal(back.numpy(), expect)


@GPU_ONLY
def test_streams_order_dependent_work():
    dev = wp.get_device("cuda:0")
    a, b = wp.Stream(dev), wp.Stream(dev)
    n = 1 << 20
    x = wp.ones(n, dtype=wp.float32, device=dev)
    y = wp.zeros(n, dtype=wp.float32, device=dev)
    with wp.ScopedStream(a):
        for _ in range(10):
            wp.launch(saxpy, dim=n, inputs=[x, y, 1.0])
    done = a.record_event(wp.Event(dev))
    b.wait_event(done)
    with wp.ScopedStream(b, sync_enter=False):
        wp.launch(saxpy, dim=n, inputs=[y, x, 1.0])  # x = y + x after y = 10
    wp.synchronize_stream(b)
    assert float(x.numpy()[0]) == 11.0 and float(x.numpy()[-1]) == 11.0
    start, end = wp.Event(dev, enable_timing=True), wp.Event(dev, enable_timing=True)
    s = wp.get_stream(dev)
    s.record_event(start)
    wp.launch(saxpy, dim=n, inputs=[x, y, 1.0], device=dev)
    s.record_event(end)
    assert wp.get_event_elapsed_time(start, end) >= 0.0


@GPU_ONLY
def test_foreign_cuda_array_interface():
    dev = wp.get_device("cuda:0")
    owner = wp.array(np.arange(16, dtype=np.float32), device=dev)

    class Foreign:
        __cuda_array_interface__ = owner.__cuda_array_interface__

    y = wp.zeros(16, dtype=wp.float32, device=dev)
    wp.launch(saxpy, dim=16, inputs=[Foreign(), y, 3.0], device=dev)
    np.testing.assert_array_equal(y.numpy(), 3.0 * np.arange(16))


@pytest.mark.skipif(not CUDA or wp.get_cuda_device_count() < 2, reason="needs two CUDA devices")
def test_two_gpus_in_one_process():
    xs = np.arange(1000, dtype=np.float32)
    results = []
    for name in ("cuda:0", "cuda:1"):
        with wp.ScopedDevice(name):
            x, y = wp.array(xs), wp.zeros(1000, dtype=wp.float32)
            wp.launch(saxpy, dim=1000, inputs=[x, y, 2.0])
            results.append(y)
    moved = results[0].to("cuda:1")
    np.testing.assert_array_equal(moved.numpy(), results[1].numpy())
    assert math.isclose(float(results[1].numpy()[999]), 1998.0)


@wp.kernel
def shifted_scale(a: wp.array(dtype=wp.float32), b: wp.array(dtype=wp.float32), n: int):
    i = wp.tid()
    b[i] = a[i + n] * 2.0


@pytest.fixture
def debug_mode(monkeypatch):
    monkeypatch.setattr(wp.config, "mode", "debug")


def test_debug_mode_out_of_bounds_read_raises(device, debug_mode):
    # only thread 9 reads outside a (a[10]): one failing thread, so the message is the same on every device
    a = wp.array(np.arange(10, dtype=np.float32), device=device)
    b = wp.zeros(10, dtype=wp.float32, device=device)
    with pytest.raises(wp.KernelBoundsError) as err:
        wp.launch(shifted_scale, dim=10, inputs=[a, b, 1], device=device)
    assert str(err.value) == (f"{_where(shifted_scale, 'a[i + n]')}: kernel 'shifted_scale': index [10] is out of "
                              f"bounds reading argument 'a' of shape (10,) (thread 9)")
    np.testing.assert_array_equal(b.numpy(), [2, 4, 6, 8, 10, 12, 14, 16, 18, 0])  # the skipped load read 0


def test_debug_mode_counts_every_failing_thread(device, debug_mode):
    # threads 7, 8, 9 fail; on a GPU any of them may claim the record first, the count is exact
    a = wp.array(np.arange(10, dtype=np.float32), device=device)
    b = wp.zeros(10, dtype=wp.float32, device=device)
    with pytest.raises(wp.KernelBoundsError) as err:
        wp.launch(shifted_scale, dim=10, inputs=[a, b, 3], device=device, **({} if device == "cpu" else
                                                                            {"block_dim": 32}))
    m = re.fullmatch(re.escape(f"{_where(shifted_scale, 'a[i + n]')}: kernel 'shifted_scale': index [") +
                     r"(\d+)\] is out of bounds reading argument 'a' of shape \(10,\) \(thread (\d+); 3 "
                     r"out-of-bounds accesses in this launch\)", str(err.value))
    assert m and int(m.group(2)) in (7, 8, 9) and int(m.group(1)) == int(m.group(2)) + 3, str(err.value)
    np.testing.assert_array_equal(b.numpy(), [6, 8, 10, 12, 14, 16, 18, 0, 0, 0])


def test_debug_mode_in_bounds_launch_raises_nothing(device, debug_mode):
    a = wp.array(np.arange(12, dtype=np.float32), device=device)
    b = wp.zeros(10, dtype=wp.float32, device=device)
    for _ in range(2):  # a second launch gets a fresh zeroed record
        wp.launch(shifted_scale, dim=10, inputs=[a, b, 2], device=device)
    np.testing.assert_array_equal(b.numpy(), 2.0 * np.arange(2, 12))


def test_debug_mode_adjoint_launch_raises(device, debug_mode):
    a = wp.array(np.arange(10, dtype=np.float32), device=device)
    b = wp.zeros(10, dtype=wp.float32, device=device)
    adj_a = wp.zeros(10, dtype=wp.float32, device=device)
    adj_b = wp.array(np.ones(10, dtype=np.float32), device=device)
    with pytest.raises(wp.KernelBoundsError) as err:
        wp.launch(shifted_scale, dim=10, inputs=[a, b, 1], adjoint=True, adj_inputs=[adj_a, adj_b, 0], device=device)
    # thread 9 alone fails, twice: the adjoint reads a[10] again, then would add into adj_a[10]
    assert str(err.value) == (f"{_where(shifted_scale, 'a[i + n]')}: kernel 'shifted_scale': index [10] is out of "
                              f"bounds reading argument 'a' of shape (10,) (thread 9; 2 out-of-bounds accesses in "
                              f"this launch)")
    np.testing.assert_array_equal(adj_a.numpy(), [0] + [2.0] * 9)


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param
