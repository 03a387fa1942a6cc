"""What wp.utils' array algorithms share: scalar views of an array's storage, Warp's type names and contiguity
rule, the block sizes that spread a pass over every core, and running outside a recording wp.Tape."""

import contextlib

import numpy as np

from mlwarp.autodiff import tape as _tape
from mlwarp.core import types as _t
from mlwarp.arrays.array import array

# Threads a partial-sum pass aims for: enough that a CPU launch runs on every core (the runtime keeps launches
# of fewer than 32768 threads on the calling thread), few enough that the second pass is short.
TARGET_THREADS = 1 << 16
MIN_BLOCK = 16  # elements a block sums at least


def type_repr(t) -> str:
    """Warp's type_repr for the types arrays hold: float32, vec3h, mat33d, transformf, a struct's name."""
    c = _t.canonical_type(t)
    return getattr(c if c is not None else t, "__name__", repr(t))


def scalar_of(t):
    return _t.type_scalar_type(t)


def length_of(t) -> int:
    """Scalars in one element of dtype t (Warp's type_size): 1 for scalars, 3 for vec3, 9 for mat33."""
    return _t.type_length(t)


def is_contiguous(a: array) -> bool:
    """Warp's is_contiguous: the strides are exactly the C-order strides of the shape (a one-element view of
    every other element is not contiguous, though numpy calls it so)."""
    expected = _t.type_size_in_bytes(a.dtype)
    for n, s in zip(reversed(a.shape), reversed(a.strides)):
        if s != expected:
            return False
        expected *= n
    return True


@contextlib.contextmanager
def untaped():
    """Warp's utilities are native calls that a recording wp.Tape does not see: neither do these kernels."""
    saved = list(_tape._active)
    _tape._active.clear()
    try:
        yield
    finally:
        _tape._active[:] = saved


# -- geometry: scalar views of an array's storage -----------------------------------------------------------
def scalar_storage(a: array) -> np.ndarray:
    """a's storage view (its shape, then one axis of the element's scalars), without copying."""
    g = a._np
    c = length_of(a.dtype)
    return np.lib.stride_tricks.as_strided(g, shape=a.shape + (c,), strides=a.strides + (g.itemsize,))


def wrap_scalars(view: np.ndarray, scalar, device) -> array:
    """An mlwarp array of `scalar` over the storage view `view` (a CUDA array's view holds device addresses)."""
    return array(_view=(view, scalar), device=device)
