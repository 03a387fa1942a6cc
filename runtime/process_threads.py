"""Whether the whole process runs faster on one thread (runtime/cpu.py's CpuKernel.run asks before each launch).

Each kernel's launches go to the pool when its parallel runs beat its serial ones (cpu.py). That misses what a
parallel launch costs the launches after it: its threads leave the data they wrote in their cores' caches, and
the next kernel, serial or parallel, pulls it over. Where the cores are far apart (a VM's vCPUs placed on two
chiplets, as this project's 2-core host is at times) that costs more than the second core gives: a mass-spring
step (springs, then integrate) took 173-178 us on two threads against 108-112 us on one, while each kernel's own
measurements still favoured the pool (the springs 79 against 97 us; integrate 99 us on the pool and 138 on the
calling thread, its data on the other core either way).

So now and then the process measures both: a window of launches as each kernel chooses, then one with every
launch on the calling thread, each launch timed after a few untimed ones (the data moving to where the mode runs
it); the second window only when the first's launches are short (LONG_LAUNCH_NS). Per kernel the median of each window, weighted by the kernel's launches in the first; every launch runs on
the calling thread when that is at least 1 / SERIAL_MARGIN times faster, until the next measurement, after twice
as many launches as the last interval (up to MAX_INTERVAL; SERIAL_INTERVAL while serial, to notice sooner that
the cores are close again). An explicit thread count (wp.config.cpu_threads, $MLWARP_NUM_THREADS) is obeyed:
no measurement then."""

from __future__ import annotations

FIRST_INTERVAL = 256  # launches before the first measurement (compiles and each kernel's own probes first)
SETTLE = 8  # untimed launches at the start of each window
WINDOW = 48  # timed launches per window
MAX_INTERVAL = 1 << 16
SERIAL_INTERVAL = 1 << 12
SERIAL_MARGIN = 0.85
# no serial window after an auto one whose median launch took longer: moving a launch's data between the cores
# costs tens of microseconds, and a window of long launches on one thread would cost the program seconds
LONG_LAUNCH_NS = 500_000


class ProcessThreads:
    """The schedule and the choice. CpuKernel.run calls `launch()` before each launch and, when it returns
    True (`timing`), `record(kernel, ns)` after it; `serial` says whether this launch runs on the calling
    thread."""

    def __init__(self):
        self.serial = False
        self.timing = False
        self.countdown = FIRST_INTERVAL  # launches until the schedule's next step (decremented by the caller)
        self._interval = FIRST_INTERVAL
        self._window = None  # None between measurements, else "auto" or "serial"
        self._settle = 0
        self._times = {"auto": {}, "serial": {}}
        self._chosen = False  # the measurement's outcome: serial

    def step(self, fixed_threads: bool) -> None:
        """The schedule's next step (countdown reached 0): start a measurement, the serial window after the auto
        one, or decide. `fixed_threads`: the user chose the thread count, or there is one core."""
        if fixed_threads:  # nothing to choose: look again later
            self.serial = self.timing = False
            self._window = None
            self.countdown = FIRST_INTERVAL
            return
        if self._window is None:
            self._begin("auto")
        elif self._settle:
            self._settle = 0
            self.timing = True
            self.countdown = WINDOW
        elif self._window == "auto":
            if _median([ns for times in self._times["auto"].values() for ns in times] or [0]) > LONG_LAUNCH_NS:
                self._decide()  # launches this long gain from the pool whatever moves between the cores
            else:
                self._begin("serial")
        else:
            self._decide()

    def _begin(self, window: str) -> None:
        self._window = window
        self._times[window] = {}
        self.serial = window == "serial"
        self.timing = False
        self._settle = SETTLE
        self.countdown = SETTLE

    def record(self, kernel, ns: int) -> None:
        """A timed launch of `kernel` took `ns` (wall time, the launch's own)."""
        self._times[self._window].setdefault(kernel, []).append(ns)

    def _decide(self) -> None:
        self._chosen = prefers_serial(self._times["auto"], self._times["serial"], self._chosen)
        self._times = {"auto": {}, "serial": {}}
        self._window = None
        self.timing = False
        self.serial = self._chosen
        cap = SERIAL_INTERVAL if self._chosen else MAX_INTERVAL
        self._interval = min(2 * self._interval, cap)
        self.countdown = self._interval


def prefers_serial(auto: dict, serial: dict, current: bool) -> bool:
    """Whether the launches of the serial window (kernel -> its launch times) beat those of the auto window by
    the margin: per kernel launched in both, the median, weighted by its launches in the auto window. No kernel
    in both (the program moved on): `current` stands."""
    common = [k for k in auto if k in serial]
    if not common:
        return current
    auto_ns = sum(len(auto[k]) * _median(auto[k]) for k in common)
    serial_ns = sum(len(auto[k]) * _median(serial[k]) for k in common)
    return serial_ns < SERIAL_MARGIN * auto_ns


def _median(values: list) -> float:
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else 0.5 * (ordered[n // 2 - 1] + ordered[n // 2])


PROCESS = ProcessThreads()  # the process's one schedule (a forked child starts from the parent's state)
