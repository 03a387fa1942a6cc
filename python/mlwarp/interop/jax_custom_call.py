"""The first `jax_kernel` of Warp's guide (`from warp.jax_experimental import jax_kernel`): a kernel as a JAX
primitive whose outputs are inferred from the call.

Every kernel argument after the ones a call passes is an output; all outputs have the launch dimensions
(`launch_dims`, else the first argument's Warp shape) and the call returns them as a list. Warp built this
on XLA's custom calls (CUDA only, JAX < 0.8); mlwarp runs it on the FFI wrapper of `wp.jax_kernel`, so it
works on the CPU, with vmap (batch dimensions folded into the first one, as Warp's batching rule did) and
inside jax.jit.
"""

from __future__ import annotations

import warnings

from mlwarp.kernels.kernel import Kernel
from mlwarp.interop.jax_ffi_kernel import jax_kernel as ffi_jax_kernel


def jax_kernel(kernel, launch_dims=None, quiet=False):
    """A JAX primitive from a Warp kernel: `primitive(*inputs)` returns the list of the kernel's remaining
    arguments, computed (the pre-FFI semantics of Warp's guide). `quiet=True` silences the note that
    `wp.jax_kernel` is the current interface."""
    if not isinstance(kernel, Kernel):
        raise TypeError(f"jax_kernel() expects a @wp.kernel, got {type(kernel).__name__}")
    if not quiet:
        warnings.warn("warp.jax_experimental.jax_kernel() infers its outputs from each call (Warp's first JAX "
                      "interface); wp.jax_kernel() is the current one. Pass quiet=True to silence this.",
                      DeprecationWarning, stacklevel=2)
    count = len(kernel.arg_names)

    def primitive(*args):
        num_outputs = count - len(args)
        if num_outputs < 1:
            raise ValueError(f"jax_kernel(): kernel '{kernel.key}' has {count} arguments and the call passes "
                             f"{len(args)}: the arguments after the inputs are the outputs, at least one")
        if launch_dims is None and not args:
            raise ValueError(f"jax_kernel(): kernel '{kernel.key}' needs launch_dims or at least one input")
        return ffi_jax_kernel(kernel, num_outputs=num_outputs, launch_dims=launch_dims)(*args)

    return primitive
