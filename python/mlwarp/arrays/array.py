"""`wp.array`: a typed, strided view of device memory.

On the CPU an array's storage is a numpy view (`self._np`), so `.numpy()`,
`__array_interface__` and slicing are zero-copy and a view keeps its base
alive through numpy's `.base` chain. Memory owned by someone else (a torch
tensor, a DLPack capsule, a raw pointer) is wrapped the same way, with the
owner kept alive by the wrapper that the numpy view holds on to.

`wp.array(dtype=float, ndim=2)` without data, shape or pointer is a type
annotation for kernel arguments, as in Warp.
"""

from __future__ import annotations

import ctypes
import operator
import typing
from functools import partial
from typing import Any

import numpy as np

from mlwarp.arrays import access as _access
from mlwarp.arrays import memory as _memory
from mlwarp.autodiff import recording as _recording
from mlwarp.core import types as _t
from mlwarp.core.vector import matrix, vector
from mlwarp.config import config
from mlwarp.core.generics import is_generic
from mlwarp.kernels.subscript_annotations import ArrayAnnotation, ndim_parameter
from mlwarp.runtime import capture as _capture
from mlwarp.runtime import dlpack as _dlpack
from mlwarp.runtime.abi import filled_descriptor
from mlwarp.runtime.device import get_device
from mlwarp.runtime.host_memory import wrap_pointer as _wrap_pointer
from mlwarp.arrays.copy_windows import adjoint_copy, check_contiguous_copy, copy_bytes, copy_windows, dtype_mismatch  # noqa: F401,E501
from mlwarp.arrays.array_data import (  # noqa: F401  (the storage helpers wp.array, cuda_array.py and indexed.py use)
    _aligned_zeros, _as_shape, _contiguous_strides, _element_numpy, _element_shape, _from_data, _require_dtype,
    assign_values, fill_values, keep_instances, shown_numpy, view_layout,
)

_ITEM_INDEXING = "Item indexing is not supported on wp.array objects"

# Arrays on CUDA devices: CudaArray (python/mlwarp/arrays/cuda_array.py) subclasses `array`, so this module cannot import it.
# Its module registers the class and its copy (H2D, D2H, D2D) here when imported; the API (python/mlwarp/_api.py)
# imports it. A CUDA array exists only once its class does, so wp.copy always finds its copy.
_cuda_class = None
_cuda_copy = None


def register_cuda(cls, copy_arrays) -> None:
    """Called by python/mlwarp/arrays/cuda_array.py: `cls` is what wp.array(...) builds for data on a CUDA device, and
    `copy_arrays(dest, src, dest_offset, src_offset, count, stream)` is wp.copy when either side is there."""
    global _cuda_class, _cuda_copy
    _cuda_class, _cuda_copy = cls, copy_arrays


def _class_for(args, kwargs) -> type:
    """The class `wp.array(*args, **kwargs)` constructs: the CUDA one for data on a CUDA device."""
    names = ("data", "dtype", "shape", "strides", "ptr", "capacity", "device")
    given = dict(zip(names, args), **kwargs)
    if all(given.get(k) is None for k in ("data", "shape", "ptr", "_view")):
        return array  # a type annotation
    try:
        device = get_device(given.get("device"))
    except ValueError:
        return array  # array.__init__ raises the same error
    return _cuda_class if device.is_cuda else array


class array:
    _wp_array_ = True  # what mlwarp.core.types.is_array recognises (the bottom layer cannot import this class)
    # wp.config.verify_autograd_array_access (python/mlwarp/arrays/access.py): read by a launch a Tape recorded; the array
    # this one is a view of (reads through a view mark it too)
    _is_read = False
    _ref = None
    _held = None  # struct instances whose arrays this array's elements point into (array_data.held_instances)
    _retain_grad = False  # see the retain_grad property
    _capacity = None  # given with ptr= (Warp's capacity argument)

    def __class_getitem__(cls, params):
        """`wp.array[dtype]` and `wp.array[dtype, ndim]` (ndim an int, `typing.Literal[n]` or `Any`): Warp 1.19's
        subscript spelling of an array annotation (subscript_annotations.py)."""
        if not isinstance(params, tuple):
            return ArrayAnnotation(params, 1)
        if len(params) != 2:
            raise TypeError(f"wp.array expects 1 or 2 type parameters, got {len(params)}")
        return ArrayAnnotation(params[0], ndim_parameter(params[1]))

    def __new__(cls, *args, **kwargs):
        if cls is array and (args or kwargs) and _cuda_class is not None:  # CUDA data: CudaArray (see above)
            cls = _class_for(args, kwargs)
        return object.__new__(cls)

    def __init__(self, data=None, dtype=None, shape=None, strides=None, ptr=None, capacity=None, device=None,
                 copy=True, deleter=None, ndim=None, grad=None, requires_grad=False, pinned=False, owner=None,
                 _view=None, retain_grad=False):
        if data is None and shape is None and ptr is None and _view is None:
            self._init_annotation(dtype, ndim)
            return
        if dtype is Any and data is not None:  # Warp's default: the data's type
            dtype = None
        self.device = get_device(device)
        if not self.device.is_cpu:
            raise ValueError(f"Device '{self.device}' is not supported for arrays yet")
        if _view is not None:
            view, wdt = _view
        elif ptr is not None:
            wdt = _require_dtype(dtype)
            view = _wrap_pointer(ptr, _as_shape(shape), strides, wdt, owner=owner, deleter=deleter)
            if capacity is not None:  # memory the caller says is there past the elements (a view's storage)
                self._capacity = int(capacity)
        elif data is None:
            wdt = _require_dtype(dtype if dtype is not None else _t.float32)
            view = _aligned_zeros(_as_shape(shape) + _element_shape(wdt), _element_numpy(wdt))
            if _memory.tracker.enabled or _memory.config.track_memory:  # wp.ScopedMemoryTracker (python/mlwarp/arrays/memory.py)
                _memory.track(view.base if view.base is not None else view, view.nbytes, self.device, shape, wdt)
        else:
            view, wdt = _from_data(data, dtype, shape, copy)
            if not copy and isinstance(data, np.ndarray) and np.shares_memory(view, data):
                self._ref = data  # an alias of numpy data keeps it (Warp's _ref)
            keep_instances(self, data, wdt)  # structs' arrays: their descriptors are in the data
        self._init_view(view, wdt)
        self.deleter = deleter  # Warp's attribute: what frees memory given by ptr= (None: not this array's)
        # (ndim only shapes annotations: Warp ignores it beside data or a shape, wp.array2d(1-d data) included)
        self._init_grad(grad, requires_grad)
        if retain_grad:
            self.retain_grad = True

    def _init_annotation(self, dtype, ndim):
        # `Any` dtype or ndim: a generic parameter (core/generics.py); a texture class stays itself, as in
        # `wp.array[wp.Texture2D]` (kernels read its struct through it)
        if is_generic(dtype) or getattr(dtype, "_wp_array_element_", None) is not None:
            self.dtype = dtype
        else:
            self.dtype = _require_dtype(dtype if dtype is not None else _t.float32)
        self.ndim = 1 if ndim is None else ndim
        if self.ndim is not Any and (not isinstance(self.ndim, int) or not 1 <= self.ndim <= 4):
            raise ValueError(f"array ndim must be 1..4, got {ndim!r}")
        self._np = None
        self.device = None
        self._requires_grad = False
        self._grad = None

    def _init_view(self, view: np.ndarray, dtype):
        ndim = view.ndim - len(_element_shape(dtype))
        if not 1 <= ndim <= 4:
            raise RuntimeError(f"Failed to create array with shape {view.shape[:ndim]}, the maximum number of "
                               f"dimensions is 4" if ndim > 4 else "arrays need at least one dimension")
        self._np = view
        self.dtype = dtype
        self.ndim = ndim

    def _init_grad(self, grad, requires_grad):
        self._grad, self._requires_grad = None, False
        if grad is not None:
            self.grad = grad  # checks it, and sets requires_grad
        else:
            self.requires_grad = requires_grad

    @property
    def vars(self) -> dict:
        """The members a kernel reads of this array (Warp's: `shape`, the data pointer `ptr`)."""
        return dict(ArrayAnnotation(self.dtype, self.ndim).vars)

    # As in Warp, `grad` and `requires_grad` agree: an array has a gradient array exactly when it requires one.
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value) -> None:
        """True allocates a zero-filled `grad` (same shape, dtype, device) unless one exists; False drops it."""
        value = bool(value)
        if value and self._grad is None:
            self._grad = zeros(self.shape, self.dtype, self.device)
        elif not value:
            self._grad = None
            self._retain_grad = False
        self._requires_grad = value

    @property
    def retain_grad(self) -> bool:
        """Warp 1.19's: whether Tape.backward keeps this array's gradient. By default the adjoint of a store
        `y[i] = v` reads y.grad[i] and then clears it (only the last write of an element gets its gradient), as
        does the adjoint of a wp.copy into the array; with retain_grad the gradient of an intermediate or output
        array stays for inspection (right only when each element is written once)."""
        return self._retain_grad

    @retain_grad.setter
    def retain_grad(self, value) -> None:
        if value and not self._requires_grad:
            raise ValueError("retain_grad=True requires requires_grad=True")
        self._retain_grad = bool(value)

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, grad) -> None:
        """An array of the same dtype, shape and device (then requires_grad is True), or None (then False)."""
        if grad is None:
            self._grad, self._requires_grad = None, False
            return
        if not isinstance(grad, array) or grad.is_annotation:
            raise ValueError(f"The given gradient array is incompatible: expected a wp.array, got "
                             f"{type(grad).__name__}")
        if grad.dtype is not self.dtype:
            raise ValueError(f"The given gradient array is incompatible: expected dtype "
                             f"{_t.type_name(self.dtype)}, got {_t.type_name(grad.dtype)}")
        if grad.shape != self.shape:
            raise ValueError(f"The given gradient array is incompatible: expected shape {self.shape}, got "
                             f"{grad.shape}")
        if grad.device != self.device:
            raise ValueError(f"The given gradient array is incompatible: expected device {self.device}, got "
                             f"{grad.device}")
        self._grad, self._requires_grad = grad, True

    @property
    def is_annotation(self) -> bool:
        return self._np is None

    # -- properties -------------------------------------------------------
    @property
    def shape(self) -> tuple:
        if self._np is None:  # an annotation: Warp's (0,) * ndim, or what was assigned to it
            return getattr(self, "_annotation_shape", None) or (0,) * (self.ndim if isinstance(self.ndim, int) else 1)
        return self._np.shape[:self.ndim]

    @shape.setter
    def shape(self, value) -> None:
        """Warp's `shape` is a plain attribute; code that annotates arrays sets it on an annotation
        (``a = wp.array(ndim=2, dtype=float); a.shape = ("n", "*")``) as metadata. An array with data keeps
        the shape of its memory."""
        if self._np is not None:
            raise AttributeError("the shape of an array with data can't be assigned (use reshape or view)")
        self._annotation_shape = tuple(value)

    @property
    def strides(self) -> tuple:
        """Byte strides of the array dimensions (vector/matrix element dimensions excluded)."""
        return self._np.strides[:self.ndim]

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def ptr(self) -> int | None:
        """The address of the first element; None for an empty CPU array, as Warp's (nothing is allocated)."""
        if self.size == 0 and self.device.is_cpu:
            return None
        return self._np.ctypes.data

    def __ctype__(self):
        """The array's C descriptor (data pointer, shape, byte strides), as Warp's `array.__ctype__()`: what
        `wp.launch` and `Launch.set_param_at_index_from_ctype` take in place of the array. It points into this
        array, which must stay alive while the descriptor is used."""
        return filled_descriptor(self.ptr or 0, tuple(self.shape), tuple(self.strides))

    @property
    def capacity(self) -> int:
        """Bytes spanned by the array in memory (its size for contiguous arrays), or what `capacity=` said the
        memory at `ptr=` holds."""
        if self._capacity is not None:
            return self._capacity
        if self.size == 0:
            return 0
        item = self._np.itemsize * int(np.prod(_element_shape(self.dtype), dtype=np.int64))
        return item + sum((n - 1) * abs(s) for n, s in zip(self.shape, self.strides))

    @property
    def is_contiguous(self) -> bool:
        return self._np.flags.c_contiguous

    def cptr(self):
        """A ctypes pointer to the elements of a contiguous CPU array (struct values, or the scalars of vectors
        and matrices; float16 and bfloat16 as their uint16 bits), keeping the array alive; None for an empty
        one. As Warp's: not bounds checked."""
        if not self.ptr:
            return None
        if not self.device.is_cpu or not self.is_contiguous:
            raise RuntimeError("Accessing array memory through a ctypes ptr is only supported for contiguous CPU "
                               "arrays.")
        ctype = self.dtype._ctype_ if _t.is_struct(self.dtype) else _t.scalar_type_of(self.dtype)._ctype_
        p = ctypes.cast(self.ptr, ctypes.POINTER(ctype))
        p._ref = self
        return p

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        if self.is_annotation:
            return f"array(ndim={self.ndim}, dtype={_t.type_name(self.dtype)})"
        return f"array(shape={self.shape}, dtype={_t.type_name(self.dtype)}, device={self.device})"

    def __str__(self):
        return repr(self) if self.is_annotation else str(self.numpy())  # bfloat16 as values, as Warp's

    # -- numpy interop (CPU) --------------------------------------------------
    def numpy(self, *, _suppress_bfloat16_warning=False) -> np.ndarray:
        """A zero-copy numpy view of a CPU array (strided views stay strided). bfloat16 elements, which numpy
        lacks, are ml_dtypes.bfloat16 values when that package is installed, as in Warp; else their uint16
        bit patterns, with Warp's warning (once; never with _suppress_bfloat16_warning)."""
        return shown_numpy(self._host(), self.dtype, warn=not _suppress_bfloat16_warning)

    # mlwarp allocates no pinned (page-locked) host memory: pinned=True gives ordinary host memory, so no
    # array is pinned (memory_kind HOST)
    pinned = False

    @property
    def __cuda_array_interface__(self):
        """Only CUDA arrays have one (CudaArray); an AttributeError, as Warp's, so that hasattr() is False."""
        raise AttributeError(f"__cuda_array_interface__ is not supported because device is {self.device}")

    def _host(self) -> np.ndarray:
        """The elements as stored (bfloat16 as uint16 bits): a CPU array's own memory; a CUDA array's host copy.
        What mlwarp itself reads and writes, where .numpy()'s bfloat16 values would be converted as numbers."""
        return self._np

    def _values(self) -> np.ndarray:
        """.numpy() without the warning: for conversions to other dtypes, where bfloat16 values are wanted."""
        return _t.bfloat16_shown(self._host(), self.dtype)

    def list(self):
        """The elements, flattened, as Python values, as Warp's: Python numbers (bfloat16 as wp.bfloat16), Warp
        vectors and matrices, and struct instances (array fields as arrays over the memory they point to)."""
        values = self._host()  # a CUDA array's: a host copy
        if _t.is_struct(self.dtype):
            return [_element_value(self.dtype, v) for v in values.reshape(-1)]
        if _t.is_composite(self.dtype):
            return [_element_value(self.dtype, v) for v in values.reshape((-1,) + _element_shape(self.dtype))]
        if self.dtype is _t.bfloat16:
            return [_t.bfloat16(x) for x in _t.bf16_bits_to_float(values.reshape(-1)).tolist()]
        return values.reshape(-1).tolist()

    @property
    def __array_interface__(self):
        interface = self._np.__array_interface__
        if self._np.size == 0:  # Warp's strides of an empty array (numpy would recompute its own from the shape)
            interface = dict(interface, strides=self._np.strides)
        return interface

    def __array__(self, dtype=None, copy=None):
        if dtype is None or np.dtype(dtype) == self._np.dtype:
            return self._np.copy() if copy else self._np
        if copy is False:
            raise ValueError(f"cannot view a {self._np.dtype} array as {np.dtype(dtype)} without a copy")
        return self._np.astype(dtype)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule sharing this array's memory (runtime/dlpack.py), or a copy's (`copy=True`):
        a versioned one when the consumer accepts DLPack 1.x."""
        if self.device.is_cpu and stream is not None and stream != -1:  # (the consumer's stream: CUDA only)
            raise TypeError("DLPack stream must be None or -1 for CPU device")
        _dlpack.check_export_device(self, dl_device)
        versioned = max_version is not None and max_version[0] >= 1
        return _dlpack.to_dlpack(clone(self) if copy else self, versioned=versioned)

    def __dlpack_device__(self):
        return _dlpack.device_to_dlpack(self.device)

    # -- mutation -------------------------------------------------------------
    def fill_(self, value):
        """Sets every element to `value` (a number, or a sequence for vector/matrix dtypes)."""
        values = fill_values(value, self.dtype, self._np.dtype)  # a graph capture keeps the value as it is now
        keep_instances(self, value, self.dtype)
        if _recording._active:  # a recording tape saves what a recorded launch read (python/mlwarp/autodiff/overwrites.py)
            _recording.before_write(self)
        if _capture.active is not None and _capture.recording_on(self.device):
            _capture.record(partial(self._np.__setitem__, Ellipsis, np.array(values)))  # not a view of the caller's
        else:
            self._np[...] = values
        self._is_read = False

    def zero_(self):
        if _recording._active:
            _recording.before_write(self)
        if _capture.active is not None and _capture.recording_on(self.device):
            _capture.record(partial(self._np.__setitem__, Ellipsis, 0))
        else:
            self._np[...] = 0
        self._is_read = False

    # -- wp.config.verify_autograd_array_access (python/mlwarp/arrays/access.py) ---------------------------------
    def mark_init(self):
        """Clears this array's read mark."""
        self._is_read = False

    def mark_read(self):
        """Marks this array, and the arrays it is a view of, as read by a recorded launch."""
        _access.mark_read(self)

    def mark_write(self, **where):
        """Warns if this array, about to be written, was read by a recorded launch (`where`: arg_name,
        kernel_name, filename, lineno, or operation, filename, lineno, for the message)."""
        _access.mark_write(self, **where)

    def assign(self, src):
        """Copies `src` (an array, numpy array or nested list of the same size) into this array; an array of
        the same shape through wp.copy, so that a recording Tape sees it, as in Warp."""
        if isinstance(src, array) and not src.is_annotation and src.shape == self.shape:
            return copy(self, src)
        values = assign_values(src, self.dtype, self._np.dtype)
        if values.size != self._np.size:
            raise RuntimeError(f"Cannot assign {values.size} values to an array of {self._np.size} elements "
                               f"(shape {self.shape})")
        values = values.reshape(self._np.shape)
        if _recording._active:
            _recording.before_write(self)
        if _capture.active is not None and _capture.recording_on(self.device):  # the values as they are now
            _capture.record(partial(self._np.__setitem__, Ellipsis, values.copy()))
        else:
            self._np[...] = values

    # -- views ----------------------------------------------------------------
    # a[I] with int32 index arrays makes a wp.indexedarray: set by python/mlwarp/arrays/indexed.py (which imports this module)
    _index_view = None

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        if self._index_view is not None and any(isinstance(k, array) for k in key):
            return self._index_view(key)
        for k in key:
            if k is Ellipsis or k is None or not isinstance(k, (int, np.integer, slice)) or isinstance(k, bool):
                raise RuntimeError(f"Invalid index: {k!r}")
        if len(key) > self.ndim:
            raise IndexError(f"too many indices for an array with {self.ndim} dimension(s): {len(key)}")
        if sum(not isinstance(k, slice) for k in key) == self.ndim:
            raise RuntimeError(_ITEM_INDEXING)
        return self._derived(lambda v: v[key])

    def _derived(self, view_of) -> "array":
        """The view `view_of(numpy storage)` of this array; a gradient array gets the same view."""
        out = array(_view=(view_of(self._np), self.dtype), device=self.device)
        out._ref = self
        if isinstance(self.grad, array):
            out.grad = self.grad._derived(view_of)
        return out

    def reshape(self, shape):
        """A view of a contiguous array with another shape (one dimension may be -1: inferred), with Warp's
        messages."""
        if not self.is_contiguous:
            raise RuntimeError("Reshaping non-contiguous arrays is unsupported.")
        if shape is None:
            raise RuntimeError("shape parameter is required.")
        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
        if len(shape) > 4:
            raise RuntimeError(f"Arrays may only have 4 dimensions maximum, trying to create array with "
                               f"{len(shape)} dims.")
        if shape.count(-1) > 1:
            raise RuntimeError("Cannot infer shape if more than one index is -1.")
        if -1 in shape:
            known = int(np.prod([n for n in shape if n != -1], dtype=np.int64))
            shape = tuple((self.size // known if known else 0) if n == -1 else n for n in shape)
        size = int(np.prod(shape, dtype=np.int64))
        if size != self.size or min(shape, default=0) < 0:
            raise RuntimeError(f"cannot reshape array of shape {self.shape} (size {self.size}) into shape {shape} "
                               f"(size {size})")
        out = self._derived(lambda v: v.reshape(shape + _element_shape(self.dtype)))
        out._is_read = self._is_read
        return out

    def flatten(self):
        return self.reshape(-1)

    def transpose(self, axes=None):
        axes = tuple(reversed(range(self.ndim))) if axes is None else tuple(axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"transpose axes {axes} are not a permutation of the {self.ndim} array dimensions")
        out = self._derived(lambda v: v.transpose(axes + tuple(range(self.ndim, v.ndim))))
        out.is_transposed = not self.is_transposed  # (Warp's flag)
        return out

    is_transposed = False  # Warp's: whether transpose() made this array (each transpose flips it)

    @property
    def memory_kind(self):
        """Warp's MemoryKind of the array's memory: HOST for CPU arrays (mlwarp allocates no pinned memory); on
        CUDA, CUDA_MEMPOOL or CUDA_DEVICE by how mlwarp allocated it, a custom allocator's memory_kind, or
        UNKNOWN for memory mlwarp did not allocate."""
        if self.device.is_cpu:
            return _memory.MemoryKind.HOST
        base = self._np
        while base is not None and not hasattr(base, "owner"):
            base = getattr(base, "base", None)
        alloc = getattr(base, "owner", None)
        if type(alloc).__name__ != "Allocation":
            return _memory.MemoryKind.UNKNOWN
        if alloc._custom is not None:
            return getattr(alloc._custom, "memory_kind", _memory.MemoryKind.UNKNOWN)
        return _memory.MemoryKind.CUDA_MEMPOOL if alloc._pooled else _memory.MemoryKind.CUDA_DEVICE

    def ipc_handle(self) -> bytes:
        """Warp's CUDA IPC handle of the array's memory."""
        if self.device is None or not self.device.is_cuda:
            raise RuntimeError("IPC requires a CUDA device")
        raise NotImplementedError("array.ipc_handle(): mlwarp's CUDA runtime has no CUDA IPC path "
                                  "(cuIpcGetMemHandle)")

    def view(self, dtype):
        """This array's memory read as elements of `dtype`, by Warp's rules: a dtype of the same size keeps the
        shape and strides; a vector/matrix array viewed as its scalar type gains the element's dimensions; a
        scalar array whose last dimensions are one element's (contiguous) viewed as vectors/matrices loses them
        (a single element: shape (1,)). The gradient array, if any, gets the same view."""
        wdt = _require_dtype(dtype)
        shape, strides = view_layout(self, wdt)
        out = array(_view=(_wrap_pointer(self._np.ctypes.data, shape, strides, wdt, owner=self._np), wdt),
                    device=self.device)
        out._ref = self
        out._is_read = self._is_read
        if isinstance(self.grad, array):
            out.grad = self.grad.view(wdt)
        return out

    def contiguous(self):
        return self if self.is_contiguous else clone(self)

    def to(self, device, requires_grad=None):
        """This array if it is on `device`, else a copy there (wp.clone: requires_grad None keeps this array's)."""
        if get_device(device) == self.device:
            return self
        return clone(self, device=device, requires_grad=requires_grad)


def _element_value(wdt, v):
    """One element of a numpy view as its Warp value: a struct instance, a vector or matrix, else a Python
    number (bfloat16 elements are bit patterns in the view)."""
    from_record = getattr(wdt, "_wp_from_record_", None)  # an internal struct standing for an array kind
    if from_record is not None:
        return from_record(v)
    if _t.is_struct(wdt):
        inst = wdt()
        for name, field in wdt._wp_fields_:
            setattr(inst, name, _array_field(field, v[name]) if _t.is_array(field) else _element_value(field, v[name]))
        return inst
    if _t.scalar_type_of(wdt) is _t.bfloat16:
        v = _t.bf16_bits_to_float(v)
    if _t.is_composite(wdt):
        return wdt(*np.asarray(v).reshape(-1).tolist())
    return v.item() if isinstance(v, np.generic) else v


def _array_field(annotation, record):
    """A struct's array field from its array_t (data, grad, shape, strides, ...) in a struct array's memory: an array
    over that memory, owned elsewhere (as Warp's struct values read back), or None for a null pointer."""
    if not int(record["data"]):
        return None
    n = annotation.ndim  # (Warp's array_t: up to 4 dimensions, the others zero)
    shape, strides = tuple(int(k) for k in record["shape"][:n]), tuple(int(k) for k in record["strides"][:n])
    return array(ptr=int(record["data"]), dtype=annotation.dtype, shape=shape, strides=strides)


# ----------------------------------------------------------------------------
# constructors (Warp's signatures)
def zeros(shape=None, dtype=float, device=None, requires_grad=False, pinned=False, **kwargs):
    a = _allocate(shape, dtype, device, requires_grad, **kwargs)
    if _capture.active is not None and _capture.recording_on(a.device):  # as Warp's memset: zeroed at each replay
        a.zero_()
        if a.grad is not None:
            a.grad.zero_()
    return a


def _allocate(shape, dtype, device, requires_grad, **kwargs):
    """A new array (its storage zeroed, as numpy allocates it), of wp.zeros' and wp.empty's arguments."""
    if "n" in kwargs:  # Warp's older spelling, wp.zeros(n=length)
        shape = (kwargs.pop("n"),)
    retain_grad = kwargs.pop("retain_grad", False)
    kwargs.pop("ndim", None)  # Warp passes it on to wp.array, which ignores it beside a shape
    if kwargs:
        raise TypeError(f"wp.zeros() got unexpected keyword arguments: {', '.join(sorted(kwargs))}")
    if shape is None:  # as Warp: an empty array
        shape = 0
    a = array(shape=shape, dtype=dtype, device=device, requires_grad=requires_grad)
    if retain_grad:
        a.retain_grad = True
    return a


zeros._wp_local_array_ = True  # wp.zeros() in a kernel: a fixed-size stack array (compiler/frontend/fixed.py)


def empty(shape=None, dtype=float, device=None, requires_grad=False, pinned=False, **kwargs):
    return _allocate(shape, dtype, device, requires_grad, **kwargs)


def full(shape=None, value=0, dtype=None, device=None, requires_grad=False, pinned=False, **kwargs):
    if dtype is None:
        dtype = _fill_dtype(value)
    a = zeros(shape, dtype, device, requires_grad, pinned, **kwargs)
    a.fill_(value)
    return a


def _fill_dtype(value):
    """wp.full's dtype for `value`, by Warp's rules: int -> int32, float -> float32, bool -> bool, a Warp scalar,
    vector, matrix or struct instance -> its type, another sequence (a list, a numpy array) -> a vector (1-D) or
    matrix (2-D) of its numpy scalar type."""
    if type(value) in (int, float, bool):
        return _t.canonical_type(type(value))
    if isinstance(value, _t.scalar_base) or _t.is_composite(type(value)):
        return type(value)
    if not hasattr(value, "__len__"):
        raise ValueError(f"Invalid value type for Warp array: {type(value)}")
    try:
        na = np.asarray(value)
    except Exception as e:
        raise ValueError(f"Failed to interpret the value as a vector or matrix: {e}") from e
    try:
        scalar = _t.dtype_from_numpy(na.dtype)
    except TypeError:
        raise ValueError(f"Failed to convert {na.dtype} to a Warp data type") from None
    if na.ndim == 1:
        return vector(na.size, scalar)
    if na.ndim == 2:
        return matrix(na.shape, scalar)
    raise ValueError("Values with more than two dimensions are not supported")


def ones(shape=None, dtype=float, device=None, requires_grad=False, pinned=False, **kwargs):
    return full(shape, 1, dtype, device, requires_grad, pinned, **kwargs)


def _like_grad(src, requires_grad):
    return src.requires_grad if requires_grad is None else requires_grad


def zeros_like(src, device=None, requires_grad=None, pinned=None, retain_grad=False):
    return zeros(src.shape, src.dtype, device or src.device, _like_grad(src, requires_grad), retain_grad=retain_grad)


def empty_like(src, device=None, requires_grad=None, pinned=None, retain_grad=False):
    return zeros_like(src, device, requires_grad, retain_grad=retain_grad)


def full_like(src, value, device=None, requires_grad=None, pinned=None, retain_grad=False):
    a = zeros_like(src, device, requires_grad, retain_grad=retain_grad)
    a.fill_(value)
    return a


def ones_like(src, device=None, requires_grad=None, pinned=None, retain_grad=False):
    return full_like(src, 1, device, requires_grad, retain_grad=retain_grad)


def clone(src, device=None, requires_grad=None, pinned=None, retain_grad=False):
    """A contiguous copy of `src`, made by wp.copy as in Warp: with gradients on both sides, a recording Tape
    carries the clone's gradient back to `src`."""
    out = zeros(src.shape, src.dtype, device or src.device, _like_grad(src, requires_grad), retain_grad=retain_grad)
    copy(out, src)
    return out


def copy(dest, src, dest_offset=0, src_offset=0, count=0, stream=None):
    """Copies `src` into `dest`, as Warp's wp.copy: `count` elements (all of `src` when 0) from element
    `src_offset` of `src` to element `dest_offset` of `dest`, flat in contiguous arrays; with a non-contiguous
    side, the whole arrays (the same shape) or windows of 1-D ones. The elements' bytes are copied (the
    element sizes must agree). When both arrays have gradients, as in Warp, the same elements of `src.grad`
    are copied into `dest.grad`, and a recording Tape records the copy: its backward adds the copied window
    of `dest.grad` into `src.grad` and zeroes that window of `dest.grad` (unless `dest.retain_grad`: the copy
    overwrote those elements of `dest`, so nothing before it reaches the loss through them)."""
    for a in (dest, src):
        if not (getattr(a, "_wp_array_", False) or _by_value(a)) or a.is_annotation:
            raise RuntimeError("Copy source and destination must be arrays")
    try:
        src_offset, dest_offset, count = operator.index(src_offset), operator.index(dest_offset), \
            operator.index(count)
    except TypeError:
        raise RuntimeError("Copy src_offset, dest_offset, and count must be integers") from None
    if src_offset < 0:
        raise RuntimeError(f"Source offset must be non-negative, got {src_offset}")
    if dest_offset < 0:
        raise RuntimeError(f"Destination offset must be non-negative, got {dest_offset}")
    if count < 0:
        raise RuntimeError(f"Copy count must be non-negative, got {count}")
    n = count or src.size
    if n == 0:
        return
    if _by_value(dest) or _by_value(src):  # wp.indexedarray, wp.fabricarray: by value
        if src_offset or dest_offset or n != src.size or n != dest.size:
            raise RuntimeError("dest_offset, src_offset, and count are not supported when copying to/from "
                               "non-contiguous indexed or Fabric arrays")
        if any(getattr(a, "_wp_fabric_", False) and a.ndim > 1 for a in (dest, src)):  # jagged, as Warp refuses
            raise RuntimeError("Copying to/from Fabric arrays of arrays is not supported")
        return _capture.run_or_record(dest.device, lambda: dest.assign(src._host()))  # read at replay when captured
    if _recording._active:  # a recording tape saves what a recorded launch read (python/mlwarp/autodiff/overwrites.py)
        _recording.before_write(dest)
    _copy_values(dest, src, dest_offset, src_offset, count, n, stream)
    if src.grad is None or dest.grad is None:
        return
    copy(dest.grad, src.grad, dest_offset, src_offset, count, stream)
    if _recording.recording():  # dest.grad / src.grad / retain_grad read at backward time, as Warp's recorded copy
        _recording.record_func(lambda: _capture.run_or_record(dest.device, partial(
            adjoint_copy, dest.grad, src.grad, dest_offset, src_offset, n, dest.retain_grad)), [dest, src])
        if config.verify_autograd_array_access:
            if dest._is_read:
                filename, lineno = _access.caller_location()
                dest.mark_write(operation="an array copy", filename=filename, lineno=lineno)
            src.mark_read()


def _by_value(a) -> bool:
    """A non-contiguous array kind that wp.copy reads and writes by value (wp.indexedarray, wp.fabricarray and
    their indexed forms: python/mlwarp/arrays/indexed.py, python/mlwarp/arrays/fabric.py, which build on this module)."""
    return getattr(a, "_wp_indexed_", False) is True or getattr(a, "_wp_fabric_", False) is True


def _copy_values(dest, src, dest_offset, src_offset, count, n, stream):
    if not (dest.device.is_cpu and src.device.is_cpu):  # H2D, D2H, D2D: python/mlwarp/arrays/cuda_array.py (registered)
        return _cuda_copy(dest, src, dest_offset, src_offset, count, stream)
    d, s = copy_windows(dest, dest._host(), src, src._host(), dest_offset, src_offset, n)
    _capture.run_or_record(dest.device, partial(copy_bytes, d, s))


def from_numpy(arr, dtype=None, shape=None, device=None, requires_grad=False, retain_grad=False):
    return array(arr, dtype=dtype, shape=shape, device=device, requires_grad=requires_grad, retain_grad=retain_grad)


class _FixedRankArray:
    """`wp.array1d` .. `wp.array4d`: `wp.array` with `ndim` given, called (`wp.array2d(data)`, an array) or
    subscripted (`wp.array2d[float]`, an annotation), as in Warp. Not classes of their own: what they make is
    a `wp.array`."""

    ndim = 0

    def __new__(cls, *args, **kwargs):
        return array(*args, ndim=cls.ndim, **kwargs)

    def __class_getitem__(cls, dtype):
        if isinstance(dtype, tuple):
            raise TypeError(f"wp.{cls.__name__} expects a single type parameter (dtype), got {len(dtype)}")
        return ArrayAnnotation(dtype, cls.ndim)


class array1d(_FixedRankArray):
    ndim = 1


class array2d(_FixedRankArray):
    ndim = 2


class array3d(_FixedRankArray):
    ndim = 3


class array4d(_FixedRankArray):
    ndim = 4
