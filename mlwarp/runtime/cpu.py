"""Loading CPU kernel libraries and running a launch range on a thread pool.

A launch of `total` threads is cut into chunks that the calling thread and the pool's
workers claim one at a time (ctypes releases the GIL during each call). Claiming, rather
than one fixed range per thread, keeps a launch from waiting on a worker whose core is busy
elsewhere: the caller takes the chunks that worker has not claimed. Small launches stay on
the calling thread.

The pool is native (cpu_pool.py: workers that poll for the next launch with the GIL released,
then sleep; a launch costs them 1-2 us while they poll, 4-9 us once they sleep), or, where that
library cannot be built, Python threads blocked on a queue (25-135 us a launch).

Small is measured, not guessed: a launch whose kernel would finish sooner on the calling thread
than handing it over costs (SERIAL_BELOW_NS) stays there. Each kernel keeps its time per thread,
from its serial runs and from the chunks the calling thread runs in parallel ones. A kernel with
atomics also keeps its parallel launches' wall time per thread: atomics that contend can make
every core slower than the serial copy (`<entry>_serial`, plain read-modify-writes) on one, and
then it runs there, trying the pool again every 2, 4, ... 1024 launches. An explicit thread count
(`wp.config.cpu_threads`, $MLWARP_NUM_THREADS) is obeyed for every launch of >= MIN_PARALLEL
threads (PYTHON_POOL_MIN_PARALLEL on the Python pool).
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import itertools
import os
import queue
import struct
import threading
import time

from mlwarp.core.config import config

from . import cpu_pool

ENTRY_ARGTYPES = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]

# Launches smaller than this run on the calling thread (two chunks of MIN_CHUNK). Handing a launch to the
# native pool (cpu_pool.py) costs 1-2 us when its workers are polling (within SPIN_NS of the last launch),
# 4-9 us once they sleep (a futex wake-up), on a 2-core VM; the Python pool, where the native one cannot be
# built, 25-135 us, and keeps the larger limits below.
MIN_PARALLEL = 1 << 12
PYTHON_POOL_MIN_PARALLEL = 1 << 15
# With the automatic thread count, a launch expected to take less than this on one thread stays there.
SERIAL_BELOW_NS = 20_000
PYTHON_POOL_SERIAL_BELOW_NS = 250_000
# Chunks per thread (more: better balance on a busy machine) and the smallest chunk worth a claim.
CHUNKS_PER_THREAD = 8
MIN_CHUNK = 1 << 11
# Chunks start at multiples of this, a multiple of every vector loop's step (lanes x unroll), or at
# row starts: each thread then runs in the vector body or the scalar remainder whatever the thread
# count, and a vectorised libm call (warp-cpu-vector-math) gives the same bits as on one thread.
CHUNK_ALIGN = 1 << 10


def num_threads() -> int:
    """wp.config.cpu_threads, else $MLWARP_NUM_THREADS, else os.cpu_count()."""
    return _thread_count()[0]


def _thread_count() -> tuple:
    """(threads, whether the user set the count)."""
    n = config.cpu_threads or int(os.environ.get("MLWARP_NUM_THREADS", "0") or 0)
    return (max(1, n), True) if n else (_CPU_COUNT, False)


_CPU_COUNT = max(1, os.cpu_count() or 1)  # os.cpu_count() reads /sys on each call: ~10 us a launch


@functools.lru_cache(maxsize=None)
def cpu_flags() -> tuple:
    """This CPU's feature flags (/proc/cpuinfo), () where there is none."""
    try:
        with open("/proc/cpuinfo") as f:
            return tuple(next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), ()))
    except OSError:
        return ()


class _Job:
    """One parallel launch: chunks [k*chunk, (k+1)*chunk) claimed through an atomic counter."""

    __slots__ = ("fn", "args", "total", "chunk", "chunks", "claim", "finish", "done", "first_ns")

    def __init__(self, fn, args, total, chunk):
        self.fn, self.args, self.total, self.chunk = fn, args, total, chunk
        self.chunks = (total + chunk - 1) // chunk
        self.claim = itertools.count()  # next() is atomic under the GIL
        self.finish = itertools.count(1)
        self.done = threading.Event()
        self.first_ns = None  # ns per thread of the calling thread's first chunk

    def work(self, timed: bool = False) -> None:
        fn, args, total, chunk = self.fn, self.args, self.total, self.chunk
        while True:
            k = next(self.claim)
            if k >= self.chunks:
                return
            begin = k * chunk
            end = min(begin + chunk, total)
            t = time.perf_counter_ns() if timed else 0
            try:
                fn(args, begin, end)
            finally:
                if timed:
                    self.first_ns, timed = (time.perf_counter_ns() - t) / (end - begin), False
                if next(self.finish) == self.chunks:
                    self.done.set()


def chunk_size(total: int, size: int, row: int = 1) -> int:
    """The chunk a launch of `total` threads on `size` threads is cut in: CHUNKS_PER_THREAD per thread, at
    least MIN_CHUNK, starting at multiples of CHUNK_ALIGN or at row starts."""
    chunk = max(MIN_CHUNK, -(-total // (size * CHUNKS_PER_THREAD)))
    # whole rows, unless a row is longer than a thread's share (then rows are cut, and only rows of a
    # multiple of CHUNK_ALIGN elements keep their bits whatever the thread count)
    align = row if 1 < row <= total // size else CHUNK_ALIGN
    return -(-chunk // align) * align


class _Pool:
    """The Python pool, where the native one (cpu_pool.py) cannot be built: `size - 1` daemon workers
    blocked on a queue; the calling thread is the last one."""

    def __init__(self, size: int):
        self.size = size
        self.jobs = queue.SimpleQueue()
        for i in range(size - 1):
            threading.Thread(target=self._worker, name=f"mlwarp-cpu-{i}", daemon=True).start()

    def _worker(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            job.work()

    def run(self, fn, address, args, total: int, row: int = 1) -> float | None:
        """`row`: the length of the rows warp-cpu-entry loops over (1 for a 1-d launch). Returns the time per
        thread of the first chunk the calling thread ran, in ns."""
        job = _Job(fn, args, total, chunk_size(total, self.size, row))
        for _ in range(min(self.size - 1, job.chunks - 1)):
            self.jobs.put(job)
        job.work(timed=True)
        job.done.wait()
        return job.first_ns

    def close(self) -> None:
        for _ in range(self.size - 1):
            self.jobs.put(None)


class _NativePool(cpu_pool.NativePool):
    def run(self, fn, address, args, total: int, row: int = 1) -> float | None:
        ns = super().run(address, args, total, chunk_size(total, self.size, row))
        if ns is False:  # another thread's launch holds the pool: this one runs here
            fn(args, 0, total)
            return None
        return ns


_pool = None
_pool_lock = threading.Lock()
# the pool kind: "native" (cpu_pool.py) where its library builds, else "python"; $MLWARP_CPU_POOL=python forces
# the Python pool
POOL_KIND = None


def pool_kind() -> str:
    global POOL_KIND
    if POOL_KIND is None:
        wanted = os.environ.get("MLWARP_CPU_POOL", "native")
        POOL_KIND = "native" if wanted != "python" and cpu_pool.library() is not None else "python"
    return POOL_KIND


def _get_pool(n: int):
    global _pool
    with _pool_lock:
        kind = pool_kind()
        if _pool is None or _pool.size != n or _pool.kind != kind:
            if _pool is not None:
                _pool.close()
            native = kind == "native" and n <= cpu_pool.MAX_PARTICIPANTS
            _pool = _NativePool(n, cpu_pool.library()) if native else _Pool(n)
            _pool.kind = kind
        return _pool


@atexit.register
def _close_pool() -> None:
    """Ends the workers before the interpreter finalizes (they poll the pool's memory)."""
    with _pool_lock:
        if _pool is not None:
            _pool.close()


def _forget_pool_in_child() -> None:
    """A forked child has none of the parent's workers: its first parallel launch starts a pool."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool_in_child)


class CpuKernel:
    """The entry point `<name>_cpu(args, begin, end)` of a compiled kernel library."""

    def __init__(self, library_path: str, entry: str):
        t = time.perf_counter()
        self.library = ctypes.CDLL(library_path)
        self.entry = self._function(entry)
        self.address = ctypes.cast(self.entry, ctypes.c_void_p).value  # for the native pool
        # `<entry>_serial` (kernels with atomics): plain read-modify-writes, for runs on one thread
        try:
            self.serial = self._function(entry + "_serial")
        except AttributeError:
            self.serial = self.entry
        self.load_ms = (time.perf_counter() - t) * 1e3  # MLWARP_TIMINGS prints it as the "load" stage
        self.ns_per_thread = None  # measured on the calling thread: what a serial launch would cost
        self.parallel_ns = None  # a parallel launch's wall time per thread, the last one measured
        self._probe, self._probe_every = 0, 1
        self.deterministic = False  # run every launch on the calling thread (wp.DeterministicMode)

    def _function(self, name):
        f = getattr(self.library, name)
        f.argtypes = ENTRY_ARGTYPES
        f.restype = None
        return f

    def run(self, args_ptr, total: int) -> None:
        """Runs threads [0, total); `args_ptr` is the launch struct's address (or a buffer holding it)."""
        if total < MIN_PARALLEL or self.deterministic:  # deterministic: Warp's DeterministicMode
            self.serial(args_ptr, 0, total)
            return
        threads, explicit = _thread_count()
        if threads > 1:
            if explicit:
                if (POOL_KIND or pool_kind()) == "native" or total >= PYTHON_POOL_MIN_PARALLEL:
                    self._parallel(threads, args_ptr, total)
                else:
                    self.serial(args_ptr, 0, total)
                return
            native = (POOL_KIND or pool_kind()) == "native"
            if native or total >= PYTHON_POOL_MIN_PARALLEL:
                estimate = self.ns_per_thread
                if estimate is None:  # nothing measured: the pool (the serial copy next, for a kernel with one)
                    if self.parallel_ns is None or self.serial is self.entry:
                        self._parallel(threads, args_ptr, total)
                        return
                elif estimate * total >= (SERIAL_BELOW_NS if native else PYTHON_POOL_SERIAL_BELOW_NS):
                    if self.parallel_ns is None or self.serial is self.entry or self.parallel_ns < estimate:
                        self._parallel(threads, args_ptr, total)
                        return
                    # atomics that ran slower on every core than the serial copy on one: probe again now and
                    # then (every 2, 4, ... 1024 launches while it stays slower)
                    self._probe -= 1
                    if self._probe <= 0:
                        self._parallel(threads, args_ptr, total)
                        faster = self.parallel_ns < estimate
                        self._probe_every = 1 if faster else min(2 * self._probe_every, 1024)
                        self._probe = self._probe_every
                        return
        t = time.perf_counter_ns()
        self.serial(args_ptr, 0, total)
        self.ns_per_thread = (time.perf_counter_ns() - t) / total

    def _parallel(self, threads: int, args_ptr, total: int) -> None:
        t = time.perf_counter_ns()
        measured = _get_pool(threads).run(self.entry, self.address, args_ptr, total, _row(args_ptr))
        self.parallel_ns = (time.perf_counter_ns() - t) / total
        if self.serial is self.entry:  # the entry is what a serial run runs
            # the calling thread's first chunk; the workers took them all: at most the wall time on each thread
            self.ns_per_thread = measured if measured is not None else self.parallel_ns * threads


def _row(args_ptr) -> int:
    """The launch's innermost dimension past the first, 1 for a 1-d launch: the launch struct starts
    with the four launch dimensions, 1 past the launch's own."""
    dims = (ctypes.c_int64 * 4).from_address(args_ptr) if isinstance(args_ptr, int) else \
        struct.unpack_from("@4q", args_ptr)
    return next((d for d in reversed(dims[1:]) if d != 1), 1)
