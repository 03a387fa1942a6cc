"""`wp.utils.radix_sort_pairs` and `segmented_sort_pairs`: sorted on the host with numpy's stable sort (a radix
sort's passes are serial per block, and a kernel version would not beat numpy on the CPU); arrays on a CUDA
device go through a host copy."""

# No `from __future__ import annotations`: the kernels below are built in factories, and their annotations
# name the factory's dtype parameters (a string annotation would be evaluated in the module's globals).

import functools
import operator

import numpy as np

from mlwarp.core import types as _t
from mlwarp.arrays.array import array, copy
from mlwarp.runtime import capture as _capture
from mlwarp.algorithms.array_views import type_repr, is_contiguous

_INT32_MAX = (1 << 31) - 1


# -- sorting (on the host) -----------------------------------------------------------------------------------
_KEY_BITS = {_t.int32: 32, _t.uint32: 32, _t.float32: 32, _t.int64: 64, _t.uint64: 64, _t.float64: 64}


def _radix_keys(keys: np.ndarray, bits: int) -> np.ndarray:
    """Keys as the unsigned integers whose order is the keys' order (Warp's radix sort digits): signed integers
    with the sign bit flipped, floats with every bit flipped when negative, else the sign bit."""
    u = np.dtype(f"u{bits // 8}")
    raw = keys.view(u)
    sign = u.type(1 << (bits - 1))
    if keys.dtype.kind == "i":
        return raw ^ sign
    if keys.dtype.kind == "f":
        negative = (raw >> u.type(bits - 1)).astype(bool)
        return np.where(negative, ~raw, raw | sign)
    return raw


def _host(a: array) -> np.ndarray:
    """A's values as numpy: the storage itself on the CPU, a copy for a CUDA array (as stored)."""
    return a._host()


def _store(a: array, values: np.ndarray, count: int) -> None:
    """Writes `values` into a's first `count` elements."""
    if a.device.is_cpu:
        a._host()[:count] = values
    else:
        a[:count].assign(values)


def radix_sort_pairs(keys: array, values: array, count: int, begin_bit: int = 0, end_bit: int | None = None):
    """Sorts the first `count` keys (int32, uint32, float32, int64, uint64, float64), stably, moving `values`
    (elements of 4 or 8 bytes) with them; keys are compared on bits [begin_bit, end_bit) of their radix form
    (signed integers and floats mapped to unsigned integers of the same order). As in Warp, both arrays must
    hold 2*count elements (the second half is Warp's scratch space; mlwarp leaves it as it is).

    mlwarp sorts on the host with numpy's stable argsort (a CUDA array through a host copy)."""
    if keys.device != values.device:
        raise RuntimeError(f"Keys and values array storage devices do not match ({keys.device} vs "
                           f"{values.device})")
    if count == 0:
        return
    if keys.size < 2 * count or values.size < 2 * count:
        raise RuntimeError("Keys and values array storage must be large enough to contain 2*count elements")
    types = f"{type_repr(keys.dtype)}, {type_repr(values.dtype)}"
    if _t.type_size_in_bytes(values.dtype) not in (4, 8):
        raise RuntimeError(f"Unsupported keys and values data types: {types}")
    if not is_contiguous(keys):
        raise RuntimeError(f"radix_sort_pairs() requires a contiguous keys array, got non-contiguous keys with "
                           f"data types: {types}")
    if not is_contiguous(values):
        raise RuntimeError(f"radix_sort_pairs() requires a contiguous values array, got non-contiguous values "
                           f"with data types: {types}")
    bits = _KEY_BITS.get(keys.dtype)
    if bits is None:
        raise RuntimeError(f"Unsupported keys and values data types: {types}")
    if end_bit is None:
        end_bit = bits
    if not isinstance(begin_bit, int) or not isinstance(end_bit, int):
        raise RuntimeError("begin_bit and end_bit must be integers")
    if not 0 <= begin_bit <= end_bit <= bits:
        raise RuntimeError(f"Invalid radix sort bit range [{begin_bit}, {end_bit}) for {bits}-bit keys")
    if begin_bit == end_bit:
        return
    if _capture.recording_on(keys.device):  # a graph capture: the host sort runs at each replay
        return _capture.record(functools.partial(radix_sort_pairs, keys, values, count, begin_bit, end_bit))

    k = _host(keys.flatten())[:count]
    v = _host(values.flatten())[:count]
    digits = _radix_keys(k, bits)
    width = end_bit - begin_bit
    if width < bits:
        digits = (digits >> digits.dtype.type(begin_bit)) & digits.dtype.type((1 << width) - 1)
    elif begin_bit:
        digits = digits >> digits.dtype.type(begin_bit)
    order = np.argsort(digits, kind="stable")
    sorted_k, sorted_v = k[order], v[order]
    _store(keys.flatten(), sorted_k, count)
    _store(values.flatten(), sorted_v, count)


def segmented_sort_pairs(keys: array, values: array, count: int, segment_start_indices: array,
                         segment_end_indices: array | None = None):
    """Sorts each segment [start, end) of the first `count` keys (int32 or float32) stably, moving the int32
    `values` with them. Without `segment_end_indices`, adjacent entries of `segment_start_indices` delimit the
    segments. Every range must satisfy 0 <= start <= end <= count (else ValueError, before anything is
    sorted); `keys` and `values` must hold 2*count elements, as in Warp.

    mlwarp sorts on the host with numpy's stable argsort (a CUDA array through a host copy)."""
    if isinstance(count, bool):
        raise TypeError("count must be an integer")
    try:
        count = operator.index(count)
    except TypeError as e:
        raise TypeError("count must be an integer") from e
    if count < 0:
        raise ValueError(f"count must be non-negative, got {count}")
    if count > _INT32_MAX:
        raise ValueError(f"count must not exceed {_INT32_MAX}, got {count}")

    devices_match = segment_start_indices.device == keys.device
    if segment_end_indices is not None:
        devices_match = devices_match and segment_end_indices.device == keys.device
    if keys.device != values.device or not devices_match:
        raise RuntimeError("Keys, values, and segment index array storage devices must match")
    if count == 0:
        return
    if keys.size < 2 * count or values.size < 2 * count:
        raise RuntimeError("Array storage must be large enough to contain 2*count elements")
    if not is_contiguous(keys):
        raise RuntimeError("segmented_sort_pairs() requires a contiguous keys array")
    if not is_contiguous(values):
        raise RuntimeError("segmented_sort_pairs() requires a contiguous values array")
    if segment_start_indices.dtype != _t.int32:
        raise RuntimeError("segment_start_indices array must be of type int32")
    if segment_start_indices.ndim != 1:
        raise RuntimeError("segment_start_indices must be one-dimensional")
    if not is_contiguous(segment_start_indices):
        raise RuntimeError("segmented_sort_pairs() requires a contiguous segment_start_indices array")
    if _capture.recording_on(keys.device):  # a graph capture: the segments are read and sorted at each replay
        return _capture.record(functools.partial(segmented_sort_pairs, keys, values, count, segment_start_indices,
                                       segment_end_indices))

    if segment_end_indices is None:
        if segment_start_indices.size < 2:
            return
        offsets = _host(segment_start_indices).astype(np.int64)
        starts, ends = offsets[:-1], offsets[1:]
    else:
        if segment_end_indices.dtype != _t.int32:
            raise RuntimeError("segment_end_indices array must be of type int32")
        if segment_end_indices.ndim != 1:
            raise RuntimeError("segment_end_indices must be one-dimensional")
        if not is_contiguous(segment_end_indices):
            raise RuntimeError("segmented_sort_pairs() requires a contiguous segment_end_indices array")
        if segment_start_indices.size != segment_end_indices.size:
            raise RuntimeError(f"segment_start_indices and segment_end_indices must have the same size "
                               f"({segment_start_indices.size} vs {segment_end_indices.size})")
        if segment_start_indices.size == 0:
            return
        starts = _host(segment_start_indices).astype(np.int64)
        ends = _host(segment_end_indices).astype(np.int64)

    if keys.dtype not in (_t.int32, _t.float32) or values.dtype != _t.int32:
        raise RuntimeError(f"Unsupported data type: {type_repr(keys.dtype)}")

    bad = np.nonzero((starts < 0) | (ends < starts) | (ends > count))[0]
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"Invalid segment range at index {i}: [{starts[i]}, {ends[i]}) for count {count}")

    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return
    # the positions of every segment, one after another, and each position's segment
    segment = np.repeat(np.arange(starts.size), lengths)
    first = np.repeat(np.cumsum(lengths) - lengths, lengths)
    positions = starts[segment] + (np.arange(total) - first)
    k = _host(keys.flatten())[:count]
    v = _host(values.flatten())[:count]
    order = np.lexsort((k[positions], segment))  # by segment, then key; stable
    new_k, new_v = k.copy(), v.copy()
    new_k[positions] = k[positions[order]]
    new_v[positions] = v[positions[order]]
    _store(keys.flatten(), new_k, count)
    _store(values.flatten(), new_v, count)
