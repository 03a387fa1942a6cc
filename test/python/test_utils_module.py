"""wp.utils (Warp's warp.utils): reductions, scans, run-length encoding, casts and sorts against numpy, and each
argument check's message; wp.ScopedTimer and wp.transform_expand."""

import contextlib
import io
import re

import numpy as np
import pytest

import mlwarp as wp
import mlwarp.utils
from mlwarp.utils import (array_cast, array_inner, array_scan, array_sum, radix_sort_pairs, runlength_encode,
                          segmented_sort_pairs)

RNG = np.random.default_rng(20261201)


def test_module_is_reachable():
    assert wp.utils is mlwarp.utils
    assert wp.utils.array_sum is array_sum
    assert wp.ScopedTimer is mlwarp.utils.ScopedTimer


# -- array_sum ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,np_dtype,rtol", [(wp.float32, np.float32, 1e-5), (wp.float64, np.float64, 1e-12)])
def test_sum_scalars_whole_and_every_axis(dtype, np_dtype, rtol):
    x = RNG.random((4, 5, 6, 3)).astype(np_dtype)
    a = wp.array(x, dtype=dtype)
    total = array_sum(a)
    assert isinstance(total, np_dtype)
    np.testing.assert_allclose(total, x.astype(np.float64).sum(), rtol=rtol)
    for axis in range(-4, 4):
        got = array_sum(a, axis=axis)
        assert got.shape == x.sum(axis=axis, keepdims=True).shape and got.dtype is dtype
        np.testing.assert_allclose(got.numpy(), x.astype(np.float64).sum(axis=axis, keepdims=True), rtol=rtol)


def test_sum_vectors_and_matrices_componentwise():
    v = RNG.random((50, 3))
    total = array_sum(wp.array(v, dtype=wp.vec3d))
    np.testing.assert_allclose(total, v.sum(axis=0), rtol=1e-12)
    m = RNG.random((7, 8, 2, 2))
    got = array_sum(wp.array(m, dtype=wp.mat22d), axis=1)
    assert got.dtype is wp.mat22d and got.shape == (7, 1)
    np.testing.assert_allclose(got.numpy(), m.sum(axis=1, keepdims=True), rtol=1e-12)


def test_sum_value_count_and_out():
    x = np.arange(1.0, 25.0).reshape(2, 3, 4)
    a = wp.array(x, dtype=wp.float64)
    out = wp.full((1,), -1.0, dtype=wp.float64)
    assert array_sum(a, out=out, value_count=7) is out
    assert out.numpy()[0] == np.sum(np.arange(1.0, 8.0))  # the first 7 of the flattened array: 28
    out = wp.full((2, 1, 4), -1.0, dtype=wp.float64)
    assert array_sum(a, out=out, value_count=2, axis=-2) is out
    np.testing.assert_array_equal(out.numpy(), x[:, :2, :].sum(axis=1, keepdims=True))


def test_sum_strided_and_transposed_views():
    x = RNG.random((9, 12))
    a = wp.array(x, dtype=wp.float64)
    view = a[1::2, ::3]  # non-contiguous
    np.testing.assert_allclose(array_sum(view), x[1::2, ::3].sum(), rtol=1e-12)
    np.testing.assert_allclose(array_sum(view, axis=0).numpy(), x[1::2, ::3].sum(axis=0, keepdims=True), rtol=1e-12)
    t = wp.array(RNG.random((3, 4, 5)), dtype=wp.float64)
    tt = t.transpose((2, 0, 1))  # its outer dims do not fold: reduced from a contiguous copy
    ref = t.numpy().transpose((2, 0, 1))
    np.testing.assert_allclose(array_sum(tt, axis=1).numpy(), ref.sum(axis=1, keepdims=True), rtol=1e-12)
    # a strided `out`
    out_base = wp.full((5, 2, 4), 7.0, dtype=wp.float64)
    out = out_base[:, ::2, :]
    array_sum(tt, out=out, axis=1)
    np.testing.assert_allclose(out_base.numpy()[:, 0:1, :], ref.sum(axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_array_equal(out_base.numpy()[:, 1, :], 7.0)


def test_sum_large_array_many_blocks():
    # > 65536 * 16 elements: more blocks than the parallel threshold, so the partial pass runs on every core
    x = RNG.random(3_000_001).astype(np.float32)
    got = array_sum(wp.array(x))
    exact = x.astype(np.float64).sum()
    assert abs(float(got) - exact) <= 1e-5 * exact
    got2 = array_sum(wp.array(x))
    assert got2 == got  # the order of additions is fixed


def test_sum_empty_and_zero_count():
    assert array_sum(wp.zeros(0, dtype=wp.float32)) == 0.0
    np.testing.assert_array_equal(array_sum(wp.zeros(0, dtype=wp.vec2)), np.zeros(2))
    np.testing.assert_array_equal(array_sum(wp.zeros((0, 3), dtype=float), axis=0).numpy(), np.zeros((1, 3)))
    np.testing.assert_array_equal(array_sum(wp.ones((2, 3), dtype=float), value_count=0, axis=-1).numpy(),
                                  np.zeros((2, 1)))


def test_sum_errors():
    a = wp.array((1.0, 2.0, 3.0), dtype=wp.float32)
    with pytest.raises(RuntimeError, match=r"^out array should have type float32$"):
        array_sum(a, out=wp.empty(1, dtype=wp.float64))
    with pytest.raises(RuntimeError, match=r"^out array should have shape \(1,\)$"):
        array_sum(a, out=wp.empty(2, dtype=wp.float32))
    with pytest.raises(RuntimeError, match=r"^Unsupported data type: int32$"):
        array_sum(wp.array((1, 2, 3), dtype=int))
    with pytest.raises(RuntimeError, match=r"^Unsupported data type: vec3h$"):
        array_sum(wp.zeros(3, dtype=wp.vec3h))
    b = wp.ones((2, 3), dtype=float)
    for axis in (-3, 2):
        with pytest.raises(IndexError, match=rf"^array_sum\(\) axis {axis} is out of bounds for an array with 2 "
                                             r"dimensions$"):
            array_sum(b, axis=axis)
    with pytest.raises(RuntimeError, match=r"^array_sum\(\) value_count \(7\) exceeds the number of elements to "
                                           r"reduce \(6\)$"):
        array_sum(b, value_count=7)
    with pytest.raises(RuntimeError, match=r"^array_sum\(\) value_count must be non-negative, got -1$"):
        array_sum(b, value_count=-1, axis=0)


# -- array_inner --------------------------------------------------------------------------------------------
def test_inner_scalars_vectors_axes():
    a_np, b_np = RNG.random((5, 10, 2)), RNG.random((5, 10, 2))
    a, b = wp.array(a_np, dtype=wp.float64), wp.array(b_np, dtype=wp.float64)
    np.testing.assert_allclose(array_inner(a, b), np.dot(a_np.ravel(), b_np.ravel()), rtol=1e-12)
    for axis in range(-3, 3):
        got = array_inner(a, b, axis=axis)
        np.testing.assert_allclose(got.numpy(), (a_np * b_np).sum(axis=axis, keepdims=True), rtol=1e-12)
    v, w = RNG.random((100, 3)).astype(np.float32), RNG.random((100, 3)).astype(np.float32)
    got = array_inner(wp.array(v, dtype=wp.vec3), wp.array(w, dtype=wp.types.vector(3, float)))
    assert isinstance(got, np.float32)
    np.testing.assert_allclose(got, np.dot(v.ravel().astype(np.float64), w.ravel()), rtol=1e-5)
    m = RNG.random((4, 6, 3, 3))
    got = array_inner(wp.array(m, dtype=wp.mat33d), wp.array(m, dtype=wp.mat33d), axis=1)
    assert got.dtype is wp.float64 and got.shape == (4, 1)
    np.testing.assert_allclose(got.numpy()[:, 0], (m * m).sum(axis=(1, 2, 3)), rtol=1e-12)


def test_inner_count_out_strided():
    x, y = np.arange(1.0, 25.0).reshape(2, 3, 4), np.arange(25.0, 49.0).reshape(2, 3, 4)
    a, b = wp.array(x, dtype=wp.float64), wp.array(y, dtype=wp.float64)
    out = wp.full((2, 3, 1), -1.0, dtype=wp.float64)
    assert array_inner(a, b, out=out, count=3, axis=-1) is out
    np.testing.assert_array_equal(out.numpy(), (x[..., :3] * y[..., :3]).sum(axis=-1, keepdims=True))
    out = wp.empty(1, dtype=wp.float64)
    array_inner(a, b, out, count=5)
    assert out.numpy()[0] == np.dot(x.ravel()[:5], y.ravel()[:5])
    z = RNG.random((8, 8))
    c = wp.array(z, dtype=wp.float64)[::2, 1::3]
    np.testing.assert_allclose(array_inner(c, c), (z[::2, 1::3] ** 2).sum(), rtol=1e-12)


def test_inner_empty():
    assert array_inner(wp.zeros(0, dtype=wp.vec2), wp.zeros(0, dtype=wp.vec2)) == 0.0
    e = wp.zeros((2, 0, 3), dtype=wp.float32)
    np.testing.assert_array_equal(array_inner(e, e, axis=-2).numpy(), np.zeros((2, 1, 3)))


def test_inner_errors():
    f32 = wp.array((1.0, 2.0, 3.0), dtype=wp.float32)
    for a_shape, b_shape, kwargs in (((2,), (3,), {}), ((2, 3), (6,), {"axis": 1}), ((0, 3), (3, 0), {})):
        with pytest.raises(ValueError) as e:
            array_inner(wp.empty(a_shape, dtype=float), wp.empty(b_shape, dtype=float), **kwargs)
        assert str(e.value) == f"array_inner() arguments must have the same shape, got {a_shape} and {b_shape}"
    with pytest.raises(RuntimeError, match=r"^A and b array data types do not match \(float32 vs float64\)$"):
        array_inner(f32, wp.array((1.0, 2.0, 3.0), dtype=wp.float64))
    with pytest.raises(RuntimeError, match=r"^out array should have type float32$"):
        array_inner(f32, f32, wp.empty(1, dtype=wp.float64))
    with pytest.raises(RuntimeError, match=r"^out array should have shape \(1,\)$"):
        array_inner(f32, f32, wp.empty(2, dtype=wp.float32))
    with pytest.raises(RuntimeError, match=r"^Unsupported data type: int32$"):
        i = wp.array((1, 2, 3), dtype=int)
        array_inner(i, i)
    with pytest.raises(IndexError, match=r"^array_inner\(\) axis 1 is out of bounds for an array with 1 dimensions$"):
        array_inner(f32, f32, axis=1)
    with pytest.raises(RuntimeError, match=r"^array_inner\(\) count \(4\) exceeds the number of elements to reduce "
                                           r"\(3\)$"):
        array_inner(f32, f32, count=4)


def test_reductions_are_not_taped():
    a = wp.array(np.ones(10, dtype=np.float32), requires_grad=True)
    tape = wp.Tape()
    with tape:
        array_sum(a)
        array_inner(a, a)
        array_scan(a, wp.zeros_like(a))
    assert tape.launches == []


def test_cast_is_taped_and_differentiable():
    @wp.kernel
    def squares(y: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
        i = wp.tid()
        wp.atomic_add(loss, 0, y[i] * y[i])

    x = wp.array(np.array((1.0, 2.0, 3.0), dtype=np.float32), requires_grad=True)
    y = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        array_cast(x, y)
        wp.launch(squares, dim=3, inputs=[y, loss])
    tape.backward(loss=loss)
    np.testing.assert_array_equal(x.grad.numpy(), (2.0, 4.0, 6.0))  # d(sum y^2)/dx = 2x


# -- array_scan ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,np_dtype", [(wp.int32, np.int32), (wp.int64, np.int64), (wp.float32, np.float32),
                                            (wp.float64, np.float64)])
def test_scan_scalars(dtype, np_dtype):
    n = 100_003
    if np.issubdtype(np_dtype, np.integer):
        x = RNG.integers(-1000, 1000, n).astype(np_dtype)
    else:
        x = RNG.uniform(-1.0, 1.0, n).astype(np_dtype)
    ref = np.cumsum(x.astype(np.float64) if np_dtype == np.float32 else x)
    a = wp.array(x, dtype=dtype)
    inc, exc = wp.zeros_like(a), wp.full_like(a, 5)
    array_scan(a, inc, True)
    array_scan(a, exc, inclusive=False)
    if np.issubdtype(np_dtype, np.integer):
        np.testing.assert_array_equal(inc.numpy(), ref)
        np.testing.assert_array_equal(exc.numpy(), np.concatenate([[0], ref[:-1]]))
    else:
        tol = 1e-3 if np_dtype == np.float32 else 1e-9
        np.testing.assert_allclose(inc.numpy(), ref, atol=tol)
        np.testing.assert_allclose(exc.numpy(), np.concatenate([[0], ref[:-1]]), atol=tol)


def test_scan_vectors_strided_multidim_inplace():
    v = RNG.integers(-50, 50, (1000, 3)).astype(np.int32)
    a = wp.array(v, dtype=wp.vec3i)
    out = wp.zeros_like(a)
    array_scan(a, out)
    np.testing.assert_array_equal(out.numpy(), np.cumsum(v, axis=0))
    base = wp.array(np.arange(20, dtype=np.int64))
    out_base = wp.full(20, -7, dtype=wp.int64)
    array_scan(base[1::2], out_base[::2], inclusive=False)
    np.testing.assert_array_equal(out_base.numpy()[::2], np.concatenate([[0], np.cumsum(np.arange(1, 20, 2))[:-1]]))
    np.testing.assert_array_equal(out_base.numpy()[1::2], -7)
    m = wp.array(np.arange(12, dtype=np.float64).reshape(3, 4))
    flat_out = wp.zeros(12, dtype=wp.float64)
    array_scan(m, flat_out)  # row-major order; only the sizes must match
    np.testing.assert_array_equal(flat_out.numpy(), np.cumsum(np.arange(12.0)))
    array_scan(m, m)  # in place
    np.testing.assert_array_equal(m.numpy().ravel(), np.cumsum(np.arange(12.0)))


def test_scan_large_parallel():
    x = RNG.integers(0, 3, 5_000_000).astype(np.int64)
    out = wp.zeros(x.size, dtype=wp.int64)
    array_scan(wp.array(x), out)
    np.testing.assert_array_equal(out.numpy(), np.cumsum(x))


def test_scan_errors():
    array_scan(wp.zeros(0, dtype=int), wp.zeros(0, dtype=int))  # nothing to do
    with pytest.raises(RuntimeError, match=r"^In and out array storage sizes do not match \(123 vs 234\)$"):
        array_scan(wp.zeros(123, dtype=int), wp.zeros(234, dtype=int))
    with pytest.raises(RuntimeError, match=r"^In and out array data types do not match \(int32 vs float32\)$"):
        array_scan(wp.zeros(123, dtype=int), wp.zeros(123, dtype=float))
    with pytest.raises(RuntimeError, match=r"^Unsupported data type: vec3h$"):
        array_scan(wp.zeros(3, dtype=wp.vec3h), wp.zeros(3, dtype=wp.vec3h))
    with pytest.raises(RuntimeError, match=r"^Unsupported data type: mat22f$"):
        array_scan(wp.zeros(3, dtype=wp.mat22), wp.zeros(3, dtype=wp.mat22))
    with pytest.raises(RuntimeError, match=r"^Input array must be contiguous or one-dimensional$"):
        array_scan(wp.zeros((4, 4), dtype=int)[:, ::2], wp.zeros(8, dtype=int))
    with pytest.raises(RuntimeError, match=r"^Output array must be contiguous or one-dimensional$"):
        array_scan(wp.zeros(8, dtype=int), wp.zeros((4, 4), dtype=int)[:, ::2])


# -- runlength_encode ---------------------------------------------------------------------------------------
def test_runlength_encode_against_numpy():
    for n in (1, 2, 17, 1000, 200_001):
        x = np.sort(RNG.integers(-10, 10, n)).astype(np.int32)
        values, counts = np.unique(x, return_counts=True)
        rv, rl = wp.full(n, -99, dtype=int), wp.full(n, -99, dtype=int)
        runs = runlength_encode(wp.array(x), rv, rl)
        assert runs == len(values)
        np.testing.assert_array_equal(rv.numpy()[:runs], values)
        np.testing.assert_array_equal(rl.numpy()[:runs], counts)
        np.testing.assert_array_equal(rv.numpy()[runs:], -99)


def test_runlength_encode_run_count_and_value_count():
    x = wp.array((5, 5, 1, 1, 1, 5, 7, 7), dtype=int)
    rv, rl, count = wp.zeros(8, dtype=int), wp.zeros(8, dtype=int), wp.full(1, -1, dtype=int)
    assert runlength_encode(x, rv, rl, run_count=count, value_count=6) is count
    assert count.numpy()[0] == 3
    np.testing.assert_array_equal(rv.numpy()[:3], (5, 1, 5))
    np.testing.assert_array_equal(rl.numpy()[:3], (2, 3, 1))
    assert runlength_encode(x, rv, rl, value_count=0) == 0
    assert runlength_encode(x, rv, rl, run_count=count, value_count=0) is count and count.numpy()[0] == 0


def test_runlength_encode_errors():
    v = wp.zeros(123, dtype=int)
    with pytest.raises(RuntimeError, match=r"^Output array storage sizes must be at least equal to value_count "
                                           r"\(123\)$"):
        runlength_encode(v, wp.empty(1, dtype=int), wp.empty(123, dtype=int))
    with pytest.raises(RuntimeError, match=r"^values and run_values data types do not match \(int32 vs float32\)$"):
        runlength_encode(v, wp.empty(123, dtype=float), wp.empty(123, dtype=int))
    with pytest.raises(RuntimeError, match=r"^run_lengths array must be of type int32$"):
        runlength_encode(v, wp.empty(123, dtype=int), wp.empty(123, dtype=float))
    with pytest.raises(RuntimeError, match=r"^run_count array must be of type int32$"):
        runlength_encode(v, wp.empty(123, dtype=int), wp.empty(123, dtype=int), run_count=wp.empty(1, dtype=float))
    with pytest.raises(RuntimeError, match=r"^value_count must be non-negative, got -5$"):
        runlength_encode(v, wp.empty(123, dtype=int), wp.empty(123, dtype=int), value_count=-5)
    with pytest.raises(RuntimeError, match=r"^Unsupported data type: float32$"):
        runlength_encode(wp.zeros(3, dtype=float), wp.empty(3, dtype=float), wp.empty(3, dtype=int))
    with pytest.raises(RuntimeError, match=r"^runlength_encode\(\) value_count \(5\) exceeds the size of values "
                                           r"\(3\)$"):
        runlength_encode(wp.zeros(3, dtype=int), wp.empty(5, dtype=int), wp.empty(5, dtype=int), value_count=5)


# -- array_cast ---------------------------------------------------------------------------------------------
def test_cast_scalars_and_dims():
    out = wp.empty(3, dtype=float)
    array_cast(wp.array((1, 2, 3), dtype=int), out)
    np.testing.assert_array_equal(out.numpy(), (1.0, 2.0, 3.0))
    out = wp.full(4, 9, dtype=wp.int32)
    array_cast(wp.array((1.5, -2.7, 3.99, 4.0), dtype=wp.float32), out, count=3)
    np.testing.assert_array_equal(out.numpy(), (1, -2, 3, 9))  # truncation toward zero, as C casts
    for shape in ((3, 4), (2, 3, 2), (2, 1, 3, 2)):
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 5.5
        out = wp.zeros(shape, dtype=wp.float64)
        array_cast(wp.array(x), out)
        np.testing.assert_array_equal(out.numpy(), x.astype(np.float64))
    out = wp.zeros((2, 2), dtype=int)
    array_cast(wp.array(np.arange(4).reshape(2, 2), dtype=int), out)  # same dtype: a copy
    np.testing.assert_array_equal(out.numpy(), np.arange(4).reshape(2, 2))


def test_cast_composites():
    v = RNG.random((5, 3)).astype(np.float32)
    out = wp.zeros(5, dtype=wp.vec3d)
    array_cast(wp.array(v, dtype=wp.vec3), out)
    np.testing.assert_array_equal(out.numpy(), v.astype(np.float64))
    flat = wp.zeros(2, dtype=float)
    array_cast(wp.array(((1, 2), (3, 4)), dtype=wp.vec2), flat, count=1)  # element shapes differ: as scalars
    np.testing.assert_array_equal(flat.numpy(), (1.0, 2.0))
    ints = wp.zeros(6, dtype=wp.int32)
    array_cast(wp.array(((1.9, 2.1, -3.5), (4.0, 5.5, 6.25)), dtype=wp.vec3), ints)
    np.testing.assert_array_equal(ints.numpy(), (1, 2, -3, 4, 5, 6))


def test_cast_errors():
    with pytest.raises(RuntimeError, match=r"^Array shapes do not match \(\(2, 3\) vs \(3, 2\)\)$"):
        array_cast(wp.zeros((2, 3), dtype=wp.float32), wp.zeros((3, 2), dtype=wp.float64))
    values = wp.array(np.arange(1, 11, dtype=np.float32))
    result = wp.zeros(10, dtype=wp.int32)
    with pytest.raises(RuntimeError, match=r"^Cast count \(10\) exceeds the input size \(10\) or output size "
                                           r"\(3\)$"):
        array_cast(values, result[:3])
    with pytest.raises(RuntimeError, match=r"^Cast count \(5\) exceeds the input size \(3\) or output size "
                                           r"\(10\)$"):
        array_cast(values[:3], result, count=5)
    np.testing.assert_array_equal(result.numpy(), 0)
    with pytest.raises(RuntimeError, match=r"^Flattening non-contiguous arrays is unsupported\.$"):
        array_cast(wp.zeros((4, 4), dtype=wp.vec2)[:, ::2], wp.zeros(16, dtype=float))
    with pytest.raises(RuntimeError, match=r"^Partial cast is not supported for arrays with more than one "
                                           r"dimension$"):
        array_cast(wp.zeros((2, 2), dtype=int), wp.zeros((2, 2), dtype=float), count=1)


# -- radix_sort_pairs ---------------------------------------------------------------------------------------
def _sort_case(np_dtype, n):
    if np.dtype(np_dtype).kind == "f":
        keys = RNG.normal(0, 100, n).astype(np_dtype)
        keys[::7] = keys[1::7][: keys[::7].size]  # duplicates, to see stability
    elif np.dtype(np_dtype).kind == "u":
        keys = RNG.integers(0, 50, n).astype(np_dtype)
        keys[::5] = np.iinfo(np_dtype).max
    else:
        keys = RNG.integers(-50, 50, n).astype(np_dtype)
        keys[::5] = np.iinfo(np_dtype).min
    return keys


@pytest.mark.parametrize("key_type,np_dtype", [(wp.int32, np.int32), (wp.uint32, np.uint32),
                                               (wp.float32, np.float32), (wp.int64, np.int64),
                                               (wp.uint64, np.uint64), (wp.float64, np.float64)])
def test_radix_sort_matches_stable_argsort(key_type, np_dtype):
    n = 1000
    keys_np = _sort_case(np_dtype, n)
    keys = wp.zeros(2 * n, dtype=key_type)
    keys.numpy()[:n] = keys_np
    values = wp.array(np.arange(2 * n, dtype=np.int64), dtype=wp.int64)
    radix_sort_pairs(keys, values, n)
    order = np.argsort(keys_np, kind="stable")
    np.testing.assert_array_equal(keys.numpy()[:n], keys_np[order])
    np.testing.assert_array_equal(values.numpy()[:n], order)
    np.testing.assert_array_equal(values.numpy()[n:], np.arange(n, 2 * n))  # past count: untouched


def test_radix_sort_bit_range_and_value_types():
    keys = wp.array((8, 1, 10, 3, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0), dtype=wp.uint32)
    values = wp.array((1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0), dtype=wp.float32)
    radix_sort_pairs(keys, values, 8, end_bit=2)  # by the two low bits: 0, 1, 2, 3
    np.testing.assert_array_equal(keys.numpy()[:8], (8, 4, 1, 5, 10, 6, 3, 7))
    np.testing.assert_array_equal(values.numpy()[:8], (1, 5, 2, 6, 3, 7, 4, 8))
    keys = wp.array((12, 1, 6, 7, 0, 0, 0, 0), dtype=wp.int32)
    values = wp.array(((1, 1), (2, 2), (3, 3), (4, 4), (0, 0), (0, 0), (0, 0), (0, 0)), dtype=wp.vec2h)
    radix_sort_pairs(keys, values, 4, begin_bit=2, end_bit=3)  # by bit 2: 12->1, 1->0, 6->1, 7->1
    np.testing.assert_array_equal(keys.numpy()[:4], (1, 12, 6, 7))
    np.testing.assert_array_equal(values.numpy()[:4, 0], (2, 1, 3, 4))
    keys = wp.array((-0.0, 0.0, -1.5, 2.0, 0, 0, 0, 0), dtype=wp.float64)  # radix order: -1.5, -0.0, 0.0, 2.0
    values = wp.array(np.arange(8), dtype=wp.int32)
    radix_sort_pairs(keys, values, 4)
    np.testing.assert_array_equal(values.numpy()[:4], (2, 0, 1, 3))
    radix_sort_pairs(wp.zeros(0, dtype=float), wp.zeros(0, dtype=int), 0)  # nothing to do


def test_radix_sort_errors():
    k3, v3 = wp.array((1, 2, 3), dtype=int), wp.array((1, 2, 3), dtype=int)
    with pytest.raises(RuntimeError, match=r"^Keys and values array storage must be large enough to contain "
                                           r"2\*count elements$"):
        radix_sort_pairs(k3, v3, 3)
    with pytest.raises(RuntimeError, match=r"^Unsupported keys and values data types: float32, float16$"):
        radix_sort_pairs(wp.zeros(3, dtype=float), wp.zeros(3, dtype=wp.float16), 1)
    with pytest.raises(RuntimeError, match=r"^Unsupported keys and values data types: int16, int32$"):
        radix_sort_pairs(wp.zeros(3, dtype=wp.int16), wp.zeros(3, dtype=int), 1)
    k6, v6 = wp.zeros(6, dtype=int), wp.zeros(6, dtype=int)
    with pytest.raises(RuntimeError, match=r"^Invalid radix sort bit range \[4, 2\) for 32-bit keys$"):
        radix_sort_pairs(k6, v6, 3, begin_bit=4, end_bit=2)
    with pytest.raises(RuntimeError, match=r"^Invalid radix sort bit range \[0, 65\) for 64-bit keys$"):
        radix_sort_pairs(wp.zeros(6, dtype=wp.int64), v6, 3, end_bit=65)
    with pytest.raises(RuntimeError, match=r"^radix_sort_pairs\(\) requires a contiguous keys array, got "
                                           r"non-contiguous keys with data types: int32, int32$"):
        radix_sort_pairs(wp.zeros(16, dtype=int)[::2], wp.zeros(16, dtype=int), 4)
    with pytest.raises(RuntimeError, match=r"^radix_sort_pairs\(\) requires a contiguous values array, got "
                                           r"non-contiguous values with data types: int32, int32$"):
        radix_sort_pairs(wp.zeros(16, dtype=int), wp.zeros(16, dtype=int)[::2], 4)


# -- segmented_sort_pairs -----------------------------------------------------------------------------------
@pytest.mark.parametrize("key_type,np_dtype", [(wp.int32, np.int32), (wp.float32, np.float32)])
def test_segmented_sort_matches_per_segment_argsort(key_type, np_dtype):
    n = 500
    keys_np = (RNG.integers(0, 20, n) if np_dtype == np.int32 else RNG.random(n)).astype(np_dtype)
    starts = np.array((0, 10, 10, 200, 350), dtype=np.int32)  # an empty segment; [190, 200) and past 480 unsorted
    ends = np.array((10, 10, 190, 350, 480), dtype=np.int32)
    keys = wp.zeros(2 * n, dtype=key_type)
    keys.numpy()[:n] = keys_np
    values = wp.array(np.arange(2 * n, dtype=np.int32))
    segmented_sort_pairs(keys, values, n, wp.array(starts), wp.array(ends))
    want_k, want_v = keys_np.copy(), np.arange(n, dtype=np.int32)
    for s, e in zip(starts, ends):
        order = np.argsort(keys_np[s:e], kind="stable")
        want_k[s:e], want_v[s:e] = keys_np[s:e][order], np.arange(s, e)[order]
    np.testing.assert_array_equal(keys.numpy()[:n], want_k)
    np.testing.assert_array_equal(values.numpy()[:n], want_v)


def test_segmented_sort_inferred_ends_and_no_segments():
    keys = wp.array((7, 2, 8, 4, 1, 6, 5, 3, 0, 0, 0, 0, 0, 0, 0, 0), dtype=int)
    values = wp.array((1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0), dtype=int)
    segmented_sort_pairs(keys, values, 8, wp.array((0, 4, 8), dtype=int))
    np.testing.assert_array_equal(keys.numpy()[:8], (2, 4, 7, 8, 1, 3, 5, 6))
    np.testing.assert_array_equal(values.numpy()[:8], (2, 4, 1, 3, 5, 8, 7, 6))
    keys, values = wp.array((2, 1), dtype=int), wp.array((20, 10), dtype=int)
    segmented_sort_pairs(keys, values, 1, wp.array((0,), dtype=int))
    np.testing.assert_array_equal(keys.numpy(), (2, 1))


def test_segmented_sort_invalid_range_sorts_nothing():
    keys = wp.array((2, 1, 4, 3, 0, 0, 0, 0), dtype=int)
    values = wp.array((20, 10, 40, 30, 0, 0, 0, 0), dtype=int)
    with pytest.raises(ValueError, match=r"^Invalid segment range at index 1: \[2, 5\) for count 4$"):
        segmented_sort_pairs(keys, values, 4, wp.array((0, 2), dtype=int), wp.array((2, 5), dtype=int))
    np.testing.assert_array_equal(keys.numpy()[:4], (2, 1, 4, 3))
    for start, end in ((-2, -1), (3, 2)):
        with pytest.raises(ValueError, match=r"^Invalid segment range at index 0"):
            segmented_sort_pairs(keys, values, 4, wp.array((start,), dtype=int), wp.array((end,), dtype=int))


def test_segmented_sort_errors():
    k, v = wp.zeros(2, dtype=int), wp.zeros(2, dtype=int)
    s, e = wp.array((0,), dtype=int), wp.array((0,), dtype=int)
    with pytest.raises(ValueError, match=r"^count must be non-negative, got -1$"):
        segmented_sort_pairs(k, v, -1, s, e)
    for count in (1.5, True):
        with pytest.raises(TypeError, match=r"^count must be an integer$"):
            segmented_sort_pairs(k, v, count, s, e)
    with pytest.raises(ValueError, match=r"^count must not exceed 2147483647, got 2147483648$"):
        segmented_sort_pairs(k, v, 1 << 31, s, e)
    with pytest.raises(RuntimeError, match=r"^Array storage must be large enough to contain 2\*count elements$"):
        segmented_sort_pairs(wp.zeros(3, dtype=int), wp.zeros(3, dtype=int), 3, s, e)
    k8, v8 = wp.zeros(8, dtype=int), wp.zeros(8, dtype=int)
    with pytest.raises(RuntimeError, match=r"^segment_start_indices and segment_end_indices must have the same "
                                           r"size \(2 vs 1\)$"):
        segmented_sort_pairs(k8, v8, 4, wp.array((0, 2), dtype=int), wp.array((2,), dtype=int))
    with pytest.raises(RuntimeError, match=r"^segment_start_indices must be one-dimensional$"):
        segmented_sort_pairs(k8, v8, 4, wp.zeros((2, 2), dtype=int))
    with pytest.raises(RuntimeError, match=r"^segment_start_indices array must be of type int32$"):
        segmented_sort_pairs(k8, v8, 4, wp.zeros(2, dtype=wp.int64))
    with pytest.raises(RuntimeError, match=r"^Unsupported data type: float64$"):
        segmented_sort_pairs(wp.zeros(8, dtype=wp.float64), v8, 4, wp.array((0, 4), dtype=int))
    with pytest.raises(RuntimeError, match=r"^segmented_sort_pairs\(\) requires a contiguous keys array$"):
        segmented_sort_pairs(wp.zeros(4, dtype=int)[::2], k, 1, s, wp.array((1,), dtype=int))
    with pytest.raises(RuntimeError, match=r"^segmented_sort_pairs\(\) requires a contiguous "
                                           r"segment_start_indices array$"):
        segmented_sort_pairs(k, v, 1, wp.array((0, 1), dtype=int)[::2], wp.array((1,), dtype=int))


# -- ScopedTimer, transform_expand --------------------------------------------------------------------------
def test_scoped_timer_prints_and_records():
    with contextlib.redirect_stdout(io.StringIO()) as f:
        with wp.ScopedTimer("hello"):
            pass
    assert re.fullmatch(r"hello took \d+\.\d\d ms\n", f.getvalue())
    times = {}
    with contextlib.redirect_stdout(io.StringIO()) as f:
        with wp.ScopedTimer("outer", dict=times):
            with wp.ScopedTimer("inner", dict=times) as t:
                t.extra_msg = "(extra)"
        with wp.ScopedTimer("quiet", print=False, dict=times):
            pass
        with wp.ScopedTimer("off", active=False, dict=times):
            pass
    lines = f.getvalue().splitlines()
    assert re.fullmatch(r"    inner took \d+\.\d\d ms \(extra\)", lines[0])
    assert re.fullmatch(r"outer took \d+\.\d\d ms", lines[1]) and len(lines) == 2
    assert [len(times[k]) for k in ("outer", "inner", "quiet", "off")] == [1, 1, 1, 0]
    assert times["outer"][0] >= times["inner"][0] >= 0.0
    with contextlib.redirect_stdout(io.StringIO()) as f:
        with wp.ScopedTimer("profiled", detailed=True):
            sum(range(10))
    assert re.match(r"^\s+\d+ function calls", f.getvalue())


def test_transform_expand():
    t = wp.transform_expand((1.0, 2.0, 3.0, 0.0, 0.0, 0.6, 0.8))
    assert type(t) is wp.transformf
    np.testing.assert_allclose(np.array(t), (1.0, 2.0, 3.0, 0.0, 0.0, 0.6, 0.8), rtol=1e-7)


# -- create_warp_function -----------------------------------------------------------------------------------
def _multiline_lambda():
    return lambda q, qd: (
        q[0] == 0.0
        and q[1] == 2.0 * qd
    )


OFFSET = 0.5


def _named(x, y):
    return x * y + OFFSET


def test_create_warp_function_from_lambda_and_def():
    created, module = wp.utils.create_warp_function(_multiline_lambda())
    assert re.fullmatch(r"func_[0-9a-f]{16}", created.key)
    assert module.name == f"map_{created.key}"
    assert created((0.0, 2.0), 1.0) is True and created((0.0, 2.0), 3.0) is False
    again, _ = wp.utils.create_warp_function(_multiline_lambda())
    assert again.key == created.key  # named after the body's text
    scale = 3.0
    shifted, _ = wp.utils.create_warp_function(lambda x: x * scale + 1.0)  # a closure variable
    named, named_module = wp.utils.create_warp_function(_named)
    assert named.key == "_named" and named_module.name == "map__named"

    @wp.kernel
    def apply(a: wp.array(dtype=float), b: wp.array(dtype=float), c: wp.array(dtype=float)):
        i = wp.tid()
        b[i] = shifted(a[i])
        c[i] = named(a[i], 2.0)

    x = np.arange(5, dtype=np.float32)
    b, c = wp.zeros(5), wp.zeros(5)
    wp.launch(apply, dim=5, inputs=[wp.array(x), b, c])
    np.testing.assert_array_equal(b.numpy(), x * 3.0 + 1.0)
    np.testing.assert_array_equal(c.numpy(), x * 2.0 + 0.5)


def test_runlength_encode_multidimensional_arrays_as_flat():
    x = wp.array(np.array(((1, 1, 2), (2, 2, 3)), dtype=np.int32))
    rv, rl = wp.zeros((2, 3), dtype=int), wp.zeros(6, dtype=int)
    assert runlength_encode(x, rv, rl) == 3
    np.testing.assert_array_equal(rv.numpy().ravel()[:3], (1, 2, 3))
    np.testing.assert_array_equal(rl.numpy()[:3], (2, 3, 1))
