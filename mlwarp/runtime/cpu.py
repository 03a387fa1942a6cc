"""Loading CPU kernel libraries and running a launch range on a thread pool.

A launch of `total` threads is cut into chunks that the calling thread and the pool's
workers claim one at a time (ctypes releases the GIL during each call). Claiming, rather
than one fixed range per thread, keeps a launch from waiting on a worker whose core is busy
elsewhere: the caller takes the chunks that worker has not claimed. Small launches stay on
the calling thread.

Small is measured, not guessed: handing a launch to the pool costs tens of microseconds (a
worker wakes up), so a launch whose kernel would finish sooner on the calling thread stays
there. Each kernel keeps its time per thread, from its serial runs and from the chunks the
calling thread runs in parallel ones. An explicit thread count (`wp.config.cpu_threads`,
$MLWARP_NUM_THREADS) is obeyed for every launch of >= MIN_PARALLEL threads.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import os
import queue
import struct
import threading
import time

from mlwarp.core.config import config

ENTRY_ARGTYPES = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]

# Launches smaller than this run on the calling thread: handing work to the pool costs more.
MIN_PARALLEL = 1 << 15
# With the automatic thread count, a launch expected to take less than this on one thread stays there.
SERIAL_BELOW_NS = 250_000
# Chunks per thread (more: better balance on a busy machine) and the smallest chunk worth a call.
CHUNKS_PER_THREAD = 4
MIN_CHUNK = 1 << 13
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


class _Pool:
    """`size - 1` daemon workers; the calling thread is the last one."""

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

    def run(self, fn, args, total: int, row: int = 1) -> float | None:
        """`row`: the length of the rows warp-cpu-entry loops over (1 for a 1-d launch). Returns the time per
        thread of the first chunk the calling thread ran, in ns."""
        chunk = max(MIN_CHUNK, -(-total // (self.size * CHUNKS_PER_THREAD)))
        # whole rows, unless a row is longer than a thread's share (then rows are cut, and only rows of a
        # multiple of CHUNK_ALIGN elements keep their bits whatever the thread count)
        align = row if 1 < row <= total // self.size else CHUNK_ALIGN
        chunk = -(-chunk // align) * align
        job = _Job(fn, args, total, chunk)
        for _ in range(min(self.size - 1, job.chunks - 1)):
            self.jobs.put(job)
        job.work(timed=True)
        job.done.wait()
        return job.first_ns

    def close(self) -> None:
        for _ in range(self.size - 1):
            self.jobs.put(None)


_pool = None
_pool_lock = threading.Lock()


def _get_pool(n: int) -> _Pool:
    global _pool
    with _pool_lock:
        if _pool is None or _pool.size != n:
            if _pool is not None:
                _pool.close()
            _pool = _Pool(n)
        return _pool


class CpuKernel:
    """The entry point `<name>_cpu(args, begin, end)` of a compiled kernel library."""

    def __init__(self, library_path: str, entry: str):
        t = time.perf_counter()
        self.library = ctypes.CDLL(library_path)
        self.entry = self._function(entry)
        # `<entry>_serial` (kernels with atomics): plain read-modify-writes, for runs on one thread
        try:
            self.serial = self._function(entry + "_serial")
        except AttributeError:
            self.serial = self.entry
        self.load_ms = (time.perf_counter() - t) * 1e3  # MLWARP_TIMINGS prints it as the "load" stage
        self.ns_per_thread = None  # measured on the calling thread: what a serial launch would cost
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
        estimate = self.ns_per_thread
        if threads == 1 or not explicit and estimate is not None and estimate * total < SERIAL_BELOW_NS:
            t = time.perf_counter_ns()
            self.serial(args_ptr, 0, total)
            self.ns_per_thread = (time.perf_counter_ns() - t) / total
            return
        measured = _get_pool(threads).run(self.entry, args_ptr, total, _row(args_ptr))
        if measured is not None:
            self.ns_per_thread = measured


def _row(args_ptr) -> int:
    """The launch's innermost dimension past the first, 1 for a 1-d launch: the launch struct starts
    with the four launch dimensions, 1 past the launch's own."""
    dims = (ctypes.c_int64 * 4).from_address(args_ptr) if isinstance(args_ptr, int) else \
        struct.unpack_from("@4q", args_ptr)
    return next((d for d in reversed(dims[1:]) if d != 1), 1)
