"""Scattered sums that take the previous sum's result from a register (warp-cpu-forward-sums), in launches on
one thread (the `_private` / `_serial` copies). Each case is compared with numpy adding in thread order, the
order of a launch on one thread (Warp's CPU order): the same bits, wherever an element is summed by the
thread before, by the same thread twice, or by threads far apart."""

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def scatter_pairs(fs: wp.array(dtype=wp.vec3), a: wp.array(dtype=int), b: wp.array(dtype=int),
                  f: wp.array(dtype=wp.vec3)):
    s = wp.tid()
    wp.atomic_add(f, a[s], fs[s])
    wp.atomic_sub(f, b[s], fs[s])


@wp.kernel
def scatter_two_arrays(fs: wp.array(dtype=wp.vec3), w: wp.array(dtype=float), a: wp.array(dtype=int),
                       b: wp.array(dtype=int), f: wp.array(dtype=wp.vec3), mass: wp.array(dtype=float)):
    s = wp.tid()
    wp.atomic_add(f, a[s], fs[s])
    wp.atomic_add(mass, a[s], w[s])
    wp.atomic_sub(f, b[s], fs[s])
    wp.atomic_add(mass, b[s], w[s])


@wp.kernel
def count_keys(keys: wp.array(dtype=wp.int32), counts: wp.array(dtype=wp.int32), sums: wp.array(dtype=wp.float64),
               values: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(counts, keys[i], 1)
    wp.atomic_add(sums, keys[i], values[i])


def _pairs_in_thread_order(fs, a, b, f):
    f = f.copy()
    for s in range(len(a)):
        f[a[s]] += fs[s]
        f[b[s]] -= fs[s]
    return f


def _chain_springs(n):
    """A mass-spring's layout: spring s joins s and s + 1 (each sum's element is the next spring's first), then
    s and s + 10 (elements far apart), a spring from an element to itself, and a repeated spring."""
    i = np.arange(n)
    a = np.concatenate([i, i, [5, 7, 7]])
    b = np.concatenate([(i + 1) % n, (i + 10) % n, [5, 8, 8]])
    return a.astype(np.int64), b.astype(np.int64)


@pytest.mark.parametrize("n", [1, 2, 300, 1000])
def test_chained_springs_give_the_bits_of_thread_order(one_thread, n):
    rng = np.random.default_rng(n)
    a, b = _chain_springs(max(n, 11))
    fs = rng.normal(size=(len(a), 3)).astype(np.float32)
    f0 = rng.normal(size=(max(n, 11), 3)).astype(np.float32)
    f = wp.array(f0, dtype=wp.vec3)
    wp.launch(scatter_pairs, len(a), inputs=[wp.array(fs, dtype=wp.vec3), wp.array(a, dtype=int),
                                             wp.array(b, dtype=int), f])
    np.testing.assert_array_equal(f.numpy(), _pairs_in_thread_order(fs, a, b, f0))


def test_random_pairs_and_repeats(one_thread):
    rng = np.random.default_rng(7)
    n = 64
    a = rng.integers(0, n, 5000)
    b = rng.integers(0, n, 5000)
    a[100:200] = 3  # the same element as the previous thread's first sum, many times over
    b[300:400] = a[301:401]  # each thread's second sum into the next thread's first element
    fs = rng.normal(size=(5000, 3)).astype(np.float32)
    f = wp.zeros(n, dtype=wp.vec3)
    wp.launch(scatter_pairs, 5000, inputs=[wp.array(fs, dtype=wp.vec3), wp.array(a, dtype=int),
                                           wp.array(b, dtype=int), f])
    np.testing.assert_array_equal(f.numpy(), _pairs_in_thread_order(fs, a, b, np.zeros((n, 3), np.float32)))


def test_sums_into_two_arrays_interleaved(one_thread):
    rng = np.random.default_rng(3)
    n = 200
    a, b = _chain_springs(n)
    fs = rng.normal(size=(len(a), 3)).astype(np.float32)
    w = rng.random(len(a)).astype(np.float32)
    f = wp.zeros(n, dtype=wp.vec3)
    mass = wp.zeros(n, dtype=float)
    wp.launch(scatter_two_arrays, len(a), inputs=[wp.array(fs, dtype=wp.vec3), wp.array(w, dtype=float),
                                                  wp.array(a, dtype=int), wp.array(b, dtype=int), f, mass])
    expected_f = _pairs_in_thread_order(fs, a, b, np.zeros((n, 3), np.float32))
    expected_mass = np.zeros(n, np.float32)
    for s in range(len(a)):
        expected_mass[a[s]] += w[s]
        expected_mass[b[s]] += w[s]
    np.testing.assert_array_equal(f.numpy(), expected_f)
    np.testing.assert_array_equal(mass.numpy(), expected_mass)


def test_an_array_summed_into_and_read_in_one_loop(one_thread):
    """`mass` is also the weights' array: a thread reads elements the threads before it summed into (the forwarded
    value must be what memory holds)."""
    rng = np.random.default_rng(5)
    n = 60
    a, b = _chain_springs(n)
    a, b = a[:n], b[:n]
    fs = rng.normal(size=(n, 3)).astype(np.float32)
    w = rng.random(n).astype(np.float32)
    mass = wp.array(w, dtype=float)
    wp.launch(scatter_two_arrays, n, inputs=[wp.array(fs, dtype=wp.vec3), mass, wp.array(a, dtype=int),
                                             wp.array(b, dtype=int), wp.zeros(n, dtype=wp.vec3), mass])
    expected = w.copy()
    for s in range(n):
        expected[a[s]] += expected[s]
        expected[b[s]] += expected[s]
    np.testing.assert_array_equal(mass.numpy(), expected)


def test_sorted_keys_counted_and_summed(one_thread):
    """Sorted keys: most threads sum into the element the previous thread did (a histogram's runs)."""
    rng = np.random.default_rng(11)
    keys = np.sort(rng.integers(0, 40, 3000)).astype(np.int32)
    values = rng.normal(size=3000)
    counts = wp.zeros(40, dtype=wp.int32)
    sums = wp.zeros(40, dtype=wp.float64)
    wp.launch(count_keys, 3000, inputs=[wp.array(keys, dtype=wp.int32), counts, sums, wp.array(values,
                                                                                               dtype=wp.float64)])
    expected = np.zeros(40)
    for k, v in zip(keys, values):
        expected[k] += v
    np.testing.assert_array_equal(counts.numpy(), np.bincount(keys, minlength=40))
    np.testing.assert_array_equal(sums.numpy(), expected)


def test_the_one_thread_copy_forwards_and_the_atomic_entry_does_not():
    lowered = scatter_pairs.to_mlir("lowered")
    split = lowered.index("func.func @scatter_pairs_cpu_private")
    private, atomic = lowered[split:], lowered[lowered.index("func.func @scatter_pairs_cpu("):split]
    assert "-> (f32, f32, f32)" in private and "arith.cmpi eq" in private
    assert "llvm.atomicrmw" in atomic and "-> (f32, f32, f32)" not in atomic
