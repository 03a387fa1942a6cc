"""Torch tensors as wp.array and wp.launch see them, without importing torch: `is_torch_tensor` (a value
cannot be a tensor unless torch is loaded already), the Warp type of a torch dtype, and numpy views of CPU
tensors. Below python/mlwarp/arrays/array.py; the conversions between tensors and arrays are python/mlwarp/interop/torch.py.
"""

from __future__ import annotations

import sys

import numpy as np

from mlwarp.core import types as wt
from mlwarp.runtime.host_memory import wrap_pointer


def torch_module():
    try:
        import torch  # lazy: torch
    except ImportError:  # pragma: no cover - torch is a test dependency
        raise ImportError("PyTorch is required for this function: pip install torch") from None
    return torch


def is_torch_tensor(value) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def dtype_from_torch(torch_dtype):
    """The Warp scalar type of a torch dtype; torch's uint16/32/64 and complex types have none."""
    torch = torch_module()
    if torch_dtype == torch.bfloat16 and getattr(wt, "bfloat16", None) is not None:
        return wt.bfloat16
    table = {torch.float16: wt.float16, torch.float32: wt.float32, torch.float64: wt.float64,
             torch.int8: wt.int8, torch.uint8: wt.uint8, torch.int16: wt.int16, torch.int32: wt.int32,
             torch.int64: wt.int64, torch.bool: wt.bool_}
    t = table.get(torch_dtype)
    if t is None:
        why = " (complex numbers have no Warp type)" if getattr(torch_dtype, "is_complex", False) else ""
        raise TypeError(f"Cannot convert {torch_dtype} to a Warp type{why}")
    return t


def byte_strides(t) -> tuple:
    return tuple(s * t.element_size() for s in t.stride())


def cpu_tensor_view(t) -> np.ndarray:
    """A numpy view of a CPU tensor's memory (also for tensors that require grad); it keeps `t` alive."""
    if t.device.type != "cpu":
        raise RuntimeError(f"tensor is on device '{t.device}', not the CPU")
    wdt = dtype_from_torch(t.dtype)
    shape = tuple(t.shape) or (1,)
    strides = byte_strides(t) or (t.element_size(),)
    return wrap_pointer(t.data_ptr(), shape, strides, wdt, owner=t)
