"""wp.copy's arguments and windows as Warp 1.19: integer, non-negative offsets and count (count 0: all of src),
flat windows of contiguous arrays (byte-size checks and messages), windows of 1-D strided arrays, whole
copies of same-shaped strided arrays, element bytes copied (a reinterpreting copy keeps the bits), and the
recorded adjoint of a windowed copy (retain_grad keeps the destination's gradient). Hand values and numpy."""

import numpy as np
import pytest

import mlwarp as wp


@pytest.mark.parametrize("kwargs, message", [
    (dict(src_offset=-1), "Source offset must be non-negative, got -1"),
    (dict(dest_offset=-1), "Destination offset must be non-negative, got -1"),
    (dict(count=-1), "Copy count must be non-negative, got -1"),
    (dict(src_offset=1.5), "Copy src_offset, dest_offset, and count must be integers"),
    (dict(count=2.0), "Copy src_offset, dest_offset, and count must be integers"),
    (dict(count=5), r"Trying to copy source buffer with size \(20\) from offset \(0\) is larger than source size "
                    r"\(16\)"),
    (dict(dest_offset=2, count=3), r"Trying to copy source buffer with size \(12\) to offset \(8\) is larger than "
                                   r"destination size \(16\)"),
])
def test_argument_errors(kwargs, message):
    src = wp.array([1, 2, 3, 4], dtype=wp.int32)
    with pytest.raises(RuntimeError, match=f"^{message}$"):
        wp.copy(wp.zeros_like(src), src, **kwargs)


def test_type_and_shape_errors():
    with pytest.raises(RuntimeError, match=r"^Incompatible array data types: destination dtype=float64, source "
                                           r"dtype=float32$"):
        wp.copy(wp.zeros(4, dtype=wp.float64), wp.zeros(4, dtype=wp.float32))
    src = wp.array(np.arange(18, dtype=np.float32).reshape((6, 3)))[::3, :]
    dest = wp.zeros((6, 2))[::2, :]
    with pytest.raises(RuntimeError, match=r"^Incompatible array shapes: destination shape=\(3, 2\), source "
                                           r"shape=\(2, 3\)$"):
        wp.copy(dest, src)
    nd = wp.array(np.arange(100, dtype=np.float32)).reshape((10, 10))[1::2, 1::2]
    with pytest.raises(RuntimeError, match=r"^dest_offset, src_offset, and count are only supported for 1-D "
                                           r"non-contiguous arrays$"):
        wp.copy(wp.zeros_like(nd), nd, count=2)
    base = wp.array([10, 11, 12, 13, 14, 15], dtype=wp.int32)
    picked = base[wp.array([0, 2, 4], dtype=wp.int32)]
    with pytest.raises(RuntimeError, match=r"^dest_offset, src_offset, and count are not supported when copying "
                                           r"to/from non-contiguous indexed or Fabric arrays$"):
        wp.copy(wp.zeros(3, dtype=wp.int32), picked, src_offset=1, count=1)
    with pytest.raises(RuntimeError, match=r"^Trying to copy a range of 5 element\(s\) from source offset \(0\) "
                                           r"exceeds the source size \(2\)$"):
        wp.copy(wp.zeros(2, dtype=wp.int32), wp.array([1, 2, 3, 4], dtype=wp.int32)[::2], count=5)
    with pytest.raises(RuntimeError, match=r"^Copy source and destination must be arrays$"):
        wp.copy(wp.zeros(2), np.zeros(2))


@pytest.mark.parametrize("src_strided", [False, True])
@pytest.mark.parametrize("dst_strided", [False, True])
def test_windows_on_strided_and_contiguous_arrays(src_strided, dst_strided):
    src = wp.array([1, 5, 2, 6, 3, 7, 4, 8], dtype=wp.int32)[::2] if src_strided else \
        wp.array([1, 2, 3, 4], dtype=wp.int32)
    dst = wp.array([9, 0, 9, 0, 9, 0, 9, 0], dtype=wp.int32)[::2] if dst_strided else \
        wp.array([9, 9, 9, 9], dtype=wp.int32)
    wp.copy(dst, src, src_offset=1, dest_offset=1, count=2)
    assert dst.numpy().tolist() == [9, 2, 3, 9]


@pytest.mark.parametrize("src_offset, dest_offset, count", [(0, 0, 10), (2, 0, 5), (0, 3, 4), (1, 4, 3), (5, 5, 1)])
def test_strided_windows_match_numpy(src_offset, dest_offset, count):
    np_src, np_dst = np.arange(1, 21, dtype=np.float32), np.full(20, -1.0, dtype=np.float32)
    dst = wp.array(np_dst)[::2]
    wp.copy(dst, wp.array(np_src)[::2], src_offset=src_offset, dest_offset=dest_offset, count=count)
    ref = np_dst[::2].copy()
    ref[dest_offset:dest_offset + count] = np_src[::2][src_offset:src_offset + count]
    assert dst.numpy().tolist() == ref.tolist()


def test_count_of_the_smaller_array_and_bytes():
    dst = wp.array(np.array([9, 0, 9, 0, 9, 0, 9, 0], dtype=np.float32))[::2]
    wp.copy(dst, wp.array(np.array([7, 0, 8, 0], dtype=np.float32))[::2])  # count 0: all of src (2)
    assert dst.numpy().tolist() == [7.0, 8.0, 9.0, 9.0]
    bits = wp.zeros(2, dtype=wp.int32)
    wp.copy(bits, wp.array([1.0, 2.0], dtype=float))  # the same element size: the bytes, as Warp's memcpy
    assert bits.numpy().tolist() == np.array([1.0, 2.0], dtype=np.float32).view(np.int32).tolist()


def test_adjoint_of_a_strided_window():
    src = wp.array(np.arange(12, dtype=np.float32), requires_grad=True)[::2]
    dst = wp.zeros(12, requires_grad=True)[::2]
    with wp.Tape() as tape:
        wp.copy(dst, src, src_offset=1, dest_offset=3, count=2)
    seed = np.arange(10, 16, dtype=np.float32)
    tape.backward(grads={dst: wp.array(seed)})
    expected = np.zeros(6, dtype=np.float32)
    expected[1:3] = seed[3:5]
    assert src.grad.numpy().tolist() == expected.tolist()
    assert dst.grad.numpy()[3:5].tolist() == [0.0, 0.0]  # the copied window's gradient is consumed


def test_retain_grad_keeps_a_copied_windows_gradient():
    x = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
    y = wp.zeros(2, requires_grad=True, retain_grad=True)
    with wp.Tape() as tape:
        wp.copy(y, x)
    tape.backward(grads={y: wp.ones(2)})
    assert x.grad.numpy().tolist() == [1.0, 1.0] and y.grad.numpy().tolist() == [1.0, 1.0]
