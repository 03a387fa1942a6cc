"""`wp.launch`: checks every argument, packs the launch struct and runs the kernel."""

from __future__ import annotations

import ctypes

import numpy as np

from . import types as wt
from .array import array
from .errors import LaunchError
from . import debug as _debug
from .runtime.abi import ArrayParam
from .runtime.device import get_device


def launch_dims(dim) -> tuple:
    if isinstance(dim, (int, np.integer)) and not isinstance(dim, bool):
        dims = (int(dim),)
    elif isinstance(dim, (tuple, list)) and dim:
        dims = tuple(dim)
    else:
        raise LaunchError(f"launch dim must be an int or a tuple of 1 to 4 ints, got {dim!r}")
    if len(dims) > 4 or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in dims):
        raise LaunchError(f"launch dim must be an int or a tuple of 1 to 4 ints, got {dim!r}")
    if any(d < 0 for d in dims):
        raise LaunchError(f"launch dim must not be negative, got {dim!r}")
    return tuple(int(d) for d in dims)


def _as_numpy(value):
    """The host view of an array argument (wp.array, numpy, or anything with the array protocols)."""
    if isinstance(value, array):
        if value.is_annotation:
            return None
        return value.numpy()
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "__array_interface__") or hasattr(value, "__array__"):
        return np.asarray(value)
    return None


def _pack_array(kernel, name, p: ArrayParam, value, device, slot):
    if isinstance(value, array) and value.device is not None and value.device != device:
        raise LaunchError(f"kernel '{kernel.key}' argument '{name}': array is on device '{value.device}' but "
                          f"the launch is on '{device}'")
    view = _as_numpy(value)
    if view is None:
        raise LaunchError(f"kernel '{kernel.key}' argument '{name}' expects {_describe(p)}, got "
                          f"{type(value).__name__}")
    if view.dtype != np.dtype(p.dtype._np_):
        raise LaunchError(f"kernel '{kernel.key}' argument '{name}' expects {_describe(p)}, got an array of "
                          f"{view.dtype}")
    if view.ndim != p.ndim:
        raise LaunchError(f"kernel '{kernel.key}' argument '{name}' expects {_describe(p)}, got an array with "
                          f"ndim={view.ndim}")
    slot.data = view.ctypes.data
    for d in range(p.ndim):
        slot.shape[d] = view.shape[d]
        slot.strides[d] = view.strides[d]
    return view


def _scalar_value(kernel, name, t, value):
    if isinstance(value, wt.scalar_base):
        value = value.value
    elif isinstance(value, np.generic):
        value = value.item()
    ok = isinstance(value, (bool, int, float))
    if ok and wt.is_int(t):
        ok = float(value).is_integer() and not isinstance(value, float)
    if ok and t is wt.bool_:
        ok = isinstance(value, (bool, int))
    if not ok:
        raise LaunchError(f"kernel '{kernel.key}' argument '{name}' expects {wt.type_name(t)}, got "
                          f"{type(value).__name__} {value!r}")
    if t is wt.float16:
        return int(np.float16(value).view(np.uint16))
    if wt.is_int(t):
        info = np.iinfo(t._np_)
        if not info.min <= value <= info.max:
            raise LaunchError(f"kernel '{kernel.key}' argument '{name}': {value} does not fit in {t.__name__}")
    return value


def _describe(p) -> str:
    return f"array(dtype={wt.type_name(p.dtype)}, ndim={p.ndim})" if isinstance(p, ArrayParam) else wt.type_name(p)


def launch(kernel, dim, inputs=(), outputs=(), device=None, stream=None, adjoint=False, adj_inputs=None,
           adj_outputs=None, record_cmd=False, block_dim=256, max_blocks=0):
    from .kernel import Kernel

    if not isinstance(kernel, Kernel):
        raise LaunchError(f"wp.launch expects a @wp.kernel, got {type(kernel).__name__}")
    dims = launch_dims(dim)
    args = list(inputs) + list(outputs)
    if len(args) != len(kernel.params):
        raise LaunchError(f"Error launching kernel '{kernel.key}', passed {len(args)} arguments but kernel "
                          f"requires {len(kernel.params)}.")
    try:
        device = get_device(device)
    except ValueError as e:
        raise LaunchError(f"kernel '{kernel.key}': {e}") from None
    kernel = _debug.for_launch(kernel)  # the debug build when debug mode is on (mlwarp/debug.py)
    packed = kernel.launch_struct()
    keep_alive = []
    for i, (name, p, value) in enumerate(zip(kernel.arg_names, kernel.params, args)):
        if isinstance(p, ArrayParam):
            keep_alive.append(_pack_array(kernel, name, p, value, device, getattr(packed, f"p{i}")))
        else:
            setattr(packed, f"p{i}", _scalar_value(kernel, name, p, value))
    record = _debug.attach_record(kernel, packed)
    total = 1
    for d, n in enumerate(dims):
        packed.dims[d] = n
        total *= n
    for d in range(len(dims), 4):
        packed.dims[d] = 1
    compiled = kernel.compiled(device)
    if total:
        compiled.run(ctypes.addressof(packed), total)
        _debug.after_launch(kernel, compiled, record, args)


def synchronize():
    """CPU launches complete before wp.launch returns."""
