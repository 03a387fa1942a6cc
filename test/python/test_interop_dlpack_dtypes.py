"""DLPack dtypes and errors as Warp's: every Warp scalar type both ways, the views Warp allows (int <-> uint of
one width, bool8 as int8/uint8, vector and matrix dtypes over trailing dimensions, lanes as a dimension),
its texts for refused dtypes, devices and capsules, and a refused capsule left for its owner to free."""

import ctypes

import numpy as np
import pytest
import torch

import mlwarp as wp
from mlwarp.runtime import dlpack as rt

SCALARS = [wp.bool, wp.int8, wp.uint8, wp.int16, wp.uint16, wp.int32, wp.uint32, wp.int64, wp.uint64, wp.float16,
           wp.bfloat16, wp.float32, wp.float64]


@pytest.mark.parametrize("dtype", SCALARS, ids=lambda t: t.__name__)
def test_every_scalar_type_round_trips_in_place(dtype):
    a = wp.array([1, 0, 1, 1], dtype=dtype)
    for explicit in (None, dtype):
        b = wp.from_dlpack(wp.to_dlpack(a), dtype=explicit)
        assert b.dtype is dtype and b.ptr == a.ptr and b.shape == a.shape and b.strides == a.strides
    assert b.numpy().tobytes() == a.numpy().tobytes()
    if dtype is not wp.bfloat16:  # (whose numpy() shows bit patterns)
        np.testing.assert_array_equal(np.asarray(b.numpy(), dtype=np.float64), [1, 0, 1, 1])


@pytest.mark.parametrize("signed,unsigned", [(wp.int8, wp.uint8), (wp.int16, wp.uint16), (wp.int32, wp.uint32),
                                             (wp.int64, wp.uint64)], ids=lambda t: t.__name__)
def test_signed_and_unsigned_of_one_width_view_each_other(signed, unsigned):
    a = wp.array([-1, 2], dtype=signed)
    u = wp.from_dlpack(wp.to_dlpack(a), dtype=unsigned)
    assert u.dtype is unsigned and u.ptr == a.ptr
    assert u.numpy().tolist() == [np.iinfo(wp.dtype_to_numpy(unsigned)).max, 2]
    back = wp.from_dlpack(wp.to_dlpack(u), dtype=signed)
    assert back.numpy().tolist() == [-1, 2]


@pytest.mark.parametrize("target", [wp.int8, wp.uint8], ids=lambda t: t.__name__)
def test_bools_view_as_bytes(target):
    values = np.array([True, False, True])
    b = wp.from_dlpack(torch.from_numpy(values), dtype=target)
    assert b.dtype is target and b.numpy().tolist() == [1, 0, 1]


def test_torch_int8_as_uint8_and_bfloat16_both_ways():
    t = torch.tensor([-2, 5], dtype=torch.int8)
    assert wp.from_dlpack(t, dtype=wp.uint8).numpy().tolist() == [254, 5]
    h = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    a = wp.from_dlpack(h)
    assert a.dtype is wp.bfloat16 and a.ptr == h.data_ptr()
    back = torch.from_dlpack(a)
    assert back.dtype == torch.bfloat16 and back.tolist() == [1.5, -2.0]


@pytest.mark.parametrize("source,target,text", [
    (wp.bool, wp.float32, "bool8 and Warp float32"),
    (wp.uint8, wp.bool, "uint8 and Warp bool"),
    (wp.float32, wp.float64, "float32 and Warp float64"),
    (wp.float16, wp.bfloat16, "float16 and Warp bfloat16"),
    (wp.int32, wp.float32, "int32 and Warp float32"),
    (wp.float32, wp.vec3d, "float32 and Warp vec3d"),
])
def test_incompatible_dtypes(source, target, text):
    with pytest.raises(RuntimeError, match=rf"^Incompatible data types: DLPack {text}$"):
        wp.from_dlpack(wp.to_dlpack(wp.zeros(3, dtype=source)), dtype=target)


def test_a_refused_capsule_stays_unconsumed():
    cap = wp.to_dlpack(wp.array([True, False], dtype=wp.bool))
    with pytest.raises(RuntimeError, match="Incompatible data types"):
        wp.from_dlpack(cap, dtype=wp.float32)
    assert wp.from_dlpack(cap).numpy().tolist() == [True, False]


def test_vector_and_matrix_dtypes_over_trailing_dimensions():
    t = torch.arange(12, dtype=torch.float32)
    v = wp.from_dlpack(t.reshape(4, 3), dtype=wp.vec3)
    assert v.shape == (4,) and v.strides == (12,) and v.numpy()[2].tolist() == [6.0, 7.0, 8.0]
    m = wp.from_dlpack(t.reshape(3, 2, 2), dtype=wp.mat22)
    assert m.shape == (3,) and m.numpy()[1].tolist() == [[4.0, 5.0], [6.0, 7.0]]
    one = wp.from_dlpack(torch.tensor([1.0, 2.0, 3.0]), dtype=wp.vec3)  # the whole tensor is one element
    assert one.shape == (1,) and one.numpy()[0].tolist() == [1.0, 2.0, 3.0]
    s = wp.from_dlpack(wp.to_dlpack(wp.zeros(5, dtype=wp.vec4h)), dtype=wp.float16)
    assert s.shape == (5, 4) and s.strides == (8, 2)
    u = wp.from_dlpack(torch.zeros(2, 3, dtype=torch.int32), dtype=wp.vec3ui)  # signedness may differ, as scalars
    assert u.dtype is wp.vec3ui and u.shape == (2,)


def _relabelled(a, **dtype):
    """A capsule of `a` whose DLPack dtype fields are overwritten (producers with lanes or bit types)."""
    cap = wp.to_dlpack(a)
    managed, _ = rt.peek(cap)
    for k, v in dtype.items():
        setattr(managed.dl_tensor.dtype, k, v)
    return cap, managed


def test_lanes_are_one_more_dimension():
    cap, managed = _relabelled(wp.array(np.arange(6, dtype=np.float32)), lanes=2)
    managed.dl_tensor.shape[0] = 3
    a = wp.from_dlpack(cap)
    assert a.shape == (3, 2) and a.strides == (8, 4) and a.numpy().tolist() == [[0, 1], [2, 3], [4, 5]]


def test_bit_booleans_and_complex_types_are_refused():
    cap, _ = _relabelled(wp.zeros(2, dtype=wp.uint8), bits=1)
    with pytest.raises(RuntimeError, match=r"^Warp does not support bit boolean types$"):
        wp.from_dlpack(cap)
    with pytest.raises(RuntimeError, match=r"^Data types with less than 8 bits are not supported$"):
        wp.from_dlpack(cap, dtype=wp.uint8)
    with pytest.raises(RuntimeError, match=r"^Warp does not support complex types$"):
        wp.from_dlpack(torch.zeros(2, dtype=torch.complex64))


def test_an_unsupported_device_is_refused_before_export():
    calls = []

    class OnAnotherDevice:
        def __dlpack_device__(self):
            return (123, 7)

        def __dlpack__(self, stream=None):
            calls.append(stream)

    with pytest.raises(TypeError, match=r"^Unsupported source device for DLPack: device_type=123, device_id=7$"):
        wp.from_dlpack(OnAnotherDevice())
    assert calls == []


def test_a_producer_that_returns_no_capsule():
    class NotACapsule:
        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, stream=None):
            return object()

    with pytest.raises(TypeError, match=r"^Expected a valid DLPack capsule, got object$"):
        wp.from_dlpack(NotACapsule())


def test_cpu_export_takes_no_stream():
    a = wp.array(np.arange(4, dtype=np.int32))
    for stream in (None, -1):
        assert wp.from_dlpack(a.__dlpack__(stream=stream)).numpy().tolist() == [0, 1, 2, 3]
    for stream in (0, 1, 2):
        with pytest.raises(TypeError, match=r"^DLPack stream must be None or -1 for CPU device$"):
            a.__dlpack__(stream=stream)


def test_warp_keyword_names():
    a = wp.zeros(2, dtype=wp.int16)
    b = wp.from_dlpack(wp.to_dlpack(wp_array=a), dtype=None, hint=None)
    assert b.ptr == a.ptr and b.strides == (ctypes.sizeof(ctypes.c_int16),)
