"""What `wp.jax_kernel`, `wp.jax_callable` and `register_ffi_callback` share: the modes, the description of a
kernel's (or annotated function's) arguments as JAX sees them, output types, and the registration of one
Python handler as an XLA FFI target on the CPU and on CUDA.

A handler is a ctypes CFUNCTYPE that reads XLA's call frame (xla_ffi.py). XLA calls it from its own threads
(one per device under pmap), so every call runs under one lock. jax itself is imported on first use.
"""

from __future__ import annotations

import ctypes
import inspect
import itertools
import threading
from enum import IntEnum

from mlwarp.core import types as wt
from mlwarp.core.annotations import resolve_annotation
from mlwarp.runtime.abi import ArrayParam
from mlwarp.runtime.device import get_device
from mlwarp.launching.stream import Stream
from mlwarp.interop import xla_ffi
from mlwarp.interop.jax import device_from_jax, dtype_to_jax, get_jax_device

CPU, CUDA = "cpu", "CUDA"  # XLA's platform names (case matters: "cpu" and "CUDA")
PLATFORMS = (CPU, CUDA)

REGISTRY_LOCK = threading.Lock()  # the wrappers' registries
CALL_LOCK = threading.RLock()  # one FFI call at a time: XLA calls handlers from several threads (pmap)
_handlers = {}  # (target, platform) -> the CFUNCTYPE XLA holds a pointer to: it must live as long as the process
_name_counts = itertools.count()


class JaxCallableGraphMode(IntEnum):
    """How `jax_callable` runs under CUDA graph capture (Warp's modes; on the CPU, NONE and JAX both run
    the function directly)."""

    NONE = 0  # no capture: the function may synchronise with the host
    JAX = 1  # JAX records the call into its own CUDA graph
    WARP = 2  # Warp captures and replays its own graph
    WARP_STAGED = 3  # a Warp graph over staging buffers, copies inside the graph
    WARP_STAGED_EX = 4  # a Warp graph over staging buffers, copies outside the graph


class JaxModulePreloadMode(IntEnum):
    """Where a wrapper loads its kernels' module when it is traced (the call loads it anyway)."""

    NONE = 0
    CURRENT_DEVICE = 1
    ALL_DEVICES = 2


def jax_module():
    try:
        import jax  # lazy: jax
    except ImportError:  # pragma: no cover - jax is optional
        raise ImportError("JAX is required for jax_kernel/jax_callable: pip install jax") from None
    if jax.__version_info__ < (0, 5, 0):
        raise RuntimeError(f"jax_kernel() and jax_callable() need JAX 0.5.0 or newer, but JAX "
                           f"{jax.__version__} is installed")
    return jax


def unique_target_name(func) -> str:
    """An FFI target name of its own for each wrapper (XLA's registry is process-wide)."""
    return f"mlwarp_{getattr(func, '__module__', '')}.{getattr(func, '__qualname__', 'func')}_{next(_name_counts)}"


# -- arguments ---------------------------------------------------------------------------------------------------
class FfiArg:
    """One argument as JAX sees it: an array (Warp's dtype, its Warp ndim, the JAX scalar type, the inner
    vector/matrix shape JAX adds as trailing dimensions) or a scalar (a static value of the call)."""

    def __init__(self, name: str, annotation, in_out: bool = False):
        self.name, self.in_out = name, in_out
        if isinstance(annotation, ArrayParam):  # a kernel's parameter
            annotation = wt.ArrayT(annotation.dtype, annotation.ndim)
        self.is_array = isinstance(annotation, wt.ArrayT) or (wt.is_array(annotation)
                                                                and getattr(annotation, "is_annotation", False))
        if self.is_array:
            dtype = annotation.dtype
            if not (wt.is_scalar(dtype) or wt.type_is_vector(dtype) or wt.type_is_matrix(dtype)
                    or wt.type_is_quaternion(dtype) or wt.type_is_transformation(dtype)):
                raise TypeError(f"Invalid data type for array argument '{name}', expected scalar, vector, or "
                                f"matrix")
            self.dtype, self.warp_ndim = dtype, annotation.ndim
            self.dtype_shape = wt.inner_shape(dtype)
            self.jax_scalar_type = dtype_to_jax(wt.scalar_type_of(dtype))
        else:
            t = wt.canonical_type(annotation) if annotation is not inspect.Parameter.empty else None
            if t is None or not wt.is_scalar(t):
                raise TypeError(f"Invalid type for argument '{name}', expected array or scalar, got {annotation}")
            self.dtype, self.warp_ndim, self.dtype_shape = t, 0, ()
            self.jax_scalar_type = dtype_to_jax(t)
        self.dtype_ndim = len(self.dtype_shape)
        self.jax_ndim = self.warp_ndim + self.dtype_ndim if self.is_array else 0

    def check_input(self, value) -> None:
        """A JAX array argument against the declared dtype, ndim and inner (vector/matrix) dimensions."""
        if value.dtype != self.jax_scalar_type:
            raise TypeError(f"Invalid data type for array argument '{self.name}', expected "
                            f"{wt.type_name(wt.scalar_type_of(self.dtype))}, got {value.dtype}")
        if value.ndim != self.jax_ndim:
            raise TypeError(f"Invalid dimensionality for array argument '{self.name}', expected {self.jax_ndim} "
                            f"dimensions, got {value.ndim}")
        if tuple(value.shape[self.warp_ndim:]) != self.dtype_shape:
            raise TypeError(f"Invalid inner dimensions for array argument '{self.name}', expected "
                            f"{self.dtype_shape}, got {tuple(value.shape[self.warp_ndim:])}")

    def static_value(self, value, jax):
        """A scalar argument's value, fixed when the call is traced (XLA passes no scalars to a handler)."""
        if isinstance(value, jax.core.Tracer):
            raise ValueError(f"Argument '{self.name}' must be a static value")
        return value

    def warp_shape(self, jax_shape) -> tuple:
        """The Warp shape of a JAX shape (the inner vector/matrix dimensions removed)."""
        return tuple(jax_shape[: len(jax_shape) - self.dtype_ndim])

    def output_type(self, dims, jax, metadata=None):
        """The jax.ShapeDtypeStruct of an output with `dims`: Warp dimensions (the inner ones added) or the
        full JAX shape (the inner ones checked)."""
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        if self.dtype_ndim and len(dims) == self.warp_ndim:
            dims = dims + self.dtype_shape
        elif len(dims) != self.jax_ndim or tuple(dims[self.warp_ndim:]) != self.dtype_shape:
            raise ValueError(f"Invalid output dimensions for argument '{self.name}': {dims}")
        out = jax.ShapeDtypeStruct(dims, self.jax_scalar_type)
        return out.update(**metadata) if metadata else out


def function_arguments(func) -> list:
    """(name, annotation) of a Python function's parameters, string annotations resolved."""
    params = inspect.signature(func).parameters.values()
    return [(p.name, resolve_annotation(func, p.annotation, default=p.annotation)) for p in params]


def split_arguments(names_and_types, num_outputs: int, in_out_argnames, what: str):
    """(inputs, outputs) FfiArgs: inputs first (in-out ones among them), then the pure outputs."""
    listed = list(in_out_argnames or ())
    in_out = set(listed)
    if len(in_out) != len(listed):
        raise ValueError("in_out_argnames must not contain duplicate names")
    count = len(names_and_types)
    num_inputs = count - num_outputs + len(in_out)
    if num_outputs < 1:
        raise ValueError("At least one output is required")
    if num_outputs > count:
        raise ValueError(f"Number of outputs cannot be greater than the number of {what} arguments")
    if num_outputs < len(in_out):
        raise ValueError("Number of outputs cannot be smaller than the number of in_out_argnames")
    inputs, outputs = [], []
    for i, (name, annotation) in enumerate(names_and_types):
        if i < num_inputs:
            inputs.append(FfiArg(name, annotation, name in in_out))
            in_out.discard(name)
            continue
        if name in in_out:
            raise ValueError(f"Expected an output-only argument for argument {name}. in_out arguments should be "
                             f"placed before output-only arguments.")
        arg = FfiArg(name, annotation)
        if not arg.is_array:
            raise TypeError("All output arguments must be arrays")
        outputs.append(arg)
    if in_out:
        raise ValueError(f"in_out_argnames: '{in_out}' did not match any function argument names.")
    for arg in inputs:
        if arg.in_out and not arg.is_array:
            raise TypeError(f"in_out argument '{arg.name}' must be an array")
    return inputs, outputs


def input_output_aliases(inputs) -> dict:
    """XLA's aliases: the i-th array operand (static scalars are no operands) is output j, in order."""
    in_out = [i for i, arg in enumerate(arg for arg in inputs if arg.is_array) if arg.in_out]
    return {i: j for j, i in enumerate(in_out)}


def output_types(outputs, output_dims, default_dims, jax, metadata=None) -> list:
    """The pure outputs' types: `output_dims` one shape for all (int or tuple), or a dict keyed by argument
    name; None takes `default_dims`."""
    if isinstance(output_dims, dict):
        types = []
        for arg in outputs:
            dims = output_dims.get(arg.name)
            if dims is None:
                raise ValueError(f"Missing output dimensions for argument '{arg.name}'")
            types.append(arg.output_type(dims, jax, metadata))
        return types
    dims = default_dims if output_dims is None else output_dims
    return [arg.output_type(dims, jax, metadata) for arg in outputs]


def vma_metadata(arrays, jax) -> dict:
    """Inside shard_map, outputs vary over the manual mesh axes their inputs vary over: JAX cannot see into an
    FFI call, so every output takes the union of the array inputs' axes (and the mesh's sharding)."""
    if not hasattr(jax, "typeof") or not hasattr(jax.ShapeDtypeStruct, "update"):
        return {}
    axes, mesh, manual = set(), None, False
    for value in arrays:
        aval = jax.typeof(value)
        axis_type = getattr(aval, "manual_axis_type", None)
        varying = axis_type.varying if axis_type is not None else getattr(aval, "vma", None)
        manual = manual or axis_type is not None
        if varying:
            axes.update(varying)
            mesh = aval.sharding.mesh
    if not axes:
        return {}
    out = {"manual_axis_type": jax.sharding.ManualAxisType(varying=frozenset(axes))} if manual else \
        {"vma": frozenset(axes)}
    if hasattr(jax.sharding, "get_abstract_mesh"):
        mesh = jax.sharding.get_abstract_mesh()
    out["sharding"] = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    return out


# -- modules ------------------------------------------------------------------------------------------------------
def preload(module, mode) -> None:
    """Loads `module` when the call is traced, so that the first run does not compile inside XLA's thread."""
    mode = JaxModulePreloadMode(mode)
    if mode == JaxModulePreloadMode.NONE:
        return
    jax = jax_module()
    if mode == JaxModulePreloadMode.CURRENT_DEVICE:
        jax_devices = [get_jax_device()]
    else:
        jax_devices = []
        for backend in ("cpu", "cuda"):
            try:
                jax_devices += jax.local_devices(backend=backend)
            except RuntimeError:
                continue
    devices = {}
    for jax_device in jax_devices:
        try:
            device = device_from_jax(jax_device)
        except (RuntimeError, ValueError):
            continue  # best effort: the call loads what it runs
        devices[device.alias] = device
    for device in devices.values():
        module.load(device)


# -- FFI targets ---------------------------------------------------------------------------------------------------
def call_device(frame, platform: str):
    """(Warp device, stream) of one call: the CPU, or the CUDA device and XLA's stream."""
    if platform == CPU:
        return get_device("cpu"), None
    device = get_device(f"cuda:{xla_ffi.device_ordinal(frame)}")
    return device, Stream(device, cuda_stream=xla_ffi.stream(frame))


# Whether jax_kernel and jax_callable tell XLA their CUDA calls may be recorded into its command buffers (CUDA
# graphs), as Warp's do: not until mlwarp's launch path is checked under a JAX stream capture on a GPU (a launch
# that allocates or synchronises would break the capture). XLA then runs the calls eagerly on its stream.
WRAPPERS_COMMAND_BUFFER_COMPATIBLE = False


def register_targets(name: str, run, command_buffer_compatible, platforms=PLATFORMS) -> None:
    """Registers `run(frame, platform)` as the FFI target `name` on each platform. A Python exception in `run`
    becomes the call's XLA error (JAX raises it), with the exception's type and message.
    `command_buffer_compatible()`: the CUDA handler's answer to XLA's traits query."""
    jax = jax_module()
    for platform in platforms:
        def handle(frame_pointer, platform=platform):
            frame = frame_pointer.contents
            try:
                if xla_ffi.answer_metadata_query(frame, platform == CUDA and command_buffer_compatible()):
                    return None
                with CALL_LOCK:
                    run(frame, platform)
                return None
            except Exception as e:  # noqa: BLE001  (returned to XLA, which raises it in the caller)
                return xla_ffi.error(frame, xla_ffi.ErrorCode.UNKNOWN, f"FFI callback error: {type(e).__name__}: {e}")

        handler = xla_ffi.Handler(handle)
        _handlers[(name, platform)] = handler
        address = ctypes.cast(handler, ctypes.c_void_p).value
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(address), platform=platform)


def handler_for(name: str, platform: str):
    """The C handler registered as FFI target `name` on `platform`."""
    return _handlers[(name, platform)]


def collapse_batch(shape: tuple, ndim: int) -> tuple:
    """A buffer's Warp shape with vmap's leading batch dimensions folded into the first one."""
    shape = tuple(shape)
    while len(shape) > ndim:
        shape = (shape[0] * shape[1], *shape[2:])
    return shape
