"""`wp.jax_kernel(..., enable_backward=True)`: a Warp kernel as a differentiable JAX function.

The forward pass is a jax_callable that launches the kernel; the backward pass a jax_callable that launches
its adjoint (`wp.launch(..., adjoint=True)`) with JAX's output cotangents as the adjoint outputs and fresh,
zeroed buffers as the input gradients. `jax.custom_vjp` ties them together; static scalar inputs are
non-differentiable arguments (and static arguments of the jax.jit the wrapper is).
"""

from __future__ import annotations

import inspect
import operator

import jax

from mlwarp.kernels.kernel import Kernel
from mlwarp.launching.launch import launch
from mlwarp.interop import jax_ffi_base as base
from mlwarp.interop.jax_ffi_callable import jax_callable

_MISSING = object()
_wrappers = {}  # construction arguments -> the jitted differentiable function


def _fixed_dims(launch_dims):
    if launch_dims is None:
        return None
    if isinstance(launch_dims, (tuple, list)):
        return tuple(operator.index(d) for d in launch_dims)
    return (operator.index(launch_dims),)


def _annotated(body, name: str, module: str, params: list):
    """`body` as a function jax_callable can read: named parameters annotated with the kernel's types."""
    def wrapper(*args):
        body(*args)

    wrapper.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=t) for n, t in params])
    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__module__ = module  # (preloading loads the kernel's module)
    return wrapper


def differentiable_jax_kernel(kernel, num_outputs, vmap_method, launch_dims, output_dims, in_out_argnames,
                              module_preload_mode, has_side_effect, block_dim):
    if in_out_argnames:
        raise NotImplementedError("jax_kernel(): Input-output arguments (in_out_argnames) are not supported when "
                                  "enable_backward=True.")
    if output_dims is not None:
        raise NotImplementedError("jax_kernel(): output_dims is not yet supported when enable_backward=True.")
    if not isinstance(kernel, Kernel):
        raise TypeError(f"jax_kernel() expects a @wp.kernel, got {type(kernel).__name__}")
    fixed_dims = _fixed_dims(launch_dims)
    key = (kernel, num_outputs, vmap_method, fixed_dims, base.JaxModulePreloadMode(module_preload_mode),
           has_side_effect, block_dim)
    with base.REGISTRY_LOCK:
        found = _wrappers.get(key)
    if found is None:
        found = _build(kernel, num_outputs, vmap_method, fixed_dims, module_preload_mode, has_side_effect, block_dim)
        with base.REGISTRY_LOCK:
            found = _wrappers.setdefault(key, found)
    jitted, static_names = found

    def checked(*args, launch_dims=_MISSING, output_dims=_MISSING, vmap_method=_MISSING):
        if launch_dims is not _MISSING:
            raise TypeError(f"jax_kernel(): launch_dims cannot be overridden per-call when enable_backward=True "
                            f"(this wrapper was created with launch_dims={fixed_dims!r}). Call jax_kernel() again "
                            f"with a different launch_dims to create a new wrapper.")
        if output_dims is not _MISSING:
            raise TypeError("jax_kernel(): output_dims is not supported when enable_backward=True.")
        if vmap_method is not _MISSING:
            raise TypeError("jax_kernel(): vmap_method cannot be overridden per-call when enable_backward=True; it "
                            "is fixed at construction time. Call jax_kernel() again with a different vmap_method to "
                            "create a new wrapper.")
        return jitted(*args)

    checked.block_dim = block_dim
    checked.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in kernel.arg_names])
    return checked


def _build(kernel, num_outputs, vmap_method, fixed_dims, module_preload_mode, has_side_effect, block_dim):
    names, params = list(kernel.arg_names), list(kernel.params)
    count = len(names)
    num_inputs = count - num_outputs
    if num_outputs < 1 or num_inputs < 0:
        raise ValueError("At least one output is required" if num_outputs < 1 else
                         "Number of outputs cannot be greater than the number of kernel arguments")
    described = [base.FfiArg(n, p) for n, p in zip(names, params)]
    static = [i for i in range(num_inputs) if not described[i].is_array]
    differentiable = [i for i in range(num_inputs) if described[i].is_array]
    first_array = differentiable[0] if differentiable else None

    def dims_of(inputs):
        if fixed_dims is not None:
            return fixed_dims
        if first_array is None:
            raise RuntimeError("Unable to determine launch dimensions, at least one input array is required")
        return inputs[first_array].shape  # (a wp.array: its Warp shape)

    def forward(*values):
        inputs = values[:num_inputs]
        launch(kernel, dims_of(inputs), inputs=inputs, outputs=values[num_inputs:], block_dim=block_dim)

    def backward(*values):
        inputs, outputs = list(values[:num_inputs]), list(values[num_inputs:count])
        adj_outputs = list(values[count:count + num_outputs])
        adj_arrays = list(values[count + num_outputs:])
        for g in adj_arrays:
            g.zero_()
        it = iter(adj_arrays)
        adj_inputs = [inputs[i] if i in static else next(it) for i in range(num_inputs)]
        launch(kernel, dims_of(inputs), inputs=inputs, outputs=outputs, adj_inputs=adj_inputs,
               adj_outputs=adj_outputs, adjoint=True, block_dim=block_dim)

    module = kernel.func.__module__
    forward_params = list(zip(names, params))
    backward_params = forward_params + [(f"adj_{n}", p) for n, p in forward_params[num_inputs:]] + \
        [(f"adj_{names[i]}", params[i]) for i in differentiable]
    options = dict(vmap_method=vmap_method, module_preload_mode=module_preload_mode, has_side_effect=has_side_effect)
    forward_call = jax_callable(_annotated(forward, f"{kernel.key}_forward", module, forward_params),
                                num_outputs=num_outputs, **options)
    # the cotangents are in-out arguments: the adjoint kernel may write its adjoint outputs, and JAX's
    # cotangent buffers must not change (XLA gives the call copies where they are still used)
    backward_call = jax_callable(_annotated(backward, f"{kernel.key}_backward", module, backward_params),
                                 num_outputs=num_outputs + len(differentiable),
                                 in_out_argnames=[f"adj_{n}" for n in names[num_inputs:]], **options)

    def primal(*args):
        return forward_call(*args)

    def primal_fwd(*args):
        outputs = forward_call(*args)
        return outputs, (tuple(args[i] for i in differentiable), tuple(outputs))

    def primal_bwd(*bwd_args):
        static_values, (arrays, outputs), cotangents = bwd_args[:len(static)], bwd_args[len(static)], \
            bwd_args[len(static) + 1]
        array_it, static_it = iter(arrays), iter(static_values)
        inputs = [next(static_it) if i in static else next(array_it) for i in range(num_inputs)]
        dims = {f"adj_{names[i]}": tuple(inputs[i].shape) for i in differentiable}
        grads = backward_call(*inputs, *outputs, *cotangents, output_dims=dims)
        return tuple(grads[num_outputs:])

    differentiable_primal = jax.custom_vjp(primal, nondiff_argnums=tuple(static))
    differentiable_primal.defvjp(primal_fwd, primal_bwd)
    static_names = tuple(names[i] for i in static)

    def user_function(*args):
        return differentiable_primal(*args)

    user_function.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names[:num_inputs]])
    return jax.jit(user_function, static_argnames=static_names), static_names
