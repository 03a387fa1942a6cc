"""Warp's activity timing (wp.timing_begin / timing_end / timing_print, wp.TimingResult, wp.TIMING_*) and its CUDA
profiler range (wp.cuda_profiler_start / stop, wp.ScopedCudaProfiler).

Warp's activity timing records CUDA activity only (kernels, memcpy, memset and graphs on CUDA devices): work on
the CPU is never recorded, so on a CPU-only machine `timing_end()` returns [] in Warp, and in mlwarp. mlwarp's
CUDA runtime has no activity recorder (Warp's is in its native library): with CUDA devices present, timing_begin
says so through the logger (docs/surface.md)."""

from __future__ import annotations

from mlwarp.launching.cuda import get_cuda_devices
from mlwarp.launching.cuda import synchronize as sync_all
from mlwarp.launching.logger import log_warning
from mlwarp.runtime.cuda import driver as drv
from mlwarp.runtime.device import get_device

__all__ = ["TIMING_KERNEL", "TIMING_KERNEL_BUILTIN", "TIMING_MEMCPY", "TIMING_MEMSET", "TIMING_GRAPH", "TIMING_ALL",
           "TimingResult", "timing_begin", "timing_end", "timing_print", "cuda_profiler_start",
           "cuda_profiler_stop", "ScopedCudaProfiler"]

TIMING_KERNEL = 1
TIMING_KERNEL_BUILTIN = 2
TIMING_MEMCPY = 4
TIMING_MEMSET = 8
TIMING_GRAPH = 16
TIMING_ALL = 0xFFFFFFFF


class TimingResult:
    """One recorded activity: its device, name, kind (a TIMING_* flag) and elapsed milliseconds."""

    def __init__(self, device, name, filter, elapsed):
        self.device = device
        self.name = name
        self.filter = filter
        self.elapsed = elapsed


_active = False


def timing_begin(cuda_filter: int = TIMING_ALL, synchronize: bool = True) -> None:
    global _active
    if synchronize:
        sync_all()
    if get_cuda_devices():
        log_warning("wp.timing_begin(): mlwarp records no CUDA activity timings (Warp's recorder is in its native "
                    "library); timing_end() returns [] (use wp.ScopedTimer or CUDA events instead)")
    _active = True


def timing_end(synchronize: bool = True) -> list:
    global _active
    try:
        if synchronize:
            sync_all()
    finally:
        _active = False
    return []


def timing_print(results: list, indent: str = "") -> None:
    """Prints results as Warp's timing_print does: the timeline, then totals per activity and per device."""
    if not results:
        print("No activity")
        return
    width = max(len("Activity"), *(len(r.name) for r in results)) + 1
    dashes = "-" * width
    by_device, by_name = {}, {}
    print(f"{indent}CUDA timeline:")
    print(f"{indent}----------------+---------+{dashes}")
    print(f"{indent}Time            | Device  | Activity")
    print(f"{indent}----------------+---------+{dashes}")
    for r in results:
        alias = r.device.alias
        for table, key in ((by_device, alias), (by_name, r.name)):
            agg = table.setdefault(key, [0, 0.0])
            agg[0] += 1
            agg[1] += r.elapsed
        print(f"{indent}{r.elapsed:12.6f} ms | {alias:7s} | {r.name}")
    for title, label, table in (("CUDA activity summary:", "Activity", by_name),
                                ("CUDA device summary:", "Device", by_device)):
        print()
        print(f"{indent}{title}")
        print(f"{indent}----------------+---------+{dashes}")
        print(f"{indent}Total time      | Count   | {label}")
        print(f"{indent}----------------+---------+{dashes}")
        for key, (count, elapsed) in table.items():
            print(f"{indent}{elapsed:12.6f} ms | {count:7d} | {key}")


def cuda_profiler_start(device=None):
    """Starts an attached CUDA profiler's capture range (cuProfilerStart); nothing for the CPU, as in Warp."""
    dev = get_device(device)
    if not dev.is_cuda:
        return
    dev.make_current()
    drv.call("cuProfilerStart")


def cuda_profiler_stop(device=None):
    dev = get_device(device)
    if not dev.is_cuda:
        return
    dev.make_current()
    drv.call("cuProfilerStop")


class ScopedCudaProfiler:
    def __init__(self, device=None):
        self.device = get_device(device)

    def __enter__(self):
        cuda_profiler_start(self.device)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        try:
            cuda_profiler_stop(self.device)
        except Exception:
            if exc_type is None:
                raise
