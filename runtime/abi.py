"""The launch ABI shared by the CPU lowering and the runtime.

A launch passes one pointer to a C struct:
    struct { int64 dims[4]; <param 0>; <param 1>; ... }
with an array parameter as `struct { void* data; int64 shape[N]; int64 strides[N]; }`
(strides in bytes) and a scalar as its C type. ctypes lays it out with the C
rules that LLVM uses for the matching `!llvm.struct`.

An array held in a struct field is Warp's C array_t (`WarpArrayField`): it also records the array's gradient
address (0: none). A struct stored in an array and read back in a kernel has no companion struct beside it, and
its arrays' adjoints are found there (warp-autodiff's warp.struct_field_grad).
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


class WarpArrayField(ctypes.Structure):
    """A struct's array field, as Warp's C `array_t` (what `.numpy()` of an array of such structs shows): the data
    and gradient addresses, int32 shape and byte strides of up to 4 dimensions, ndim, flags (compiler: the
    composites lowering's WARP_ARRAY_FIELD)."""

    _fields_ = [("data", ctypes.c_uint64), ("grad", ctypes.c_uint64), ("shape", ctypes.c_int32 * 4),
                ("strides", ctypes.c_int32 * 4), ("ndim", ctypes.c_uint16), ("flags", ctypes.c_uint16)]


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
