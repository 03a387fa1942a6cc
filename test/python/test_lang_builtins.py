"""Scalar math builtins in kernels against numpy: correctly rounded ones exactly, transcendental ones to
float32/float64 tolerance."""

import math

import numpy as np
import pytest

import mlwarp as wp

X = np.array([0.0, 0.25, -0.5, 1.0, -1.75, 2.5, 3.14159, -7.3, 10.0, 12.3456], np.float64)
POSITIVE = np.array([1e-6, 0.25, 0.5, 1.0, 1.75, 2.5, 3.14159, 7.3, 10.0, 123.456], np.float64)


def unary(name):
    fn = getattr(wp, name)

    @wp.kernel
    def k32(x: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
        i = wp.tid()
        out[i] = fn(x[i])

    @wp.kernel
    def k64(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
        i = wp.tid()
        out[i] = fn(x[i])

    return {wp.float32: k32, wp.float64: k64}


def run_unary(name, T, x):
    x = np.asarray(x, T._np_)
    out = wp.zeros(len(x), dtype=T)
    wp.launch(unary(name)[T], dim=len(x), inputs=[wp.array(x, dtype=T), out])
    return out.numpy()


@pytest.mark.parametrize("T", [wp.float32, wp.float64])
@pytest.mark.parametrize("name,ref,domain", [
    ("sin", np.sin, X), ("cos", np.cos, X), ("tan", np.tan, X), ("exp", np.exp, X), ("log", np.log, POSITIVE),
])
def test_transcendental_builtins(T, name, ref, domain):
    x = domain.astype(T._np_)
    rtol = 2e-6 if T is wp.float32 else 1e-14
    np.testing.assert_allclose(run_unary(name, T, x), ref(x), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("T", [wp.float32, wp.float64])
@pytest.mark.parametrize("name,ref,domain", [
    ("sqrt", np.sqrt, POSITIVE), ("abs", np.abs, X), ("floor", np.floor, X), ("ceil", np.ceil, X),
])
def test_exact_builtins(T, name, ref, domain):
    x = domain.astype(T._np_)
    np.testing.assert_array_equal(run_unary(name, T, x), ref(x))


@wp.kernel
def binary_math(a: wp.array(dtype=float), b: wp.array(dtype=float), mn: wp.array(dtype=float),
                mx: wp.array(dtype=float), pw: wp.array(dtype=float), cl: wp.array(dtype=float)):
    i = wp.tid()
    mn[i] = wp.min(a[i], b[i])
    mx[i] = max(a[i], b[i])  # Python's builtin names map to the same builtins
    pw[i] = wp.pow(wp.abs(a[i]), b[i])
    cl[i] = wp.clamp(a[i], -1.0, b[i])


def test_binary_math_builtins():
    rng = np.random.default_rng(3)
    a = rng.uniform(-4, 4, 64).astype(np.float32)
    b = rng.uniform(0, 3, 64).astype(np.float32)
    outs = [wp.zeros(64) for _ in range(4)]
    wp.launch(binary_math, dim=64, inputs=[wp.array(a), wp.array(b), *outs])
    mn, mx, pw, cl = (o.numpy() for o in outs)
    np.testing.assert_array_equal(mn, np.minimum(a, b))
    np.testing.assert_array_equal(mx, np.maximum(a, b))
    np.testing.assert_allclose(pw, np.power(np.abs(a), b), rtol=3e-6)
    np.testing.assert_array_equal(cl, np.clip(a, -1.0, b))


@wp.kernel
def int_math(a: wp.array(dtype=int), out: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    out[i, 0] = abs(a[i])
    out[i, 1] = wp.min(a[i], 3)
    out[i, 2] = wp.max(a[i], -3)
    out[i, 3] = wp.clamp(a[i], -2, 2)


def test_integer_min_max_abs_clamp():
    a = np.array([-5, -2, 0, 1, 9], np.int32)
    out = wp.zeros((5, 4), dtype=int)
    wp.launch(int_math, dim=5, inputs=[wp.array(a), out])
    np.testing.assert_array_equal(out.numpy(), np.stack([np.abs(a), np.minimum(a, 3), np.maximum(a, -3),
                                                         np.clip(a, -2, 2)], axis=1))


@wp.kernel
def pow_operator(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] ** 2.0 + math.sqrt(a[i])


def test_pow_operator_and_python_math_names():
    a = np.array([0.5, 2.0, 9.0], np.float32)
    out = wp.zeros(3)
    wp.launch(pow_operator, dim=3, inputs=[wp.array(a), out])
    np.testing.assert_allclose(out.numpy(), a ** 2 + np.sqrt(a), rtol=1e-6)


def test_builtins_callable_from_python_where_warp_allows():
    assert wp.min(3, 4) == 3
    assert wp.clamp(5.0, 0.0, 1.0) == 1.0
    assert wp.abs(-2) == 2
