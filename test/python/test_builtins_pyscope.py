"""Builtins called from Python scope: result types, precision, integer wrap, Warp's error text, keywords."""

import math

import numpy as np
import pytest

import mlwarp as wp


def _wrap(v, np_type):
    """v stored in the integer type: two's complement, by hand."""
    bits = np.dtype(np_type).itemsize * 8
    v %= 1 << bits
    return v - (1 << bits) if np.issubdtype(np_type, np.signedinteger) and v >= 1 << (bits - 1) else v


# -- scalar arguments: numpy scalars keep their type, results are Warp instances unless int32/float32/bool ------
def test_numpy_float64_argument_computes_in_double():
    r = wp.sin(np.float64(1.23))
    assert isinstance(r, wp.float64)
    assert float(r) == math.sin(1.23)
    r = wp.sin(np.float32(1.23))
    assert type(r) is float and r == float(np.float32(math.sin(float(np.float32(1.23)))))


@pytest.mark.parametrize("np_type,wp_type", [(np.int8, wp.int8), (np.int16, wp.int16), (np.int64, wp.int64),
                                             (np.uint8, wp.uint8), (np.uint16, wp.uint16),
                                             (np.uint32, wp.uint32), (np.uint64, wp.uint64)])
def test_integer_results_are_instances_that_wrap(np_type, wp_type):
    x = -1234567890
    wrapped = np.array([x]).astype(np_type)[0]
    expected = _wrap(int(wrapped) * int(wrapped), np_type)
    for a in (wp_type(x), wrapped):
        r = wp.mul(a, wp_type(x))
        assert isinstance(r, wp_type) and r.value == expected


def test_default_types_come_back_as_python_numbers():
    assert type(wp.mul(wp.int32(3), wp.int32(4))) is int
    assert type(wp.invert(np.int32(5))) is int and wp.invert(np.int32(5)) == -6
    assert type(wp.sin(wp.float32(1.0))) is float


def _bf16(x):
    """x rounded to the nearest bfloat16 (ties to even), by hand on float32's bits."""
    bits = int(np.float32(x).view(np.uint32))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return float(np.uint32(bits).view(np.float32))


def test_bfloat16_computes_on_its_values_and_rounds_the_result():
    # bfloat16 is stored as 16 bits: the arguments are its values (exact in float32), the result is rounded once
    r = wp.abs(wp.bfloat16(-1.5))
    assert isinstance(r, wp.bfloat16) and r.value == 1.5
    assert wp.add(wp.bfloat16(1.5), wp.bfloat16(1.5)).value == 3.0
    x = _bf16(1.1)
    assert wp.mul(wp.bfloat16(1.1), wp.bfloat16(1.1)).value == _bf16(np.float32(x) * np.float32(x))
    assert wp.sin(wp.bfloat16(1.5)).value == _bf16(math.sin(1.5))
    assert wp.floordiv(wp.bfloat16(7.0), wp.bfloat16(2.0)).value == 3.0
    old = wp.config.legacy_scalar_return_types
    try:
        wp.config.legacy_scalar_return_types = True
        assert wp.sqrt(wp.bfloat16(2.0)) == _bf16(math.sqrt(2.0))
    finally:
        wp.config.legacy_scalar_return_types = old


def test_legacy_scalar_return_types_give_python_numbers():
    old = wp.config.legacy_scalar_return_types
    try:
        wp.config.legacy_scalar_return_types = True
        assert type(wp.sin(wp.float64(1.23))) is float and wp.sin(wp.float64(1.23)) == math.sin(1.23)
        assert type(wp.invert(wp.int16(-123))) is int and wp.invert(wp.int16(-123)) == 122
        assert type(wp.length(wp.vec2d(3.0, 4.0))) is float
    finally:
        wp.config.legacy_scalar_return_types = old
    assert isinstance(wp.invert(wp.int16(-123)), wp.int16)


# -- Warp's Python-scope error text -----------------------------------------------------------------------------
@pytest.mark.parametrize("call,text", [
    (lambda: wp.mul(wp.int16(2), 3), "'mul' compatible with the arguments 'int16, int'"),
    (lambda: wp.mul(3, np.uint8(2)), "'mul' compatible with the arguments 'int, uint8'"),
    (lambda: wp.sin(1), "'sin' compatible with the arguments 'int'"),
    (lambda: wp.sin(1.0, 2.0), "'sin' compatible with the arguments 'float, float'"),
    (lambda: wp.sin(), "'sin' compatible with the arguments ''"),
    (lambda: wp.min(1.0, 2), "'min' compatible with the arguments 'float, int'"),
    (lambda: wp.min(wp.vec3f(), wp.vec3d()), "'min' compatible with the arguments 'vec3f, vec3d'"),
    (lambda: wp.mul(wp.vec2d(1.0, 2.0), 3.0), "'mul' compatible with the arguments 'vec2d, float'"),
    (lambda: wp.mul(wp.vec2f(1.0, 2.0), wp.float64(3.0)), "'mul' compatible with the arguments 'vec2f, float64'"),
    (lambda: wp.sin(y=1.0), "'sin' compatible with the arguments 'float'"),
    (lambda: wp.max(b=wp.vec3f()), "'max' compatible with the arguments 'vec3f'"),
    (lambda: wp.clamp(1.0, a=0.0, b=2.0), "'clamp' compatible with the arguments 'float, float, float'"),
])
def test_unsupported_calls_raise_warps_runtime_error(call, text):
    with pytest.raises(RuntimeError, match="^" + "Couldn't find a function " + text.replace("(", r"\(") + "$"):
        call()


# -- composites: precision of the element type, integer wrap in the element type --------------------------------
def test_composite_scalar_results_have_the_element_type():
    v = (1.23, 2.34)
    r = wp.length(wp.vec2d(*v))
    assert isinstance(r, wp.float64) and float(r) == math.hypot(*v)
    r = wp.length(wp.vec2f(*v))
    f = np.float32(v).astype(np.float64)
    assert type(r) is float and r == float(np.float32(math.sqrt(f @ f)))
    r = wp.length(wp.vec2h(*v))
    assert isinstance(r, wp.float16) and float(r) == float(np.float16(math.sqrt(np.float16(v).astype(float) @
                                                                                  np.float16(v).astype(float))))
    m = (1.23, 2.34, 3.45, 4.56)
    r = wp.trace(wp.mat22d(*m))
    assert isinstance(r, wp.float64) and float(r) == 1.23 + 4.56
    r = wp.dot(wp.vec2d(*v), wp.vec2d(4.5, 5.5))
    assert isinstance(r, wp.float64) and float(r) == 1.23 * 4.5 + 2.34 * 5.5


@pytest.mark.parametrize("vec,np_type", [(wp.vec2b, np.int8), (wp.vec2s, np.int16), (wp.vec2i, np.int32),
                                         (wp.vec2l, np.int64), (wp.vec2ub, np.uint8), (wp.vec2us, np.uint16),
                                         (wp.vec2ui, np.uint32), (wp.vec2ul, np.uint64)])
def test_integer_vector_math_wraps_in_the_element_type(vec, np_type):
    x = -1234567890
    e = int(np.array([x]).astype(np_type)[0])
    expected = _wrap(2 * e * e, np_type)
    for r in (wp.length_sq(vec(x, x)), wp.dot(vec(x, x), vec(x, x))):
        assert int(getattr(r, "value", r)) == expected
        assert type(r) is (int if vec is wp.vec2i else wp.types.scalar_type_of(vec))
    assert wp.length_sq(wp.vec2i(x, x)) == 608168072  # hand-computed: 2 * 1234567890**2 mod 2**32


def test_composites_times_and_over_scalars():
    a = np.array([1.23, 2.34])
    r = wp.mul(wp.vec2d(*a), wp.float64(3.45))
    assert isinstance(r, wp.vec2d) and list(r.numpy()) == list(a * 3.45)
    r = wp.mul(wp.vec2f(*a), 3.45)
    np.testing.assert_array_equal(r.numpy(), (np.float32(a).astype(float) * float(np.float32(3.45))).astype(np.float32))
    r = wp.mul(2.0, wp.mat22f(1.0, 2.0, 3.0, 4.0))
    assert r == wp.mat22f(2.0, 4.0, 6.0, 8.0)
    r = wp.div(wp.vec2f(1.0, 2.0), 3.0)
    np.testing.assert_array_equal(r.numpy(), np.float32([1.0, 2.0]) / np.float32(3.0))
    r = wp.div(3.0, wp.vec2f(1.0, 2.0))
    assert r == wp.vec2f(3.0, 1.5)
    r = wp.mul(wp.mat22d(1.23, 2.34, 3.45, 4.56), wp.float64(0.12))
    assert list(r.numpy().reshape(-1)) == list(np.array([1.23, 2.34, 3.45, 4.56]) * 0.12)
    assert wp.mul(wp.quatf(0.0, 0.0, 0.0, 1.0), 2.0) == wp.quatf(0.0, 0.0, 0.0, 2.0)
    assert wp.mul(wp.vec2i(1, 2), 3) == wp.vec2i(3, 6)
    # integer division truncates toward zero, x / 0 is 0, INT_MIN / -1 wraps (as in kernels)
    assert wp.div(wp.vec2i(7, -7), 2) == wp.vec2i(3, -3)
    assert wp.cw_div(wp.vec2i(7, 0), wp.vec2i(0, 5)) == wp.vec2i(0, 0)
    assert wp.cw_div(wp.vec2i(7, -7), wp.vec2i(2, 5)) == wp.vec2i(3, -1)
    np.testing.assert_array_equal(wp.cw_div(wp.vec2f(1.0, 2.0), wp.vec2f(3.0, 4.0)).numpy(),
                                  np.float32([1.0, 2.0]) / np.float32([3.0, 4.0]))
    assert wp.div(wp.vec2i(-2 ** 31, 6), -1) == wp.vec2i(-2 ** 31, -6)
    assert wp.mod(wp.vec2i(-7, 7), wp.vec2i(3, 3)) == wp.vec2i(-1, 1)
    assert wp.add(wp.vec2f(1.0, 2.0), wp.vec2f(0.5, 0.5)) == wp.vec2f(1.5, 2.5)
    assert wp.neg(wp.vec2f(1.0, -2.0)) == wp.vec2f(-1.0, 2.0)
    assert wp.mul(wp.vec2ub(200, 3), wp.uint8(2)) == wp.vec2ub(144, 6)  # 400 mod 256


def test_quat_rpy_in_python_scope():
    roll, pitch, yaw = 0.1, 0.2, 0.3

    def axis(i, angle):
        q = np.zeros(4)
        q[i], q[3] = math.sin(angle / 2), math.cos(angle / 2)
        return q

    def qmul(a, b):  # Hamilton product, (x, y, z, w)
        va, vb = a[:3], b[:3]
        return np.concatenate([a[3] * vb + b[3] * va + np.cross(va, vb), [a[3] * b[3] - va @ vb]])

    expected = qmul(qmul(axis(2, yaw), axis(1, pitch)), axis(0, roll))
    np.testing.assert_allclose(wp.quat_rpy(roll, pitch, yaw).numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(wp.quat_rpy(roll=roll, pitch=pitch, yaw=yaw).numpy(), expected, rtol=1e-6)


# -- keyword arguments by Warp's parameter names -----------------------------------------------------------------
def test_keyword_arguments():
    assert wp.sin(x=1.0) == float(np.float32(math.sin(1.0)))
    assert wp.atan2(x=2.0, y=1.0) == wp.atan2(1.0, 2.0)
    assert wp.atan2(1.0, x=2.0) == wp.atan2(1.0, 2.0)
    assert wp.max(a=wp.vec3f(3.0, 1.0, 2.0)) == 3.0 and wp.min(wp.vec3f(3.0, 1.0, 2.0)) == 1.0
    assert wp.clamp(5.0, low=0.0, high=2.0) == 2.0
    m = wp.mat44f(1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 3.0, 0.0, 0.0, 0.0, 1.0)
    p = wp.vec3f(1.0, 2.0, 3.0)
    assert wp.transform_point(point=p, mat=m) == wp.vec3f(2.0, 4.0, 6.0)
    assert wp.transform_point(point=p, xform=m) == wp.vec3f(2.0, 4.0, 6.0)
    t = wp.transformf(wp.vec3f(1.0, 0.0, 0.0), wp.quatf(0.0, 0.0, 0.0, 1.0))
    assert wp.transform_point(xform=t, point=p) == wp.vec3f(2.0, 2.0, 3.0)


def test_expect_keywords_and_default_tolerance(capsys):
    wp.expect_near(a=1.0, b=1.0000001)  # within the default 1e-6
    wp.expect_eq(a=1, b=1)
    assert capsys.readouterr().out == ""
    wp.expect_near(a=1.0, b=1.5)
    assert capsys.readouterr().out == ("Error, expect_near() failed with tolerance 1e-06\n    Expected: 1.5\n"
                                       "    Actual: 1\n    Absolute difference: 0.5\n")


# -- bit operators on scalar instances (mlwarp's random numbers run in Python scope) -----------------------------
def test_bit_operators_on_scalar_instances():
    assert wp.uint32(8) >> wp.uint32(1) == 4 and isinstance(wp.uint32(8) >> wp.uint32(1), wp.uint32)
    assert (wp.uint32(0xF0F0F0F0) >> wp.uint32(28)).value == 0xF
    assert (wp.uint32(0x80000000) << wp.uint32(1)).value == 0  # wraps
    assert (wp.uint32(0xF0) ^ wp.uint32(0xFF)).value == 0x0F
    assert (wp.uint8(0xF0) & wp.uint8(0x3C)).value == 0x30 and (wp.uint8(0xF0) | wp.uint8(0x0F)).value == 0xFF
    assert (~wp.uint8(1)).value == 254
    assert wp.int32(-8) >> wp.int32(1) == -4  # arithmetic shift on signed types


def test_curlnoise_with_keywords_and_defaults():
    state = wp.rand_init(42)
    p = wp.vec3f(0.25, 0.5, 0.75)
    np.testing.assert_array_equal(np.asarray(wp.curlnoise(xyz=p, state=state)),
                                  np.asarray(wp.curlnoise(state, p, wp.uint32(1), 2.0, 0.5)))


# -- more composite builtins in Python scope ----------------------------------------------------------------------
def test_spatial_cross_in_python_scope():
    a, b = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), np.array([-1.0, 0.5, 2.0, 3.0, -2.0, 1.0])
    wa, va, wb, vb = a[:3], a[3:], b[:3], b[3:]
    sa, sb = wp.spatial_vectorf(*a), wp.spatial_vectorf(*b)
    np.testing.assert_array_equal(wp.spatial_cross(sa, sb).numpy(),
                                  np.concatenate([np.cross(wa, wb), np.cross(va, wb) + np.cross(wa, vb)]))
    np.testing.assert_array_equal(wp.spatial_cross_dual(sa, sb).numpy(),
                                  np.concatenate([np.cross(wa, wb) + np.cross(va, vb), np.cross(wa, vb)]))


def test_quat_slerp_axis_angle_and_from_matrix_in_python_scope():
    theta = 1.2
    qz = wp.quatd(0.0, 0.0, math.sin(theta / 2), math.cos(theta / 2))
    half = wp.quat_slerp(wp.quatd(0.0, 0.0, 0.0, 1.0), qz, wp.float64(0.25))  # a quarter of the rotation
    np.testing.assert_allclose(half.numpy(), [0.0, 0.0, math.sin(theta / 8), math.cos(theta / 8)], atol=1e-15)
    np.testing.assert_allclose(wp.quat_to_axis(qz).numpy(), [0.0, 0.0, 1.0])
    assert abs(float(wp.quat_to_angle(qz)) - theta) < 1e-15
    neg = wp.quatd(0.0, 0.0, -math.sin(theta / 2), -math.cos(theta / 2))  # the same rotation, w < 0
    np.testing.assert_allclose(wp.quat_to_axis(neg).numpy(), [0.0, 0.0, 1.0])
    c, s = math.cos(theta), math.sin(theta)
    rz = wp.mat33d(c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0)
    np.testing.assert_allclose(wp.quat_from_matrix(rz).numpy(), qz.numpy(), atol=1e-15)
    # half turns: the trace is negative, the largest diagonal element picks the branch
    for diag, expected in (((-1.0, -1.0, 1.0), [0, 0, 1, 0]), ((-1.0, 1.0, -1.0), [0, 1, 0, 0]),
                           ((1.0, -1.0, -1.0), [1, 0, 0, 0])):
        m = wp.mat33f(diag[0], 0.0, 0.0, 0.0, diag[1], 0.0, 0.0, 0.0, diag[2])
        np.testing.assert_array_equal(wp.quat_from_matrix(m).numpy(), expected)


def test_each_call_is_typed_by_its_own_arguments_and_arrays_construct_as_numpy_rounds():
    # a call's overload and numpy reading are chosen once per argument types (composite_pyscope._plans): calls on
    # other types, before and after, keep their own; a float64 array's components round to float32 as numpy's
    x = np.array([0.1, 1.0 / 3.0, 2.0e-8], dtype=np.float64)
    for _ in range(2):
        v = wp.normalize(wp.vec3(3.0, 0.0, 4.0))
        assert type(v) is wp.vec3 and list(v) == [np.float32(0.6), 0.0, np.float32(0.8)]
        q = wp.normalize(wp.quat(0.0, 0.0, 0.0, 2.0))
        assert type(q) is wp.quat and list(q) == [0.0, 0.0, 0.0, 1.0]
        d = wp.normalize(wp.vec3d(1.0, 1.0, 1.0))
        assert type(d) is wp.vec3d and list(d) == [float(v) for v in np.ones(3) / np.sqrt(3.0)]
        assert list(wp.vec3(x)) == [float(v) for v in x.astype(np.float32)]
        assert list(wp.vec3d(x)) == x.tolist()
        assert wp.dot(wp.vec2i(3, 4), wp.vec2i(3, 4)) == 25


def test_cross_products_are_numpys_and_integer_ones_wrap():
    # composite_pyscope._cross: numpy's products and differences, in float64 bit for bit; an integer one wraps in
    # its element type as in a kernel (by hand below: 2**35 + 15 wraps to 15)
    a, b = np.array([0.1, -2.5e7, 3.3e-9]), np.array([1.0 / 3.0, 7.0, -4.25e12])
    assert list(wp.cross(wp.vec3d(a), wp.vec3d(b))) == np.cross(a, b).tolist()
    r = wp.cross(wp.vec3i(2**20, -3, 7), wp.vec3i(5, 2**15, -9))
    assert type(r) is wp.vec3i and list(r) == [-3 * -9 - 7 * 2**15, 7 * 5 - 2**20 * -9, (2**20 * 2**15 + 15) % 2**32]
    t = wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat(0.0, 0.0, 0.6, 0.8))
    assert type(t) is wp.transform and list(t) == [1.0, 2.0, 3.0, 0.0, 0.0, np.float32(0.6), np.float32(0.8)]
    p = wp.transform_point(t, wp.vec3(1.0, 0.0, 0.0))  # a rotation by 2 * acos(0.8) about z, then the offset
    c, s = 0.8 * 0.8 - 0.6 * 0.6, 2 * 0.6 * 0.8
    np.testing.assert_allclose(list(p), [1.0 + c, 2.0 + s, 3.0], rtol=1e-6)
