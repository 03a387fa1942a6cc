"""Chunk orders for launches with private copies (runtime/cpu.py `_Private`, the SUMS_ONLY flag of
warp-cpu-privatize-scatter's table): a kernel that writes nothing but its sums is first run a chunk at a time
against scratch copies, and each range of a parallel launch then takes the chunks whose sums land in its own part
of the array (the part a launch cut into equal ranges gives the same thread), each range's chunks in increasing
order. References: numpy's float32 sums in the order the partition gives (each range's threads in thread order,
range 0 into the array, range 1 into a copy, then array + copy), numpy's float64 sums within rounding."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.config import config
from mlwarp.runtime import cpu

N = 4096  # particles (elements summed into)


@wp.kernel
def scatter_pairs(a: wp.array(dtype=int), b: wp.array(dtype=int), w: wp.array(dtype=float),
                  f: wp.array(dtype=float)):
    s = wp.tid()
    wp.atomic_add(f, a[s], w[s])
    wp.atomic_sub(f, b[s], w[s])


@wp.kernel
def scatter_and_store(a: wp.array(dtype=int), w: wp.array(dtype=float), f: wp.array(dtype=float),
                      seen: wp.array(dtype=int)):
    s = wp.tid()
    wp.atomic_add(f, a[s], w[s])
    seen[s] = seen[s] + 1  # (a store: the copy is not SUMS_ONLY, so no chunk is run twice)


@pytest.fixture
def two_threads(monkeypatch):
    monkeypatch.setattr(cpu, "POOL_KIND", "native")
    saved = config.cpu_threads
    config.cpu_threads = 2
    yield
    config.cpu_threads = saved


def _private(kernel):
    """The kernel's private launch state, its plans and orders forgotten (each test sees its own launches)."""
    private = kernel.compiled(wp.get_device("cpu")).private
    private._plans.clear()
    private._orders.clear()
    private._plan_orders.clear()
    private._inspections = 0
    return private


def _two_passes():
    """Mass-spring's layout: pair s < N joins s and s + 1, pair N + s joins s and s + 64 (mod N), so each half of
    the launch sums over the whole array."""
    s = np.arange(N)
    a = np.concatenate([s, s]).astype(np.int64)
    b = np.concatenate([(s + 1) % N, (s + 64) % N]).astype(np.int64)
    w = np.random.default_rng(4).standard_normal(2 * N).astype(np.float32)
    return a, b, w


def _ranges(private, total):
    """The threads each range ran, from the order the launch kept: [(range 0's threads), (range 1's)]."""
    (key, order), = private._orders.items()
    assert key[2] == total
    chunk = cpu.private_chunk_size(total, 2, 1, private.kernel.align)  # the launch's own chunks
    n = len(order)
    assert n == -(-total // chunk)
    assert sorted(order.tolist()) == list(range(n))  # every chunk once
    threads = []
    for r in range(2):
        chunks = order[r * n // 2:(r + 1) * n // 2]
        assert list(chunks) == sorted(chunks)  # a range's chunks in increasing order: its sums in thread order
        threads.append(np.concatenate([np.arange(c * chunk, min(total, (c + 1) * chunk)) for c in chunks]))
    return threads


def _assert_sums(f, a, b, w):
    """f holds sum of w[s] at a[s] less w[s] at b[s] (b None: no subtraction), within float32 rounding of
    numpy's float64 sums."""
    reference = np.zeros(N)
    np.add.at(reference, a, w.astype(np.float64))
    if b is not None:
        np.add.at(reference, b, -w.astype(np.float64))
    np.testing.assert_allclose(f.numpy(), reference, atol=1e-5)


def _float32_sums(a, b, w, threads, n):
    out = np.zeros(n, np.float32)
    for s in threads:
        out[a[s]] = np.float32(out[a[s]] + w[s])
        out[b[s]] = np.float32(out[b[s]] - w[s])
    return out


def test_each_range_sums_into_its_own_half(two_threads):
    a, b, w = _two_passes()
    f = wp.zeros(N, dtype=float)
    private = _private(scatter_pairs)
    wp.launch(scatter_pairs, len(a), inputs=[wp.array(a, dtype=int), wp.array(b, dtype=int), wp.array(w), f])
    assert private.sums_only
    low, high = _ranges(private, len(a))
    assert len(low) + len(high) == len(a)
    # the natural halves put half of each range's sums in the other range's half; the order, almost none
    assert np.mean(a[low] < N // 2) > 0.95 and np.mean(a[high] >= N // 2) > 0.95
    expected = _float32_sums(a, b, w, low, N) + _float32_sums(a, b, w, high, N)  # array + range 1's copy
    np.testing.assert_array_equal(f.numpy(), expected)
    _assert_sums(f, a, b, w)


def _three_launches(a, b, w, new_array_each_time: bool) -> list:
    """f after each of three launches with the same index arrays, f zeroed or allocated anew before each."""
    arrays = [wp.array(a, dtype=int), wp.array(b, dtype=int), wp.array(w)]
    results = []
    f = wp.zeros(N, dtype=float)
    for _ in range(3):
        if new_array_each_time:
            f = wp.zeros(N, dtype=float)
        f.zero_()
        wp.launch(scatter_pairs, len(a), inputs=[*arrays, f])
        results.append(f.numpy())
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])
    return results


def test_a_plan_gives_the_same_bits_every_launch(two_threads):
    a, b, w = _two_passes()
    private = _private(scatter_pairs)
    _three_launches(a, b, w, new_array_each_time=False)
    assert [v is not None for v in private._orders.values()] == [True]  # one plan, ordered, kept


def test_sums_with_no_place_to_go_keep_the_natural_order(two_threads):
    # random pairs: every chunk's sums spread over the whole array, no order gains anything
    rng = np.random.default_rng(5)
    a = rng.integers(0, N, 2 * N)
    b = rng.integers(0, N, 2 * N)
    w = rng.standard_normal(2 * N).astype(np.float32)
    f = wp.zeros(N, dtype=float)
    private = _private(scatter_pairs)
    wp.launch(scatter_pairs, len(a), inputs=[wp.array(a, dtype=int), wp.array(b, dtype=int), wp.array(w), f])
    assert list(private._orders.values()) == [None]
    _assert_sums(f, a, b, w)


def test_a_kernel_that_also_stores_runs_each_thread_once(two_threads):
    a, _, w = _two_passes()
    f = wp.zeros(N, dtype=float)
    seen = wp.zeros(len(a), dtype=int)
    private = _private(scatter_and_store)
    wp.launch(scatter_and_store, len(a), inputs=[wp.array(a, dtype=int), wp.array(w), f, seen])
    assert private is not None and not private.sums_only and not private._orders
    np.testing.assert_array_equal(seen.numpy(), np.ones(len(a), np.int64))
    _assert_sums(f, a, None, w)


def test_a_new_array_to_sum_into_keeps_the_order_of_the_same_indices(two_threads):
    # a loop allocating the array it sums into at every step: one inspection, every launch ordered alike
    a, b, w = _two_passes()
    private = _private(scatter_pairs)
    _three_launches(a, b, w, new_array_each_time=True)
    assert private._inspections == 1 and len(private._orders) == 1


def test_inspections_stop_after_a_budget(two_threads, monkeypatch):
    # new index arrays at every launch: inspected ORDER_INSPECTIONS times, then launched in the natural order
    monkeypatch.setattr(cpu, "ORDER_INSPECTIONS", 2)
    a, b, w = _two_passes()
    private = _private(scatter_pairs)
    f = wp.zeros(N, dtype=float)
    kept = []  # (alive: each launch's index arrays at addresses of their own)
    for _ in range(4):
        f.zero_()
        kept.append([wp.array(a, dtype=int), wp.array(b, dtype=int), wp.array(w)])
        wp.launch(scatter_pairs, len(a), inputs=[*kept[-1], f])
    assert private._inspections == 2 and len(private._orders) == 2
    _assert_sums(f, a, b, w)


def test_a_long_inspection_stops_and_the_launch_keeps_the_natural_order(two_threads, monkeypatch):
    monkeypatch.setattr(cpu, "ORDER_INSPECTION_NS", 0)  # its time is up at once: nothing run twice
    a, b, w = _two_passes()
    private = _private(scatter_pairs)
    f = wp.zeros(N, dtype=float)
    wp.launch(scatter_pairs, len(a), inputs=[wp.array(a, dtype=int), wp.array(b, dtype=int), wp.array(w), f])
    assert list(private._orders.values()) == [None]
    _assert_sums(f, a, b, w)
