"""Interop with numpy, PyTorch, Paddle, DLPack and `__cuda_array_interface__` producers (zero-copy)."""

from mlwarp.interop.cuda_array_interface import CudaArrayInfo, parse_cuda_array_interface  # noqa: F401
from mlwarp.interop.dlpack import from_dlpack, to_dlpack  # noqa: F401
from mlwarp.interop.jax import device_from_jax, device_to_jax, dtype_from_jax, dtype_to_jax, from_jax, to_jax  # noqa: F401
from mlwarp.interop.paddle import (  # noqa: F401
    device_from_paddle, device_to_paddle, dtype_from_paddle, dtype_to_paddle, from_paddle, stream_from_paddle,
    to_paddle,
)
from mlwarp.interop.torch import (  # noqa: F401
    device_from_torch, device_to_torch, dtype_from_torch, dtype_to_torch, from_torch, stream_from_torch,
    stream_to_torch, to_torch,
)
