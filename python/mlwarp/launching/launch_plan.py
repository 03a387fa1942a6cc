"""The fast launch path: argument packing planned once per kernel, and `Launch`, Warp's reusable
launch command (`wp.launch(..., record_cmd=True)`).

A plan lays the launch struct of runtime/abi.py out as one `struct.Struct` (checked field by
field against the ctypes layout), so a launch is: a few identity checks per argument, one
`pack`, one call into the kernel. Anything unusual (another argument kind, a numpy dtype that
needs a look, a bad value) takes the checks of launch.py, which raise the same errors as
before; a kernel whose parameters the plan cannot lay out has no plan and launches the plain way.

The data pointer, shape and strides of a `wp.array` are read once and kept on the array
(`_launch_fields`), keyed by the numpy view they came from. CUDA arrays keep their device address
in the same view (cuda_array.py), so a CUDA launch packs the same struct and hands its bytes to
`cuLaunchKernel`. `ReplayLaunch`, what record_cmd=True gives for a launch without a plan, is in launch.py.
"""

from __future__ import annotations

import ctypes
import struct
import weakref

from mlwarp.launching import debug as _debug
from mlwarp.launching import launch_args as _args
from mlwarp.autodiff import recording as _recording
from mlwarp.core import types as wt
from mlwarp.arrays.array import array
from mlwarp.config import config
from mlwarp.arrays.cuda_array import CudaArray
from mlwarp.launching.compile_ahead import compile_ahead_of_first_launch
from mlwarp.launching.cuda_launch import as_device_array, check_launch_config
from mlwarp.errors import LaunchError
from mlwarp.kernels.kernel import Kernel
from mlwarp.kernels.module import FunctionDefinitions
from mlwarp.runtime import cpu as _cpu
from mlwarp.runtime import device as _devices
from mlwarp.runtime import capture as _capture
from mlwarp.runtime.abi import ArrayParam

INT32_MAX = 2**31 - 1
# the array classes whose launch fields the plan caches
PLAIN_ARRAYS = {array, CudaArray}


def plan_for(kernel):
    """The kernel's plan, built on first use; None when its parameters have no flat layout."""
    plan = kernel.__dict__.get("_launch_plan", False)
    if plan is False:
        plan = LaunchPlan.build(kernel)
        kernel.__dict__["_launch_plan"] = plan
    return plan


def is_plain(kernel) -> bool:
    """A launch without the debug build or verify_fp checks around it."""
    if config.verify_fp:
        return False
    mode = kernel.options.get("mode")  # debug.mode_of, inline: release mode launches the kernel itself
    if mode is None:
        mode = kernel.module.options.get("mode")
    return (mode or config.mode) == "release" or _debug.for_launch(kernel) is kernel


def check_dims(kernel, dim) -> tuple:
    """`dim` as 4 ints and their product; each below 2**31 (thread indices are int32 in kernels)."""
    if type(dim) is int and 0 <= dim <= INT32_MAX:
        return (dim, 1, 1, 1), dim
    dims = _args.launch_dims(dim, kernel)
    if any(d > INT32_MAX for d in dims):
        raise LaunchError(f"Error launching kernel '{kernel.key}': each launch dimension must be below 2**31 "
                          f"(wp.tid() is int32), got {dim!r}")
    total = 1
    for d in dims:
        total *= d
    return dims + (1,) * (4 - len(dims)), total


def _scalar_code(t) -> str | None:
    code = getattr(getattr(t, "_ctype_", None), "_type_", None)
    return code if isinstance(code, str) and len(code) == 1 else None


class LaunchPlan:
    def __init__(self, kernel, fmt: str, slots: list):
        self.kernel = kernel
        self.struct = struct.Struct(fmt)
        self.slots = slots  # per parameter: (offset, struct.Struct of its fields)
        self.packers = [self._array_packer(i, p) if isinstance(p, ArrayParam) else
                        self._composite_packer(i, p) if wt.is_composite(p) and not wt.is_struct(p) else
                        self._scalar_packer(i, p)
                        for i, p in enumerate(kernel.params)]
        self.nparams = len(kernel.params)
        # `fields(args, device)`: the struct fields of all arguments. The first launches take the packers one by
        # one (what the compiled function does for an argument its inline checks do not take); the function
        # written out per parameter (_compile_fields: ~0.2 us a launch less, ~0.2 ms to compile) replaces
        # them from the third launch on, so a process that launches a kernel once does not compile it.
        self.fields = self._first_fields
        self._first_launches = 0
        # the last launch's arguments and their fields (a simulation loop launches a kernel with the same arrays and
        # scalars over and over): (device, references, fields), and the launch's before with other arguments (a
        # loop swapping two buffers, `inputs=[a, b]` then `[b, a]`). Arrays are held by weak references (a launch
        # keeps no array alive); scalars are ints and floats, whose objects do not change. Kernels with composite
        # or struct parameters (mutable values) keep none.
        self._memo = self._memo_other = None
        self._memo_kinds = self._argument_kinds(kernel.params)
        self._same = None
        # (fields, dims, the launch struct's bytes) of the last launch, and of the one before with other fields
        self._packed = self._packed_other = (None, None, None)
        self._runners = {}
        self._last = (None, None)  # (device, its runner) of the last launch
        self.tid_count = 4  # of the compiled kernel (runner() sets it): no folding before
        self.cpu_lanes = 0  # a lane build's lanes per block (cpu_lanes.py): its entry runs once per block

    @classmethod
    def build(cls, kernel):
        struct_t = kernel.launch_struct
        if len(struct_t._fields_) != len(kernel.params) + 1:  # hidden parameters (debug builds)
            return None
        fmt, slots = "@4q", []
        for i, p in enumerate(kernel.params):
            field = getattr(struct_t, f"p{i}")
            if isinstance(p, ArrayParam):
                code = "P" + "q" * (2 * p.ndim)
            elif wt.is_composite(p) and not wt.is_struct(p):  # its C bytes (vectors, matrices, ...), where ctypes puts them
                gap = field.offset - struct.calcsize(fmt)
                if gap < 0:
                    return None
                fmt += f"{gap}x" if gap else ""
                code = f"{field.size}s"
            else:
                code = _scalar_code(p)
            if code is None:
                return None
            offset = struct.calcsize(fmt + code) - struct.calcsize(code)
            if offset != field.offset:
                return None
            slots.append((offset, struct.Struct("@" + code)))
            fmt += code
        pad = ctypes.sizeof(struct_t) - struct.calcsize(fmt)  # the trailing padding: a GPU copies sizeof bytes
        return cls(kernel, fmt + f"{pad}x" if pad > 0 else fmt, slots)

    # -- per-parameter packers: (value, device) -> tuple of struct fields --------------
    def _array_packer(self, index, p):
        kernel, name, dtype, ndim = self.kernel, self.kernel.arg_names[index], p.dtype, p.ndim
        view_ndim = ndim + len(wt.inner_shape(dtype))

        def slow(value, device):
            if isinstance(value, ctypes.Structure):
                _args.check_descriptor_arg(kernel, name, p, value)
                return (value.data or 0, *value.shape, *value.strides)
            if device.is_cuda:  # torch/CuPy CUDA arrays: a CudaArray view of the same memory
                value = as_device_array(value, device)
            view = _args.check_array_arg(kernel, name, p, value, device)
            data = view.__array_interface__["data"][0] if view.size else 0  # empty or None: null (pack_array)
            fields = (data, *view.shape[:ndim], *view.strides[:ndim])
            if type(value) in PLAIN_ARRAYS and value._np is view:
                value._launch_fields = (view, view.ndim, fields)
            return fields

        def pack(value, device):
            if type(value) in PLAIN_ARRAYS and value.dtype is dtype and value.device is device:
                cached = value.__dict__.get("_launch_fields")
                if cached is not None and cached[0] is value._np and cached[1] == view_ndim:
                    return cached[2]
            return slow(value, device)

        return pack

    def _scalar_packer(self, index, t):
        kernel, name = self.kernel, self.kernel.arg_names[index]
        if wt.is_int(t):
            info = __import__("numpy").iinfo(t._np_)
            lo, hi = int(info.min), int(info.max)

            def pack(value, device):
                if type(value) is int and lo <= value <= hi:
                    return (value,)
                return (_args.check_scalar_arg(kernel, name, t, value),)
        elif t in (wt.float32, wt.float64):
            def pack(value, device):
                if type(value) is float:
                    return (value,)
                return (_args.check_scalar_arg(kernel, name, t, value),)
        else:
            def pack(value, device):
                return (_args.check_scalar_arg(kernel, name, t, value),)
        return pack

    def _composite_packer(self, index, t):
        kernel, name = self.kernel, self.kernel.arg_names[index]

        def pack(value, device):  # a value of the parameter's own type is its bytes; others are converted first
            return (bytes(value if type(value) is t else _args.check_composite_arg(kernel, name, t, value)),)

        return pack

    @staticmethod
    def _argument_kinds(params):
        """Per parameter, "array" or "scalar" (int, float), or None when a parameter's values are mutable."""
        kinds = ["array" if isinstance(p, ArrayParam) else "scalar" if _scalar_code(p) is not None and
                 (wt.is_int(p) or p in (wt.float32, wt.float64)) else None for p in params]
        return None if None in kinds else kinds

    def _memo_of(self, args, device, values):
        """The memo of a launch whose fields are `values`: None unless every array is a plain wp.array and every
        scalar an int or float."""
        refs = []
        for kind, value in zip(self._memo_kinds, args):
            if kind == "array":
                if type(value) not in PLAIN_ARRAYS:
                    return None
                refs.append(weakref.ref(value))
            elif type(value) in (int, float):
                refs.append(value)
            else:
                return None
        if self._same is None:
            self._same = self._compile_same()
        return device, tuple(refs), values

    def _compile_same(self):
        """`same(args, refs)`: whether every argument is the object of the memo's launch (by identity)."""
        tests = [f"v{i} is refs[{i}]()" if kind == "array" else f"v{i} is refs[{i}]"
                 for i, kind in enumerate(self._memo_kinds)]
        lines = ["def same(args, refs):"]
        if tests:
            lines.append("    " + "".join(f"v{i}, " for i in range(len(tests))) + "= args")
        lines.append("    return " + (" and ".join(tests) or "True"))
        names = {}
        exec("\n".join(lines), names)
        return names["same"]

    def _first_fields(self, args, device):
        self._first_launches += 1
        if self._first_launches >= 2:
            self.fields = self._compile_fields()
        out = []
        for pack, value in zip(self.packers, args):
            out += pack(value, device)
        return tuple(out)

    def _compile_fields(self):
        """`fields(args, device)`: the struct fields of all arguments, written out per parameter so
        the common case (a wp.array of the right dtype, a float, an int in range) is a few
        identity checks inline; anything else goes to that parameter's packer."""
        names = {"plain": PLAIN_ARRAYS}
        lines, out = ["def fields(args, device):"], []
        n = self.nparams
        if n:
            lines.append("    " + "".join(f"v{i}, " for i in range(n)) + "= args")
        for i, p in enumerate(self.kernel.params):
            names[f"pack{i}"] = self.packers[i]
            if isinstance(p, ArrayParam):
                names[f"dt{i}"] = p.dtype
                nd = p.ndim + len(wt.inner_shape(p.dtype))
                lines += [
                    f"    c = v{i}.__dict__.get('_launch_fields') if type(v{i}) in plain and v{i}.dtype is dt{i} "
                    f"and v{i}.device is device else None",
                    f"    f{i} = c[2] if c is not None and c[0] is v{i}._np and c[1] == {nd} else pack{i}(v{i}, device)"]
                out.append(f"*f{i}")
            elif wt.is_int(p):
                info = __import__("numpy").iinfo(p._np_)
                lines.append(f"    f{i} = v{i} if type(v{i}) is int and {int(info.min)} <= v{i} <= {int(info.max)} "
                             f"else pack{i}(v{i}, device)[0]")
                out.append(f"f{i}")
            elif p in (wt.float32, wt.float64):
                lines.append(f"    f{i} = v{i} if type(v{i}) is float else pack{i}(v{i}, device)[0]")
                out.append(f"f{i}")
            else:
                lines.append(f"    f{i} = pack{i}(v{i}, device)[0]")
                out.append(f"f{i}")
        lines.append("    return (" + "".join(f"{o}, " for o in out) + ")")
        exec("\n".join(lines), names)
        return names["fields"]

    # -- launching ---------------------------------------------------------------------

    def runner(self, device):
        """What runs the kernel on `device`: the CPU library's `run`, or the loaded CUDA kernel."""
        run = self._runners.get(device)
        if run is None:
            compiled = self.kernel.compiled(device)
            run = self._runners[device] = cpu_runner(compiled) if device.is_cpu else compiled
            self.tid_count = getattr(compiled, "meta", {}).get("tid_dims", 4)  # the same code for every device
            self.cpu_lanes = getattr(compiled, "meta", {}).get("cpu_lanes") or 0
        self._last = (device, run)
        return run

    def launch(self, dim, inputs, outputs, device, record_cmd, stream=None, block_dim=256, max_blocks=0):
        kernel = self.kernel
        if type(dim) is int and 0 <= dim <= INT32_MAX:  # check_dims' common case, inline
            dims, total = (dim, 1, 1, 1), dim
        else:
            dims, total = check_dims(kernel, dim)
        args = [*inputs, *outputs]
        if len(args) != self.nparams:
            _args.check_arg_count(kernel, args)
        # the default device or a registered name without a call (launch_device: the rest, and the errors)
        found = _devices._default if device is None else _devices._devices.get(device) if type(device) is str else None
        device = found or _args.launch_device(kernel, device)
        if device.is_cuda:
            check_launch_config(kernel, device, stream, block_dim)
        elif not device.is_cpu:
            return NotImplemented
        memo = self._memo
        if memo is not None and memo[0] is device and self._same(args, memo[1]):
            values = memo[2]
        else:
            other = self._memo_other
            if other is not None and other[0] is device and self._same(args, other[1]):
                values = other[2]
                self._memo, self._memo_other = other, memo
            else:
                values = self.fields(args, device)
                if self._memo_kinds is not None:
                    self._memo, self._memo_other = self._memo_of(args, device, values), memo
        if (kernel._captured_generation != kernel.module.generation and kernel.recapture_if_modified()) or \
                (kernel._captured_definitions != FunctionDefinitions.count and
                 kernel.recapture_if_modified(callees_only=True)):
            # its module was modified and a captured global changed since: recompile (Warp's rule)
            self._runners.clear()
            self._last = (None, None)
        # compile errors surface even for an empty launch; the last device's runner without hashing a Device
        # (its __hash__ is Python code)
        last_device, run = self._last
        if last_device is not device:
            if device.is_cpu and device.alias not in kernel._compiled:  # its first launch: the forward compile next
                compile_ahead_of_first_launch(kernel, args, device)
            run = self.runner(device)
        if record_cmd:
            return Launch(self, device, dims, total, args, values, stream, block_dim, max_blocks)
        if _recording._active:  # the tape saves what this launch overwrites (python/mlwarp/autodiff/overwrites.py)
            _recording.before_launch(kernel, args, device)
        if total:
            repeats = 1
            if dims[1] != 1 or dims[2] != 1 or dims[3] != 1:  # wp.tid() may give fewer indices than dims
                dims, total, repeats = _args.fold_dims(dims, total, self.tid_count)
            last = self._packed
            if last[0] is values and last[1] == dims:  # (the memo's fields, the same launch size: the same bytes)
                packed = last[2]
            else:
                other = self._packed_other
                if other[0] is values and other[1] == dims:
                    packed = other[2]
                    self._packed, self._packed_other = other, last
                else:
                    packed = self.struct.pack(*dims, *values)
                    self._packed, self._packed_other = (values, dims, packed), last
            if self.cpu_lanes:  # one entry iteration per block of cpu_lanes threads
                total = -(-total // self.cpu_lanes)
            for _ in range(repeats):
                if device.is_cpu:
                    run(packed, total)
                else:  # the driver copies the struct at the launch
                    run.launch(None, total, block_dim, max_blocks, stream,
                               args_ptr=ctypes.cast(ctypes.c_char_p(packed), ctypes.c_void_p).value)
        if _recording._active:  # recording.recording(), inline
            _recording.record_launch(kernel, _args.launch_dims(dim, kernel), inputs, outputs, device)
        return None


_ZERO = ctypes.c_int64(0)


def _nothing() -> None:
    """The graph operation of a launch of no threads."""


def cpu_runner(compiled):
    """`compiled.run` (runtime/cpu.py's CpuKernel), whose serial case (a launch of fewer than the kernel's
    `serial_below` threads, MIN_PARALLEL once its first small launches are timed, or a deterministic kernel:
    the calling thread runs it) calls the entry with ctypes values as they
    are, without the entry's `argtypes` conversion: ~0.3 us of a ~3 us launch. `packed`: bytes or a ctypes
    buffer, never an int address (ctypes would pass that as a C int)."""
    if type(compiled) is not _cpu.CpuKernel or compiled.launch_needs:  # (run() brings its needs up to date)
        return compiled.run
    run, serial = compiled.run, compiled.serial
    raw = compiled.library[serial.__name__]  # a second handle on the entry, without argtypes
    raw.restype = None
    totals = {}  # thread count -> its c_int64 (launches repeat a few sizes)

    def run_cpu(packed, total):
        if total < compiled.serial_below or compiled.deterministic:
            n = totals.get(total)
            if n is None:
                if len(totals) > 64:
                    totals.clear()
                n = totals[total] = ctypes.c_int64(total)
            raw(packed, _ZERO, n)
        else:
            run(packed, total)

    return run_cpu


def fast_launch(kernel, dim, inputs, outputs, device, record_cmd, stream=None, block_dim=256, max_blocks=0):
    """wp.launch for a plain launch (CPU or CUDA) of a kernel with a plan; NotImplemented otherwise."""
    if type(kernel) is not Kernel:
        return NotImplemented
    plan = kernel.__dict__.get("_launch_plan", False)
    if plan is False:
        plan = plan_for(kernel)
    if plan is None or not is_plain(kernel):
        return NotImplemented
    return plan.launch(dim, inputs, outputs, device, record_cmd, stream, block_dim, max_blocks)


def _default_arg(t):
    """What a parameter of a default-constructed Launch holds: a null array, a zero value, a default struct."""
    if isinstance(t, ArrayParam):
        return None
    if wt.is_struct(t):
        return t()
    if wt.is_composite(t):  # all components zero (a quaternion's or transform's too, as Warp's zeroed struct)
        return t(*[0] * t._length_)
    if t is wt.bool_:
        return False
    return 0.0 if wt.is_float(t) else 0


class Launch:
    """A recorded launch (Warp's `wp.launch(..., record_cmd=True)`): `launch()` runs it again with the
    arguments it holds; `set_param_*` and `set_dim` change them, with the checks of wp.launch."""

    # launch.py registers its ReplayLaunch here: Launch(kernel, ...) of a kernel without a plan (composite or
    # struct parameters) or of its adjoint is one (the launch is replayed through wp.launch)
    _replay = None

    def __new__(cls, plan, device=None, *rest, adjoint=False, **kw):
        if isinstance(plan, Kernel) and (adjoint or plan_for(plan) is None):
            return Launch._replay(plan, 0, [_default_arg(p) for p in plan.params], [],
                                  dict(device=device, stream=None, adjoint=adjoint, adj_inputs=None, adj_outputs=None,
                                       block_dim=kw.get("block_dim", 256), max_blocks=kw.get("max_blocks", 0)))
        return super().__new__(cls)

    def __init__(self, plan, device=None, dims=None, total=None, args=None, values=None, stream=None, block_dim=256,
                 max_blocks=0, adjoint=False):
        if isinstance(plan, Kernel):  # Warp's public form, Launch(kernel, device): zero and null parameters, dim 0
            kernel = plan
            plan = plan_for(kernel)
            device = _args.launch_device(kernel, device)
            args = [_default_arg(p) for p in kernel.params]
            values = plan.fields(args, device)
            dims, total = check_dims(kernel, 0)
        self.plan = plan
        self.kernel = plan.kernel
        self.device = device
        self.stream, self.block_dim, self.max_blocks = stream, block_dim, max_blocks  # CUDA only
        self._on_cpu = device.is_cpu
        self._args = list(args)  # keeps the arrays alive while their pointers sit in the buffer
        self._buffer = (ctypes.c_char * max(plan.struct.size, 1))()
        self._run = plan.runner(device)
        plan.struct.pack_into(self._buffer, 0, *dims, *values)
        self._set_dims(dims, total)

    @property
    def dim(self) -> tuple:
        return self._dims

    def set_dim(self, dim) -> None:
        self._set_dims(*check_dims(self.kernel, dim))

    def _set_dims(self, dims, total) -> None:
        self._dims = dims  # as given (`dim`); the struct holds them folded as wp.tid() reads them
        folded, self._total, self._repeats = _args.fold_dims(dims, total, self.plan.tid_count)
        if self.plan.cpu_lanes and self.device.is_cpu:  # a lane build: one entry iteration per block
            self._total = -(-self._total // self.plan.cpu_lanes)
        struct.pack_into("@4q", self._buffer, 0, *folded)

    def set_param_at_index(self, index: int, value, adjoint: bool = False) -> None:
        if adjoint:
            raise LaunchError(f"Error launching kernel '{self.kernel.key}': adjoint parameters belong to an "
                              f"adjoint launch (adjoint=True)")  # a planned launch is a forward one
        offset, layout = self.plan.slots[index]
        layout.pack_into(self._buffer, offset, *self.plan.packers[index](value, self.device))
        self._args[index] = value

    def set_param_at_index_from_ctype(self, index: int, value) -> None:
        """Writes a ctypes value (a scalar or an array descriptor) without conversion."""
        offset, layout = self.plan.slots[index]
        if not isinstance(value, ctypes._SimpleCData) and not isinstance(value, ctypes.Structure):
            raise TypeError(f"expected a ctypes value, got {type(value).__name__}")
        if ctypes.sizeof(value) > layout.size:
            raise TypeError(f"a {type(value).__name__} does not fit parameter {index} of '{self.kernel.key}'")
        ctypes.memmove(ctypes.addressof(self._buffer) + offset, ctypes.addressof(value), ctypes.sizeof(value))
        self._args[index] = value

    def set_param_by_name(self, name: str, value, adjoint: bool = False) -> None:
        self.set_param_at_index(self._index(name), value, adjoint)

    def set_param_by_name_from_ctype(self, name: str, value) -> None:
        self.set_param_at_index_from_ctype(self._index(name), value)

    def set_params(self, values) -> None:
        for i, v in enumerate(values):
            self.set_param_at_index(i, v)

    def set_params_from_ctypes(self, values) -> None:
        for i, v in enumerate(values):
            self.set_param_at_index_from_ctype(i, v)

    def _index(self, name: str) -> int:
        try:
            return self.kernel.arg_names.index(name)
        except ValueError:
            raise ValueError(f"Argument '{name}' not found in kernel '{self.kernel.key}'") from None

    def captured_op(self):
        """This launch as a graph operation (python/mlwarp/launching/graph_capture.py): the kernel run on a copy of the argument
        bytes as they are now, so a later set_param does not change the graph; the arguments kept alive."""
        if not self._on_cpu:
            raise NotImplementedError(f"Capturing a launch of '{self.kernel.key}' on '{self.device}': mlwarp "
                                      f"captures graphs on the CPU only")
        run, total, repeats, keep = self._run, self._total, self._repeats, tuple(self._args)
        packed = bytes(self._buffer)
        if not total:
            return _nothing
        if repeats == 1:
            return lambda keep=keep: run(packed, total)

        def op(keep=keep):
            for _ in range(repeats):
                run(packed, total)

        return op

    def launch(self, stream=None) -> None:
        if _capture.active is not None and _capture.recording_on(self.device):
            _capture.record(self.captured_op())
            return
        if self._on_cpu:
            if self._total:
                for _ in range(self._repeats):
                    self._run(self._buffer, self._total)
        elif self._total:
            for _ in range(self._repeats):
                self._run.launch(None, self._total, self.block_dim, self.max_blocks, stream or self.stream,
                                 args_ptr=ctypes.addressof(self._buffer))
