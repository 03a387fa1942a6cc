"""How Python data becomes a wp.array's storage: element types as numpy dtypes plus element dimensions, values
converted for assignment and filling (bfloat16 as bit patterns, vectors, matrices, structs), data from lists,
numpy arrays and tensors shaped as Warp reads them, and aligned zeroed buffers. Below wp.array: it knows arrays
only by their `_wp_array_` marker."""

from __future__ import annotations

import math
import warnings

import numpy as np

from mlwarp.core import types as _t
from mlwarp.arrays.paddle_tensors import is_paddle_tensor, paddle_cpu_view
from mlwarp.arrays.torch_tensors import cpu_tensor_view, is_torch_tensor


def _is_wp_array(x) -> bool:
    return getattr(type(x), "_wp_array_", False) is True and not x.is_annotation


# ----------------------------------------------------------------------------
# element types: scalars map to one numpy dtype; vector/matrix types (when the
# language defines them) to a numpy dtype plus trailing element dimensions.
def bfloat16_storage(src: np.ndarray) -> np.ndarray:
    """Data for a bfloat16 array, which holds bit patterns: uint16 data are bit patterns already (what .numpy()
    of a bfloat16 array gives without ml_dtypes), ml_dtypes.bfloat16 data are viewed as theirs, numbers
    (floats, ints, bools) are rounded to them, as Warp does."""
    if _t.is_ml_bfloat16(src.dtype):
        return src.view(np.uint16)
    if src.dtype == np.uint16 or src.dtype.kind not in "fiub":
        return src
    return _t.float_to_bf16_bits(src.astype(np.float32))


def assign_values(src, wdt, storage: np.dtype) -> np.ndarray:
    """What array.assign(src) stores: an array's values, or numpy data / nested lists as an array of dtype
    `wdt` would hold them (`storage`)."""
    if _is_wp_array(src):
        return src._host()  # as stored: a bfloat16 source's bits
    if _t.scalar_type_of(wdt) is _t.bfloat16:
        return bfloat16_storage(np.asarray(src))
    return np.asarray(src, dtype=storage)


def held_instances(data) -> list:
    """The struct (or texture) instances in `data` (one, or nested lists of them). An array built or filled from
    them stores the descriptors of their arrays, not the arrays: it keeps the instances (and so those arrays and
    their gradients) alive as long as it lives."""
    if hasattr(type(data), "_wp_ctype_value_"):  # (the type's: a vector's own __getattr__ would look for a swizzle)
        return [data]
    if not isinstance(data, (list, tuple)):
        return []
    found = []
    for item in data:
        t = type(item)
        if t is float or t is int:
            continue
        if hasattr(t, "_wp_ctype_value_"):
            found.append(item)
        elif isinstance(item, (list, tuple)):
            found += held_instances(item)
    return found


def keep_instances(arr, data, dtype) -> None:
    """Adds the instances `data` holds (held_instances) to those the array `arr` of `dtype` keeps alive: none in an
    array of numbers, vectors or matrices (a list of 10,000 wp.vec3 was searched at ~2 us an item)."""
    if not _t.is_struct(dtype) and (_t.is_scalar(dtype) or _t.is_composite(dtype)):
        return
    held = held_instances(data)
    if held:
        arr._held = (arr._held or []) + held


def fill_values(value, wdt, storage: np.dtype):
    """`value` (a number, or a sequence for vector/matrix dtypes) as the numpy values an array of dtype `wdt`
    stores (`storage`): bfloat16 as its bit patterns, rounded to nearest even. A struct array takes an instance
    of its struct (its C bytes) or 0 (a default instance), as Warp's."""
    if _t.is_struct(wdt):
        if isinstance(value, wdt):
            return np.asarray(value.numpy_value())
        if not _t.is_composite(type(value)) and not hasattr(value, "__len__") and value == 0:
            return np.asarray(wdt().numpy_value())
        raise ValueError(f"Failed to convert the value to the array data type: Invalid initializer value for "
                         f"struct {wdt.__name__}, expected struct instance or 0")
    if isinstance(value, _t.scalar_base):
        value = value.value
    if _t.is_composite(type(value)) and not _t.is_struct(type(value)):
        value = _components(value)  # a vector/matrix instance by its values (its storage may be bit patterns)
    try:
        shape = _element_shape(wdt)
        if shape and not isinstance(value, (int, float)) and np.size(value) == int(np.prod(shape)):
            value = np.reshape(value, shape)  # a flat sequence of a matrix's size: its rows
        if _t.scalar_type_of(wdt) is _t.bfloat16:
            return _t.float_to_bf16_bits(np.asarray(value, dtype=np.float32))
        return np.asarray(value, dtype=storage)
    except (TypeError, ValueError) as e:
        raise ValueError(f"Failed to convert the value to the array data type: {e}") from None


def _components(value) -> list:
    """A vector's, matrix's, quaternion's or transform's components as Python numbers, flattened."""
    out = []
    for c in value:
        if _t.is_composite(type(c)):
            out += _components(c)
        else:
            out.append(c.value if isinstance(c, _t.scalar_base) else c)
    return out


# dtype -> (numpy dtype of its scalars, the shape an element adds): every array made asks (a training loop makes
# a few each step, wp.zeros(1, requires_grad=True): two), and a dtype's answer never changes
_ELEMENT_LAYOUTS: dict = {}


def _element_layout(wdt) -> tuple:
    try:
        return _ELEMENT_LAYOUTS[wdt]
    except KeyError:
        layout = _ELEMENT_LAYOUTS[wdt] = (_t.numpy_dtype(wdt), _t.inner_shape(wdt))
        return layout
    except TypeError:  # a dtype that does not hash
        return _t.numpy_dtype(wdt), _t.inner_shape(wdt)


def _element_numpy(wdt):
    return _element_layout(wdt)[0]


def _element_shape(wdt) -> tuple:
    return _element_layout(wdt)[1]


def _require_dtype(dtype):
    if dtype is None:
        raise TypeError("array dtype is required here")
    dtype = _t.array_element_type(dtype)  # wp.Texture2D: arrays hold its kernel struct
    wdt = _t.canonical_type(dtype)
    if wdt is None:
        raise TypeError(f"Unsupported array dtype {dtype!r}")
    return wdt


def _as_shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    if isinstance(shape, np.ndarray) and shape.ndim == 1:  # a numpy shape, e.g. another array's .shape as data
        shape = tuple(shape.tolist())
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"Invalid array shape {shape!r}: expected an int or a tuple of ints")
    shape = tuple(shape)
    for d, s in enumerate(shape):
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"Invalid array shape {shape}: dimension {d} is not an int")
        if s < 0:
            raise ValueError(f"Array shapes must be non-negative, got {s} in dimension {d}")
    return tuple(int(s) for s in shape)


def _source_numpy(data):
    """`data` as a numpy array without copying where possible (wp.array, numpy, array protocols, lists)."""
    if _is_wp_array(data):
        return data._values()  # bfloat16 as values (with ml_dtypes): converted as numbers to another dtype
    if isinstance(data, np.ndarray):
        return data
    if isinstance(data, (bool, int, float, complex, np.generic, _t.scalar_base)):
        raise RuntimeError(f"Data must be a sequence or array, got scalar {data!r}")
    if is_torch_tensor(data):  # also tensors that require grad, which refuse __array__
        return cpu_tensor_view(data)
    if is_paddle_tensor(data):  # its memory: paddle's __array__ is a copy nothing keeps alive (paddle_tensors.py)
        return paddle_cpu_view(data)
    if hasattr(data, "__cuda_array_interface__") and not hasattr(data, "__array_interface__"):
        raise RuntimeError("Data with __cuda_array_interface__ lives on a CUDA device; it cannot become a CPU array")
    try:
        return np.asarray(data)
    except (TypeError, ValueError) as e:
        raise RuntimeError(f"Failed to convert input data to an array: {e}") from None


def _from_data(data, dtype, shape, copy):
    element = getattr(dtype, "_wp_array_element_", None)
    if element is not None and isinstance(data, (list, tuple)):  # textures: their kernel structs' C bytes
        data = np.array([np.frombuffer(bytes(x._wp_ctype_value_()), dtype=element._np_)[0]
                         for x in data], dtype=element._np_)
        dtype = element
    if _t.is_struct(dtype) and isinstance(data, (list, tuple)):  # struct instances: their C bytes
        data = np.array([x.numpy_value() for x in data], dtype=dtype._np_)
    src = _source_numpy(data)
    if dtype is None:
        try:
            wdt = _t.dtype_from_numpy(src.dtype)
        except TypeError:
            raise RuntimeError(f"Failed to convert input data to an array: unsupported numpy dtype {src.dtype}") \
                from None
    else:
        wdt = _require_dtype(dtype)
    np_dt = _element_numpy(wdt)
    if _t.scalar_type_of(wdt) is _t.bfloat16:
        src = bfloat16_storage(src)
    try:
        converted = np.asarray(src, dtype=np_dt)
    except (TypeError, ValueError) as e:
        raise RuntimeError(f"Failed to convert input data to an array: {e}") from None
    if shape is None:
        converted = _with_element_shape(converted, wdt)
    view = converted
    if copy:
        view = _aligned_zeros(converted.shape, np_dt)
        view[...] = converted
    if shape is not None:
        view = view.reshape(_as_shape(shape) + _element_shape(wdt))
    return view, wdt


def _with_element_shape(data: np.ndarray, wdt) -> np.ndarray:
    """Numpy data for an array of vectors or matrices, as Warp reads it: trailing dimensions equal to the
    element's shape are the elements; else a last dimension of the element's length (or a multiple of it) is
    split into elements. A single element becomes an array of one."""
    inner = _element_shape(wdt)
    if not inner or _t.is_struct(wdt):
        return data
    if data.ndim >= len(inner) and data.shape[data.ndim - len(inner):] == inner:
        return data.reshape((1,) + inner) if data.ndim == len(inner) else data
    length = int(np.prod(inner))
    if data.ndim >= 1 and data.shape[-1] % length == 0:
        if data.shape[-1] == length:
            outer = data.shape[:-1] or (1,)
        else:
            outer = data.shape[:-1] + (data.shape[-1] // length,)
        return data.reshape(outer + inner)
    raise RuntimeError(f"The shape of the input array {data.shape} is not compatible with the requested data type "
                       f"{_t.type_repr(wdt)}")


ALIGNMENT = 64  # bytes: a cache line, and what XLA needs to share a buffer with JAX without copying


def _contiguous_strides(shape, itemsize) -> tuple:
    """Byte strides of a C-contiguous layout of `shape`, as Warp computes them (a zero dimension included)."""
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _aligned_zeros(shape, np_dtype) -> np.ndarray:
    """A zeroed C-contiguous array whose data starts on an ALIGNMENT boundary (numpy only promises 16)."""
    np_dtype = np.dtype(np_dtype)
    nbytes = math.prod(shape) * np_dtype.itemsize
    raw = np.zeros(nbytes + ALIGNMENT, dtype=np.uint8)
    start = (-raw.ctypes.data) % ALIGNMENT
    out = raw[start:start + nbytes].view(np_dtype).reshape(shape)
    if nbytes == 0:  # Warp's strides for an empty array: C order with the zero dimensions counted (numpy skips them)
        out = np.lib.stride_tricks.as_strided(out, strides=_contiguous_strides(shape, np_dtype.itemsize),
                                              writeable=True)
    return out


BFLOAT16_NUMPY_WARNING = (
    "bfloat16 arrays are returned as np.uint16 (raw bit representation) because NumPy does not natively support "
    "bfloat16. Use wp.to_torch() or wp.to_jax() for frameworks that support bfloat16 natively, or install "
    "ml-dtypes for a NumPy bfloat16 dtype.")  # Warp 1.19's text
_bfloat16_warned = False


def shown_numpy(storage: np.ndarray, dtype, warn: bool = True) -> np.ndarray:
    """What .numpy() of an array (or indexed array) of `dtype` whose data is `storage` gives: bfloat16 as
    ml_dtypes.bfloat16 values, or without ml_dtypes the bits and Warp's warning, once per process as Warp's."""
    global _bfloat16_warned
    shown = _t.bfloat16_shown(storage, dtype)
    if warn and shown is storage and _t.scalar_type_of(dtype) is _t.bfloat16 and not _bfloat16_warned:
        _bfloat16_warned = True
        warnings.warn(BFLOAT16_NUMPY_WARNING, UserWarning, stacklevel=3)
    return shown


def view_layout(a, wdt) -> tuple:
    """(shape, byte strides) of `a.view(wdt)`, or Warp's TypeError / RuntimeError."""
    size, src = _t.type_size_in_bytes, a.dtype
    src_inner, dst_inner = _element_shape(src), _element_shape(wdt)

    def refuse(src_what, dst_what):
        return TypeError(f"cannot create an array view with dtype {_t.type_repr(wdt)} from source dtype "
                         f"{_t.type_repr(src)}: {src_what}, but {dst_what}")

    if size(wdt) == size(src):
        return a.shape, a.strides
    if _t.is_scalar(wdt) and src_inner:  # vectors/matrices as their scalars
        scalar = _t.scalar_type_of(src)
        if size(wdt) != size(scalar):
            raise refuse(f"source scalar dtype {_t.type_repr(scalar)} has size {size(scalar)} bytes",
                         f"target dtype has size {size(wdt)} bytes")
        return a.shape + src_inner, a.strides + _contiguous_strides(src_inner, size(scalar))
    if _t.is_scalar(src) and dst_inner:  # scalars as vectors/matrices
        scalar = _t.scalar_type_of(wdt)
        if size(src) != size(scalar):
            raise refuse(f"source dtype has size {size(src)} bytes",
                         f"target scalar dtype {_t.type_repr(scalar)} has size {size(scalar)} bytes")
        k = len(dst_inner)
        if a.ndim < k or a.shape[-k:] != dst_inner:
            raise RuntimeError(f"The shape of the source array {a.shape} is not compatible with the requested data "
                               f"type {_t.type_repr(wdt)}")
        if a.strides[-k:] != _contiguous_strides(dst_inner, size(scalar)):
            raise RuntimeError(f"The inner strides of the source array {a.strides} are not compatible with the "
                               f"requested data type {_t.type_repr(wdt)}")
        return a.shape[:-k] or (1,), a.strides[:-k] or (size(wdt),)
    raise refuse(f"source dtype has size {size(src)} bytes", f"target dtype has size {size(wdt)} bytes")
