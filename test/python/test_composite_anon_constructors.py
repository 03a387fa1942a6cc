"""Warp's anonymous composite constructors inside kernels: wp.types.vector(*args, length=, dtype=),
wp.types.matrix(*args, shape=, dtype=), wp.types.quaternion(*args, dtype=), wp.types.transformation(p, q, dtype=)
(also spelled wp.vector / wp.matrix / wp.quaternion in kernels, as Warp's builtins), the typed constructors'
keywords (`mat32d(c, shape=(3, 2))`), and Warp's messages when the arguments do not fit."""

import inspect
import re

import numpy as np
import pytest

import mlwarp as wp

ROWS = wp.constant(2)
COLS = wp.constant(3)


@wp.kernel
def anon_values(h: wp.array(dtype=wp.float16), out: wp.array(dtype=float)):
    v2 = wp.types.vector(h[0], length=2)  # fill: vec2h
    zeros = wp.types.vector(length=10, dtype=float)
    by_value = wp.types.vector(1.0, 2.0, 3.0)  # vec3f from float literals
    b = wp.types.vector(False, True, False)  # vec3bool
    m = wp.types.matrix(shape=(ROWS, COLS), dtype=float)  # zeros, global constants as the shape
    m2 = wp.matrix(1.0, 2.0, 3.0, 4.0, shape=(2, 2))
    mf = wp.types.matrix(h[0], shape=(3, 2))  # fill: mat32h
    q = wp.types.quaternion(1.0, 2.0, 3.0, 4.0, dtype=float)
    qh = wp.types.quaternion(q, dtype=wp.float16)  # conversion
    qv = wp.types.quaternion(wp.types.vector(5.0, 6.0, 7.0), 8.0)  # (vec3, w)
    t = wp.types.transformation(wp.vec3(1.0, 2.0, 3.0), wp.quat_identity(), dtype=float)
    out[0] = float(v2[0] + v2[1])
    out[1] = zeros[9] + float(len(zeros))
    out[2] = by_value[0] + by_value[1] * by_value[2]
    out[3] = float(wp.where(b[1], 1, 0) + wp.where(b[0], 10, 0))
    out[4] = m[1, 2] + float(len(m))
    out[5] = m2[1, 0] * 10.0 + m2[0, 1]
    out[6] = float(mf[2, 1])
    out[7] = float(qh[3]) + float(qh[0]) * 10.0
    out[8] = qv[0] * 1000.0 + qv[3]
    out[9] = t.p[2] + t.q[3] * 10.0


def test_anonymous_constructors_build_warps_types():
    h = wp.array(np.array([1.5], np.float16))
    out = wp.zeros(10)
    wp.launch(anon_values, dim=1, inputs=[h, out])
    np.testing.assert_array_equal(out.numpy(), [3.0, 10.0, 7.0, 1.0, 2.0, 32.0, 1.5, 14.0, 5008.0, 13.0])


MAT32D = wp.types.matrix(shape=(3, 2), dtype=wp.float64)


@wp.kernel
def typed_with_keywords(out: wp.array(dtype=float)):
    c = MAT32D(wp.float64(1.0), wp.float64(0.0), wp.float64(0.0), wp.float64(0.0), wp.float64(0.0), wp.float64(2.0))
    d = MAT32D(c, shape=(3, 2))
    v = wp.vec3(wp.vec3(1.0, 2.0, 3.0), length=3, dtype=float)
    out[0] = float(d[2, 1]) + v[2]


def test_typed_constructors_take_matching_keywords():
    out = wp.zeros(1)
    wp.launch(typed_with_keywords, dim=1, inputs=[out])
    assert out.numpy()[0] == 5.0


def test_anonymous_vector_types_print(capfd):
    @wp.kernel
    def k():
        print(wp.types.vector(True, False))
        print(wp.types.matrix(wp.int8(3), shape=(2, 2)))

    capfd.readouterr()
    wp.launch(k, dim=1, inputs=[])
    assert capfd.readouterr().out == "1 0 \n3 3 \n3 3 \n"


def _k_shape_missing():
    wp.types.matrix(1.0, 2.0, 3.0)


def _k_copy_shape():
    wp.types.matrix(wp.types.matrix(shape=(1, 2), dtype=float), shape=(3, 4), dtype=float)


def _k_fill_type(x: wp.float32):
    wp.types.matrix(x, shape=(3, 2), dtype=wp.float16)


def _k_count():
    wp.types.matrix(1.0, 2.0, 3.0, shape=(2, 2), dtype=float)


def _k_typed_copy():
    wp.mat33(wp.mat22(1.0, 2.0, 3.0, 4.0))


def _k_typed_count():
    wp.mat22(1.0, 2.0, 3.0)


def _k_vec_zero_no_length():
    wp.types.vector()


def _k_vec_fill_no_length(x: wp.float32):
    wp.types.vector(x)


def _k_vec_count():
    wp.types.vector(1.0, 2.0, length=3)


def _k_vec_copy_length():
    wp.types.vector(wp.vec2(1.0, 2.0), length=3)


def _k_vec_mixed(x: wp.float32):
    wp.types.vector(x, wp.float64(1.0))


def _k_quat_int_zero(x: wp.float32):
    wp.types.quaternion(dtype=int)


def _k_typed_keyword_mismatch(x: wp.float32):
    wp.vec3(x, length=2)


def _k_unknown_keyword(x: wp.float32):
    wp.types.vector(x, size=2)


@pytest.mark.parametrize("func,message", [
    (_k_shape_missing, "the `shape` argument must be specified when initializing a matrix by value"),
    (_k_copy_shape, r"incompatible matrix of shape \(3, 4\) given when copy constructing a matrix of shape \(1, 2\)"),
    (_k_fill_type, "the value used to fill this matrix is expected to be of the type `float16`"),
    (_k_count, r"incompatible number of values given \(3\) when constructing a matrix of shape \(2, 2\)"),
    (_k_typed_copy, r"incompatible matrix of shape \(3, 3\) given when copy constructing a matrix of shape \(2, 2\)"),
    (_k_typed_count, r"incompatible number of values given \(3\) when constructing a matrix of shape \(2, 2\)"),
    (_k_vec_zero_no_length, "the `length` argument must be specified when zero-initializing a vector"),
    (_k_vec_fill_no_length, "the `length` argument must be specified when filling a vector with a value"),
    (_k_vec_count, r"incompatible number of values given \(2\) when constructing a vector of length 3"),
    (_k_vec_copy_length, "incompatible vector of length 3 given when copy constructing a vector of length 2"),
    (_k_vec_mixed, "all values given when constructing a vector must have the same type"),
    (_k_quat_int_zero, "a float type is expected when zero-initializing a quaternion but got `int32` instead"),
    (_k_typed_keyword_mismatch, "vec3f\\(\\) got length=2, which the type does not have"),
    (_k_unknown_keyword, "vector\\(\\) got an unexpected keyword argument 'size'"),
])
def test_constructor_errors_are_warps(func, message):
    inputs = [wp.float32(1.0)] if inspect.signature(func).parameters else []
    with pytest.raises(wp.CompileError) as info:
        wp.launch(wp.kernel(func), dim=1, inputs=inputs)
    # the message ends with the reason (the source line is a note), as Warp's tests check with `$`
    assert re.search(message + "$", str(info.value)), str(info.value)


@wp.kernel
def double_to_half(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float16), c: wp.array(dtype=wp.float64)):
    b[0] = wp.float16(a[0])
    q2 = wp.types.quaternion(wp.quatd(a[0], a[0], a[0], a[0]), dtype=wp.float16)
    b[1] = q2[3]
    c[0] = wp.float64(b[0])
    c[1] = wp.types.quaternion(q2, dtype=wp.float64)[0]


def test_double_half_conversions_go_through_float():
    # Warp's half has only a float constructor: 1 + 2^-11 + 2^-30 -> float 1 + 2^-11 (exact tie in half) -> 1.0
    # (a direct double -> half rounding would give 1 + 2^-10)
    a = wp.array([1.0 + 2.0**-11 + 2.0**-30], dtype=wp.float64)
    b, c = wp.zeros(2, dtype=wp.float16), wp.zeros(2, dtype=wp.float64)
    wp.launch(double_to_half, 1, [a, b, c])
    assert b.numpy().tolist() == [1.0, 1.0]
    assert c.numpy().tolist() == [1.0, 1.0]
