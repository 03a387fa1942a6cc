"""Vector norms that Warp defines as @wp.func over its builtins (warp.math), with Warp's formulas and
argument types: `v` is any float32 vector, `delta` a float32 (default 1.0). Written in the kernel
language, so their derivatives are those of the formulas, branch by branch, as in Warp."""

from __future__ import annotations

from typing import Any

from mlwarp.library.builtins import namespace as wp  # wp.sin, wp.length, ...: the builtins, spelt as in user code
from mlwarp.kernels.func import func


@func
def norm_l1(v: Any):
    """sum_i |v_i| (summed left to right)."""
    n = float(0.0)
    for i in range(len(v)):
        n += wp.abs(v[i])
    return n


@func
def norm_l2(v: Any):
    """sqrt(sum_i v_i^2): wp.length(v)."""
    return wp.length(v)


@func
def norm_huber(v: Any, delta: float = 1.0):
    """0.5 |v|^2 where |v| <= delta, else delta (|v| - delta / 2)."""
    a = wp.dot(v, v)
    if a <= delta * delta:
        return 0.5 * a
    return delta * (wp.sqrt(a) - 0.5 * delta)


@func
def norm_pseudo_huber(v: Any, delta: float = 1.0):
    """delta sqrt(1 + |v|^2 / delta^2)."""
    a = wp.dot(v, v)
    return delta * wp.sqrt(1.0 + a / (delta * delta))


@func
def smooth_normalize(v: Any, delta: float = 1.0):
    """v / norm_pseudo_huber(v, delta)."""
    return v / norm_pseudo_huber(v, delta)


__all__ = ["norm_l1", "norm_l2", "norm_huber", "norm_pseudo_huber", "smooth_normalize"]
