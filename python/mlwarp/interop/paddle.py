"""Paddle interop: zero-copy conversion of tensors and arrays (gradients shared), dtype, device and stream maps.

paddle is imported only when one of these functions is called; `is_paddle_tensor` never imports it. What
wp.array and wp.launch need of paddle (a tensor's memory, dtype and device) is python/mlwarp/arrays/paddle_tensors.py.

As Warp 1.19: `from_paddle` wraps the tensor's data pointer and gives the array the tensor's gradient
(`t.grad`, set to zeros through paddle's `grad_` when missing), so Warp's adjoint launches write what paddle's
optimizers read; `to_paddle` goes through DLPack, the tensor's `grad_` being the array's `.grad`.
"""

from __future__ import annotations

from mlwarp.core import types as wt
from mlwarp.arrays.array import array, zeros
from mlwarp.arrays.paddle_tensors import (  # noqa: F401  (dtype_from_paddle, is_paddle_tensor: also this module's)
    byte_strides, dtype_from_paddle, is_paddle_tensor, paddle_module as _paddle, tensor_device_name,
)
from mlwarp.runtime.abi import filled_descriptor
from mlwarp.runtime.device import get_device
from mlwarp.launching.stream import Stream
from mlwarp.interop.dlpack import to_dlpack


# -- dtypes ---------------------------------------------------------------------
def _warp_to_paddle_names():
    # paddle's unsigned types beyond uint8 support few operations: Warp's uint16/32/64 map to the signed type of
    # the same width, as in Warp
    return {wt.float16: "float16", wt.bfloat16: "bfloat16", wt.float32: "float32", wt.float64: "float64",
            wt.int8: "int8", wt.uint8: "uint8", wt.int16: "int16", wt.uint16: "int16", wt.int32: "int32",
            wt.uint32: "int32", wt.int64: "int64", wt.uint64: "int64", wt.bool_: "bool"}


def dtype_to_paddle(warp_dtype):
    """The paddle dtype of a Warp scalar type (uint16/32/64 -> int16/32/64)."""
    paddle = _paddle()
    t = wt.canonical_type(warp_dtype)
    name = _warp_to_paddle_names().get(t) if t is not None else None
    if name is None:
        raise TypeError(f"Cannot convert {wt.type_name(warp_dtype)} to a Paddle type")
    return getattr(paddle, name)


# -- devices ----------------------------------------------------------------------
_EXPECTED_DEVICES = ("* paddle.base.libpaddle.Place\n* paddle.CPUPlace\n* paddle.CUDAPinnedPlace\n"
                     "* paddle.CUDAPlace or 'gpu' or 'gpu:x'(x means device id)")  # Warp's list


def device_from_paddle(paddle_device):
    """The Warp device of a paddle device: a place (`t.place`, `paddle.CPUPlace()`, `paddle.CUDAPlace(n)`,
    `paddle.CUDAPinnedPlace()`: host memory, the CPU) or a string ("cpu", "gpu", "gpu:N")."""
    if isinstance(paddle_device, str):
        name = "cuda" + paddle_device[3:] if paddle_device.startswith("gpu") else paddle_device
        return _warp_device(name, paddle_device)
    _paddle()
    from paddle.base.libpaddle import CPUPlace, CUDAPinnedPlace, CUDAPlace, Place  # lazy: paddle

    if isinstance(paddle_device, Place):
        if paddle_device.is_gpu_place():
            return _warp_device(f"cuda:{paddle_device.gpu_device_id()}", paddle_device)
        if paddle_device.is_cpu_place() or paddle_device.is_cuda_pinned_place():
            return get_device("cpu")
        raise RuntimeError(f"Unsupported Paddle device type {paddle_device}")
    if isinstance(paddle_device, (CPUPlace, CUDAPinnedPlace)):
        return get_device("cpu")
    if isinstance(paddle_device, CUDAPlace):
        return _warp_device(f"cuda:{paddle_device.get_device_id()}", paddle_device)
    raise TypeError(f"device_from_paddle() received an invalid argument - got {paddle_device}"
                    f"({type(paddle_device)}), but expected one of:\n{_EXPECTED_DEVICES}")


def _warp_device(name, paddle_device):
    try:
        return get_device(name)
    except ValueError as e:
        raise RuntimeError(f"Unsupported Paddle device {paddle_device}: {e}") from None


def device_to_paddle(warp_device) -> str:
    """The paddle device string of a Warp device ("cpu" or "gpu:N")."""
    d = get_device(warp_device)
    if d.is_cpu:
        return "cpu"
    if d.is_cuda:
        return f"gpu:{d.ordinal}"
    raise RuntimeError(f"Warp device {d} is not compatible with paddle")


def stream_from_paddle(stream_or_device=None):
    """A Warp stream wrapping a paddle CUDA stream, or the current paddle stream of a paddle GPU device (default:
    paddle's current device). The Warp stream keeps the paddle stream alive."""
    paddle = _paddle()
    if isinstance(stream_or_device, paddle.device.Stream):
        paddle_stream = stream_or_device
    else:
        try:
            paddle_stream = paddle.device.current_stream(stream_or_device)
        except TypeError as e:  # (Warp's error type: paddle's, which names only the device kinds it wants)
            device = stream_or_device if stream_or_device is not None else paddle.device.get_device()
            raise TypeError(f"stream_from_paddle: paddle has CUDA streams only on GPU devices ('gpu', 'gpu:N', "
                            f"paddle.CUDAPlace), got '{device}' ({e})") from None
    stream = Stream(device_from_paddle(paddle_stream.device), cuda_stream=paddle_stream.stream_base.cuda_stream)
    stream._paddle_stream = paddle_stream
    return stream


# -- tensors <-> arrays --------------------------------------------------------------
def _views_as(paddle_scalar, warp_scalar) -> bool:
    """Whether elements of (the Warp type matching) a paddle dtype may be seen as `warp_scalar`: the same type,
    an integer of the same width and other signedness, or bool as an 8-bit integer (Warp's sets)."""
    if paddle_scalar is warp_scalar:
        return True
    if paddle_scalar is wt.bool_:
        return warp_scalar in (wt.uint8, wt.int8)
    return wt.is_int(paddle_scalar) and wt.is_int(warp_scalar) and warp_scalar is not wt.bool_ and \
        paddle_scalar._bits_ == warp_scalar._bits_


def _array_layout(t, dtype) -> tuple:
    """The array shape and byte strides of tensor `t` seen as `dtype` elements: a vector/matrix dtype takes the
    trailing (contiguous) dimensions; a 0-d tensor is a 1-element array."""
    shape, strides, item = tuple(t.shape), byte_strides(t), t.element_size()
    inner = wt.inner_shape(dtype)
    if inner:
        k = len(inner)
        if len(shape) < k or shape[-k:] != inner:
            raise RuntimeError(f"Could not convert Paddle tensor with shape {list(shape)} to Warp array with "
                               f"dtype={wt.type_name(dtype)}, ensure that source inner shape is {inner}")
        contiguous = tuple(item * int(n) for n in _c_strides(inner))
        if strides[-k:] != contiguous:
            raise RuntimeError(f"Could not convert Paddle tensor with shape {list(shape)} to Warp array with "
                               f"dtype={wt.type_name(dtype)}, because the source inner strides are not contiguous")
        shape, strides = shape[:-k], strides[:-k]
        item *= wt.type_length(dtype)
    return shape or (1,), strides or (item,)


def _c_strides(shape) -> tuple:
    out, n = [], 1
    for d in reversed(shape):
        out.append(n)
        n *= d
    return tuple(reversed(out))


def from_paddle(t, dtype=None, requires_grad=None, grad=None, return_ctype=False, retain_grad=False):
    """A wp.array sharing the memory of paddle tensor `t` (no copy). With `requires_grad` (default:
    `not t.stop_gradient`) the array's `.grad` wraps `grad` when given, else `t.grad` (set to zeros through
    paddle's `grad_` when missing, so Warp's gradients land in the tensor's `.grad`). `return_ctype=True`
    returns the kernel launch descriptor instead of a wp.array (faster; it keeps `t` alive, not a gradient)."""
    paddle = _paddle()
    if not isinstance(t, paddle.Tensor):
        raise TypeError(f"from_paddle expects a paddle.Tensor, got {type(t).__name__}")
    device = get_device(tensor_device_name(t))
    src = dtype_from_paddle(t.dtype)
    if dtype is None:
        dtype = src
    elif not _views_as(src, wt.canonical_type(wt.scalar_type_of(dtype))):
        raise RuntimeError(f"Cannot convert Paddle type {t.dtype} to Warp type {wt.type_name(dtype)}")
    shape, strides = _array_layout(t, dtype)
    if return_ctype:
        d = filled_descriptor(t.data_ptr(), shape, strides)
        d._tensor = t  # the descriptor holds the address only
        return d
    a = array(ptr=t.data_ptr(), dtype=dtype, shape=shape, strides=strides, device=device, owner=t)
    if requires_grad is None:
        requires_grad = not t.stop_gradient
    if grad is None and requires_grad:
        if t.grad is None:
            t.grad_ = paddle.zeros(t.shape, dtype=t.dtype)
        grad = t.grad
    if grad is not None:
        a.grad = grad if isinstance(grad, array) else from_paddle(grad, dtype=dtype, requires_grad=False)
    if requires_grad:
        a.requires_grad = True
    if retain_grad:  # (Warp's: ValueError unless the array requires a gradient)
        a.retain_grad = True
    return a


def to_paddle(a, requires_grad=None):
    """A paddle tensor sharing the memory of wp.array `a` (through DLPack, no copy). With `requires_grad`
    (default: `a.requires_grad`) the tensor does not stop gradients and its `.grad` is `a.grad` (shared,
    allocated as zeros when missing)."""
    paddle = _paddle()
    if not isinstance(a, array) or a.is_annotation:
        raise TypeError(f"to_paddle expects a wp.array, got {type(a).__name__}")
    if wt.is_struct(a.dtype):
        raise RuntimeError("Cannot convert structured Warp arrays to Paddle.")
    if any(s < 0 for s in a.strides):  # (paddle would read them as huge sizes)
        raise RuntimeError("to_paddle: Paddle tensors cannot have negative strides; call .contiguous() first")
    scalar = wt.canonical_type(wt.scalar_type_of(a.dtype))
    dtype_to_paddle(scalar)  # (TypeError for a type paddle has none of)
    signed = {wt.uint16: wt.int16, wt.uint32: wt.int32, wt.uint64: wt.int64}.get(scalar)
    # uint16/32/64 as the signed type of their width, as dtype_to_paddle (paddle reads DLPack's uint16 as bfloat16)
    view = a.view(signed) if signed is not None else a
    from paddle.utils import dlpack  # lazy: paddle

    t = dlpack.from_dlpack(to_dlpack(view))
    if requires_grad is None:
        requires_grad = a.requires_grad
    t.stop_gradient = not requires_grad
    if requires_grad:
        if a.grad is None:
            a.grad = zeros(a.shape, a.dtype, a.device)
            a.requires_grad = True
        t.grad_ = to_paddle(a.grad, requires_grad=False)
    return t
