"""The DLPack ABI with ctypes (legacy `dltensor` and versioned `dltensor_versioned` capsules): its structures,
dtype and device codes, consuming a producer's capsule, and exporting the memory of a wp.array (`to_dlpack`,
which wp.array.__dlpack__ uses; python/mlwarp/interop/dlpack.py builds wp.arrays from imported tensors).

Import: the capsule is renamed `used_dltensor` (we own it now) and the producer's deleter runs when the last
view of the memory is gone. Export: the DLManagedTensor and the exported array stay alive in `_exported` until
the consumer calls our deleter, or until the capsule dies unconsumed.
"""

from __future__ import annotations

import ctypes

from mlwarp.core import types as wt
from .device import get_device

# DLDeviceType
CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13
# DLDataTypeCode
_INT, _UINT, _FLOAT, _OPAQUE, _BFLOAT, _COMPLEX, _BOOL = 0, 1, 2, 3, 4, 5, 6
_CODE_NAMES = {_INT: "int", _UINT: "uint", _FLOAT: "float", _OPAQUE: "void_p", _BFLOAT: "bfloat",
               _COMPLEX: "complex", _BOOL: "bool"}

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    """DLPack 1.x: consumers such as numpy import these writable (legacy capsules come in read-only)."""
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_FLAG_READ_ONLY = 1
_CAPSULE = b"dltensor"
_USED_CAPSULE = b"used_dltensor"
_CAPSULE_V = b"dltensor_versioned"
_USED_CAPSULE_V = b"used_dltensor_versioned"

# a handle of our own on the Python C API: ctypes.pythonapi's function objects are shared, and other libraries set
# their argtypes (jax.ffi.pycapsule gives PyCapsule_New its own destructor type, after which our calls would fail)
_api = ctypes.PyDLL(ctypes.pythonapi._name, handle=ctypes.pythonapi._handle)
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_New.restype = ctypes.py_object
class _PyCapsule(ctypes.Structure):
    """CPython's capsule object layout: the destructor reads the dying capsule through it, without C API calls.
    Known limit: a Python destructor cannot run cleanly while an exception is pending (a consumer that
    refused the capsule, e.g. mpi4py given a strided view); the consumer's error then surfaces as a
    SystemError whose cause is the consumer's exception. A C destructor (as numpy's) would avoid it."""
    _fields_ = [("ob_refcnt", ctypes.c_ssize_t), ("ob_type", ctypes.c_void_p), ("pointer", ctypes.c_void_p),
                ("name", ctypes.c_char_p), ("context", ctypes.c_void_p), ("destructor", ctypes.c_void_p)]


_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.POINTER(_PyCapsule))
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CapsuleDestructor]


# -- dtypes and devices ---------------------------------------------------------
def dl_code(t) -> int:
    if t is wt.bool_:
        return _BOOL
    if t is getattr(wt, "bfloat16", None):
        return _BFLOAT
    return {"int": _INT, "uint": _UINT, "float": _FLOAT}[t._kind_]


def dtype_name(dl: DLDataType) -> str:
    """A DLPack dtype as Warp's messages write it: `bool8`, `float32`, `int16x4` (lanes)."""
    name = f"{_CODE_NAMES.get(dl.code, f'code{dl.code}')}{dl.bits}"
    return f"{name}x{dl.lanes}" if dl.lanes > 1 else name


def dtype_from_dlpack(dl: DLDataType):
    """The Warp scalar type of a DLPack dtype's lanes (Warp's choice and errors)."""
    if dl.code == _UINT and dl.bits == 1:
        raise RuntimeError("Warp does not support bit boolean types")
    if dl.code == _BOOL and dl.bits == 8:
        return wt.bool_
    if dl.code == _COMPLEX:
        raise RuntimeError("Warp does not support complex types")
    for t in wt.scalar_types:
        if t is not wt.bool_ and dl_code(t) == dl.code and t._bits_ == dl.bits:
            return t
    raise RuntimeError(f"Unknown DLPack datatype {(dl.code, dl.bits)}")


def dtype_is_compatible(dl: DLDataType, t) -> bool:
    """Whether DLPack elements of `dl` may be viewed as the Warp scalar type `t`: the same type, or, as Warp
    allows, int and uint of one width as each other and bool8 as int8 or uint8."""
    if dl.bits % 8:
        raise RuntimeError("Data types with less than 8 bits are not supported")
    if dl.code == _BOOL:
        return dl.bits == 8 and t in (wt.bool_, wt.int8, wt.uint8)
    if dl.code in (_INT, _UINT):
        return t is not wt.bool_ and wt.is_int(t) and t._bits_ == dl.bits
    if dl.code in (_FLOAT, _BFLOAT):
        return t is dtype_from_dlpack(dl)
    if dl.code == _COMPLEX:
        raise RuntimeError("Complex data types are not supported")
    raise RuntimeError(f"Unsupported DLPack dtype {(_CODE_NAMES.get(dl.code, str(dl.code)), dl.bits)}")


def device_to_dlpack(device) -> tuple:
    """`(device_type, device_id)` of a Warp device, as `__dlpack_device__` returns it."""
    if device.is_cpu:
        return (CPU, 0)
    if device.is_cuda:
        return (CUDA, int(str(device).split(":")[1]) if ":" in str(device) else 0)
    raise RuntimeError(f"Device {device} has no DLPack device type")


def device_from_dlpack(device_type: int, device_id: int):
    if device_type in (CPU, CUDA_HOST):
        return get_device("cpu")
    if device_type in (CUDA, CUDA_MANAGED):
        return get_device(f"cuda:{device_id}")
    raise RuntimeError(f"Unknown device type from DLPack: {device_type}")


# -- import ---------------------------------------------------------------------------
class ImportedTensor:
    """Owns a consumed (versioned or legacy) managed tensor: calls the producer's deleter when collected."""

    def __init__(self, managed):
        self.managed = managed

    def __del__(self):
        if self.managed.deleter:
            self.managed.deleter(ctypes.addressof(self.managed))


def peek(capsule):
    """(managed tensor, read-only flag) of an unconsumed capsule, left unconsumed: a tensor the caller refuses
    stays the capsule's to free. TypeError, as Warp's, for anything else (a used capsule among them)."""
    if type(capsule).__name__ == "PyCapsule":
        if _api.PyCapsule_IsValid(capsule, _CAPSULE_V):
            managed = DLManagedTensorVersioned.from_address(_api.PyCapsule_GetPointer(capsule, _CAPSULE_V))
            if managed.version.major != 1:
                raise BufferError(f"DLPack version {managed.version.major}.{managed.version.minor} is not supported")
            return managed, bool(managed.flags & _FLAG_READ_ONLY)
        if _api.PyCapsule_IsValid(capsule, _CAPSULE):
            return DLManagedTensor.from_address(_api.PyCapsule_GetPointer(capsule, _CAPSULE)), False
        raise TypeError("Expected a valid DLPack capsule, got PyCapsule: it has already been consumed or is not a "
                        "'dltensor'")
    raise TypeError(f"Expected a valid DLPack capsule, got {type(capsule).__name__}")


def consume(capsule):
    """Renames a capsule `peek` accepted as used: its tensor is ours to release from now on."""
    used = _USED_CAPSULE_V if _api.PyCapsule_IsValid(capsule, _CAPSULE_V) else _USED_CAPSULE
    _api.PyCapsule_SetName(capsule, used)


# -- export ---------------------------------------------------------------------------
_exported: dict[int, tuple] = {}


@_Deleter
def _release(address):
    _exported.pop(address, None)


def _destructor(name):
    @_CapsuleDestructor
    def destroy(capsule):
        # a capsule never consumed still carries its original name: release what it holds
        c = capsule.contents
        if c.name == name:
            _exported.pop(c.pointer, None)
    return destroy


_legacy_destructor = _destructor(_CAPSULE)
_versioned_destructor = _destructor(_CAPSULE_V)


def to_dlpack(wp_array, versioned=False):
    """`wp.to_dlpack`: a DLPack capsule for wp.array `wp_array` (shares its memory; it stays alive until the
    consumer is done). A legacy `dltensor` capsule, as Warp's, unless `versioned` (DLPack 1.0)."""
    a = wp_array
    if not wt.is_array(a) or a.is_annotation:
        raise TypeError(f"to_dlpack expects a wp.array, got {type(a).__name__}")
    scalar = wt.scalar_type_of(a.dtype)
    if wt.is_struct(a.dtype):
        raise BufferError(f"to_dlpack: arrays of structs ({wt.type_name(a.dtype)}) have no DLPack dtype")
    view = a._np  # the geometry (a CUDA array keeps its device address here); vector elements: trailing dims
    item = view.itemsize
    if any(s % item for s in view.strides):
        raise BufferError("to_dlpack: strides that are not a multiple of the element size cannot be exported")
    shape = (ctypes.c_int64 * view.ndim)(*view.shape)
    strides = (ctypes.c_int64 * view.ndim)(*(s // item for s in view.strides))
    managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    if versioned:
        managed.version = DLPackVersion(1, 0)
        managed.flags = 0 if view.flags.writeable else _FLAG_READ_ONLY
    t = managed.dl_tensor
    t.data = a.ptr if view.size else None
    t.device = DLDevice(*device_to_dlpack(a.device))
    t.ndim = view.ndim
    t.dtype = DLDataType(dl_code(scalar), scalar._bits_, 1)
    t.shape = shape
    t.strides = strides
    t.byte_offset = 0
    managed.deleter = _release
    address = ctypes.addressof(managed)
    _exported[address] = (managed, shape, strides, a, view)
    if versioned:
        return _api.PyCapsule_New(address, _CAPSULE_V, _versioned_destructor)
    return _api.PyCapsule_New(address, _CAPSULE, _legacy_destructor)


def check_export_device(a, dl_device) -> None:
    """`wp.array.__dlpack__(dl_device=...)`: only the array's own device."""
    if dl_device is not None and tuple(dl_device) != device_to_dlpack(a.device):
        raise BufferError(f"__dlpack__: the array is on {a.device}; cannot export to DLPack device {dl_device}")
