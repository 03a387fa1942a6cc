"""`warp._src.context.runtime.core.wp_builtin_<name>_<types>`: Warp's builtins by the names its C library exports
them under, with its calling convention (ctypes arguments, results through pointers), as clients call them (Newton
1.8's host_transform.py). References: closed forms (rotation matrices, quaternion algebra), numpy, C integer
arithmetic; the symbol names are Warp 1.19's (recorded from warp-lang's native/exports.h)."""

import ctypes
import math

import numpy as np
import pytest

import mlwarp as wp
from mlwarp._src.context import runtime

core = runtime.core


def rotation_matrix(axis, angle):
    """Rodrigues' formula (the reference for quaternion rotation)."""
    k = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * kx + (1 - math.cos(angle)) * kx @ kx


def quat_of(axis, angle):
    k = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    return [*(k * math.sin(angle / 2)), math.cos(angle / 2)]


AXIS_A, ANGLE_A, P_A = (0.0, 0.0, 1.0), 0.5, (1.0, 2.0, 3.0)
AXIS_B, ANGLE_B, P_B = (1.0, 2.0, -0.5), 1.3, (-1.0, 0.5, 2.0)


def xform(p, axis, angle, t=wp.transformf):
    return t(*p, *quat_of(axis, angle))


def homogeneous(p, axis, angle):
    m = np.eye(4)
    m[:3, :3], m[:3, 3] = rotation_matrix(axis, angle), p
    return m


def test_reached_as_attributes_of_the_package():
    # Newton: `wp._src.context.runtime.core` after a plain `import warp`
    assert wp._src.context.runtime.core is core
    assert "_src" not in wp.__all__


def test_transform_multiply_inverse_point_vector_match_homogeneous_matrices():
    a, b = xform(P_A, AXIS_A, ANGLE_A), xform(P_B, AXIS_B, ANGLE_B)
    ma, mb = homogeneous(P_A, AXIS_A, ANGLE_A), homogeneous(P_B, AXIS_B, ANGLE_B)

    ab = wp.transform()
    assert core.wp_builtin_mul_transformf_transformf(a, b, ctypes.byref(ab)) is None
    mab = ma @ mb
    np.testing.assert_allclose(np.asarray(ab)[:3], mab[:3, 3], atol=1e-6)
    q = np.asarray(ab)[3:]
    np.testing.assert_allclose(rotation_matrix(q[:3], 2 * math.atan2(np.linalg.norm(q[:3]), q[3])), mab[:3, :3],
                               atol=1e-6)

    inv = wp.transform()
    core.wp_builtin_transform_inverse_transformf(a, ctypes.byref(inv))
    minv = np.linalg.inv(ma)
    np.testing.assert_allclose(np.asarray(inv)[:3], minv[:3, 3], atol=1e-6)
    np.testing.assert_allclose(np.asarray(inv)[3:], [*(-np.asarray(quat_of(AXIS_A, ANGLE_A))[:3]),
                                                     quat_of(AXIS_A, ANGLE_A)[3]], atol=1e-7)

    x = wp.vec3(0.3, -0.7, 1.1)
    point, vector = wp.vec3(), wp.vec3()
    core.wp_builtin_transform_point_transformf_vec3f(b, x, ctypes.byref(point))
    core.wp_builtin_transform_vector_transformf_vec3f(b, x, ctypes.byref(vector))
    np.testing.assert_allclose(np.asarray(point), (mb @ [*x, 1.0])[:3], atol=1e-6)
    np.testing.assert_allclose(np.asarray(vector), mb[:3, :3] @ np.asarray(x), atol=1e-6)


def test_double_precision_overloads():
    a, b = xform(P_A, AXIS_A, ANGLE_A, wp.transformd), xform(P_B, AXIS_B, ANGLE_B, wp.transformd)
    ab = wp.transformd()
    core.wp_builtin_mul_transformd_transformd(a, b, ctypes.byref(ab))
    mab = homogeneous(P_A, AXIS_A, ANGLE_A) @ homogeneous(P_B, AXIS_B, ANGLE_B)
    np.testing.assert_allclose(np.asarray(ab)[:3], mab[:3, 3], atol=1e-13)


def test_quat_from_matrix_of_a_matrix_read_from_a_numpy_buffer():
    # as Newton passes it: a mat44 viewing a row-major numpy matrix
    m = homogeneous(P_B, AXIS_B, ANGLE_B).astype(np.float32)
    rotation = wp.quat()
    core.wp_builtin_quat_from_matrix_mat44f(wp.mat44.from_buffer(m), ctypes.byref(rotation))
    expected = np.asarray(quat_of(AXIS_B, ANGLE_B))
    got = np.asarray(rotation)
    np.testing.assert_allclose(got * np.sign(got[3]), expected * np.sign(expected[3]), atol=1e-6)


def test_arguments_by_value_reference_pointer_or_address_and_results_through_any_pointer():
    a, b = xform(P_A, AXIS_A, ANGLE_A), xform(P_B, AXIS_B, ANGLE_B)
    reference = wp.transform_multiply(a, b)
    for left, right in ((a, b), (ctypes.byref(a), ctypes.byref(b)), (ctypes.pointer(a), ctypes.addressof(b)),
                        (ctypes.c_void_p(ctypes.addressof(a)), b)):
        for make_pointer in (ctypes.byref, ctypes.pointer, ctypes.addressof,
                             lambda o: ctypes.c_void_p(ctypes.addressof(o))):
            out = wp.transform()
            core.wp_builtin_mul_transformf_transformf(left, right, make_pointer(out))
            assert list(out) == list(reference)
    # a result written into a numpy row viewed as a transform (Newton's batched rows)
    rows = np.zeros((2, 7), dtype=np.float32)
    core.wp_builtin_mul_transformf_transformf(a, b, ctypes.byref(wp.transform.from_buffer(rows[1])))
    assert rows[1].tolist() == list(reference) and not rows[0].any()


def test_scalar_builtins_take_ctypes_values_of_the_named_type():
    out = ctypes.c_double()
    core.wp_builtin_sin_float64(ctypes.c_double(0.7), ctypes.byref(out))
    assert out.value == pytest.approx(math.sin(0.7), rel=1e-15)
    byte = ctypes.c_uint8()
    core.wp_builtin_add_uint8_uint8(ctypes.c_uint8(200), ctypes.c_uint8(100), ctypes.byref(byte))
    assert byte.value == 44  # C arithmetic: wraps modulo 256
    small = ctypes.c_int16()
    core.wp_builtin_min_int16_int16(ctypes.c_int16(-7), ctypes.c_int16(5), ctypes.byref(small))
    assert small.value == -7
    f = ctypes.c_float()
    core.wp_builtin_clamp_float32_float32_float32(ctypes.c_float(2.5), ctypes.c_float(0.0), ctypes.c_float(1.0),
                                                   ctypes.byref(f))
    assert f.value == 1.0
    flag = ctypes.c_bool()
    core.wp_builtin_isnan_float32(ctypes.c_float(float("nan")), ctypes.byref(flag))
    assert flag.value is True
    length = ctypes.c_float()
    core.wp_builtin_length_vec3f(wp.vec3(3.0, 4.0, 12.0), ctypes.byref(length))
    assert length.value == 13.0


def test_half_precision_arguments_and_results_are_bits():
    out = wp.float16._ctype_()
    half = lambda x: ctypes.c_uint16(int(np.float16(x).view(np.uint16)))  # noqa: E731
    core.wp_builtin_mul_float16_float16(half(1.5), half(-2.25), ctypes.byref(out))
    assert np.uint16(out.value).view(np.float16) == np.float16(-3.375)


def test_spatial_and_matrix_types_by_warp_export_names():
    a = wp.spatial_vector(1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    b = wp.spatial_vector(-1.0, 0.5, 2.0, 0.0, 1.0, -2.0)
    d = ctypes.c_float()
    core.wp_builtin_spatial_dot_spatial_vectorf_spatial_vectorf(a, b, ctypes.byref(d))
    assert d.value == pytest.approx(float(np.dot(np.asarray(a), np.asarray(b))))
    m = np.arange(9, dtype=np.float32).reshape(3, 3) + np.eye(3, dtype=np.float32) * 4
    x = wp.vec3(1.0, -2.0, 0.5)
    y = wp.vec3()
    core.wp_builtin_mul_mat33f_vec3f(wp.mat33.from_buffer(m), x, ctypes.byref(y))
    np.testing.assert_allclose(np.asarray(y), m @ np.asarray(x), rtol=1e-6)


def test_several_results_through_one_pointer_each():
    a = np.array([[4.0, 1.0, -2.0], [0.5, 3.0, 1.0], [1.0, -1.0, 2.0]], dtype=np.float32)
    u, s, v = wp.mat33(), wp.vec3(), wp.mat33()
    core.wp_builtin_svd3_mat33f(wp.mat33.from_buffer(a), ctypes.byref(u), ctypes.byref(s), ctypes.byref(v))
    u, s, v = np.asarray(u).reshape(3, 3), np.asarray(s), np.asarray(v).reshape(3, 3)
    np.testing.assert_allclose(u @ np.diag(s) @ v.T, a, atol=1e-5)
    np.testing.assert_allclose(sorted(s), sorted(np.linalg.svd(a.astype(np.float64))[1]), rtol=1e-5)


def test_a_scalar_type_named_by_the_symbol_alone():
    q = wp.quatd()
    core.wp_builtin_quat_identity_float64(ctypes.byref(q))
    assert list(q) == [0.0, 0.0, 0.0, 1.0]
    t = wp.transformf(*[9.0] * 7)
    core.wp_builtin_transform_identity_float32(ctypes.byref(t))
    assert list(t) == [0.0] * 6 + [1.0]


def test_void_builtins_write_through_their_reference_arguments():
    t = wp.transform()
    core.wp_builtin_transform_set_translation_transformf_vec3f(t, wp.vec3(1.0, 2.0, 3.0))
    assert list(t)[:3] == [1.0, 2.0, 3.0]


# Warp 1.19's exported names (native/exports.h) -> the argument types they name.
WARP_EXPORT_NAMES = {
    "wp_builtin_mul_transformf_transformf": [wp.transformf, wp.transformf],
    "wp_builtin_transform_inverse_transformf": [wp.transformf],
    "wp_builtin_transform_point_transformf_vec3f": [wp.transformf, wp.vec3f],
    "wp_builtin_transform_point_mat44d_vec3d": [wp.mat44d, wp.vec3d],
    "wp_builtin_transform_vector_transformf_vec3f": [wp.transformf, wp.vec3f],
    "wp_builtin_quat_from_matrix_mat44f": [wp.mat44f],
    "wp_builtin_quat_rotate_quath_vec3h": [wp.quath, wp.vec3h],
    "wp_builtin_min_spatial_vectord_spatial_vectord": [wp.spatial_vectord, wp.spatial_vectord],
    "wp_builtin_mul_spatial_matrixf_spatial_vectorf": [wp.spatial_matrixf, wp.spatial_vectorf],
    "wp_builtin_dot_vec3ub_vec3ub": [wp.vec3ub, wp.vec3ub],
    "wp_builtin_length_sq_vec4l": [wp.vec4l],
    "wp_builtin_atan2_float32_float32": [wp.float32, wp.float32],
    "wp_builtin_rand_init_int32_int32": [wp.int32, wp.int32],
    "wp_builtin_bit_and_uint64_uint64": [wp.uint64, wp.uint64],
    "wp_builtin_quat_identity_float32": [],
}


@pytest.mark.parametrize("symbol", sorted(WARP_EXPORT_NAMES))
def test_warp_export_names_resolve_to_their_argument_types(symbol):
    assert getattr(core, symbol).arg_types == WARP_EXPORT_NAMES[symbol]


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="wp_array_inner_float_host"):
        core.wp_array_inner_float_host
    with pytest.raises(AttributeError, match="wp_builtin_transform_multiply_vec3f"):
        core.wp_builtin_transform_multiply_vec3f  # a builtin, but no such type combination in the name
    with pytest.raises(AttributeError, match="wp_builtin_no_such_builtin_float32"):
        core.wp_builtin_no_such_builtin_float32


def test_bad_calls_name_the_symbol_and_the_argument():
    a = wp.transform()
    with pytest.raises(TypeError, match=r"wp_builtin_mul_transformf_transformf\(\) takes 2 argument\(s\)"):
        core.wp_builtin_mul_transformf_transformf(a)
    with pytest.raises(TypeError, match=r"writes 1 result\(s\), got 0 result pointer"):
        core.wp_builtin_mul_transformf_transformf(a, a)
    with pytest.raises(TypeError, match="argument 1 is a transformf, passed by reference"):
        core.wp_builtin_mul_transformf_transformf(a, wp.vec3(), ctypes.byref(wp.transform()))
    with pytest.raises(TypeError, match="argument 0 is a float32, passed by value; got a pointer"):
        core.wp_builtin_sin_float32(ctypes.byref(ctypes.c_float(1.0)), ctypes.byref(ctypes.c_float()))
    with pytest.raises(TypeError, match="argument 1 is the result pointer"):
        core.wp_builtin_sin_float32(ctypes.c_float(1.0), "out")
