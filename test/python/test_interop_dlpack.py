"""DLPack: wp.from_dlpack / wp.to_dlpack / __dlpack__ / __dlpack_device__, zero-copy round trips with
numpy and torch, capsule ownership and lifetimes."""

import gc

import numpy as np
import pytest
import torch

import mlwarp as wp
from mlwarp.interop import dlpack


def test_dlpack_device():
    assert wp.zeros(2).__dlpack_device__() == (1, 0)  # kDLCPU


@pytest.mark.parametrize("ndt", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
                                 np.float16, np.float32, np.float64, np.bool_])
def test_numpy_round_trip_every_dtype(ndt):
    n = np.array([1, 0, 1], dtype=ndt)
    a = wp.from_dlpack(n)
    assert a.dtype is wp.dtype_from_numpy(ndt) and a.ptr == n.ctypes.data
    back = np.from_dlpack(a)
    assert back.dtype == ndt and back.ctypes.data == n.ctypes.data
    back[1] = 1
    assert n[1] == 1 and a.numpy()[1] == 1


def test_numpy_from_wp_array_is_writable_view():
    a = wp.zeros(4)
    v = np.from_dlpack(a)  # numpy asks for DLPack 1.0: the view is writable
    v[2] = 3.0
    assert a.numpy().tolist() == [0.0, 0.0, 3.0, 0.0]


def test_torch_round_trips():
    t = torch.arange(6, dtype=torch.int64).reshape(2, 3)
    a = wp.from_dlpack(t)
    assert a.shape == (2, 3) and a.dtype is wp.int64 and a.ptr == t.data_ptr()
    a.numpy()[1, 2] = 50
    assert t[1, 2].item() == 50
    back = torch.from_dlpack(a)
    assert back.data_ptr() == t.data_ptr() and back.tolist() == t.tolist()
    legacy = torch.utils.dlpack.from_dlpack(wp.to_dlpack(a))
    assert legacy.data_ptr() == t.data_ptr()


def test_strided_views_round_trip():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    a = wp.from_dlpack(t.T)
    assert a.shape == (4, 3) and a.strides == (4, 16)
    assert a.numpy().tolist() == t.T.tolist()
    w = wp.array(np.arange(10, dtype=np.float32))[1::3]
    tt = torch.from_dlpack(w)
    assert tt.stride() == (3,) and tt.tolist() == [1.0, 4.0, 7.0]
    assert np.from_dlpack(w).strides == (12,)


def test_capsules():
    cap = torch.utils.dlpack.to_dlpack(torch.ones(3))
    a = wp.from_dlpack(cap)
    assert a.numpy().tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError, match=r"^Expected a valid DLPack capsule, got PyCapsule: it has already been "
                                        r"consumed or is not a 'dltensor'$"):
        wp.from_dlpack(cap)
    with pytest.raises(TypeError, match=r"^Expected a valid DLPack capsule, got list$"):
        wp.from_dlpack([1, 2])


def test_imported_memory_lives_until_the_array_dies():
    a = wp.from_dlpack(torch.full((256,), 7.0))  # the producer's tensor has no other owner
    gc.collect()
    junk = [torch.zeros(256) for _ in range(20)]
    assert a.numpy().tolist() == [7.0] * 256
    del junk


def test_exported_array_lives_until_consumer_is_done():
    before = len(dlpack._exported)
    t = torch.from_dlpack(wp.array(np.arange(64, dtype=np.float32)))  # nothing else holds the array
    gc.collect()
    junk = [np.zeros(64, dtype=np.float32) for _ in range(20)]
    assert t.tolist() == [float(i) for i in range(64)]
    assert len(dlpack._exported) == before + 1
    del t, junk
    gc.collect()
    assert len(dlpack._exported) == before  # torch called our deleter


def test_unconsumed_capsule_releases_its_array():
    before = len(dlpack._exported)
    cap = wp.to_dlpack(wp.zeros(8))
    assert len(dlpack._exported) == before + 1
    del cap
    gc.collect()
    assert len(dlpack._exported) == before


def test_zero_dim_bool_and_vector_dtype():
    s = wp.from_dlpack(torch.tensor(4.0))
    assert s.shape == (1,) and s.numpy().tolist() == [4.0]
    b = wp.from_dlpack(np.array([True, False]))
    assert b.dtype is wp.bool and b.numpy().tolist() == [True, False]
    assert torch.from_dlpack(b).dtype == torch.bool
    v = wp.from_dlpack(torch.arange(6, dtype=torch.float32).reshape(2, 3), dtype=wp.vec3)
    assert v.dtype is wp.vec3 and v.shape == (2,)
    assert torch.from_dlpack(v).shape == (2, 3)  # vector elements export as trailing dims
    with pytest.raises(RuntimeError, match=r"Could not convert a DLPack tensor with shape \(3, 2\) to Warp array with "
                                           r"dtype=vec3f"):
        wp.from_dlpack(torch.zeros(3, 2), dtype=wp.vec3)
    with pytest.raises(RuntimeError, match=r"^Incompatible data types: DLPack float32 and Warp int32$"):
        wp.from_dlpack(torch.zeros(3), dtype=wp.int32)


def test_unsupported_dtypes():
    with pytest.raises(RuntimeError, match=r"^Warp does not support complex types$"):
        wp.from_dlpack(torch.zeros(2, dtype=torch.complex64))


def test_read_only_numpy_stays_read_only():
    n = np.arange(3.0)
    n.flags.writeable = False
    a = wp.from_dlpack(n)
    assert not a.numpy().flags.writeable
    assert a.numpy().tolist() == [0.0, 1.0, 2.0]


def test_dunder_dlpack_options():
    a = wp.zeros(3)
    with pytest.raises(BufferError, match=r"the array is on cpu; cannot export to DLPack device \(2, 0\)"):
        a.__dlpack__(dl_device=(2, 0))
    c = np.from_dlpack(wp.array(a), copy=True)
    c[0] = 1.0
    assert a.numpy()[0] == 0.0


def test_export_survives_jax_resetting_the_capsule_api():
    """jax.ffi.pycapsule (which wp.jax_kernel's registration calls) sets ctypes.pythonapi.PyCapsule_New's argtypes to
    its own destructor type; mlwarp's DLPack export keeps working (it calls the C API through a handle of its own)."""
    import ctypes

    jax_ffi = pytest.importorskip("jax.ffi")
    jax_ffi.pycapsule(ctypes.cast(ctypes.pythonapi.Py_IncRef, ctypes.c_void_p))
    a = wp.array(np.arange(4.0, dtype=np.float32))
    np.testing.assert_array_equal(wp.from_dlpack(wp.to_dlpack(a)).numpy(), [0.0, 1.0, 2.0, 3.0])
