"""`wp.utils.array_scan` (block sums, a scan of the block sums, then each block scanned from its offset),
`runlength_encode` (run heads flagged, their exclusive scan, a scatter, one thread per run for the lengths) and
`array_cast` (one conversion kernel per output type, input type and ndim)."""

# No `from __future__ import annotations`: the kernels below are built in factories, and their annotations
# name the factory's dtype parameters (a string annotation would be evaluated in the module's globals).

import functools

import numpy as np

from mlwarp.core import types as _t
from mlwarp.arrays.array import array, copy, empty
from mlwarp.library.builtins import namespace as wp  # wp.tid, wp.min: the builtins, spelt as in user code
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.runtime import capture as _capture
from mlwarp.algorithms.array_views import (
    MIN_BLOCK, TARGET_THREADS, length_of, scalar_of, scalar_storage, type_repr, untaped, wrap_scalars
)


# -- scan ----------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _scan_kernels(T):
    @kernel(enable_backward=False)
    def array_scan_block_sums(x: array(dtype=T, ndim=2), block: int, sums: array(dtype=T, ndim=2)):
        b, c = wp.tid()
        s = T(0)
        for k in range(b * block, wp.min((b + 1) * block, x.shape[0])):
            s += x[k, c]
        sums[b, c] = s

    @kernel(enable_backward=False)
    def array_scan_offsets(sums: array(dtype=T, ndim=2)):
        c = wp.tid()
        running = T(0)
        for b in range(sums.shape[0]):
            v = sums[b, c]
            sums[b, c] = running
            running += v

    @kernel(enable_backward=False)
    def array_scan_blocks(x: array(dtype=T, ndim=2), block: int, offsets: array(dtype=T, ndim=2),
                          inclusive: int, y: array(dtype=T, ndim=2)):
        b, c = wp.tid()
        running = offsets[b, c]
        for k in range(b * block, wp.min((b + 1) * block, x.shape[0])):
            v = x[k, c]
            if inclusive != 0:
                running += v
                y[k, c] = running
            else:
                y[k, c] = running
                running += v

    return array_scan_block_sums, array_scan_offsets, array_scan_blocks


def _scan_view(a: array) -> array:
    """a as (size, C) scalars: its flattened elements (contiguous), or its one dimension (strided)."""
    store = scalar_storage(a)
    c = length_of(a.dtype)
    stride = a.strides[0] if a.ndim == 1 else c * store.strides[-1]
    view = np.lib.stride_tricks.as_strided(store, (a.size, c), (stride, store.strides[-1]))
    return wrap_scalars(view, scalar_of(a.dtype), a.device)


def array_scan(in_array: array, out_array: array, inclusive: bool = True) -> None:
    """Prefix sums of `in_array` into `out_array` (same size and dtype: int32, int64, float32, float64 scalars
    or vectors of them, scanned component-wise), inclusive or exclusive. Multi-dimensional arrays are scanned
    in row-major order and must be contiguous; one-dimensional ones may be strided."""
    if in_array.device != out_array.device:
        raise RuntimeError(f"In and out array storage devices do not match ({in_array.device} vs "
                           f"{out_array.device})")
    if in_array.size != out_array.size:
        raise RuntimeError(f"In and out array storage sizes do not match ({in_array.size} vs {out_array.size})")
    if not _t.types_equal(in_array.dtype, out_array.dtype):
        raise RuntimeError(f"In and out array data types do not match ({type_repr(in_array.dtype)} vs "
                           f"{type_repr(out_array.dtype)})")
    if in_array.size == 0:
        return
    if not in_array.is_contiguous and in_array.ndim != 1:
        raise RuntimeError("Input array must be contiguous or one-dimensional")
    if not out_array.is_contiguous and out_array.ndim != 1:
        raise RuntimeError("Output array must be contiguous or one-dimensional")
    dtype = in_array.dtype
    if not (_t.is_scalar(dtype) or _t.type_is_vector(dtype)) or \
            scalar_of(dtype) not in (_t.int32, _t.int64, _t.float32, _t.float64):
        raise RuntimeError(f"Unsupported data type: {type_repr(dtype)}")

    T = scalar_of(dtype)
    x, y = _scan_view(in_array), _scan_view(out_array)
    n, c = x.shape
    block = max(MIN_BLOCK, -(-n * c // TARGET_THREADS))
    nb = -(-n // block)
    block_sums, offsets, blocks = _scan_kernels(T)
    device = in_array.device
    with untaped():
        sums = empty((nb, c), dtype=T, device=device)
        launch(block_sums, dim=(nb, c), inputs=[x, block, sums], device=device)
        launch(offsets, dim=c, inputs=[sums], device=device)
        launch(blocks, dim=(nb, c), inputs=[x, block, sums, 1 if inclusive else 0, y], device=device)


# -- run-length encoding -------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _runlength_kernels(T):
    @kernel(enable_backward=False)
    def runlength_heads(values: array(dtype=T), heads: array(dtype=_t.int32)):
        i = wp.tid()
        h = 1
        if i > 0:
            if values[i] == values[i - 1]:
                h = 0
        heads[i] = h

    @kernel(enable_backward=False)
    def runlength_scatter(values: array(dtype=T), heads: array(dtype=_t.int32), index: array(dtype=_t.int32),
                          run_values: array(dtype=T), starts: array(dtype=_t.int32),
                          run_count: array(dtype=_t.int32)):
        i = wp.tid()
        n = values.shape[0]
        if heads[i] != 0:
            run_values[index[i]] = values[i]
            starts[index[i]] = i
        if i == n - 1:
            run_count[0] = index[i] + heads[i]
            starts[index[i] + heads[i]] = n

    @kernel(enable_backward=False)
    def runlength_lengths(starts: array(dtype=_t.int32), run_lengths: array(dtype=_t.int32)):
        r = wp.tid()
        run_lengths[r] = starts[r + 1] - starts[r]

    return runlength_heads, runlength_scatter, runlength_lengths


def runlength_encode(values: array, run_values: array, run_lengths: array, run_count: array | None = None,
                     value_count: int | None = None):
    """Run-length encodes the first `value_count` (default: all) int32 `values`: each run's value into
    `run_values`, its length into `run_lengths` (int32). Returns the number of runs, or, when `run_count` (an
    int32 array of one element) is given, writes it there and returns `run_count`."""
    if run_values.device != values.device or run_lengths.device != values.device:
        raise RuntimeError("run_values, run_lengths and values storage devices do not match")
    if value_count is None:
        value_count = values.size
    elif value_count < 0:
        raise RuntimeError(f"value_count must be non-negative, got {value_count}")
    if run_values.size < value_count or run_lengths.size < value_count:
        raise RuntimeError(f"Output array storage sizes must be at least equal to value_count ({value_count})")
    if not _t.types_equal(values.dtype, run_values.dtype):
        raise RuntimeError(f"values and run_values data types do not match ({type_repr(values.dtype)} vs "
                           f"{type_repr(run_values.dtype)})")
    if run_lengths.dtype != _t.int32:
        raise RuntimeError("run_lengths array must be of type int32")

    if run_count is None:
        if _capture.recording_on(values.device):
            raise RuntimeError("runlength_encode() returns the number of runs on the host: pass a run_count "
                               "array to use it in a graph capture")
        if value_count == 0:
            return 0
        run_count = empty(shape=(1,), dtype=_t.int32, device=values.device)
        host_return = True
    else:
        if run_count.device != values.device:
            raise RuntimeError("run_count storage device does not match other arrays")
        if run_count.dtype != _t.int32:
            raise RuntimeError("run_count array must be of type int32")
        if value_count == 0:
            run_count.zero_()
            return run_count
        host_return = False

    if values.dtype != _t.int32:
        raise RuntimeError(f"Unsupported data type: {type_repr(values.dtype)}")
    if value_count > values.size:
        raise RuntimeError(f"runlength_encode() value_count ({value_count}) exceeds the size of values "
                           f"({values.size})")
    # Warp reads and writes the arrays' memory as flat runs of elements
    values, run_values, run_lengths = (a if a.ndim == 1 else a.flatten() for a in (values, run_values, run_lengths))

    device = values.device
    if _capture.recording_on(device):  # the count of runs sizes the last launch: all of it runs at each replay
        _capture.record(functools.partial(runlength_encode, values, run_values, run_lengths, run_count, value_count))
        return run_count
    heads_k, scatter_k, lengths_k = _runlength_kernels(values.dtype)
    src = values[:value_count]
    with untaped():
        heads = empty(value_count, dtype=_t.int32, device=device)
        index = empty(value_count, dtype=_t.int32, device=device)
        starts = empty(value_count + 1, dtype=_t.int32, device=device)
        launch(heads_k, dim=value_count, inputs=[src, heads], device=device)
        array_scan(heads, index, inclusive=False)
        launch(scatter_k, dim=value_count, inputs=[src, heads, index, run_values, starts, run_count],
               device=device)
        runs = int(run_count.numpy()[0])  # one thread per run (a CUDA device: a wait for the count)
        launch(lengths_k, dim=runs, inputs=[starts, run_lengths], device=device)
    return runs if host_return else run_count


# -- cast ----------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _cast_kernel(D, S, ndim):
    if ndim == 1:
        @kernel
        def array_cast_1d(dest: array(dtype=D, ndim=1), src: array(dtype=S, ndim=1)):
            i = wp.tid()
            dest[i] = D(src[i])
        return array_cast_1d
    if ndim == 2:
        @kernel
        def array_cast_2d(dest: array(dtype=D, ndim=2), src: array(dtype=S, ndim=2)):
            i, j = wp.tid()
            dest[i, j] = D(src[i, j])
        return array_cast_2d
    if ndim == 3:
        @kernel
        def array_cast_3d(dest: array(dtype=D, ndim=3), src: array(dtype=S, ndim=3)):
            i, j, k = wp.tid()
            dest[i, j, k] = D(src[i, j, k])
        return array_cast_3d

    @kernel
    def array_cast_4d(dest: array(dtype=D, ndim=4), src: array(dtype=S, ndim=4)):
        i, j, k, m = wp.tid()
        dest[i, j, k, m] = D(src[i, j, k, m])
    return array_cast_4d


def _flat_scalars(a: array) -> array:
    """A contiguous array as one dimension of its scalars."""
    if not a.is_contiguous:
        raise RuntimeError("Flattening non-contiguous arrays is unsupported.")  # Warp's flatten()
    store = scalar_storage(a)
    n = a.size * length_of(a.dtype)
    return wrap_scalars(np.lib.stride_tricks.as_strided(store, (n,), (store.strides[-1],)), scalar_of(a.dtype),
                 a.device)


def array_cast(in_array: array, out_array: array, count: int | None = None):
    """Converts `in_array`'s elements to `out_array`'s dtype (as the dtype's constructor does in a kernel). Arrays
    whose ndim or element shapes differ are converted scalar by scalar over their flattened (contiguous)
    storage. `count`: only the first that many elements (one-dimensional arrays only). The same dtype on both
    sides is a copy."""
    if in_array.device != out_array.device:
        raise RuntimeError(f"Array storage devices do not match ({in_array.device} vs {out_array.device})")

    if in_array.ndim != out_array.ndim or _t.inner_shape(in_array.dtype) != _t.inner_shape(out_array.dtype):
        in_length = length_of(in_array.dtype)
        in_array = _flat_scalars(in_array)
        out_array = _flat_scalars(out_array)
        if count is not None:
            count *= in_length

    if count is None:
        count = in_array.size

    if in_array.ndim == 1:
        dim = count
    elif count < in_array.size:
        raise RuntimeError("Partial cast is not supported for arrays with more than one dimension")
    else:
        dim = in_array.shape

    if in_array.dtype == out_array.dtype:
        copy(dest=out_array, src=in_array, count=count)
        return

    if in_array.ndim > 1 and in_array.shape != out_array.shape:
        raise RuntimeError(f"Array shapes do not match ({in_array.shape} vs {out_array.shape})")

    if count > in_array.size or count > out_array.size:
        raise RuntimeError(f"Cast count ({count}) exceeds the input size ({in_array.size}) or output size "
                           f"({out_array.size})")

    # a launch (and wp.copy above) as in Warp: a recording wp.Tape sees it, and gradients flow through the cast
    launch(_cast_kernel(out_array.dtype, in_array.dtype, in_array.ndim), dim=dim, inputs=[out_array, in_array],
           device=out_array.device)
