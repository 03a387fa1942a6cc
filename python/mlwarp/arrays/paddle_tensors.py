"""Paddle tensors as wp.array and wp.launch see them, without importing paddle: `is_paddle_tensor` (a value cannot
be a tensor unless paddle is loaded already), the Warp type of a paddle dtype, a tensor's Warp device name, and
numpy views of CPU tensors. Below python/mlwarp/arrays/array.py; the conversions between tensors and arrays are
python/mlwarp/interop/paddle.py.

A CPU tensor is read and written through its data pointer, never through `np.asarray(t)`: paddle's `__array__`
returns a copy whose memory nothing keeps alive (the numpy array owns no data and has no base), so a kernel
writing there loses its writes and corrupts the heap (Warp 1.19 does that: a SIGSEGV in malloc, or a hang in
paddle's signal handler).
"""

from __future__ import annotations

import sys

import numpy as np

from mlwarp.core import types as wt
from mlwarp.runtime.host_memory import wrap_pointer


def paddle_module():
    try:
        import paddle  # lazy: paddle
    except ImportError:  # pragma: no cover - paddle is a test dependency
        raise ImportError("Paddle is required for this function: pip install paddlepaddle") from None
    return paddle


def is_paddle_tensor(value) -> bool:
    paddle = sys.modules.get("paddle")
    return paddle is not None and isinstance(value, getattr(paddle, "Tensor", ()))


def _paddle_to_warp_names():
    # (paddle's uint16/32/64 have no Warp type here, as in Warp: dtype_to_paddle maps Warp's unsigned types to
    # the signed paddle type of the same width)
    return {"float16": wt.float16, "bfloat16": wt.bfloat16, "float32": wt.float32, "float64": wt.float64,
            "int8": wt.int8, "uint8": wt.uint8, "int16": wt.int16, "int32": wt.int32, "int64": wt.int64,
            "bool": wt.bool_}


def dtype_from_paddle(paddle_dtype):
    """The Warp scalar type of a paddle dtype; paddle's complex, float8 and uint16/32/64 types have none."""
    paddle = paddle_module()
    for name, t in _paddle_to_warp_names().items():
        if paddle_dtype == getattr(paddle, name):
            return t
    why = " (complex numbers have no Warp type)" if "complex" in str(paddle_dtype) else ""
    raise TypeError(f"Cannot convert {paddle_dtype} to a Warp type{why}")


def tensor_device_name(t) -> str:
    """The Warp device name of a tensor's place: "cpu" (also CUDA-pinned host memory) or "cuda:N"."""
    place = t.place
    if place.is_gpu_place():
        return f"cuda:{place.gpu_device_id()}"
    if place.is_cpu_place() or place.is_cuda_pinned_place():
        return "cpu"
    raise RuntimeError(f"Paddle tensor on {place} has no Warp device")


def byte_strides(t) -> tuple:
    return tuple(s * t.element_size() for s in t.strides)


def paddle_cpu_view(t) -> np.ndarray:
    """A numpy view of a CPU tensor's memory (the view's own offset included: `data_ptr` points at its first
    element); it keeps `t` alive. A 0-d tensor is a 1-element view."""
    if tensor_device_name(t) != "cpu":
        raise RuntimeError(f"tensor is on {t.place}, not the CPU")
    wdt = dtype_from_paddle(t.dtype)
    shape = tuple(t.shape) or (1,)
    strides = byte_strides(t) or (t.element_size(),)
    return wrap_pointer(t.data_ptr(), shape, strides, wdt, owner=t)
