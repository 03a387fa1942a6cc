"""The graph capture in progress, if any: the state that wp.launch, wp.copy, `fill_`/`zero_`, wp.Tape and
wp.capture_* (python/mlwarp/launching/graph_capture.py) share.

A capture (Warp's CPU graph capture) records the operations issued on its device instead of running them;
each recorded operation is a callable taking no arguments, prepared at capture time with the arguments as
they were then (arrays by reference: the callable holds the array's memory, not its contents), and a graph
replays them in order. `ops` is a stack: capture_if/capture_while record their bodies into lists of their own.
As Warp's default capture mode (thread-local), only the capturing thread's work is recorded.
Below the API modules, so that the runtime's Device can answer `is_capturing`.
"""

from __future__ import annotations

import threading


class Capture:
    def __init__(self, device, savable: bool = False):
        self.device = device
        self.savable = savable  # capture_begin(apic=True): the graph is to be saved (so all of it serializable)
        self.thread = threading.get_ident()  # Warp's default mode, thread-local: other threads' work runs        self.ops: list[list] = [[]]  # the graph's operations, then the open branch bodies, innermost last

    def record(self, op) -> None:
        self.ops[-1].append(op)


active: Capture | None = None  # the capture in progress (one at a time, as in Warp)


def recording_on(device) -> bool:
    """Whether work issued on `device` is to be recorded rather than run."""
    return active is not None and (active.device is device or active.device == device) \
        and active.thread == threading.get_ident()  # == takes "cpu" too


def record(op) -> None:
    """Appends `op` (a callable of no arguments) to the capture in progress."""
    active.record(op)


def run_or_record(device, op) -> None:
    """Runs `op` now, or records it when `device` is capturing (host work that must happen at replay time)."""
    if recording_on(device):
        active.record(op)
    else:
        op()


def refuse_host_sized(operation: str, device) -> None:
    """Raises when `device` is capturing: `operation` reads arrays on the host to size its outputs, which a
    graph, whose arrays are only filled at replay, cannot do."""
    if recording_on(device):
        raise RuntimeError(f"{operation} reads its input on the host to size its outputs, so it cannot be recorded "
                           f"in a graph capture: run it outside the capture")
