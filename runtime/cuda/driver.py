"""The CUDA driver API (cuda-python), loaded lazily, and its error checking.

cuda-python >= 12.6 exposes `cuda.bindings.driver`; older releases `cuda.cuda`.
Every call returns `(CUresult, *values)`; `call` raises CudaError on failure
and returns the values."""

from __future__ import annotations

import threading

_driver = None
_init_error: str | None = None
_lock = threading.Lock()


class CudaError(RuntimeError):
    """A CUDA driver call failed; the message names the call and the driver's error."""


def _driver_library_loads() -> bool:
    """Whether the CUDA driver library is on this machine: a few ms, where importing cuda-python costs
    hundreds, so a machine without a GPU driver never pays for the import."""
    import ctypes
    import sys

    try:
        ctypes.CDLL("nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1")
        return True
    except OSError:
        return False


def _import():
    try:
        from cuda.bindings import driver  # lazy: cuda-python
    except ImportError:
        from cuda import cuda as driver  # cuda-python < 12.6
    return driver


def driver():
    """The initialised driver module; raises CudaError saying why CUDA is unusable."""
    global _driver, _init_error
    if _driver is not None:
        return _driver
    with _lock:
        if _driver is None and _init_error is None:
            if not _driver_library_loads():
                _init_error = "no CUDA driver on this machine (libcuda.so.1 could not be loaded)"
                raise CudaError(_init_error)
            try:
                d = _import()
            except ImportError:
                _init_error = "cuda-python is not installed (pip install 'mlwarp[cuda]')"
            else:
                try:
                    (err,) = d.cuInit(0)
                    if err != d.CUresult.CUDA_SUCCESS:
                        _init_error = f"cuInit failed: {_name(d, err)}"
                    else:
                        _driver = d
                except Exception as e:  # no libcuda.so: cuda-python raises its own loader errors
                    _init_error = f"the CUDA driver could not be loaded: {str(e).splitlines()[0]}"
    if _driver is None:
        raise CudaError(_init_error)
    return _driver


def available() -> bool:
    try:
        driver()
        return True
    except CudaError:
        return False


def unavailable_reason() -> str | None:
    return None if available() else _init_error


def _name(d, err) -> str:
    try:
        e, name = d.cuGetErrorName(err)
        return name.decode() if e == d.CUresult.CUDA_SUCCESS else str(err)
    except Exception:
        return str(err)


def call(fn_name: str, *args):
    """Calls `cuda.<fn_name>(*args)`; returns None, the one value, or the tuple of values."""
    d = driver()
    out = getattr(d, fn_name)(*args)
    err, values = out[0], out[1:]
    if err != d.CUresult.CUDA_SUCCESS:
        raise CudaError(f"{fn_name} failed: {_name(d, err)}")
    if not values:
        return None
    return values[0] if len(values) == 1 else values
