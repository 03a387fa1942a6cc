"""Compiling several kernels at once: one compile process each, up to a number at a time (`compile_ahead`).

mlwarp compiles a kernel at its first launch, in a process of its own (compiler/contained.py); Warp builds a
module's kernels together. Where the kernels a program will launch are known before it launches them
(`wp.load_module`, `Module.load`, a geometry structure's build kernels), they compile side by side on the CPU's
cores and their launches load them from the kernel cache.

Where a kernel will probably be needed later, it compiles in the background (`compile_in_background`): a kernel
launched while a Tape records, or with arrays that require grad, will likely have its adjoint launched by
`tape.backward()`, so its adjoint library starts compiling at its first launch, beside its forward compile
(autodiff/adjoint.py compile_adjoint_ahead; Warp compiles every module's backward pass with its forward one,
needed or not); and the first launch of a module's kernel that misses the cache starts the module's other kernels
(launching/compile_ahead.py: Warp builds a module at the first launch of any of its kernels). A background compile's
warnings and output are issued by the launch that uses it. At most `2 * cpu_count` such compiles run at a time, at a
low priority (BACKGROUND_NICENESS), the others wait in a queue, the largest first (kernels/compile_cost.py: a
program waits for the longest, which started last would end last; wp.load_module's compiles too); whoever needs the
library first (`wait_for`, a launch or `compile_ahead`) takes over its compile. A program waits for the longest of
its background compiles: once a kernel's forward compile has taken its time, the background compiles of kernels
whose forward compiles took less run at a lower priority (`note_forward_compile`), so the longest keeps its core.
Processes still compiling at exit are stopped (their cache entries are written whole or not at all).
"""

from __future__ import annotations

import atexit
import math
import os
import select
import signal
import weakref

from mlwarp.compiler import contained  # imports no MLIR
from mlwarp.config import config
from mlwarp.kernels.compile_cost import estimated_cost
from mlwarp.runtime import cache


def compile_ahead(kernels, device, max_workers: int | None = None) -> None:
    """Compiles the CPU libraries of those `kernels` that miss the kernel cache, up to `max_workers` (default: the
    CPU count) in compile processes at a time, so that their first launches load them: Warp builds a module's
    kernels at once, mlwarp a kernel at its first launch, one after another. A compile that fails here is left to
    the kernel's launch, which reports it as it would have."""
    if not device.is_cpu or not config.cache_kernels or contained.in_process():
        return
    keys = {k.cache_key(device): k for k in kernels if device.alias not in k._compiled}
    running = [_background.pop(key) for key in keys if key in _background]  # (compiling already: waited for)
    _queued[:] = [entry for entry in _queued if entry[1] not in keys]  # (compiled here, below)
    for key in keys:
        _deliver(_finished.pop(key, None))
    started = {child.key for child in running}
    pending = [(k, key) for key, k in keys.items() if key not in started and k.cached_entry(key) is None]
    if len(pending) + len(running) < 2:
        for child in running:
            _result(child)
        return  # one compile: its launch's own
    compile_side_by_side(pending, max_workers, running=running)


def compile_side_by_side(pending, max_workers: int | None = None, root: str | None = None, running=()) -> list:
    """Compiles each (kernel, cache key) of `pending` into the kernel cache (or the folder `root`: the library
    cache, python -m mlwarp.kernels.precompile), up to `max_workers` compile processes at a time (`running`: compile
    processes started already, waited for with them). Returns the [(kernel, exception)] of the compiles that
    failed."""
    from mlwarp.compiler.driver import compile_cpu  # noqa: F401  (lazy: MLIR, loaded before the forks share it)

    pending = sorted(pending, key=lambda entry: -estimated_cost(entry[0]))  # the longest first (compile_cost.py)
    failed = []
    workers = max(1, max_workers or os.cpu_count() or 1)
    running = list(running)
    kernel_of = {child: child.kernel for child in running}
    while pending or running:
        while pending and len(running) < workers:
            k, key = pending.pop(0)
            child = contained.start(cache.store, (key, k._build), {"root": root}, k.key)
            child.key, child.kernel = key, k
            kernel_of[child] = k
            running.append(child)
        ready, _, _ = select.select(running, [], [])
        for child in ready:
            running.remove(child)
            try:
                child.result()
            except Exception as error:  # noqa: BLE001 (the launch compiles it again and raises)
                failed.append((kernel_of[child], error))
    return failed


# Background compiles run at this niceness: a launch's threads that need their core take it (a guess must not slow
# the program down); one the program waits for (wait_for) runs alone on its core, at full speed.
BACKGROUND_NICENESS = 10

_background: dict = {}  # cache key -> contained.Child: compiles started by compile_in_background
_queued: list = []  # (kernel, cache key, device) waiting for a background slot, the longest first
_costs: dict = {}  # cache key -> minus its compile's estimated cost (_queued's order)
# cache key -> contained.Received: background compiles done before any launch asked for them; their warnings and output
# are issued when one does (wait_for), not wherever the program was when their slot was reclaimed
_finished: dict = {}
# a kernel's function -> the seconds its forward library took to compile here
_forward_seconds = weakref.WeakKeyDictionary()
# a background compile expected to take half as long as the longest one running is this much nicer (3: about half the
# CPU share when the two meet on one core)
NICENESS_PER_HALVING = 3


def compiles_in_background(device) -> bool:
    """Whether compile_in_background starts compiles for `device`: CPU kernels, with the kernel cache on (it hands the
    library over), from a process that may fork compile processes."""
    return device.is_cpu and config.cache_kernels and not contained.in_process()


def compile_in_background(kernel, device) -> None:
    """Starts compiling `kernel`'s CPU library in a compile process and returns at once (queued when the background
    slots are taken); its launch, or compile_ahead, later waits for it instead of compiling it again."""
    if not compiles_in_background(device) or device.alias in kernel._compiled or \
            kernel.__dict__.get("_background_requested"):
        return
    kernel.__dict__["_background_requested"] = True
    key = kernel.cache_key(device)
    if key in _background or key in _finished or kernel.cached_entry(key) is not None:
        return
    _queued.append((kernel, key, device))
    _start_queued()


def wait_for(key: str) -> None:
    """Waits for the background compile of `key`, if one runs (its errors are left to the caller's own compile,
    which reports them), and issues its warnings and output; takes a queued one off the queue (the caller compiles
    it)."""
    if _queued:
        _queued[:] = [entry for entry in _queued if entry[1] != key]
    received = _finished.pop(key, None)
    child = _background.pop(key, None)
    if child is not None:
        received = _received(child)
    _deliver(received)
    if _queued:
        _start_queued()


def _slots() -> int:
    """Two background compiles a core: at their low priority they take what the program's own work leaves, and a
    large compile started after a few small ones does not wait for them (they finish first, having less to do)."""
    return 2 * max(1, os.cpu_count() or 1)


def _start_queued() -> None:
    for key, child in list(_background.items()):  # the finished ones leave their slots; their outcomes are kept
        if select.select([child], [], [], 0)[0]:
            del _background[key]
            received = _received(child)
            if received is not None:
                _finished[key] = received
    if len(_queued) > 1 and len(_background) < _slots():
        _queued.sort(key=_queued_cost)  # the longest first (compile_cost.py); stable: else in the order asked
    while _queued and len(_background) < _slots():
        kernel, key, device = _queued.pop(0)
        # (the key again: a global the kernel reads may have changed while it waited, and the compile reads it now)
        if kernel.cached_entry(key) is not None or device.alias in kernel._compiled or \
                kernel.cache_key(device) != key:
            continue
        from mlwarp.compiler.driver import compile_cpu  # noqa: F401  (lazy: MLIR, loaded before the fork shares it)

        child = contained.start(cache.store, (key, kernel._build), {}, kernel.key, niceness=BACKGROUND_NICENESS)
        child.key, child.kernel, child.niceness = key, kernel, BACKGROUND_NICENESS
        _background[key] = child
    _prioritise()


def _queued_cost(entry) -> float:
    cost = _costs.get(entry[1])
    if cost is None:
        cost = _costs[entry[1]] = -estimated_cost(entry[0])
    return cost


def note_forward_compile(kernel, seconds: float) -> None:
    """`kernel`'s own library took `seconds` to compile: the measure of what its adjoint library's compile will
    take (several times that), by which the background compiles running are prioritised."""
    _forward_seconds[kernel.func] = seconds
    if _background:
        _prioritise()


def _prioritise() -> None:
    """Lowers the priority of each background compile whose kernel's forward compile took less than the longest
    one's (NICENESS_PER_HALVING a halving; a process's niceness only rises: lowering it takes privileges). Compiles
    of kernels not compiled forward yet keep theirs: nothing is known of them."""
    known = [(child, _forward_seconds.get(child.kernel.func)) for child in _background.values()]
    known = [(child, seconds) for child, seconds in known if seconds]
    if len(known) < 2:
        return
    longest = max(seconds for _, seconds in known)
    for child, seconds in known:
        wanted = min(19, BACKGROUND_NICENESS + round(NICENESS_PER_HALVING * math.log2(longest / seconds)))
        if wanted > child.niceness:
            try:
                os.setpriority(os.PRIO_PROCESS, child.pid, wanted)
                child.niceness = wanted
            except OSError:  # (exited already)
                pass


def _result(child) -> None:
    """Waits for `child` and issues its warnings and output (_deliver)."""
    _deliver(_received(child))


def _received(child):
    """`child`'s outcome, when it has one (a crash: the launch that needs the library compiles it again and reports
    the crash)."""
    try:
        return child.receive()
    except Exception:  # noqa: BLE001
        return None


def _deliver(received) -> None:
    """Issues a background compile's warnings and output, unless it failed: the launch that needs the library then
    compiles it again, and that compile issues them with its error."""
    if received is not None and not received.failed:
        received.deliver()


@atexit.register
def _stop_background() -> None:
    """Stops the compiles still running at exit (nothing waits for them any more)."""
    _queued.clear()
    _finished.clear()
    for child in _background.values():
        try:
            os.kill(child.pid, signal.SIGKILL)
            os.waitpid(child.pid, 0)
            os.close(child.read_end)
        except OSError:
            pass
    _background.clear()
