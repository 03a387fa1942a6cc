"""Scalar types in kernels: argument annotations, literal types and casts (values checked against
warp-lang 1.19 where C's conversion rules decide them)."""

import numpy as np
import pytest

import mlwarp as wp


def scalar_echo(T):
    @wp.kernel
    def echo(x: T, out: wp.array(dtype=T)):
        out[0] = x

    return echo


@pytest.mark.parametrize("annotation,dtype,value", [
    (float, wp.float32, 1.25), (int, wp.int32, -123456), (bool, wp.bool, True),
    (wp.float32, wp.float32, -2.5), (wp.float64, wp.float64, 0.1), (wp.int32, wp.int32, 2 ** 31 - 1),
    (wp.int64, wp.int64, -(2 ** 40) - 3), (wp.uint32, wp.uint32, 2 ** 32 - 1),
])
def test_scalar_argument_annotations(annotation, dtype, value):
    out = wp.zeros(1, dtype=dtype)
    wp.launch(scalar_echo(annotation), dim=1, inputs=[value, out])
    assert out.numpy()[0] == dtype._np_(value)


@wp.kernel
def literal_types(f: wp.array(dtype=float), i: wp.array(dtype=int), b: wp.array(dtype=wp.bool)):
    f[0] = 1.5  # a float literal is float32
    i[0] = 7  # an int literal is int32
    b[0] = True


def test_literals_are_float32_int32_and_bool():
    f, i, b = wp.zeros(1), wp.zeros(1, dtype=int), wp.zeros(1, dtype=wp.bool)
    wp.launch(literal_types, dim=1, inputs=[f, i, b])
    assert (f.numpy()[0], i.numpy()[0], b.numpy()[0]) == (1.5, 7, True)


@wp.kernel
def casts(x: float, n: int, ints: wp.array(dtype=int), floats: wp.array(dtype=float),
          f64: wp.array(dtype=wp.float64), i64: wp.array(dtype=wp.int64), u32: wp.array(dtype=wp.uint32),
          bools: wp.array(dtype=wp.bool)):
    ints[0] = int(x)  # truncates toward zero
    ints[1] = int(-x)
    ints[2] = int(True)
    ints[3] = int(wp.uint32(4000000000))  # C: wraps into int32
    ints[4] = wp.int32(wp.int64(5000000000))
    floats[0] = float(n)
    floats[1] = wp.float32(wp.float64(0.1))
    floats[2] = float(wp.uint32(4000000000))
    f64[0] = wp.float64(0.1)  # a float64 literal keeps its double value
    f64[1] = wp.float64(x)
    i64[0] = wp.int64(n) * wp.int64(1 << 20)
    u32[0] = wp.uint32(-1)
    u32[1] = wp.uint32(n - 5)
    bools[0] = bool(0.5)
    bools[1] = bool(n - 3)
    bools[2] = wp.bool(0)


def test_casts_follow_c_conversions():
    ints, floats = wp.zeros(5, dtype=int), wp.zeros(3)
    f64, i64 = wp.zeros(2, dtype=wp.float64), wp.zeros(1, dtype=wp.int64)
    u32, bools = wp.zeros(2, dtype=wp.uint32), wp.zeros(3, dtype=wp.bool)
    wp.launch(casts, dim=1, inputs=[3.9, 3, ints, floats, f64, i64, u32, bools])
    assert list(ints.numpy()) == [3, -3, 1, 4000000000 - 2 ** 32, 5000000000 - 2 ** 32]
    assert list(floats.numpy()) == [3.0, np.float32(0.1), np.float32(4e9)]
    assert list(f64.numpy()) == [0.1, float(np.float32(3.9))]
    assert list(i64.numpy()) == [3 << 20]
    assert list(u32.numpy()) == [2 ** 32 - 1, 2 ** 32 - 2]
    assert list(bools.numpy()) == [True, False, False]


@wp.kernel
def annotated_locals(out: wp.array(dtype=wp.float64)):
    x: wp.float64 = 1.5  # the value is converted to the declared type
    y: float = 2.0
    out[0] = x + wp.float64(y)


def test_annotated_assignment_converts_to_the_declared_type():
    out = wp.zeros(1, dtype=wp.float64)
    wp.launch(annotated_locals, dim=1, inputs=[out])
    assert out.numpy()[0] == 3.5


@wp.kernel
def float64_math(a: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = a[i] * wp.float64(1.0 / 3.0) + wp.float64(1e-300)


def test_float64_keeps_double_precision():
    a = np.array([1.0, 3.0, 1e300], np.float64)
    out = wp.zeros(3, dtype=wp.float64)
    wp.launch(float64_math, dim=3, inputs=[wp.array(a, dtype=wp.float64), out])
    # 1.0 / 3.0 is folded as a float32 literal division, then widened (Warp's literal rule)
    third = np.float64(np.float32(1.0) / np.float32(3.0))
    np.testing.assert_array_equal(out.numpy(), a * third + 1e-300)
