"""`wp.array`: a typed, strided view of device memory (CPU: numpy-owned memory).

`wp.array(dtype=float)` without data or shape is a type annotation for kernel
arguments, as in Warp.
"""

from __future__ import annotations

import numpy as np

from . import types as _t
from .runtime.device import get_device


class array:
    def __init__(self, data=None, dtype=None, shape=None, strides=None, ndim=None, device=None,
                 requires_grad=False, copy=True, _view=None):
        if data is None and shape is None and _view is None:
            self._init_annotation(dtype, ndim)
            return
        self.device = get_device(device)
        if not self.device.is_cpu:
            raise ValueError(f"Device '{self.device}' is not supported for arrays yet")
        if _view is not None:
            view, dtype = _view
        elif data is None:
            wdt = _require_dtype(dtype if dtype is not None else _t.float32)
            view = np.zeros(_as_shape(shape), dtype=wdt._np_)
            dtype = wdt
        else:
            view, dtype = _from_data(data, dtype, shape, copy)
        self._init_view(view, dtype)
        self.requires_grad = requires_grad
        self.grad = None

    def _init_annotation(self, dtype, ndim):
        wdt = _require_dtype(dtype if dtype is not None else _t.float32)
        self.dtype = wdt
        self.ndim = 1 if ndim is None else ndim
        if not isinstance(self.ndim, int) or not 1 <= self.ndim <= 4:
            raise ValueError(f"array ndim must be 1..4, got {ndim!r}")
        self._np = None
        self.device = None

    def _init_view(self, view: np.ndarray, dtype):
        if not 1 <= view.ndim <= 4:
            raise ValueError(f"arrays have 1 to 4 dimensions, got shape {view.shape}")
        self._np = view
        self.dtype = dtype
        self.ndim = view.ndim

    @property
    def is_annotation(self) -> bool:
        return self._np is None

    # -- properties -------------------------------------------------------
    @property
    def shape(self):
        return self._np.shape

    @property
    def strides(self):
        return self._np.strides

    @property
    def size(self):
        return self._np.size

    @property
    def ptr(self):
        return self._np.ctypes.data

    @property
    def capacity(self):
        return self._np.nbytes

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        if self.is_annotation:
            return f"array(ndim={self.ndim}, dtype={_t.type_name(self.dtype)})"
        return f"array({self._np!r}, dtype={_t.type_name(self.dtype)}, device={self.device})"

    def __str__(self):
        return str(self.numpy()) if not self.is_annotation else repr(self)

    # -- interop --------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A zero-copy numpy view of a CPU array."""
        return self._np

    def list(self):
        return self._np.tolist()

    @property
    def __array_interface__(self):
        return self._np.__array_interface__

    def __array__(self, dtype=None, copy=None):
        if dtype is None:
            return self._np
        return self._np.astype(dtype)

    # -- mutation -------------------------------------------------------------
    def fill_(self, value):
        self._np[...] = value.value if isinstance(value, _t.scalar_base) else value

    def zero_(self):
        self._np[...] = 0

    def assign(self, src):
        self._np[...] = np.asarray(src)

    # -- views ----------------------------------------------------------------
    def __getitem__(self, key):
        v = self._np[key]
        if isinstance(v, np.ndarray) and v.ndim >= 1:
            return array(_view=(v, self.dtype), device=self.device)
        return v.item() if isinstance(v, np.generic) else v

    def __setitem__(self, key, value):
        self._np[key] = np.asarray(value.numpy() if isinstance(value, array) else value)

    def flatten(self):
        return self.reshape(-1)

    def reshape(self, shape):
        if not self._np.flags.c_contiguous:
            raise RuntimeError("reshape requires a contiguous array")
        return array(_view=(self._np.reshape(shape), self.dtype), device=self.device)

    def contiguous(self):
        return self if self._np.flags.c_contiguous else clone(self)

    def to(self, device):
        if get_device(device) == self.device:
            return self
        raise ValueError(f"Device '{device}' is not supported for arrays yet")


def _as_shape(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(shape)
    for s in shape:
        if not isinstance(s, (int, np.integer)) or s < 0:
            raise ValueError(f"Invalid array shape {shape}: dimensions must be non-negative integers")
    return tuple(int(s) for s in shape)


def _require_dtype(dtype):
    wdt = _t.canonical_type(dtype)
    if wdt is None:
        raise TypeError(f"Unsupported array dtype {dtype!r}")
    return wdt


def _from_data(data, dtype, shape, copy):
    src = data.numpy() if isinstance(data, array) else np.asarray(data)
    if dtype is None:
        try:
            wdt = _t.dtype_from_numpy(src.dtype)
        except TypeError:
            wdt = _t.float32 if src.dtype.kind == "f" else None
        if src.dtype == np.float64 and not isinstance(data, np.ndarray):
            wdt = _t.float32  # Python lists of floats default to float32, as in Warp
        if src.dtype == np.int64 and not isinstance(data, np.ndarray):
            wdt = _t.int32
        if wdt is None:
            raise TypeError(f"Unsupported numpy dtype {src.dtype}")
    else:
        wdt = _require_dtype(dtype)
    view = np.array(src, dtype=wdt._np_, copy=True) if copy else np.asarray(src, dtype=wdt._np_)
    if shape is not None:
        view = view.reshape(_as_shape(shape))
    if view.ndim == 0:
        view = view.reshape(1)
    return view, wdt


# ----------------------------------------------------------------------------
# constructors
def zeros(shape, dtype=float, device=None, requires_grad=False):
    return array(shape=shape, dtype=dtype, device=device, requires_grad=requires_grad)


def empty(shape, dtype=float, device=None, requires_grad=False):
    return zeros(shape, dtype, device, requires_grad)


def full(shape, value=0, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = type(value.value) if isinstance(value, _t.scalar_base) else type(value)
        dtype = _t.canonical_type(dtype) or _t.float32
    a = zeros(shape, dtype, device, requires_grad)
    a.fill_(value)
    return a


def ones(shape, dtype=float, device=None, requires_grad=False):
    return full(shape, 1, dtype, device, requires_grad)


def zeros_like(src, device=None, requires_grad=None):
    return zeros(src.shape, src.dtype, device or src.device,
                 src.requires_grad if requires_grad is None else requires_grad)


def empty_like(src, device=None, requires_grad=None):
    return zeros_like(src, device, requires_grad)


def full_like(src, value, device=None, requires_grad=None):
    a = zeros_like(src, device, requires_grad)
    a.fill_(value)
    return a


def ones_like(src, device=None, requires_grad=None):
    return full_like(src, 1, device, requires_grad)


def clone(src, device=None, requires_grad=None):
    return array(src.numpy(), dtype=src.dtype, device=device or src.device,
                 requires_grad=src.requires_grad if requires_grad is None else requires_grad)


def copy(dest, src, dest_offset=0, src_offset=0, count=0):
    """Copies `count` elements (all of `src` when 0) between flattened arrays."""
    s = src.numpy().reshape(-1)
    d = dest.numpy().reshape(-1)
    n = count or s.size - src_offset
    if src_offset + n > s.size or dest_offset + n > d.size:
        raise ValueError(f"copy of {n} elements is out of bounds (src size {s.size}, dest size {d.size})")
    d[dest_offset:dest_offset + n] = s[src_offset:src_offset + n]


def from_numpy(arr, dtype=None, shape=None, device=None, requires_grad=False):
    return array(arr, dtype=dtype, shape=shape, device=device, requires_grad=requires_grad)


def array1d(*args, **kwargs):
    return array(*args, ndim=1, **kwargs)


def array2d(*args, **kwargs):
    return array(*args, ndim=2, **kwargs)


def array3d(*args, **kwargs):
    return array(*args, ndim=3, **kwargs)


def array4d(*args, **kwargs):
    return array(*args, ndim=4, **kwargs)
