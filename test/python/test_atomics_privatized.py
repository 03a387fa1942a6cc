"""warp-cpu-privatize-atomics: atomic adds to one address for the whole launch sum per chunk and flush once.
The results must be those of the atomics, on one thread or several."""

import numpy as np
import pytest

import mlwarp as wp

N = 200_003  # several chunks on every thread count


def _with_threads(threads, fn):
    old = wp.config.cpu_threads
    wp.config.cpu_threads = threads
    try:
        return fn()
    finally:
        wp.config.cpu_threads = old


@wp.kernel
def float_sum(x: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    wp.atomic_add(loss, 0, v * v + wp.sin(v))


@wp.kernel
def count_positive(x: wp.array(dtype=float), counts: wp.array(dtype=int), slot: int):
    i = wp.tid()
    if x[i] > 0.0:
        wp.atomic_add(counts, slot, 1)
    else:
        counts[2] += 1  # the += of an array element is an atomic add too


@wp.kernel
def ticket(counter: wp.array(dtype=int), order: wp.array(dtype=int)):
    i = wp.tid()
    order[i] = wp.atomic_add(counter, 0, 1)  # the old value is used: stays a real atomic


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_float_sum_matches_float64(threads):
    xv = np.random.default_rng(0).uniform(-1, 1, N).astype(np.float32)
    x, loss = wp.array(xv), wp.zeros(1, dtype=float)
    _with_threads(threads, lambda: wp.launch(float_sum, N, inputs=[x, loss]))
    ref = np.sum(xv.astype(np.float64) ** 2 + np.sin(xv.astype(np.float64)))
    assert abs(float(loss.numpy()[0]) - ref) <= 1e-6 * abs(ref) + 1e-3


@pytest.mark.parametrize("threads", [1, 2])
def test_integer_counts_are_exact(threads):
    xv = np.random.default_rng(1).uniform(-1, 1, N).astype(np.float32)
    counts = wp.zeros(3, dtype=int)
    _with_threads(threads, lambda: wp.launch(count_positive, N, inputs=[wp.array(xv), counts, 1]))
    positive = int(np.sum(xv > 0))
    np.testing.assert_array_equal(counts.numpy(), [0, positive, N - positive])


@pytest.mark.parametrize("threads", [1, 2])
def test_negative_zero_untouched_when_no_thread_adds(threads):
    loss = wp.array(np.array([-0.0], np.float32))

    @wp.kernel
    def add_if(x: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        if x[i] > 10.0:
            wp.atomic_add(out, 0, x[i])

    x = wp.zeros(N, dtype=float)
    _with_threads(threads, lambda: wp.launch(add_if, N, inputs=[x, loss]))
    assert np.signbit(loss.numpy()[0]) and loss.numpy()[0] == 0.0


@pytest.mark.parametrize("threads", [1, 2])
def test_used_old_value_stays_atomic(threads):
    counter, order = wp.zeros(1, dtype=int), wp.zeros(N, dtype=int)
    _with_threads(threads, lambda: wp.launch(ticket, N, inputs=[counter, order]))
    assert counter.numpy()[0] == N
    np.testing.assert_array_equal(np.sort(order.numpy()), np.arange(N))


def test_adjoint_of_a_broadcast_read():
    # y[i] = x[0] * w[i]: every thread's adjoint adds into adj_x[0]
    @wp.kernel
    def scale(x: wp.array(dtype=float), w: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[0] * w[i]

    wv = np.random.default_rng(2).uniform(-1, 1, N).astype(np.float32)
    x = wp.array(np.array([1.5], np.float32), requires_grad=True)
    w = wp.array(wv, requires_grad=True)
    y = wp.zeros(N, dtype=float, requires_grad=True)
    y.grad.fill_(1.0)
    wp.launch(scale, N, inputs=[x, w], outputs=[y], adj_inputs=[x.grad, w.grad], adj_outputs=[y.grad], adjoint=True)
    assert abs(float(x.grad.numpy()[0]) - np.sum(wv.astype(np.float64))) <= 1e-3
    np.testing.assert_allclose(w.grad.numpy(), np.full(N, 1.5, np.float32))


def test_debug_mode_out_of_bounds_invariant_index_raises():
    @wp.kernel(module="unique", module_options={"mode": "debug"})
    def add_past_end(out: wp.array(dtype=float)):
        wp.atomic_add(out, 5, 1.0)

    backing = wp.zeros(8, dtype=float)
    out = backing[:2]
    with pytest.raises(wp.KernelBoundsError, match=r"index \[5\] is out of bounds .* argument 'out' of shape \(2,\)"):
        _with_threads(2, lambda: wp.launch(add_past_end, N, inputs=[out]))
    np.testing.assert_array_equal(backing.numpy(), np.zeros(8, np.float32))  # nothing written past the view


def test_a_kernel_reading_back_its_sum_is_not_privatized():
    # on one thread (as Warp's CPU runs every launch) each thread sees the earlier threads' adds
    @wp.kernel
    def count_and_read(counter: wp.array(dtype=int), seen: wp.array(dtype=int)):
        i = wp.tid()
        wp.atomic_add(counter, 0, 1)
        seen[i] = counter[0]

    counter, seen = wp.zeros(1, dtype=int), wp.zeros(100, dtype=int)
    _with_threads(1, lambda: wp.launch(count_and_read, 100, inputs=[counter, seen]))
    np.testing.assert_array_equal(seen.numpy(), np.arange(1, 101))



@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("other", ["min", "max", "exch"])
def test_an_add_next_to_another_atomic_on_its_address_is_not_privatized(threads, other):
    # Each thread adds 1.0 to out[0], then applies min/max/exch with 0.5. In every interleaving the last op
    # is some thread's second one, and out[0] >= 1 after any add, so the result is exact: min and exch
    # leave 0.5, max leaves the sum N (its maxes never change a value >= 1). A sum moved to the end of the
    # chunk would add N after the second ops: N + 0.5.
    op = {"min": wp.atomic_min, "max": wp.atomic_max, "exch": wp.atomic_exch}[other]

    @wp.kernel
    def add_then(out: wp.array(dtype=float)):
        wp.atomic_add(out, 0, 1.0)
        op(out, 0, 0.5)

    for n in (4, N):
        out = wp.zeros(1, dtype=float)
        _with_threads(threads, lambda: wp.launch(add_then, n, inputs=[out]))
        assert float(out.numpy()[0]) == (float(n) if other == "max" else 0.5), n
