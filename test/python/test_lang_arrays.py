"""Thread indices, multi-dimensional array access and `a[i] += v` atomics in kernels, against numpy."""

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def tid_1d(out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = i * 2


@wp.kernel
def tid_2d(out: wp.array(dtype=int, ndim=2)):
    i, j = wp.tid()
    out[i, j] = i * 10 + j


@wp.kernel
def tid_3d(out: wp.array(dtype=int, ndim=3)):
    i, j, k = wp.tid()
    out[i, j, k] = i * 100 + j * 10 + k


@wp.kernel
def tid_4d(out: wp.array(dtype=int, ndim=4)):
    i, j, k, l = wp.tid()
    out[i, j, k, l] = i * 1000 + j * 100 + k * 10 + l


@pytest.mark.parametrize("kernel,shape", [(tid_1d, (7,)), (tid_2d, (3, 5)), (tid_3d, (2, 3, 4)), (tid_4d, (2, 3, 2, 5))])
def test_tid_unpacks_one_index_per_launch_dimension(kernel, shape):
    out = wp.zeros(shape, dtype=int)
    wp.launch(kernel, dim=shape, inputs=[out])
    idx = np.indices(shape)
    weights = {1: [2], 2: [10, 1], 3: [100, 10, 1], 4: [1000, 100, 10, 1]}[len(shape)]
    np.testing.assert_array_equal(out.numpy(), sum(w * i for w, i in zip(weights, idx)))


@wp.kernel
def tid_linear(out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = i


def test_single_tid_on_a_multi_dim_launch_is_the_leading_index():
    # Warp's documented rule (warp 1.19 gives the same): fewer indices than the launch has are its leading ones;
    # the 12 threads (i, *, *) all write out[i] = i
    out = wp.full(24, -1, dtype=int)
    wp.launch(tid_linear, dim=(2, 3, 4), inputs=[out])
    np.testing.assert_array_equal(out.numpy(), [0, 1] + [-1] * 22)


@wp.kernel
def transpose_scale(a: wp.array(dtype=float, ndim=2), s: float, out: wp.array(dtype=float, ndim=2)):
    i, j = wp.tid()
    out[j, i] = a[i, j] * s


def test_2d_read_and_write():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = wp.zeros((4, 3))
    wp.launch(transpose_scale, dim=(3, 4), inputs=[wp.array(a), 0.5, out])
    np.testing.assert_array_equal(out.numpy(), a.T * np.float32(0.5))


@wp.kernel
def sum_last_axes(a: wp.array(dtype=wp.float64, ndim=4), out: wp.array(dtype=wp.float64, ndim=2)):
    i, j = wp.tid()
    s = wp.float64(0.0)
    for k in range(a.shape[2]):
        for l in range(a.shape[3]):
            s = s + a[i, j, k, l]
    out[i, j] = s


def test_4d_reads_and_shape():
    a = np.random.default_rng(1).standard_normal((2, 3, 4, 5))
    out = wp.zeros((2, 3), dtype=wp.float64)
    wp.launch(sum_last_axes, dim=(2, 3), inputs=[wp.array(a, dtype=wp.float64), out])
    expect = np.zeros((2, 3))
    for k in range(4):
        for l in range(5):
            expect += a[:, :, k, l]  # the kernel's summation order
    np.testing.assert_array_equal(out.numpy(), expect)


@wp.kernel
def copy_3d(a: wp.array3d(dtype=wp.int64), out: wp.array3d(dtype=wp.int64)):
    i, j, k = wp.tid()
    out[i, j, k] = a[i, j, k] + a[i, j, k]


def test_3d_strided_view():
    base = np.arange(4 * 6 * 8, dtype=np.int64).reshape(4, 6, 8)
    view = wp.array(base)[1:3]  # a view: strides of the parent
    out = wp.zeros((2, 6, 8), dtype=wp.int64)
    wp.launch(copy_3d, dim=(2, 6, 8), inputs=[view, out])
    np.testing.assert_array_equal(out.numpy(), 2 * base[1:3])


# -- atomics through `+=` / `-=` on array elements ------------------------------------------------
@wp.kernel
def histogram(values: wp.array(dtype=int), bins: wp.array(dtype=int)):
    i = wp.tid()
    bins[values[i] % bins.shape[0]] += 1


def test_augmented_add_on_array_is_atomic_for_ints():
    n = 200_000  # large enough to run on several threads
    values = np.random.default_rng(2).integers(0, 1 << 20, n).astype(np.int32)
    bins = wp.zeros(7, dtype=int)
    wp.launch(histogram, dim=n, inputs=[wp.array(values), bins])
    np.testing.assert_array_equal(bins.numpy(), np.bincount(values % 7, minlength=7))


@wp.kernel
def all_threads_one_element(total: wp.array(dtype=float), count: wp.array(dtype=wp.int64),
                            down: wp.array(dtype=int)):
    i = wp.tid()
    total[0] += 1.0
    count[0] += wp.int64(i)
    down[0] -= 3


def test_many_threads_hitting_one_element_sum_exactly():
    n = 100_000
    total, count, down = wp.zeros(1), wp.zeros(1, dtype=wp.int64), wp.full(1, 7, dtype=int)
    wp.launch(all_threads_one_element, dim=n, inputs=[total, count, down])
    assert total.numpy()[0] == n  # every partial sum of ones is exact in float32 below 2**24
    assert count.numpy()[0] == n * (n - 1) // 2
    assert down.numpy()[0] == 7 - 3 * n


@wp.kernel
def scale_in_place(a: wp.array(dtype=float, ndim=2)):
    i, j = wp.tid()
    a[i, j] *= 2.0
    a[i, j] -= 1.0


def test_other_augmented_assignments_on_arrays():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    wa = wp.array(a)
    wp.launch(scale_in_place, dim=(2, 3), inputs=[wa])
    np.testing.assert_array_equal(wa.numpy(), a * 2 - 1)


@wp.kernel
def index_with_int64(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    j = wp.int64(i)
    out[j] = a[a.shape[0] - 1 - i]


def test_array_indices_of_other_int_types():
    a = np.arange(5, dtype=np.float32)
    out = wp.zeros(5)
    wp.launch(index_with_int64, dim=5, inputs=[wp.array(a), out])
    np.testing.assert_array_equal(out.numpy(), a[::-1])
