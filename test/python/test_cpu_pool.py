"""The CPU thread pools (runtime/cpu_pool.py, the native one; runtime/cpu.py's Python one where that cannot be
built) run every thread of a launch exactly once, with the bits of a run on one thread, and the rules that pick
the calling thread or the pool (no timing decides here: the measurements are pinned)."""

import os
import threading

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.config import config
from mlwarp.runtime import cpu, cpu_pool


@wp.kernel
def count_runs(runs: wp.array(dtype=wp.int32)):
    i = wp.tid()
    wp.atomic_add(runs, i, 1)


@wp.kernel
def write_index(out: wp.array(dtype=wp.int32), offset: int):
    i = wp.tid()
    out[i] = i + offset


@wp.kernel
def math_chain(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    a = x[i]
    for k in range(4):
        a = wp.sin(a) * 1.5 + wp.exp(a * 0.25)
    y[i] = a


@wp.kernel
def add_one(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 1.0


@wp.kernel
def bump(x: wp.array(dtype=float), total: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(total, i % 7, x[i])


@pytest.fixture(params=["native", "python"])
def pool_kind(request, monkeypatch):
    """Each test once with each pool; thread count restored afterwards."""
    if request.param == "native" and cpu_pool.library() is None:
        pytest.fail(f"the native pool did not build: {cpu_pool.library_error()}")
    monkeypatch.setattr(cpu, "POOL_KIND", request.param)
    saved = config.cpu_threads
    yield request.param
    config.cpu_threads = saved


def _record_serial_runs(monkeypatch, kernel, pattern: list) -> None:
    """Replaces the kernel's serial copy by one that appends "s" to `pattern` and runs the copy."""
    real_serial = kernel.serial

    def serial(args_ptr, begin, end):
        pattern.append("s")
        real_serial(args_ptr, begin, end)

    monkeypatch.setattr(kernel, "serial", serial)

def test_native_pool_builds_here(monkeypatch):
    # x86-64 Linux with LLVM and a linker (what CPU kernels need) has the native pool, not the fallback
    monkeypatch.delenv("MLWARP_CPU_POOL", raising=False)
    monkeypatch.setattr(cpu, "POOL_KIND", None)
    if cpu_pool.supported():
        assert cpu_pool.library() is not None, cpu_pool.library_error()
        assert cpu.pool_kind() == "native"


@pytest.mark.parametrize("threads", [2, 3, 4, 7])
def test_every_thread_runs_once(pool_kind, threads):
    config.cpu_threads = threads
    for n in (cpu.MIN_PARALLEL, cpu.MIN_PARALLEL + 1, 10_000, 3 * cpu.MIN_CHUNK - 1, 65_537, 1 << 17):
        runs = wp.zeros(n, dtype=wp.int32)
        wp.launch(count_runs, n, inputs=[runs])
        np.testing.assert_array_equal(runs.numpy(), np.ones(n, np.int32), err_msg=f"n={n} threads={threads}")


def test_back_to_back_launches_of_other_sizes_and_kernels(pool_kind):
    # one launch's fields never leak into the next: sizes, kernels and arguments change every launch
    config.cpu_threads = 3
    rng = np.random.default_rng(1)
    for k in range(60):
        n = int(rng.integers(cpu.MIN_PARALLEL, 40_000))
        if k % 2:
            runs = wp.zeros(n, dtype=wp.int32)
            wp.launch(count_runs, n, inputs=[runs])
            np.testing.assert_array_equal(runs.numpy(), np.ones(n, np.int32))
        else:
            out = wp.full(n + 5, -1, dtype=wp.int32)
            wp.launch(write_index, n, inputs=[out, k])
            np.testing.assert_array_equal(out.numpy()[:n], np.arange(n, dtype=np.int32) + k)
            np.testing.assert_array_equal(out.numpy()[n:], np.full(5, -1, np.int32))


def test_pool_results_have_the_bits_of_one_thread(pool_kind):
    n = 50_001
    x = wp.array(np.linspace(-3.0, 3.0, n, dtype=np.float32))
    results = []
    for threads in (1, 2, 3, 5):
        config.cpu_threads = threads
        y = wp.zeros(n, dtype=float)
        wp.launch(math_chain, n, inputs=[x, y])
        results.append(y.numpy().copy())
    for r in results[1:]:
        np.testing.assert_array_equal(r.view(np.int32), results[0].view(np.int32))


def test_launches_from_two_python_threads(pool_kind):
    # the pool runs one launch at a time; a launch that finds it busy runs on its own thread
    config.cpu_threads = 2
    n = 20_000
    failures = []

    def work(offset):
        try:
            for _ in range(40):
                out = wp.zeros(n, dtype=wp.int32)
                wp.launch(write_index, n, inputs=[out, offset])
                if not np.array_equal(out.numpy(), np.arange(n, dtype=np.int32) + offset):
                    failures.append(offset)
        except Exception as e:  # reported below
            failures.append(repr(e))

    workers = [threading.Thread(target=work, args=(o,)) for o in (0, 1000)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert failures == []


def test_pool_resized_and_closed(pool_kind):
    n = 40_000
    for threads in (2, 4, 3, 2):
        config.cpu_threads = threads
        runs = wp.zeros(n, dtype=wp.int32)
        wp.launch(count_runs, n, inputs=[runs])
        np.testing.assert_array_equal(runs.numpy(), np.ones(n, np.int32))
        assert cpu._pool.size == threads and cpu._pool.kind == pool_kind


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_starts_its_own_pool(pool_kind):
    config.cpu_threads = 2
    n = 40_000
    wp.launch(count_runs, n, inputs=[wp.zeros(n, dtype=wp.int32)])  # the parent's pool exists
    pid = os.fork()
    if pid == 0:  # the child: none of the parent's workers; a parallel launch still runs every thread once
        ok = False
        try:
            runs = wp.zeros(n, dtype=wp.int32)
            wp.launch(count_runs, n, inputs=[runs])
            ok = bool((runs.numpy() == 1).all()) and cpu._pool.size == 2
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0


def _pool_runs(monkeypatch) -> list:
    runs = []
    for pool in (cpu._Pool, cpu._NativePool):
        def counting(self, *args, real=pool.run):
            runs.append(self.size)
            return real(self, *args)

        monkeypatch.setattr(pool, "run", counting)
    return runs


def test_python_pool_keeps_its_larger_minimum(monkeypatch):
    # handing a launch to the Python pool costs 25-135 us: launches below PYTHON_POOL_MIN_PARALLEL stay on the
    # calling thread even with an explicit thread count; the native pool takes them from MIN_PARALLEL
    saved = config.cpu_threads
    try:
        config.cpu_threads = 2
        runs = _pool_runs(monkeypatch)
        n = cpu.MIN_PARALLEL * 2
        assert n < cpu.PYTHON_POOL_MIN_PARALLEL
        x = wp.zeros(n, dtype=float)
        monkeypatch.setattr(cpu, "POOL_KIND", "python")
        wp.launch(add_one, n, inputs=[x])
        assert runs == []
        monkeypatch.setattr(cpu, "POOL_KIND", "native")
        wp.launch(add_one, n, inputs=[x])
        assert runs == [2]
        np.testing.assert_array_equal(x.numpy(), np.full(n, 2.0, np.float32))
    finally:
        config.cpu_threads = saved


def test_atomics_slower_on_every_core_go_back_to_one_then_probe(monkeypatch, automatic_two_cores):
    # a kernel with atomics whose parallel launch took longer per thread than its serial copy runs on the calling
    # thread, and tries the pool again every 2, 4, 8, ... launches while the pool stays slower (so does any kernel
    # whose parallel launches are slower: the other cores busy elsewhere)
    n = cpu.MIN_PARALLEL * 2
    x, total = wp.array(np.ones(n, np.float32)), wp.zeros(7, dtype=float)
    wp.launch(bump, 1, inputs=[x, total])
    kernel = bump.compiled(wp.get_device("cpu"))
    assert kernel.serial is not kernel.entry
    pattern = []

    def parallel(threads, args_ptr, total_threads):  # pinned: 10 ns a thread on the pool
        pattern.append("P")
        kernel.entry(args_ptr, 0, total_threads)
        kernel.parallel_ns = 10.0

    monkeypatch.setattr(kernel, "_parallel", parallel)
    _record_serial_runs(monkeypatch, kernel, pattern)
    monkeypatch.setattr(cpu.time, "perf_counter_ns", iter(range(0, 10**9, n)).__next__)  # 1 ns a thread
    kernel.ns_per_thread, kernel.parallel_ns, kernel._probe, kernel._probe_every = None, None, 0, 1
    for _ in range(16):
        wp.launch(bump, n, inputs=[x, total])
    # nothing measured: the pool; then the serial copy measures (1 ns a thread); the pool stays slower: it is
    # tried again every 2, 4, 8 launches, two launches in a row each time (the first also moves the data)
    assert "".join(pattern) == "Ps" + "PP" + "sPP" + "sssPP" + "ssss", "".join(pattern)
    assert kernel._probe_every == 8
    kernel._probe_every = cpu.PROBE_MAX
    kernel._probe = 1
    wp.launch(bump, n, inputs=[x, total])  # a probe: still slower, twice
    wp.launch(bump, n, inputs=[x, total])
    assert kernel._probe_every == cpu.PROBE_MAX and pattern[-2:] == ["P", "P"]
    np.testing.assert_array_equal(total.numpy().sum(), np.float32(18 * n + 1))


@wp.kernel
def long_threads(y: wp.array(dtype=float), steps: int):
    i = wp.tid()
    v = float(0.0)
    for s in range(steps):
        v = v * 0.5 + float(i)
    y[i] = v


def test_chunks_of_expensive_threads():
    # launches cut at CHUNK_ALIGN unless the kernel calls no libmvec function; MIN_CHUNK threads a chunk unless
    # each thread is worth more than CHUNK_NS / MIN_CHUNK
    assert cpu.chunk_size(1024, 2) == cpu.MIN_CHUNK
    assert cpu.chunk_size(1024, 2, 1, align=1, min_chunk=1) == 1024 // (2 * cpu.CHUNKS_PER_THREAD)
    assert cpu.chunk_size(1000, 2, 1, align=1, min_chunk=100) == 100
    assert cpu.chunk_size(1000, 2, 1, align=64, min_chunk=100) == 128
    assert cpu.chunk_size(64 * 50, 2, 50, align=1, min_chunk=1) == 200  # whole rows of 50


def test_each_thread_gets_as_many_chunks():
    # 10,000 threads in MIN_CHUNK pieces would be 5 chunks: 4,096 and 5,904 threads, the fifth taken by whoever is
    # done first. Six of 1,667 give each of two threads its half; where the alignment forbids it, MIN_CHUNK stays.
    assert cpu.chunk_size(10_000, 2, 1, align=1) == 1667
    assert -(-10_000 // 1667) == 6
    assert cpu.chunk_size(10_000, 2, 1, align=1024) == cpu.MIN_CHUNK
    assert cpu.chunk_size(3 * cpu.MIN_CHUNK, 4, 1, align=1) == cpu.MIN_CHUNK  # fewer chunks than threads: as cut
    for total in (5_000, 10_000, 50_001, 123_457):
        for size in (2, 3, 4):
            count = -(-total // cpu.chunk_size(total, size, 1, align=1))
            assert count <= size or count % size == 0


def test_only_libmvec_kernels_align_their_chunks():
    from mlwarp.compiler.targets.cpu.cpu_vector_math import host_isas

    device = wp.get_device("cpu")
    n = 64
    x, y = wp.array(np.linspace(-1, 1, n, dtype=np.float32)), wp.zeros(n, dtype=float)
    wp.launch(math_chain, n, inputs=[x, y])
    wp.launch(add_one, n, inputs=[x])
    chain, plain = math_chain.compiled(device), add_one.compiled(device)
    assert plain.align == 1 and plain.meta["vector_libm"] is False
    assert chain.meta["vector_libm"] is bool(host_isas())
    assert chain.align == (cpu.CHUNK_ALIGN if chain.meta["vector_libm"] else 1)


def test_small_launch_of_expensive_threads_goes_to_the_pool(monkeypatch):
    # fewer than MIN_PARALLEL threads, each pinned at 1 ms: the first launch runs on the calling thread and is
    # timed, the next ones on the pool, in chunks of a few threads; a cheap kernel's small launches stay on the
    # calling thread, the first SMALL_LAUNCHES_TIMED of them timed, the rest straight from launch_plan's fast path
    monkeypatch.delenv("MLWARP_NUM_THREADS", raising=False)
    monkeypatch.setattr(cpu, "_CPU_COUNT", 2)
    monkeypatch.setattr(cpu, "POOL_KIND", "native")
    saved = config.cpu_threads
    config.cpu_threads = 0
    try:
        n, steps = 64, 200
        y = wp.zeros(n, dtype=float)
        wp.launch(long_threads, n, inputs=[y, 1])  # compiled; then its timing state starts afresh
        kernel = long_threads.compiled(wp.get_device("cpu"))
        kernel.ns_per_thread, kernel.parallel_ns = None, None
        kernel.min_parallel, kernel.serial_below, kernel._small_timed = cpu.MIN_PARALLEL, 0, 0
        runs = _pool_runs(monkeypatch)
        chunks = []
        real_chunk_size = cpu.chunk_size
        monkeypatch.setattr(cpu, "chunk_size", lambda *a: chunks.append(real_chunk_size(*a)) or chunks[-1])
        monkeypatch.setattr(cpu.time, "perf_counter_ns", iter(range(0, 10**15, n * 1_000_000)).__next__)
        wp.launch(long_threads, n, inputs=[y, steps])
        assert runs == [] and kernel.min_parallel == 2 and kernel._small_timed == 1
        wp.launch(long_threads, n, inputs=[y, steps])
        assert runs == [2] and chunks == [n // (2 * cpu.CHUNKS_PER_THREAD)]
        i = np.arange(n, dtype=np.float64)
        np.testing.assert_allclose(y.numpy(), 2.0 * i * (1.0 - 0.5 ** steps), rtol=1e-6)

        monkeypatch.setattr(cpu.time, "perf_counter_ns", iter(range(0, 10**15, n)).__next__)  # 1 ns a thread
        kernel.min_parallel, kernel._small_timed = cpu.MIN_PARALLEL, 0
        for k in range(cpu.SMALL_LAUNCHES_TIMED + 2):
            wp.launch(long_threads, n, inputs=[y, steps])
            assert kernel._small_timed == min(k + 1, cpu.SMALL_LAUNCHES_TIMED)
        assert runs == [2] and kernel.min_parallel == kernel.serial_below == cpu.MIN_PARALLEL
    finally:
        config.cpu_threads = saved


@wp.kernel
def uneven_threads(y: wp.array(dtype=float), steps: wp.array(dtype=int)):
    i = wp.tid()
    v = float(0.0)
    for s in range(steps[i]):
        v = v * 0.5 + float(i)
    y[i] = v


def test_uneven_kernel_takes_the_pool_from_two_threads(monkeypatch):
    # parallel_from(2): a kernel whose threads cost more or less from launch to launch (a tree build's level, a
    # thread a node) goes to the pool from two threads, in chunks of one thread and up, whatever its measured
    # time per thread (pinned here at 1 ns, which keeps an ordinary kernel's small launches on the calling thread)
    monkeypatch.delenv("MLWARP_NUM_THREADS", raising=False)
    monkeypatch.setattr(cpu, "_CPU_COUNT", 2)
    monkeypatch.setattr(cpu, "POOL_KIND", "native")
    saved = config.cpu_threads
    config.cpu_threads = 0
    try:
        y = wp.zeros(64, dtype=float)
        steps = wp.array(np.r_[[5000, 1], np.full(62, 3)].astype(np.int32))
        wp.launch(uneven_threads, 1, inputs=[y, steps])  # compiled
        kernel = uneven_threads.compiled(wp.get_device("cpu"))
        kernel.ns_per_thread, kernel.parallel_ns = 1.0, None
        kernel.parallel_from(2)
        runs = _pool_runs(monkeypatch)
        chunks = []
        real_chunk_size = cpu.chunk_size
        monkeypatch.setattr(cpu, "chunk_size", lambda *a: chunks.append(real_chunk_size(*a)) or chunks[-1])
        monkeypatch.setattr(cpu.time, "perf_counter_ns", iter(range(0, 10**15, 1000)).__next__)
        wp.launch(uneven_threads, 1, inputs=[y, steps])
        assert runs == []
        wp.launch(uneven_threads, 2, inputs=[y, steps])
        assert runs == [2] and chunks == [1]
        wp.launch(uneven_threads, 64, inputs=[y, steps])
        assert runs == [2, 2] and chunks[-1] == 64 // (2 * cpu.CHUNKS_PER_THREAD)
        assert kernel.min_parallel == kernel.serial_below == 2  # (the measured times move neither)
        i = np.arange(64, dtype=np.float64)
        want = 2.0 * i * (1.0 - 0.5 ** steps.numpy().astype(np.float64))
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)
    finally:
        config.cpu_threads = saved


@wp.kernel
def print_thread(steps: int):
    i = wp.tid()
    v = float(0.0)
    for s in range(steps):
        v = v * 0.5 + 1.0
    print(i)


def test_small_launches_of_a_printing_kernel_keep_their_thread_order(monkeypatch, capfd):
    # however expensive its threads, a kernel that prints runs small launches on the calling thread: the lines
    # come in thread order, as in Warp
    monkeypatch.delenv("MLWARP_NUM_THREADS", raising=False)
    monkeypatch.setattr(cpu, "_CPU_COUNT", 2)
    monkeypatch.setattr(cpu, "POOL_KIND", "native")
    saved = config.cpu_threads
    config.cpu_threads = 0
    try:
        n = 40
        wp.launch(print_thread, n, inputs=[1])
        kernel = print_thread.compiled(wp.get_device("cpu"))
        assert kernel.meta["prints"] is True and add_one.compiled(wp.get_device("cpu")).meta["prints"] is False
        runs = _pool_runs(monkeypatch)
        monkeypatch.setattr(cpu.time, "perf_counter_ns", iter(range(0, 10**15, n * 1_000_000)).__next__)
        capfd.readouterr()
        for _ in range(cpu.SMALL_LAUNCHES_TIMED + 2):
            wp.launch(print_thread, n, inputs=[100])
        assert runs == [] and kernel.min_parallel == cpu.MIN_PARALLEL
        lines = capfd.readouterr().out.split()
        assert lines == [str(i) for i in range(n)] * (cpu.SMALL_LAUNCHES_TIMED + 2)
    finally:
        config.cpu_threads = saved


def test_spin_time_from_the_environment(monkeypatch):
    monkeypatch.delenv("MLWARP_CPU_SPIN_US", raising=False)
    assert cpu_pool.spin_ns() == cpu_pool.SPIN_NS
    monkeypatch.setenv("MLWARP_CPU_SPIN_US", "50")
    assert cpu_pool.spin_ns() == 50_000
    monkeypatch.setenv("MLWARP_CPU_SPIN_US", "0")
    assert cpu_pool.spin_ns() == 0


def test_native_pool_size_limits():
    lib = cpu_pool.library()
    if lib is None:
        pytest.skip(f"no native pool here: {cpu_pool.library_error()}")
    with pytest.raises(ValueError, match=r"the native CPU pool runs 1 to 1024 threads, not 0"):
        cpu_pool.NativePool(0, lib)
    with pytest.raises(ValueError, match=r"the native CPU pool runs 1 to 1024 threads, not 1025"):
        cpu_pool.NativePool(1025, lib)


def test_a_pool_library_that_does_not_build_warns_and_the_python_pool_runs(monkeypatch, tmp_path):
    if not cpu_pool.supported():
        pytest.skip("the native pool is x86-64 Linux's: elsewhere the Python pool runs without a warning")

    def broken(path):
        raise OSError("no linker here")

    monkeypatch.setattr(cpu_pool, "_build", broken)
    monkeypatch.setattr(cpu_pool, "_library", None)
    monkeypatch.setattr(cpu_pool, "_library_error", None)
    monkeypatch.setattr(cpu_pool, "_key", lambda: "test-broken-build")
    monkeypatch.setattr(cpu, "POOL_KIND", None)
    monkeypatch.delenv("MLWARP_CPU_POOL", raising=False)
    monkeypatch.setenv("MLWARP_CACHE_DIR", str(tmp_path))
    with pytest.warns(RuntimeWarning, match=r"the native CPU thread pool could not be built \(OSError: no linker "
                                             r"here\); parallel CPU launches use the Python pool"):
        assert cpu.pool_kind() == "python"
    assert cpu_pool.library_error() == "OSError: no linker here"
    saved = config.cpu_threads
    try:
        config.cpu_threads = 2
        n = cpu.PYTHON_POOL_MIN_PARALLEL + 5
        runs = wp.zeros(n, dtype=wp.int32)
        wp.launch(count_runs, n, inputs=[runs])
        np.testing.assert_array_equal(runs.numpy(), np.ones(n, np.int32))
        assert cpu._pool.kind == "python"
    finally:
        config.cpu_threads = saved
        monkeypatch.setattr(cpu, "POOL_KIND", None)


def test_a_pool_slower_than_one_thread_is_left_then_probed(monkeypatch, automatic_two_cores):
    # no atomics: the other cores busy elsewhere make the pool slower per thread than the calling thread alone
    n = cpu.MIN_PARALLEL * 2
    x = wp.zeros(n, dtype=float)
    wp.launch(add_one, 1, inputs=[x])
    kernel = add_one.compiled(wp.get_device("cpu"))
    assert kernel.serial is kernel.entry
    pattern = []

    def parallel(threads, args_ptr, total_threads):  # pinned: 10 ns a thread on the pool, 1 ns on one
        pattern.append("P")
        kernel.entry(args_ptr, 0, total_threads)
        kernel.parallel_ns, kernel.ns_per_thread = 10.0, 1.0

    monkeypatch.setattr(kernel, "_parallel", parallel)
    _record_serial_runs(monkeypatch, kernel, pattern)
    kernel.ns_per_thread, kernel.parallel_ns, kernel._probe, kernel._probe_every = None, None, 0, 1
    for _ in range(8):
        wp.launch(add_one, n, inputs=[x])
    # nothing measured: the pool; it was slower: tried again at once, then every 2, 4 launches, two launches in
    # a row each time
    assert "".join(pattern) == "PPP" + "sPP" + "ss", "".join(pattern)
    np.testing.assert_array_equal(x.numpy()[:3], np.array([9.0, 8.0, 8.0], np.float32))


def test_a_probe_judges_the_pool_on_its_second_launch(monkeypatch, automatic_two_cores):
    # after launches on the calling thread, the pool's first launch also moves the data that thread wrote to the
    # other cores: slower than one thread there, faster from the next launch on. The probe's second launch
    # decides, and the kernel goes back to the pool (judged on the first, it stayed on one thread)
    n = cpu.MIN_PARALLEL * 2
    x = wp.zeros(n, dtype=float)
    wp.launch(add_one, 1, inputs=[x])
    kernel = add_one.compiled(wp.get_device("cpu"))
    pattern = []

    def parallel(threads, args_ptr, total_threads):  # 10 ns a thread after serial runs, 0.5 ns after its own
        kernel.parallel_ns = 10.0 if pattern[-1:] != ["P"] else 0.5
        pattern.append("P")
        kernel.entry(args_ptr, 0, total_threads)

    monkeypatch.setattr(kernel, "_parallel", parallel)
    _record_serial_runs(monkeypatch, kernel, pattern)
    # the pool judged slower (a busy moment), 1 ns a thread on one: on the calling thread, probing in 2
    kernel.ns_per_thread, kernel.parallel_ns, kernel._probe, kernel._probe_every = 1.0, 10.0, 2, 2
    kernel._recheck = kernel._recheck_every = 100  # (no serial re-measure among these launches)
    monkeypatch.setattr(cpu.time, "perf_counter_ns", iter(range(0, 10**9, n)).__next__)  # 1 ns a thread
    for _ in range(6):
        wp.launch(add_one, n, inputs=[x])
    assert "".join(pattern) == "s" + "PP" + "PPP", "".join(pattern)
    assert kernel._probe_every == 1
    np.testing.assert_array_equal(x.numpy()[:2], np.array([7.0, 6.0], np.float32))


def test_a_faster_pool_still_measures_the_serial_copy_now_and_then(monkeypatch, automatic_two_cores):
    # parallel launches of a kernel with a serial copy do not measure that copy: it runs again every 2, 4, 8, ...
    # launches, so one slow serial run does not keep the pool once one thread is faster again
    n = cpu.MIN_PARALLEL * 2
    x, total = wp.array(np.ones(n, np.float32)), wp.zeros(7, dtype=float)
    wp.launch(bump, 1, inputs=[x, total])
    kernel = bump.compiled(wp.get_device("cpu"))
    pattern = []

    def parallel(threads, args_ptr, total_threads):  # pinned: 0.1 ns a thread on the pool
        pattern.append("P")
        kernel.entry(args_ptr, 0, total_threads)
        kernel.parallel_ns = 0.1

    monkeypatch.setattr(kernel, "_parallel", parallel)
    _record_serial_runs(monkeypatch, kernel, pattern)
    monkeypatch.setattr(cpu.time, "perf_counter_ns", iter(range(0, 10**9, n)).__next__)  # 1 ns a thread
    kernel.ns_per_thread, kernel.parallel_ns = None, None
    kernel._probe, kernel._probe_every, kernel._recheck, kernel._recheck_every = 0, 1, 1, 1
    for _ in range(16):
        wp.launch(bump, n, inputs=[x, total])
    assert "".join(pattern) == "Ps" + "s" + "Ps" + "PPPs" + "PPPPPPP", "".join(pattern)
    assert kernel._recheck_every == 8
    np.testing.assert_array_equal(total.numpy().sum(), np.float32(16 * n + 1))


def test_cpu_flags_are_the_first_cpus_flags_line():
    """The kernel cache key's host part (and warp-cpu-vector-math's ISA choice) reads these."""
    import os

    from mlwarp.runtime.cpu import cpu_flags

    if not os.path.exists("/proc/cpuinfo"):
        assert cpu_flags() == ()
        return
    with open("/proc/cpuinfo") as f:
        line = next((line for line in f if line.startswith("flags")), None)
    assert cpu_flags() == (tuple(line.split(":", 1)[1].split()) if line else ())
