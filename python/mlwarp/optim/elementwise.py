"""What the gradient-descent optimizers (SGD, Adam) share: their updates are per scalar, so an array of vectors or
matrices is updated through a flat view of its scalars, one thread per scalar, by one generic kernel per
optimizer."""

from __future__ import annotations

from mlwarp.arrays.array import zeros
from mlwarp.types import type_repr, type_scalar_type


def flat_scalars(a):
    """A 1-D view of the scalars of the contiguous array `a` (same memory: the optimizers update in place)."""
    if not a.is_contiguous:
        raise ValueError(f"optimizer arrays must be contiguous, got an array of shape {a.shape} with strides "
                         f"{a.strides}")
    scalar = type_scalar_type(a.dtype)
    return (a if scalar == a.dtype else a.view(scalar)).flatten()


def check_gradient(optimizer: str, g, params) -> None:
    """Warp's checks of a gradient against its parameter array, with Warp's messages."""
    if params.dtype != g.dtype:
        raise TypeError(f"{optimizer} gradient dtype must match parameter dtype {type_repr(params.dtype)}, "
                        f"got {type_repr(g.dtype)}")
    if params.shape != g.shape:
        raise ValueError(f"{optimizer} gradient shape must match parameter shape {params.shape}, got {g.shape}")


def follow_param(buffer, param, dtype):
    """The state buffer of `param` (moments, momentum): kept when its shape and dtype still fit (moved with the
    parameter to its device), else new zeros, as Warp's set_params does."""
    if buffer is None or buffer.shape != param.shape or buffer.dtype != dtype:
        return zeros(shape=param.shape, dtype=dtype, device=param.device)
    if buffer.device != param.device:
        return buffer.to(param.device)
    return buffer
