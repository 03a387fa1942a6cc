"""DLPack import: any producer's tensor (an object with `__dlpack__`, or a capsule) as a wp.array, without
copying; export: `to_dlpack` and `wp.array.__dlpack__`. The ABI (structures, capsules, the export itself)
is runtime/dlpack.py, which wp.array uses.

As Warp's: the producer's device is asked first (`__dlpack_device__`), so a device Warp cannot use is refused
before the producer exports anything; a requested `dtype` may view the elements as another type of their
width where Warp allows it (int8 <-> uint8 and the other signed/unsigned pairs, bool8 as int8 or uint8), and
a vector/matrix `dtype` takes the trailing dimensions as its elements.
"""

from __future__ import annotations

import numpy as np

from mlwarp.core import types as wt
from mlwarp.arrays.array import array
from mlwarp.runtime.dlpack import (  # noqa: F401  (device_to_dlpack, to_dlpack, _exported: also mlwarp.interop.dlpack's)
    CPU, CUDA, CUDA_HOST, CUDA_MANAGED, ImportedTensor, _exported, consume, device_from_dlpack, device_to_dlpack,
    dtype_from_dlpack, dtype_is_compatible, dtype_name, peek,
)
from mlwarp.runtime.dlpack import to_dlpack as _to_dlpack
from mlwarp.runtime.device import get_device
from mlwarp.runtime.host_memory import wrap_pointer


def to_dlpack(wp_array, versioned=False):
    """`wp.to_dlpack`: a DLPack capsule sharing `wp_array`'s memory (a legacy `dltensor` capsule, as Warp's,
    unless `versioned`: DLPack 1.0)."""
    return _to_dlpack(wp_array, versioned=versioned)


def _stream_for(device_type, device_id):
    """The `stream` to pass a producer on `device_type` (DLPack's 1 is CUDA's legacy default stream): the one
    this device's work is queued on, so the producer orders its pending writes before ours."""
    if device_type == CPU:
        return None
    if device_type in (CUDA, CUDA_MANAGED, CUDA_HOST):
        device = get_device(f"cuda:{device_id}" if device_type != CUDA_HOST else "cuda")
        return int(device.stream.cuda_stream) or 1
    raise TypeError(f"Unsupported source device for DLPack: device_type={device_type}, device_id={device_id}")


def _capsule_of(source):
    if not hasattr(source, "__dlpack__"):
        return source  # a capsule (peek refuses anything else)
    stream = None
    if hasattr(source, "__dlpack_device__"):
        device_type, device_id = source.__dlpack_device__()
        stream = _stream_for(int(device_type), int(device_id or 0))  # (paddle says None for its CPU's id)
    try:
        return source.__dlpack__(stream=stream, max_version=(1, 0))
    except TypeError:  # a producer that predates DLPack 1.0 keywords
        return source.__dlpack__(stream=stream)


def from_dlpack(source, dtype=None, hint=None):
    """A wp.array sharing the memory of a DLPack producer (an object with `__dlpack__`, or a capsule).
    A vector/matrix `dtype` takes the trailing dimensions as its elements ((n, 3) floats -> n vec3).
    `hint` is Warp's, for opaque-pointer tensors (CUDA arrays as textures), which mlwarp does not import."""
    capsule = _capsule_of(source)
    managed, readonly = peek(capsule)
    t = managed.dl_tensor
    if t.dtype.code == 3:  # kDLOpaquePointer
        raise ValueError(f"Unable to interpret opaque pointer (hint={hint})")
    device = device_from_dlpack(t.device.device_type, t.device.device_id)
    shape = tuple(t.shape[i] for i in range(t.ndim))
    item = t.dtype.bits // 8
    if t.strides:
        strides = tuple(t.strides[i] * item * t.dtype.lanes for i in range(t.ndim))
    else:
        strides = tuple(int(s) * item * t.dtype.lanes for s in np.empty(shape, dtype=np.uint8).strides)
    if t.dtype.lanes > 1:  # Warp's reading: the lanes are one more (innermost) dimension
        shape, strides = (*shape, t.dtype.lanes), (*strides, item)
    if not shape:  # a 0-d tensor becomes a 1-element array
        shape, strides = (1,), (item,)
    if dtype is None:
        dtype = dtype_from_dlpack(t.dtype)
    else:
        dtype = wt.canonical_type(dtype) or dtype
        if wt.is_struct(dtype) or not dtype_is_compatible(t.dtype, wt.scalar_type_of(dtype)):
            raise RuntimeError(f"Incompatible data types: DLPack {dtype_name(t.dtype)} and Warp "
                               f"{wt.type_repr(dtype)}")
        shape, strides = _split_elements(shape, strides, item, dtype)
    consume(capsule)
    owner = ImportedTensor(managed)  # from here on the producer's memory is ours to release
    ptr = (t.data or 0) + t.byte_offset
    if device.is_cpu:
        view = wrap_pointer(ptr, shape, strides, dtype, owner=owner, readonly=readonly)
        return array(_view=(view, dtype), device=device)
    return array(ptr=ptr, dtype=dtype, shape=shape, strides=strides, device=device, owner=owner)


def _split_elements(shape, strides, item, dtype):
    """The array shape and strides once `dtype`'s elements take the trailing (contiguous) dimensions."""
    inner = wt.inner_shape(dtype)
    if not inner:
        return shape, strides
    k = len(inner)
    contiguous = tuple(int(s) * item for s in np.empty(inner, dtype=np.uint8).strides)
    if len(shape) < k or shape[-k:] != inner or strides[-k:] != contiguous:
        raise RuntimeError(f"Could not convert a DLPack tensor with shape {shape} to Warp array with "
                           f"dtype={wt.type_name(dtype)}: its inner dimensions must be contiguous {inner}")
    # a tensor that is one element (shape == inner): a 1-element array, as Warp's
    return shape[:-k] or (1,), strides[:-k] or (contiguous[0] * inner[0],)
