"""`wp.jax_callable` (an annotated Python function that launches Warp kernels, called from JAX) and
`register_ffi_callback` (a plain `func(inputs, outputs, attrs, ctx)` as an FFI target), through XLA's FFI.

The function runs inside XLA's call, on the CPU or on CUDA, with wp.arrays over XLA's buffers (no copies).
"""

from __future__ import annotations

import collections

import jax

from mlwarp.arrays.array import array
from mlwarp.launching.cuda import ScopedDevice
from mlwarp.kernels.module import get_module
from mlwarp.launching.stream import ScopedStream
from mlwarp.interop import jax_ffi_base as base
from mlwarp.interop import xla_ffi
from mlwarp.interop.jax_ffi_base import JaxCallableGraphMode, JaxModulePreloadMode

JAX_CALLABLE_DEFAULT_GRAPH_CACHE_MAX = 32
_callables = {}  # construction arguments -> FfiCallable
_callbacks = {}  # register_ffi_callback's names -> functions


class _Call:
    def __init__(self, static_inputs: dict):
        self.static_inputs = static_inputs


class FfiCallable:
    """An annotated Python function behind an FFI target; calling it adds one FFI call to the JAX computation."""

    def __init__(self, func, num_outputs, graph_mode, vmap_method, output_dims, in_out_argnames,
                 stage_in_argnames, stage_out_argnames, graph_cache_max, module_preload_mode,
                 has_side_effect=False):
        self.func = func
        self.name = base.unique_target_name(func)
        self.num_outputs, self.graph_mode = num_outputs, JaxCallableGraphMode(graph_mode)
        self.vmap_method, self.output_dims = vmap_method, output_dims
        self.module_preload_mode, self.has_side_effect = module_preload_mode, has_side_effect
        self.stage_in_argnames = set(stage_in_argnames) if stage_in_argnames else None
        self.stage_out_argnames = set(stage_out_argnames) if stage_out_argnames else None
        self._graph_cache_max = graph_cache_max
        self.captures = collections.OrderedDict()  # Warp's graph cache (mlwarp captures no Warp graphs: empty)
        names_and_types = base.function_arguments(func)
        missing = [name for name, annotation in names_and_types if annotation is base.inspect.Parameter.empty]
        if missing:
            raise RuntimeError(f"Incomplete argument annotations on function {self.name}")
        returns = base.resolve_annotation(func, getattr(func, "__annotations__", {}).get("return"))
        if returns is not None:
            raise TypeError("Function must not return a value")
        self.inputs, self.outputs = base.split_arguments(names_and_types, num_outputs, in_out_argnames, "function")
        self.num_inputs = len(self.inputs)
        self.num_in_out = sum(arg.in_out for arg in self.inputs)
        self.first_array_arg = next((i for i, arg in enumerate(self.inputs) if arg.is_array), None)
        self.input_output_aliases = base.input_output_aliases(self.inputs)
        self.calls = []
        base.register_targets(self.name, self._run, lambda: base.WRAPPERS_COMMAND_BUFFER_COMPATIBLE
                              and self.graph_mode == JaxCallableGraphMode.JAX)

    @property
    def graph_cache_max(self):
        return self._graph_cache_max

    @graph_cache_max.setter
    def graph_cache_max(self, value):
        self._graph_cache_max = value
        while value is not None and len(self.captures) > value:
            self.captures.popitem(last=False)

    @property
    def graph_cache_size(self) -> int:
        return len(self.captures)

    def __call__(self, *args, output_dims=None, vmap_method=None):
        if len(args) != self.num_inputs:
            names = ", ".join(arg.name for arg in self.inputs)
            raise ValueError(f"Expected {self.num_inputs} input{'' if self.num_inputs == 1 else 's'} ({names}), "
                             f"but got {len(args)}")
        output_dims = self.output_dims if output_dims is None else output_dims
        vmap_method = self.vmap_method if vmap_method is None else vmap_method
        static_inputs, arrays, in_out_types = {}, [], []
        for arg, value in zip(self.inputs, args):
            if arg.is_array:
                arg.check_input(value)
                arrays.append(value)
                if arg.in_out:
                    in_out_types.append((arg, value.shape))
            else:
                static_inputs[arg.name] = arg.static_value(value, jax)
        metadata = base.vma_metadata(arrays, jax)
        default_dims = None
        if output_dims is None:
            if self.first_array_arg is None:
                raise ValueError("Unable to determine output dimensions")
            default_dims = self.inputs[self.first_array_arg].warp_shape(args[self.first_array_arg].shape)
        types = [arg.output_type(shape, jax, metadata) for arg, shape in in_out_types]
        types += base.output_types(self.outputs, output_dims, default_dims, jax, metadata)
        call = jax.ffi.ffi_call(self.name, types, vmap_method=vmap_method,
                                input_output_aliases=self.input_output_aliases, has_side_effect=self.has_side_effect)
        base.preload(get_module(self.func.__module__), self.module_preload_mode)
        with base.CALL_LOCK:
            call_id = len(self.calls)
            self.calls.append(_Call(static_inputs))
        return call(*[a for arg, a in zip(self.inputs, args) if arg.is_array], call_id=call_id)

    def _arguments(self, frame, call, device) -> list:
        """The function's arguments: wp.arrays over XLA's buffers (vmap's batch dimensions folded into the
        first one; in-out arrays over their result buffer, which XLA aliases to the input) and the static
        scalars."""
        ins, outs = xla_ffi.buffers(frame.args), xla_ffi.buffers(frame.rets)
        num_arrays = sum(arg.is_array for arg in self.inputs)
        if len(ins) != num_arrays:
            raise RuntimeError(f"Expected {num_arrays} JAX FFI input buffers, got {len(ins)}")
        if len(outs) != self.num_outputs:
            raise RuntimeError(f"Expected {self.num_outputs} JAX FFI output buffers, got {len(outs)}")

        def wrap(arg, buffer):
            shape = base.collapse_batch(arg.warp_shape(xla_ffi.buffer_shape(buffer)), arg.warp_ndim)
            return array(ptr=buffer.data or 0, dtype=arg.dtype, shape=shape, device=device)

        values, next_in, next_in_out = [], iter(ins), iter(outs[: self.num_in_out])
        for arg in self.inputs:
            if not arg.is_array:
                values.append(call.static_inputs[arg.name])
                continue
            buffer = next(next_in)
            values.append(wrap(arg, next(next_in_out) if arg.in_out else buffer))
        values += [wrap(arg, buffer) for arg, buffer in zip(self.outputs, outs[self.num_in_out:])]
        return values

    def _run(self, frame, platform):
        call = self.calls[int(xla_ffi.decode_attrs(frame.attrs)["call_id"])]
        if self.graph_mode not in (JaxCallableGraphMode.NONE, JaxCallableGraphMode.JAX):
            where = "JAX CPU FFI calls" if platform == base.CPU else "mlwarp's JAX CUDA FFI calls"
            raise NotImplementedError(f"JaxCallableGraphMode.{self.graph_mode.name} is not supported for {where} "
                                      f"(use JaxCallableGraphMode.JAX or NONE)")
        device, stream = base.call_device(frame, platform)
        get_module(self.func.__module__).load(device)
        values = self._arguments(frame, call, device)
        with ScopedDevice(device):
            if stream is None:
                self.func(*values)
                return
            with ScopedStream(stream):
                self.func(*values)


def jax_callable(func, num_outputs: int = 1, graph_mode: JaxCallableGraphMode = JaxCallableGraphMode.JAX,
                 vmap_method: str | None = "broadcast_all", output_dims=None, in_out_argnames=None,
                 stage_in_argnames=None, stage_out_argnames=None,
                 graph_cache_max: int | None = JAX_CALLABLE_DEFAULT_GRAPH_CACHE_MAX,
                 module_preload_mode: JaxModulePreloadMode = JaxModulePreloadMode.CURRENT_DEVICE,
                 has_side_effect: bool = False):
    """A JAX callable that calls the annotated Python `func` (which launches Warp kernels) with wp.arrays over
    XLA's buffers (Warp 1.19's `wp.jax_callable`).

    Arguments are annotated as a kernel's: inputs first (arrays; scalars must be static in JAX), the last
    `num_outputs` are outputs. Outputs default to the first input array's shape; `output_dims` (an int, a
    tuple, or a dict per output name) and `vmap_method` may be given here and per call. On the CPU the
    function runs directly (graph modes NONE and JAX); on CUDA it runs on XLA's stream (outside XLA's CUDA graphs
    for now: jax_ffi_base.WRAPPERS_COMMAND_BUFFER_COMPATIBLE). The WARP graph modes are not supported.
    """
    base.jax_module()
    graph_mode = JaxCallableGraphMode(graph_mode)
    key = (func, num_outputs, graph_mode, vmap_method, _hashable(output_dims),
           tuple(in_out_argnames) if in_out_argnames else None, tuple(stage_in_argnames) if stage_in_argnames else None,
           tuple(stage_out_argnames) if stage_out_argnames else None, JaxModulePreloadMode(module_preload_mode),
           has_side_effect)
    with base.REGISTRY_LOCK:
        found = _callables.get(key)
        if found is None:
            found = _callables[key] = FfiCallable(func, num_outputs, graph_mode, vmap_method, output_dims,
                                                  key[5], key[6], key[7], graph_cache_max, module_preload_mode,
                                                  has_side_effect)
        else:
            found.graph_cache_max = graph_cache_max
    return found


def _hashable(dims):
    if isinstance(dims, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in dims.items()))
    return tuple(dims) if isinstance(dims, (list, tuple)) else dims


def clear_jax_callable_graph_cache(callable=None) -> None:
    """Clears the Warp graph cache of `callable`, or of every jax_callable when None."""
    if callable is not None:
        callable.captures.clear()
        return
    with base.REGISTRY_LOCK:
        for found in _callables.values():
            found.captures.clear()


def register_ffi_callback(name: str, func, graph_compatible: bool = True) -> None:
    """Registers `func(inputs, outputs, attrs, ctx)` as the XLA FFI target `name`, for `jax.ffi.ffi_call(name,
    ...)`. `inputs` and `outputs` are xla_ffi.FfiBuffer objects (`shape`, `dtype`, `data`, and the array
    interface of their platform, so that they go straight into `wp.launch`), `attrs` the call's keyword
    attributes, `ctx` an ExecutionContext (`stage`, `platform`, `stream`: XLA's CUDA stream, None on the CPU).

    Warp registers this target for CUDA only; mlwarp registers it for the CPU too.
    """
    base.jax_module()
    with base.REGISTRY_LOCK:
        if name in _callbacks:
            raise ValueError(f"register_ffi_callback(): an FFI callback named '{name}' is already registered")
        _callbacks[name] = func

    def run(frame, platform):
        on_cuda = platform == base.CUDA
        inputs = [xla_ffi.FfiBuffer(b, on_cuda) for b in xla_ffi.buffers(frame.args)]
        outputs = [xla_ffi.FfiBuffer(b, on_cuda) for b in xla_ffi.buffers(frame.rets)]
        func(inputs, outputs, xla_ffi.decode_attrs(frame.attrs), xla_ffi.ExecutionContext(frame, platform))

    base.register_targets(name, run, lambda: graph_compatible)
