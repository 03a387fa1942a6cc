"""wp.indexedarray over CUDA arrays, against the fake driver (cuda_fake_driver.py: device memory is host memory,
a launch runs the CPU build of the kernel on the launch struct the GPU would get): the Python-scope values and
writes go through device copies, and a launch packs the device addresses of the data and index arrays (and of
the per-device zero that a dimension without index array reads)."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.arrays.cuda_array import CudaArray
from mlwarp.runtime import device as device_registry
from mlwarp.runtime.cuda import devices as cuda_devices
from mlwarp.runtime.cuda import driver as drv

from cuda_fake_driver import FakeDriver


@wp.kernel
def _scale_rows(a: wp.indexedarray[float, 2], out: wp.array2d[float]):
    i, j = wp.tid()
    out[i, j] = a[i, j]
    a[i, j] = a[i, j] * 2.0


@pytest.fixture
def fake(monkeypatch):
    fake = FakeDriver(arches=(90,))
    monkeypatch.setattr(drv, "_driver", fake)
    monkeypatch.setattr(drv, "_init_error", None)
    monkeypatch.setattr(cuda_devices, "_devices", None)
    monkeypatch.setattr(device_registry, "_default", None)
    saved = dict(device_registry._devices)
    fake.cpu_entries[f"{_scale_rows.key}_cuda"] = _scale_rows.compiled(wp.get_device("cpu"))
    yield fake
    for alias in [a for a in _scale_rows._compiled if a.startswith("cuda")]:
        del _scale_rows._compiled[alias]
    device_registry._devices.clear()
    device_registry._devices.update(saved)
    import mlwarp.arrays.indexed as indexed

    for alias in [a for a in indexed._zero_index if a.startswith("cuda")]:
        del indexed._zero_index[alias]  # that fake device's memory is gone


def test_values_writes_and_a_launch_on_the_device(fake):
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    data = wp.array(values, device="cuda:0")
    rows = wp.array(np.array([2, 0], dtype=np.int32), device="cuda:0")
    assert isinstance(data, CudaArray)
    a = wp.indexedarray(data, [rows, None])
    assert a.device == data.device and a.shape == (2, 4)
    np.testing.assert_array_equal(a.numpy(), values[[2, 0]])

    out = wp.zeros((2, 4), dtype=float, device="cuda:0")
    wp.launch(_scale_rows, dim=a.shape, inputs=[a, out], device="cuda:0")
    np.testing.assert_array_equal(out.numpy(), values[[2, 0]])
    expected = values.copy()
    expected[[2, 0]] *= 2
    np.testing.assert_array_equal(data.numpy(), expected)

    a.fill_(-1.0)
    expected[[2, 0]] = -1
    np.testing.assert_array_equal(data.numpy(), expected)
    a.assign(np.arange(8, dtype=np.float32).reshape(2, 4))
    expected[[2, 0]] = np.arange(8).reshape(2, 4)
    np.testing.assert_array_equal(data.numpy(), expected)

    with pytest.raises(ValueError, match=r"^Index array device \(cpu does not match data array device \(cuda:0\)\)$"):
        wp.indexedarray(data, [wp.array(np.array([0], dtype=np.int32), device="cpu")])
