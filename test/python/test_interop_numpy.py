"""numpy interop: the array protocols for every dtype (scalars and vectors/matrices), zero-copy views,
wp.from_numpy and the dtype maps."""

import numpy as np
import pytest

import mlwarp as wp

SCALARS = [(wp.int8, np.int8), (wp.uint8, np.uint8), (wp.int16, np.int16), (wp.uint16, np.uint16),
           (wp.int32, np.int32), (wp.uint32, np.uint32), (wp.int64, np.int64), (wp.uint64, np.uint64),
           (wp.float16, np.float16), (wp.float32, np.float32), (wp.float64, np.float64), (wp.bool, np.bool_)]


@pytest.mark.parametrize("wdt, ndt", SCALARS)
def test_dtype_maps(wdt, ndt):
    assert wp.dtype_to_numpy(wdt) is ndt
    assert wp.dtype_from_numpy(ndt) is wdt
    assert wp.dtype_from_numpy(np.dtype(ndt)) is wdt


def test_dtype_map_errors():
    with pytest.raises(TypeError, match=r"Cannot convert numpy dtype <class 'numpy.complex64'> to a Warp dtype"):
        wp.dtype_from_numpy(np.complex64)
    with pytest.raises(TypeError, match=r"Cannot convert <class 'mlwarp.vec3f'> to a numpy dtype"):
        wp.dtype_to_numpy(wp.vec3)


@pytest.mark.parametrize("wdt, ndt", SCALARS)
def test_array_interface_and_np_array_every_scalar(wdt, ndt):
    values = np.array([0, 1, 0, 1], dtype=ndt)
    a = wp.array(values, dtype=wdt)
    ai = a.__array_interface__
    assert ai["typestr"] == np.dtype(ndt).str
    assert ai["shape"] == (4,) and ai["data"][0] == a.ptr
    b = np.array(a)
    assert b.dtype == ndt and b.tolist() == values.tolist()
    view = np.asarray(a)
    view[0] = 1
    assert a.numpy()[0] == 1  # np.asarray is zero-copy on the CPU


@pytest.mark.parametrize("wdt, inner", [(wp.vec3, (3,)), (wp.vec2d, (2,)), (wp.mat22, (2, 2)),
                                        (wp.quat, (4,)), (wp.vec4i, (4,))])
def test_vector_arrays_expose_element_dims(wdt, inner):
    a = wp.zeros(5, dtype=wdt)
    assert a.shape == (5,) and a.ndim == 1
    n = np.asarray(a)
    assert n.shape == (5,) + inner
    assert n.dtype == wp.dtype_to_numpy(wdt._wp_scalar_type_)
    assert a.__array_interface__["shape"] == (5,) + inner
    n[2] = 7
    assert a.numpy()[2].tolist() == np.full(inner, 7).tolist()


def test_vector_array_from_numpy_trailing_dims():
    n = np.arange(12, dtype=np.float32).reshape(4, 3)
    a = wp.array(n, dtype=wp.vec3)
    assert a.shape == (4,) and a.dtype is wp.vec3
    assert a.numpy().tolist() == n.tolist()
    assert a.strides == (12,)
    m = wp.from_numpy(np.zeros((2, 5, 2, 2), dtype=np.float32), dtype=wp.mat22)
    assert m.shape == (2, 5) and m.ndim == 2


def test_from_numpy():
    n = np.arange(6, dtype=np.int16)
    a = wp.from_numpy(n)
    assert a.dtype is wp.int16 and a.numpy().tolist() == n.tolist()
    a.numpy()[0] = 5
    assert n[0] == 0  # from_numpy copies, as Warp's
    assert wp.from_numpy(n, dtype=wp.float32, shape=(2, 3)).numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(RuntimeError, match=r"unsupported numpy dtype complex128"):
        wp.from_numpy(np.zeros(2, dtype=np.complex128))


def test_numpy_is_zero_copy_for_views():
    a = wp.array(np.arange(10, dtype=np.float64))
    v = a[1::3].numpy()
    assert v.strides == (24,)
    v[:] = -1.0
    assert a.numpy().tolist() == [0.0, -1.0, 2.0, 3.0, -1.0, 5.0, 6.0, -1.0, 8.0, 9.0]


def test_guide_example():
    # the interop guide: np.array of a wp.array built from a list with dtype=float
    w = wp.array([1.0, 2.0, 3.0], dtype=float, device="cpu")
    a = np.array(w)
    assert a.dtype == np.float32 and a.tolist() == [1.0, 2.0, 3.0]
    warp_type = wp.float32
    numpy_type = wp.dtype_to_numpy(warp_type)
    assert wp.zeros(4, dtype=warp_type).numpy().dtype == np.zeros(4, dtype=numpy_type).dtype
