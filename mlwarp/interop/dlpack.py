"""DLPack import: any producer's tensor (an object with `__dlpack__`, or a capsule) as a wp.array, without
copying; export: `to_dlpack` and `wp.array.__dlpack__`. The ABI (structures, capsules, the export itself)
is mlwarp/runtime/dlpack.py, which wp.array uses.
"""

from __future__ import annotations

import numpy as np

from .. import types as wt
from ..array import array
from ..runtime.dlpack import (  # noqa: F401  (device_to_dlpack, to_dlpack, _exported: also mlwarp.interop.dlpack's)
    ImportedTensor, _exported, consume, device_from_dlpack, device_to_dlpack, dtype_from_dlpack, to_dlpack,
)
from ..runtime.host_memory import wrap_pointer


def _capsule_of(source):
    if type(source).__name__ == "PyCapsule":
        return source
    if not hasattr(source, "__dlpack__"):
        raise TypeError(f"from_dlpack expects an object with __dlpack__ or a DLPack capsule, got "
                        f"{type(source).__name__}")
    try:
        return source.__dlpack__(max_version=(1, 0))
    except TypeError:  # a producer that predates DLPack 1.0 keywords
        return source.__dlpack__()


def from_dlpack(source, dtype=None):
    """A wp.array sharing the memory of a DLPack producer (an object with `__dlpack__`, or a capsule).
    A vector/matrix `dtype` takes the trailing dimensions as its elements ((n, 3) floats -> n vec3)."""
    managed, readonly = consume(_capsule_of(source))
    owner = ImportedTensor(managed)  # from here on the producer's memory is ours to release
    t = managed.dl_tensor
    src = dtype_from_dlpack(t.dtype)
    device = device_from_dlpack(t.device.device_type, t.device.device_id)
    shape = tuple(t.shape[i] for i in range(t.ndim))
    item = src._bits_ // 8
    if t.strides:
        strides = tuple(t.strides[i] * item for i in range(t.ndim))
    else:
        strides = tuple(int(s) * item for s in np.empty(shape, dtype=np.uint8).strides)
    if not shape:  # a 0-d tensor becomes a 1-element array
        shape, strides = (1,), (item,)
    dtype = src if dtype is None else wt.canonical_type(dtype) or dtype
    shape, strides = _split_elements(shape, strides, src, dtype)
    ptr = (t.data or 0) + t.byte_offset
    if device.is_cpu:
        view = wrap_pointer(ptr, shape, strides, dtype, owner=owner, readonly=readonly)
        return array(_view=(view, dtype), device=device)
    return array(ptr=ptr, dtype=dtype, shape=shape, strides=strides, device=device, owner=owner)


def _split_elements(shape, strides, src, dtype):
    """The array shape and strides once `dtype`'s elements take the trailing (contiguous) dimensions."""
    if wt.scalar_type_of(dtype) is not src or wt.is_struct(dtype):
        raise RuntimeError(f"Cannot convert DLPack dtype {wt.type_name(src)} to Warp type {wt.type_name(dtype)}")
    inner = wt.inner_shape(dtype)
    if not inner:
        return shape, strides
    k = len(inner)
    contiguous = tuple(int(s) * (src._bits_ // 8) for s in np.empty(inner, dtype=np.uint8).strides)
    if len(shape) <= k or shape[-k:] != inner or strides[-k:] != contiguous:
        raise RuntimeError(f"Could not convert a DLPack tensor with shape {shape} to Warp array with "
                           f"dtype={wt.type_name(dtype)}: its inner dimensions must be contiguous {inner}")
    return shape[:-k], strides[:-k]
