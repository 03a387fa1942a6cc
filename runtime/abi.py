"""The launch ABI shared by the CPU lowering and the runtime.

A launch passes one pointer to a C struct:
    struct { int64 dims[4]; <param 0>; <param 1>; ... }
with an array parameter as `struct { void* data; int64 shape[N]; int64 strides[N]; }`
(strides in bytes) and a scalar as its C type. ctypes lays it out with the C
rules that LLVM uses for the matching `!llvm.struct`.

An array held in a struct field (`field_descriptor`) also records its gradient's address after the strides
(`void* grad`, 0: none) and its `int32 ndim` (0: no array set), as Warp's array_t does: a struct stored in an
array and read back in a kernel has no companion struct beside it, and its arrays' adjoints are found there.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from mlwarp.core import types as wt


@dataclass(frozen=True)
class ArrayParam:
    dtype: type
    ndim: int


_descriptors: dict[int, type] = {}


def descriptor(ndim: int) -> type:
    d = _descriptors.get(ndim)
    if d is None:
        d = type(f"array{ndim}d_t", (ctypes.Structure,), {"_fields_": [
            ("data", ctypes.c_void_p), ("shape", ctypes.c_int64 * ndim), ("strides", ctypes.c_int64 * ndim)],
            "ndim": ndim, "grad": 0})  # Warp's array_t reads: `grad` its gradient's address (0: none)
        _descriptors[ndim] = d
    return d


_field_descriptors: dict[int, type] = {}


def field_descriptor(ndim: int) -> type:
    """An array as a struct field stores it: the launch descriptor, then the gradient's address (same shape and
    byte strides as the data; 0: none) and the number of dimensions (0 where no array is set)."""
    d = _field_descriptors.get(ndim)
    if d is None:
        d = type(f"array{ndim}d_field_t", (ctypes.Structure,), {"_fields_": [
            ("data", ctypes.c_void_p), ("shape", ctypes.c_int64 * ndim), ("strides", ctypes.c_int64 * ndim),
            ("grad", ctypes.c_void_p), ("ndim", ctypes.c_int32)]})
        _field_descriptors[ndim] = d
    return d


def filled_descriptor(ptr: int, shape: tuple, strides: tuple, grad: int = 0):
    """The descriptor of an array at `ptr` (byte `strides`): what `wp.from_torch(t, return_ctype=True)` and
    `wp.from_paddle` return, which wp.launch takes in place of an array. `grad`, the address of its gradient as
    Warp's array_t records it, is kept beside the C fields: mlwarp's kernels take gradients as arrays of their
    own (adjoint launches), so the launch layout has no slot for it."""
    d = descriptor(len(shape))()
    d.data = ptr
    if grad:
        d.grad = grad
    for i, (n, s) in enumerate(zip(shape, strides)):
        d.shape[i] = n
        d.strides[i] = s
    return d


def param_ctype(p) -> type:
    if isinstance(p, ArrayParam):
        return descriptor(p.ndim)
    return p._ctype_


def launch_struct(params: list) -> type:
    """The ctypes struct for a kernel with `params` (ArrayParam or scalar types)."""
    fields = [("dims", ctypes.c_int64 * 4)] + [(f"p{i}", param_ctype(p)) for i, p in enumerate(params)]
    return type("launch_t", (ctypes.Structure,), {"_fields_": fields})
