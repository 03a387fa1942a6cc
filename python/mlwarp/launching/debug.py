"""Debug mode and `verify_fp`: what a launch does around the kernel when they are on.

Debug mode (`wp.config.mode = "debug"`, `wp.set_module_options({"mode": "debug"})`
for the calling module, or `@wp.kernel(module="unique", module_options={"mode": "debug"})`)
launches a debug build of the kernel: its own cache entry (the options are in
the cache key), bounds-checked by the `warp-bounds-check` pass, with line
tables. The build takes a hidden trailing error-record parameter; the launch
zeroes a record, passes it, and raises KernelBoundsError after the launch if
any thread went out of bounds. Release launches take none of these paths.

On CUDA the record is device memory (DeviceRecord), allocated and zeroed on the
launch's stream; after the launch it is copied back on that stream, which is
then synchronised: a debug launch on a GPU returns only once the kernel is done.
"""

from __future__ import annotations

import numpy as np

from mlwarp.core import types as wt
from mlwarp.arrays.array import array
from mlwarp.config import config
from mlwarp.errors import FloatingPointCheckError, KernelAssertionError, KernelBoundsError, LaunchError
from mlwarp.runtime.abi import ArrayParam
from mlwarp.runtime.cuda import memory as mem
from mlwarp.runtime.error_record import new_record, read_record

ERROR_RECORD_PARAM = None  # built on first use


def mode_of(kernel) -> str:
    """The kernel's own option, else its module's, else wp.config.mode."""
    mode = kernel.options.get("mode")
    if mode is None:
        mode = kernel.module.options.get("mode")
    return mode or config.mode


def is_debug_build(kernel) -> bool:
    return kernel.options.get("mode") == "debug"


def hidden_params(kernel) -> list:
    """Parameters the compiler appends to the user's: the error record in a debug build."""
    global ERROR_RECORD_PARAM
    if not is_debug_build(kernel):
        return []
    if ERROR_RECORD_PARAM is None:
        ERROR_RECORD_PARAM = ArrayParam(wt.int64, 1)
    return [ERROR_RECORD_PARAM]


def for_launch(kernel):
    """The kernel to launch: its debug build when debug mode is on for it."""
    if is_debug_build(kernel):
        return kernel
    mode = mode_of(kernel)
    if mode == "release":
        return kernel
    if mode != "debug":
        raise LaunchError(f"Error launching kernel '{kernel.key}': mode must be 'release' or 'debug', got {mode!r} "
                          f"(wp.config.mode, wp.set_module_options or module_options)")
    variant = kernel.__dict__.get("_debug_build")
    if variant is None:
        variant = type(kernel)(kernel.func, key=kernel.key, module=kernel.module,
                               options={**kernel.options, "mode": "debug"}, register=False, declare=False)
        if getattr(kernel, "generic_parent", None) is not None:  # an instance of a generic kernel: the same one
            variant = variant.add_overload(kernel.params)
        kernel.__dict__["_debug_build"] = variant
    return variant


class DeviceRecord:
    """The error record of a debug launch on a CUDA device: RECORD_SLOTS int64 of device memory, allocated and
    zeroed on the launch's stream (and freed on it). `read()`, once, copies it back on that stream and
    synchronises the stream: the record is read once the launch is done."""

    def __init__(self, device, stream):
        self.device, self.stream = device, stream
        self.host = new_record()
        self.alloc = mem.Allocation(device, self.host.nbytes, stream)
        mem.memset8(device, self.alloc.ptr, 0, self.host.nbytes, stream)

    @property
    def ptr(self) -> int:
        return self.alloc.ptr

    def read(self) -> np.ndarray:
        mem.copy_device_to_host(self.device, self.host.ctypes.data, self.alloc.ptr, self.host.nbytes, self.stream)
        self.stream.synchronize()
        self.alloc.free()  # done with it (an exception's traceback would keep this object alive)
        return self.host


def attach_record(kernel, packed, field=None, device=None, stream=None):
    """Zeroes a new error record into the hidden parameter of a debug build's launch struct (field index
    `field`: default after the kernel's parameters; the adjoint launch has twice as many before it). On a
    CUDA `device` the record is a DeviceRecord on `stream` (default: the device's current stream)."""
    if not is_debug_build(kernel):
        return None
    if device is not None and device.is_cuda:
        record = DeviceRecord(device, stream or device.stream)
        data, shape, stride = record.ptr, record.host.shape[0], record.host.strides[0]
    else:
        record = new_record()
        data, shape, stride = record.ctypes.data, record.shape[0], record.strides[0]
    slot = getattr(packed, f"p{len(kernel.params) if field is None else field}")
    slot.data = data
    slot.shape[0] = shape
    slot.strides[0] = stride
    return record


def raise_recorded(kernel, compiled, record) -> None:
    """Raises KernelBoundsError for the first out-of-bounds access the launch recorded, KernelAssertionError for a
    false assert (a DeviceRecord is read back first, which waits for the launch)."""
    if record is None:
        return
    if isinstance(record, DeviceRecord):
        record = record.read()
    failure = read_record(record, (getattr(compiled, "meta", None) or {}).get("debug_sites") or [])
    if failure is not None:
        if failure.site is not None and failure.site.op == "assert":
            raise KernelAssertionError(describe_failure(kernel, failure))
        raise KernelBoundsError(describe_failure(kernel, failure))


def after_launch(kernel, compiled, record, args) -> None:
    """Raises for what the launch recorded (debug) or wrote (verify_fp)."""
    raise_recorded(kernel, compiled, record)
    if config.verify_fp:
        check_finite(kernel, args)


def describe_failure(kernel, f) -> str:
    site = f.site
    if site is not None and site.op == "assert":
        where = site.location + "".join(f" (called from {c})" for c in site.called_from)
        more = f"; {f.count} threads failed it in this launch" if f.count > 1 else ""
        return f"{where}: kernel '{kernel.key}': `{site.message}` failed (thread {f.thread}{more})"
    if site is None:
        where, what = "<unknown site>", "array"
    else:
        where = site.location + "".join(f" (called from {c})" for c in site.called_from)
        what = _array_name(kernel, site)
    index = ", ".join(str(i) for i in f.index)
    shape = "(" + ", ".join(str(s) for s in f.shape) + ("," if len(f.shape) == 1 else "") + ")"
    verb = {"load": "reading", "store": "writing", "atomic": "atomically updating"}.get(
        site.op if site else "", "addressing")
    more = f"; {f.count} out-of-bounds accesses in this launch" if f.count > 1 else ""
    return (f"{where}: kernel '{kernel.key}': index [{index}] is out of bounds {verb} {what} of shape {shape} "
            f"(thread {f.thread}{more})")


def _array_name(kernel, site) -> str:
    """"argument 'a'", "argument 'p.pos'" (a struct field), "the adjoint of argument 'a'", or "an array"."""
    n = len(kernel.arg_names)
    if not 0 <= site.arg < 2 * n:
        return "an array"
    k = site.arg % n
    name, t = kernel.arg_names[k], kernel.params[k]
    for f in site.fields:
        fields = getattr(t, "_wp_fields_", None)
        if not fields or f >= len(fields):
            break
        field_name, t = fields[f]
        name += "." + field_name
    return f"the adjoint of argument '{name}'" if site.arg >= n else f"argument '{name}'"


def check_finite(kernel, args) -> None:
    """wp.config.verify_fp: every float array argument is NaN/Inf free after the launch."""
    for name, p, value in zip(kernel.arg_names, kernel.params, args):
        if not isinstance(p, ArrayParam):
            continue
        view = np.asarray(value._host() if isinstance(value, array) else value)
        if view.dtype.kind not in "fc":
            continue
        bad = ~np.isfinite(view)
        if bad.any():
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            raise FloatingPointCheckError(
                f"kernel '{kernel.key}': argument '{name}' holds a non-finite value after the launch "
                f"({view[first].item()!r} at index {list(first)}; {int(bad.sum())} non-finite element(s))")
