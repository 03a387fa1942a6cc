"""`wp.launch`: checks every argument, packs the launch struct and runs the kernel.

A plain launch takes the planned path (launch_plan.py); debug builds, verify_fp, adjoint launches and kernels
without a plan take the checked one here (the checks and packing: launch_args.py). All checks run before
anything is packed or launched, and every error names the kernel and the argument, as Warp's do.
"""

from __future__ import annotations

import ctypes

from mlwarp.launching import cpu_lanes as _lanes
from mlwarp.launching import debug as _debug
from mlwarp.launching import launch_plan as _plan
from mlwarp.autodiff import recording as _recording
from mlwarp.autodiff.adjoint import launch_adjoint
from mlwarp.core.config import config
from mlwarp.launching.compile_ahead import compile_ahead_of_first_launch
from mlwarp.launching.cuda_launch import launch_cuda
from mlwarp.errors import LaunchError
from mlwarp.kernels.kernel import Kernel
from mlwarp.launching.logger import get_logger
from mlwarp.core import types as wt
from mlwarp.launching.launch_args import check_arg_count, check_composite_arg, launch_device, launch_dims, pack_args
from mlwarp.runtime import capture as _capture
from mlwarp.runtime.device import get_device


def launch(kernel, dim, inputs=(), outputs=(), device=None, stream=None, adjoint=False, adj_inputs=None,
           adj_outputs=None, record_cmd=False, block_dim=None, max_blocks=0, record_tape=True):
    if config.print_launches:  # Warp's debugging aid, through the active logger (wp.set_logger)
        shown = [[] if isinstance(x, tuple) and not x else x for x in (inputs, outputs)]  # (Warp's defaults are lists)
        get_logger().info(f"kernel: {kernel.key} dim: {dim} inputs: {shown[0]} outputs: {shown[1]} "
                          f"device: {get_device(device)}")
    if block_dim is None:  # (Warp's default: 256 on CUDA, one lane on the CPU)
        block_dim = 256
    elif _lanes.wants_lanes(block_dim) and not adjoint and type(kernel) is Kernel and not kernel.is_generic:
        # Warp's CPU lanes (wp.config.enable_cpu_blocks): the kernel's build for block_dim lanes (cpu_lanes.py)
        kernel = _lanes.lane_kernel(kernel, stream.device if stream is not None else device, block_dim)
    if _capture.active is not None and not record_cmd and _capture_launch(
            kernel, dim, inputs, outputs, device, stream, adjoint, adj_inputs, adj_outputs, block_dim, max_blocks,
            record_tape):
        return None
    if type(kernel) is Kernel and record_tape and not adjoint:  # the common case: a planned plain launch, inline
        plan = kernel.__dict__.get("_launch_plan")
        if plan is not None and not kernel.is_generic and _plan.is_plain(kernel):
            done = plan.launch(dim, inputs, outputs, device, record_cmd, stream, block_dim, max_blocks)
            if done is not NotImplemented:
                return done
    if not record_tape and _recording.recording():  # run it, but the recording tape does not see it
        with _recording.paused():
            return launch(kernel, dim, inputs, outputs, device, stream, adjoint, adj_inputs, adj_outputs, record_cmd,
                          block_dim, max_blocks)
    if getattr(kernel, "is_generic", False):  # a template: its instance for these arguments' types
        kernel = kernel.instance_for(list(inputs) + list(outputs))
    if not adjoint:  # packing planned once per kernel (launch_plan.py); NotImplemented: the path below
        done = _plan.fast_launch(kernel, dim, inputs, outputs, device, record_cmd, stream, block_dim, max_blocks)
        if done is not NotImplemented:
            return done
    if not isinstance(kernel, Kernel):
        raise LaunchError(f"wp.launch expects a @wp.kernel, got {type(kernel).__name__}")
    if record_cmd:  # a launch the plan does not take: recorded as the call itself
        return ReplayLaunch(kernel, dim, inputs, outputs, dict(
            device=device, stream=stream, adjoint=adjoint, adj_inputs=adj_inputs, adj_outputs=adj_outputs,
            block_dim=block_dim, max_blocks=max_blocks))
    dims = launch_dims(dim, kernel)
    if adjoint:  # the adjoint kernel k_adj (python/mlwarp/autodiff/adjoint.py)
        return launch_adjoint(kernel, dims, inputs, outputs, adj_inputs, adj_outputs, device)
    args = list(inputs) + list(outputs)
    check_arg_count(kernel, args)
    device = launch_device(kernel, device)
    if _recording._active:  # the tape saves what this launch overwrites (python/mlwarp/autodiff/overwrites.py)
        _recording.before_launch(kernel, args, device)
    if device.is_cuda:  # python/mlwarp/launching/cuda_launch.py
        launch_cuda(kernel, dims, args, device, stream, block_dim, max_blocks)
    else:
        _launch_cpu(kernel, dims, args, device)
    if _recording.recording():
        _recording.record_launch(kernel, dims, inputs, outputs, device)


def _capture_launch(kernel, dim, inputs, outputs, device, stream, adjoint, adj_inputs, adj_outputs, block_dim,
                    max_blocks, record_tape) -> bool:
    """A launch on a capturing device (python/mlwarp/launching/graph_capture.py): its launch command, with every check of
    wp.launch made now, goes into the graph instead of running; a recording Tape still sees it, as in Warp."""
    target = launch_device(kernel, device)
    if not _capture.recording_on(target):
        return False
    cmd = launch(kernel, dim, inputs, outputs, device, stream, adjoint, adj_inputs, adj_outputs, True, block_dim,
                 max_blocks, record_tape)
    if record_tape and not adjoint and _recording._active:  # saved in the graph, before the launch
        _recording.before_launch(cmd.kernel, list(inputs) + list(outputs), target)
    _capture.record(cmd.captured_op())
    if record_tape and not adjoint and _recording.recording():
        _recording.record_launch(cmd.kernel, launch_dims(dim, cmd.kernel), inputs, outputs, target)
    return True


def _launch_cpu(kernel, dims, args, device) -> None:
    built = _debug.for_launch(kernel)  # the debug build when debug mode is on (python/mlwarp/launching/debug.py)
    packed, keep_alive = pack_args(built, args, device)
    record = _debug.attach_record(built, packed)
    total = 1
    for d in range(4):
        packed.dims[d] = dims[d] if d < len(dims) else 1
        total *= packed.dims[d]
    compile_ahead_of_first_launch(built, args, device)  # (before its first compile: background ones beside it)
    compiled = built.compiled(device)  # compile errors surface even for an empty launch
    if total:
        compiled.run(ctypes.addressof(packed), _lanes.block_count(getattr(compiled, "meta", None), total))
        _debug.after_launch(built, compiled, record, args)
    del keep_alive


class ReplayLaunch:
    """`record_cmd=True` for a launch the plan does not take (a debug build, verify_fp, an adjoint launch,
    a kernel without a plan): `launch()` calls wp.launch again with the arguments it holds, checks included."""

    def __init__(self, kernel, dim, inputs, outputs, launch_kwargs: dict):
        self.kernel = kernel
        self.dim = dim
        self._args = [*inputs, *outputs]
        self._split = len(inputs)  # an adjoint launch pairs adj_inputs with inputs, adj_outputs with outputs
        self._kwargs = launch_kwargs
        adj_in, adj_out = launch_kwargs.get("adj_inputs"), launch_kwargs.get("adj_outputs")
        self._adj = [*(adj_in or [None] * len(inputs)), *(adj_out or [None] * len(outputs))]

    def set_dim(self, dim) -> None:
        self.dim = dim

    def set_param_at_index(self, index: int, value, adjoint: bool = False) -> None:
        if adjoint:
            if not self._kwargs.get("adjoint"):
                raise LaunchError(f"Error launching kernel '{self.kernel.key}': adjoint parameters belong to an "
                                  f"adjoint launch (adjoint=True)")
            self._adj[index] = value
            return
        t = self.kernel.params[index]
        if wt.is_composite(t) and not wt.is_struct(t):  # checked now, as Warp's Launch converts it now
            check_composite_arg(self.kernel, self.kernel.arg_names[index], t, value)
        self._args[index] = value

    def set_param_by_name(self, name: str, value, adjoint: bool = False) -> None:
        if name not in self.kernel.arg_names:
            raise ValueError(f"Argument '{name}' not found in kernel '{self.kernel.key}'")
        self.set_param_at_index(self.kernel.arg_names.index(name), value, adjoint)

    def set_params(self, values) -> None:
        for i, v in enumerate(values):
            self.set_param_at_index(i, v)

    def set_param_at_index_from_ctype(self, index: int, value) -> None:
        """A parameter as its C value (a struct's `__ctype__()`, an array's descriptor, a ctypes or Python scalar,
        a vector or matrix), taken without Warp's conversions; wp.launch reads it at each replay."""
        self._args[index] = value

    def set_param_by_name_from_ctype(self, name: str, value) -> None:
        if name not in self.kernel.arg_names:
            raise ValueError(f"Argument '{name}' not found in kernel '{self.kernel.key}'")
        self.set_param_at_index_from_ctype(self.kernel.arg_names.index(name), value)

    def set_params_from_ctypes(self, values) -> None:
        for i, v in enumerate(values):
            self.set_param_at_index_from_ctype(i, v)

    def launch(self, stream=None) -> None:
        if _capture.active is not None and _capture.recording_on(launch_device(self.kernel, self._kwargs["device"])):
            _capture.record(self.captured_op(stream))
            return
        self._launch_with(self.dim, self._args, self._adj, dict(self._kwargs, stream=stream or self._kwargs["stream"]))

    def _launch_with(self, dim, args, adj, kwargs) -> None:
        if kwargs.get("adjoint"):
            kwargs.update(adj_inputs=adj[:self._split], adj_outputs=adj[self._split:])
        launch(self.kernel, dim, inputs=args[:self._split], outputs=args[self._split:], **kwargs)

    def captured_op(self, stream=None):
        """This launch as a graph operation (python/mlwarp/launching/graph_capture.py): wp.launch again at each replay, with the
        arguments as they are now; no Tape records a replay."""
        dim, args, adj = self.dim, list(self._args), list(self._adj)
        kwargs = dict(self._kwargs, stream=stream or self._kwargs["stream"], record_tape=False)
        return lambda: self._launch_with(dim, args, adj, dict(kwargs))


_plan.Launch._replay = ReplayLaunch


def synchronize():
    """CPU launches complete before wp.launch returns: nothing to wait for."""


def synchronize_device(device=None):
    get_device(device)
