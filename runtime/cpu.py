"""Loading CPU kernel libraries and running a launch range on a thread pool.

A launch of `total` threads is cut into chunks that the calling thread and the pool's
workers claim one at a time (ctypes releases the GIL during each call). Claiming, rather
than one fixed range per thread, keeps a launch from waiting on a worker whose core is busy
elsewhere: the caller takes the chunks that worker has not claimed. Small launches stay on
the calling thread.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import queue
import threading
import time

ENTRY_ARGTYPES = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]

# Launches smaller than this run on the calling thread: handing work to the pool costs more.
MIN_PARALLEL = 1 << 15
# Chunks per thread (more: better balance on a busy machine) and the smallest chunk worth a call.
CHUNKS_PER_THREAD = 4
MIN_CHUNK = 1 << 13


def num_threads() -> int:
    """wp.config.cpu_threads, else $MLWARP_NUM_THREADS, else os.cpu_count()."""
    from mlwarp.config import config

    n = config.cpu_threads or int(os.environ.get("MLWARP_NUM_THREADS", "0") or 0) or os.cpu_count() or 1
    return max(1, n)


class _Job:
    """One parallel launch: chunks [k*chunk, (k+1)*chunk) claimed through an atomic counter."""

    __slots__ = ("fn", "args", "total", "chunk", "chunks", "claim", "finish", "done")

    def __init__(self, fn, args, total, chunk):
        self.fn, self.args, self.total, self.chunk = fn, args, total, chunk
        self.chunks = (total + chunk - 1) // chunk
        self.claim = itertools.count()  # next() is atomic under the GIL
        self.finish = itertools.count(1)
        self.done = threading.Event()

    def work(self) -> None:
        fn, args, total, chunk = self.fn, self.args, self.total, self.chunk
        while True:
            k = next(self.claim)
            if k >= self.chunks:
                return
            begin = k * chunk
            try:
                fn(args, begin, min(begin + chunk, total))
            finally:
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

    def run(self, fn, args, total: int) -> None:
        chunk = max(MIN_CHUNK, -(-total // (self.size * CHUNKS_PER_THREAD)))
        job = _Job(fn, args, total, chunk)
        for _ in range(min(self.size - 1, job.chunks - 1)):
            self.jobs.put(job)
        job.work()
        job.done.wait()

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

    def _function(self, name):
        f = getattr(self.library, name)
        f.argtypes = ENTRY_ARGTYPES
        f.restype = None
        return f

    def run(self, args_ptr, total: int) -> None:
        """Runs threads [0, total); `args_ptr` is the launch struct's address (or a buffer holding it)."""
        threads = num_threads() if total >= MIN_PARALLEL else 1
        if threads == 1:
            self.serial(args_ptr, 0, total)
            return
        _get_pool(threads).run(self.entry, args_ptr, total)
