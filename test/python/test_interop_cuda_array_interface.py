"""`__cuda_array_interface__` parsing and validation, on plain objects (no GPU needed)."""

import pytest

import mlwarp as wp
from mlwarp.interop import CudaArrayInfo, parse_cuda_array_interface


class Fake:
    def __init__(self, **iface):
        self.__cuda_array_interface__ = iface


def _iface(**over):
    d = {"shape": (2, 3), "typestr": "<f4", "data": (0x7F0000001000, False), "version": 3, "strides": None}
    d.update(over)
    return d


def test_contiguous_interface():
    info = parse_cuda_array_interface(Fake(**_iface()))
    assert info == CudaArrayInfo(ptr=0x7F0000001000, shape=(2, 3), strides=(12, 4), dtype=wp.float32,
                                 readonly=False, stream=None, version=3)


def test_strides_readonly_stream_and_dict_input():
    info = parse_cuda_array_interface(_iface(shape=(4,), typestr="<i8", strides=(16,), data=(4096, True), stream=1))
    assert info.strides == (16,) and info.dtype is wp.int64 and info.readonly and info.stream == 1
    assert parse_cuda_array_interface(_iface(typestr="|b1")).dtype is wp.bool
    assert parse_cuda_array_interface(_iface(typestr="<f2", version=2)).dtype is wp.float16
    assert parse_cuda_array_interface(_iface(typestr="|u1")).strides == (3, 1)


def test_empty_array_may_have_null_pointer():
    info = parse_cuda_array_interface(_iface(shape=(0, 3), data=(0, False)))
    assert info.ptr == 0 and info.shape == (0, 3)


@pytest.mark.parametrize("over, msg", [
    ({"shape": [2, 3]}, r"shape must be a tuple of non-negative ints, got \[2, 3\]"),
    ({"shape": (2, -1)}, r"shape must be a tuple of non-negative ints, got \(2, -1\)"),
    ({"typestr": "<c8"}, r"typestr '<c8' has no Warp type"),
    ({"typestr": ">f4"}, r"big-endian typestr '>f4' is not supported"),
    ({"typestr": "zz"}, r"unknown typestr 'zz'"),
    ({"data": 1234}, r"data must be a \(pointer, readonly\) tuple, got 1234"),
    ({"data": (0, False)}, r"null data pointer for a non-empty array"),
    ({"strides": (4,)}, r"strides must be None or a tuple of 2 ints, got \(4,\)"),
    ({"version": 7}, r"unsupported version 7"),
    ({"mask": object()}, r"masked arrays are not supported"),
    ({"stream": 0}, r"stream 0 is ambiguous and disallowed by the protocol"),
    ({"stream": "s"}, r"stream must be None or an int, got 's'"),
])
def test_invalid_interfaces(over, msg):
    with pytest.raises(ValueError, match=r"^Invalid __cuda_array_interface__: " + msg):
        parse_cuda_array_interface(Fake(**_iface(**over)))


def test_missing_key_and_non_implementer():
    d = _iface()
    del d["typestr"]
    with pytest.raises(ValueError, match=r"Invalid __cuda_array_interface__: missing 'typestr'"):
        parse_cuda_array_interface(d)
    with pytest.raises(TypeError, match=r"^list does not implement __cuda_array_interface__$"):
        parse_cuda_array_interface([1])


def test_cuda_only_object_is_not_a_cpu_array():
    with pytest.raises(RuntimeError, match=r"lives on a CUDA device; it cannot become a CPU array"):
        wp.array(Fake(**_iface()))
