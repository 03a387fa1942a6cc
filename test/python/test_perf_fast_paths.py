"""The CPU fast paths give exactly the results of the plain ones: the contiguous-stride loop
version vs any strides, row loops of multi-dimensional launches, and launches split over threads."""

import ctypes
import os

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.config import config
from mlwarp.runtime import cpu


@wp.kernel
def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def index_2d(x: wp.array(dtype=float, ndim=2), y: wp.array(dtype=float, ndim=2), a: float):
    i, j = wp.tid()
    y[i, j] = a * x[i, j] + float(i * 1000 + j)


@wp.kernel
def index_3d(y: wp.array(dtype=wp.int32, ndim=3)):
    i, j, k = wp.tid()
    y[i, j, k] = i * 10000 + j * 100 + k


@wp.kernel
def linear_tid(y: wp.array(dtype=wp.int32)):
    i = wp.tid()
    y[i] = i


@wp.kernel
def histogram(values: wp.array(dtype=wp.int32), bins: wp.array(dtype=wp.int32), weights: wp.array(dtype=float),
              total: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(bins, values[i], 1)
    wp.atomic_add(total, 0, weights[i])


@pytest.fixture
def threads():
    """Sets the CPU thread count for one test, restored afterwards."""
    saved = config.cpu_threads

    def use(n):
        config.cpu_threads = n

    yield use
    config.cpu_threads = saved


def _saxpy_ref(a, x, y):
    return (np.float32(a) * x + y).astype(np.float32)


def test_saxpy_contiguous_and_strided_views_agree():
    rng = np.random.default_rng(1)
    base_x = rng.standard_normal(2003).astype(np.float32)
    base_y = rng.standard_normal(2003).astype(np.float32)
    for step in (1, 2, -1, -3):
        x, y = base_x[::step], base_y.copy()[::step]
        want = _saxpy_ref(1.5, x, y)
        wy = wp.array(y, copy=False)
        wp.launch(saxpy, len(x), inputs=[wp.array(x, copy=False), wy, 1.5])
        np.testing.assert_array_equal(wy.numpy(), want, err_msg=f"step {step}")


def test_saxpy_one_strided_array_takes_the_generic_loop():
    rng = np.random.default_rng(2)
    x = rng.standard_normal(1000).astype(np.float32)
    y_base = rng.standard_normal(2000).astype(np.float32)
    before = y_base.copy()
    y = y_base[::2]
    want = _saxpy_ref(-2.0, x, y)
    wp.launch(saxpy, 1000, inputs=[wp.array(x, copy=False), wp.array(y, copy=False), -2.0])
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(y_base[1::2], before[1::2])  # the gaps are untouched


def test_saxpy_aliasing_in_place():
    x = np.arange(4096, dtype=np.float32)
    w = wp.array(x, copy=False)
    wp.launch(saxpy, 4096, inputs=[w, w, 3.0])
    np.testing.assert_array_equal(x, np.arange(4096, dtype=np.float32) * 4)


def test_saxpy_overlapping_views(threads):
    # y is x shifted by one element: a vector loop that ignored the overlap would read updated values. One thread:
    # threads on both sides of a chunk boundary race on the overlapping element (undefined in Warp too), and the
    # runtime may run even a small launch on several threads when its threads are slow (runtime/cpu_pool.py)
    threads(1)
    buf = np.arange(1025, dtype=np.float32)
    x, y = buf[1:], buf[:-1]
    want = _saxpy_ref(1.0, x.copy(), y.copy())
    wp.launch(saxpy, 1024, inputs=[wp.array(x, copy=False), wp.array(y, copy=False), 1.0])
    np.testing.assert_array_equal(buf[:-1], want)


@pytest.mark.parametrize("layout", ["c", "fortran", "column-slice"])
def test_2d_rows_loop_all_layouts(layout, threads):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((181, 191)).astype(np.float32)  # 34571 threads: split mid-row on 3 threads
    if layout == "fortran":
        x = np.asfortranarray(x)
    elif layout == "column-slice":
        x = rng.standard_normal((181, 382)).astype(np.float32)[:, ::2]
    ii, jj = np.indices(x.shape)
    want = (np.float32(2.0) * x + (ii * 1000 + jj).astype(np.float32)).astype(np.float32)
    for n in (1, 3):
        threads(n)
        y = np.zeros(x.shape, np.float32)
        wp.launch(index_2d, x.shape, inputs=[wp.array(x, copy=False), wp.array(y, copy=False), 2.0])
        np.testing.assert_array_equal(y, want, err_msg=f"{layout}, {n} threads")


def test_3d_indices_threaded_equals_single(threads):
    shape = (7, 61, 83)  # 35441 threads
    ii, jj, kk = np.indices(shape)
    want = (ii * 10000 + jj * 100 + kk).astype(np.int32)
    for n in (1, 2, 5):
        threads(n)
        y = wp.zeros(shape, dtype=wp.int32)
        wp.launch(index_3d, shape, inputs=[y])
        np.testing.assert_array_equal(y.numpy(), want, err_msg=f"{n} threads")


def test_1d_tid_in_a_2d_launch_is_the_leading_index():
    # Warp's rule: `i = wp.tid()` in a (12, 7) launch is the row; the 7 threads of a row write y[i] = i
    y = wp.full(12 * 7, -1, dtype=wp.int32)
    wp.launch(linear_tid, (12, 7), inputs=[y])
    want = np.full(84, -1, np.int32)
    want[:12] = np.arange(12)
    np.testing.assert_array_equal(y.numpy(), want)


def test_entry_runs_any_subrange():
    # the runtime may hand any [begin, end) to a thread: every split gives the same array
    shape = (5, 9, 11)
    ii, jj, kk = np.indices(shape)
    want = (ii * 10000 + jj * 100 + kk).astype(np.int32)
    y = wp.zeros(shape, dtype=wp.int32)
    wp.launch(index_3d, shape, inputs=[y])  # compiles
    compiled = index_3d.compiled(wp.get_device("cpu"))
    total = int(np.prod(shape))
    for cuts in ([0, 1, 2, total], [0, 10, 98, 99, 100, 400, total], [0, 13, 200, 201, total]):
        y.zero_()
        packed = index_3d.launch_struct()
        packed.dims[:] = [*shape, 1]
        slot = packed.p0
        slot.data = y.ptr
        for d in range(3):
            slot.shape[d] = shape[d]
            slot.strides[d] = y.strides[d]
        for b, e in zip(cuts, cuts[1:]):
            compiled.entry(ctypes.addressof(packed), b, e)
        np.testing.assert_array_equal(y.numpy(), want, err_msg=f"cuts {cuts}")


def test_atomics_threaded_equal_single(threads):
    n = 1 << 17
    rng = np.random.default_rng(4)
    values = rng.integers(0, 64, n).astype(np.int32)
    weights = rng.integers(0, 4, n).astype(np.float32)  # integer-valued: sums are exact in any order
    results = []
    for t in (1, 2, 4):
        threads(t)
        bins = wp.zeros(64, dtype=wp.int32)
        total = wp.zeros(1, dtype=float)
        wp.launch(histogram, n, inputs=[wp.array(values), bins, wp.array(weights), total])
        results.append((bins.numpy().copy(), total.numpy().copy()))
    np.testing.assert_array_equal(results[0][0], np.bincount(values, minlength=64).astype(np.int32))
    assert results[0][1][0] == float(weights.sum())
    for bins, total in results[1:]:
        np.testing.assert_array_equal(bins, results[0][0])
        np.testing.assert_array_equal(total, results[0][1])


def test_thread_count_sources(threads, monkeypatch):
    monkeypatch.delenv("MLWARP_NUM_THREADS", raising=False)
    threads(0)
    assert cpu.num_threads() == (os.cpu_count() or 1)
    monkeypatch.setenv("MLWARP_NUM_THREADS", "3")
    assert cpu.num_threads() == 3
    threads(5)
    assert cpu.num_threads() == 5  # the config field wins over the environment


@wp.kernel
def ticket(counter: wp.array(dtype=wp.int32), fcounter: wp.array(dtype=float), out: wp.array(dtype=wp.int32),
           fout: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.atomic_add(counter, 0, 1)
    fout[i] = wp.atomic_sub(fcounter, 0, 0.5)


def test_serial_entry_for_kernels_with_atomics_only():
    cpu_dev = wp.get_device("cpu")
    wp.launch(histogram, 4, inputs=[wp.zeros(4, dtype=wp.int32), wp.zeros(64, dtype=wp.int32),
                                    wp.zeros(4, dtype=float), wp.zeros(1, dtype=float)])
    wp.launch(saxpy, 4, inputs=[wp.zeros(4, dtype=float), wp.zeros(4, dtype=float), 1.0])
    assert histogram.compiled(cpu_dev).serial is not histogram.compiled(cpu_dev).entry
    assert saxpy.compiled(cpu_dev).serial is saxpy.compiled(cpu_dev).entry


def test_serial_atomics_return_the_old_value_in_thread_order(threads):
    threads(1)
    n = 1000
    counter, fcounter = wp.zeros(1, dtype=wp.int32), wp.array(np.array([100.0], np.float32))
    out, fout = wp.zeros(n, dtype=wp.int32), wp.zeros(n, dtype=float)
    wp.launch(ticket, n, inputs=[counter, fcounter, out, fout])
    np.testing.assert_array_equal(out.numpy(), np.arange(n, dtype=np.int32))
    np.testing.assert_array_equal(fout.numpy(), 100.0 - 0.5 * np.arange(n, dtype=np.float32))
    assert counter.numpy()[0] == n and fcounter.numpy()[0] == 100.0 - 0.5 * n


def test_threaded_atomics_hand_out_every_ticket_once(threads):
    threads(2)
    n = 1 << 16
    counter, fcounter = wp.zeros(1, dtype=wp.int32), wp.zeros(1, dtype=float)
    out, fout = wp.zeros(n, dtype=wp.int32), wp.zeros(n, dtype=float)
    wp.launch(ticket, n, inputs=[counter, fcounter, out, fout])
    np.testing.assert_array_equal(np.sort(out.numpy()), np.arange(n, dtype=np.int32))
    assert counter.numpy()[0] == n


@wp.kernel
def add_one(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 1.0


def _pooled_size() -> int:
    """A launch size the pool takes: the Python pool (where the native one is not built) starts higher."""
    return 2 * (cpu.MIN_PARALLEL if cpu.pool_kind() == "native" else cpu.PYTHON_POOL_MIN_PARALLEL)


def _pool_runs(monkeypatch) -> list:
    runs = []
    for pool in (cpu._Pool, cpu._NativePool):
        def counting(self, *args, real=pool.run):
            runs.append(self.size)
            return real(self, *args)

        monkeypatch.setattr(pool, "run", counting)
    return runs


@pytest.mark.parametrize("serial_below_ns, pooled", [(10**15, 1), (0, 3)])
def test_automatic_thread_count_keeps_quick_launches_on_the_caller(threads, monkeypatch, serial_below_ns, pooled):
    # the first big launch goes to the pool and measures the kernel; later ones stay on the calling thread
    # when they would take less than SERIAL_BELOW_NS there (the threshold is pinned: no timing decides)
    monkeypatch.delenv("MLWARP_NUM_THREADS", raising=False)
    monkeypatch.setattr(cpu, "_CPU_COUNT", 2)
    monkeypatch.setattr(cpu, "SERIAL_BELOW_NS", serial_below_ns)
    monkeypatch.setattr(cpu, "PYTHON_POOL_SERIAL_BELOW_NS", serial_below_ns)  # where the native pool is not built
    threads(0)
    runs = _pool_runs(monkeypatch)
    real = cpu.CpuKernel._parallel

    def pool_wins(self, *args):  # pinned: the pool is faster than one thread (it is not for a launch this small)
        real(self, *args)
        self.parallel_ns = 0.0

    monkeypatch.setattr(cpu.CpuKernel, "_parallel", pool_wins)
    n = _pooled_size()
    x = wp.zeros(n, dtype=float)
    add_one.compiled(wp.get_device("cpu")).ns_per_thread = None  # as freshly loaded: nothing measured yet
    for _ in range(3):
        wp.launch(add_one, n, inputs=[x])
    assert len(runs) == pooled
    np.testing.assert_array_equal(x.numpy(), np.full(n, 3.0, np.float32))


def test_explicit_thread_count_always_uses_the_pool(threads, monkeypatch):
    monkeypatch.setattr(cpu, "SERIAL_BELOW_NS", 10**15)
    threads(2)
    runs = _pool_runs(monkeypatch)
    n = _pooled_size()
    x = wp.zeros(n, dtype=float)
    for _ in range(3):
        wp.launch(add_one, n, inputs=[x])
    wp.launch(add_one, cpu.MIN_PARALLEL - 1, inputs=[x])  # below MIN_PARALLEL: the calling thread
    assert runs == [2, 2, 2]
