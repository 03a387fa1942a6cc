"""`wp.utils.array_sum` / `array_inner`: two passes of per-block partial sums. Each output element's reduction is
cut into contiguous blocks (enough of them that the launch runs on every core), the first kernel writes one
partial per block, the second adds the partials in order: the result does not depend on the thread count."""

# No `from __future__ import annotations`: the kernels below are built in factories, and their annotations
# name the factory's dtype parameters (a string annotation would be evaluated in the module's globals).

import functools
import operator

import numpy as np

from mlwarp.core import types as _t
from mlwarp.arrays.array import array, clone, copy, empty, zeros
from mlwarp.library.builtins import namespace as wp  # wp.tid, wp.min: the builtins, spelt as in user code
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.runtime import capture as _capture
from mlwarp.algorithms.array_views import (
    MIN_BLOCK, TARGET_THREADS, scalar_of, scalar_storage, type_repr, untaped, wrap_scalars
)


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
        store = scalar_storage(a)
        shape = (outer[0][0], outer[1][0], count, store.shape[-1])
        strides = (outer[0][1][i], outer[1][1][i], n_strides[i], store.strides[-1])
        views.append(wrap_scalars(np.lib.stride_tricks.as_strided(store, shape, strides), scalar_of(a.dtype), a.device))
    out_store = scalar_storage(out)
    out_view = wrap_scalars(np.lib.stride_tricks.as_strided(
        out_store, (out_outer[0][0], out_outer[1][0], out_store.shape[-1]),
        (out_outer[0][1], out_outer[1][1], out_store.strides[-1])), scalar_of(out.dtype), out.device)
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
    return [wrap_scalars(np.lib.stride_tricks.as_strided(v._np, v.shape[:2] + (v.shape[2] * c, 1),
                                                  v.strides[:2] + (v.strides[3], v.strides[3])), v.dtype, v.device)
            for v in views]


def _blocks(n: int, outputs: int) -> tuple:
    """(block length, block count): how each of `outputs` reductions of `n` elements is cut into blocks."""
    nb = 1 if n <= MIN_BLOCK else max(1, min(-(-n // MIN_BLOCK), -(-TARGET_THREADS // max(1, outputs))))
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
    T = scalar_of(inputs[0].dtype)
    views, out_view, result = _reduction_views(operation, inputs, out, axis, count)
    P, Q = out_view.shape[0], out_view.shape[1]
    device = inputs[0].device
    with untaped():
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
            raise RuntimeError(f"out array should have type {type_repr(values.dtype)}")
        if out.shape != output_shape:
            raise RuntimeError(f"out array should have shape {output_shape}")

    if value_count == 0:
        out.zero_()
        if axis is None and host_return:
            return out.numpy()[0]
        return out

    if scalar_of(values.dtype) not in (_t.float32, _t.float64):
        raise RuntimeError(f"Unsupported data type: {type_repr(values.dtype)}")

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
        raise RuntimeError(f"A and b array data types do not match ({type_repr(a.dtype)} vs "
                           f"{type_repr(b.dtype)})")
    if axis is not None:
        axis = _normalize_axis("array_inner", axis, a.ndim)
    limit = a.size if axis is None else a.shape[axis]
    count = limit if count is None else _check_count("array_inner", "count", count, limit)
    output_shape = _output_shape(a.shape, axis)
    scalar_type = scalar_of(a.dtype)

    if out is None:
        _refuse_host_result_in_capture("array_inner", a.device, axis)
        host_return = True
        out = empty(shape=output_shape, dtype=scalar_type, device=a.device)
    else:
        host_return = False
        if out.device != a.device:
            raise RuntimeError("out storage device should match values array")
        if out.dtype != scalar_type:
            raise RuntimeError(f"out array should have type {type_repr(scalar_type)}")
        if out.shape != output_shape:
            raise RuntimeError(f"out array should have shape {output_shape}")

    if count == 0:
        if axis is None and host_return:
            return 0.0
        out.zero_()
        return out

    if scalar_type not in (_t.float32, _t.float64):
        raise RuntimeError(f"Unsupported data type: {type_repr(a.dtype)}")

    if out.size > 0:
        _reduce("array_inner", [a, b], out, axis, count)
    if axis is None and host_return:
        return out.numpy()[0]
    return out
