"""bfloat16 arrays and the ml_dtypes package, as in Warp 1.19 (warp/_src/types.py, `_get_ml_dtypes_bfloat16`):
numpy has no bfloat16, so a bfloat16 array stores uint16 bit patterns. With ml_dtypes installed, .numpy()
views them as ml_dtypes.bfloat16 (so str() prints values), ml_dtypes.bfloat16 data make bfloat16 arrays and
are stored as themselves; without it, .numpy() gives the bits and warns once.

References: ml_dtypes' own conversion of the values (independent of mlwarp), hand-computed bit patterns
(1.0 = 0x3F80, 2.5 = 0x4020), and the strings warp-lang 1.19 printed for the same arrays."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import mlwarp as wp
import mlwarp.core.types as wt

from mlwarp.arrays import array_data  # the once-only bfloat16 warning's state

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = ml_dtypes.bfloat16
vec3bf = wp.types.vector(3, wp.bfloat16)
mat22bf = wp.types.matrix((2, 2), wp.bfloat16)


def bits(a) -> list:
    return np.asarray(a).view(np.uint16).reshape(-1).tolist()


@pytest.fixture
def without_ml_dtypes(monkeypatch):
    """As if ml_dtypes were not installed (the cached lookup says so), with the once-only warning not yet
    given."""
    monkeypatch.setattr(wt, "_ml_dtypes_bfloat16", None)
    monkeypatch.setattr(array_data, "_bfloat16_warned", False)


# -- .numpy(), str(), list() ----------------------------------------------------------------------------------
def test_numpy_shows_bfloat16_values():
    a = wp.array([1.0, 2.5], dtype=wp.bfloat16)
    got = a.numpy()
    assert got.dtype == BF16
    assert got.astype(np.float32).tolist() == [1.0, 2.5]
    assert bits(got) == [0x3F80, 0x4020]
    assert str(a) == "[1 2.5]"  # warp-lang 1.19's print(); was the bits "[16256 16416]"


def test_numpy_is_a_view_of_the_array_as_warps_is():
    a = wp.array([1.0, 2.5, 4.0], dtype=wp.bfloat16)
    a.numpy()[1] = BF16(-3.0)
    assert [float(x) for x in a.list()] == [1.0, -3.0, 4.0]
    assert a[1:].numpy().astype(np.float32).tolist() == [-3.0, 4.0]  # a strided view's too


def test_rounding_and_special_values_match_ml_dtypes():
    x = np.array([0.1, 3.14159, -0.3, 1e-40, np.inf, -0.0, np.nan, 3.0e38], dtype=np.float32)
    got = wp.array(x, dtype=wp.bfloat16).numpy()
    want = x.astype(BF16)  # ml_dtypes rounds to nearest even, as Warp's conversion does
    assert bits(got) == bits(want)


def test_vector_and_matrix_arrays_show_bfloat16_values():
    v = wp.array([[1.0, 2.0, 3.5]], dtype=vec3bf)
    assert v.numpy().dtype == BF16 and v.numpy().shape == (1, 3)
    assert v.numpy().astype(np.float32).tolist() == [[1.0, 2.0, 3.5]]
    assert str(v) == "[[1 2 3.5]]"  # warp-lang 1.19
    m = wp.array([[[1.0, 2.0], [3.0, 0.25]]], dtype=mat22bf)
    assert m.numpy().dtype == BF16
    assert m.numpy().astype(np.float32).tolist() == [[[1.0, 2.0], [3.0, 0.25]]]
    assert str(wp.array(np.ones((2, 2), np.float32), dtype=wp.bfloat16)) == "[[1 1]\n [1 1]]"  # warp-lang 1.19


def test_list_gives_bfloat16_scalars_and_composites():
    a = wp.array([1.0, 2.5, 0.1], dtype=wp.bfloat16)
    got = a.list()
    assert all(type(x) is wp.bfloat16 for x in got)
    assert [x.value for x in got] == [1.0, 2.5, float(BF16(0.1))]
    (v,) = wp.array([[1.0, 2.0, 3.5]], dtype=vec3bf).list()
    assert [float(c) for c in v] == [1.0, 2.0, 3.5]


def test_empty_and_multidimensional_arrays():
    e = wp.empty(0, dtype=wp.bfloat16)
    assert e.numpy().dtype == BF16 and e.numpy().shape == (0,)
    z = wp.zeros((2, 3), dtype=wp.bfloat16).numpy()
    assert z.dtype == BF16 and z.shape == (2, 3) and not z.astype(np.float32).any()


def test_array_interface_stays_the_bits_as_warps_does():
    a = wp.array([1.0, 2.5], dtype=wp.bfloat16)
    assert np.asarray(a).dtype == np.uint16 and np.asarray(a).tolist() == [0x3F80, 0x4020]
    assert a.__array_interface__["typestr"] == "<u2"


def test_repr_is_unchanged():
    assert repr(wp.zeros(2, dtype=wp.bfloat16)) == "array(shape=(2,), dtype=bfloat16, device=cpu)"


# -- ml_dtypes.bfloat16 data ------------------------------------------------------------------------------------
def test_dtype_from_numpy_knows_ml_dtypes_bfloat16():
    assert wp.types.dtype_from_numpy(BF16) is wp.bfloat16
    assert wp.types.dtype_from_numpy(np.dtype(BF16)) is wp.bfloat16
    assert wp.dtype_from_numpy(BF16) is wp.bfloat16
    assert wp.types.dtype_to_numpy(wp.bfloat16) is np.uint16  # the storage, as Warp's map
    assert wp.zeros(2, dtype=BF16).dtype is wp.bfloat16  # mlwarp takes numpy dtypes as array dtypes


def test_arrays_from_ml_dtypes_data_keep_the_values():
    d = np.array([1.0, -2.0, 0.1], dtype=BF16)
    inferred = wp.array(d)
    assert inferred.dtype is wp.bfloat16
    assert bits(inferred.numpy()) == bits(d)
    explicit = wp.array(d, dtype=wp.bfloat16)
    assert bits(explicit.numpy()) == bits(d)  # was [1, 0, 0]: the values cast to uint16
    assert wp.array(list(d)).dtype is wp.bfloat16  # a list of ml_dtypes scalars
    assert bits(wp.array(list(d), dtype=wp.bfloat16).numpy()) == bits(d)
    assert wp.array(d, dtype=wp.float32).numpy().tolist() == d.astype(np.float32).tolist()
    assert wp.array(d, dtype=wp.float16).numpy().tolist() == d.astype(np.float16).tolist()
    assert bits(wp.array(d, dtype=vec3bf).numpy()) == bits(d)
    two = np.arange(1, 7, dtype=np.float32).reshape(2, 3).astype(BF16)
    assert [[float(c) for c in v] for v in wp.array(two, dtype=vec3bf).list()] == [[1, 2, 3], [4, 5, 6]]


def test_round_trips_through_numpy_and_arrays():
    a = wp.array([1.0, -2.5, 0.0, 100.0, 0.001], dtype=wp.bfloat16)
    assert bits(wp.array(a.numpy()).numpy()) == bits(a)
    assert bits(wp.array(a).numpy()) == bits(a)
    assert bits(wp.clone(a).numpy()) == bits(a)
    # values, not bits, when converted (warp-lang 1.19 gives 16256.0, 16416.0 here: it reads the bits)
    assert wp.array(wp.array([1.0, 2.5], dtype=wp.bfloat16), dtype=wp.float32).numpy().tolist() == [1.0, 2.5]


def test_assign_and_fill_from_ml_dtypes_values():
    d = np.array([1.0, -2.0, 0.1], dtype=BF16)
    b = wp.zeros(3, dtype=wp.bfloat16)
    b.assign(d)
    assert bits(b.numpy()) == bits(d)
    c = wp.zeros(3, dtype=wp.float32)
    c.assign(d)
    assert c.numpy().tolist() == d.astype(np.float32).tolist()
    b.fill_(BF16(1.5))
    assert bits(b.numpy()) == [0x3FC0] * 3
    v = wp.zeros(2, dtype=vec3bf)
    v.fill_(np.array([1, 2, 3], dtype=BF16))
    assert v.numpy().astype(np.float32).tolist() == [[1, 2, 3]] * 2
    other = wp.zeros(3, dtype=wp.bfloat16)
    wp.copy(other, b)
    assert bits(other.numpy()) == [0x3FC0] * 3


def test_assigning_the_wrong_number_of_values_is_an_error():
    b = wp.zeros(3, dtype=wp.bfloat16)
    with pytest.raises(RuntimeError, match=r"^Cannot assign 2 values to an array of 3 elements \(shape \(3,\)\)$"):
        b.assign(np.zeros(2, dtype=BF16))


def test_ml_dtypes_data_of_the_wrong_shape_for_a_vector_type_is_an_error():
    with pytest.raises(RuntimeError, match=r"^The shape of the input array \(2,\) is not compatible with the "
                                           r"requested data type vec3bf$"):
        wp.array(np.zeros(2, dtype=BF16), dtype=vec3bf)


@wp.kernel
def doubled(a: wp.array(dtype=wp.bfloat16), out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i] = wp.float32(a[i]) * 2.0


@wp.kernel
def float_arg(x: wp.array(dtype=float)):
    pass


def test_kernels_take_ml_dtypes_arrays_and_write_values_numpy_shows():
    out = wp.zeros(2, dtype=wp.float32)
    wp.launch(doubled, dim=2, inputs=[np.array([1.5, -2.0], dtype=BF16), out])  # (warp-lang 1.19 refuses it)
    assert out.numpy().tolist() == [3.0, -4.0]


def test_an_ml_dtypes_array_for_a_float32_argument_is_an_error():
    with pytest.raises(wp.LaunchError, match=r"^Error launching kernel 'float_arg', argument 'x' expects an array "
                                             r"with dtype=float32 but passed array has dtype=bfloat16\.$"):
        wp.launch(float_arg, dim=1, inputs=[np.zeros(2, dtype=BF16)])


def test_indexed_arrays_show_bfloat16_values():
    a = wp.array([1.0, 2.5, -4.0], dtype=wp.bfloat16)
    ia = wp.indexedarray(a, [wp.array([2, 0], dtype=wp.int32)])
    assert ia.numpy().dtype == BF16
    assert ia.numpy().astype(np.float32).tolist() == [-4.0, 1.0]
    assert str(ia) == "[-4 1]"
    assert [float(x) for x in ia.list()] == [-4.0, 1.0]
    ia.assign(np.array([0.5, 8.0], dtype=BF16))
    assert a.numpy().astype(np.float32).tolist() == [8.0, 2.5, 0.5]


# -- without ml_dtypes --------------------------------------------------------------------------------------------
def test_without_ml_dtypes_numpy_gives_the_bits_and_warns_once(without_ml_dtypes):
    a = wp.array([1.0, 2.5], dtype=wp.bfloat16)
    with pytest.warns(UserWarning) as caught:
        got = a.numpy()
    assert [str(w.message) for w in caught] == [
        "bfloat16 arrays are returned as np.uint16 (raw bit representation) because NumPy does not natively "
        "support bfloat16. Use wp.to_torch() or wp.to_jax() for frameworks that support bfloat16 natively, or "
        "install ml-dtypes for a NumPy bfloat16 dtype."]  # Warp 1.19's text
    assert got.dtype == np.uint16 and got.tolist() == [0x3F80, 0x4020]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process, as Warp's
        assert str(a) == "[16256 16416]"  # warp-lang 1.19 without ml_dtypes
        assert wp.zeros(1, dtype=vec3bf).numpy().dtype == np.uint16


def test_without_ml_dtypes_list_needs_no_warning(without_ml_dtypes):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [x.value for x in wp.array([1.0, 2.5], dtype=wp.bfloat16).list()] == [1.0, 2.5]
        assert bits(wp.array(np.array([0x3FC0], dtype=np.uint16), dtype=wp.bfloat16)._host()) == [0x3FC0]


def test_without_ml_dtypes_its_dtype_is_unknown(without_ml_dtypes):
    with pytest.raises(TypeError, match=r"^Cannot convert numpy dtype <class 'ml_dtypes\.bfloat16'> to a Warp "
                                        r"dtype$"):
        wp.types.dtype_from_numpy(BF16)
    with pytest.raises(RuntimeError, match=r"^Failed to convert input data to an array: unsupported numpy dtype "
                                           r"bfloat16$"):
        wp.array(np.zeros(2, dtype=BF16))


def test_the_lookup_is_lazy_and_a_missing_package_reads_as_none(monkeypatch):
    code = "import sys, mlwarp as wp; wp.zeros(2, dtype=wp.bfloat16); print('ml_dtypes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"  # importing mlwarp, making a bfloat16 array: no ml_dtypes import
    monkeypatch.setattr(wt, "_ml_dtypes_bfloat16", wt._UNSET)
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # `import ml_dtypes` raises ImportError
    assert wt._get_ml_dtypes_bfloat16() is None


# -- CUDA arrays (the fake driver: device memory is host memory) -------------------------------------------------
@pytest.fixture
def fake_cuda(monkeypatch):
    from mlwarp.runtime import device as device_registry
    from mlwarp.runtime.cuda import devices as cuda_devices
    from mlwarp.runtime.cuda import driver as drv

    from cuda_fake_driver import FakeDriver

    monkeypatch.setattr(drv, "_driver", FakeDriver(arches=(90,)))
    monkeypatch.setattr(drv, "_init_error", None)
    monkeypatch.setattr(cuda_devices, "_devices", None)
    monkeypatch.setattr(device_registry, "_default", None)
    saved = dict(device_registry._devices)
    yield
    device_registry._devices.clear()
    device_registry._devices.update(saved)


def test_cuda_arrays_show_bfloat16_values(fake_cuda):
    a = wp.array([1.0, 2.5, -4.0], dtype=wp.bfloat16, device="cuda:0")
    assert a.numpy().dtype == BF16 and bits(a.numpy()) == [0x3F80, 0x4020, 0xC080]
    assert str(a) == "[1 2.5 -4]"
    assert [float(x) for x in a.list()] == [1.0, 2.5, -4.0]
    a.assign(np.array([0.5, 8.0, 2.0], dtype=BF16))
    host = a.to("cpu")
    assert host.dtype is wp.bfloat16 and host.numpy().astype(np.float32).tolist() == [0.5, 8.0, 2.0]
    assert wp.array(a, dtype=wp.float32, device="cuda:0").numpy().tolist() == [0.5, 8.0, 2.0]
