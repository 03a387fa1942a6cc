"""runtime/process_threads.py: now and then the process times a window of launches as each kernel chooses and one
with every launch on the calling thread, and runs everything serially while that is clearly faster (cores far
apart: each kernel's own measurements cannot see what its parallel launch costs the next kernel)."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.config import config
from mlwarp.runtime import cpu
from mlwarp.runtime import process_threads as pt


def test_prefers_serial_weighs_each_kernels_median_by_its_launches():
    a, b = object(), object()
    auto = {a: [100, 100, 900], b: [10] * 9}  # medians 100 and 10, weights 3 and 9: 390
    assert pt.prefers_serial(auto, {a: [50, 60, 55], b: [15]}, False) is True  # 3 * 55 + 9 * 15 = 300 < 0.85 * 390
    assert pt.prefers_serial(auto, {a: [80], b: [12]}, False) is False  # 348: not by the margin
    assert pt.prefers_serial(auto, {a: [80], b: [12]}, True) is False  # the margin, whatever the current choice
    assert pt.prefers_serial({a: [1, 2]}, {b: [1]}, True) is True  # no kernel in both windows: no change
    assert pt.prefers_serial({a: [1, 2]}, {b: [1]}, False) is False
    assert pt.prefers_serial({a: [100, 200]}, {a: [100, 140]}, False) is True  # medians 150 and 120 (even counts)


def _drive(probe, launches, serial_ns, auto_ns, fixed=False):
    """CpuKernel.run's calls for `launches` launches of one kernel that takes serial_ns on the calling thread
    and auto_ns otherwise; returns the serial flag of each launch."""
    kernel, flags = object(), []
    for _ in range(launches):
        probe.countdown -= 1
        if probe.countdown <= 0:
            probe.step(fixed)
        flags.append(probe.serial)
        if probe.timing:
            probe.record(kernel, serial_ns if probe.serial else auto_ns)
    return flags


def test_the_schedule_measures_both_windows_then_keeps_the_faster_way():
    probe = pt.ProcessThreads()
    first = pt.FIRST_INTERVAL
    flags = _drive(probe, first + 2 * (pt.SETTLE + pt.WINDOW), serial_ns=50, auto_ns=100)
    # as each kernel chooses, then (from the launch that ends the countdown) the auto window, then the serial one
    # (each starting with its untimed settling launches), then the choice
    serial_from = first - 1 + pt.SETTLE + pt.WINDOW
    assert not any(flags[:serial_from]) and all(flags[serial_from:])
    assert probe.serial and probe._interval == 2 * first  # serial is 2x faster: kept until the next look
    flags = _drive(probe, probe.countdown - 1, serial_ns=50, auto_ns=100)  # (the last one starts the next look)
    assert len(flags) == 2 * first - 1 and all(flags)
    # the cores close again: the next measurement goes back to the pool, and looks again twice as late
    _drive(probe, 1 + 2 * (pt.SETTLE + pt.WINDOW), serial_ns=100, auto_ns=60)
    assert not probe.serial and probe._interval == 4 * first
    # looks grow rarer up to their cap (SERIAL_INTERVAL while serial)
    for _ in range(20):
        _drive(probe, probe.countdown + 2 * (pt.SETTLE + pt.WINDOW), serial_ns=100, auto_ns=60)
    assert probe._interval == pt.MAX_INTERVAL
    for _ in range(20):
        _drive(probe, probe.countdown + 2 * (pt.SETTLE + pt.WINDOW), serial_ns=10, auto_ns=60)
    assert probe.serial and probe._interval == pt.SERIAL_INTERVAL


def test_long_launches_are_never_measured_on_one_thread():
    """An auto window whose median launch is over LONG_LAUNCH_NS skips the serial one (it would cost the program
    seconds): the kernels keep their choice, and the next look comes twice as late."""
    probe = pt.ProcessThreads()
    flags = _drive(probe, 3 * pt.FIRST_INTERVAL, serial_ns=1, auto_ns=2 * pt.LONG_LAUNCH_NS)
    assert not any(flags) and not probe.serial and probe._interval >= 2 * pt.FIRST_INTERVAL


def test_a_fixed_thread_count_is_never_overruled():
    probe = pt.ProcessThreads()
    flags = _drive(probe, 20 * pt.FIRST_INTERVAL, serial_ns=1, auto_ns=1000, fixed=True)
    assert not any(flags) and not probe.timing


@wp.kernel
def scale_into(x: wp.array(dtype=float), y: wp.array(dtype=float), k: float):
    i = wp.tid()
    y[i] = x[i] * k


def test_launches_follow_the_process_choice_and_stay_exact(monkeypatch, automatic_two_cores):
    """With the automatic thread count on two cores and launches that time as if the calling thread were twice as
    fast, every launch after the measurement runs there (no pool run), its results numpy's; with the pool
    timing faster, launches go back to it."""
    n = 4 * cpu.MIN_PARALLEL
    x = wp.array(np.arange(n, dtype=np.float32))
    y = wp.zeros(n, dtype=float)
    wp.launch(scale_into, n, inputs=[x, y, 2.0])  # compiled
    kernel = scale_into.compiled(wp.get_device("cpu"))
    kernel.parallel_from(2)  # its own choice: the pool, every launch
    probe = pt.ProcessThreads()
    monkeypatch.setattr(cpu, "PROCESS", probe)
    clock = {"now": 0}

    def fake_clock():  # a serial launch "takes" 1 us, one as the kernel chooses 2 us
        clock["now"] += 500 if probe.serial else 1000
        return clock["now"]

    monkeypatch.setattr(cpu.time, "perf_counter_ns", fake_clock)
    runs = []
    real_run = cpu._NativePool.run

    def counting(self, *args):
        runs.append(self.size)
        return real_run(self, *args)

    monkeypatch.setattr(cpu._NativePool, "run", counting)
    total = pt.FIRST_INTERVAL + 2 * (pt.SETTLE + pt.WINDOW)
    for step in range(total + 10):
        wp.launch(scale_into, n, inputs=[x, y, float(step)])
        np.testing.assert_array_equal(y.numpy(), np.arange(n, dtype=np.float32) * step)
    assert probe.serial
    before = len(runs)
    for step in range(10):
        wp.launch(scale_into, n, inputs=[x, y, 3.0])
    assert len(runs) == before  # all on the calling thread
    np.testing.assert_array_equal(y.numpy(), np.arange(n, dtype=np.float32) * 3.0)

    def pool_faster():
        clock["now"] += 2000 if probe.serial else 500
        return clock["now"]

    monkeypatch.setattr(cpu.time, "perf_counter_ns", pool_faster)
    for _ in range(probe.countdown + 2 * (pt.SETTLE + pt.WINDOW) + 5):
        wp.launch(scale_into, n, inputs=[x, y, 1.0])
    assert not probe.serial
    before = len(runs)
    wp.launch(scale_into, n, inputs=[x, y, 4.0])
    assert len(runs) == before + 1
    np.testing.assert_array_equal(y.numpy(), np.arange(n, dtype=np.float32) * 4.0)


@pytest.mark.parametrize("threads", [1, 2])
def test_an_explicit_thread_count_is_obeyed(monkeypatch, threads):
    monkeypatch.setattr(cpu, "_CPU_COUNT", 2)
    monkeypatch.setattr(config, "cpu_threads", threads)
    probe = pt.ProcessThreads()
    monkeypatch.setattr(cpu, "PROCESS", probe)
    n = 4 * cpu.MIN_PARALLEL
    x, y = wp.array(np.ones(n, dtype=np.float32)), wp.zeros(n, dtype=float)
    for _ in range(3 * pt.FIRST_INTERVAL):
        wp.launch(scale_into, n, inputs=[x, y, 2.0])
    assert not probe.serial and not probe.timing and probe._interval == pt.FIRST_INTERVAL
    np.testing.assert_array_equal(y.numpy(), np.full(n, 2.0, np.float32))
