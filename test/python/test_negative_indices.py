"""A negative array index in a kernel counts from the end of its dimension, as Warp 1.19's array indexing
(`index()` in Warp's native/array.h adds the dimension's length to an index < 0) and as numpy's: `a[-1]` is the
last element. References: numpy indexing with the same indices."""

import numpy as np

import mlwarp as wp


@wp.kernel
def _read_write(a: wp.array(dtype=float), b: wp.array2d(dtype=float), c: wp.array3d(dtype=float),
                out: wp.array(dtype=float), i: int, j: int):
    out[0] = a[i]
    out[1] = b[i, j]
    out[2] = c[i, j, -1]
    out[3] = a[-1]  # a constant index
    row = b[i]  # a view: its own length is what its negative index counts from
    out[4] = row[j]
    a[i - 1] = 100.0
    wp.atomic_add(out, i, 5.0)


def test_loads_stores_views_and_atomics_count_from_the_end():
    a_np = np.arange(5, dtype=np.float32)
    b_np = np.arange(12, dtype=np.float32).reshape(3, 4)
    c_np = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    a, b, c = wp.array(a_np), wp.array(b_np), wp.array(c_np)
    out = wp.zeros(8, dtype=float)
    wp.launch(_read_write, 1, inputs=[a, b, c, out, -1, -2])
    expected = np.zeros(8, dtype=np.float32)
    expected[:5] = [a_np[-1], b_np[-1, -2], c_np[-1, -2, -1], a_np[-1], b_np[-1][-2]]
    expected[-1] += 5.0
    np.testing.assert_array_equal(out.numpy(), expected)
    a_np[-2] = 100.0
    np.testing.assert_array_equal(a.numpy(), a_np)


@wp.kernel
def _reverse(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[-1 - i]


def test_strided_and_thread_indexed_arrays():
    x_np = np.arange(10, dtype=np.float32) ** 2
    x = wp.array(x_np)[::2]  # a strided view of 5 elements
    y = wp.zeros(5, dtype=float)
    wp.launch(_reverse, 5, inputs=[x, y])
    np.testing.assert_array_equal(y.numpy(), x_np[::2][::-1])


def test_gradient_reaches_the_element_counted_from_the_end():
    x = wp.array(np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32), requires_grad=True)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_reverse, 4, inputs=[x, y])
    tape.backward(grads={y: wp.array(np.array([1.0, 10.0, 100.0, 1000.0], dtype=np.float32))})
    # y[i] = x[3 - i]: dL/dx[k] = dL/dy[3 - k]
    np.testing.assert_array_equal(x.grad.numpy(), [1000.0, 100.0, 10.0, 1.0])


@wp.kernel
def _indexed_last(a: wp.indexedarray(dtype=float), out: wp.array(dtype=float)):
    out[0] = a[-1]
    out[1] = a[-3]


def test_indexed_array_counts_from_the_end_of_its_index_list():
    data_np = np.arange(6, dtype=np.float32) * 10.0
    indices = [5, 1, 3]
    a = wp.indexedarray(wp.array(data_np), [wp.array(indices, dtype=wp.int32)])
    out = wp.zeros(2, dtype=float)
    wp.launch(_indexed_last, 1, inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), [data_np[indices[-1]], data_np[indices[-3]]])
