"""The FFI handlers' CUDA path (device ordinal and stream from XLA's call frame, wp.arrays over device buffers,
the launch on XLA's stream) against the fake GPU of cuda_fake_driver.py: JAX on this machine has no CUDA
backend, so the call frame is built by hand, as XLA lays it out (test_interop_jax_ffi._FakeXla)."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.runtime import device as device_registry
from mlwarp.runtime.cuda import devices as cuda_devices
from mlwarp.runtime.cuda import driver as drv

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from cuda_fake_driver import FakeDriver  # noqa: E402
from test_interop_jax_ffi import _FakeXla  # noqa: E402


@wp.kernel
def saxpy_ffi(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a * x[i] + y[i]


def scale_twice(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    wp.launch(saxpy_ffi, dim=x.shape, inputs=[x, x, 1.0], outputs=[out])


@pytest.fixture
def fake_gpu(monkeypatch):
    fake = FakeDriver(arches=(90, 90))
    monkeypatch.setattr(drv, "_driver", fake)
    monkeypatch.setattr(drv, "_init_error", None)
    monkeypatch.setattr(cuda_devices, "_devices", None)
    monkeypatch.setattr(device_registry, "_default", None)
    saved = dict(device_registry._devices)
    fake.cpu_entries["saxpy_ffi_cuda"] = saxpy_ffi.compiled(wp.get_device("cpu"))
    yield fake
    for alias in [a for a in saxpy_ffi._compiled if a.startswith("cuda")]:
        del saxpy_ffi._compiled[alias]
    device_registry._devices.clear()
    device_registry._devices.update(saved)


def _device_arrays(device, *values):
    return [wp.array(np.asarray(v, np.float32), device=device) for v in values]


def test_jax_kernel_on_cuda_ordinal_and_stream(fake_gpu):
    f = wp.jax_kernel(saxpy_ffi, module_preload_mode=wp.JaxModulePreloadMode.NONE)
    f(jnp.zeros(4, jnp.float32), jnp.zeros(4, jnp.float32), 2.0)  # traced: fixes a = 2 for this launch id
    launch_id = len(f.launches) - 1
    stream = wp.Stream("cuda:1")
    x, y, out = _device_arrays("cuda:1", np.arange(4), np.ones(4), np.zeros(4))
    xla = _FakeXla(ordinal=1, stream=stream.cuda_stream)
    frame = xla.frame([(x.ptr, (4,)), (y.ptr, (4,))], [(out.ptr, (4,))], {"launch_id": launch_id})
    f._run(frame, "CUDA")
    stream.synchronize()
    np.testing.assert_array_equal(out.numpy(), 2.0 * np.arange(4) + 1.0)
    assert fake_gpu.launches[-1]["name"] == "saxpy_ffi_cuda"
    assert fake_gpu.launches[-1]["stream"] == stream.cuda_stream  # on XLA's stream


def test_jax_callable_on_cuda(fake_gpu):
    f = wp.jax_callable(scale_twice, module_preload_mode=wp.JaxModulePreloadMode.NONE)
    f(jnp.zeros(3, jnp.float32))
    x, out = _device_arrays("cuda:0", [1.0, 2.0, 3.0], np.zeros(3))
    xla = _FakeXla(ordinal=0, stream=wp.get_stream("cuda:0").cuda_stream)
    frame = xla.frame([(x.ptr, (3,))], [(out.ptr, (3,))], {"call_id": len(f.calls) - 1})
    f._run(frame, "CUDA")
    wp.synchronize_device("cuda:0")
    np.testing.assert_array_equal(out.numpy(), [2.0, 4.0, 6.0])
