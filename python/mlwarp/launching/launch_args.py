"""The checks and packing of wp.launch's arguments, shared by every launch path: wp.launch (launch.py), the
planned fast path (launch_plan.py, which falls back to these checks for anything unusual), CUDA launches
(cuda_launch.py) and adjoint launches (adjoint.py).

All checks run before anything is packed or launched, and every error names the kernel and the argument, as
Warp's do. Each check is its own function so that each launch path reuses them.
"""

from __future__ import annotations

import ctypes

import numpy as np

from mlwarp.core import types as wt
from mlwarp.arrays.array import array
from mlwarp.errors import LaunchError
from mlwarp.runtime.abi import ArrayParam, descriptor
from mlwarp.runtime.device import get_device
from mlwarp.arrays.paddle_tensors import is_paddle_tensor, paddle_cpu_view, tensor_device_name as paddle_device_name
from mlwarp.arrays.torch_tensors import cpu_tensor_view, is_torch_tensor
from mlwarp.core.vector import as_argument


def _prefix(kernel) -> str:
    return f"Error launching kernel '{kernel.key}'"


def launch_dims(dim, kernel=None) -> tuple:
    """`dim` as a tuple of 1 to 4 non-negative ints."""
    if type(dim) is int and dim >= 0:  # the common cases, without the checks' generators (every launch comes here)
        return (dim,)
    if type(dim) is tuple and 1 <= len(dim) <= 4 and all(type(d) is int and d >= 0 for d in dim):
        return dim
    where = _prefix(kernel) + ": " if kernel is not None else ""
    dims = (dim,) if not isinstance(dim, (tuple, list)) else tuple(dim)
    if not 1 <= len(dims) <= 4 or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                                          for d in dims):
        raise LaunchError(f"{where}dim must be an int or a tuple of 1 to 4 ints, got {dim!r}")
    if any(d < 0 for d in dims):
        raise LaunchError(f"{where}launch dimensions must be non-negative, got {dim!r}")
    return tuple(int(d) for d in dims)


def fold_dims(dims: tuple, total: int, tid_count: int) -> tuple:
    """(dims, total, repeats) for a kernel whose widest `wp.tid()` gives `tid_count` indices (0: none) launched
    over the 4 `dims`. Warp's rule: wp.tid() gives a thread's leading indices, so the threads that differ only
    in the dimensions past them share their indices; those run as `repeats` launches over the leading
    dimensions (each of the shared indices once per launch)."""
    if 0 < tid_count < 4:
        repeats = 1
        for d in dims[tid_count:]:
            repeats *= d
        if repeats > 1:
            return tuple(dims[:tid_count]) + (1,) * (4 - tid_count), total // repeats, repeats
    return dims, total, 1


def check_arg_count(kernel, args) -> None:
    if len(args) != len(kernel.params):
        raise LaunchError(f"{_prefix(kernel)}, passed {len(args)} arguments but kernel requires "
                          f"{len(kernel.params)}.")


def launch_device(kernel, device):
    try:
        return get_device(device)
    except ValueError as e:
        raise LaunchError(f"{_prefix(kernel)}: {e}") from None


# -- array arguments ----------------------------------------------------------
def host_view(value):
    """The numpy view of an array argument on the CPU: a wp.array, a numpy array, a torch or paddle tensor (their
    memory, so that a kernel's writes reach them), or any object with `__array_interface__` / `__array__`; None
    when `value` is not an array."""
    if isinstance(value, array):
        return None if value.is_annotation else value._np  # storage view: a CUDA array's holds the device address
    if isinstance(value, np.ndarray):
        return value
    if is_torch_tensor(value):
        return cpu_tensor_view(value)
    if is_paddle_tensor(value):  # (its __array__ is a copy in memory nothing keeps alive: paddle_tensors.py)
        return paddle_cpu_view(value)
    if hasattr(value, "__array_interface__") or hasattr(value, "__array__"):
        return np.asarray(value)
    return None


def _value_device(value) -> str:
    if isinstance(value, array):
        return str(value.device)
    if is_torch_tensor(value):
        return str(value.device)
    if is_paddle_tensor(value):
        return paddle_device_name(value)
    if hasattr(value, "__cuda_array_interface__") and not hasattr(value, "__array_interface__"):
        return "cuda"
    return "cpu"


def check_array_arg(kernel, name, p: ArrayParam, value, device) -> np.ndarray:
    """The host view of `value` after checking its kind, device, dtype and ndim against `p`."""
    if type(value) is array and value.device is device and value.dtype is p.dtype and value.ndim == p.ndim:
        view = value._np  # a wp.array of the parameter's own dtype and ndim: its storage view passes every check
        if view is not None:
            return view
    where = f"{_prefix(kernel)}, argument '{name}'"
    if value is None:  # Warp's null array: no elements (packed with a null data pointer, as empty arrays are)
        return np.zeros((0,) * p.ndim + wt.inner_shape(p.dtype), dtype=wt.numpy_dtype(p.dtype))
    on = _value_device(value)
    if on != str(device):
        raise LaunchError(f"{where} is an array on device '{on}' but the kernel is launched on device "
                          f"'{device}'.")
    view = host_view(value)
    if view is None:
        raise LaunchError(f"{where} expects an array of type {_describe(p)}, but passed value has type "
                          f"{type(value).__name__}.")
    elem_shape = wt.inner_shape(p.dtype)
    ndim = view.ndim - len(elem_shape)
    want = wt.numpy_dtype(p.dtype)
    if wt.scalar_type_of(p.dtype) is wt.bfloat16 and wt.is_ml_bfloat16(view.dtype):
        view = view.view(np.uint16)  # numpy data of ml_dtypes.bfloat16: the bits a bfloat16 array holds
    got_dtype = value.dtype if isinstance(value, array) else None
    if view.dtype != want or (got_dtype is not None and got_dtype is not p.dtype) or \
            (elem_shape and view.shape[ndim:] != elem_shape):
        got = wt.type_name(got_dtype) if got_dtype is not None else str(view.dtype)
        raise LaunchError(f"{where} expects an array with dtype={wt.type_name(p.dtype)} but passed array has "
                          f"dtype={got}.")
    if ndim != p.ndim:
        raise LaunchError(f"{where} expects an array with {p.ndim} dimension(s) but the passed array has "
                          f"{ndim} dimension(s).")
    return view


def check_descriptor_arg(kernel, name, p: ArrayParam, value) -> None:
    """A launch descriptor (`wp.from_torch(t, return_ctype=True)`) carries no dtype: only its rank is checked."""
    if type(value) is not descriptor(p.ndim):
        raise LaunchError(f"{_prefix(kernel)}, argument '{name}' expects an array of type {_describe(p)}, but "
                          f"passed value is a {type(value).__name__} descriptor.")


def pack_array(view: np.ndarray, ndim: int, slot) -> None:
    slot.data = view.ctypes.data if view.size else 0  # an empty array is null in a kernel, as Warp's (no allocation)
    for d in range(ndim):
        slot.shape[d] = view.shape[d]
        slot.strides[d] = view.strides[d]


# -- scalar arguments ---------------------------------------------------------
def check_scalar_arg(kernel, name, t, value):
    """`value` converted for a scalar parameter of type `t`: ints only for int parameters (no floats, as
    Warp), numbers for floats, and ints in the range of `t`."""
    where = f"{_prefix(kernel)}, argument '{name}'"
    if isinstance(value, wt.scalar_base):
        value = value.value
    elif isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        value = value.item()  # (a 0-d array too, as Warp packs one: JAX's FFI attributes are such scalars)
    if wt.is_int(t) or t is wt.bool_:
        ok = isinstance(value, (bool, int))
    else:
        ok = isinstance(value, (bool, int, float))
    if not ok:
        raise LaunchError(f"{where} expects {wt.type_name(t)}, but passed value has type "
                          f"{type(value).__name__} ({value!r}).")
    if wt.is_int(t):
        info = np.iinfo(t._np_)
        if not info.min <= value <= info.max:
            raise LaunchError(f"{where}: value {value} is out of range for {wt.type_name(t)} "
                              f"[{info.min}, {info.max}].")
    if t is wt.float16:
        return int(np.float16(value).view(np.uint16))
    if t is wt.bfloat16:
        return int(wt.float_to_bf16_bits(float(value)))
    return value


def check_composite_arg(kernel, name, t, value):
    if value is None and not wt.is_struct(t):  # Warp's error (a struct's None is a LaunchError below)
        raise ValueError(f"Failed to convert argument for param {name} to {t.__name__}")
    try:
        return as_argument(t, value)
    except TypeError as e:
        raise LaunchError(f"{_prefix(kernel)}, argument '{name}' {e}.") from None


def _describe(p) -> str:
    return f"array(ndim={p.ndim}, dtype={wt.type_name(p.dtype)})" if isinstance(p, ArrayParam) else wt.type_name(p)


def pack_args(kernel, args, device):
    """The filled launch struct (dims left to the caller) and the views it points into, which must stay
    alive until the launch returns."""
    packed = kernel.launch_struct()
    keep_alive = []
    for i, (name, p, value) in enumerate(zip(kernel.arg_names, kernel.params, args)):
        if isinstance(p, ArrayParam) and isinstance(value, ctypes.Structure):
            check_descriptor_arg(kernel, name, p, value)
            setattr(packed, f"p{i}", value)
        elif isinstance(p, ArrayParam):
            view = check_array_arg(kernel, name, p, value, device)
            pack_array(view, p.ndim, getattr(packed, f"p{i}"))
            keep_alive.append(view)
        elif wt.is_struct(p) and isinstance(value, p._ctype_):  # a struct's C value (Launch's *_from_ctype)
            setattr(packed, f"p{i}", value)
        elif wt.is_composite(p):  # vectors, matrices, ..., structs: by value, in C layout
            setattr(packed, f"p{i}", check_composite_arg(kernel, name, p, value))
        else:
            setattr(packed, f"p{i}", check_scalar_arg(kernel, name, p, value))
    return packed, keep_alive
