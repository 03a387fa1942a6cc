"""XLA's FFI call frame in ctypes (xla/ffi/api/c_api.h): what an FFI handler registered through
`jax.ffi.register_ffi_target` receives, and the few API calls it makes (errors, stream, device ordinal).

Only the parts a handler reads are typed; the rest of the API table is opaque pointers. The layouts follow
the C header field for field: XLA hands the handler a pointer to an XLA_FFI_CallFrame.
"""

from __future__ import annotations

import ctypes
import enum

import numpy as np

from mlwarp.core import types as wt

API_VERSION = (0, 1)  # the FFI API version our handlers declare (XLA accepts 0.1 and newer)


class ExtensionType(enum.IntEnum):
    METADATA = 1


class ExecutionStage(enum.IntEnum):
    INSTANTIATE = 0
    PREPARE = 1
    INITIALIZE = 2
    EXECUTE = 3


class DataType(enum.IntEnum):
    INVALID = 0
    PRED = 1
    S8 = 2
    S16 = 3
    S32 = 4
    S64 = 5
    U8 = 6
    U16 = 7
    U32 = 8
    U64 = 9
    F16 = 10
    F32 = 11
    F64 = 12
    C64 = 15
    BF16 = 16
    TOKEN = 17
    C128 = 18


class AttrType(enum.IntEnum):
    ARRAY = 1
    DICTIONARY = 2
    SCALAR = 3
    STRING = 4


class ErrorCode(enum.IntEnum):
    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    FAILED_PRECONDITION = 9
    UNIMPLEMENTED = 12
    INTERNAL = 13


COMMAND_BUFFER_COMPATIBLE = 1  # XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE: safe to record in a CUDA graph

# numpy dtypes of XLA's element types (bfloat16 as its bits: numpy has no bfloat16)
NUMPY_DTYPES = {DataType.PRED: np.bool_, DataType.S8: np.int8, DataType.S16: np.int16, DataType.S32: np.int32,
                DataType.S64: np.int64, DataType.U8: np.uint8, DataType.U16: np.uint16, DataType.U32: np.uint32,
                DataType.U64: np.uint64, DataType.F16: np.float16, DataType.F32: np.float32,
                DataType.F64: np.float64, DataType.BF16: np.uint16, DataType.C64: np.complex64,
                DataType.C128: np.complex128}

# Warp scalar types of XLA's element types
WARP_TYPES = {DataType.PRED: wt.bool_, DataType.S8: wt.int8, DataType.S16: wt.int16, DataType.S32: wt.int32,
              DataType.S64: wt.int64, DataType.U8: wt.uint8, DataType.U16: wt.uint16, DataType.U32: wt.uint32,
              DataType.U64: wt.uint64, DataType.F16: wt.float16, DataType.F32: wt.float32,
              DataType.F64: wt.float64, DataType.BF16: wt.bfloat16}


class ExtensionBase(ctypes.Structure):
    pass


ExtensionBase._fields_ = [("struct_size", ctypes.c_size_t), ("type", ctypes.c_int),
                          ("next", ctypes.POINTER(ExtensionBase))]
_NO_EXTENSION = ctypes.POINTER(ExtensionBase)


class Buffer(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", _NO_EXTENSION), ("dtype", ctypes.c_int),
                ("data", ctypes.c_void_p), ("rank", ctypes.c_int64), ("dims", ctypes.POINTER(ctypes.c_int64))]


class Args(ctypes.Structure):  # XLA_FFI_Args and XLA_FFI_Rets share this layout
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", _NO_EXTENSION), ("size", ctypes.c_int64),
                ("types", ctypes.POINTER(ctypes.c_int)), ("values", ctypes.POINTER(ctypes.c_void_p))]


class ByteSpan(ctypes.Structure):
    _fields_ = [("ptr", ctypes.POINTER(ctypes.c_char)), ("len", ctypes.c_size_t)]


class Scalar(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("value", ctypes.c_void_p)]


class Array(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("size", ctypes.c_size_t), ("data", ctypes.c_void_p)]


class Attrs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", _NO_EXTENSION), ("size", ctypes.c_int64),
                ("types", ctypes.POINTER(ctypes.c_int)), ("names", ctypes.POINTER(ctypes.POINTER(ByteSpan))),
                ("attrs", ctypes.POINTER(ctypes.c_void_p))]


class ApiVersion(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", _NO_EXTENSION),
                ("major_version", ctypes.c_int), ("minor_version", ctypes.c_int)]


class Metadata(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("api_version", ApiVersion), ("traits", ctypes.c_uint32)]


class MetadataExtension(ctypes.Structure):
    _fields_ = [("extension_base", ExtensionBase), ("metadata", ctypes.POINTER(Metadata))]


class ErrorCreateArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", _NO_EXTENSION),
                ("message", ctypes.c_char_p), ("errc", ctypes.c_int)]


class StreamGetArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", _NO_EXTENSION), ("ctx", ctypes.c_void_p),
                ("stream", ctypes.c_void_p)]


class DeviceOrdinalGetArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", _NO_EXTENSION), ("ctx", ctypes.c_void_p),
                ("device_ordinal", ctypes.c_int32)]


ErrorCreate = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(ErrorCreateArgs))
StreamGet = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(StreamGetArgs))
DeviceOrdinalGet = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(DeviceOrdinalGetArgs))

# XLA_FFI_Api: the function table, in the header's order (only the entries called here are typed)
_API_ENTRIES = ("Error_Create", "Error_GetMessage", "Error_Destroy", "Handler_Register", "Stream_Get",
                "TypeId_Register", "ExecutionContext_Get", "State_Set", "State_Get", "DeviceMemory_Allocate",
                "DeviceMemory_Free", "ThreadPool_Schedule", "ThreadPool_NumThreads", "Future_Create",
                "Future_SetAvailable", "Future_SetError", "RunId_Get", "DeviceOrdinal_Get")
_TYPED_ENTRIES = {"Error_Create": ErrorCreate, "Stream_Get": StreamGet, "DeviceOrdinal_Get": DeviceOrdinalGet}


class Api(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", _NO_EXTENSION), ("api_version", ApiVersion),
                ("internal_api", ctypes.c_void_p)] + \
               [(name, _TYPED_ENTRIES.get(name, ctypes.c_void_p)) for name in _API_ENTRIES]


class CallFrame(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", _NO_EXTENSION), ("api", ctypes.POINTER(Api)),
                ("ctx", ctypes.c_void_p), ("stage", ctypes.c_int), ("args", Args), ("rets", Args),
                ("attrs", Attrs), ("future", ctypes.c_void_p)]


# the C signature of an FFI handler: XLA_FFI_Error* handler(XLA_FFI_CallFrame*)
Handler = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(CallFrame))


# -- reading a call frame ---------------------------------------------------------------------------------------
def answer_metadata_query(frame: CallFrame, command_buffer_compatible: bool) -> bool:
    """XLA first calls a handler with a metadata extension (at registration) to learn its API version and
    traits; True when this call was that query (answered), False for a real call."""
    extension = frame.extension_start
    if not extension or extension.contents.type != ExtensionType.METADATA:
        return False
    metadata = ctypes.cast(extension, ctypes.POINTER(MetadataExtension)).contents.metadata.contents
    metadata.api_version.major_version, metadata.api_version.minor_version = API_VERSION
    metadata.traits = COMMAND_BUFFER_COMPATIBLE if command_buffer_compatible else 0
    return True


def buffers(args: Args) -> list:
    """The XLA_FFI_Buffer structures of the frame's arguments or results."""
    pointers = ctypes.cast(args.values, ctypes.POINTER(ctypes.POINTER(Buffer)))
    return [pointers[i].contents for i in range(args.size)]


def buffer_shape(buffer: Buffer) -> tuple:
    return tuple(buffer.dims[i] for i in range(buffer.rank))


def _text(span: ByteSpan) -> str:
    return ctypes.string_at(span.ptr, span.len).decode("utf-8")


def _scalar(scalar: Scalar):
    dtype = np.dtype(NUMPY_DTYPES[DataType(scalar.dtype)])
    return np.frombuffer(ctypes.string_at(scalar.value, dtype.itemsize), dtype=dtype).reshape(())


def _array(array: Array):
    dtype = np.dtype(NUMPY_DTYPES[DataType(array.dtype)])
    return np.frombuffer(ctypes.string_at(array.data, dtype.itemsize * array.size), dtype=dtype)


def decode_attrs(attrs: Attrs) -> dict:
    """The call's attributes (the keyword arguments of the `jax.ffi.ffi_call`): scalars as 0-d numpy arrays,
    arrays as numpy arrays, strings, nested dictionaries."""
    out = {}
    for i in range(attrs.size):
        kind, where = AttrType(attrs.types[i]), attrs.attrs[i]
        if kind == AttrType.STRING:
            value = _text(ctypes.cast(where, ctypes.POINTER(ByteSpan)).contents)
        elif kind == AttrType.SCALAR:
            value = _scalar(ctypes.cast(where, ctypes.POINTER(Scalar)).contents)
        elif kind == AttrType.ARRAY:
            value = _array(ctypes.cast(where, ctypes.POINTER(Array)).contents)
        else:
            value = decode_attrs(ctypes.cast(where, ctypes.POINTER(Attrs)).contents)
        out[_text(attrs.names[i].contents)] = value
    return out


def error(frame: CallFrame, code: ErrorCode, message: str):
    """An XLA_FFI_Error* for the handler to return: XLA raises it as the call's error."""
    args = ErrorCreateArgs(ctypes.sizeof(ErrorCreateArgs), _NO_EXTENSION(), message.encode("utf-8"), int(code))
    return frame.api.contents.Error_Create(ctypes.byref(args))


def stream(frame: CallFrame) -> int | None:
    """The platform stream XLA runs the call on (a CUstream on CUDA)."""
    args = StreamGetArgs(ctypes.sizeof(StreamGetArgs), _NO_EXTENSION(), frame.ctx, None)
    if frame.api.contents.Stream_Get(ctypes.byref(args)):
        raise RuntimeError("XLA could not give the FFI call's stream")
    return args.stream


def device_ordinal(frame: CallFrame) -> int:
    args = DeviceOrdinalGetArgs(ctypes.sizeof(DeviceOrdinalGetArgs), _NO_EXTENSION(), frame.ctx, 0)
    if frame.api.contents.DeviceOrdinal_Get(ctypes.byref(args)):
        raise RuntimeError("XLA could not give the FFI call's device ordinal")
    return args.device_ordinal


class FfiBuffer:
    """One argument or result buffer of a call, as `register_ffi_callback` functions receive it: `dtype`,
    `shape`, `data` (the address), and the array interface of its platform (`__array_interface__` on the CPU,
    `__cuda_array_interface__` on CUDA), so that it goes straight into `wp.launch` or numpy."""

    def __init__(self, buffer: Buffer, on_cuda: bool):
        self.dtype = np.dtype(NUMPY_DTYPES[DataType(buffer.dtype)])
        self.shape = buffer_shape(buffer)
        self.data = buffer.data or 0
        self._on_cuda = on_cuda

    def _interface(self) -> dict:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.data, False), "version": 3}

    @property
    def __array_interface__(self):
        if self._on_cuda:
            raise AttributeError("a CUDA buffer has no __array_interface__")
        return self._interface()

    @property
    def __cuda_array_interface__(self):
        if not self._on_cuda:
            raise AttributeError("a CPU buffer has no __cuda_array_interface__")
        return {**self._interface(), "stream": None}

    def __repr__(self):
        return f"FfiBuffer(shape={self.shape}, dtype={self.dtype}, {'cuda' if self._on_cuda else 'cpu'})"


class ExecutionContext:
    """What a `register_ffi_callback` function learns of the call: `stage`, `platform` ("cpu" or "CUDA") and
    `stream` (XLA's CUDA stream; None on the CPU)."""

    def __init__(self, frame: CallFrame, platform: str):
        self.stage = ExecutionStage(frame.stage)
        self.platform = platform
        self.stream = stream(frame) if platform == "CUDA" else None
