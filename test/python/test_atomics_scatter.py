"""Scattered atomic adds into a small array on every core (warp-cpu-privatize-scatter, runtime/cpu.py's _Private):
each range of a parallel launch sums into its own copy of the array, the copies are added in range order.
Integer sums are exact; float sums are within rounding of numpy's and give the same bits on every run with one
thread count; elements nobody adds to keep their bits (-0.0 included)."""

import ctypes

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.config import config
from mlwarp.runtime import cpu


@wp.kernel
def spring_forces(x: wp.array(dtype=wp.vec3), ia: wp.array(dtype=int), ib: wp.array(dtype=int), k: float,
                  f: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    i = ia[tid]
    j = ib[tid]
    force = (x[j] - x[i]) * k
    wp.atomic_add(f, i, force)
    wp.atomic_sub(f, j, force)


@wp.kernel
def histogram(values: wp.array(dtype=wp.int32), bins: wp.array(dtype=wp.int32), wide: wp.array(dtype=wp.int64)):
    i = wp.tid()
    wp.atomic_add(bins, values[i], 1)
    wp.atomic_add(wide, values[i] % 5, wp.int64(i))


@wp.kernel
def add_some(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    if i % 3 == 0:
        wp.atomic_add(out, i % 100, x[i])


@wp.kernel
def add_and_read(src: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, i % 10, src[i])


@wp.kernel
def ticket(counter: wp.array(dtype=wp.int32), out: wp.array(dtype=wp.int32)):
    i = wp.tid()
    out[i] = wp.atomic_add(counter, i % 4, 1)


@pytest.fixture
def native(monkeypatch):
    """The native pool (it runs private copies), automatic thread count off; restored afterwards."""
    monkeypatch.setattr(cpu, "POOL_KIND", "native")
    saved = config.cpu_threads
    yield
    config.cpu_threads = saved


def _private_runs(monkeypatch) -> list:
    """What each launch's private path gave: a measurement or None (it ran; None: the calling thread ran no
    chunk), or False (the plain entry ran)."""
    results = []
    real = cpu._Private.run

    def spy(self, *args):
        out = real(self, *args)
        results.append(out)
        return out

    monkeypatch.setattr(cpu._Private, "run", spy)
    return results


def _springs(n=10_000):
    rng = np.random.default_rng(2)
    a = np.concatenate([np.arange(n - 1), np.arange(n - 100)]).astype(np.int64)
    b = np.concatenate([np.arange(1, n), np.arange(100, n)]).astype(np.int64)
    x = rng.random((n, 3)).astype(np.float32)
    return x, a, b


def _reference_forces(x, a, b, k):
    force = (x[b].astype(np.float64) - x[a]) * np.float64(np.float32(k))
    f = np.zeros(x.shape, np.float64)
    np.add.at(f, a, force)
    np.add.at(f, b, -force)
    return f


def test_spring_forces_on_every_core(native, monkeypatch):
    runs = _private_runs(monkeypatch)
    x, a, b = _springs()
    xs, ia, ib = wp.array(x, dtype=wp.vec3), wp.array(a.astype(np.int32), dtype=int), wp.array(b.astype(np.int32), dtype=int)
    want = _reference_forces(x, a, b, 3.0)
    for threads in (2, 3):
        config.cpu_threads = threads
        bits = None
        for _ in range(4):
            f = wp.zeros(len(x), dtype=wp.vec3)
            wp.launch(spring_forces, len(a), inputs=[xs, ia, ib, 3.0, f])
            got = f.numpy()
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
            if bits is None:
                bits = got.copy()
            else:  # the same bits on every run with this thread count
                np.testing.assert_array_equal(got.view(np.int32), bits.view(np.int32))
    assert runs and all(r is not False for r in runs), runs
    kernel = spring_forces.compiled(wp.get_device("cpu"))
    assert [row[0] for row in kernel.private.rows if row[3]] == [4]  # f, as f32 sums


def test_the_copies_add_into_what_the_array_held(native, monkeypatch):
    runs = _private_runs(monkeypatch)
    config.cpu_threads = 2
    x, a, b = _springs(3_000)
    xs, ia, ib = wp.array(x, dtype=wp.vec3), wp.array(a.astype(np.int32), dtype=int), wp.array(b.astype(np.int32), dtype=int)
    start = np.random.default_rng(3).random(x.shape).astype(np.float32)
    f = wp.array(start, dtype=wp.vec3)
    wp.launch(spring_forces, len(a), inputs=[xs, ia, ib, 1.0, f])
    np.testing.assert_allclose(f.numpy(), start + _reference_forces(x, a, b, 1.0), rtol=1e-5, atol=1e-5)
    assert len(runs) == 1 and runs[0] is not False


def test_integer_sums_are_exact(native, monkeypatch):
    runs = _private_runs(monkeypatch)
    n = 100_000
    values = np.random.default_rng(5).integers(0, 1000, n).astype(np.int32)
    for threads in (2, 3, 4):
        config.cpu_threads = threads
        bins, wide = wp.zeros(1000, dtype=wp.int32), wp.zeros(5, dtype=wp.int64)
        wp.launch(histogram, n, inputs=[wp.array(values), bins, wide])
        np.testing.assert_array_equal(bins.numpy(), np.bincount(values, minlength=1000).astype(np.int32))
        want = np.zeros(5, np.int64)
        np.add.at(want, values % 5, np.arange(n, dtype=np.int64))
        np.testing.assert_array_equal(wide.numpy(), want)
    assert len(runs) == 3 and all(r is not False for r in runs)
    kernel = histogram.compiled(wp.get_device("cpu"))
    assert sorted((row[0], row[3]) for row in kernel.private.rows if row[3]) == [(1, 3), (2, 4)]  # i32, i64


def test_elements_nobody_adds_to_keep_their_bits(native, monkeypatch):
    runs = _private_runs(monkeypatch)
    config.cpu_threads = 2
    n = 30_000
    x = wp.array(np.arange(n, dtype=np.float64))
    start = np.full(200, -0.0)
    start[150:] = np.nan
    out = wp.array(start)
    wp.launch(add_some, n, inputs=[x, out])
    got = out.numpy()
    want = np.full(200, -0.0)
    idx = np.arange(0, n, 3)
    np.add.at(want, idx % 100, idx.astype(np.float64))  # integers below 2**53: exact in any order
    np.testing.assert_array_equal(got[:100], want[:100])
    assert np.signbit(got[100:150]).all() and (got[100:150] == 0).all()  # -0.0 stays -0.0
    assert np.isnan(got[150:]).all()
    assert runs and runs[0] is not False


def test_aliased_or_large_arrays_keep_their_atomics(native, monkeypatch):
    runs = _private_runs(monkeypatch)
    config.cpu_threads = 2
    n = 20_000
    src = np.ones(n, np.float32)
    # the array summed into is also the one read: its private copy would hide the sums from the reads
    both = wp.array(np.ones(n, np.float32))
    wp.launch(add_and_read, n, inputs=[both, both])
    got = both.numpy()
    assert got[10:].sum() == n - 10 and n / 10 <= got[:10].min()  # every add landed (in some order)
    # larger than PRIVATE_MAX_BYTES
    monkeypatch.setattr(cpu, "PRIVATE_MAX_BYTES", 16)
    out = wp.zeros(10, dtype=float)
    wp.launch(add_and_read, n, inputs=[wp.array(src), out])
    np.testing.assert_array_equal(out.numpy(), np.full(10, n / 10, np.float32))
    assert runs == [False, False]


def test_strided_view_gets_a_copy_of_its_span(native, monkeypatch):
    # the private copy spans the view's bytes; the elements between its own get the identity added: same bits
    runs = _private_runs(monkeypatch)
    config.cpu_threads = 2
    n = 20_000
    start = np.zeros(20, np.float32)
    start[1::2] = [-0.0, np.nan, 1e-40, -3.5, np.inf, 7.0, -0.0, 2.0, 5e-39, -1.0]
    base = wp.array(start)
    wp.launch(add_and_read, n, inputs=[wp.array(np.ones(n, np.float32)), base[::2]])
    got = base.numpy()
    np.testing.assert_array_equal(got[::2], np.full(10, n / 10, np.float32))
    np.testing.assert_array_equal(got[1::2].view(np.int32), start[1::2].view(np.int32))
    assert len(runs) == 1 and runs[0] is not False


def test_atomics_whose_old_value_is_read_have_no_private_copy(native):
    config.cpu_threads = 2
    n = 20_000
    counter, out = wp.zeros(4, dtype=wp.int32), wp.zeros(n, dtype=wp.int32)
    wp.launch(ticket, n, inputs=[counter, out])
    assert ticket.compiled(wp.get_device("cpu")).private is None
    np.testing.assert_array_equal(counter.numpy(), np.full(4, n // 4, np.int32))
    for r in range(4):
        np.testing.assert_array_equal(np.sort(out.numpy()[r::4]), np.arange(n // 4, dtype=np.int32))


def test_private_table_has_the_launch_struct_layout(native):
    config.cpu_threads = 1
    x, a, b = _springs(300)
    f = wp.zeros(len(x), dtype=wp.vec3)
    wp.launch(spring_forces, len(a), inputs=[wp.array(x, dtype=wp.vec3), wp.array(a.astype(np.int32), dtype=int),
                                            wp.array(b.astype(np.int32), dtype=int), 1.0, f])
    private = spring_forces.compiled(wp.get_device("cpu")).private
    layout = spring_forces.launch_struct
    assert private.size == ctypes.sizeof(layout)
    arrays = [0, 1, 2, 4]  # x, ia, ib, f (k is a float)
    assert [(row[0], row[1], row[2]) for row in private.rows] == [(p, getattr(layout, f"p{p}").offset, 1) for p in arrays]


@wp.struct
class _Scale:
    values: wp.array(dtype=float)  # a struct field array: its storage is 56 bytes (i64s, then an i16 pair)
    count: int


@wp.kernel
def scaled_histogram(s: _Scale, x: wp.array(dtype=float), idx: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, idx[i], x[i] * s.values[0])


def test_private_table_offsets_after_a_struct_holding_an_array(native, monkeypatch):
    # the table's offsets are constants LLVM folds while translating: with its default layout (an i64 aligned to 4
    # bytes) a struct holding an array was 52 bytes, not the launch struct's 56, and every offset after it 8 short
    runs = _private_runs(monkeypatch)
    config.cpu_threads = 2
    n = 20_000
    scale = _Scale()
    scale.values = wp.array([2.0], dtype=float)
    scale.count = 1
    out = wp.zeros(7, dtype=float)
    idx = (np.arange(n) % 7).astype(np.int32)
    wp.launch(scaled_histogram, n, inputs=[scale, wp.array(np.ones(n, np.float32)), wp.array(idx, dtype=int), out])
    private = scaled_histogram.compiled(wp.get_device("cpu")).private
    layout = scaled_histogram.launch_struct
    assert private.size == ctypes.sizeof(layout)
    assert [(row[0], row[1]) for row in private.rows] == [(p, getattr(layout, f"p{p}").offset) for p in (1, 2, 3)]
    np.testing.assert_array_equal(out.numpy(), 2.0 * np.bincount(idx, minlength=7).astype(np.float32))
    assert runs and runs[0] is not False  # the launch ran with private copies


def test_launches_from_two_python_threads(native):
    # each thread sums into its own array; launches of the kernel take turns with its private copies, or run with
    # atomics on their own thread while the other holds the pool
    import threading

    config.cpu_threads = 2
    x, a, b = _springs(3_000)
    xs, ia, ib = wp.array(x, dtype=wp.vec3), wp.array(a.astype(np.int32), dtype=int), wp.array(b.astype(np.int32), dtype=int)
    want = _reference_forces(x, a, b, 2.0)
    failures = []

    def work():
        try:
            for _ in range(30):
                f = wp.zeros(len(x), dtype=wp.vec3)
                wp.launch(spring_forces, len(a), inputs=[xs, ia, ib, 2.0, f])
                if not np.allclose(f.numpy(), want, rtol=1e-5, atol=1e-5):
                    failures.append("wrong forces")
        except Exception as e:  # reported below
            failures.append(repr(e))

    workers = [threading.Thread(target=work) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert failures == []


@wp.kernel
def gather_square(x: wp.array(dtype=float), idx: wp.array(dtype=int), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[idx[i]]
    y[i] = v * v


def _gather_square_backward(n, m, seed):
    """(x.grad, its expected values: 2 x times each value's gather count) of one backward pass of gather_square
    over n gathers from m values."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, m, n).astype(np.int32)
    xv = rng.random(m).astype(np.float32)
    x = wp.array(xv, requires_grad=True)
    y = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(gather_square, n, inputs=[x, wp.array(idx, dtype=int), y])
    tape.backward(grads={y: wp.array(np.ones(n, np.float32))})
    return x.grad.numpy(), 2.0 * xv.astype(np.float64) * np.bincount(idx, minlength=m)


def test_adjoint_gathers_sum_into_private_copies(native, monkeypatch):
    # the adjoint of a gather scatters: adj_x[idx[i]] += 2 x[idx[i]] adj_y[i], atomics into adj_x only
    runs = _private_runs(monkeypatch)
    config.cpu_threads = 2
    got, want = _gather_square_backward(20_000, 500, 7)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert runs and all(r is not False for r in runs), runs  # the adjoint launch ran with private copies


def test_an_adjoint_without_its_atomic_form_runs_on_one_thread_until_the_library_with_it_is_compiled(native,
                                                                                                    monkeypatch):
    # the adjoint library holds `gather_square_adj_cpu_private` only (warp-cpu-privatize-scatter{replace-entry});
    # a launch whose gradient array is too large for private copies runs it on one thread and has the library
    # with the atomic form compiled, which the next launches use on every core
    from mlwarp.autodiff.adjoint import adjoint_kernel, with_adjoint_atomics
    from mlwarp.kernels import parallel_compile

    runs = _private_runs(monkeypatch)
    config.cpu_threads = 2
    device = wp.get_device("cpu")
    got, want = _gather_square_backward(20_000, 500, 8)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    first = adjoint_kernel(gather_square, device)
    assert first.atomic is False and first.entry.__name__ == "gather_square_adj_cpu_private"
    assert not hasattr(first.library, "gather_square_adj_cpu")
    assert runs and runs[0] is not False

    monkeypatch.setattr(cpu, "PRIVATE_MAX_BYTES", 16)  # adj_x (500 floats) gets no private copy now
    serial = []
    real_serial = first.serial
    monkeypatch.setattr(first, "serial", lambda *a: (serial.append(a[2]), real_serial(*a))[1])
    got, want = _gather_square_backward(20_000, 500, 9)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert serial == [20_000]  # the whole launch, on the calling thread
    variant = with_adjoint_atomics(gather_square)
    parallel_compile.wait_for(variant.cache_key(device))  # (the background compile the launch started)
    got, want = _gather_square_backward(20_000, 500, 10)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    upgraded = adjoint_kernel(gather_square, device)
    assert upgraded.atomic is True and upgraded.entry.__name__ == "gather_square_adj_cpu"
    assert serial == [20_000] and runs[-1] is False  # this launch: the atomic form, the private path declined


def test_recorded_launch_replays_with_private_copies(native, monkeypatch):
    runs = _private_runs(monkeypatch)
    config.cpu_threads = 2
    x, a, b = _springs(3_000)
    xs, ia, ib = wp.array(x, dtype=wp.vec3), wp.array(a.astype(np.int32), dtype=int), wp.array(b.astype(np.int32), dtype=int)
    f = wp.zeros(len(x), dtype=wp.vec3)
    cmd = wp.launch(spring_forces, len(a), inputs=[xs, ia, ib, 1.5, f], record_cmd=True)
    for _ in range(3):
        cmd.launch()
    np.testing.assert_allclose(f.numpy(), 3 * _reference_forces(x, a, b, 1.5), rtol=1e-5, atol=1e-5)
    assert len(runs) == 3 and all(r is not False for r in runs)


@wp.kernel
def add_float32(x: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    wp.atomic_add(out, i % 7, x[i])


def test_two_threads_sum_range_0_into_the_array_and_range_1_into_a_copy(native, monkeypatch):
    """The documented order on 2 threads: the array gets range 0's contributions in thread order, then
    range 1's sum (itself in thread order, from -0.0): float32 bits computed here with numpy's in-order adds."""
    runs = _private_runs(monkeypatch)
    config.cpu_threads = 2
    n = 50_000
    x = np.random.default_rng(11).standard_normal(n).astype(np.float32)
    start = np.random.default_rng(12).standard_normal(7).astype(np.float32)
    out = wp.array(start)
    wp.launch(add_float32, n, inputs=[wp.array(x), out])
    chunk = cpu.private_chunk_size(n, 2, 1, add_float32.compiled(wp.get_device("cpu")).align)
    chunks = -(-n // chunk)
    split = min(chunks // 2 * chunk, n)  # range 1 = chunks [chunks // 2, chunks)
    idx = np.arange(n) % 7
    want = start.copy()
    np.add.at(want, idx[:split], x[:split])  # float32, one element at a time, in index order
    copy = np.full(7, -0.0, np.float32)
    np.add.at(copy, idx[split:], x[split:])
    want = want + copy
    assert runs and runs[0] is not False
    np.testing.assert_array_equal(out.numpy().view(np.int32), want.view(np.int32))


def test_one_thread_runs_the_private_copy_when_it_has_no_atomic_left(native):
    # warp-cpu-serial-copy leaves out `_serial` where `_private` has every atomic plain (spring_forces: f is only
    # summed into): a launch on one thread runs `_private` on the arrays themselves, in thread order
    kernel = spring_forces.compiled(wp.get_device("cpu"))
    assert kernel.serial.__name__ == "spring_forces_cpu_private"
    assert not hasattr(kernel.library, "spring_forces_cpu_serial")
    x, a, b = _springs()
    config.cpu_threads = 1
    f = wp.zeros(len(x), dtype=wp.vec3)
    wp.launch(spring_forces, len(a), inputs=[wp.array(x, dtype=wp.vec3), wp.array(a.astype(np.int32), dtype=int),
                                             wp.array(b.astype(np.int32), dtype=int), 3.0, f])
    np.testing.assert_allclose(f.numpy(), _reference_forces(x, a, b, 3.0), rtol=1e-5, atol=1e-5)
    # a kernel without a private copy (ticket reads the atomics' old values) keeps its `_serial` copy
    ticket_kernel = ticket.compiled(wp.get_device("cpu"))
    assert ticket_kernel.serial.__name__ == "ticket_cpu_serial" and ticket_kernel.private is None
