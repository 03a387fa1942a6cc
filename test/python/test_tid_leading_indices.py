"""wp.tid() gives a thread's leading launch indices (Warp's documented rule): `i = wp.tid()` in a 2-D launch is
the row, and the threads that differ only past the indices a kernel reads share them. Counts are hand-computed
with numpy; a launch that gave every thread its linear index would write past `out` (a heap corruption that
once killed the process)."""

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def count_first(out: wp.array(dtype=int)):
    i = wp.tid()
    wp.atomic_add(out, i, 1)


@wp.kernel
def count_pairs(out: wp.array2d(dtype=int)):
    i, j = wp.tid()
    wp.atomic_add(out, i, j, 1)


@wp.kernel
def mixed(rows: wp.array(dtype=int), pairs: wp.array2d(dtype=int)):
    i = wp.tid()
    a, b = wp.tid()
    wp.atomic_add(rows, i, 1)
    wp.atomic_add(pairs, a, b, 1)


@wp.kernel
def square_sum(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(y, i, x[i] * x[i])


@pytest.mark.parametrize("dim", [(4,), (4, 3), (4, 3, 2), (4, 1, 5, 2)])
def test_one_index_is_the_first(dim):
    out = wp.zeros(4, dtype=int)
    wp.launch(count_first, dim, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), np.full(4, int(np.prod(dim[1:]))))


@pytest.mark.parametrize("dim", [(3, 5), (3, 5, 2), (3, 5, 2, 7)])
def test_two_indices_are_the_first_two(dim):
    out = wp.zeros((3, 5), dtype=int)
    wp.launch(count_pairs, dim, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), np.full((3, 5), int(np.prod(dim[2:]))))


@pytest.mark.parametrize("dim", [(3, 5), (3, 5, 4)])
def test_one_and_two_indices_in_one_kernel(dim):
    rows, pairs = wp.zeros(3, dtype=int), wp.zeros((3, 5), dtype=int)
    wp.launch(mixed, dim, inputs=[rows, pairs])
    np.testing.assert_array_equal(rows.numpy(), np.full(3, 5 * int(np.prod(dim[2:]))))
    np.testing.assert_array_equal(pairs.numpy(), np.full((3, 5), int(np.prod(dim[2:]))))


def test_recorded_launch_and_set_dim():
    out = wp.zeros(4, dtype=int)
    cmd = wp.launch(count_first, (4, 3), inputs=[out], record_cmd=True)
    assert tuple(cmd.dim[:2]) == (4, 3)
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), np.full(4, 3))
    cmd.set_dim((4, 2, 5))
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), np.full(4, 3 + 10))


def test_gradient_counts_every_thread_that_shares_an_index():
    x0 = np.linspace(0.5, 2.0, 6).astype(np.float32)
    x = wp.array(x0, dtype=float, requires_grad=True)
    y = wp.zeros(6, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square_sum, (6, 3), inputs=[x, y])
    tape.backward(grads={y: wp.array(np.ones(6, np.float32))})
    np.testing.assert_allclose(y.numpy(), 3 * x0 * x0, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 3 * 2 * x0, rtol=1e-6)  # d/dx of 3 x^2
