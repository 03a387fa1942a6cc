"""Warp's scalar math builtins beyond the basic set, in kernels and in Python scope, against numpy and
Warp's C definitions (sign(0) == 1, step(x) = x < 0, round halves away from zero, fmin-style min/max)."""

import math

import numpy as np
import pytest

import mlwarp as wp

X = np.array([-3.7, -2.5, -1.0, -0.5, -0.25, 0.0, 0.3, 0.5, 1.0, 1.5, 2.5, 7.9], np.float32)
UNIT = np.array([-0.99, -0.5, -0.1, 0.0, 0.2, 0.7, 0.95], np.float32)
POS = np.array([1e-3, 0.1, 0.5, 1.0, 2.0, 27.0, 1000.0], np.float32)


def unary(name):
    fn = getattr(wp, name)

    @wp.kernel
    def k(x: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = fn(x[i])

    return k


def run(name, x):
    out = wp.zeros(len(x))
    wp.launch(unary(name), dim=len(x), inputs=[wp.array(x), out])
    return out.numpy()


@pytest.mark.parametrize("name,ref,x", [
    ("asin", np.arcsin, UNIT), ("acos", np.arccos, UNIT), ("atan", np.arctan, X), ("sinh", np.sinh, X),
    ("cosh", np.cosh, X), ("tanh", np.tanh, X), ("log2", np.log2, POS), ("log10", np.log10, POS),
    ("cbrt", np.cbrt, np.concatenate([POS, -POS])),
    ("erf", np.vectorize(math.erf), X), ("erfc", np.vectorize(math.erfc), X),
])
def test_transcendental(name, ref, x):
    np.testing.assert_allclose(run(name, x), ref(x.astype(np.float64)), rtol=3e-6, atol=1e-7)


def c_round(v):
    return math.copysign(math.floor(abs(v) + 0.5), v) if abs(v) - math.floor(abs(v)) != 0.5 else \
        math.copysign(math.floor(abs(v)) + 1, v)


@pytest.mark.parametrize("name,ref", [
    ("round", np.vectorize(c_round)), ("rint", np.rint), ("trunc", np.trunc),
    ("frac", lambda x: x - np.trunc(x)),
    ("sign", lambda x: np.where(x < 0, -1.0, 1.0)), ("step", lambda x: np.where(x < 0, 1.0, 0.0)),
    ("nonzero", lambda x: np.where(x == 0, 0.0, 1.0)),
    ("degrees", lambda x: x.astype(np.float64) * 57.29577951308232087679),  # in double, then rounded
    ("radians", lambda x: x.astype(np.float64) * 0.01745329251994329577),
])
def test_exact_unary(name, ref):
    np.testing.assert_array_equal(run(name, X), ref(X).astype(np.float32))


def test_round_halves_away_from_zero_and_rint_to_even():
    assert list(run("round", np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997], np.float32))) == \
        [1.0, 2.0, 3.0, -1.0, -3.0, 0.0]
    assert list(run("rint", np.array([0.5, 1.5, 2.5, -0.5, -2.5], np.float32))) == [0.0, 2.0, 2.0, -0.0, -2.0]


@wp.kernel
def binary_math(a: wp.array(dtype=float), b: wp.array(dtype=float), t: wp.array(dtype=float),
                out: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    out[i, 0] = wp.atan2(a[i], b[i])
    out[i, 1] = wp.lerp(a[i], b[i], t[i])
    out[i, 2] = wp.smoothstep(a[i], b[i], t[i])
    out[i, 3] = wp.mod(a[i], b[i])
    out[i, 4] = wp.copysign(a[i], b[i])


def test_binary_and_ternary_math():
    rng = np.random.default_rng(4)
    a = rng.uniform(-2, 2, 50).astype(np.float32)
    b = rng.uniform(-2, 2, 50).astype(np.float32)
    t = rng.uniform(-0.5, 1.5, 50).astype(np.float32)
    out = wp.zeros((50, 5))
    wp.launch(binary_math, dim=50, inputs=[wp.array(a), wp.array(b), wp.array(t), out])
    o = out.numpy()
    f = np.float32
    np.testing.assert_allclose(o[:, 0], np.arctan2(a, b), rtol=3e-6)
    np.testing.assert_array_equal(o[:, 1], a * (f(1) - t) + b * t)
    s = np.clip((t - a) / (b - a), f(0), f(1))
    np.testing.assert_array_equal(o[:, 2], s * s * (f(3) - f(2) * s))
    np.testing.assert_array_equal(o[:, 3], np.fmod(a, b))
    np.testing.assert_array_equal(o[:, 4], np.copysign(a, b))


@wp.kernel
def classify(x: wp.array(dtype=float), n: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    r = 0
    if wp.isnan(x[i]):
        r += 1
    if wp.isinf(x[i]):
        r += 10
    if wp.isfinite(x[i]):
        r += 100
    if wp.isfinite(n[i]) and not wp.isnan(n[i]) and not wp.isinf(n[i]):  # ints: always finite (Warp)
        r += 1000
    out[i] = r


def test_isnan_isinf_isfinite():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -3.5, 1e38], np.float32)
    out = wp.zeros(6, dtype=int)
    wp.launch(classify, dim=6, inputs=[wp.array(x), wp.array(np.arange(6, dtype=np.int32)), out])
    assert list(out.numpy()) == [1001, 1010, 1010, 1100, 1100, 1100]


@wp.kernel
def nan_min_max(a: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    out[i, 0] = wp.min(a[i], b[i])
    out[i, 1] = wp.max(a[i], b[i])
    out[i, 2] = wp.clamp(a[i], -1.0, b[i])


def test_float_min_max_prefer_the_number_over_nan():
    nan = np.float32("nan")
    a = np.array([nan, 1.0, nan, 2.0], np.float32)
    b = np.array([1.0, nan, nan, 3.0], np.float32)
    out = wp.zeros((4, 3))
    wp.launch(nan_min_max, dim=4, inputs=[wp.array(a), wp.array(b), out])
    o = out.numpy()
    np.testing.assert_array_equal(o[:, 0], np.fmin(a, b))
    np.testing.assert_array_equal(o[:, 1], np.fmax(a, b))
    np.testing.assert_array_equal(o[:, 2], [-1.0, 1.0, -1.0, 2.0])


@wp.kernel
def int_helpers(a: wp.array(dtype=int), out: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    out[i, 0] = wp.sign(a[i])
    out[i, 1] = wp.step(a[i])
    out[i, 2] = wp.nonzero(a[i])
    out[i, 3] = wp.mod(a[i], 3)
    out[i, 4] = wp.bit_and(a[i], 6) + wp.bit_or(a[i], 1) * 10 + wp.bit_xor(a[i], 5) * 100
    out[i, 5] = wp.lshift(a[i], 2) + wp.rshift(a[i], 1) * 1000 + wp.invert(a[i]) * 100000


def test_integer_helpers_and_bit_ops():
    a = np.array([-7, -1, 0, 1, 6, 13], np.int32)
    out = wp.zeros((6, 6), dtype=int)
    wp.launch(int_helpers, dim=6, inputs=[wp.array(a), out])
    expect = np.stack([np.where(a < 0, -1, 1), np.where(a < 0, 1, 0), np.where(a == 0, 0, 1), np.fmod(a, 3),
                       (a & 6) + (a | 1) * 10 + (a ^ 5) * 100, (a << 2) + (a >> 1) * 1000 + (~a) * 100000], axis=1)
    np.testing.assert_array_equal(out.numpy(), expect)


@wp.kernel
def python_math_in_kernel(x: wp.array(dtype=float), out: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    out[i, 0] = math.sin(x[i]) + math.cos(x[i])
    out[i, 1] = math.sqrt(math.fabs(x[i])) * math.pi
    out[i, 2] = math.fmod(x[i], 1.5) + math.floor(x[i]) + math.e
    out[i, 3] = math.atan2(x[i], 2.0) + math.exp(-math.fabs(x[i])) + math.log2(math.fabs(x[i]) + 1.0)
    out[i, 4] = round(x[i]) + abs(x[i]) + min(x[i], 0.0) + max(x[i], 0.0) + pow(math.fabs(x[i]), 0.5)
    out[i, 5] = wp.float32(math.isfinite(x[i])) + math.inf * 0.0 + math.tau


def test_python_math_functions_and_constants_map_to_builtins():
    x = np.array([-2.5, -0.3, 0.0, 0.7, 3.25], np.float32)
    out = wp.zeros((5, 6))
    wp.launch(python_math_in_kernel, dim=5, inputs=[wp.array(x), out])
    o, f = out.numpy(), np.float32
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(o[:, 0], np.sin(x64) + np.cos(x64), rtol=1e-6)
    np.testing.assert_allclose(o[:, 1], np.sqrt(np.abs(x64)) * np.pi, rtol=1e-6)
    np.testing.assert_allclose(o[:, 2], np.fmod(x, f(1.5)) + np.floor(x) + f(math.e), rtol=1e-6)
    np.testing.assert_allclose(o[:, 3], np.arctan2(x64, 2) + np.exp(-np.abs(x64)) + np.log2(np.abs(x64) + 1), rtol=1e-6)
    rounded = np.vectorize(c_round)(x)
    np.testing.assert_allclose(o[:, 4], rounded + np.abs(x) + np.minimum(x, 0) + np.maximum(x, 0) + np.sqrt(np.abs(x)),
                               rtol=1e-6)
    assert np.isnan(o[:, 5]).all()  # inf * 0 is NaN, as in C


@pytest.mark.parametrize("expr,value", [
    ("wp.sin(1.0)", float(np.float32(math.sin(1.0)))), ("wp.sin(wp.float64(1.0))", wp.float64(math.sin(1.0))),
    ("wp.min(3, 4)", 3), ("wp.max(2.5, -1.0)", 2.5), ("wp.clamp(5.0, 0.0, 1.0)", 1.0), ("wp.abs(-2)", 2),
    ("wp.sign(0.0)", 1.0), ("wp.sign(-3)", -1), ("wp.step(-1.0)", 1.0), ("wp.round(-2.5)", -3.0),
    ("wp.rint(2.5)", 2.0), ("wp.trunc(-1.5)", -1.0), ("wp.frac(-1.25)", -0.25), ("wp.mod(-7, 3)", -1),
    ("wp.mod(-7.5, 2.0)", -1.5), ("wp.div(-7, 2)", -3), ("wp.floordiv(-7, 2)", -4),
    ("wp.lerp(1.0, 3.0, 0.25)", 1.5), ("wp.smoothstep(0.0, 1.0, 0.5)", 0.5), ("wp.isnan(1.0)", False),
    ("wp.degrees(1.0)", float(np.float32(57.29577951308232))), ("wp.cbrt(27.0)", 3.0), ("wp.log2(8.0)", 3.0),
    ("wp.atan2(1.0, 2.0)", float(np.float32(math.atan2(1.0, 2.0)))), ("wp.bit_and(6, 3)", 2),
    ("wp.lshift(1, 3)", 8), ("wp.invert(0)", -1), ("wp.nonzero(3)", 1), ("wp.add(1, 2)", 3),
])
def test_python_scope_values_match_warp(expr, value):
    # Values and types as warp-lang 1.19 returns them.
    got = eval(expr)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("expr,value", [
    ("wp.float32(1.5) + wp.float32(2.0)", 3.5), ("wp.float32(1.5) * 2.0", 3.0), ("2.0 * wp.float32(1.5)", 3.0),
    ("3.0 - wp.float32(1.0)", 2.0), ("1 - wp.int32(3)", -2), ("wp.int32(5) / 2", 2), ("wp.int32(-7) % 3", -1),
    ("wp.float32(5.0) % 3.0", 2.0), ("-wp.int32(2)", -2), ("+wp.float32(2.0)", 2.0),
    ("wp.add(wp.float32(1.5), 2.0)", 3.5), ("wp.sin(wp.float32(0.0))", 0.0),
    ("wp.int8(100) + wp.int8(100)", wp.int8(-56)), ("-wp.int8(5)", wp.int8(-5)), ("-wp.uint8(5)", wp.uint8(251)),
    ("wp.float64(1.5) + wp.float64(2.0)", wp.float64(3.5)), ("-wp.float64(2.0)", wp.float64(-2.0)),
    ("wp.float16(1.5) + wp.float16(2.0)", wp.float16(3.5)), ("wp.uint32(3) * wp.uint32(2)", wp.uint32(6)),
    ("abs(wp.int32(-3))", wp.int32(3)), ("abs(wp.float64(-3.0))", wp.float64(3.0)),
    ("wp.float32(1.0) > wp.float32(0.5)", True), ("wp.float32(2.0) <= 2.0", True), ("wp.float32(1.0) != 1.0", False),
])
def test_python_scope_operators_on_warp_scalars(expr, value):
    # Values and types as warp-lang 1.19 returns them: the builtin of the same name; int32/float32 results
    # are Python numbers, other types keep theirs.
    got = eval(expr)
    assert got == value and type(got) is type(value)


def test_python_scope_negation_of_zero_is_positive_zero():
    assert math.copysign(1.0, -wp.float32(0.0)) == 1.0  # Warp's neg is 0 - x


def test_python_scope_operators_keep_the_typing_rules():
    with pytest.raises(TypeError, match=r"^Couldn't find a function 'sub' compatible with the arguments 'int64, int'$"):
        wp.int64(3) - 1


def test_python_scope_type_errors_match_kernels():
    with pytest.raises(TypeError, match=r"^Couldn't find a function 'min' compatible with the arguments 'float, int'$"):
        wp.min(1.0, 2)
    with pytest.raises(TypeError, match=r"^Couldn't find a function 'sin' compatible with the arguments 'int'$"):
        wp.sin(1)
