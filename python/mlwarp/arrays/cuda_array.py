"""`wp.array` on a CUDA device.

A CUDA array keeps its geometry the way a CPU array does, in `self._np`, a
numpy array, but one whose data address is the DEVICE address (numpy builds
it from an `__array_interface__` and never reads it). So shape, strides,
`ptr`, slicing, reshape, transpose and `view` are the CPU code unchanged,
and launch packing reads pointer/shape/strides from `_np` as on the CPU.
Everything that touches values (_host(), under numpy() and str; fill_, assign) is overridden
here to copy through the driver. The allocation lives at the end of the
view's `.base` chain: it is freed, stream-ordered, when the last view goes.
"""

from __future__ import annotations

import numpy as np

import importlib

from mlwarp.arrays import memory as _memory
from mlwarp.autodiff import recording as _recording
from mlwarp.core import types as _t
from mlwarp.arrays.array import array, clone
from mlwarp.runtime.cuda import driver as drv
from mlwarp.runtime.cuda import memory as mem
from mlwarp.runtime.cuda.devices import devices
from mlwarp.runtime.device import get_device

_a = importlib.import_module(f"{__package__}.array")  # the module (the package's `array` is the class)


def _inner_strides(wdt) -> tuple:
    shape = _a._element_shape(wdt)
    return np.empty(shape, dtype=_a._element_numpy(wdt)).strides if shape else ()


def device_view(ptr: int, shape: tuple, strides, wdt, owner) -> np.ndarray:
    """The numpy geometry view of device memory at `ptr` (strides in bytes, C order when None)."""
    np_dt = _a._element_numpy(wdt)
    full = tuple(shape) + _a._element_shape(wdt)
    if int(np.prod(full, dtype=np.int64)) == 0:
        return np.empty(full, dtype=np_dt)
    strides = None if strides is None else tuple(int(s) for s in strides) + _inner_strides(wdt)
    return mem.device_array(ptr, full, strides, np_dt, owner)


def allocate(device, shape: tuple, wdt, zero: bool = True) -> np.ndarray:
    np_dt = _a._element_numpy(wdt)
    full = tuple(shape) + _a._element_shape(wdt)
    nbytes = int(np.prod(full, dtype=np.int64)) * np_dt.itemsize
    alloc = mem.Allocation(device, nbytes)
    if zero:
        mem.memset8(device, alloc.ptr, 0, nbytes)
    if _memory.tracker.enabled or _memory.config.track_memory:  # wp.ScopedMemoryTracker (python/mlwarp/arrays/memory.py)
        _memory.track(alloc, nbytes, device, shape, wdt)
    return device_view(alloc.ptr, shape, None, wdt, alloc)


def allocate_like(view: np.ndarray, device) -> np.ndarray:
    """Zeroed device memory with the shape and numpy dtype of a storage view (e.g. an adjoint array)."""
    alloc = mem.Allocation(device, view.size * view.itemsize)
    mem.memset8(device, alloc.ptr, 0, alloc.nbytes)
    if view.size == 0:
        return np.empty(view.shape, dtype=view.dtype)
    return mem.device_array(alloc.ptr, view.shape, None, view.dtype, alloc)


def _foreign_interface(data):
    iface = getattr(data, "__cuda_array_interface__", None)
    return iface if isinstance(iface, dict) else None


class CudaArray(array):
    def __init__(self, data=None, dtype=None, shape=None, strides=None, ptr=None, capacity=None, device=None,
                 copy=True, deleter=None, ndim=None, grad=None, requires_grad=False, owner=None, _view=None):
        self.device = get_device(device)
        if _view is not None:
            view, wdt = _view
        elif ptr is not None:  # device memory owned elsewhere (torch, CuPy, another allocator)
            wdt = _a._require_dtype(dtype)
            keep = _Deleter(ptr, deleter, owner) if deleter is not None else owner
            view = device_view(int(ptr), _a._as_shape(shape), strides, wdt, keep)
        elif data is None:
            wdt = _a._require_dtype(dtype if dtype is not None else _t.float32)
            view = allocate(self.device, _a._as_shape(shape), wdt)
        else:
            view, wdt = self._from_data(data, dtype, shape)
            _a.keep_instances(self, data, wdt)  # structs' arrays: their descriptors are in the data
        self._init_view(view, wdt)
        # (ndim only shapes annotations: Warp ignores it beside data or a shape)
        self._init_grad(grad, requires_grad)

    def _from_data(self, data, dtype, shape):
        source = data if isinstance(data, CudaArray) else None
        iface = _foreign_interface(data) if source is None else None
        if iface is not None:  # a CuPy array, a torch CUDA tensor, ...: copied device to device
            source = from_cuda_array_interface(data, self.device, dtype=dtype)
        if source is not None:
            wdt = _a._require_dtype(dtype) if dtype is not None else source.dtype
            if _a._element_numpy(wdt) != source._np.dtype:
                host, wdt = _a._from_data(source._values(), wdt, shape, True)  # a conversion: through the host
                return self._upload(host, wdt), wdt
            view = allocate(self.device, source.shape, wdt, zero=False)
            out = CudaArray(_view=(view, wdt), device=self.device)
            copy_arrays(out, source)
            return (view.reshape(_a._as_shape(shape) + _a._element_shape(wdt)) if shape is not None else view), wdt
        host, wdt = _a._from_data(data, dtype, shape, False)
        return self._upload(host, wdt), wdt

    def _upload(self, host: np.ndarray, wdt) -> np.ndarray:
        host = np.ascontiguousarray(host)
        ndim = host.ndim - len(_a._element_shape(wdt))
        view = allocate(self.device, host.shape[:ndim], wdt, zero=False)
        mem.copy_host_to_device(self.device, view.ctypes.data, host.ctypes.data, host.nbytes)
        return view

    # -- values: through the driver -------------------------------------------
    def _span(self):
        """(lowest byte offset from ptr, bytes spanned) of the elements, for strided copies."""
        lo = sum((n - 1) * s for n, s in zip(self._np.shape, self._np.strides) if s < 0 and n)
        return lo, self.capacity

    def _host(self) -> np.ndarray:
        """A host copy, as stored; waits for the work queued on the device's stream (Warp's .numpy() on CUDA,
        which array.numpy() shows as the CPU's: bfloat16 as ml_dtypes values)."""
        host = np.empty(self._np.shape, dtype=self._np.dtype)
        if host.size:
            if self.is_contiguous:
                mem.copy_device_to_host(self.device, host.ctypes.data, self.ptr, host.nbytes)
            else:
                lo, span = self._span()
                staging = np.empty(span, dtype=np.uint8)
                mem.copy_device_to_host(self.device, staging.ctypes.data, self.ptr + lo, span)
                self.device.stream.synchronize()
                host[...] = np.lib.stride_tricks.as_strided(
                    staging[-lo:].view(self._np.dtype) if lo else staging.view(self._np.dtype),
                    self._np.shape, self._np.strides)
        self.device.stream.synchronize()
        return host

    @property
    def __array_interface__(self):
        raise AttributeError("a CUDA array has no host memory; numpy copies it through __array__")

    def __array__(self, dtype=None, copy=None):
        host = self._host()
        return host if dtype is None else host.astype(dtype)

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": tuple(self._np.shape), "typestr": self._np.dtype.str, "descr": [("", self._np.dtype.str)],
                "data": (self.ptr, False), "strides": None if self.is_contiguous else tuple(self._np.strides),
                "stream": int(self.device.stream.cuda_stream) or None, "version": 3}

    def _write_host(self, values: np.ndarray) -> None:
        values = np.ascontiguousarray(np.broadcast_to(values, self._np.shape), dtype=self._np.dtype)
        if not values.size:
            return
        if self.is_contiguous:
            mem.copy_host_to_device(self.device, self.ptr, values.ctypes.data, values.nbytes)
            return
        lo, span = self._span()  # read-modify-write of the spanned bytes, in stream order
        staging = np.empty(span, dtype=np.uint8)
        mem.copy_device_to_host(self.device, staging.ctypes.data, self.ptr + lo, span)
        self.device.stream.synchronize()
        base = staging[-lo:] if lo else staging
        np.lib.stride_tricks.as_strided(base.view(self._np.dtype), self._np.shape, self._np.strides)[...] = values
        mem.copy_host_to_device(self.device, self.ptr + lo, staging.ctypes.data, span)

    def fill_(self, value):
        host = _a.fill_values(value, self.dtype, self._np.dtype)
        _a.keep_instances(self, value, self.dtype)
        if _recording._active:  # a recording tape saves what a recorded launch read (python/mlwarp/autodiff/overwrites.py)
            _recording.before_write(self)
        if self.is_contiguous and not host.any() and host.size <= 1:
            mem.memset8(self.device, self.ptr, 0, self.capacity)
            return
        self._write_host(host)

    def zero_(self):
        self.fill_(0)

    def assign(self, src):
        if isinstance(src, array) and not isinstance(src, CudaArray) or not isinstance(src, array):
            values = _a.assign_values(src, self.dtype, self._np.dtype)
            if values.size != self._np.size:
                raise RuntimeError(f"Cannot assign {values.size} values to an array of {self._np.size} elements "
                                   f"(shape {self.shape})")
            if _recording._active:
                _recording.before_write(self)
            self._write_host(values.reshape(self._np.shape))
            return
        copy_arrays(self, src)

    def to(self, device, requires_grad=None):
        """This array if it is on `device`, else a copy there (wp.clone: requires_grad None keeps this array's)."""
        if get_device(device) == self.device:
            return self
        return clone(self, device=device, requires_grad=requires_grad)

    def contiguous(self):
        if self.is_contiguous:
            return self
        out = CudaArray(shape=self.shape, dtype=self.dtype, device=self.device)
        copy_arrays(out, self)
        return out

    def __dlpack__(self, *args, **kwargs):
        raise RuntimeError("DLPack export of CUDA arrays is not supported yet; use __cuda_array_interface__")


class _Deleter:
    def __init__(self, ptr, deleter, owner):
        self.ptr, self.deleter, self.owner = int(ptr), deleter, owner

    def __del__(self):
        self.deleter(self.ptr, 0)


def from_cuda_array_interface(obj, device=None, dtype=None) -> CudaArray:
    """A CudaArray viewing the memory of `obj` (CuPy, torch CUDA tensors, ...), which it keeps alive."""
    iface = obj.__cuda_array_interface__
    np_dt = np.dtype(iface["typestr"])
    wdt = _a._require_dtype(dtype) if dtype is not None else _t.dtype_from_numpy(np_dt)
    inner = _a._element_shape(wdt)
    shape = tuple(iface["shape"])
    outer = shape[:len(shape) - len(inner)] if inner else shape
    strides = iface.get("strides")
    if strides is not None:
        strides = tuple(strides)[:len(outer)]
    device = get_device(device) if device is not None else _device_of_pointer(iface["data"][0])
    return CudaArray(ptr=iface["data"][0] or 0, dtype=wdt, shape=outer, strides=strides, device=device, owner=obj)


def _device_of_pointer(ptr: int):
    if not ptr:
        return get_device("cuda")
    d = drv.driver()
    ordinal = drv.call("cuPointerGetAttribute", d.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr)
    return devices()[int(ordinal)]


# -- copies --------------------------------------------------------------------
def _is_cuda(a) -> bool:
    return isinstance(a, CudaArray)


def copy_arrays(dest, src, dest_offset: int = 0, src_offset: int = 0, count: int = 0, stream=None) -> None:
    """wp.copy when either side is on a CUDA device: H2D, D2H or D2D (also between GPUs), async on `stream`
    (default: the stream of the device the copy runs on). Whole arrays of one shape, or `count` elements
    between flattened contiguous arrays, with offsets in elements."""
    itemsize = dest._np.itemsize * int(np.prod(_a._element_shape(dest.dtype), dtype=np.int64))
    if _t.type_size_in_bytes(dest.dtype) != _t.type_size_in_bytes(src.dtype):  # (one size: the bytes are copied,
        raise RuntimeError(_a.dtype_mismatch(dest, src))  # as Warp's memcpy and the CPU's copy)
    whole = not (dest_offset or src_offset or count)
    if whole and dest.shape == src.shape and not (dest.is_contiguous and src.is_contiguous):
        values = src._host()
        if values.dtype != dest._np.dtype or values.shape != dest._np.shape:  # another dtype of the same size
            values = np.ascontiguousarray(values).view(np.uint8).reshape(-1).view(dest._np.dtype).reshape(
                dest._np.shape)
        if _is_cuda(dest):
            dest._write_host(values)  # strided: through the host, in order
        else:
            dest._host()[...] = values
        return
    if not (dest.is_contiguous and src.is_contiguous):
        raise RuntimeError("wp.copy with offsets or a count needs contiguous arrays")
    n_src, n_dest = src.size, dest.size
    n = count or n_src - src_offset
    if whole and dest.shape != src.shape and n_src != n_dest:
        raise RuntimeError(f"wp.copy: shapes {src.shape} and {dest.shape} differ; pass count= to copy a part")
    if min(n, dest_offset, src_offset) < 0:
        raise RuntimeError(f"wp.copy of {n} elements from offset {src_offset} to offset {dest_offset}: counts and "
                           f"offsets cannot be negative")
    _a.check_contiguous_copy(dest, src, dest_offset, src_offset, n)  # (Warp's messages, as on the CPU)
    nbytes = n * itemsize
    dst_ptr = dest.ptr + dest_offset * itemsize
    src_ptr = src.ptr + src_offset * itemsize
    if _is_cuda(dest) and _is_cuda(src):
        mem.copy_device_to_device(dest.device, dst_ptr, src_ptr, nbytes, stream)
    elif _is_cuda(dest):
        mem.copy_host_to_device(dest.device, dst_ptr, src_ptr, nbytes, stream)
    else:
        mem.copy_device_to_host(src.device, dst_ptr, src_ptr, nbytes, stream)
        (stream or src.device.stream).synchronize()  # the host memory is readable when wp.copy returns


_a.register_cuda(CudaArray, copy_arrays)  # wp.array(..., device="cuda") builds a CudaArray; wp.copy copies here
