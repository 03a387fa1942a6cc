"""Parsing and validating `__cuda_array_interface__` (CuPy, Numba, PyTorch CUDA tensors; version 0-3).

Running on the memory it describes is the CUDA backend's business; this module
only turns the interface into checked facts (pointer, shape, byte strides,
Warp dtype, read-only flag, stream) and explains what is wrong with a bad one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlwarp.core import types as wt


@dataclass(frozen=True)
class CudaArrayInfo:
    ptr: int
    shape: tuple
    strides: tuple  # bytes, filled in for C-contiguous arrays
    dtype: type  # Warp scalar type
    readonly: bool
    stream: int | None
    version: int


def _fail(why):
    raise ValueError(f"Invalid __cuda_array_interface__: {why}")


def parse_cuda_array_interface(obj) -> CudaArrayInfo:
    """The checked contents of `obj.__cuda_array_interface__` (or of the interface dict itself)."""
    iface = obj if isinstance(obj, dict) else getattr(obj, "__cuda_array_interface__", None)
    if not isinstance(iface, dict):
        raise TypeError(f"{type(obj).__name__} does not implement __cuda_array_interface__")
    for key in ("shape", "typestr", "data", "version"):
        if key not in iface:
            _fail(f"missing '{key}'")
    version = iface["version"]
    if not isinstance(version, int) or not 0 <= version <= 3:
        _fail(f"unsupported version {version!r}")
    shape = iface["shape"]
    if not isinstance(shape, tuple) or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                                               for n in shape):
        _fail(f"shape must be a tuple of non-negative ints, got {shape!r}")
    typestr = iface["typestr"]
    try:
        np_dtype = np.dtype(typestr)
    except TypeError:
        _fail(f"unknown typestr {typestr!r}")
    if np_dtype.byteorder == ">" or (np_dtype.byteorder == "=" and not np.little_endian):
        _fail(f"big-endian typestr {typestr!r} is not supported")
    try:
        dtype = wt.dtype_from_numpy(np_dtype)
    except TypeError:
        _fail(f"typestr {typestr!r} has no Warp type")
    data = iface["data"]
    if not (isinstance(data, tuple) and len(data) == 2 and isinstance(data[0], int) and isinstance(data[1], bool)):
        _fail(f"data must be a (pointer, readonly) tuple, got {data!r}")
    ptr, readonly = data
    size = int(np.prod(shape, dtype=np.int64))
    if ptr == 0 and size:
        _fail("null data pointer for a non-empty array")
    strides = iface.get("strides")
    if strides is None:
        strides = tuple(int(s) for s in np.empty(shape, dtype=np.uint8).strides)
        strides = tuple(s * np_dtype.itemsize for s in strides)
    elif not isinstance(strides, tuple) or len(strides) != len(shape) or not all(isinstance(s, int) for s in strides):
        _fail(f"strides must be None or a tuple of {len(shape)} ints, got {strides!r}")
    if iface.get("mask") is not None:
        _fail("masked arrays are not supported")
    stream = iface.get("stream")
    if stream is not None:
        if not isinstance(stream, int) or isinstance(stream, bool):
            _fail(f"stream must be None or an int, got {stream!r}")
        if stream == 0:
            _fail("stream 0 is ambiguous and disallowed by the protocol (use 1 for the legacy default stream)")
    return CudaArrayInfo(ptr, shape, strides, dtype, readonly, stream, version)
