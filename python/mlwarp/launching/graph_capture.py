"""Warp's graph capture on the CPU: `wp.capture_begin` / `wp.capture_end` / `wp.capture_launch`,
`wp.ScopedCapture`, the conditional nodes `wp.capture_if` / `wp.capture_while`, and `wp.Graph`.

While a capture is open (runtime/capture.py holds it), the work issued on its device is recorded instead of
run, as in Warp: kernel launches (each a prepared launch, python/mlwarp/launching/launch_plan.py's, with its argument bytes as
they were at capture time), wp.copy, `fill_`/`zero_`/`assign`, the zeroing of arrays that wp.zeros allocates,
a Tape's backward pass, and host-side library steps that read arrays (they run at replay instead). A Graph is
the list of those operations; replaying it calls them in order. capture_if/capture_while record their bodies
as lists of their own, and read their int32 condition at replay time.

CUDA graph capture is not implemented: capture_begin on a CUDA device raises NotImplementedError.
"""

from __future__ import annotations

import ctypes
import enum

from mlwarp.arrays.array import array
from mlwarp.kernels.module import force_load
from mlwarp.runtime import capture as _capture
from mlwarp.runtime.device import get_device
from mlwarp.types import int32

__all__ = ["CaptureMode", "Graph", "ScopedCapture", "capture_begin", "capture_end", "capture_launch", "capture_if",
           "capture_while", "capture_pause", "capture_resume", "capture_save", "capture_load",
           "capture_load_from_bytes", "capture_debug_dot_print", "is_conditional_graph_supported"]


class CaptureMode(enum.IntEnum):
    """CUDA's stream capture modes (cudaStreamCaptureMode); accepted and ignored on the CPU, as in Warp."""

    GLOBAL = 0
    THREAD_LOCAL = 1
    RELAXED = 2


class Graph:
    """A captured graph: the operations recorded between wp.capture_begin and wp.capture_end, replayed in
    order by wp.capture_launch."""

    def __init__(self, device=None, capture_id: int = 0):
        self.device = get_device(device)
        self.capture_id = capture_id
        self.apic = False  # captured with apic=True (meant for capture_save)
        self.ops: list = []

    def _replay(self) -> None:
        for op in self.ops:
            op()

    def __repr__(self):
        return f"Graph(device={self.device}, operations={len(self.ops)})"


_open_graph: Graph | None = None  # the graph the capture in progress fills
_paused: tuple | None = None  # (capture, graph) of a capture_pause'd CPU capture


def _capture_device(device, stream):
    if stream is not None:
        return stream.device
    return get_device(device)


def capture_begin(device=None, stream=None, force_module_load=None, external: bool = False, apic: bool = False,
                  capture_mode: CaptureMode = CaptureMode.THREAD_LOCAL) -> None:
    """Starts recording the work issued on `device` (default: the current device) into a graph that
    wp.capture_end returns; nothing recorded runs until the graph is launched."""
    global _open_graph
    device = _capture_device(device, stream)
    if _capture.active is not None:
        raise RuntimeError("Graph capture already in progress")
    if not device.is_cpu:
        raise NotImplementedError(f"Graph capture on CUDA devices is not implemented in mlwarp (device '{device}'); "
                                  f"capture on the CPU (device='cpu')")
    if force_module_load:
        force_load(device)
    graph = Graph(device)
    graph.apic = bool(apic)
    capture = _capture.Capture(device, savable=bool(apic))
    capture.ops = [graph.ops]
    _capture.active, _open_graph = capture, graph


def capture_end(device=None, stream=None) -> Graph:
    """Ends the capture in progress and returns its graph."""
    global _open_graph, _paused
    if _capture.active is None:
        if _paused is not None:  # a paused capture can end too (its recording is off already)
            graph, _paused = _paused[1], None
            return graph
        raise RuntimeError("Graph capture is not active on this device")
    if len(_capture.active.ops) > 1:
        raise RuntimeError("capture_end() inside a capture_if/capture_while body: the body must return first")
    graph = _open_graph
    _capture.active, _open_graph = None, None
    return graph


def capture_pause(device=None, stream=None) -> Graph:
    """Stops recording for a while (work issued meanwhile runs at once); capture_resume continues the graph."""
    global _open_graph, _paused
    if _capture.active is None:
        raise RuntimeError("Graph capture is not active on this device")
    _paused = (_capture.active, _open_graph)
    _capture.active, _open_graph = None, None
    return _paused[1]


def capture_resume(graph: Graph, device=None, stream=None) -> None:
    """Continues recording into the graph that capture_pause returned."""
    global _open_graph, _paused
    if _paused is None or _paused[1] is not graph:
        raise RuntimeError("CPU graph capture is not paused")
    if _capture.active is not None:
        raise RuntimeError("Graph capture already in progress")
    (_capture.active, _open_graph), _paused = _paused, None


def capture_launch(graph: Graph, stream=None) -> None:
    """Replays `graph`'s operations in order. Inside another capture on the same device, the replay is
    recorded into that one instead (a child graph)."""
    if not isinstance(graph, Graph):
        raise TypeError(f"capture_launch() expects a wp.Graph (from wp.capture_end), got {type(graph).__name__}")
    if graph is _open_graph:
        raise RuntimeError("Cannot launch a graph that is still being captured")
    if _capture.recording_on(graph.device):
        _capture.record(graph._replay)
    else:
        graph._replay()


def _condition_cell(condition, what: str):
    """The int32 that the condition array's first element is, read in place (ctypes over its memory)."""
    if not isinstance(condition, array) or condition.dtype is not int32 or condition.is_annotation:
        raise TypeError("Condition must be a Warp array of int32 with a single element")
    if condition.size == 0:
        raise TypeError("Condition must be a Warp array of int32 with a single element")
    if not condition.device.is_cpu:
        raise NotImplementedError(f"{what}() on a CUDA condition array is not implemented in mlwarp: graph "
                                  f"capture runs on the CPU")
    return ctypes.c_int32.from_address(condition.ptr)


def _body_ops(body, name: str, kwargs) -> list:
    """The operations that calling `body` (a callable, or a Graph: its replay) records, in a list of their own."""
    if isinstance(body, Graph):
        return [body._replay]
    if not callable(body):
        raise TypeError(f"{name} must be a Callable or a Graph")
    capture = _capture.active
    ops: list = []
    capture.ops.append(ops)
    try:
        body(**kwargs)
    finally:
        capture.ops.pop()
    return ops


def _run_body(body, name: str, kwargs) -> None:
    if isinstance(body, Graph):
        capture_launch(body)
    elif callable(body):
        body(**kwargs)
    else:
        raise TypeError(f"{name} must be a Callable or a Graph")


def _run_all(ops) -> None:
    for op in ops:
        op()


def capture_if(condition, on_true=None, on_false=None, stream=None, **kwargs) -> None:
    """Runs `on_true` when condition[0] is non-zero, else `on_false` (each a callable, called with `kwargs`, or
    a Graph). Inside a capture both branches are recorded, and the condition is read at replay."""
    if on_true is None and on_false is None:
        return
    cell = _condition_cell(condition, "capture_if")
    if _capture.recording_on(condition.device):
        true_ops = _body_ops(on_true, "on_true", kwargs) if on_true is not None else []
        false_ops = _body_ops(on_false, "on_false", kwargs) if on_false is not None else []

        def conditional(cell=cell, keep=condition):
            _run_all(true_ops if cell.value else false_ops)

        _capture.record(conditional)
        return
    if cell.value:
        if on_true is not None:
            _run_body(on_true, "on_true", kwargs)
    elif on_false is not None:
        _run_body(on_false, "on_false", kwargs)


def capture_while(condition, while_body, stream=None, **kwargs) -> None:
    """Runs `while_body` (a callable, called with `kwargs`, or a Graph) while condition[0] is non-zero; the
    body is what changes the condition. Inside a capture the body is recorded once, and the loop runs at replay."""
    cell = _condition_cell(condition, "capture_while")
    if _capture.recording_on(condition.device):
        body_ops = _body_ops(while_body, "while_body", kwargs)

        def loop(cell=cell, keep=condition):
            while cell.value:
                _run_all(body_ops)

        _capture.record(loop)
        return
    while cell.value:
        _run_body(while_body, "while_body", kwargs)


def is_conditional_graph_supported() -> bool:
    """Whether CUDA graphs can hold conditional nodes: False, mlwarp has no CUDA graph capture (capture_if and
    capture_while work in CPU captures and outside captures)."""
    return False


class ScopedCapture:
    """`with wp.ScopedCapture(device) as capture:` captures the work issued inside; `capture.graph` is the graph
    afterwards. An exception inside still ends the capture (and is raised, not a capture_end error)."""

    def __init__(self, device=None, stream=None, force_module_load=None, external=False, apic: bool = False,
                 capture_mode: CaptureMode = CaptureMode.THREAD_LOCAL):
        self.device, self.stream = device, stream
        self.force_module_load, self.external, self.apic, self.capture_mode = force_module_load, external, apic, \
            capture_mode
        self.active = False
        self.graph = None

    def __enter__(self):
        capture_begin(device=self.device, stream=self.stream, force_module_load=self.force_module_load,
                      external=self.external, apic=self.apic, capture_mode=self.capture_mode)
        self.active = True
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if self.active:
            try:
                self.graph = capture_end(device=self.device, stream=self.stream)
            except Exception:
                if exc_type is None:
                    raise
            finally:
                self.active = False


def capture_save(graph, path, *args, **kwargs):
    raise NotImplementedError("wp.capture_save() is not implemented in mlwarp: a CPU graph holds Python "
                              "operations, which have no .wrp serialization")


def capture_load(path, *args, **kwargs):
    raise NotImplementedError("wp.capture_load() is not implemented in mlwarp: there is no .wrp graph format")


def capture_load_from_bytes(data, *args, **kwargs):
    raise NotImplementedError("wp.capture_load_from_bytes() is not implemented in mlwarp: there is no .wrp graph "
                              "format")


def capture_debug_dot_print(graph, path, verbose: bool = True):
    raise NotImplementedError("wp.capture_debug_dot_print() draws CUDA graphs; mlwarp has no CUDA graph capture")
