"""wp.fabricarray over CUDA memory, against the fake driver (cuda_fake_driver.py: device memory is host memory,
a launch runs the CPU build of the kernel on the launch struct the GPU would get): the bucket rows are copied
to the device, Python-scope values and writes go through device copies, and a launch reads the buckets' device
memory through the device copy of the rows."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.arrays.cuda_array import CudaArray
from mlwarp.runtime import device as device_registry
from mlwarp.runtime.cuda import devices as cuda_devices
from mlwarp.runtime.cuda import driver as drv

from cuda_fake_driver import FakeDriver
from fabric_util import bucket_interface


@wp.kernel
def _bump_picked(a: wp.fabricarray[float], picked: wp.indexedfabricarray[float], out: wp.array[float]):
    i = wp.tid()
    out[i] = a[i]
    wp.atomic_add(picked, i, 10.0)


@pytest.fixture
def fake(monkeypatch):
    fake = FakeDriver(arches=(90,))
    monkeypatch.setattr(drv, "_driver", fake)
    monkeypatch.setattr(drv, "_init_error", None)
    monkeypatch.setattr(cuda_devices, "_devices", None)
    monkeypatch.setattr(device_registry, "_default", None)
    saved = dict(device_registry._devices)
    fake.cpu_entries[f"{_bump_picked.key}_cuda"] = _bump_picked.compiled(wp.get_device("cpu"))
    yield fake
    for alias in [a for a in _bump_picked._compiled if a.startswith("cuda")]:
        del _bump_picked._compiled[alias]
    device_registry._devices.clear()
    device_registry._devices.update(saved)


def test_values_writes_and_a_launch_on_the_device(fake):
    values = np.arange(7, dtype=np.float32)
    data = wp.array(values, device="cuda:0")
    assert isinstance(data, CudaArray)
    fa = wp.fabricarray(bucket_interface(data, "x", [3, 0, 4]), "x")
    assert fa.device == data.device and isinstance(fa._table, CudaArray)
    np.testing.assert_array_equal(fa.numpy(), values)

    picks = wp.array(np.array([6, 1], dtype=np.int32), device="cuda:0")
    out = wp.zeros(2, device="cuda:0")
    wp.launch(_bump_picked, dim=2, inputs=[fa, fa[picks], out], device="cuda:0")
    np.testing.assert_array_equal(out.numpy(), values[:2])
    expected = values.copy()
    expected[[6, 1]] += 10
    np.testing.assert_array_equal(data.numpy(), expected)

    fa[picks].fill_(-1.0)
    expected[[6, 1]] = -1
    np.testing.assert_array_equal(data.numpy(), expected)
    fa.assign(np.arange(7, dtype=np.float32) * 2)
    np.testing.assert_array_equal(data.numpy(), np.arange(7) * 2)
    np.testing.assert_array_equal(fa[picks].numpy(), [12, 2])
    moved = fa.to("cpu")
    assert isinstance(moved, wp.array) and moved.device.is_cpu and moved.numpy().tolist() == list(range(0, 14, 2))

    with pytest.raises(ValueError, match=r"^Index array device \(cpu does not match data array device \(cuda:0\)\)$"):
        fa[wp.array(np.array([0], dtype=np.int32), device="cpu")]
