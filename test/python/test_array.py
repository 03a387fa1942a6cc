"""wp.array on the CPU: construction, default dtypes (Warp 1.19's), views, mutation, constructors."""

import gc

import numpy as np
import pytest

import mlwarp as wp


# -- construction and default dtypes ----------------------------------------------
@pytest.mark.parametrize("data, dtype", [
    ([1.0, 2.0, 3.0], wp.float64),  # Warp 1.19 follows numpy for lists: float64 / int64
    ([1, 2, 3], wp.int64),
    ([True, False], wp.bool),
    ([], wp.float64),
    (np.arange(3.0), wp.float64),
    (np.arange(3, dtype=np.int32), wp.int32),
    (np.arange(3, dtype=np.uint16), wp.uint16),
    (np.zeros(2, dtype=np.float16), wp.float16),
])
def test_default_dtype(data, dtype):
    a = wp.array(data)
    assert a.dtype is dtype
    np.testing.assert_array_equal(a.numpy(), np.asarray(data))


def test_explicit_dtype_converts():
    a = wp.array([1.5, 2.5, -3.5], dtype=int)
    assert a.dtype is wp.int32
    assert a.numpy().tolist() == [1, 2, -3]
    b = wp.array(np.arange(4.0), dtype=wp.float32)
    assert b.dtype is wp.float32 and b.numpy().dtype == np.float32


def test_properties():
    a = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert a.shape == (3, 4)
    assert a.ndim == 2
    assert a.size == 12
    assert a.strides == (16, 4)
    assert a.device == "cpu" and str(a.device) == "cpu"
    assert a.dtype is wp.float32
    assert len(a) == 3
    assert a.is_contiguous
    assert a.capacity == 48
    assert repr(a) == "array(shape=(3, 4), dtype=float32, device=cpu)"


def test_shape_argument_reshapes():
    a = wp.array([1, 2, 3, 4], dtype=float, shape=(2, 2))
    assert a.shape == (2, 2)
    assert a.numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_copy_flag():
    n = np.arange(4, dtype=np.float32)
    shared = wp.array(n, copy=False)
    copied = wp.array(n)
    n[0] = 9.0
    assert shared.numpy()[0] == 9.0
    assert copied.numpy()[0] == 0.0
    # copy=False keeps a strided numpy view strided; the default copies into a contiguous array
    s = np.arange(10, dtype=np.float32)[::2]
    assert wp.array(s, copy=False).strides == (8,)
    assert wp.array(s).strides == (4,)


def test_array_from_array_copies():
    a = wp.array(np.arange(3, dtype=np.float32))
    b = wp.array(a)
    assert b.ptr != a.ptr
    assert b.numpy().tolist() == [0.0, 1.0, 2.0]


class _Interface:
    def __init__(self, arr):
        self._arr = arr
        self.__array_interface__ = arr.__array_interface__


class _ArrayMethod:
    def __init__(self, arr):
        self._arr = arr

    def __array__(self, dtype=None, copy=None):
        return self._arr


def test_from_array_protocols():
    n = np.arange(5, dtype=np.int32)
    a = wp.array(_Interface(n), copy=False)
    b = wp.array(_ArrayMethod(n), copy=False)
    n[1] = 42
    assert a.numpy()[1] == 42 and b.numpy()[1] == 42
    assert a.dtype is wp.int32


@pytest.mark.parametrize("data, exc, msg", [
    (3.0, RuntimeError, r"Data must be a sequence or array, got scalar 3\.0"),
    ([[1.0, 2.0], [3.0]], RuntimeError, r"Failed to convert input data to an array"),
    (np.zeros((2, 2, 2, 2, 2)), RuntimeError, r"the maximum number of dimensions is 4"),
    (np.zeros(3, dtype=np.complex64), RuntimeError, r"unsupported numpy dtype complex64"),
])
def test_bad_data(data, exc, msg):
    with pytest.raises(exc, match=msg):
        wp.array(data)


def test_bad_dtype_and_ndim():
    with pytest.raises(TypeError, match=r"Unsupported array dtype <class 'str'>"):
        wp.zeros(3, dtype=str)
    # Warp ignores ndim beside data or a shape (checked under warp-lang 1.19): the data decide
    assert wp.array2d(np.zeros(3, dtype=np.float32)).shape == (3,)
    assert wp.array(np.zeros((2, 3)), ndim=1, dtype=float).shape == (2, 3)
    assert wp.array([], ndim=2, dtype=float).shape == (0,)
    assert wp.zeros((2, 3), ndim=5).shape == (2, 3) and wp.empty(ndim=3).shape == (0,)
    with pytest.raises(ValueError, match=r"array ndim must be 1\.\.4, got 5"):
        wp.array(dtype=float, ndim=5)


def test_annotation():
    ann = wp.array(dtype=float, ndim=2)
    assert ann.is_annotation and ann.ndim == 2 and ann.dtype is wp.float32
    assert repr(ann) == "array(ndim=2, dtype=float32)"
    assert wp.array3d(dtype=wp.int32).ndim == 3


# -- numpy interop ------------------------------------------------------------------
def test_numpy_is_zero_copy():
    a = wp.zeros(4)
    v = a.numpy()
    v[2] = 5.0
    assert a.numpy()[2] == 5.0
    assert v.ctypes.data == a.ptr
    assert np.asarray(a).ctypes.data == a.ptr


def test_array_interface():
    a = wp.zeros((2, 3), dtype=wp.int16)
    ai = a.__array_interface__
    assert ai["shape"] == (2, 3)
    assert ai["typestr"] == "<i2"
    assert ai["data"] == (a.ptr, False)
    assert ai["version"] == 3
    assert np.array(a).tolist() == [[0, 0, 0], [0, 0, 0]]


def test_array_method_dtype_and_copy():
    a = wp.array([1.0, 2.0], dtype=wp.float32)
    assert np.asarray(a, dtype=np.float64).dtype == np.float64
    c = np.array(a, copy=True)
    c[0] = 7.0
    assert a.numpy()[0] == 1.0
    with pytest.raises(ValueError, match=r"cannot view a float32 array as float64 without a copy"):
        a.__array__(np.float64, copy=False)


# -- views --------------------------------------------------------------------------
def test_slice_is_a_view():
    a = wp.array(np.arange(12, dtype=np.float32))
    s = a[2:10]
    assert s.shape == (8,) and s.strides == (4,)
    s.numpy()[0] = -1.0
    assert a.numpy()[2] == -1.0
    assert s.ptr == a.ptr + 8


def test_stepped_and_negative_slices():
    a = wp.array(np.arange(10, dtype=np.float32))
    s = a[1:8:2]
    assert s.shape == (4,) and s.strides == (8,) and not s.is_contiguous
    assert s.numpy().tolist() == [1.0, 3.0, 5.0, 7.0]
    r = a[::-1]
    assert r.strides == (-4,)
    assert r.numpy().tolist() == list(range(9, -1, -1))


def test_integer_index_on_multi_dim_gives_views():
    b = wp.array(np.arange(24, dtype=np.int32).reshape(2, 3, 4))
    row = b[1]
    assert row.shape == (3, 4) and row.strides == (16, 4)
    assert row.numpy().tolist() == np.arange(12, 24).reshape(3, 4).tolist()
    col = b[1, 2]
    assert col.shape == (4,) and col.numpy().tolist() == [20, 21, 22, 23]
    last = b[-1, :, 1]
    assert last.shape == (3,) and last.strides == (16,) and last.numpy().tolist() == [13, 17, 21]
    row.numpy()[0, 0] = -5
    assert b.numpy()[1, 0, 0] == -5


def test_item_indexing_is_refused_as_in_warp():
    a = wp.zeros(4)
    with pytest.raises(RuntimeError, match=r"^Item indexing is not supported on wp.array objects$"):
        a[2]
    with pytest.raises(RuntimeError, match=r"^Item indexing is not supported on wp.array objects$"):
        wp.zeros((2, 2))[1, 1]


@pytest.mark.parametrize("key, exc, msg", [
    (Ellipsis, RuntimeError, r"Invalid index: Ellipsis"),
    (None, RuntimeError, r"Invalid index: None"),
    ((0, 0, 0), IndexError, r"too many indices for an array with 2 dimension\(s\): 3"),
    ([0, 1], RuntimeError, r"Invalid index: \[0, 1\]"),
    (5, IndexError, r"index 5 is out of bounds"),
])
def test_bad_index(key, exc, msg):
    with pytest.raises(exc, match=msg):
        wp.zeros((3, 4))[key]


def test_view_keeps_base_alive():
    s = wp.array(np.arange(100, dtype=np.float64))[10:20:3]
    gc.collect()
    big = [np.full(100, 7.0) for _ in range(50)]  # reuse freed memory, if the base had been freed
    assert s.numpy().tolist() == [10.0, 13.0, 16.0, 19.0]
    del big


def test_reshape_flatten_transpose_view():
    a = wp.array(np.arange(6, dtype=np.float32))
    m = a.reshape((2, 3))
    assert m.shape == (2, 3) and m.ptr == a.ptr
    assert m.flatten().shape == (6,)
    t = m.transpose()
    assert t.shape == (3, 2) and t.strides == (4, 12) and not t.is_contiguous
    assert t.numpy().tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    with pytest.raises(RuntimeError, match=r"^Reshaping non-contiguous arrays is unsupported\.$"):
        t.reshape(6)
    c = t.contiguous()
    assert c.is_contiguous and c.numpy().tolist() == t.numpy().tolist()
    assert m.contiguous() is m
    i = a.view(wp.int32)
    assert i.dtype is wp.int32 and i.numpy()[1] == np.float32(1.0).view(np.int32)
    with pytest.raises(TypeError, match=r"^cannot create an array view with dtype float64 from source dtype float32: "
                       r"source dtype has size 4 bytes, but target dtype has size 8 bytes$"):
        a.view(wp.float64)


# -- mutation -----------------------------------------------------------------------
def test_fill_zero_assign():
    a = wp.zeros(4, dtype=wp.int32)
    a.fill_(3)
    assert a.numpy().tolist() == [3, 3, 3, 3]
    a.fill_(wp.int32(-2))
    assert a.numpy().tolist() == [-2, -2, -2, -2]
    a[1:3].zero_()
    assert a.numpy().tolist() == [-2, 0, 0, -2]
    a.assign([1, 2, 3, 4])
    assert a.numpy().tolist() == [1, 2, 3, 4]
    with pytest.raises(ValueError, match=r"Failed to convert the value to the array data type"):
        a.fill_("x")
    with pytest.raises(RuntimeError, match=r"Cannot assign 5 values to an array of 4 elements"):
        a.assign(np.arange(5))


def test_fill_strided_view_only_touches_view():
    a = wp.zeros(6)
    a[::2].fill_(1.5)
    assert a.numpy().tolist() == [1.5, 0.0, 1.5, 0.0, 1.5, 0.0]


# -- constructors -------------------------------------------------------------------
def test_zeros_empty_ones_full():
    assert wp.zeros(3).dtype is wp.float32
    assert wp.empty((2, 2)).shape == (2, 2)
    assert wp.ones(3, dtype=wp.int64).numpy().tolist() == [1, 1, 1]
    assert wp.zeros((0,)).shape == (0,)
    f = wp.full((2, 2), 5)
    assert f.dtype is wp.int32 and f.numpy().tolist() == [[5, 5], [5, 5]]
    assert wp.full(3, 2.5).dtype is wp.float32
    assert wp.full(3, True).dtype is wp.bool
    assert wp.full(2, 1.5, dtype=wp.float64).numpy().tolist() == [1.5, 1.5]


@pytest.mark.parametrize("shape, exc, msg", [
    (-1, ValueError, r"Array shapes must be non-negative, got -1 in dimension 0"),
    ((2, -3), ValueError, r"got -3 in dimension 1"),
    (2.0, TypeError, r"Invalid array shape 2\.0"),
    ((2, 1.5), TypeError, r"dimension 1 is not an int"),
])
def test_bad_shapes(shape, exc, msg):
    with pytest.raises(exc, match=msg):
        wp.zeros(shape)


def test_like_constructors():
    src = wp.array(np.arange(10, dtype=np.float64))[::2]
    for make, expect in [(wp.zeros_like, 0.0), (wp.empty_like, 0.0), (wp.ones_like, 1.0)]:
        a = make(src)
        assert a.shape == (5,) and a.dtype is wp.float64 and a.is_contiguous
        assert a.numpy().tolist() == [expect] * 5
    f = wp.full_like(src, 2)
    assert f.dtype is wp.float64 and f.numpy().tolist() == [2.0] * 5


def test_clone_is_contiguous_copy():
    src = wp.array(np.arange(10, dtype=np.float32))[::2]
    c = wp.clone(src)
    assert c.strides == (4,) and c.ptr != src.ptr
    assert c.numpy().tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    c.numpy()[0] = 1.0
    assert src.numpy()[0] == 0.0


def test_copy():
    src = wp.array(np.arange(10, dtype=np.float32))
    dst = wp.zeros(10)
    wp.copy(dst, src, dest_offset=2, src_offset=1, count=3)
    assert dst.numpy().tolist() == [0, 0, 1, 2, 3, 0, 0, 0, 0, 0]
    whole = wp.zeros(5)
    wp.copy(whole, src[::2])  # same shape: strided copy
    assert whole.numpy().tolist() == [0, 2, 4, 6, 8]
    with pytest.raises(RuntimeError, match=r"^Trying to copy source buffer with size \(12\) to offset \(36\) is "
                                           r"larger than destination size \(40\)$"):
        wp.copy(dst, src, dest_offset=9, count=3)
    with pytest.raises(RuntimeError, match=r"^Incompatible array data types: destination dtype=float32, source "
                                           r"dtype=float64$"):
        wp.copy(dst, wp.zeros(10, dtype=wp.float64))
    with pytest.raises(RuntimeError, match=r"^Copy source and destination must be arrays$"):
        wp.copy(dst, np.zeros(10, dtype=np.float32))


def test_from_numpy():
    n = np.arange(6, dtype=np.float32)
    a = wp.from_numpy(n, shape=(2, 3))
    assert a.shape == (2, 3) and a.dtype is wp.float32
    assert wp.from_numpy(n, dtype=wp.float64).dtype is wp.float64


def test_requires_grad_allocates_grad():
    a = wp.zeros(3, requires_grad=True)
    assert a.requires_grad
    assert a.grad.shape == (3,) and a.grad.numpy().tolist() == [0.0, 0.0, 0.0]
    v = a[1:]
    assert v.grad.shape == (2,) and v.grad.ptr == a.grad.ptr + 4


def test_allocations_are_64_byte_aligned():
    for a in (wp.zeros(3), wp.ones((2, 3), dtype=wp.int8), wp.array([1.0, 2.0]), wp.clone(wp.zeros(5)[::2]),
              wp.array(np.arange(7, dtype=np.int16)), wp.zeros(4, dtype=wp.vec3)):
        assert a.ptr % 64 == 0  # (empty arrays own no memory: numpy may point them anywhere)
        assert a.is_contiguous


def test_composite_arrays_from_numpy_follow_warps_shape_rules():
    # trailing dimensions equal to the element's shape are the elements
    assert wp.array(np.zeros((4, 3, 3)), dtype=wp.mat33).shape == (4,)
    # a last dimension of the element's length, or a multiple of it, is split into elements
    assert wp.array(np.zeros((4, 9)), dtype=wp.mat33).shape == (4,)
    v = wp.array(np.arange(24, dtype=np.float32).reshape(2, 12), dtype=wp.vec3)
    assert v.shape == (2, 4)
    np.testing.assert_array_equal(v.numpy()[1, 2], [18, 19, 20])
    # one element is an array of one; no data is an array of none
    assert wp.from_numpy(np.array([1, 2, 3], dtype=np.float32), dtype=wp.vec3).shape == (1,)
    assert wp.array(np.eye(3), dtype=wp.mat33).shape == (1,)
    assert wp.array([], dtype=wp.vec2).shape == (0,)
    with pytest.raises(RuntimeError, match=r"The shape of the input array \(2, 5\) is not compatible with the "
                                           r"requested data type vec3f"):
        wp.array(np.zeros((2, 5)), dtype=wp.vec3)


def test_zeros_takes_warps_older_spellings():
    assert wp.zeros(n=3).shape == (3,) and wp.empty(n=2, dtype=wp.vec3).shape == (2,)
    assert wp.zeros().shape == (0,) and wp.ones(n=2).numpy().tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="wp.zeros\\(\\) got unexpected keyword arguments: bogus"):
        wp.zeros(3, bogus=1)
    with pytest.raises(ValueError, match="^retain_grad=True requires requires_grad=True$"):
        wp.zeros(3, retain_grad=True)


def test_array_over_a_null_pointer_is_refused_unless_empty():
    # Warp 1.19 builds wp.array(ptr=0, shape=(123,)) and lets kernels and .numpy() read address 0; mlwarp refuses
    # the non-empty array where it is made (docs/robustness.md: nothing a user writes may crash the process)
    with pytest.raises(ValueError, match=r"^Cannot wrap a null pointer in a non-empty array$"):
        wp.array(ptr=0, shape=(123,), dtype=float, device="cpu")
    empty = wp.array(ptr=0, shape=(0,), dtype=float, device="cpu")
    assert empty.shape == (0,) and empty.size == 0
