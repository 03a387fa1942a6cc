"""Fabric interface dicts (version 1, what `wp.fabricarray(data, attrib)` reads) over memory the tests own:
one attribute whose buckets split a wp.array, or, for an array of arrays, split a list of wp.arrays (a pointer
and a uint64 length per element). `iface["_keep"]` keeps that memory alive with the dict."""

from __future__ import annotations

import numpy as np

import mlwarp as wp

# the interface's base type codes
CODES = {wp.bool: "b", wp.int8: "i1", wp.int16: "i2", wp.int32: "i4", wp.int64: "i8", wp.uint8: "u1",
         wp.uint16: "u2", wp.uint32: "u4", wp.uint64: "u8", wp.float16: "f2", wp.float32: "f4", wp.float64: "f8"}


def type_info(dtype, depth: int = 0):
    """(has_warp_type, base type code, element count, array depth, role) for a Warp dtype."""
    scalar = getattr(dtype, "_wp_scalar_type_", dtype)
    shape = tuple(getattr(dtype, "_shape_", ()))
    count = int(np.prod(shape)) if shape else 1
    kind = getattr(dtype, "_wp_composite_", None)
    role = {"vec": "vector", "mat": "matrix", "quat": "quat"}.get(kind, "")
    return (True, CODES[scalar], count, depth, role)


def bucket_interface(data: wp.array, attrib: str, sizes, device=None) -> dict:
    """An attribute over the 1-d array `data`, its buckets `sizes` elements long, in order (0 allowed)."""
    assert sum(sizes) == data.size
    stride = data.strides[0]
    pointers, counts, at = [], [], int(data.ptr or 0)
    for n in sizes:
        pointers.append(at)
        counts.append(n)
        at += n * stride
    info = {"type": type_info(data.dtype), "access": 2, "pointers": pointers, "counts": counts}
    return {"version": 1, "device": str(device or data.device), "attribs": {attrib: info}, "_keep": data}


def rows_interface(rows: list, attrib: str, sizes) -> dict:
    """An array-of-arrays attribute whose element k is the 1-d array rows[k], its buckets `sizes` elements long."""
    assert sum(sizes) == len(rows)
    device = rows[0].device
    addresses = wp.array(np.array([r.ptr or 0 for r in rows], dtype=np.uint64), dtype=wp.uint64, device=device)
    lengths = wp.array(np.array([r.size for r in rows], dtype=np.uint64), dtype=wp.uint64, device=device)
    pointers, counts, array_lengths, k = [], [], [], 0
    for n in sizes:
        pointers.append(addresses.ptr + 8 * k)
        array_lengths.append(lengths.ptr + 8 * k)
        counts.append(n)
        k += n
    info = {"type": type_info(rows[0].dtype, depth=1), "access": 1, "pointers": pointers, "counts": counts,
            "array_lengths": array_lengths}
    return {"version": 1, "device": str(device), "attribs": {attrib: info}, "_keep": (rows, addresses, lengths)}


def fabric(values, dtype=wp.float32, sizes=None, device="cpu"):
    """A wp.fabricarray over a fresh wp.array of `values`, split into buckets of `sizes` (default: one bucket),
    and that array."""
    data = wp.array(np.asarray(values), dtype=dtype, device=device)
    sizes = [data.size] if sizes is None else sizes
    return wp.fabricarray(bucket_interface(data, "attr", sizes), "attr"), data


def index(values, device="cpu") -> wp.array:
    return wp.array(np.asarray(values, dtype=np.int32), dtype=wp.int32, device=device)
