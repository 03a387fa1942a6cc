"""Views the linear solvers take of their vectors: the scalars of an array of vectors (dot products and diagonal
products are per scalar), vectors of a scalar array (block preconditioners), one row repeated (two dot products
of the same vector in one launch), and where a vector entry lies in a batch of independent subproblems."""

from __future__ import annotations

from mlwarp.arrays.array import array
from mlwarp.library.array_search import lower_bound
from mlwarp.kernels.func import func
from mlwarp.types import type_length, type_scalar_type, type_size_in_bytes, vector


def _strided_view(x, shape, strides, dtype):
    view = array(ptr=x.ptr, shape=shape, strides=strides, dtype=dtype, device=x.device)
    view._ref = x  # the view does not own x's memory: keep x alive as long as the view
    return view


def scalar_view(x):
    """`x` (1-D or 2-D) with its last dimension's vectors unfolded into scalars: an array of n vec3 is 3n
    scalars. The last dimension must hold whole contiguous elements (it does for every solver buffer)."""
    scalar = type_scalar_type(x.dtype)
    if scalar == x.dtype:
        return x
    length = type_length(x.dtype)
    return _strided_view(x, (*x.shape[:-1], x.shape[-1] * length), (*x.strides[:-1], x.strides[-1] // length),
                         scalar)


def vector_view(x, length: int):
    """The 1-D scalar array `x` read as vectors of `length` scalars (same memory)."""
    if length == 1:
        return x
    if x.strides[-1] != type_size_in_bytes(x.dtype):
        raise ValueError("Array is not contiguous along its last dimension")
    if x.shape[-1] % length != 0:
        raise ValueError(f"Array length {x.shape[-1]} is not divisible by block size {length}")
    return _strided_view(x, (*x.shape[:-1], x.shape[-1] // length), (*x.strides[:-1], x.strides[-1] * length),
                         vector(length=length, dtype=x.dtype))


def repeat_first_row(x):
    """A view of the 2-D array `x` whose every row is `x`'s first row (a zero stride)."""
    return _strided_view(x, x.shape, (0, *x.strides[1:]), x.dtype)


def repeat_rows(x, count: int):
    """The 1-D array `x` as `count` rows that all are `x` (a zero stride)."""
    return _strided_view(x, (count, x.shape[0]), (0, x.strides[0]), x.dtype)


def scalars_per_entry(dtype) -> int:
    return type_length(dtype) if type_scalar_type(dtype) != dtype else 1


def scalar_count(x) -> int:
    """Number of scalar degrees of freedom of the 1-D array `x`."""
    return x.shape[0] * scalars_per_entry(x.dtype)


@func
def batch_of_scalar(dof: int, batch_offsets: array(dtype=int)) -> int:
    """The subproblem that scalar degree of freedom `dof` belongs to: 0 without batches, -1 past the last one
    (an inactive entry the solvers leave alone)."""
    if not batch_offsets:
        return 0
    batch_count = batch_offsets.shape[0] - 1
    if dof >= batch_offsets[batch_count]:
        return -1
    return lower_bound(batch_offsets, 0, batch_count + 1, dof + 1) - 1


@func
def batch_of_entry(entry: int, batch_offsets: array(dtype=int), scalars_per_entry: int) -> int:
    return batch_of_scalar(entry * scalars_per_entry, batch_offsets)
