"""Vectorised libm calls (warp-cpu-vector-math, glibc's libmvec): values against numpy in float64, the
same bits whatever the thread count, and the strided (scalar libm) copy of the loop within a few ulp."""

import numpy as np
import pytest

import mlwarp as wp

N = 100_003  # odd: vector body and scalar remainder both run

UNARY = {  # name: (numpy reference, input range)
    "sin": (np.sin, (-10, 10)), "cos": (np.cos, (-10, 10)), "tan": (np.tan, (-1.5, 1.5)),
    "asin": (np.arcsin, (-1, 1)), "acos": (np.arccos, (-1, 1)), "atan": (np.arctan, (-10, 10)),
    "sinh": (np.sinh, (-5, 5)), "cosh": (np.cosh, (-5, 5)), "tanh": (np.tanh, (-5, 5)),
    "exp": (np.exp, (-20, 20)), "log": (np.log, (1e-3, 1e3)), "log2": (np.log2, (1e-3, 1e3)),
    "log10": (np.log10, (1e-3, 1e3)), "cbrt": (np.cbrt, (-1e3, 1e3)),
}


def _unary_kernel(name, dtype):
    f = getattr(wp, name)

    def body(x: wp.array(dtype=dtype), y: wp.array(dtype=dtype)):
        i = wp.tid()
        y[i] = f(x[i])

    return wp.Kernel(body, key=f"vm_{name}_{dtype.__name__}")


def _ulps(a, b, dtype):
    eps = np.finfo(dtype).eps
    return np.max(np.abs(a.astype(np.float64) - b) / np.maximum(np.abs(b), np.finfo(dtype).tiny) / eps)


@pytest.mark.parametrize("dtype", [wp.float32, wp.float64])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_numpy(name, dtype):
    ref_fn, (lo, hi) = UNARY[name]
    np_t = np.float32 if dtype is wp.float32 else np.float64
    xv = np.random.default_rng(1).uniform(lo, hi, N).astype(np_t)
    x, y = wp.array(xv, dtype=dtype), wp.zeros(N, dtype=dtype)
    wp.launch(_unary_kernel(name, dtype), N, inputs=[x, y])
    ref = ref_fn(xv.astype(np.float64))
    assert _ulps(y.numpy(), ref, np_t) <= 4.5  # libmvec: <= 4 ulp; numpy's float64 reference rounds once more


@wp.kernel
def mixed(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    y[i] = wp.sin(v) * wp.exp(v * 0.1) + wp.atan2(v, 1.5) + wp.pow(wp.abs(v), 0.7)


@wp.kernel
def mixed_2d(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    i, j = wp.tid()
    y[i, j] = wp.cos(x[i, j]) + wp.log(wp.abs(x[i, j]) + 1.0)


def _run(kernel, x, threads):
    y = wp.zeros(x.shape, dtype=float)
    old = wp.config.cpu_threads
    wp.config.cpu_threads = threads
    try:
        wp.launch(kernel, x.shape, inputs=[x, y])
    finally:
        wp.config.cpu_threads = old
    return y.numpy()


@pytest.mark.parametrize("n", [N, 1 << 17, 3 * (1 << 15) + 5])
def test_same_bits_on_one_or_more_threads(n):
    x = wp.array(np.random.default_rng(2).uniform(-4, 4, n).astype(np.float32))
    one = _run(mixed, x, 1)
    for threads in (2, 3, 5):
        np.testing.assert_array_equal(_run(mixed, x, threads), one)


@pytest.mark.parametrize("shape", [(3, 70_001), (2, 1 << 17), (40_000, 3)])
def test_same_bits_on_one_or_more_threads_2d(shape):
    x = wp.array(np.random.default_rng(3).uniform(-4, 4, shape).astype(np.float32))
    one = _run(mixed_2d, x, 1)
    for threads in (2, 3):
        np.testing.assert_array_equal(_run(mixed_2d, x, threads), one)


def test_strided_scalar_copy_agrees():
    # the strided loop calls the scalar libm; the contiguous one the vector variants
    base = np.random.default_rng(4).uniform(-4, 4, 2 * N).astype(np.float32)
    contiguous = wp.array(base[::2].copy())
    strided = wp.array(base)[::2]
    a = _run(mixed, contiguous, 1)
    b = _run(mixed, strided, 1)
    ref = np.sin(base[::2].astype(np.float64)) * np.exp(base[::2].astype(np.float64) * np.float32(0.1)) + \
        np.arctan2(base[::2].astype(np.float64), 1.5) + np.abs(base[::2].astype(np.float64)) ** 0.7
    np.testing.assert_allclose(a, b, rtol=4e-6, atol=4e-6)
    np.testing.assert_allclose(a, ref, rtol=4e-6, atol=4e-6)


def _unary_run(name, dtype, xv, threads=1):
    x, y = wp.array(xv, dtype=dtype), wp.zeros(len(xv), dtype=dtype)
    old = wp.config.cpu_threads
    wp.config.cpu_threads = threads
    try:
        wp.launch(_unary_kernel(name, dtype), len(xv), inputs=[x, y])
    finally:
        wp.config.cpu_threads = old
    return y.numpy()


@pytest.mark.parametrize("dtype", [wp.float32, wp.float64])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_launch_size_and_debug_build_agree_within_4_ulp(name, dtype):
    """Where an element runs (vector body or scalar remainder) depends on the launch size, and a debug build
    is another loop: each may call another libmvec variant or the scalar libm, all within 4 ulp
    (docs/robustness.md); the thread count changes nothing (test_same_bits_on_one_or_more_threads)."""
    lo, hi = UNARY[name][1]
    np_t = np.float32 if dtype is wp.float32 else np.float64
    xv = np.random.default_rng(5).uniform(lo, hi, 4099).astype(np_t)
    whole = _unary_run(name, dtype, xv)
    for n in (1, 7, 13, 100):  # shorter than, or not a multiple of, any vector loop's step
        np.testing.assert_array_max_ulp(_unary_run(name, dtype, xv[:n]), whole[:n], maxulp=4)
    wp.config.mode = "debug"
    try:
        debug = _unary_run(name, dtype, xv)
    finally:
        wp.config.mode = "release"
    np.testing.assert_array_max_ulp(debug, whole, maxulp=4)
