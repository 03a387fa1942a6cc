"""`wp.utils` / `import warp.utils`: Warp's array algorithms (reductions, scans, casts, sorts, run-length
encoding) and `ScopedTimer`.

Warp runs these as native C++/CUDA routines. Here the array work is mlwarp kernels, so it runs on every CPU
core (and on a CUDA device through the same kernels):

- `array_sum` / `array_inner`: two passes of per-block partial sums. Each output element's reduction is cut into
  contiguous blocks (enough of them that the launch runs on every core), the first kernel writes one partial
  per block, the second adds the partials in order. The order of additions is fixed: the result does not
  depend on the thread count.
- `array_scan`: block sums, a scan of the block sums, then each block scanned from its offset.
- `runlength_encode`: run heads flagged by a kernel, their exclusive scan (`array_scan`), a scatter kernel, then
  one thread per run for the lengths.
- `array_cast`: one conversion kernel per (output type, input type, ndim).

`radix_sort_pairs` and `segmented_sort_pairs` sort on the host with numpy's stable sort (a radix sort's passes
are serial per block, and a kernel version would not beat numpy on the CPU); arrays on a CUDA device go through
a host copy.

Argument checks and their messages follow Warp's (warp/_src/utils.py). Where Warp reads past an array (a
`value_count`/`count` larger than the reduced extent, or a whole-array reduction of a non-contiguous array,
which Warp reads as if it were contiguous), mlwarp raises or reduces the elements the view holds.
"""

# No `from __future__ import annotations`: the kernels below are built in factories, and their annotations
# name the factory's dtype parameters (a string annotation would be evaluated in the module's globals).

import contextlib
import functools
import operator

import numpy as np

from . import tape as _tape
from .core import types as _t
from .array import array, clone, copy, empty, zeros
from .builtins import namespace as wp  # wp.tid, wp.min: the builtins, spelt as in user code
from .coloring import (GraphColoringAlgorithm, graph_coloring_assign, graph_coloring_balance,  # noqa: F401
                       graph_coloring_get_groups)
from .kernel import kernel
from .rmm_allocator import AllocatorRmm  # noqa: F401  (wp.utils.AllocatorRmm)
from .launch import launch
from .runtime import capture as _capture
from .timer import ScopedTimer  # noqa: F401  (wp.utils.ScopedTimer)
from .vector import transform
from .warp_function import create_warp_function  # noqa: F401  (wp.utils.create_warp_function)

__all__ = ["array_cast", "array_inner", "array_scan", "array_sum", "radix_sort_pairs", "runlength_encode",
           "segmented_sort_pairs", "create_warp_function", "ScopedTimer", "transform_expand",
           "GraphColoringAlgorithm", "graph_coloring_assign", "graph_coloring_balance", "graph_coloring_get_groups", "AllocatorRmm"]

_INT32_MAX = (1 << 31) - 1
# Threads a partial-sum pass aims for: enough that a CPU launch runs on every core (the runtime keeps launches
# of fewer than 32768 threads on the calling thread), few enough that the second pass is short.
_TARGET_THREADS = 1 << 16
_MIN_BLOCK = 16  # elements a block sums at least


def _type_repr(t) -> str:
    """Warp's type_repr for the types arrays hold: float32, vec3h, mat33d, transformf, a struct's name."""
    c = _t.canonical_type(t)
    return getattr(c if c is not None else t, "__name__", repr(t))


def _scalar_of(t):
    return _t.type_scalar_type(t)


def _length_of(t) -> int:
    """Scalars in one element of dtype t (Warp's type_size): 1 for scalars, 3 for vec3, 9 for mat33."""
    return _t.type_length(t)


def _contiguous(a: array) -> bool:
    """Warp's is_contiguous: the strides are exactly the C-order strides of the shape (a one-element view of
    every other element is not contiguous, though numpy calls it so)."""
    expected = _t.type_size_in_bytes(a.dtype)
    for n, s in zip(reversed(a.shape), reversed(a.strides)):
        if s != expected:
            return False
        expected *= n
    return True


@contextlib.contextmanager
def _untaped():
    """Warp's utilities are native calls that a recording wp.Tape does not see: neither do these kernels."""
    saved = list(_tape._active)
    _tape._active.clear()
    try:
        yield
    finally:
        _tape._active[:] = saved


# -- geometry: scalar views of an array's storage -----------------------------------------------------------
def _scalar_storage(a: array) -> np.ndarray:
    """a's storage view (its shape, then one axis of the element's scalars), without copying."""
    g = a._np
    c = _length_of(a.dtype)
    return np.lib.stride_tricks.as_strided(g, shape=a.shape + (c,), strides=a.strides + (g.itemsize,))


def _wrap(view: np.ndarray, scalar, device) -> array:
    """An mlwarp array of `scalar` over the storage view `view` (a CUDA array's view holds device addresses)."""
    return array(_view=(view, scalar), device=device)


def _merge(dims: list) -> list | None:
    """Merges adjacent (n, [stride per array]) dims that are one dim in every array; drops dims of length 1."""
    out = []
    for n, strides in dims:
        if n == 1:
            continue
        if out and all(ps == n * s for ps, s in zip(out[-1][1], strides)):
            out[-1] = (out[-1][0] * n, list(strides))
        else:
            out.append((n, list(strides)))
    return out


def _reduction_views(operation, inputs, out, axis, count):
    """Views for the partial-sum kernels: each input as (P, Q, count, C) scalars, `out` as (P, Q, C) scalars
    (C = 1 for array_inner's scalar output). Returns (input views, out view, the array the result lands in):
    when the arrays' outer dims do not fold into two, the inputs are reduced from contiguous copies into a
    contiguous result, which the caller copies into `out`."""
    for attempt in range(2):
        layout = _fold(inputs, out, axis)
        if layout is not None:
            break
        inputs = [clone(a, requires_grad=False) for a in inputs]
        out = zeros(out.shape, out.dtype, out.device)
    else:  # contiguous arrays of <= 4 dims always fold
        raise RuntimeError(f"{operation}() could not lay out its arrays")
    n_strides, outer, out_outer = layout
    views = []
    for i, a in enumerate(inputs):
        store = _scalar_storage(a)
        shape = (outer[0][0], outer[1][0], count, store.shape[-1])
        strides = (outer[0][1][i], outer[1][1][i], n_strides[i], store.strides[-1])
        views.append(_wrap(np.lib.stride_tricks.as_strided(store, shape, strides), _scalar_of(a.dtype), a.device))
    out_store = _scalar_storage(out)
    out_view = _wrap(np.lib.stride_tricks.as_strided(
        out_store, (out_outer[0][0], out_outer[1][0], out_store.shape[-1]),
        (out_outer[0][1], out_outer[1][1], out_store.strides[-1])), _scalar_of(out.dtype), out.device)
    return views, out_view, out


def _fold(inputs, out, axis):
    """(strides of the reduced dim per input, two outer (n, [stride per input]) dims, the same two dims'
    (n, stride) in `out`), or None when the dims do not fold so in every array."""
    if axis is None:  # the flattened elements: every dim folds into the reduced one
        whole = _merge([(n, [a.strides[d] for a in inputs]) for d, n in enumerate(inputs[0].shape)])
        if len(whole) > 1:
            return None
        n_strides = whole[0][1] if whole else [0] * len(inputs)
        outer, out_outer = [], []
    else:
        merged = _merge([(inputs[0].shape[d], [a.strides[d] for a in inputs] + [out.strides[d]])
                         for d in range(inputs[0].ndim) if d != axis])
        if len(merged) > 2:
            return None
        n_strides = [a.strides[axis] for a in inputs]
        outer = [(n, s[:-1]) for n, s in merged]
        out_outer = [(n, s[-1]) for n, s in merged]
    while len(outer) < 2:
        outer.insert(0, (1, [0] * len(inputs)))
        out_outer.insert(0, (1, 0))
    return n_strides, outer, out_outer


def _fold_components(views: list) -> list:
    """(P, Q, N, C) views as (P, Q, N * C, 1) where the components follow each other along N in every view:
    array_inner then runs one loop over scalars."""
    c = views[0].shape[3]
    if c == 1 or any(v.strides[2] != c * v.strides[3] for v in views):
        return views
    return [_wrap(np.lib.stride_tricks.as_strided(v._np, v.shape[:2] + (v.shape[2] * c, 1),
                                                  v.strides[:2] + (v.strides[3], v.strides[3])), v.dtype, v.device)
            for v in views]


def _blocks(n: int, outputs: int) -> tuple:
    """(block length, block count): how each of `outputs` reductions of `n` elements is cut into blocks."""
    nb = 1 if n <= _MIN_BLOCK else max(1, min(-(-n // _MIN_BLOCK), -(-_TARGET_THREADS // max(1, outputs))))
    block = -(-n // nb)
    return block, -(-n // block)


@functools.lru_cache(maxsize=None)
def _sum_kernels(T):
    @kernel(enable_backward=False)
    def array_sum_partial(x: array(dtype=T, ndim=4), block: int, parts: array(dtype=T, ndim=4)):
        p, q, b, c = wp.tid()
        s = T(0)
        for k in range(b * block, wp.min((b + 1) * block, x.shape[2])):
            s += x[p, q, k, c]
        parts[p, q, b, c] = s

    @kernel(enable_backward=False)
    def array_sum_finish(parts: array(dtype=T, ndim=4), out: array(dtype=T, ndim=3)):
        p, q, c = wp.tid()
        s = T(0)
        for b in range(parts.shape[2]):
            s += parts[p, q, b, c]
        out[p, q, c] = s

    return array_sum_partial, array_sum_finish


@functools.lru_cache(maxsize=None)
def _inner_kernels(T):
    @kernel(enable_backward=False)
    def array_inner_partial(a: array(dtype=T, ndim=4), b: array(dtype=T, ndim=4), block: int,
                            parts: array(dtype=T, ndim=3)):
        p, q, j = wp.tid()
        s = T(0)
        for k in range(j * block, wp.min((j + 1) * block, a.shape[2])):
            for c in range(a.shape[3]):
                s += a[p, q, k, c] * b[p, q, k, c]
        parts[p, q, j] = s

    @kernel(enable_backward=False)
    def array_inner_partial_scalars(a: array(dtype=T, ndim=4), b: array(dtype=T, ndim=4), block: int,
                                    parts: array(dtype=T, ndim=3)):
        p, q, j = wp.tid()
        s = T(0)
        for k in range(j * block, wp.min((j + 1) * block, a.shape[2])):
            s += a[p, q, k, 0] * b[p, q, k, 0]
        parts[p, q, j] = s

    @kernel(enable_backward=False)
    def array_inner_finish(parts: array(dtype=T, ndim=3), out: array(dtype=T, ndim=3)):
        p, q = wp.tid()
        s = T(0)
        for j in range(parts.shape[2]):
            s += parts[p, q, j]
        out[p, q, 0] = s

    return array_inner_partial, array_inner_partial_scalars, array_inner_finish


def _normalize_axis(operation, axis, ndim):
    axis = operator.index(axis)
    if axis < -ndim or axis >= ndim:
        raise IndexError(f"{operation}() axis {axis} is out of bounds for an array with {ndim} dimensions")
    return axis % ndim


def _check_count(operation, name, count, limit):
    count = operator.index(count)
    if count < 0:
        raise RuntimeError(f"{operation}() {name} must be non-negative, got {count}")
    if count > limit:
        raise RuntimeError(f"{operation}() {name} ({count}) exceeds the number of elements to reduce ({limit})")
    return count


def _reduce(operation, inputs, out, axis, count):
    """Runs the two partial-sum passes of array_sum / array_inner into `out`."""
    T = _scalar_of(inputs[0].dtype)
    views, out_view, result = _reduction_views(operation, inputs, out, axis, count)
    P, Q = out_view.shape[0], out_view.shape[1]
    device = inputs[0].device
    with _untaped():
        if operation == "array_sum":
            partial, finish = _sum_kernels(T)
            C = views[0].shape[3]
            block, nb = _blocks(count, P * Q * C)
            parts = empty((P, Q, nb, C), dtype=T, device=device)
            launch(partial, dim=(P, Q, nb, C), inputs=[views[0], block, parts], device=device)
            launch(finish, dim=(P, Q, C), inputs=[parts, out_view], device=device)
        else:
            partial, partial_scalars, finish = _inner_kernels(T)
            views = _fold_components(views)
            if views[0].shape[3] == 1:
                partial = partial_scalars
            count = views[0].shape[2]
            block, nb = _blocks(count, P * Q)
            parts = empty((P, Q, nb), dtype=T, device=device)
            launch(partial, dim=(P, Q, nb), inputs=[views[0], views[1], block, parts], device=device)
            launch(finish, dim=(P, Q), inputs=[parts, out_view], device=device)
        if result is not out:
            copy(out, result)


def _output_shape(shape, axis):
    if axis is None:
        return (1,)
    s = list(shape)
    s[axis] = 1
    return tuple(s)


def _refuse_host_result_in_capture(operation: str, device, axis) -> None:
    """A result returned on the host does not exist yet in a graph capture (the launches run at replay)."""
    if axis is None and _capture.recording_on(device):
        raise RuntimeError(f"{operation}() returns its result on the host when out is None: pass an out array to "
                           f"use it in a graph capture")


def array_sum(values: array, out: array | None = None, value_count: int | None = None,
              axis: int | None = None):
    """The sum of `values`' elements (float32/float64 scalars, vectors, matrices: summed component-wise), of
    all of them or along `axis` (negative counts from the last). `value_count`: sum only the first that many
    (along `axis`, or of the flattened array). Returns the sum (a numpy scalar or array) when `axis` and `out`
    are None, else `out` (shape `(1,)`, or `values.shape` with 1 at `axis`; dtype `values.dtype`)."""
    if axis is not None:
        axis = _normalize_axis("array_sum", axis, values.ndim)
    limit = values.size if axis is None else values.shape[axis]
    value_count = limit if value_count is None else _check_count("array_sum", "value_count", value_count, limit)
    output_shape = _output_shape(values.shape, axis)

    if out is None:
        _refuse_host_result_in_capture("array_sum", values.device, axis)
        host_return = True
        out = empty(shape=output_shape, dtype=values.dtype, device=values.device)
    else:
        host_return = False
        if out.device != values.device:
            raise RuntimeError("out storage device should match values array")
        if out.dtype != values.dtype:
            raise RuntimeError(f"out array should have type {_type_repr(values.dtype)}")
        if out.shape != output_shape:
            raise RuntimeError(f"out array should have shape {output_shape}")

    if value_count == 0:
        out.zero_()
        if axis is None and host_return:
            return out.numpy()[0]
        return out

    if _scalar_of(values.dtype) not in (_t.float32, _t.float64):
        raise RuntimeError(f"Unsupported data type: {_type_repr(values.dtype)}")

    if out.size > 0:
        _reduce("array_sum", [values], out, axis, value_count)
    if axis is None and host_return:
        return out.numpy()[0]
    return out


def array_inner(a: array, b: array, out: array | None = None, count: int | None = None, axis: int | None = None):
    """The inner product of `a` and `b` (same shape and dtype; float32/float64 scalars, vectors or matrices,
    whose components are all multiplied and added): over all elements, or along `axis`. `count`: only the first
    that many elements (along `axis`, or of the flattened arrays). Returns a float when `axis` and `out` are
    None, else `out` (shape `(1,)`, or `a.shape` with 1 at `axis`; dtype the scalar type of `a`)."""
    if a.shape != b.shape:
        raise ValueError(f"array_inner() arguments must have the same shape, got {a.shape} and {b.shape}")
    if a.device != b.device:
        raise RuntimeError(f"A and b array storage devices do not match ({a.device} vs {b.device})")
    if not _t.types_equal(a.dtype, b.dtype):
        raise RuntimeError(f"A and b array data types do not match ({_type_repr(a.dtype)} vs "
                           f"{_type_repr(b.dtype)})")
    if axis is not None:
        axis = _normalize_axis("array_inner", axis, a.ndim)
    limit = a.size if axis is None else a.shape[axis]
    count = limit if count is None else _check_count("array_inner", "count", count, limit)
    output_shape = _output_shape(a.shape, axis)
    scalar_type = _scalar_of(a.dtype)

    if out is None:
        _refuse_host_result_in_capture("array_inner", a.device, axis)
        host_return = True
        out = empty(shape=output_shape, dtype=scalar_type, device=a.device)
    else:
        host_return = False
        if out.device != a.device:
            raise RuntimeError("out storage device should match values array")
        if out.dtype != scalar_type:
            raise RuntimeError(f"out array should have type {_type_repr(scalar_type)}")
        if out.shape != output_shape:
            raise RuntimeError(f"out array should have shape {output_shape}")

    if count == 0:
        if axis is None and host_return:
            return 0.0
        out.zero_()
        return out

    if scalar_type not in (_t.float32, _t.float64):
        raise RuntimeError(f"Unsupported data type: {_type_repr(a.dtype)}")

    if out.size > 0:
        _reduce("array_inner", [a, b], out, axis, count)
    if axis is None and host_return:
        return out.numpy()[0]
    return out


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
    store = _scalar_storage(a)
    c = _length_of(a.dtype)
    stride = a.strides[0] if a.ndim == 1 else c * store.strides[-1]
    view = np.lib.stride_tricks.as_strided(store, (a.size, c), (stride, store.strides[-1]))
    return _wrap(view, _scalar_of(a.dtype), a.device)


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
        raise RuntimeError(f"In and out array data types do not match ({_type_repr(in_array.dtype)} vs "
                           f"{_type_repr(out_array.dtype)})")
    if in_array.size == 0:
        return
    if not in_array.is_contiguous and in_array.ndim != 1:
        raise RuntimeError("Input array must be contiguous or one-dimensional")
    if not out_array.is_contiguous and out_array.ndim != 1:
        raise RuntimeError("Output array must be contiguous or one-dimensional")
    dtype = in_array.dtype
    if not (_t.is_scalar(dtype) or _t.type_is_vector(dtype)) or \
            _scalar_of(dtype) not in (_t.int32, _t.int64, _t.float32, _t.float64):
        raise RuntimeError(f"Unsupported data type: {_type_repr(dtype)}")

    T = _scalar_of(dtype)
    x, y = _scan_view(in_array), _scan_view(out_array)
    n, c = x.shape
    block = max(_MIN_BLOCK, -(-n * c // _TARGET_THREADS))
    nb = -(-n // block)
    block_sums, offsets, blocks = _scan_kernels(T)
    device = in_array.device
    with _untaped():
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
        raise RuntimeError(f"values and run_values data types do not match ({_type_repr(values.dtype)} vs "
                           f"{_type_repr(run_values.dtype)})")
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
        raise RuntimeError(f"Unsupported data type: {_type_repr(values.dtype)}")
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
    with _untaped():
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
    store = _scalar_storage(a)
    n = a.size * _length_of(a.dtype)
    return _wrap(np.lib.stride_tricks.as_strided(store, (n,), (store.strides[-1],)), _scalar_of(a.dtype),
                 a.device)


def array_cast(in_array: array, out_array: array, count: int | None = None):
    """Converts `in_array`'s elements to `out_array`'s dtype (as the dtype's constructor does in a kernel). Arrays
    whose ndim or element shapes differ are converted scalar by scalar over their flattened (contiguous)
    storage. `count`: only the first that many elements (one-dimensional arrays only). The same dtype on both
    sides is a copy."""
    if in_array.device != out_array.device:
        raise RuntimeError(f"Array storage devices do not match ({in_array.device} vs {out_array.device})")

    if in_array.ndim != out_array.ndim or _t.inner_shape(in_array.dtype) != _t.inner_shape(out_array.dtype):
        in_length = _length_of(in_array.dtype)
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
    types = f"{_type_repr(keys.dtype)}, {_type_repr(values.dtype)}"
    if _t.type_size_in_bytes(values.dtype) not in (4, 8):
        raise RuntimeError(f"Unsupported keys and values data types: {types}")
    if not _contiguous(keys):
        raise RuntimeError(f"radix_sort_pairs() requires a contiguous keys array, got non-contiguous keys with "
                           f"data types: {types}")
    if not _contiguous(values):
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
    if not _contiguous(keys):
        raise RuntimeError("segmented_sort_pairs() requires a contiguous keys array")
    if not _contiguous(values):
        raise RuntimeError("segmented_sort_pairs() requires a contiguous values array")
    if segment_start_indices.dtype != _t.int32:
        raise RuntimeError("segment_start_indices array must be of type int32")
    if segment_start_indices.ndim != 1:
        raise RuntimeError("segment_start_indices must be one-dimensional")
    if not _contiguous(segment_start_indices):
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
        if not _contiguous(segment_end_indices):
            raise RuntimeError("segmented_sort_pairs() requires a contiguous segment_end_indices array")
        if segment_start_indices.size != segment_end_indices.size:
            raise RuntimeError(f"segment_start_indices and segment_end_indices must have the same size "
                               f"({segment_start_indices.size} vs {segment_end_indices.size})")
        if segment_start_indices.size == 0:
            return
        starts = _host(segment_start_indices).astype(np.int64)
        ends = _host(segment_end_indices).astype(np.int64)

    if keys.dtype not in (_t.int32, _t.float32) or values.dtype != _t.int32:
        raise RuntimeError(f"Unsupported data type: {_type_repr(keys.dtype)}")

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


# -- misc ----------------------------------------------------------------------------------------------------
def transform_expand(t):
    """A flat 7-element sequence (position, then quaternion x, y, z, w) as a wp.transformf."""
    return transform(np.array(t[0:3]), np.array(t[3:7]))
