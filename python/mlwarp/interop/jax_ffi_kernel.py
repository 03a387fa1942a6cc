"""`wp.jax_kernel`: a Warp kernel as a JAX primitive, through XLA's FFI (Warp 1.19's semantics).

The kernel's inputs come first (arrays and static scalars), its outputs after; each call is one
`jax.ffi.ffi_call` whose result types come from the launch or output dimensions. XLA runs the call on the CPU
or on CUDA by calling the FFI target this module registers for both (jax_ffi_base.register_targets): the
handler wraps XLA's buffers as wp.arrays without copying and launches the kernel on them.

Under `jax.vmap` the batch dimensions XLA adds in front of each buffer are folded into its first dimension
(Warp's rule: one launch over the whole batch). Where the buffers' batch sizes differ (vmap_method
"expand_dims" with an unbatched input) mlwarp launches once per batch element instead, so that an unbatched
input is shared by every element rather than read past its end.
"""

from __future__ import annotations

import math
import operator

import jax

from mlwarp.arrays.array import array
from mlwarp.core.errors import LaunchError
from mlwarp.kernels.kernel import Kernel
from mlwarp.launching.launch import launch
from mlwarp.launching.launch_args import launch_dims as checked_launch_dims
from mlwarp.interop import jax_ffi_base as base
from mlwarp.interop import xla_ffi
from mlwarp.interop.jax_ffi_grad import differentiable_jax_kernel
from mlwarp.interop.jax_ffi_base import JaxModulePreloadMode

_kernels = {}  # construction arguments -> FfiKernel (Warp caches its wrappers the same way)


class _Launch:
    """What one traced call fixed: its static scalars and launch dimensions (None: inferred at run time)."""

    def __init__(self, static_inputs: dict, dims):
        self.static_inputs, self.dims = static_inputs, dims


class BufferArgs:
    """A call's array arguments from XLA's buffers: (FfiArg, address, JAX shape) in the kernel's order."""

    def __init__(self, entries):
        self.entries = entries
        self.batch_counts = [math.prod(shape[: len(shape) - arg.jax_ndim]) for arg, _, shape in entries]

    def batched(self) -> bool:
        return any(len(shape) > arg.jax_ndim for arg, _, shape in self.entries)

    def uniform(self) -> bool:
        return len(set(self.batch_counts)) <= 1

    def batch_size(self) -> int:
        return max(self.batch_counts, default=1)

    def folded(self, device) -> list:
        """wp.arrays over whole buffers, batch dimensions folded into the first one."""
        return [array(ptr=address, dtype=arg.dtype, shape=base.collapse_batch(arg.warp_shape(shape), arg.warp_ndim),
                      device=device) for arg, address, shape in self.entries]

    def element(self, index: int, device) -> list:
        """wp.arrays over batch element `index` (a buffer without that many elements: its only one)."""
        out = []
        for (arg, address, shape), count in zip(self.entries, self.batch_counts):
            inner = tuple(shape[len(shape) - arg.jax_ndim:])
            size = math.prod(inner) * arg.jax_scalar_type.dtype.itemsize
            offset = size * index if count > 1 else 0
            out.append(array(ptr=address + offset, dtype=arg.dtype, shape=arg.warp_shape(inner), device=device))
        return out


def _as_dims(dims):
    if dims is None:
        return None
    return (operator.index(dims),) if not isinstance(dims, (tuple, list)) else tuple(operator.index(d) for d in dims)


class FfiKernel:
    """A Warp kernel behind an FFI target; calling it adds one FFI call to the JAX computation."""

    def __init__(self, kernel, num_outputs, vmap_method, launch_dims, block_dim, output_dims, in_out_argnames,
                 module_preload_mode, has_side_effect=False):
        if not isinstance(kernel, Kernel):
            raise TypeError(f"jax_kernel() expects a @wp.kernel, got {type(kernel).__name__}")
        if kernel.is_generic:
            raise TypeError(f"jax_kernel() needs a kernel with concrete argument types; kernel '{kernel.key}' is "
                            f"generic: pass one of its overloads (wp.overload)")
        self.kernel = kernel
        self.name = base.unique_target_name(kernel.func)
        self.num_outputs, self.vmap_method, self.block_dim = num_outputs, vmap_method, block_dim
        self.launch_dims, self.output_dims = launch_dims, output_dims
        self.module_preload_mode, self.has_side_effect = module_preload_mode, has_side_effect
        self.inputs, self.outputs = base.split_arguments(list(zip(kernel.arg_names, kernel.params)), num_outputs,
                                                         in_out_argnames, "kernel")
        self.num_inputs = len(self.inputs)
        self.num_in_out = sum(arg.in_out for arg in self.inputs)
        self.first_array_arg = next((i for i, arg in enumerate(self.inputs) if arg.is_array), None)
        self.input_output_aliases = base.input_output_aliases(self.inputs)
        self.launches = []
        base.register_targets(self.name, self._run, lambda: base.WRAPPERS_COMMAND_BUFFER_COMPATIBLE)

    def __call__(self, *args, output_dims=None, launch_dims=None, vmap_method=None):
        if len(args) != self.num_inputs:
            raise ValueError(f"Expected {self.num_inputs} inputs, but got {len(args)}")
        launch_dims = self.launch_dims if launch_dims is None else launch_dims
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
        if launch_dims is None:
            if self.first_array_arg is None:
                raise RuntimeError("Failed to determine launch dimensions")
            first = self.inputs[self.first_array_arg]
            dims = first.warp_shape(args[self.first_array_arg].shape)
        else:
            dims = checked_launch_dims(launch_dims, self.kernel)
        checked_launch_dims(dims, self.kernel)
        types = [arg.output_type(shape, jax, metadata) for arg, shape in in_out_types]
        types += base.output_types(self.outputs, output_dims, dims, jax, metadata)
        call = jax.ffi.ffi_call(self.name, types, vmap_method=vmap_method,
                                input_output_aliases=self.input_output_aliases, has_side_effect=self.has_side_effect)
        base.preload(self.kernel.module, self.module_preload_mode)
        with base.CALL_LOCK:
            launch_id = len(self.launches)
            self.launches.append(_Launch(static_inputs, None if launch_dims is None else dims))
        return call(*[a for arg, a in zip(self.inputs, args) if arg.is_array], launch_id=launch_id)

    def _array_args(self, frame) -> BufferArgs:
        """The array arguments of a call in kernel order: the inputs' buffers (in-out ones: their result
        buffer, which XLA aliases to the input), then the pure outputs' result buffers."""
        ins, outs = xla_ffi.buffers(frame.args), xla_ffi.buffers(frame.rets)
        arrays_in = [arg for arg in self.inputs if arg.is_array]
        if len(ins) != len(arrays_in):
            raise RuntimeError(f"Expected {len(arrays_in)} JAX FFI input buffers, got {len(ins)}")
        if len(outs) != self.num_outputs:
            raise RuntimeError(f"Expected {self.num_outputs} JAX FFI output buffers, got {len(outs)}")
        entries, next_in_out = [], 0
        for arg, buffer in zip(arrays_in, ins):
            if arg.in_out:
                buffer = outs[next_in_out]
                next_in_out += 1
            entries.append((arg, buffer.data or 0, xla_ffi.buffer_shape(buffer)))
        for arg, buffer in zip(self.outputs, outs[self.num_in_out:]):
            entries.append((arg, buffer.data or 0, xla_ffi.buffer_shape(buffer)))
        return BufferArgs(entries)

    def _kernel_args(self, arrays: list, static_inputs: dict) -> tuple:
        """(inputs, outputs) of the launch: the static scalars put back between the arrays."""
        it = iter(arrays)
        inputs = [next(it) if arg.is_array else static_inputs[arg.name] for arg in self.inputs]
        return inputs, list(it)

    def _run(self, frame, platform):
        desc = self.launches[int(xla_ffi.decode_attrs(frame.attrs)["launch_id"])]
        buffers = self._array_args(frame)
        device, stream = base.call_device(frame, platform)
        self.kernel.module.load(device)
        first = self.first_array_arg
        first_array = None if first is None else sum(arg.is_array for arg in self.inputs[:first])
        if buffers.uniform():
            arrays = buffers.folded(device)
            if desc.dims is None:
                dims = arrays[first_array].shape
            elif buffers.batched():
                dims = (buffers.batch_size() * desc.dims[0], *desc.dims[1:])
            else:
                dims = desc.dims
            self._launch(dims, arrays, desc, device, stream)
            return
        for index in range(buffers.batch_size()):
            arrays = buffers.element(index, device)
            self._launch(desc.dims or arrays[first_array].shape, arrays, desc, device, stream)

    def _launch(self, dims, arrays, desc, device, stream):
        inputs, outputs = self._kernel_args(arrays, desc.static_inputs)
        try:
            launch(self.kernel, dims, inputs=inputs, outputs=outputs, device=device, stream=stream,
                   block_dim=self.block_dim)
        except LaunchError as e:
            raise LaunchError(f"jax_kernel(): {e}") from None


def _hashable(dims):
    if isinstance(dims, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in dims.items()))
    if isinstance(dims, (list, tuple)):
        return tuple(dims)
    return dims


def _checked_block_dim(block_dim):
    if block_dim is None:
        return None
    if isinstance(block_dim, bool):
        raise TypeError("jax_kernel(): block_dim must be an integer or None.")
    try:
        block_dim = operator.index(block_dim)
    except TypeError:
        raise TypeError("jax_kernel(): block_dim must be an integer or None.") from None
    if block_dim <= 0:
        raise ValueError("jax_kernel(): block_dim must be positive.")
    return block_dim


def jax_kernel(kernel, num_outputs=1, vmap_method="broadcast_all", launch_dims=None, output_dims=None,
               in_out_argnames=None, module_preload_mode=JaxModulePreloadMode.CURRENT_DEVICE,
               enable_backward: bool = False, has_side_effect: bool = False, block_dim: int | None = None):
    """A JAX callable that launches the Warp `kernel` (Warp 1.19's `wp.jax_kernel`).

    The kernel's first arguments are its inputs (JAX arrays, or scalars that must be static in JAX), the last
    `num_outputs` its outputs (in-out arguments, named by `in_out_argnames`, count among both). Launch
    dimensions default to the first input array's Warp shape; outputs default to the launch dimensions;
    `launch_dims`, `output_dims` (an int, a tuple, or a dict per output name) and `vmap_method` may be given
    here and per call. Arrays of vectors and matrices are JAX arrays with the components as trailing
    dimensions. The call returns a list of the outputs. `enable_backward=True` makes the wrapper
    differentiable (jax.grad, jax.vjp) through the kernel's adjoint. Runs on the CPU and on CUDA.
    """
    base.jax_module()
    block_dim = _checked_block_dim(block_dim)
    if enable_backward:
        return differentiable_jax_kernel(kernel, num_outputs, vmap_method, launch_dims, output_dims,
                                         in_out_argnames, module_preload_mode, has_side_effect, block_dim)
    in_out = tuple(in_out_argnames) if in_out_argnames else None
    key = (kernel, num_outputs, vmap_method, _hashable(launch_dims), _hashable(output_dims), in_out,
           JaxModulePreloadMode(module_preload_mode), has_side_effect, block_dim)
    with base.REGISTRY_LOCK:
        found = _kernels.get(key)
        if found is None:
            found = _kernels[key] = FfiKernel(kernel, num_outputs, vmap_method, _as_dims(launch_dims), block_dim,
                                              output_dims, in_out, module_preload_mode, has_side_effect)
    return found
