"""Arrays through kernels: views with any strides (the launch descriptor carries byte strides), numpy
arrays and array-protocol objects passed straight to wp.launch."""

import numpy as np

import mlwarp as wp


@wp.kernel
def scale_add(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def copy2d(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float)):
    i, j = wp.tid()
    dst[i, j] = src[i, j] * 10.0 + float(i)


@wp.kernel
def sum3d(a: wp.array3d(dtype=wp.int32), out: wp.array(dtype=wp.int32)):
    i, j, k = wp.tid()
    out[0] += a[i, j, k] * (i + 1)


def test_strided_view_in_and_out():
    base_x = np.arange(20, dtype=np.float32)
    base_y = np.ones(20, dtype=np.float32)
    x = wp.array(base_x)
    y = wp.array(base_y)
    wp.launch(scale_add, 5, inputs=[x[1:20:4], y[::3], 2.0])
    expect = base_y.copy()
    expect[::3][:5] += 2.0 * base_x[1:20:4]
    np.testing.assert_array_equal(y.numpy(), expect)  # elements outside the view are untouched


def test_negative_stride_view():
    x = wp.array(np.arange(6, dtype=np.float32))
    y = wp.zeros(6)
    wp.launch(scale_add, 6, inputs=[x[::-1], y, 1.0])
    assert y.numpy().tolist() == [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]


def test_transposed_2d_view():
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    src = wp.array(m).transpose()  # (4, 3), strides (4, 16)
    dst = wp.zeros((4, 3))
    wp.launch(copy2d, (4, 3), inputs=[src, dst])
    np.testing.assert_array_equal(dst.numpy(), m.T * 10.0 + np.arange(4, dtype=np.float32)[:, None])


def test_transposed_numpy_output():
    out = np.zeros((3, 4), dtype=np.float32)
    src = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3))
    wp.launch(copy2d, (4, 3), inputs=[src, out.T])  # write through a transposed numpy view
    np.testing.assert_array_equal(out.T, np.arange(12, dtype=np.float32).reshape(4, 3) * 10.0
                                  + np.arange(4, dtype=np.float32)[:, None])


def test_3d_view_of_row():
    a = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(2, 3, 4, 5)
    w = wp.array(a)
    out = wp.zeros(1, dtype=wp.int32)
    view = w[1, :, 1:4, ::2]  # (3, 3, 3) with strides that are not C order multiples
    assert view.shape == (3, 3, 3)
    wp.launch(sum3d, view.shape, inputs=[view, out])
    v = a[1, :, 1:4, ::2]
    assert out.numpy()[0] == int(sum(v[i].sum() * (i + 1) for i in range(3)))


def test_numpy_arrays_straight_to_launch():
    x = np.arange(8, dtype=np.float32)
    y = np.ones(8, dtype=np.float32)
    wp.launch(scale_add, 8, inputs=[x, y, 3.0], device="cpu")
    np.testing.assert_array_equal(y, 3.0 * np.arange(8, dtype=np.float32) + 1.0)


class _WithInterface:
    def __init__(self, arr):
        self.keep = arr
        self.__array_interface__ = arr.__array_interface__


class _WithArrayMethod:
    def __init__(self, arr):
        self.keep = arr

    def __array__(self, dtype=None, copy=None):
        return self.keep


def test_array_protocol_objects_straight_to_launch():
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, dtype=np.float32)
    wp.launch(scale_add, 4, inputs=[_WithArrayMethod(x), _WithInterface(y), 2.0])
    assert y.tolist() == [0.0, 2.0, 4.0, 6.0]


def test_wp_array_from_list_and_numpy_mixed():
    x = wp.array([1.0, 2.0, 3.0], dtype=float)
    y = np.zeros(3, dtype=np.float32)
    wp.launch(scale_add, 3, inputs=[x, y, 0.5])
    assert y.tolist() == [0.5, 1.0, 1.5]


def test_zero_size_array():
    x = wp.zeros(0)
    wp.launch(scale_add, 0, inputs=[x, x, 1.0])
    assert x.shape == (0,)


def test_init_get_device_synchronize():
    assert wp.init() is None  # optional: everything initialises lazily
    d = wp.get_device()
    assert d.is_cpu and str(d) == "cpu" and d == "cpu"
    assert wp.get_device("cpu") is d
    assert wp.get_preferred_device() is d
    x = wp.zeros(3)
    wp.launch(scale_add, 3, inputs=[wp.ones(3), x, 2.0])
    wp.synchronize()
    wp.synchronize_device("cpu")
    assert x.numpy().tolist() == [2.0, 2.0, 2.0]
