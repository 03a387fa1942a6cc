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
than handing it over costs (SERIAL_BELOW_NS) stays there. A launch of fewer than MIN_PARALLEL threads
stays there too, unless its kernel's threads are expensive (a tile kernel's blocks, a thread with its own
long loop): the first small launches are timed, and a kernel whose threads take longer than
SERIAL_BELOW_NS / MIN_PARALLEL each goes to the pool from the thread count that is worth it, in chunks of
at least CHUNK_NS of work. Each kernel keeps its time per thread,
from its serial runs and from the chunks the calling thread runs in parallel ones, and its last
parallel launch's wall time per thread: when that was slower than one thread (atomics that
contend, against the serial copy `<entry>_serial`'s plain read-modify-writes; other cores busy
with other work), it runs on the calling thread, trying the pool again every 2, 4, ... PROBE_MAX
launches, for two launches in a row when the first is slower (it also moved the data the calling
thread wrote to the other cores). An explicit thread count
(`wp.config.cpu_threads`, $MLWARP_NUM_THREADS) is obeyed for every launch of >= MIN_PARALLEL
threads (fewer for expensive threads, as above; PYTHON_POOL_MIN_PARALLEL on the Python pool).
"""

from __future__ import annotations

import atexit
import ctypes
import itertools
import os
import queue
import struct
import threading
import time

from mlwarp.core.config import config
from mlwarp.core.host import cpu_flags  # noqa: F401  (where the API and the tests read it)

from . import cpu_pool, launch_needs
from .process_threads import PROCESS

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
# A kernel whose parallel launches are slower than one thread tries the pool again after at most this many launches.
PROBE_MAX = 256
# Chunks per thread (more: better balance on a busy machine) and the smallest chunk worth a claim.
CHUNKS_PER_THREAD = 8
MIN_CHUNK = 1 << 11
# Chunks start at multiples of this, a multiple of every vector loop's step (lanes x unroll), or at
# row starts: each thread then runs in the vector body or the scalar remainder whatever the thread
# count, and a vectorised libm call (warp-cpu-vector-math) gives the same bits as on one thread. Only
# kernels that call libmvec need it (the build's meta "vector_libm"): every other operation rounds the
# same in a vector lane as in the scalar remainder, so their chunks may start anywhere.
CHUNK_ALIGN = 1 << 10
# The smallest chunk of expensive threads, in ns of one thread's work: claiming one costs ~0.1-1 us.
CHUNK_NS = 20_000
# How many of a kernel's launches of fewer than MIN_PARALLEL threads are timed (the rest are not: a
# small launch costs ~3 us, timing it ~0.1 us).
SMALL_LAUNCHES_TIMED = 3


def num_threads() -> int:
    """wp.config.cpu_threads, else $MLWARP_NUM_THREADS, else os.cpu_count()."""
    return _thread_count()[0]


def _thread_count() -> tuple:
    """(threads, whether the user set the count)."""
    n = config.cpu_threads or int(os.environ.get("MLWARP_NUM_THREADS", "0") or 0)
    return (max(1, n), True) if n else (_CPU_COUNT, False)


_CPU_COUNT = max(1, os.cpu_count() or 1)  # os.cpu_count() reads /sys on each call: ~10 us a launch


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


def chunk_size(total: int, size: int, row: int = 1, align: int = CHUNK_ALIGN, min_chunk: int = MIN_CHUNK) -> int:
    """The chunk a launch of `total` threads on `size` threads is cut in: CHUNKS_PER_THREAD per thread, at
    least `min_chunk` (MIN_CHUNK, less for a kernel whose threads are expensive), starting at multiples of
    `align` (CHUNK_ALIGN, 1 for a kernel without libmvec calls) or at row starts."""
    chunk = max(min_chunk, -(-total // (size * CHUNKS_PER_THREAD)))
    # whole rows, unless a row is longer than a thread's share (then rows are cut, and only rows of a
    # multiple of CHUNK_ALIGN elements keep their bits whatever the thread count)
    align = row if 1 < row <= total // size else align
    chunk = -(-chunk // align) * align
    count = -(-total // chunk)
    if count > size and count % size:
        # as many chunks a thread: each thread's range is its equal share of the launch, with nothing left for
        # another to take (5 chunks of 2,048 on two threads ran 4,096 and 5,904 elements, the last chunk taken
        # by the thread done first: a launch after it over the same elements found that chunk's lines on the
        # other core); chunks with scatter sums landing in the part a thread owns (_Private) match it too
        even = -(-total // (-(-count // size) * size))
        even = -(-even // align) * align
        if -(-total // even) % size == 0:
            chunk = even
    return chunk


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

    def run(self, fn, address, args, total: int, row: int = 1, align: int = CHUNK_ALIGN,
            min_chunk: int = MIN_CHUNK) -> float | None:
        """`row`: the length of the rows warp-cpu-entry loops over (1 for a 1-d launch); `align`, `min_chunk`:
        chunk_size's. Returns the time per thread of the first chunk the calling thread ran, in ns."""
        job = _Job(fn, args, total, chunk_size(total, self.size, row, align, min_chunk))
        for _ in range(min(self.size - 1, job.chunks - 1)):
            self.jobs.put(job)
        job.work(timed=True)
        job.done.wait()
        return job.first_ns

    def close(self) -> None:
        for _ in range(self.size - 1):
            self.jobs.put(None)


class _NativePool(cpu_pool.NativePool):
    def run(self, fn, address, args, total: int, row: int = 1, align: int = CHUNK_ALIGN,
            min_chunk: int = MIN_CHUNK) -> float | None:
        ns = super().run(address, args, total, chunk_size(total, self.size, row, align, min_chunk))
        if ns is False:  # another thread's launch holds the pool: this one runs here
            fn(args, 0, total)
            return None
        return ns

    def run_private(self, address, buffer, total: int, chunk: int, stride: int, order=None):
        """A launch with one launch struct per range (`buffer`, `stride` bytes apart), ranges run in order;
        `order`: the address of the chunk order (None: 0, 1, 2, ...)."""
        return super().run(address, buffer, total, chunk, stride, ordered=True, order=order)

    def reduction(self, type_name: str, data: int, copies) -> tuple:
        """What `reduce` runs to add `copies` (ranges x elements) into the array at `data`."""
        fn = getattr(self.lib, f"mlwarp_reduce_{type_name}")
        args = (ctypes.c_int64 * 4)(data, copies.ctypes.data, copies.shape[0], copies.shape[1])
        return fn, ctypes.cast(fn, ctypes.c_void_p).value, args, copies.shape[1], copies

    def reduce(self, fn, address, args, elements, copies) -> None:
        """array[i] = array[i] + copies[0][i] + copies[1][i] + ... in that order (the copies back to the identity)."""
        if elements < MIN_PARALLEL or super().run(address, args, elements, chunk_size(elements, self.size)) is False:
            fn(args, 0, elements)


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

    def __init__(self, library_path: str, entry: str, vector_libm: bool = True, prints: bool = True):
        """`vector_libm`, `prints`: whether the library calls libmvec, printf (the build's meta; True for an older
        cache entry). A kernel that prints keeps MIN_PARALLEL: its small launches print in thread order."""
        t = time.perf_counter()
        self.library = ctypes.CDLL(library_path)
        # an adjoint library may have no atomic form of its entry, `<entry>_private` only (warp-cpu-privatize-scatter
        # {replace-entry}): it runs with private copies or on one thread, never on several with the arrays shared
        self.atomic = hasattr(self.library, entry) or not hasattr(self.library, entry + "_private")
        self.entry = self._function(entry if self.atomic else entry + "_private")
        # called (with no argument) when a launch ran on one thread for want of the atomic form (autodiff/adjoint.py
        # compiles the library that has it)
        self.on_atomic_needed = None
        self.address = ctypes.cast(self.entry, ctypes.c_void_p).value  # for the native pool
        # `<entry>_serial` (kernels with atomics): plain read-modify-writes, for runs on one thread; where the
        # compiler left it out, `<entry>_private` is that same function (warp-cpu-serial-copy)
        self.serial = self.entry
        for suffix in ("_serial", "_private"):
            try:
                self.serial = self._function(entry + suffix)
                break
            except AttributeError:
                pass
        self.load_ms = (time.perf_counter() - t) * 1e3  # MLWARP_TIMINGS prints it as the "load" stage
        self.ns_per_thread = None  # measured on the calling thread: what a serial launch would cost
        self.parallel_ns = None  # a parallel launch's wall time per thread, the last one measured
        self.align = CHUNK_ALIGN if vector_libm else 1
        # launches of fewer threads run on the calling thread: MIN_PARALLEL, less once timed launches show
        # expensive threads; launch_plan's fast path reads `serial_below` (0 while small launches are timed)
        self.min_parallel = MIN_PARALLEL
        self.serial_below = 0
        self._small_timed = 0
        self._expensive_small = not prints  # whether small launches may go to the pool (none of a printing kernel)
        self._probe, self._probe_every = 0, 1
        self._probe_again = False  # the probe's second parallel launch is next (run's slower-pool branch)
        self._recheck, self._recheck_every = 1, 1
        self.private = _Private.load(self, entry)  # `<entry>_private` (warp-cpu-privatize-scatter), or None
        self.deterministic = False  # run every launch on the calling thread (wp.DeterministicMode)
        self.uneven = False  # threads whose cost varies from launch to launch: see parallel_from()
        # the build's meta "launch_needs": what each launch brings up to date first (launch_needs.py)
        self.launch_needs = ()

    @classmethod
    def from_record(cls, meta: dict, entry: str) -> "CpuKernel":
        """The entry `entry` of the library a build's record (the kernel cache's meta) names, with what the record
        says of it: whether it calls libmvec or printf, what its launches bring up to date first."""
        loaded = cls(os.path.join(meta["dir"], meta["library"]), entry, meta.get("vector_libm", True),
                     meta.get("prints", True))
        loaded.launch_needs = tuple(meta.get("launch_needs", ()))
        return loaded

    def parallel_from(self, threads: int) -> None:
        """Launches of at least `threads` threads go to the pool (with the automatic thread count, more than one),
        whatever this kernel's measured time per thread: for a kernel whose threads cost more or less from launch
        to launch (a tree build's levels: a few nodes of many items each, then many small ones), where one
        launch's time per thread misjudges the next."""
        self.uneven = True
        self._expensive_small = False  # (the measured time no longer moves min_parallel)
        self.min_parallel = self.serial_below = max(1, threads)
        self._small_timed = SMALL_LAUNCHES_TIMED

    def _function(self, name):
        f = getattr(self.library, name)
        f.argtypes = ENTRY_ARGTYPES
        f.restype = None
        return f

    def run(self, args_ptr, total: int) -> None:
        """Runs threads [0, total); `args_ptr` is the launch struct's address (or a buffer holding it)."""
        if self.launch_needs:
            launch_needs.refresh(self.launch_needs)
        process = PROCESS  # (whether the whole process runs faster on one thread: process_threads.py)
        process.countdown -= 1
        if process.countdown <= 0:
            threads, explicit = _thread_count()
            process.step(explicit or threads == 1)
        if process.timing:
            t = time.perf_counter_ns()
            if process.serial:
                self.serial(args_ptr, 0, total)
            else:
                self._run_own_choice(args_ptr, total)
            process.record(self, time.perf_counter_ns() - t)
        elif process.serial:
            self.serial(args_ptr, 0, total)
        else:
            self._run_own_choice(args_ptr, total)

    def _run_own_choice(self, args_ptr, total: int) -> None:
        """The launch on the calling thread or the pool, as this kernel's measurements choose."""
        if self.deterministic:  # Warp's DeterministicMode
            self.serial(args_ptr, 0, total)
            return
        if total < self.min_parallel:
            if self._small_timed < SMALL_LAUNCHES_TIMED and total > 0:
                self._run_serial_timed(args_ptr, total)
                self._small_timed += 1
                if self._small_timed == SMALL_LAUNCHES_TIMED:
                    self.serial_below = self.min_parallel
            else:
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
            if self.uneven and (native or total >= PYTHON_POOL_MIN_PARALLEL):
                self._parallel(threads, args_ptr, total)
                return
            if native or total >= PYTHON_POOL_MIN_PARALLEL:
                estimate = self.ns_per_thread
                if estimate is None:  # nothing measured: the pool (the serial copy next, for a kernel with one)
                    if self.parallel_ns is None or self.serial is self.entry:
                        self._parallel(threads, args_ptr, total)
                        return
                elif estimate * total >= (SERIAL_BELOW_NS if native else PYTHON_POOL_SERIAL_BELOW_NS):
                    if self.parallel_ns is None or self.parallel_ns < estimate:
                        if self.serial is self.entry or not self._recheck_now():
                            self._parallel(threads, args_ptr, total)
                            return
                        # else the serial copy's time, measured again (below) now and then: every 2, 4, ...
                        # PROBE_MAX launches while the pool stays faster (a slow serial run must not keep the pool)
                    else:
                        # the last parallel launch took longer per thread than one thread does (atomics that
                        # contend, the other cores busy elsewhere): the pool again every 2, 4, ... PROBE_MAX
                        # launches while so
                        self._probe -= 1
                        if self._probe <= 0:
                            self._parallel(threads, args_ptr, total)
                            faster = self.parallel_ns < estimate
                            if not faster and not self._probe_again:
                                # a first parallel launch after serial ones also moves the data the calling
                                # thread wrote to the other cores: the next launch, with the data where the
                                # pool left it, decides (judged on the first, a mass-spring's springs stayed on
                                # one thread for good: 115 against 69 us a launch)
                                self._probe_again, self._probe = True, 1
                                return
                            self._probe_again = False
                            self._probe_every = 1 if faster else min(2 * self._probe_every, PROBE_MAX)
                            self._probe = self._probe_every
                            return
        self._run_serial_timed(args_ptr, total)

    def _run_serial_timed(self, args_ptr, total: int) -> None:
        t = time.perf_counter_ns()
        self.serial(args_ptr, 0, total)
        self._learn((time.perf_counter_ns() - t) / total)

    def _learn(self, ns_per_thread: float) -> None:
        """Keeps a serial run's time per thread, and the launch size from which the pool pays off."""
        self.ns_per_thread = ns_per_thread
        if self._expensive_small:
            worth = -(-SERIAL_BELOW_NS // max(1, int(ns_per_thread)))
            self.min_parallel = max(2, min(MIN_PARALLEL, worth))
        if self.serial_below:
            self.serial_below = self.min_parallel

    def _min_chunk(self) -> int:
        """MIN_CHUNK threads, fewer when each is worth more than CHUNK_NS / MIN_CHUNK."""
        ns = self.ns_per_thread
        if self.uneven:  # (a thread may hold most of the launch's work: chunks of one thread and up)
            return 1
        return MIN_CHUNK if not ns else max(1, min(MIN_CHUNK, int(CHUNK_NS // ns)))

    def _recheck_now(self) -> bool:
        """Whether the serial copy is due a run: parallel launches do not measure its time per thread."""
        self._recheck -= 1
        if self._recheck > 0:
            return False
        self._recheck_every = min(2 * self._recheck_every, PROBE_MAX)
        self._recheck = self._recheck_every
        return True

    def _parallel(self, threads: int, args_ptr, total: int) -> None:
        t = time.perf_counter_ns()
        pool = _get_pool(threads)
        measured = False
        if self.private is not None and isinstance(pool, _NativePool):
            measured = self.private.run(pool, args_ptr, total, _row(args_ptr))
        if measured is False and not self.atomic:  # `_private` alone: with the arrays shared, one thread runs it
            self.serial(args_ptr, 0, total)
            if self.on_atomic_needed is not None:
                self.on_atomic_needed()
            return
        if measured is False:
            measured = pool.run(self.entry, self.address, args_ptr, total, _row(args_ptr), self.align,
                                self._min_chunk())
        elapsed = time.perf_counter_ns() - t
        if self.private is not None and self.private.inspected_ns:  # (a chunk order found: not the launch's time)
            elapsed, self.private.inspected_ns = max(1, elapsed - self.private.inspected_ns), 0
        self.parallel_ns = elapsed / total
        if self.serial is self.entry:  # the entry is what a serial run runs
            # the calling thread's first chunk; the workers took them all: at most the wall time on each thread
            self._learn(measured if measured is not None else self.parallel_ns * threads)


# A parallel launch gives each range of chunks private copies of the arrays an entry only sums into (warp-cpu-
# privatize-scatter) up to this size each; larger ones keep their atomics.
PRIVATE_MAX_BYTES = 4 << 20
_TYPES = {1: ("f32", 4), 2: ("f64", 8), 3: ("i32", 4), 4: ("i64", 8)}  # privatize_scatter.TYPE_CODES
_IDENTITY = {"f32": -0.0, "f64": -0.0, "i32": 0, "i64": 0}  # -0.0 + x is x for every float x (-0.0 too)
_TABLE_VERSION, _SUMS_ONLY = 2, 1  # privatize_scatter.TABLE_VERSION, SUMS_ONLY
# The ranges of a launch whose `_private` copy writes nothing but its sums take the chunks whose sums land in the
# part of the arrays each owns (see _Private), when that moves at least ORDER_GAIN of the sums into their owner's
# part (the chunks are the launch's own: 32 a thread instead of 8 cost cloth's small launches more claims than
# they gained, and mass-spring's step was 1-3 us slower).
ORDER_GAIN = 0.15
# Finding an order runs the kernel once more on one thread: a kernel whose launches keep bringing new index
# arrays (new plans) stops being inspected after this many, and an inspection that takes longer than
# ORDER_INSPECTION_NS stops (the launch keeps the natural order: a launch this long gains little from the order,
# and a one-off launch of seconds must not run twice)
ORDER_INSPECTIONS = 16
ORDER_INSPECTION_NS = 5_000_000
_UNSEEN = object()


def private_chunk_size(total: int, size: int, row: int, align: int) -> int:
    """The chunk of a launch with private copies: chunks of any size (not the kernel's timed minimum, MIN_CHUNK
    at most), so the ranges, and so the sums' order, depend only on the launch's size and the thread count."""
    return chunk_size(total, size, row, align, min_chunk=1)


class _Private:
    """A parallel launch of `<entry>_private`: range r of the pool's ranges of chunks (one per thread) runs with
    its own copy of the launch struct; range 0 sums into the arrays themselves, and in range r > 0's struct each
    array the entry only sums into points to range r's private copy of it (held at the identity, -0.0 or 0); a
    range's chunks run one at a time, in order; then each array gets `array + copy 1 + copy 2 + ...`,
    elementwise in that order (the pool's mlwarp_reduce_<type>, which puts the copies back to the identity).
    Range 0 needs no copy: on 2 threads the reduction reads and writes half the memory it would otherwise.

    Integer sums are exact (as the atomics'). Float sums are rounded in another order than on one thread
    (thread order) or with atomics (any order): range 0 adds its contributions to the array in thread order
    (as one thread would), each copy sums its range's in thread order, and the copies are added in range order,
    so a launch gives the same bits every time for one thread count, and results within rounding of the
    serial order across thread counts.

    Chunk orders. A kernel's threads often sum into elements far from their own index (mass-spring's springs:
    the second half of the springs joins the same particles again), so each range's sums and reads spread over
    the whole array, and the launch after it (integrate: thread i, element i, its own part on each core) finds
    half its lines in the other core's cache, every step. Where the table says SUMS_ONLY (the copy writes
    nothing but its sums), the first launch of a plan at a size first runs the copy a chunk at a time on this
    thread, pointed at range 1's copies (a launch with no effect but there), and notes where each chunk's sums
    land; the chunks are then sorted by the mean position of their sums, and range r takes the r-th share of
    them (each range's in increasing order, so its sums still come in thread order): range r sums mostly into
    the r-th part of the arrays, the part a launch cut into equal ranges gives its thread r. The order is kept
    only when it moves at least ORDER_GAIN of the sums into their owner's part; it is kept for the launch struct
    (less the private arrays' pointers) and size, so a launch gives the same bits every time as before. A kernel
    is inspected at most ORDER_INSPECTIONS times, each for at most ORDER_INSPECTION_NS (then: the natural order)."""

    def __init__(self, kernel, fn, table):
        self.kernel, self.fn = kernel, fn
        self.address = ctypes.cast(fn, ctypes.c_void_p).value
        self.size = table[1]
        self.sums_only = bool(table[3] & _SUMS_ONLY)
        self.rows = [tuple(table[4 + 4 * i: 8 + 4 * i]) for i in range(table[2])]  # (param, offset, ndim, code)
        self.lock = threading.Lock()
        self.copies = {}  # (param, ranges, elements, type) -> numpy array (ranges, elements), kept at the identity
        self._plans = {}  # (launch struct, ranges) -> _plan's
        # (launch struct less the private arrays' data pointers, ranges, launch size) -> (chunk, order array) or
        # None: a loop that allocates the array it sums into each step keeps its order
        self._orders = {}
        self._plan_orders = {}  # (launch struct, ranges, launch size) -> its entry of _orders
        self._inspections = 0
        self.inspected_ns = 0  # the time the last launch spent finding its chunk order
        self._private_offsets = [offset for _, offset, _, code in self.rows if code]

    @classmethod
    def load(cls, kernel, entry: str):
        try:
            fn = kernel._function(entry + "_private")
            head = (ctypes.c_int64 * 4).in_dll(kernel.library, entry + "_private_params")
        except (AttributeError, ValueError):
            return None
        if head[0] != _TABLE_VERSION:  # another version of the table
            return None
        table = list((ctypes.c_int64 * (4 + 4 * head[2])).in_dll(kernel.library, entry + "_private_params"))
        return cls(kernel, fn, table)

    def run(self, pool, args_ptr, total: int, row: int):
        """Runs the launch with private copies on `pool`; False (nothing run) when an array does not qualify
        (not contiguous, too large, overlapping another array parameter). Launches of one kernel from several
        Python threads take turns (the copies are the kernel's)."""
        with self.lock:
            return self._run(pool, args_ptr, total, row)

    def _run(self, pool, args_ptr, total, row):
        raw = ctypes.string_at(args_ptr, self.size) if isinstance(args_ptr, int) else bytes(memoryview(args_ptr)[:self.size])
        plan = self._plans.get((raw, pool.size), False)
        if plan is False:  # not the arguments of a recent launch (a simulation loop repeats them: its plan)
            if len(self._plans) > 8 or len(self.copies) > 8:  # the copies are at the identity between launches
                self._plans.clear()  # (the orders stay: at most ORDER_INSPECTIONS of them)
                self._plan_orders.clear()
                self.copies.clear()
            plan = self._plans[(raw, pool.size)] = self._plan(raw, pool)
        if plan is None:
            return False
        buffer, stride, reductions = plan
        chunk, order = private_chunk_size(total, pool.size, row, self.kernel.align), None
        if self.sums_only:
            ordered = self._plan_orders.get((raw, pool.size, total), _UNSEEN)  # (a repeated launch: one lookup)
            if ordered is _UNSEEN:
                key = (self._without_private_pointers(raw), pool.size, total)
                ordered = self._orders.get(key, _UNSEEN)
                if ordered is _UNSEEN:
                    ordered = None
                    if self._inspections < ORDER_INSPECTIONS:
                        self._inspections += 1
                        started = time.perf_counter_ns()
                        ordered = self._orders[key] = self._chunk_order(plan, pool.size, total, chunk)
                        self.inspected_ns = time.perf_counter_ns() - started
                self._plan_orders[(raw, pool.size, total)] = ordered
            if ordered is not None:
                order = ordered.ctypes.data
        measured = pool.run_private(self.address, buffer, total, chunk, stride, order)
        if measured is False:  # another thread's launch holds the pool: the entry (atomics), on this thread
            self.kernel.entry(args_ptr, 0, total)
            return None
        for reduction in reductions:
            pool.reduce(*reduction)
        return measured

    def _without_private_pointers(self, raw: bytes) -> bytes:
        masked = bytearray(raw)
        for offset in self._private_offsets:
            masked[offset:offset + 8] = bytes(8)
        return bytes(masked)

    def _chunk_order(self, plan, ranges: int, total: int, chunk: int):
        """The int64 array of the launch's chunks in the order the ranges take them for a SUMS_ONLY launch, or
        None when sorting its chunks by where their sums land gains less than ORDER_GAIN (see the class)."""
        np = _numpy()
        buffer, stride, reductions = plan
        n = -(-total // chunk)
        if n < 2 * ranges:
            return None
        # range 1's launch struct points every private array at its copy 0, held at the identity
        scratch = [(copy[0], copy.dtype.type(-0.0 if copy.dtype.kind == "f" else 0)) for *_, copy in reductions]
        args = ctypes.addressof(buffer) + stride
        position = np.full(n, np.nan)
        owner_share = np.zeros((n, ranges))
        deadline = time.perf_counter_ns() + ORDER_INSPECTION_NS
        for c in range(n):
            if time.perf_counter_ns() > deadline:
                return None
            self.fn(args, c * chunk, min(total, (c + 1) * chunk))
            places = []
            for copy, identity in scratch:
                bits = copy.view(np.uint32 if copy.itemsize == 4 else np.uint64)
                touched = np.flatnonzero(bits != np.array(identity, copy.dtype).view(bits.dtype))
                if touched.size:
                    copy[touched] = identity
                    places.append(touched / copy.shape[0])
            if places:
                where = np.concatenate(places)
                position[c] = where.mean()
                owner_share[c] = np.bincount(np.minimum((where * ranges).astype(np.int64), ranges - 1),
                                             minlength=ranges) / where.size
        if np.isnan(position).all():
            return None
        # chunks with no sums keep their place in the natural order's terms
        natural = (np.arange(n) + 0.5) / n
        position = np.where(np.isnan(position), natural, position)
        order = np.argsort(position, kind="stable")
        share_range = np.searchsorted(np.arange(1, ranges) * n // ranges, np.arange(n), side="right")
        natural_local = owner_share[np.arange(n), share_range].sum()
        sorted_ranges = np.empty(n, np.int64)
        sorted_ranges[order] = share_range
        ordered_local = owner_share[np.arange(n), sorted_ranges].sum()
        if ordered_local - natural_local < ORDER_GAIN * max(1, int((owner_share.sum(axis=1) > 0).sum())):
            return None
        # each range's chunks in increasing order: its sums come in thread order
        ranked = np.concatenate([np.sort(order[r * n // ranges:(r + 1) * n // ranges]) for r in range(ranges)])
        return ranked.astype(np.int64)

    def _plan(self, raw: bytes, pool):
        """(per-range launch structs, their stride, the reductions after the launch), or None when an array
        does not qualify."""
        private, spans = [], []
        for param, offset, ndim, code in self.rows:
            fields = struct.unpack_from(f"@P{ndim}q{ndim}q", raw, offset)
            data, shape, strides = fields[0] or 0, fields[1:1 + ndim], fields[1 + ndim:]
            if any(d == 0 for d in shape):
                continue
            if code:
                name, scalar = _TYPES[code]
                extent = _contiguous_bytes(shape, strides)
                if extent is None or extent > PRIVATE_MAX_BYTES or extent % scalar or data % scalar or not data:
                    return None
                private.append((param, offset, data, extent // scalar, name))
                spans.append((data, data + extent))
            else:
                low = data + sum((n - 1) * st for n, st in zip(shape, strides) if st < 0)
                high = data + sum((n - 1) * st for n, st in zip(shape, strides) if st > 0) + \
                    max(abs(strides[-1]), 1)
                spans.append((low, high))
        if not private:
            return None
        for i, (low, high) in enumerate(spans[:len(private)]):
            if any(lo < high and low < hi for j, (lo, hi) in enumerate(spans) if j != i):
                return None  # an array summed into privately overlaps another parameter's
        ranges = pool.size
        if ranges < 2:
            return None
        np = _numpy()
        stride = -(-self.size // 64) * 64  # each range's struct on its own cache lines
        buffer = (ctypes.c_char * (stride * ranges))()
        reductions = []
        for param, offset, data, elements, name in private:
            key = (param, ranges, elements, name)
            copy = self.copies.get(key)
            if copy is None:
                dtype = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}[name]
                copy = self.copies[key] = np.full((ranges - 1, elements), _IDENTITY[name], dtype=dtype)
            reductions.append(pool.reduction(name, data, copy))
        for r in range(ranges):
            base = r * stride
            buffer[base:base + self.size] = raw
            if r == 0:
                continue  # range 0 sums into the arrays themselves
            for (param, offset, _, elements, name) in private:
                copy = self.copies[(param, ranges, elements, name)]
                struct.pack_into("@P", buffer, base + offset, copy.ctypes.data + (r - 1) * copy.strides[0])
        return buffer, stride, reductions


def _contiguous_bytes(shape, strides):
    """The bytes an array spans when its strides are C-contiguous (rows of its innermost stride), else None."""
    expected = strides[-1]
    if expected <= 0:
        return None
    for n, st in zip(reversed(shape), reversed(strides)):
        if st != expected:
            return None
        expected *= n
    return expected


def _numpy():
    import numpy  # lazy: numpy (a launch without private copies never needs it)
    return numpy


def _row(args_ptr) -> int:
    """The launch's innermost dimension past the first, 1 for a 1-d launch: the launch struct starts
    with the four launch dimensions, 1 past the launch's own."""
    dims = (ctypes.c_int64 * 4).from_address(args_ptr) if isinstance(args_ptr, int) else \
        struct.unpack_from("@4q", args_ptr)
    return next((d for d in reversed(dims[1:]) if d != 1), 1)
