"""wp.copy's element windows, checks and messages (Warp's), its byte copy, and the backward of a recorded
wp.copy: what the copy does once the arrays' host storage is known, for wp.array, indexed and Fabric arrays
and CUDA arrays' host copies alike (it knows arrays by their attributes, not their class)."""

from __future__ import annotations

import numpy as np

from mlwarp.core import types as _t
from mlwarp.arrays.array_data import _element_shape


def copy_bytes(d, s):
    """d[...] = s, element bytes for element bytes (as Warp's memcpy: float32 into int32 keeps the bits)."""
    if d.dtype == s.dtype and d.shape == s.shape:
        d[...] = s
    else:
        d[...] = np.ascontiguousarray(s).view(np.uint8).reshape(-1).view(d.dtype).reshape(d.shape)


def copy_windows(dest, dest_view, src, src_view, dest_offset, src_offset, n):
    """The numpy windows of `dest_view` and `src_view` (the host storage of `dest` and `src`, or host copies of
    it) that wp.copy writes and reads for `n` elements from the offsets, with Warp's checks and messages."""
    size = _t.type_size_in_bytes
    if src.is_contiguous and dest.is_contiguous:
        check_contiguous_copy(dest, src, dest_offset, src_offset, n)
        s = src_view.reshape((-1,) + _element_shape(src.dtype))[src_offset:src_offset + n]
        d = dest_view.reshape((-1,) + _element_shape(dest.dtype))[dest_offset:dest_offset + n]
        return d, s
    d, s = dest_view, src_view
    if src_offset or dest_offset or n != src.size or n != dest.size:
        if src.ndim != 1 or dest.ndim != 1:
            raise RuntimeError("dest_offset, src_offset, and count are only supported for 1-D non-contiguous "
                               "arrays")
        if src_offset + n > src.size:
            raise RuntimeError(f"Trying to copy a range of {n} element(s) from source offset ({src_offset}) "
                               f"exceeds the source size ({src.size})")
        if dest_offset + n > dest.size:
            raise RuntimeError(f"Trying to copy a range of {n} element(s) to destination offset ({dest_offset}) "
                               f"exceeds the destination size ({dest.size})")
        s, d = src_view[src_offset:src_offset + n], dest_view[dest_offset:dest_offset + n]
    elif src.shape != dest.shape:
        raise RuntimeError(f"Incompatible array shapes: destination shape={dest.shape}, source shape={src.shape}")
    if size(src.dtype) != size(dest.dtype):
        raise RuntimeError(dtype_mismatch(dest, src))
    return d, s


def dtype_mismatch(dest, src) -> str:
    return (f"Incompatible array data types: destination dtype={_t.type_repr(dest.dtype)}, source "
            f"dtype={_t.type_repr(src.dtype)}")


def check_contiguous_copy(dest, src, dest_offset, src_offset, n) -> None:
    """Warp's checks and messages for wp.copy of `n` elements between contiguous arrays (any devices)."""
    size = _t.type_size_in_bytes
    if size(src.dtype) != size(dest.dtype):
        raise RuntimeError(dtype_mismatch(dest, src))
    item = size(src.dtype)
    if (src_offset + n) * item > src.size * item:
        raise RuntimeError(f"Trying to copy source buffer with size ({n * item}) from offset "
                           f"({src_offset * item}) is larger than source size ({src.size * item})")
    if (dest_offset + n) * item > dest.size * item:
        raise RuntimeError(f"Trying to copy source buffer with size ({n * item}) to offset "
                           f"({dest_offset * item}) is larger than destination size ({dest.size * item})")


def adjoint_copy(adj_dest, adj_src, dest_offset, src_offset, n, dest_retain_grad=False):
    """The backward of a recorded wp.copy, as Warp's: numeric gradients of one dtype add into the source
    window and clear the destination window (kept with `retain_grad`); other dtypes (bool, structs, a
    reinterpreting copy) and overlapping windows are copied back."""
    d_host, s_host = adj_dest._host(), adj_src._host()  # CPU: the storage itself; CUDA: host copies
    d, s = copy_windows(adj_dest, d_host, adj_src, s_host, dest_offset, src_offset, n)
    scalar = None if _t.is_struct(adj_src.dtype) else _t.scalar_type_of(adj_src.dtype)
    addable = scalar is not None and scalar is not _t.bool_ and adj_src.dtype is adj_dest.dtype
    if addable and not np.may_share_memory(d, s):
        if scalar is _t.bfloat16:  # bit patterns in uint16: add as floats
            s[...] = _t.float_to_bf16_bits(_t.bf16_bits_to_float(s) + _t.bf16_bits_to_float(d))
        else:
            s += d
        if not dest_retain_grad:
            d[...] = 0
    else:
        copy_bytes(s, d)
    for a, host in ((adj_src, s_host), (adj_dest, d_host)):
        if host is not a._np:
            a.assign(host)
