"""Warp's Fabric arrays: `wp.fabricarray`, `wp.indexedfabricarray`, `wp.fabricarrayarray`,
`wp.indexedfabricarrayarray`.

A Fabric array views memory Warp does not own: an attribute stored in "buckets", each a pointer and a count,
described by a `__fabric_arrays_interface__` dict (version 1: `device`, and per attribute its `type`
(has_warp_type, base type code, element count, array depth, role), `pointers`, `counts` and, for an array of
arrays, `array_lengths`). Element `i` is element `i - start` of the bucket whose `[start, end)` holds it. An
array of arrays (array depth 1, ndim 2) stores per element a pointer to its inner array, and per bucket a
pointer to the inner arrays' lengths (uint64). `fa[indices]` (int32 index array) is an indexed Fabric array.

In a kernel a Fabric array is a value of an internal `@wp.struct` per (dtype, ndim, indexed) (`struct_type`):

    buckets: array(int64, 2)    one row per bucket: index_start, index_end, data address, lengths address
                                (Warp's fabricbucket_t layout), on the array's device
    size: uint64                the element count (`a.size`, as Warp's: uint64)
    indices: array(int32)       indexed Fabric arrays only: their index array (size is its length)

and the frontend (compiler/frontend/fabric.py) turns `a[i]`, `a[i, j]`, `a[i]` of an array of arrays (a 1-d
array over the inner array), atomics and `a.size` into a binary search over the bucket rows and an access to
the bucket's memory as an array over raw memory, which, as in Warp, has no adjoint: Fabric arrays have no
gradients. Python scope reads and writes go through each bucket's memory (`numpy()`, `assign`, `fill_`,
`wp.copy`, `wp.clone`); Warp refuses them for arrays of arrays (jagged), and so does this module.
"""

from __future__ import annotations

import math
import re
import threading
import typing

import numpy as np

from mlwarp import types as wt
from mlwarp.arrays.array import array, assign_values, clone, copy, fill_values, shown_numpy
from mlwarp.arrays.indexed import _canonical_dtype, check_index_array
from mlwarp.kernels.subscript_annotations import ArrayAnnotationBase, ndim_parameter
from mlwarp.runtime import capture as _capture
from mlwarp.runtime.device import get_device
from mlwarp.kernels.struct import struct

ARRAY_TYPE_FABRIC, ARRAY_TYPE_FABRIC_INDEXED = 2, 3  # Warp's array type ids
BUCKET_FIELDS = 4  # index_start, index_end, data address, lengths address

# the Fabric interface's base type codes (Warp's fabric_to_warp_dtype)
_BASE_TYPES = {"b": wt.bool_, "i1": wt.int8, "i2": wt.int16, "i4": wt.int32, "i8": wt.int64, "u1": wt.uint8,
               "u2": wt.uint16, "u4": wt.uint32, "u8": wt.uint64, "f2": wt.float16, "f4": wt.float32,
               "f8": wt.float64}

_structs: dict = {}
_lock = threading.Lock()


def _family(indexed: bool) -> str:
    return "indexedfabricarray" if indexed else "fabricarray"


def struct_type(dtype, ndim: int, indexed: bool):
    """The internal struct a Fabric array of `dtype` and `ndim` (indexed or not) is in kernels (see the module
    docstring)."""
    dtype = _canonical_dtype(dtype)
    key = (wt.type_key(dtype), ndim, indexed)
    with _lock:
        found = _structs.get(key)
    if found is not None:
        return found
    family = _family(indexed)
    shown = "Any" if ndim is typing.Any else ndim  # a struct field's of any ndim (_field_struct)
    name = f"{family}_" + re.sub(r"\W", "_", wt.type_name(dtype)) + f"_{shown}d"
    fields = {"buckets": array(dtype=wt.int64, ndim=2), "size": wt.uint64}
    if indexed:
        fields["indices"] = array(dtype=wt.int32, ndim=1)
    cls = struct(type(name, (), {"__annotations__": fields, "__module__": __name__, "__qualname__": name}))
    cls._wp_fabric_ = (dtype, ndim, indexed)  # what the frontend recognises (compiler/frontend/fabric.py)
    cls._wp_type_name_ = f"{family}(ndim={shown}, dtype={wt.type_name(dtype)})"  # in messages, as Warp's
    cls._wp_mismatch_ = staticmethod(lambda value: _mismatch(dtype, ndim, indexed, value))  # a launch's message
    # a struct array's element (wp.array.list()): as Warp's, a field's descriptor comes back as an annotation
    # of its type (the memory it pointed to is not the array's to own)
    cls._wp_from_record_ = staticmethod(lambda record: (indexedfabricarray if indexed else fabricarray)(
        dtype=dtype, ndim=ndim))
    with _lock:
        return _structs.setdefault(key, cls)


def _mismatch(dtype, ndim, indexed, value) -> str:
    """Why `value` is no argument for a Fabric array parameter, in Warp's words."""
    kind = indexedfabricarray if indexed else fabricarray
    if isinstance(value, kind) and not value.is_annotation:
        if value.dtype is not dtype:
            return f"expects an array with dtype={dtype} but passed array has dtype={value.dtype}"
        return f"expects an array with {ndim} dimension(s) but the passed array has {value.ndim} dimension(s)"
    return (f"expects an array of type {_family(indexed)}(ndim={ndim}, dtype={wt.type_name(dtype)}), but passed "
            f"value has type {type(value).__name__}")


def fabric_dtype(type_info, attrib: str):
    """The Warp dtype of a Fabric attribute's type metadata (has_warp_type, base type code, element count,
    array depth, role), as Warp's fabric_to_warp_dtype: a scalar, vector, quaternion or square matrix."""
    if not type_info[0]:
        raise RuntimeError(f"Attribute '{attrib}' cannot be used in Warp")
    base = _BASE_TYPES.get(type_info[1])
    if base is None:
        raise RuntimeError(f"Attribute '{attrib}' base data type '{type_info[1]}' is not supported in Warp")
    count, role = type_info[2], type_info[4]
    if role in ("text", "path"):
        raise RuntimeError(f"Attribute '{attrib}' role '{role}' is not supported in Warp")
    if count <= 1:
        return base
    if role == "quat" and count == 4:
        return wt.quaternion(base)
    if role in ("matrix", "transform", "frame"):
        side = int(math.sqrt(count))
        if side * side != count:
            raise ValueError(f"Fabric attribute '{attrib}' matrix metadata must have a square element count, got "
                             f"{count}")
        return wt.matrix((side, side), base)
    return wt.vector(count, base)


class _FabricAnnotation(ArrayAnnotationBase):
    """`wp.fabricarray[dtype]` / `wp.indexedfabricarray[dtype, Literal[ndim]]`: an annotation only (not an
    instance of the class, as in Warp); generic when dtype or ndim is `Any`."""

    __slots__ = ("indexed",)

    def __init__(self, dtype, ndim, indexed):
        super().__init__(dtype, ndim)
        self.indexed = indexed

    @property
    def kind(self) -> str:
        return _family(self.indexed)

    @property
    def type_id(self) -> int:
        return ARRAY_TYPE_FABRIC_INDEXED if self.indexed else ARRAY_TYPE_FABRIC

    @property
    def _wp_generic_(self) -> bool:
        return self.dtype is typing.Any or self.ndim is typing.Any

    def _wp_matches_(self, concrete) -> bool:
        return _matches(self, concrete)

    @property
    def _wp_indexed_struct_(self):
        return None if self._wp_generic_ else struct_type(self.dtype, self.ndim, self.indexed)

    @property
    def _wp_field_struct_(self):
        return _field_struct(self)


def _matches(annotation, concrete) -> bool:
    """Whether a concrete type (a Fabric struct type) instantiates a generic Fabric annotation."""
    found = getattr(concrete, "_wp_fabric_", None)
    if found is None:
        return False
    dtype, ndim, indexed = found
    return indexed == annotation.indexed and (annotation.ndim is typing.Any or annotation.ndim == ndim) and \
        (annotation.dtype is typing.Any or annotation.dtype is dtype)


def _field_struct(annotation):
    """The struct a struct field annotated `annotation` holds: that of its type, also for `ndim=Any` (Warp's
    fields of any ndim take Fabric arrays of either; kernels cannot index one, compiler/frontend/fabric.py)."""
    if annotation.dtype is typing.Any:
        return None
    return struct_type(annotation.dtype, annotation.ndim, annotation.indexed)


def _subscript(indexed, params):
    if not isinstance(params, tuple):
        return _FabricAnnotation(params, 1, indexed)
    if len(params) != 2:
        raise TypeError(f"wp.{_family(indexed)} expects 1 or 2 type parameters, got {len(params)}")
    return _FabricAnnotation(params[0], ndim_parameter(params[1]), indexed)


class _FabricBase:
    """What Fabric arrays and indexed Fabric arrays share: their kernel type and Python-scope values."""

    _wp_fabric_ = True  # wp.copy, struct fields and launches recognise them by this marker
    is_contiguous = False
    requires_grad = False  # Fabric arrays have no gradients (as Warp's fabricarray_t has no grad pointer)
    grad = None
    indexed = False

    # -- as a type -------------------------------------------------------------------------------------------
    @property
    def _wp_generic_(self) -> bool:
        return self.is_annotation and (self.dtype is typing.Any or self.ndim is typing.Any)

    def _wp_matches_(self, concrete) -> bool:
        return _matches(self, concrete)

    @property
    def _wp_indexed_struct_(self):
        """The kernel type of this array (an annotation's too: `a: wp.fabricarray(dtype=float)`)."""
        return None if self._wp_generic_ else struct_type(self.dtype, self.ndim, self.indexed)

    @property
    def _wp_field_struct_(self):
        return _field_struct(self) if self.is_annotation else None

    def _fill_ctype(self, c, fa) -> None:
        table = fa._table._np  # a CUDA array's holds its device address
        c.buckets.data = table.ctypes.data
        for d in range(2):
            c.buckets.shape[d], c.buckets.strides[d] = table.shape[d], table.strides[d]
        c.size = self.size

    # -- Python scope ----------------------------------------------------------------------------------------
    def __len__(self):
        return self.size

    def __str__(self):
        if self.is_annotation:
            return f"{_family(self.indexed)}{self.dtype}"
        return str(self.numpy())

    def numpy(self) -> np.ndarray:
        """A contiguous numpy copy of the elements (bfloat16 as wp.array.numpy() shows it)."""
        return shown_numpy(self._host(), self.dtype)

    def _values(self) -> np.ndarray:
        return wt.bfloat16_shown(self._host(), self.dtype)

    def list(self):
        return self.contiguous().list()

    def contiguous(self) -> array:
        """A contiguous wp.array copy, on the same device (Warp's: empty_like and wp.copy)."""
        return clone(self)

    def to(self, device):
        """This array on `device`: itself, or a contiguous wp.array copy there (Warp's wp.clone)."""
        device = get_device(device)
        return self if device == self.device else clone(self, device=device)

    def _storage(self) -> np.dtype:
        return np.dtype(wt.numpy_dtype(self.dtype))

    def _jagged(self, what: str) -> None:
        if self.ndim > 1:
            raise RuntimeError(what)

    def assign(self, src) -> None:
        """Copies `src` (an array of the same size, a numpy array or a nested list) into the elements."""
        if getattr(src, "_wp_array_", False) or getattr(src, "_wp_indexed_", False) or \
                getattr(src, "_wp_fabric_", False):
            return copy(self, src)
        self._jagged("Copying to/from Fabric arrays of arrays is not supported")
        values = assign_values(src, self.dtype, self._storage())
        want = self.shape + wt.inner_shape(self.dtype)
        if values.size != int(np.prod(want, dtype=np.int64)):
            raise RuntimeError(f"Cannot assign {values.size} values to a Fabric array of {self.size} elements "
                               f"(shape {self.shape})")
        if self.size:
            self._write(values.reshape(want))

    def zero_(self) -> None:
        self.fill_(0)

    def fill_(self, value) -> None:
        """Sets every element to `value` (a number, a vector/matrix value or sequence), as wp.array.fill_."""
        self._jagged(f"Filling {'indexed ' if self.indexed else ''}Fabric arrays of arrays is not supported")
        if self.size:
            self._write(np.asarray(fill_values(value, self.dtype, self._storage())))


def _bucket_view(ptr: int, count: int, dtype, device) -> array:
    return array(ptr=ptr, shape=(count,), dtype=dtype, device=device)


class fabricarray(_FabricBase):
    """An array over a Fabric attribute's buckets (see the module docstring): `wp.fabricarray(data, attrib)`
    with `data` a Fabric interface dict or an object with `__fabric_arrays_interface__`; without data, an
    annotation (`wp.fabricarray(dtype=float)`, `ndim=2`: an array of arrays).

    Warp does not own the memory: keep the interface's storage alive while the array (or a view or struct
    holding it) is used."""

    type_id = ARRAY_TYPE_FABRIC

    def __class_getitem__(cls, params):
        """`wp.fabricarray[dtype]`, `wp.fabricarray[dtype, Literal[ndim]]` (or an int, or `Any`)."""
        return _subscript(False, params)

    def __init__(self, data=None, attrib=None, dtype=typing.Any, ndim=None):
        self.access = None
        self.buckets = None
        self.size = 0
        self.shape = (0,)
        if data is None:  # an annotation
            self.dtype = dtype if dtype is typing.Any else _canonical_dtype(dtype)
            self.ndim = ndim or 1
            self.device = None
            return
        if not isinstance(attrib, str):
            raise ValueError(f"Invalid attribute name: {attrib}")
        if isinstance(data, dict):
            iface = data
        elif hasattr(data, "__fabric_arrays_interface__"):
            iface = data.__fabric_arrays_interface__
        else:
            raise ValueError("Invalid data argument for fabricarray: expected dict or object with "
                             "__fabric_arrays_interface__")
        version = iface.get("version")
        if version != 1:
            raise ValueError(f"Unsupported Fabric interface version: {version}")
        device = iface.get("device")
        if not isinstance(device, str):
            raise ValueError(f"Invalid Fabric interface device: {device}")
        self.device = get_device(device)
        attribs = iface.get("attribs")
        if not isinstance(attribs, dict):
            raise ValueError("Failed to get Fabric interface attributes")
        info = attribs.get(attrib)
        if not isinstance(info, dict):
            raise ValueError(f"Failed to get attribute '{attrib}'")
        type_info = info["type"]
        if len(type_info) != 5:
            raise ValueError(f"Fabric attribute '{attrib}' type metadata must contain five elements, got "
                             f"{len(type_info)}: {type_info!r}")
        self.dtype = fabric_dtype(type_info, attrib)
        self.access = info["access"]
        pointers, counts = info["pointers"], info["counts"]
        if not (hasattr(pointers, "__len__") and hasattr(counts, "__len__") and len(pointers) == len(counts)):
            raise RuntimeError("Attribute pointers and counts must be lists of the same size")
        depth = type_info[3]
        lengths = None
        if depth == 0:
            self.ndim = 1
        elif depth == 1:
            self.ndim = 2
            lengths = info["array_lengths"]
            if not hasattr(lengths, "__len__") or len(lengths) != len(pointers):
                raise RuntimeError("Attribute `array_lengths` must be a list of the same size as `pointers` and "
                                   "`counts`")
        else:
            raise ValueError(f"Invalid attribute array depth: {depth}")
        table = np.zeros((len(pointers), BUCKET_FIELDS), dtype=np.int64)
        start = 0
        for b, (ptr, count) in enumerate(zip(pointers, counts)):
            count = int(count)
            table[b] = (start, start + count, int(ptr or 0), int(lengths[b] or 0) if lengths is not None else 0)
            start += count
        self.buckets = table  # the bucket rows, on the host
        self.size = start
        self.shape = (start,)
        self._table = array(table, dtype=wt.int64, device=self.device)  # what kernels read, on the device

    def __del__(self):
        # Warp's releases the device copy of the bucket rows; this one drops it (an uninitialised instance too)
        self.__dict__.pop("_table", None)

    @property
    def is_annotation(self) -> bool:
        return self.device is None

    def _wp_ctype_value_(self, kernel_type=None):
        """The C value of the kernel struct, or of `kernel_type` (a struct field's, of the same layout): this
        array keeps the bucket rows alive."""
        c = (kernel_type or self._wp_indexed_struct_)._ctype_()
        if not self.is_annotation:
            self._fill_ctype(c, self)
        return c

    def __getitem__(self, key):
        if isinstance(key, array):
            return indexedfabricarray(fa=self, indices=key)
        raise ValueError(f"Fabric arrays only support indexing using index arrays, got key of type {type(key)}")

    # -- the buckets' memory ---------------------------------------------------------------------------------
    def _views(self):
        """(first element, wp.array over the bucket's memory) per non-empty bucket."""
        for start, end, ptr, _ in self.buckets.tolist():
            if end > start:
                yield start, _bucket_view(ptr, end - start, self.dtype, self.device)

    def _host(self) -> np.ndarray:
        """The elements as stored (bfloat16 as bits), a contiguous host copy."""
        if self.is_annotation:
            raise RuntimeError("a fabricarray annotation has no values")
        self._jagged("Copying to/from Fabric arrays of arrays is not supported")
        parts = [view._host() for _, view in self._views()]
        if not parts:
            return np.zeros((0,) + wt.inner_shape(self.dtype), dtype=self._storage())
        return np.ascontiguousarray(np.concatenate(parts))

    def _write(self, values) -> None:
        """Stores `values` (broadcast to the elements) into the buckets' memory."""
        self._scatter(np.arange(self.size), values)

    def _scatter(self, positions: np.ndarray, values) -> None:
        """Stores `values` (broadcast to len(positions) elements) at the elements `positions`."""
        if _capture.recording_on(self.device):  # a graph capture: written at replay time
            return _capture.record(lambda: self._scatter(positions, values))
        values = np.broadcast_to(np.asarray(values, dtype=self._storage()),
                                 (len(positions),) + wt.inner_shape(self.dtype))
        for start, view in self._views():
            inside = (positions >= start) & (positions < start + view.size)
            if not inside.any():
                continue
            local = positions[inside] - start
            if view.device.is_cpu:
                view._np[local] = values[inside]
            else:  # read-modify-write of the bucket through the driver
                host = view._host()
                host[local] = values[inside]
                view._write_host(host)


def fabricarrayarray(**kwargs):
    """A Fabric array of arrays: `wp.fabricarray(..., ndim=2)`."""
    kwargs["ndim"] = 2
    return fabricarray(**kwargs)


class indexedfabricarray(_FabricBase):
    """The elements of a `wp.fabricarray` that an int32 index array selects (`fa[indices]`); without `fa`, an
    annotation."""

    type_id = ARRAY_TYPE_FABRIC_INDEXED
    indexed = True

    def __class_getitem__(cls, params):
        """`wp.indexedfabricarray[dtype]`, `wp.indexedfabricarray[dtype, Literal[ndim]]`."""
        return _subscript(True, params)

    def __init__(self, fa=None, indices=None, dtype=None, ndim=None):
        if fa is None:  # an annotation
            self.fa = None
            self.indices = None
            self.dtype = typing.Any if dtype is None or dtype is typing.Any else _canonical_dtype(dtype)
            self.ndim = ndim or 1
            self.device = None
            self.size = 0
            self.shape = (0,)
            return
        if not isinstance(fa, fabricarray) or fa.is_annotation:
            raise ValueError(f"Indexed Fabric array data must be a Warp Fabric array, got {type(fa)}")
        check_index_array(indices, fa.device)
        self.fa = fa
        self.indices = indices
        self.dtype, self.ndim, self.device = fa.dtype, fa.ndim, fa.device
        self.size = indices.size
        self.shape = (indices.size,)

    @property
    def is_annotation(self) -> bool:
        return self.fa is None

    def _wp_ctype_value_(self, kernel_type=None):
        """The C value of the kernel struct (or `kernel_type`'s): the Fabric array's bucket rows and the index
        array."""
        c = (kernel_type or self._wp_indexed_struct_)._ctype_()
        if self.is_annotation:
            return c
        self._fill_ctype(c, self.fa)
        view = self.indices._np
        c.indices.data, c.indices.shape[0], c.indices.strides[0] = view.ctypes.data, view.shape[0], view.strides[0]
        return c

    def _positions(self) -> np.ndarray:
        return np.asarray(self.indices.numpy(), dtype=np.int64)

    def _host(self) -> np.ndarray:
        if self.is_annotation:
            raise RuntimeError("an indexedfabricarray annotation has no values")
        self._jagged("Copying to/from Fabric arrays of arrays is not supported")
        return np.ascontiguousarray(self.fa._host()[self._positions()])

    def _write(self, values) -> None:
        self.fa._scatter(self._positions(), values)


def indexedfabricarrayarray(**kwargs):
    """An indexed Fabric array of arrays: `wp.indexedfabricarray(..., ndim=2)`."""
    kwargs["ndim"] = 2
    return indexedfabricarray(**kwargs)


__all__ = ["fabricarray", "fabricarrayarray", "indexedfabricarray", "indexedfabricarrayarray"]
