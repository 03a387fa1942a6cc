"""`wp.lower_bound`, a Warp 1.19 builtin (warp/native/array.h), written here in the kernel language as a generic
@wp.func: a binary search of a sorted 1-D array."""

from __future__ import annotations

from typing import Any

from mlwarp.arrays.array import array
from mlwarp.kernels.func import func


@func
def lower_bound(arr: array(dtype=Any), arr_begin: int, arr_end: int, value: Any) -> int:
    """The first index i in [arr_begin, arr_end) with arr[i] >= value in the sorted range, as Warp's: when every
    element is smaller, arr_end - 1 (not arr_end); arr_begin for an empty range."""
    lower = arr_begin
    upper = arr_end - 1
    while lower < upper:
        mid = lower + (upper - lower) // 2
        if arr[mid] < value:
            lower = mid + 1
        else:
            upper = mid
    return lower


@func
def lower_bound(arr: array(dtype=Any), value: Any) -> int:  # noqa: F811  (a second overload, as in Warp)
    """lower_bound over the whole array."""
    return lower_bound(arr, 0, arr.shape[0], value)


__all__ = ["lower_bound"]
