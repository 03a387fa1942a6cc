"""`wp.indexedarray`: a `wp.array` seen through per-dimension index arrays, as Warp's.

`wp.indexedarray(data, [I, None, K])` has shape `(len(I), data.shape[1], len(K))` and its element
`[i, j, k]` is `data[I[i], j, K[k]]`; `data[I]`, `data[:, I]`, ... with int32 index arrays make one.

In a kernel an indexed array is a value of an internal `@wp.struct` per (dtype, ndim) (`struct_type`):

    data: array(dtype, ndim)      the viewed array
    i0 .. i{ndim-1}: array(int32)  dimension d's index array; for a dimension without one, a descriptor of
                                   data.shape[d] elements with stride 0 over one int32 zero
    u0 .. u{ndim-1}: int32        1 for a dimension without index array, else 0

so that `a[.., i_d, ..]` reads `data[.., i{d}[i_d] + i_d * u{d}, ..]` (no branch, no null pointer), and
`a.shape[d]` is `i{d}.shape[0]`. Kernel parameters, struct fields and @wp.func arguments of an indexed
type are that struct: the launch ABI and struct packing are the ordinary ones; the frontend
(compiler/frontend/indexed.py) rewrites indexing, atomics, views and `.shape` on it. The data
array's gradient is the struct field's, as for any array field of a struct argument.
"""

from __future__ import annotations

import re
import sys
import threading
import typing

import numpy as np

from mlwarp.core import types as wt
from mlwarp.arrays.array import array, assign_values, shown_numpy, zeros
from mlwarp.kernels.subscript_annotations import ArrayAnnotationBase, ndim_parameter
from mlwarp.runtime import capture as _capture
from mlwarp.runtime.device import get_device
from mlwarp.kernels.struct import struct

ARRAY_MAX_DIMS = 4
ARRAY_TYPE_REGULAR, ARRAY_TYPE_INDEXED = 0, 1

_structs: dict = {}
_lock = threading.Lock()


def _canonical_dtype(dtype):
    if dtype is int:
        return wt.int32
    if dtype is float:
        return wt.float32
    if dtype is bool:
        return wt.bool_
    return dtype


def struct_type(dtype, ndim: int):
    """The internal struct an indexed array of `dtype` and `ndim` is in kernels (see the module docstring)."""
    dtype = _canonical_dtype(dtype)
    key = (wt.type_key(dtype), ndim)
    with _lock:
        found = _structs.get(key)
    if found is not None:
        return found
    view = struct_type(dtype, ndim - 1) if ndim > 1 else None
    name = "indexedarray_" + re.sub(r"\W", "_", wt.type_name(dtype)) + f"_{ndim}d"
    fields = {"data": array(dtype=dtype, ndim=ndim)}
    fields.update({f"i{d}": array(dtype=wt.int32, ndim=1) for d in range(ndim)})
    fields.update({f"u{d}": wt.int32 for d in range(ndim)})
    cls = struct(type(name, (), {"__annotations__": fields, "__module__": __name__, "__qualname__": name}))
    cls._wp_indexed_ = (dtype, ndim)  # what the frontend recognises (compiler/frontend/indexed.py)
    cls.dtype, cls.ndim = dtype, ndim  # as Warp's indexedarray type reads (a struct's `Struct.vars[f].type`)
    cls._wp_indexed_view_ = view  # the type of `a[i]`
    cls._wp_mismatch_ = staticmethod(lambda value: _mismatch(dtype, ndim, value))  # a launch's message
    with _lock:
        return _structs.setdefault(key, cls)


def _mismatch(dtype, ndim, value) -> str:
    """Why `value` is no argument for an indexed array parameter of `dtype` and `ndim`, as Warp says it."""
    if isinstance(value, indexedarray) and not value.is_annotation:
        if value.dtype is not dtype:
            return f"expects an array with dtype={dtype} but passed array has dtype={value.dtype}"
        return f"expects an array with {ndim} dimension(s) but the passed array has {value.ndim} dimension(s)"
    return (f"expects an array of type indexedarray(ndim={ndim}, dtype={wt.type_name(dtype)}), but passed value "
            f"has type {type(value).__name__}")


class _IndexedAnnotation(ArrayAnnotationBase):
    """`wp.indexedarray[dtype]` / `wp.indexedarray[dtype, Literal[ndim]]`: an annotation only (not an
    indexedarray instance, as in Warp); generic when dtype or ndim is `Any`."""

    __slots__ = ()
    kind = "indexedarray"

    @property
    def _wp_generic_(self) -> bool:
        return self.dtype is typing.Any or self.ndim is typing.Any

    def _wp_matches_(self, concrete) -> bool:
        """Whether a concrete type (an indexed struct type) instantiates this generic annotation."""
        found = getattr(concrete, "_wp_indexed_", None)
        if found is None:
            return False
        dtype, ndim = found
        return (self.ndim is typing.Any or self.ndim == ndim) and (self.dtype is typing.Any or self.dtype is dtype)

    @property
    def _wp_indexed_struct_(self):
        return None if self._wp_generic_ else struct_type(self.dtype, self.ndim)


def check_index_array(indices, expected_device):
    if not isinstance(indices, array) or indices.is_annotation:
        raise ValueError(f"Indices must be a Warp array, got {type(indices)}")
    if indices.ndim != 1:
        raise ValueError(f"Index array must be one-dimensional, got {indices.ndim}")
    if indices.dtype is not wt.int32:
        raise ValueError(f"Index array must use int32, got dtype {indices.dtype}")
    if indices.device != expected_device:
        raise ValueError(f"Index array device ({indices.device} does not match data array device "
                         f"({expected_device}))")


_zero_index: dict = {}


def _zero(device):
    """One int32 zero on `device`: what the index descriptor of a dimension without index array reads."""
    z = _zero_index.get(device.alias)
    if z is None:
        z = _zero_index.setdefault(device.alias, zeros(1, dtype=wt.int32, device=device))
    return z


class indexedarray:
    """An array providing indexed access to a subset of the elements of a `wp.array` (see the module
    docstring)."""

    _wp_indexed_ = True  # wp.copy and friends recognise it by this marker (array.py cannot import this module)
    type_id = ARRAY_TYPE_INDEXED
    is_contiguous = False

    def __class_getitem__(cls, params):
        """`wp.indexedarray[dtype]`, `wp.indexedarray[dtype, Literal[ndim]]` (or an int, or `Any`)."""
        if not isinstance(params, tuple):
            return _IndexedAnnotation(params, 1)
        if len(params) != 2:
            raise TypeError(f"wp.indexedarray expects 1 or 2 type parameters, got {len(params)}")
        return _IndexedAnnotation(params[0], ndim_parameter(params[1], ARRAY_MAX_DIMS))

    @property
    def vars(self) -> dict:
        """The members a kernel reads of this indexed array (Warp's `vars`: its `shape`)."""
        return dict(_IndexedAnnotation(self.dtype, self.ndim).vars)

    def __init__(self, data=None, indices=None, dtype=None, ndim=None):
        dtype = _canonical_dtype(dtype) if dtype is not None else None
        self.data = data
        self.indices = [None] * ARRAY_MAX_DIMS
        if data is None:  # an annotation: wp.indexedarray(dtype=float, ndim=2)
            self.dtype = dtype if dtype is not None else wt.float32
            self.ndim = ndim or 1
            self.device = None
            self.pinned = False
            self.shape = (0,) * self.ndim
        else:
            if not isinstance(data, array) or data.is_annotation:
                raise ValueError("Indexed array data must be a Warp array")
            if dtype is not None and dtype != data.dtype:
                raise ValueError(f"Requested dtype ({dtype}) does not match dtype of data array ({data.dtype})")
            if ndim is not None and ndim != data.ndim:
                raise ValueError(f"Requested dimensionality ({ndim}) does not match dimensionality of data array "
                                 f"({data.ndim})")
            self.dtype, self.ndim, self.device = data.dtype, data.ndim, data.device
            self.pinned = getattr(data, "pinned", False)
            shape = list(data.shape)
            if indices is not None:
                if isinstance(indices, (list, tuple)):
                    if len(indices) > self.ndim:
                        raise ValueError(f"Number of indices provided ({len(indices)}) exceeds number of "
                                         f"dimensions ({self.ndim})")
                    for d, idx in enumerate(indices):
                        if idx is not None:
                            check_index_array(idx, data.device)
                            self.indices[d] = idx
                            shape[d] = len(idx)
                elif isinstance(indices, array):
                    check_index_array(indices, data.device)
                    self.indices[0] = indices
                    shape[0] = len(indices)
                else:
                    raise ValueError("Indices must be a single Warp array or a list of Warp arrays")
            self.shape = tuple(shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))

    # -- as a type -------------------------------------------------------------------------------------------
    @property
    def is_annotation(self) -> bool:
        return self.data is None

    @property
    def _wp_indexed_struct_(self):
        """The kernel type of this indexed array (an annotation's too: `a: wp.indexedarray(dtype=float)`);
        None for a generic annotation (`wp.indexedarray(dtype=Any)`), which each launch instantiates."""
        return None if self._wp_generic_ else struct_type(self.dtype, self.ndim)

    @property
    def _wp_generic_(self) -> bool:
        """`wp.indexedarray(dtype=Any)` as a kernel's annotation leaves the dtype open, as the subscript form."""
        return self.is_annotation and self.dtype is typing.Any

    def _wp_matches_(self, concrete) -> bool:
        return _IndexedAnnotation(self.dtype, self.ndim)._wp_matches_(concrete)

    @property
    def _wp_type_name_(self):
        """How messages name an annotation (wt.type_name)."""
        if not self.is_annotation:
            return None
        return f"indexedarray(ndim={self.ndim}, dtype={wt.type_name(self.dtype)})"

    @property
    def _wp_fields_(self) -> list:
        """The kernel struct's fields: what code walking struct arguments (a Tape's gradients, adjoint
        companions) reads, with `data`, `i0..` (an index array or None) and `u0..` as attributes."""
        return self._wp_indexed_struct_._wp_fields_

    def __getattr__(self, name):
        ndim = self.__dict__.get("ndim", 0)
        if len(name) == 2 and name[0] in "iu" and name[1].isdigit() and int(name[1]) < ndim:
            idx = self.__dict__["indices"][int(name[1])]
            return idx if name[0] == "i" else int(idx is None)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _wp_ctype_value_(self):
        """The C value of the kernel struct: the data array's descriptor and one index descriptor per dimension
        (the instance keeps the arrays alive)."""
        c = self._wp_indexed_struct_._ctype_()
        if self.data is None:
            return c
        view = self.data._np
        c.data.data = view.ctypes.data
        for d in range(self.ndim):
            c.data.shape[d], c.data.strides[d] = view.shape[d], view.strides[d]
            desc = getattr(c, f"i{d}")
            idx = self.indices[d]
            if idx is None:
                desc.data, desc.shape[0], desc.strides[0] = _zero(self.device)._np.ctypes.data, view.shape[d], 0
                setattr(c, f"u{d}", 1)
            else:
                iv = idx._np
                desc.data, desc.shape[0], desc.strides[0] = iv.ctypes.data, iv.shape[0], iv.strides[0]
        return c

    @property
    def requires_grad(self) -> bool:
        return bool(self.data is not None and self.data.requires_grad)

    @property
    def grad(self):
        """The same indices into the data array's gradient (None when the data has none): what a Tape's
        backward launch passes as this argument's adjoint."""
        g = None if self.data is None else self.data.grad
        if g is None:
            return None
        cached = self.__dict__.get("_grad")
        if cached is None or cached.data is not g:
            cached = indexedarray(g, [self.indices[d] for d in range(self.ndim)])
            self.__dict__["_grad"] = cached
        return cached

    def companion(self, given):
        """The adjoint (or tangent) argument of this one in an adjoint launch: `given` (an indexed array of the
        same shape), else an indexed array over a zero-filled scratch copy of the data (nothing is written through
        a null pointer)."""
        if given is None:
            return indexedarray(zeros(self.data.shape, self.dtype, self.device),
                                [self.indices[d] for d in range(self.ndim)])
        if not isinstance(given, indexedarray) or given.shape != self.shape or given.dtype is not self.dtype:
            raise ValueError(f"the adjoint of an indexed array of shape {self.shape} must be an indexed array of "
                             f"that shape and dtype {wt.type_name(self.dtype)}, got {given!r}")
        return given

    # -- Python scope ----------------------------------------------------------------------------------------
    def __len__(self):
        return self.shape[0]

    def __str__(self):
        if self.device is None:
            return f"indexedarray{self.dtype}"
        return str(self.numpy())

    def _index(self):
        """The numpy index (np.ix_) of this array's elements in the data array's numpy view."""
        axes = [self.indices[d].numpy() if self.indices[d] is not None else np.arange(self.data.shape[d])
                for d in range(self.ndim)]
        return np.ix_(*[np.asarray(a, dtype=np.intp) for a in axes])

    def _host_data(self) -> np.ndarray:
        return self.data._np if self.device.is_cpu else np.array(self.data._host())

    def _write(self, values) -> None:
        if _capture.recording_on(self.device):  # a graph capture: written through the indices of replay time
            return _capture.record(lambda: self._write(values))
        host = self._host_data()
        host[self._index()] = values
        if not self.device.is_cpu:
            self.data.assign(host)

    def numpy(self) -> np.ndarray:
        """A contiguous numpy copy of the indexed elements (bfloat16 as wp.array.numpy() shows it)."""
        return shown_numpy(self._host(), self.dtype)

    def _host(self) -> np.ndarray:
        """The indexed elements as stored (bfloat16 as bits), a contiguous copy."""
        if self.data is None:
            raise RuntimeError("an indexedarray annotation has no values")
        return np.ascontiguousarray(self._host_data()[self._index()])

    def _values(self) -> np.ndarray:
        return wt.bfloat16_shown(self._host(), self.dtype)

    def list(self):
        return self.contiguous().list()

    def contiguous(self) -> array:
        """A contiguous wp.array copy, on the same device."""
        return array(self._host(), dtype=self.dtype, device=self.device)

    def to(self, device):
        device = get_device(device)
        return self if device == self.device else array(self._host(), dtype=self.dtype, device=device)

    def assign(self, src) -> None:
        """Copies `src` (an array, indexed array, numpy array or nested list of as many elements) into the
        indexed elements."""
        storage = self.data._np.dtype
        if isinstance(src, (array, indexedarray)) and _capture.recording_on(self.device):
            return _capture.record(lambda: self.assign(src))  # a graph capture: src as it is at replay
        values = np.asarray(src._host()) if isinstance(src, (array, indexedarray)) else \
            assign_values(src, self.dtype, storage)
        want = self.shape + wt.inner_shape(self.dtype)
        if values.size != int(np.prod(want, dtype=np.int64)):
            raise RuntimeError(f"Cannot assign {values.size} values to an indexed array of {self.size} elements "
                               f"(shape {self.shape})")
        if self.size:
            self._write(values.reshape(want))

    def zero_(self) -> None:
        if self.size:
            self._write(np.zeros((), dtype=self.data._np.dtype))

    def fill_(self, value) -> None:
        """Sets every indexed element to `value` (a number, a vector/matrix value or sequence, a struct
        instance, or 0 for a struct dtype)."""
        if self.size == 0:
            return
        if wt.is_struct(self.dtype):
            if isinstance(value, self.dtype):
                cvalue = value.numpy_value()
            elif isinstance(value, (int, float)) and value == 0:
                cvalue = np.zeros((), dtype=self.data._np.dtype)
            else:
                raise ValueError(f"Invalid initializer value for struct {self.dtype.__name__}, expected struct "
                                 f"instance or 0")
        else:  # converted as wp.array.fill_ converts it (vectors, matrices, bfloat16 bits, ...)
            one = zeros(1, dtype=self.dtype, device="cpu")
            one.fill_(value)
            cvalue = one._np[0]
        self._write(cvalue)


def _with_ndim(ndim):
    def make(*args, **kwargs):
        kwargs["ndim"] = ndim
        return indexedarray(*args, **kwargs)

    make.__name__ = make.__qualname__ = f"indexedarray{ndim}d"
    make.__doc__ = f"Create or annotate a {ndim}-dimensional :class:`warp.indexedarray`."
    return make


indexedarray1d, indexedarray2d, indexedarray3d, indexedarray4d = (_with_ndim(n) for n in range(1, 5))


def index_view(data: array, key: tuple):
    """`data[key]` where `key` holds int32 index arrays (and slices, applied first): an indexedarray, as
    Warp's array.__getitem__ makes. Integers are not allowed next to index arrays."""
    if any(isinstance(k, (int, np.integer)) for k in key):
        raise RuntimeError("Cannot mix integer indices and index arrays when indexing an array")
    sliced = tuple(k if isinstance(k, slice) else slice(None) for k in key)
    base = data[sliced] if any(k != slice(None) for k in sliced) else data
    return indexedarray(base, [k if isinstance(k, array) else None for k in key])


array._index_view = index_view  # data[I]: array.__getitem__ with index arrays


class fixedarray:
    """`wp.fixedarray(shape=..., dtype=...)`: the annotation of a fixed-size array, what `wp.zeros()` makes inside
    kernels and @wp.func (compiler/frontend/fixed.py: an ordinary array on the thread's stack). In kernels it
    is the array type of its dtype and rank."""

    is_annotation = True
    _wp_fixedarray_ = True  # what the frontend reads (compiler/frontend/types.py)

    def __init__(self, shape=None, dtype=float):
        self.shape = (shape,) if isinstance(shape, int) else tuple(shape or ())
        self.ndim = len(self.shape)
        self.dtype = _canonical_dtype(dtype)

    def __repr__(self):
        return f"fixedarray(shape={self.shape}, dtype={wt.type_name(self.dtype)})"


__all__ = ["indexedarray", "indexedarray1d", "indexedarray2d", "indexedarray3d", "indexedarray4d", "fixedarray"]
