"""wp.atomic_* on int and float arrays: many threads on one element, exact totals, old values returned."""

import re

import numpy as np
import pytest

import mlwarp as wp

N = 50_000  # large enough to run on several threads


@wp.kernel
def add_sub_counts(counter: wp.array(dtype=int), down: wp.array(dtype=int), olds: wp.array(dtype=int),
                   fsum: wp.array(dtype=float)):
    i = wp.tid()
    olds[i] = wp.atomic_add(counter, 0, 1)
    wp.atomic_sub(down, 0, 2)
    wp.atomic_add(fsum, 0, 0.5)


def test_add_and_sub_return_distinct_old_values():
    counter, down, olds, fsum = wp.zeros(1, dtype=int), wp.full(1, 10, dtype=int), wp.zeros(N, dtype=int), wp.zeros(1)
    wp.launch(add_sub_counts, dim=N, inputs=[counter, down, olds, fsum])
    assert counter.numpy()[0] == N and down.numpy()[0] == 10 - 2 * N and fsum.numpy()[0] == N / 2
    np.testing.assert_array_equal(np.sort(olds.numpy()), np.arange(N))  # every thread saw another value


@wp.kernel
def min_max(values: wp.array(dtype=int), fvalues: wp.array(dtype=float), uvalues: wp.array(dtype=wp.uint32),
            lo: wp.array(dtype=int), hi: wp.array(dtype=int), flo: wp.array(dtype=float),
            fhi: wp.array(dtype=float), ulo: wp.array(dtype=wp.uint32), uhi: wp.array(dtype=wp.uint32),
            old_lo: wp.array(dtype=int)):
    i = wp.tid()
    old_lo[i] = wp.atomic_min(lo, 0, values[i])
    wp.atomic_max(hi, 0, values[i])
    wp.atomic_min(flo, 0, fvalues[i])
    wp.atomic_max(fhi, 0, fvalues[i])
    wp.atomic_min(ulo, 0, uvalues[i])
    wp.atomic_max(uhi, 0, uvalues[i])


def test_min_and_max_for_signed_unsigned_and_float():
    rng = np.random.default_rng(6)
    v = rng.integers(-10 ** 6, 10 ** 6, N).astype(np.int32)
    f = rng.standard_normal(N).astype(np.float32)
    u = rng.integers(0, 2 ** 32, N, dtype=np.uint64).astype(np.uint32)
    lo, hi = wp.full(1, 2 ** 31 - 1, dtype=int), wp.full(1, -2 ** 31, dtype=int)
    flo, fhi = wp.full(1, np.inf), wp.full(1, -np.inf)
    ulo, uhi = wp.full(1, 2 ** 32 - 1, dtype=wp.uint32), wp.zeros(1, dtype=wp.uint32)
    old_lo = wp.zeros(N, dtype=int)
    wp.launch(min_max, dim=N, inputs=[wp.array(v), wp.array(f), wp.array(u), lo, hi, flo, fhi, ulo, uhi, old_lo])
    assert (lo.numpy()[0], hi.numpy()[0]) == (v.min(), v.max())
    assert (flo.numpy()[0], fhi.numpy()[0]) == (f.min(), f.max())
    assert (ulo.numpy()[0], uhi.numpy()[0]) == (u.min(), u.max())  # unsigned order, not signed
    olds = set(old_lo.numpy().tolist())  # each old value is the initial one or another thread's value
    assert olds <= set(v.tolist()) | {2 ** 31 - 1} and 2 ** 31 - 1 in olds


@wp.kernel
def bits(values: wp.array(dtype=wp.int64), a: wp.array(dtype=wp.int64), o: wp.array(dtype=wp.int64),
         x: wp.array(dtype=wp.int64)):
    i = wp.tid()
    wp.atomic_and(a, 0, values[i])
    wp.atomic_or(o, 0, values[i])
    wp.atomic_xor(x, 0, values[i])


def test_and_or_xor():
    rng = np.random.default_rng(7)
    v = (rng.integers(0, 2 ** 62, N, dtype=np.int64) | (1 << 40)).astype(np.int64)
    a, o, x = wp.full(1, -1, dtype=wp.int64), wp.zeros(1, dtype=wp.int64), wp.zeros(1, dtype=wp.int64)
    wp.launch(bits, dim=N, inputs=[wp.array(v), a, o, x])
    assert a.numpy()[0] == np.bitwise_and.reduce(v)
    assert o.numpy()[0] == np.bitwise_or.reduce(v)
    assert x.numpy()[0] == np.bitwise_xor.reduce(v)


@wp.kernel
def exchange(slot: wp.array(dtype=float), olds: wp.array(dtype=float)):
    i = wp.tid()
    olds[i] = wp.atomic_exch(slot, 0, float(i))


def test_exchange_passes_every_value_on_exactly_once():
    slot, olds = wp.full(1, -1.0), wp.zeros(N)
    wp.launch(exchange, dim=N, inputs=[slot, olds])
    seen = np.sort(np.concatenate([olds.numpy(), slot.numpy()]))
    np.testing.assert_array_equal(seen, np.arange(-1, N, dtype=np.float32))


@wp.kernel
def cas_counter(counter: wp.array(dtype=int), fcounter: wp.array(dtype=float), tickets: wp.array(dtype=int)):
    i = wp.tid()
    while True:  # a lock-free increment: retry until our compare-and-swap wins
        old = counter[0]
        if wp.atomic_cas(counter, 0, old, old + 1) == old:
            tickets[i] = old
            break
    while True:
        fold = fcounter[0]
        if wp.atomic_cas(fcounter, 0, fold, fold + 1.0) == fold:
            break


def test_compare_and_swap_on_int_and_float():
    counter, fcounter, tickets = wp.zeros(1, dtype=int), wp.zeros(1), wp.zeros(N, dtype=int)
    wp.launch(cas_counter, dim=N, inputs=[counter, fcounter, tickets])
    assert counter.numpy()[0] == N and fcounter.numpy()[0] == N
    np.testing.assert_array_equal(np.sort(tickets.numpy()), np.arange(N))


@wp.kernel
def cas_fails_returns_current(a: wp.array(dtype=int), out: wp.array(dtype=int)):
    out[0] = wp.atomic_cas(a, 0, 5, 9)  # the element is 7: no swap, the old value comes back
    out[1] = wp.atomic_cas(a, 1, 3, 9)  # the element is 3: swapped


def test_cas_swaps_only_on_equality():
    a, out = wp.array(np.array([7, 3], np.int32)), wp.zeros(2, dtype=int)
    wp.launch(cas_fails_returns_current, dim=1, inputs=[a, out])
    assert list(out.numpy()) == [7, 3] and list(a.numpy()) == [7, 9]


@wp.kernel
def atomic_2d(grid: wp.array(dtype=int, ndim=2)):
    i, j = wp.tid()
    wp.atomic_add(grid, i % 2, j % 3, 1)


def test_atomics_on_multi_dim_arrays():
    grid = wp.zeros((2, 3), dtype=int)
    wp.launch(atomic_2d, dim=(40, 30), inputs=[grid])
    np.testing.assert_array_equal(grid.numpy(), np.full((2, 3), 200))


def k_add_on_int8(a: wp.array(dtype=wp.int8)):
    wp.atomic_add(a, 0, wp.int8(1))


def k_max_on_vec3h(a: wp.array(dtype=wp.vec3h)):
    wp.atomic_max(a, 0, wp.vec3h())


def k_and_on_float(a: wp.array(dtype=float)):
    wp.atomic_and(a, 0, 1.0)


def k_wrong_value_type(a: wp.array(dtype=int)):
    wp.atomic_max(a, 0, 1.5)


@pytest.mark.parametrize("func,array,message", [
    (k_and_on_float, wp.zeros(1), r"atomic_and\(\) operations only work on arrays with \[u\]int32 or \[u\]int64 "
                                  r"as the underlying scalar types, but got float32 \(with scalar type float32\)$"),
    (k_add_on_int8, wp.zeros(1, dtype=wp.int8), r"atomic_add\(\) operations only work on arrays with \[u\]int32, "
     r"\[u\]int64, float16, bfloat16, float32, or float64 as the underlying scalar types, but got int8 \(with scalar "
     r"type int8\)$"),
    (k_max_on_vec3h, wp.zeros(1, dtype=wp.vec3h), r"atomic_max\(\) operations only work on arrays with \[u\]int32, "
     r"\[u\]int64, bfloat16, float32, or float64 as the underlying scalar types, but got vec3h \(with scalar type "
     r"float16\)$"),
    (k_wrong_value_type, wp.zeros(1, dtype=int),
     r"atomic_max\(\) value argument type \(float32\) must be of the same type as the array \(int32\)"),
])
def test_atomic_type_errors(func, array, message):
    with pytest.raises(wp.CompileTypeError) as info:  # a RuntimeError too, as Warp's
        wp.launch(wp.kernel(func), dim=1, inputs=[array])
    assert re.search(message, str(info.value)), str(info.value)  # the reason ends the message (no source line)
