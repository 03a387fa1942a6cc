"""`warp.jax_experimental.ffi` of Warp's guide: the FFI-based `jax_kernel`, `jax_callable` (with the guide's
`graph_compatible` flag besides Warp 1.19's `graph_mode`) and `register_ffi_callback`, which mlwarp
registers for the CPU as well as CUDA (Warp: CUDA only)."""

from mlwarp.interop.jax import get_jax_device  # noqa: F401
from mlwarp.interop.jax_ffi_base import JaxCallableGraphMode, JaxModulePreloadMode
from mlwarp.interop.jax_ffi_callable import (  # noqa: F401
    clear_jax_callable_graph_cache, jax_callable as _jax_callable, register_ffi_callback,
)
from mlwarp.interop.jax_ffi_kernel import jax_kernel  # noqa: F401

GraphMode = JaxCallableGraphMode  # Warp's older names
ModulePreloadMode = JaxModulePreloadMode

__all__ = ["GraphMode", "JaxCallableGraphMode", "JaxModulePreloadMode", "ModulePreloadMode",
           "clear_jax_callable_graph_cache", "get_jax_device", "jax_callable", "jax_kernel", "register_ffi_callback"]


def jax_callable(func, num_outputs=1, graph_compatible=None, vmap_method="broadcast_all", output_dims=None,
                 graph_mode=None, **options):
    """`wp.jax_callable` with the guide's `graph_compatible` flag: True (the default) lets JAX record the call
    into its CUDA graphs (JaxCallableGraphMode.JAX), False keeps it out (JaxCallableGraphMode.NONE: for
    functions that synchronise with the host). `graph_mode` takes Warp 1.19's modes instead."""
    if graph_compatible is not None and graph_mode is not None:
        raise TypeError("jax_callable(): pass graph_compatible or graph_mode, not both")
    if graph_mode is None:
        graph_mode = JaxCallableGraphMode.NONE if graph_compatible is False else JaxCallableGraphMode.JAX
    return _jax_callable(func, num_outputs=num_outputs, graph_mode=graph_mode, vmap_method=vmap_method,
                         output_dims=output_dims, **options)
