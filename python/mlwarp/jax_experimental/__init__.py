"""`warp.jax_experimental` of Warp's guide: the first `jax_kernel` (outputs inferred from each call), and the
`ffi` submodule with the FFI-based `jax_kernel`, `jax_callable` and `register_ffi_callback`.

Warp 1.19 removed this namespace (its names are `wp.jax_kernel` and `wp.jax_callable`); mlwarp keeps it so
that the guide's code runs. Importing it imports jax.
"""

from mlwarp.interop.jax_custom_call import jax_kernel  # noqa: F401
from mlwarp.jax_experimental import ffi  # noqa: F401

__all__ = ["ffi", "jax_kernel"]
