"""Loading CPU kernel libraries and running a launch range on a thread pool."""

from __future__ import annotations

import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor

ENTRY_ARGTYPES = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]

# Launches smaller than this run on the calling thread: handing work to the pool costs more.
MIN_PARALLEL = 1 << 15

_pool = None
_pool_size = 0
_pool_lock = threading.Lock()


def num_threads() -> int:
    from mlwarp.config import config

    n = config.cpu_threads or int(os.environ.get("MLWARP_NUM_THREADS", "0") or 0) or os.cpu_count() or 1
    return max(1, n)


def _get_pool(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size != n:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=n - 1, thread_name_prefix="mlwarp-cpu") if n > 1 else None
            _pool_size = n
        return _pool


class CpuKernel:
    """The entry point `<name>_cpu(args, begin, end)` of a compiled kernel library."""

    def __init__(self, library_path: str, entry: str):
        self.library = ctypes.CDLL(library_path)
        self.entry = self._function(entry)
        # `<entry>_serial` (kernels with atomics): plain read-modify-writes, for runs on one thread
        try:
            self.serial = self._function(entry + "_serial")
        except AttributeError:
            self.serial = self.entry

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
        pool = _get_pool(threads)
        chunk = (total + threads - 1) // threads
        futures = [pool.submit(self.entry, args_ptr, b, min(b + chunk, total)) for b in range(chunk, total, chunk)]
        self.entry(args_ptr, 0, min(chunk, total))
        for f in futures:
            f.result()
