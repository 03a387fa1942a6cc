"""`wp.ScopedTimer`: times a block of code, as Warp's."""

import cProfile
import sys
import threading
import time

from mlwarp.launching.launch import synchronize


class ScopedTimer:
    """`with wp.ScopedTimer("name"):` times the block and prints `name took X.XX ms` when it exits.

    active: time at all (and `ScopedTimer.enabled`); print: print the time; detailed: profile the block with
    cProfile and print its statistics; dict: a dict of lists that `elapsed` is appended to under `name`;
    synchronize: wait for outstanding device work before starting and stopping the clock. `use_nvtx`,
    `color`, `cuda_filter`, `report_func` and `skip_tape` are accepted as in Warp; mlwarp records no CUDA
    activity timings (`timing_results` stays empty) and emits no NVTX ranges.

    Attributes: `elapsed` (ms), `extra_msg` (appended to the printed line), `timing_results`.
    """

    _thread_local = threading.local()
    enabled = True

    def __init__(self, name: str, active: bool = True, print: bool = True, detailed: bool = False,
                 dict: dict | None = None, use_nvtx: bool = False, color="rapids", synchronize: bool = False,
                 cuda_filter: int = 0, report_func=None, skip_tape: bool = False):
        self.name = name
        self.active = active and self.enabled
        self.print = print
        self.detailed = detailed
        self.dict = dict
        self.use_nvtx = use_nvtx
        self.color = color
        self.synchronize = synchronize
        self.cuda_filter = cuda_filter
        self.report_func = report_func
        self.skip_tape = skip_tape
        self.elapsed = 0.0
        self.extra_msg = ""
        self.timing_results = []
        if self.dict is not None and name not in self.dict:
            self.dict[name] = []
        if not hasattr(ScopedTimer._thread_local, "indent"):
            ScopedTimer._thread_local.indent = -1

    def __enter__(self):
        if self.active:
            if self.synchronize:
                synchronize()
            if self.detailed:
                self.cp = cProfile.Profile()
                self.cp.clear()
                self.cp.enable()
            if self.print:
                ScopedTimer._thread_local.indent += 1
            self.start = time.perf_counter_ns()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self.active:
            return
        if self.synchronize:
            synchronize()
        self.elapsed = (time.perf_counter_ns() - self.start) / 1e6
        if self.detailed:
            self.cp.disable()
            self.cp.print_stats(sort="tottime")
        if self.dict is not None:
            self.dict[self.name].append(self.elapsed)
        if self.print:
            indent = "    " * ScopedTimer._thread_local.indent
            line = f"{indent}{self.name} took {self.elapsed:.2f} ms"
            print(f"{line} {self.extra_msg}" if self.extra_msg else line, file=sys.stdout)
            ScopedTimer._thread_local.indent -= 1
