"""PyTorch interop: zero-copy conversion of tensors and arrays, dtype and device maps.

torch is imported only when one of these functions is called; `is_torch_tensor`
never imports it (a value cannot be a tensor unless torch is already loaded). What wp.array and wp.launch need
of torch, and which needs no wp.array, is python/mlwarp/arrays/torch_tensors.py.
"""

from __future__ import annotations

import numpy as np

from mlwarp.core import types as wt
from mlwarp.arrays.array import array, zeros
from mlwarp.runtime.abi import filled_descriptor
from mlwarp.runtime.device import get_device
from mlwarp.launching.stream import Stream, get_stream
from mlwarp.arrays.torch_tensors import (  # noqa: F401  (cpu_tensor_view, is_torch_tensor: also mlwarp.interop.torch's)
    byte_strides as _byte_strides, cpu_tensor_view, dtype_from_torch, is_torch_tensor, torch_module as _torch,
)


# -- dtypes ---------------------------------------------------------------------
def _warp_to_torch_names():
    # unsigned 16/32/64-bit ints map to the signed type of the same width, as in Warp (torch's unsigned
    # types beyond uint8 support few operations)
    return {wt.float16: "float16", wt.float32: "float32", wt.float64: "float64", wt.int8: "int8",
            wt.uint8: "uint8", wt.int16: "int16", wt.uint16: "int16", wt.int32: "int32", wt.uint32: "int32",
            wt.int64: "int64", wt.uint64: "int64", wt.bool_: "bool"}


def dtype_to_torch(warp_dtype):
    """The torch dtype of a Warp scalar type (uint16/32/64 -> int16/32/64)."""
    torch = _torch()
    t = wt.canonical_type(warp_dtype)
    bf16 = getattr(wt, "bfloat16", None)
    if bf16 is not None and warp_dtype is bf16:
        return torch.bfloat16
    name = _warp_to_torch_names().get(t) if t is not None else None
    if name is None:
        raise TypeError(f"Cannot convert {wt.type_name(warp_dtype)} to a Torch type")
    return getattr(torch, name)


# -- devices ----------------------------------------------------------------------
def device_from_torch(torch_device):
    """The Warp device of a torch device or device string ("cpu", "cuda", "cuda:N")."""
    torch = _torch()
    d = torch.device(torch_device) if not isinstance(torch_device, torch.device) else torch_device
    if d.type == "cpu":
        return get_device("cpu")
    if d.type == "cuda":
        index = d.index if d.index is not None else torch.cuda.current_device()
        try:
            return get_device(f"cuda:{index}")
        except ValueError as e:
            raise RuntimeError(f"Torch device {d} has no Warp device: {e}") from None
    raise RuntimeError(f"Torch device {d} has no Warp device")


def device_to_torch(warp_device=None) -> str:
    """The torch device string of a Warp device ("cpu" or "cuda:N")."""
    d = get_device(warp_device)
    if d.is_cpu or d.is_cuda:
        return str(d)
    raise RuntimeError(f"Warp device {d} is not compatible with PyTorch")


def stream_from_torch(stream_or_device=None):
    """A Warp stream wrapping a torch CUDA stream, or the current torch stream of a torch device
    (default: torch's current CUDA device). The Warp stream keeps the torch stream alive."""
    torch = _torch()
    if isinstance(stream_or_device, torch.cuda.Stream):
        torch_stream = stream_or_device
    else:
        _require_cuda("stream_from_torch", torch)
        device = torch.device(stream_or_device) if stream_or_device is not None else \
            torch.device("cuda", torch.cuda.current_device())
        if device.type != "cuda":
            raise RuntimeError(f"stream_from_torch: CUDA streams need a CUDA device, got '{device}'")
        torch_stream = torch.cuda.current_stream(device)
    stream = Stream(device_from_torch(torch_stream.device), cuda_stream=torch_stream.cuda_stream)
    stream._torch_stream = torch_stream
    return stream


def stream_to_torch(stream_or_device=None):
    """A torch ExternalStream over a Warp stream, or over the current stream of a Warp device."""
    torch = _torch()
    if not hasattr(stream_or_device, "cuda_stream"):
        device = get_device(stream_or_device)
        if not device.is_cuda:
            raise RuntimeError(f"stream_to_torch: CUDA streams need a CUDA device, got '{device}'")
        stream_or_device = get_stream(device)
    _require_cuda("stream_to_torch", torch)
    return torch.cuda.ExternalStream(stream_or_device.cuda_stream, device=device_to_torch(stream_or_device.device))


def _require_cuda(what, torch):
    if not torch.cuda.is_available():
        raise RuntimeError(f"{what}: CUDA streams need a CUDA device; torch has none here")


# -- tensors <-> arrays --------------------------------------------------------------
def _element_shape(dtype) -> tuple:
    return wt.inner_shape(dtype)


def _scalar_of(dtype):
    return wt.scalar_type_of(dtype)


def _aliases(torch_scalar, warp_scalar) -> bool:
    """Whether a tensor of (the Warp scalar matching) `torch_scalar` may be seen as `warp_scalar` elements: the
    same type, an integer of the same width and other signedness, or bool as an 8-bit integer (Warp's sets)."""
    if torch_scalar is warp_scalar:
        return True
    if torch_scalar is wt.bool_:
        return warp_scalar in (wt.uint8, wt.int8)
    return wt.is_int(torch_scalar) and wt.is_int(warp_scalar) and warp_scalar is not wt.bool_ and \
        torch_scalar._bits_ == warp_scalar._bits_


def _grad_address(t, grad, requires_grad, strides) -> int:
    """The address of the gradient a `return_ctype` descriptor records (Warp's grad_ptr): `grad` (a wp.array
    with the array's strides, or a tensor), else with `requires_grad` (default: the tensor's) `t.grad`,
    allocated as zeros when missing; 0 for none."""
    if grad is not None:
        if isinstance(grad, array):
            if tuple(grad.strides) != tuple(strides):
                raise RuntimeError(f"Gradient strides must match array strides, expected {tuple(strides)} but got "
                                   f"{tuple(grad.strides)}")
            return grad.ptr or 0
        return grad.data_ptr()
    if t.requires_grad if requires_grad is None else requires_grad:
        if t.grad is None:
            t.grad = _torch().zeros_like(t)
        return t.grad.data_ptr()
    return 0


def from_torch(t, dtype=None, requires_grad=None, grad=None, return_ctype=False, retain_grad=False):
    """A wp.array sharing the memory of tensor `t` (no copy). With `requires_grad` (default:
    `t.requires_grad`) the array's `.grad` wraps `grad` when given, else `t.grad` (allocated as zeros
    when missing, so Warp's gradients land in the tensor's `.grad`). `return_ctype=True` returns the
    kernel launch descriptor instead of a wp.array (faster; `t` must outlive its use)."""
    torch = _torch()
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"from_torch expects a torch.Tensor, got {type(t).__name__}")
    device = device_from_torch(t.device)
    src = dtype_from_torch(t.dtype)
    if dtype is None:
        dtype = src
    inner = _element_shape(dtype)
    if not _aliases(src, wt.canonical_type(_scalar_of(dtype))):
        raise RuntimeError(f"Cannot convert Torch type {t.dtype} to Warp type {wt.type_name(dtype)}")
    if inner and tuple(t.shape[-len(inner):]) != inner:
        raise RuntimeError(f"Could not convert PyTorch tensor with shape {tuple(t.shape)} to Warp array with "
                           f"dtype={wt.type_name(dtype)}, ensure that source inner shape is {inner}")
    shape = tuple(t.shape)[:len(t.shape) - len(inner)] or (1,)  # a 0-d tensor becomes a 1-element array
    strides = _byte_strides(t)[:len(shape)] or (t.element_size(),)
    if return_ctype:
        return filled_descriptor(t.data_ptr(), shape, strides, _grad_address(t, grad, requires_grad, strides))
    # the capacity is what the tensor's storage holds from the view's first element on (Warp's)
    capacity = t.untyped_storage().nbytes() - t.storage_offset() * t.element_size()
    a = array(ptr=t.data_ptr(), dtype=dtype, shape=shape, strides=strides, device=device, owner=t,
              capacity=capacity)
    if requires_grad is None:
        requires_grad = t.requires_grad
    if requires_grad:
        if grad is None:
            if t.grad is None:
                t.grad = torch.zeros_like(t)
            grad = t.grad
        a.grad = grad if isinstance(grad, array) else from_torch(grad, dtype=dtype, requires_grad=False)
        a.requires_grad = True
    elif grad is not None:
        a.grad = grad if isinstance(grad, array) else from_torch(grad, dtype=dtype, requires_grad=False)
    if retain_grad:  # (Warp's: ValueError unless the array requires a gradient)
        a.retain_grad = True
    return a


def to_torch(a, requires_grad=None):
    """A tensor sharing the memory of wp.array `a` (no copy). With `requires_grad` (default:
    `a.requires_grad`) the tensor is a leaf that requires grad and its `.grad` is `a.grad` (shared)."""
    torch = _torch()
    if not isinstance(a, array) or a.is_annotation:
        raise TypeError(f"to_torch expects a wp.array, got {type(a).__name__}")
    if not a.device.is_cpu:
        raise RuntimeError(f"to_torch of an array on '{a.device}' is not supported in this build")
    scalar = wt.canonical_type(_scalar_of(a.dtype))
    view = a._host()  # bfloat16 as its bits
    if any(s < 0 for s in view.strides):
        raise RuntimeError("to_torch: PyTorch tensors cannot have negative strides; call .contiguous() first")
    tdt = dtype_to_torch(scalar)
    if scalar is getattr(wt, "bfloat16", None):  # numpy holds bfloat16 as uint16 bit patterns
        t = torch.from_numpy(view.view(np.int16)).view(torch.bfloat16)
    elif scalar._kind_ == "uint" and scalar is not wt.uint8:  # same-width signed, as dtype_to_torch
        t = torch.from_numpy(view.view(np.dtype(f"int{scalar._bits_}")))
    else:
        t = torch.from_numpy(view)
    assert t.dtype == tdt
    if requires_grad is None:
        requires_grad = a.requires_grad
    if requires_grad:
        t.requires_grad_(True)
        if a.grad is None:
            a.grad = zeros(a.shape, a.dtype, a.device)
            a.requires_grad = True
        t.grad = to_torch(a.grad, requires_grad=False)
    return t
