"""Warp's public `warp.types` surface in Python scope: scalar conversions and comparisons, the numpy dtype
protocol, type introspection (type_repr, types_equal, type_is_*, is_*), generic composite annotations, and the
Python-side behaviour of vectors and matrices (indexing, slicing, assignment, arithmetic, errors).

Expected values are computed by hand (two's complement wrapping, IEEE rounding through numpy) or with numpy."""

import ctypes
import operator
import typing
from typing import Any

import numpy as np
import pytest

import mlwarp as wp


# -- scalars -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("t, x, expected", [
    (wp.int8, -1234567890, 46),  # -1234567890 = -0x499602D2; low byte 0xD2 = 210; -210 mod 256 = 46
    (wp.uint8, 300, 44),
    (wp.int16, 40000, 40000 - 65536),
    (wp.int32, 2 ** 40, 0),
    (wp.int32, 2 ** 31, -2 ** 31),
    (wp.uint32, -1, 2 ** 32 - 1),
    (wp.uint64, -1, 2 ** 64 - 1),
    (wp.int64, 2 ** 63, -2 ** 63),
    (wp.int8, 1.7, 1),  # floats truncate toward zero, as C converts them
    (wp.int8, -1.7, -1),
    (wp.uint8, np.int64(257), 1),
    (wp.int8, wp.int32(130), 130 - 256),
    (wp.int16, True, 1),
])
def test_integer_conversion_wraps_as_c(t, x, expected):
    v = t(x)
    assert v.value == expected and type(v.value) is int
    assert int(v) == expected and operator.index(v) == expected
    assert repr(v) == f"{t.__name__}({expected})" and str(v) == str(expected)


def test_integer_conversion_refuses_non_numbers():
    with pytest.raises(TypeError, match="'str' object cannot be interpreted as an integer"):
        wp.int8("5")


def test_float_conversion_rounds_to_the_type():
    assert wp.float16(1.1).value == float(np.float16(1.1)) == 1.099609375
    assert wp.float32(1.1).value == float(np.float32(1.1))
    assert wp.float64(1.1).value == 1.1
    assert wp.float32(1e40).value == float("inf") and wp.float16(1e6).value == float("inf")
    assert wp.bfloat16(1.1).value == 1.1015625  # 0x3F8C: 1 + 12/128
    assert repr(wp.float64(1.5)) == "float64(1.5)" and str(wp.float32(0.25)) == "0.25"
    assert wp.float32("5.5").value == 5.5
    assert f"{wp.float64(2.0 / 3.0):.3f}" == "0.667"


def test_float_scalars_print_as_warp():
    # recorded from warp-lang 1.19, whose scalars print the number they were given: an integer as one, a float
    # by its shortest spelling (mlwarp's value is rounded to the type; that spelling reads back as it)
    assert [repr(t(-1)) for t in (wp.float16, wp.float32, wp.float64)] == ["float16(-1)", "float32(-1)",
                                                                          "float64(-1)"]
    assert str(wp.float32(-1)) == "-1" and str(wp.float32(wp.int32(3))) == "3" and repr(wp.float64(wp.float32(2))) \
        == "float64(2)"
    assert repr(wp.float32(0.1)) == "float32(0.1)" and repr(wp.float16(0.1)) == "float16(0.1)"
    assert repr(wp.float32(1e20)) == "float32(1e+20)" and repr(wp.float64(2.0)) == "float64(2.0)"
    assert f"{wp.float32(-1)}" == "-1" and f"{wp.float32(-1):.2f}" == "-1.00"
    assert wp.float32(0.1).value == float(np.float32(0.1))  # the value itself stays rounded


def test_bool_conversion():
    assert wp.bool(5).value is True and repr(wp.bool(5)) == "bool(True)" and str(wp.bool(0.0)) == "False"
    assert int(wp.bool(True)) == 1 and float(wp.bool(True)) == 1.0


@pytest.mark.parametrize("t", [wp.int8, wp.uint16, wp.int32, wp.uint64])
def test_integers_convert_to_python_and_ctypes(t):
    v = t(123)
    assert (bool(v), int(v), float(v)) == (True, 123, 123.0)
    assert ctypes.c_int(v).value == 123 and ctypes.c_float(v).value == 123.0 and ctypes.c_bool(v).value is True
    assert [10, 20, 30][t(1)] == 20
    assert bool(t(0)) is False


def test_comparisons_never_truncate_floats():
    one, two = wp.int8(1), wp.int8(2)
    assert one != 1.5 and one == 1.0 and one < 1.5 and two > 1.5 and two >= 2.0
    assert one != wp.float32(1.5) and one == wp.float32(1.0) and one == np.float16(1.0) and one < np.float64(1.5)
    assert one == 1 and one != 2 and one == wp.int64(1)
    assert hash(one) == hash(1.0) and len({one, 1.0}) == 1 and len({one, 1.5}) == 2
    assert one < float("inf") and one != float("inf")
    assert wp.float32(0.5) < 1 and wp.float64(2.0) == wp.int8(2)
    assert (wp.float32(1.0) == "x") is False and (wp.int8(1) == None) is False  # noqa: E711


def test_float_comparison_with_a_huge_int_overflows():
    for op in (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge):
        with pytest.raises(OverflowError):
            op(wp.float32(1.0), 2 ** 1024)
    assert (wp.int32(1) == 2 ** 1024) is False


def test_scalar_arithmetic():
    assert wp.int8(100) + wp.int8(100) == -56 and type(wp.int8(100) + wp.int8(100)) is wp.int8
    assert -wp.uint8(5) == 251
    assert (wp.int8(-5) / wp.int8(2)).value == -2 and (wp.int8(-5) % wp.int8(3)).value == -2  # C: toward zero
    assert abs(wp.int8(-5)) == 5 and type(abs(wp.int8(-5))) is wp.int8
    assert float(wp.float32(2.0) ** wp.float32(3.0)) == 8.0
    assert round(wp.float32(1.5)) == 2.0 and type(round(wp.float32(1.5))) is wp.float32
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \*\* or pow\(\): 'int8' and 'int8'"):
        wp.int8(2) ** wp.int8(3)


def test_scalar_operators_leave_arrays_and_vectors_to_them():
    a = wp.zeros(3, dtype=float)
    assert wp.float32(2.0).__add__(a) is NotImplemented and wp.float32(2.0).__rmul__(a) is NotImplemented
    assert wp.float32(2.0).__mul__(wp.vec3()) is NotImplemented


def test_numpy_dtype_protocol():
    pairs = [(wp.bool, np.bool_), (wp.int8, np.int8), (wp.uint8, np.uint8), (wp.int16, np.int16),
             (wp.uint16, np.uint16), (wp.int32, np.int32), (wp.uint32, np.uint32), (wp.int64, np.int64),
             (wp.uint64, np.uint64), (wp.float16, np.float16), (wp.float32, np.float32), (wp.float64, np.float64)]
    for t, n in pairs:
        assert t.__numpy_dtype__ == np.dtype(n)
        assert not hasattr(t, "dtype") and not hasattr(t(1), "dtype")
        if np.lib.NumpyVersion(np.__version__) >= "2.4.0":
            assert np.dtype(t) == np.dtype(n) and np.dtype(t(1)) == np.dtype(n)
            assert np.zeros(3, dtype=t).dtype == np.dtype(n)
    assert not hasattr(wp.bfloat16, "__numpy_dtype__") and not hasattr(wp.vec3, "__numpy_dtype__")
    if np.lib.NumpyVersion(np.__version__) >= "2.4.0":
        assert np.dtype(wp.bfloat16) == np.dtype(object)
    assert wp.int8._type_ is ctypes.c_int8 and wp.float16._type_ is ctypes.c_uint16 and wp.bool._type_ is ctypes.c_bool
    assert wp.float32._length_ == 1


def test_generic_scalar_annotations():
    assert isinstance(wp.Float, typing.TypeVar) and isinstance(wp.Int, typing.TypeVar)
    assert set(wp.Float.__constraints__) == {float, wp.float16, wp.bfloat16, wp.float32, wp.float64}
    assert set(wp.Int.__constraints__) == {int, wp.int8, wp.uint8, wp.int16, wp.uint16, wp.int32, wp.uint32,
                                           wp.int64, wp.uint64}
    assert set(wp.Scalar.__constraints__) == set(wp.Float.__constraints__) | set(wp.Int.__constraints__)
    assert wp.bool not in wp.Scalar.__constraints__
    assert wp.handle is wp.uint64 and wp.types.handle is wp.uint64


def test_log_levels():
    assert (wp.LOG_DEBUG, wp.LOG_INFO, wp.LOG_WARNING, wp.LOG_ERROR) == (10, 20, 30, 40)
    assert wp.config.log_level == wp.LOG_INFO


def test_constant_refuses_other_types_with_warps_message():
    with pytest.raises(TypeError, match=r"^Invalid constant type: <class 'tuple'>$"):
        wp.constant((1, 2, 3))


# -- introspection -------------------------------------------------------------------------------------------
@wp.struct
class Pair:
    a: float
    b: int


vec8ub = wp.types.vector(8, wp.uint8)
mat55d = wp.types.matrix((5, 5), wp.float64)


def test_type_predicates_on_types():
    T = wp.types
    for t in (int, wp.int32, wp.uint64, wp.int8):
        assert T.type_is_int(t) and T.type_is_scalar(t) and T.type_is_value(t) and not T.type_is_float(t)
    for t in (float, wp.float16, wp.bfloat16, wp.float64):
        assert T.type_is_float(t) and T.type_is_scalar(t) and not T.type_is_int(t)
    assert not T.type_is_scalar(wp.bool) and T.type_is_value(wp.bool) and T.type_is_value(bool)
    for t, kind in ((wp.vec3, "vector"), (vec8ub, "vector"), (wp.mat33h, "matrix"), (mat55d, "matrix"),
                    (wp.quath, "quaternion"), (wp.transformd, "transformation")):
        for k in ("vector", "matrix", "quaternion", "transformation"):
            assert getattr(T, f"type_is_{k}")(t) == (k == kind)
        assert T.type_is_composite(t) and T.type_is_value(t) and not T.type_is_scalar(t)
    assert T.type_is_struct(Pair) and not T.type_is_composite(Pair) and not T.type_is_value(Pair)
    assert T.type_is_array(wp.array) and not T.type_is_array(wp.array(dtype=float)) and not T.type_is_array(float)
    assert not T.type_is_tile(wp.array) and not T.type_is_vector(wp.vec3())


def test_value_predicates_on_values():
    T = wp.types
    assert T.is_vector(wp.vec3()) and T.is_vector(vec8ub()) and not T.is_vector(wp.vec3)
    assert T.is_matrix(wp.mat22()) and not T.is_matrix(wp.mat22) and not T.is_matrix(wp.vec3())
    assert T.is_quaternion(wp.quat()) and T.is_transformation(wp.transform()) and not T.is_vector(wp.quat())
    for x in (1, 1.5, True, wp.int16(1), wp.float16(1), wp.vec2(), wp.mat22(), wp.quat(), wp.transform()):
        assert T.is_value(x)
    for x in ("x", None, wp.vec3, Pair(), wp.zeros(2)):
        assert not T.is_value(x)
    assert T.is_array(wp.zeros(3)) and T.is_array(wp.array(dtype=float)) and not T.is_tile(wp.zeros(3))


def test_scalar_struct_array_predicates_take_values():
    """wp.types.is_int/is_float/is_scalar/is_composite/is_struct/is_array take values, as Warp's do: the table
    below was recorded from warp-lang 1.19 (a type, a numpy scalar or a bool is not an int there)."""
    T = wp.types
    values = [3, True, 1.0, np.int32(3), np.float32(1), wp.int8(3), wp.uint64(3), wp.float16(1), wp.float64(2),
              wp.int32, int, float, wp.vec3(), wp.vec3, wp.mat22(), wp.quat(), wp.transform(), Pair(), Pair,
              wp.zeros(2), wp.array, wp.array[float], wp.array2d[wp.vec3], "x", None]
    recorded = {
        "is_int": [1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        "is_float": [0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        "is_scalar": [1, 0, 1, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        "is_composite": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0],
        "is_struct": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
        "is_array": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 0],
    }
    for name, expected in recorded.items():
        assert [int(getattr(T, name)(v)) for v in values] == expected, name


@pytest.mark.parametrize("t, text", [
    (wp.float16, "float16"), (wp.bool, "bool"), (float, "float"), (int, "int"), (bool, "bool"), (Any, "Any"),
    (wp.vec3, "vec3f"), (wp.vec2i, "vec2i"), (wp.vec4ub, "vec4ub"), (wp.types.vector(3, wp.bfloat16), "vec3bf"),
    (wp.types.vector(5, wp.float32), "vector(length=5, dtype=float32)"),
    (wp.types.vector(3, wp.bool), "vector(length=3, dtype=bool)"),
    (wp.mat22d, "mat22d"), (wp.types.matrix((2, 3), wp.int8), "mat23b"),
    (wp.types.matrix((2, 5), wp.int8), "matrix(shape=(2, 5), dtype=int8)"),
    (wp.quath, "quath"), (wp.transformd, "transformd"), (wp.spatial_vector, "vector(length=6, dtype=float32)"),
    (wp.array(dtype=wp.vec3), "array(ndim=1, dtype=vec3f)"), (wp.array(dtype=float, ndim=2),
                                                              "array(ndim=2, dtype=float32)"),
    (tuple[float, wp.vec3], "tuple(float, vec3f)"),
    (wp.types.vector(length=Any, dtype=Any), "vector(length=Any, dtype=Any)"),
    (wp.types.vector(length=3, dtype=wp.Float), "vector(length=3, dtype=Float)"),
    (wp.types.matrix(shape=(Any, Any), dtype=wp.float32), "matrix(shape=(Any, Any), dtype=float32)"),
    (wp.types.quaternion(dtype=Any), "quat(dtype=Any)"),
])
def test_type_repr(t, text):
    assert wp.types.type_repr(t) == text


def test_type_repr_of_arrays_shows_their_shape():
    assert wp.types.type_repr(wp.zeros(4, dtype=float)) == "array(shape=(4,), dtype=float32)"
    assert wp.types.type_repr(wp.zeros((2, 3), dtype=wp.vec3h)) == "array(shape=(2, 3), dtype=vec3h)"


def test_types_equal():
    T = wp.types
    assert T.types_equal(wp.vec3, T.vector(3, float)) and T.types_equal(float, wp.float32)
    assert T.types_equal(int, wp.int32) and T.types_equal(bool, wp.bool)
    assert not T.types_equal(wp.vec3, wp.vec3d) and not T.types_equal(wp.float32, wp.float64)
    assert T.types_equal(T.matrix((3, 3), wp.float64), wp.mat33d) and T.types_equal(T.quaternion(float), wp.quat)
    assert T.types_equal(wp.array(dtype=float), wp.array(dtype=wp.float32))
    assert not T.types_equal(wp.array(dtype=float), wp.array(dtype=wp.float64))
    assert not T.types_equal(wp.array(dtype=float), wp.array(dtype=float, ndim=2))
    assert not T.types_equal(wp.array(dtype=float), wp.float32)
    assert T.types_equal(T.vector(length=Any, dtype=Any), T.vector(length=Any, dtype=Any))
    assert not T.types_equal(T.vector(length=Any, dtype=float), wp.vec3)
    assert not T.types_equal("x", "y")


def test_sizes_and_ctypes():
    T = wp.types
    assert T.type_size_in_bytes(wp.mat33d) == 72 and T.type_size_in_bytes(wp.float16) == 2
    assert T.type_size_in_bytes(float) == 4 and T.type_size_in_bytes(wp.transformh) == 14
    assert T.type_size_in_bytes(Pair) == 8  # a float32 then an int32
    assert T.type_size(wp.vec3) == 3 and T.type_size(wp.mat33d) == 9 and T.type_size(float) == 1
    assert T.type_size(wp.transform) == 7 and T.type_size(Pair) == 1 and T.type_size(wp.float16) == 1
    with pytest.raises(TypeError, match="^A concrete type is required$"):
        T.type_size_in_bytes(Any)
    assert T.type_ctype(float) is ctypes.c_float and T.type_ctype(int) is ctypes.c_int32
    assert T.type_ctype(wp.float16) is ctypes.c_uint16 and T.type_ctype(wp.vec3) is wp.vec3
    assert T.type_scalar_type(wp.vec3h) is wp.float16 and T.type_scalar_type(float) is wp.float32
    assert wp.vec3._wp_type_params_ == (3, wp.float32)
    assert wp.types.matrix((2, 3), wp.float64)._wp_type_params_ == (2, 3, wp.float64)
    assert wp.quatd._wp_type_params_ == (wp.float64,)


# -- generic composite annotations --------------------------------------------------------------------------
def test_generic_vector_and_matrix_types():
    T = wp.types
    g = T.vector(length=Any, dtype=Any)
    assert g is T.vector(length=Any, dtype=Any) and g == T.vector(Any, Any) and g._wp_generic_ is True
    assert T.type_is_vector(g) and not getattr(wp.vec3, "_wp_generic_", False)
    assert g._wp_matches_(wp.vec3) and g._wp_matches_(vec8ub) and not g._wp_matches_(wp.mat22)
    assert not g._wp_matches_(wp.quat) and not g._wp_matches_(float) and not g._wp_matches_(g)
    f3 = T.vector(length=3, dtype=wp.Float)
    assert f3._wp_matches_(wp.vec3d) and f3._wp_matches_(wp.vec3h) and not f3._wp_matches_(wp.vec3i)
    assert not f3._wp_matches_(wp.vec4d) and f3._wp_type_params_ == (3, wp.Float)
    m = T.matrix(shape=(Any, 3), dtype=float)
    assert m._wp_matches_(T.matrix((2, 3), float)) and m._wp_matches_(wp.mat33)
    assert not m._wp_matches_(T.matrix((3, 2), float)) and not m._wp_matches_(wp.mat33d)
    q = T.quaternion(dtype=Any)
    assert q._wp_matches_(wp.quath) and not q._wp_matches_(wp.vec4) and T.type_is_quaternion(q)
    t = T.transformation(dtype=wp.Float)
    assert t._wp_matches_(wp.transformd) and T.type_is_transformation(t)
    assert len(g()) == 0  # constructible, with no components


def test_factory_errors():
    with pytest.raises(ValueError, match=r"^vector length must be a non-negative int or typing\.Any, got -1$"):
        wp.types.vector(-1, float)
    with pytest.raises(ValueError, match=r"^Matrix shape must have exactly two dimensions, got 1 dimension in "
                                         r"shape \(3,\)$"):
        wp.types.matrix((3,), float)
    with pytest.raises(TypeError, match="^vector dtype must be a scalar type, got None$"):
        wp.types.vector(3, "x")


# -- vectors -------------------------------------------------------------------------------------------------
def test_indexing_gives_warp_scalars_for_non_default_types():
    v = wp.vec4d(1, 2, 3, 4)
    assert type(v[0]) is wp.float64 and v[0] == 1.0 and type(v.w) is wp.float64
    assert type(wp.vec3(1, 2, 3)[0]) is float and type(wp.vec3i(1, 2, 3)[1]) is int
    assert type(wp.vec3h(1, 2, 3)[2]) is wp.float16 and type(wp.vec3ub(1, 2, 3)[0]) is wp.uint8
    assert repr(v) == "vec4d([float64(1.0), float64(2.0), float64(3.0), float64(4.0)])"
    assert repr(wp.vec3(1, 2, 3)) == "vec3f([1.0, 2.0, 3.0])" and str(v) == "[1.0, 2.0, 3.0, 4.0]"
    old = wp.config.legacy_scalar_return_types
    try:
        wp.config.legacy_scalar_return_types = True
        assert type(v[0]) is float and type(wp.vec3s(1, 2, 3)[0]) is int
        assert type(wp.mat22h(1, 2, 3, 4)[0, 0]) is float
    finally:
        wp.config.legacy_scalar_return_types = old


def test_vector_construction():
    assert list(wp.vec3()) == [0.0, 0.0, 0.0] and list(wp.vec3(2.5)) == [2.5] * 3
    assert wp.vec3((1, 2, 3)) == (1, 2, 3) and wp.vec3(np.array([4.0, 5.0, 6.0])) == (4, 5, 6)
    assert wp.vec3(wp.vec3d(1, 2, 3)) == (1, 2, 3)
    assert wp.vec3b(300, -200, 3) == (44, 56, 3)  # wrapped: 300 - 256, -200 + 256
    assert wp.spatial_vector(wp.vec3(1, 2, 3), wp.vec3(4, 5, 6)) == (1, 2, 3, 4, 5, 6)
    w = wp.vec3(1, 2, 3)
    copy = wp.vec3(w)
    copy[0] = 123
    assert w == (1, 2, 3) and copy == (123, 2, 3)
    with pytest.raises(ValueError, match=r"^Invalid number of arguments in vector constructor, expected 3 elements, "
                                         r"got 2$"):
        wp.vec3(1, 2)
    with pytest.raises(TypeError, match=r"^Invalid argument in vector constructor: expected a `float32` value, got "
                                        r"`str`$"):
        wp.vec3("a", 1, 2)


def test_vector_slices():
    v = wp.vec4(1, 2, 3, 4)
    assert type(v[0:2]) is wp.vec2 and v[0:2] == (1, 2) and v[::-1] == (4, 3, 2, 1) and v[-2:] == (3, 4)
    assert len(v[5:]) == 0 and wp.types.type_repr(type(v[5:])) == "vec0f"
    v[1:3] = (-2, -3)
    assert v == (1, -2, -3, 4)
    v[::2] = 7.0
    assert v == (7, -2, 7, 4)
    v.x = 0.5
    assert v[0] == 0.5 and v.x == 0.5
    v.foo = 123
    assert v.foo == 123
    with pytest.raises(AttributeError, match="'vec4f' object has no attribute 'xy'"):
        v.xy = (1, 2)


def test_vector_assignment_errors():
    v1, v2 = wp.vec3i(1, 2, 3), wp.vec3h(1, 2, 3)
    with pytest.raises(TypeError, match=r"^Expected to assign a `int32` value but got `str` instead$"):
        v1[0] = "123.0"
    with pytest.raises(TypeError, match=r"^Expected to assign a slice from a sequence of `int32` values but got "
                                        r"`vec3i` instead$"):
        v1[:1] = (v1,)
    with pytest.raises(ValueError, match=r"^Can only assign sequence of same size$"):
        v1[:1] = (1, 2)
    with pytest.raises(TypeError, match=r"^Expected to assign a slice from a sequence of `float16` values but got "
                                        r"`vec3h` instead$"):
        v2[:1] = (v2,)
    with pytest.raises(TypeError, match=r"^Expected to assign a slice from a sequence of values but got `object` "
                                        r"instead$"):
        v2[:1] = object()
    with pytest.raises(KeyError, match=r"Invalid key None, expected int or slice"):
        v1[None]
    with pytest.raises(KeyError, match=r"Invalid key None, expected int or slice"):
        v1[None] = 0
    with pytest.raises(IndexError, match=r"^index 3 out of range for length 3$"):
        v1[3]
    assert v1 == (1, 2, 3) and v2 == (1, 2, 3)  # nothing was written


def test_vector_equality():
    v = wp.vec3(1, 2, 3)
    assert v == (1, 2, 3) and v == [1.0, 2.0, 3.0] and v == np.array([1, 2, 3]) and v == wp.vec3d(1, 2, 3)
    assert v != (1, 2) and v != (1, 2, 4) and v != 5 and v != np.array([[1, 2, 3]])
    assert hash(v) == hash(wp.vec3(1, 2, 3))


@pytest.mark.parametrize("vt, st", [(wp.vec3, wp.float32), (wp.vec3d, wp.float64), (wp.vec3h, wp.float16),
                                    (wp.vec3b, wp.int8), (wp.vec3ul, wp.uint64), (wp.vec3i, wp.int32)])
def test_vector_arithmetic_matches_numpy(vt, st):
    a, b = vt(2, 4, 6), vt(1, 1, 5)
    na, nb = np.array([2, 4, 6], dtype=st._np_), np.array([1, 1, 5], dtype=st._np_)
    assert np.array_equal((a + b).numpy(), na + nb) and np.array_equal((a - b).numpy(), na - nb)
    assert np.array_equal((-a).numpy(), -na) and +a == a
    assert a * st(2) == (4, 8, 12) and st(2) * a == (4, 8, 12)
    assert a / st(2) == (1, 2, 3) and st(12) / a == (6, 3, 2)
    assert a % b == (0, 0, 1)


def test_integer_vector_division_truncates_toward_zero():
    assert wp.vec3i(-7, 7, -1) / wp.int32(2) == (-3, 3, 0) and wp.int32(-7) / wp.vec3i(2, -2, 4) == (-3, 3, -1)
    assert wp.vec3i(-7, 7, -7) % wp.vec3i(2, -2, 0) == (-1, 1, -7)  # C remainder; x % 0 is x, as in kernels


def test_numpy_conversion():
    assert np.array(wp.vec3(1, 2, 3)).dtype == np.float32 and np.array(wp.vec3d(1, 2, 3)).dtype == np.float64
    assert np.array_equal(np.array([wp.vec3(1, 2, 3), wp.vec3(4, 5, 6)]), [[1, 2, 3], [4, 5, 6]])
    # numpy reads the C storage (as Warp's): a matrix flat, half types as their bits; .numpy() has the values
    assert np.array_equal(np.array(wp.mat22(1, 2, 3, 4)), [1, 2, 3, 4])
    assert np.array_equal(np.array(wp.vec3h(1, 2, 3)), np.array([1, 2, 3], dtype=np.float16).view(np.uint16))
    assert np.array_equal(wp.mat22(1, 2, 3, 4).numpy(), [[1, 2], [3, 4]])
    assert wp.vec3h(1, 2, 3).numpy().dtype == np.float32 and wp.vec3s(1, 2, 3).numpy().dtype == np.int16


def test_from_ptr_reads_memory():
    data = (ctypes.c_float * 4)(1.0, 2.0, 3.0, 4.0)
    assert wp.vec3.from_ptr(ctypes.addressof(data)) == (1, 2, 3)
    assert wp.mat22.from_ptr(ctypes.addressof(data)) == ((1, 2), (3, 4))
    with pytest.raises(RuntimeError, match="^NULL pointer exception$"):
        wp.vec3.from_ptr(0)
    with pytest.raises(RuntimeError, match="^NULL pointer exception$"):
        wp.mat22.from_ptr(0)


# -- matrices ------------------------------------------------------------------------------------------------
def test_matrix_construction():
    rows = ((1, 2, 3), (4, 5, 6), (7, 8, 9))
    for m in (wp.mat33(rows), wp.mat33(*rows), wp.mat33(*range(1, 10)), wp.mat33(np.arange(1, 10).reshape(3, 3)),
              wp.mat33(list(range(1, 10))), wp.mat33(wp.vec3(1, 2, 3), wp.vec3(4, 5, 6), wp.vec3(7, 8, 9))):
        assert m == rows
    assert wp.mat22(2.0) == ((2, 2), (2, 2)) and wp.mat22() == ((0, 0), (0, 0))
    with pytest.raises(ValueError, match=r"^Invalid number of arguments in matrix constructor, expected 4 elements, "
                                         r"got 3$"):
        wp.mat22(1, 2, 3)
    with pytest.raises(TypeError, match=r"^Invalid argument in matrix constructor, expected row of length 2, got "
                                        r"\(1, 2, 3\)$"):
        wp.mat22((1, 2, 3), (3, 4, 5))


def test_matrix_indexing_and_slicing():
    m = wp.mat33(*range(1, 10))
    assert m[1, 2] == 6 and m[-1, -1] == 9 and m[1][2] == 6 and type(m[0]) is wp.vec3
    assert m[0][1:3] == (2, 3) and m[:, 1] == (2, 5, 8) and m[2, :] == (7, 8, 9)
    assert m[1:, 1:] == ((5, 6), (8, 9)) and type(m[1:, 1:]) is wp.mat22 and m[:1] == ((1, 2, 3),)
    assert m.get_row(-1) == (7, 8, 9) and m.get_col(0) == (1, 4, 7)
    assert list(m) == [(1, 2, 3), (4, 5, 6), (7, 8, 9)] and len(m) == 3
    d = wp.mat22d(1, 2, 3, 4)
    assert type(d[0, 1]) is wp.float64 and type(d[0][0]) is wp.float64
    assert str(wp.mat22(2, 4, 6, 8)) == "[[2.0, 4.0],\n [6.0, 8.0]]"
    assert repr(wp.mat22(2, 4, 6, 8)) == "mat22f([[2.0, 4.0], [6.0, 8.0]])"


def test_matrix_assignment():
    m = wp.mat33(*range(1, 10))
    m[1, 0] = -4
    m[2] = (-7, 8, -9)
    assert m == ((1, 2, 3), (-4, 5, 6), (-7, 8, -9))
    m.set_row(0, 0.5)
    m.set_col(2, (10, 20, 30))
    assert m == ((0.5, 0.5, 10), (-4, 5, 20), (-7, 8, 30))
    m[0, :] = (1, 1, 1)
    m[:, 0] = 9
    m[1:, 1:] = ((1, 2), (3, 4))
    assert m == ((9, 1, 1), (9, 1, 2), (9, 3, 4))
    m[0:1] = ((5, 5, 5),)
    assert m[0] == (5, 5, 5)
    copy = wp.mat33(m)
    copy[0, 0] = 123
    assert m[0, 0] == 5 and copy[0, 0] == 123


def test_matrix_errors():
    m = wp.mat22h(1, 2, 3, 4)
    with pytest.raises(TypeError, match=r"^Expected to assign a `float16` value but got `str` instead$"):
        m[0, 0] = "123.0"
    with pytest.raises(TypeError, match=r"^Expected to assign a `float16` value but got `str` instead$"):
        m[0][0] = "123.0"
    with pytest.raises(TypeError, match=r"^Expected to assign a slice from a sequence of `float16` values but got "
                                        r"`mat22h` instead$"):
        m[0] = (m,)
    with pytest.raises(ValueError, match=r"^Can only assign sequence of same size$"):
        m[0][:1] = (1, 2)
    with pytest.raises(RuntimeError, match=r"^The provided value is expected to be a scalar but got an object of "
                                           r"shape \(2,\) instead$"):
        m[0, 0] = (1, 2)
    with pytest.raises(IndexError, match=r"^Invalid row index$"):
        m.set_row(2, (0, 0))
    with pytest.raises(IndexError, match=r"^Invalid column index$"):
        m.get_col(-3)
    with pytest.raises(KeyError, match=r"Invalid key None, expected int or pair of ints"):
        m[None]
    with pytest.raises(KeyError, match=r"Invalid key None, expected int or pair of ints"):
        m[None] = 0
    with pytest.raises(KeyError, match=r"Invalid key, expected one or two indices, got 3"):
        m[0, 1, 2]
    with pytest.raises(KeyError, match=r"Invalid key, expected one or two indices, got 3"):
        m[0, 1, 2] = (0, 0)
    assert m == ((1, 2), (3, 4))


@pytest.mark.parametrize("mt, vt, st", [(wp.mat22, wp.vec2, wp.float32), (wp.mat22d, wp.vec2d, wp.float64),
                                        (wp.mat22h, wp.vec2h, wp.float16)])
def test_matrix_arithmetic_matches_numpy(mt, vt, st):
    m, n = mt(2, 4, 6, 8), np.array([[2, 4], [6, 8]], dtype=np.float64)
    assert np.array_equal((m + mt(1, 1, 1, 1)).numpy(), n + 1) and np.array_equal((-m).numpy(), -n)
    assert np.array_equal((m * st(2)).numpy(), n * 2) and np.array_equal((st(2) * m).numpy(), n * 2)
    assert np.array_equal((m / st(2)).numpy(), n / 2) and np.array_equal((st(24) / m).numpy(), 24 / n)
    v = np.array([1, 2], dtype=np.float64)
    assert np.array_equal((m * vt(1, 2)).numpy(), n @ v) and np.array_equal((m @ vt(1, 2)).numpy(), n @ v)
    assert np.array_equal((vt(1, 2) * m).numpy(), v @ n) and np.array_equal((vt(1, 2) @ m).numpy(), v @ n)
    assert np.array_equal((m @ m).numpy(), n @ n)
    assert m != mt(1, 2, 3, 4)


# -- transforms ----------------------------------------------------------------------------------------------
def test_transform_construction_and_members():
    q = (0.0, 0.0, 0.5, 0.75)  # exact in float32
    for t in (wp.transform((1, 2, 3), q), wp.transform(p=(1, 2, 3), q=q), wp.transform(wp.vec3(1, 2, 3), wp.quat(q)),
              wp.transform(1, 2, 3, *q)):
        assert t.p == (1, 2, 3) and t.q == q and type(t.p) is wp.vec3 and type(t.q) is wp.quat
    assert wp.transform() == (0, 0, 0, 0, 0, 0, 1) and wp.transform(p=(1, 2, 3)) == (1, 2, 3, 0, 0, 0, 1)
    assert wp.transform((1, 2, 3)) == (1, 2, 3, 0, 0, 0, 1)
    t = wp.transform()
    t.p = (4, 5, 6)
    t.q = q
    assert t == (4, 5, 6, *q) and repr(t) == "transformf([4.0, 5.0, 6.0, 0.0, 0.0, 0.5, 0.75])"
    with pytest.raises(RuntimeError, match="^Cannot set attribute x of transformation$"):
        t.x = 1.0
    with pytest.raises(TypeError, match=r"^Invalid argument 'q' in transformation constructor: expected a sequence, "
                                        r"got float$"):
        wp.transform((1, 2, 3), 1.0)
    with pytest.raises(TypeError, match=r"^Invalid argument 'p' in transformation constructor: expected a sequence, "
                                        r"got float$"):
        wp.transformd(p=1.0)
    with pytest.raises(TypeError, match=r"^Invalid argument in transformation constructor: expected a scalar value, "
                                        r"got object$"):
        wp.transformh(object())
    with pytest.raises(TypeError, match=r"^multiple values for argument 'q'$"):
        wp.transform(*range(7), q=(0, 0, 0, 1))
    with pytest.raises(TypeError, match=r"^got an unexpected keyword argument 'pos'$"):
        wp.transform(*range(7), pos=(1, 2, 3))


def test_identities_take_dtype_none_as_float32():
    assert wp.quat_identity(dtype=None) == (0, 0, 0, 1) and type(wp.quat_identity(dtype=None)) is wp.quat
    assert type(wp.transform_identity(dtype=None)) is wp.transform and wp.transform_identity() == (0,) * 6 + (1,)
    assert wp.identity(2, dtype=None) == ((1, 0), (0, 1)) and type(wp.identity(3, wp.float64)) is wp.mat33d


def test_transform_fill_and_copy():
    assert wp.transformh(1.5) == (1.5,) * 7 and wp.transform(np.float32(2.0)) == (2.0,) * 7
    assert wp.transform(True) == (1,) * 7
    assert wp.transformf(wp.transformd(*range(7))) == tuple(range(7))
    with pytest.raises(TypeError, match=r"^Invalid argument in vector constructor: expected a scalar value, got "
                                        r"object$"):
        wp.vec3(object())


def test_array_family_and_tile_type_predicates():
    """type_is_array is True for each of Warp's array classes and is_array for their instances and annotations;
    wp.tile is the tile type and wp.tile(dtype=, shape=) a tile type object (recorded from warp-lang 1.19)."""
    T = wp.types
    for cls in (wp.array, wp.fixedarray, wp.indexedarray, wp.fabricarray, wp.indexedfabricarray):
        assert T.type_is_array(cls) and not T.is_array(cls)
    for value in (wp.fixedarray(dtype=int), wp.indexedarray(dtype=wp.float16), wp.fabricarray(dtype=float),
                  wp.indexedarray(wp.zeros(3), [wp.array([0, 1], dtype=int)])):
        assert T.is_array(value) and not T.type_is_array(value)
    assert T.type_is_tile(wp.tile) and not T.is_tile(wp.tile)
    assert not T.type_is_tile(wp.tile[float, 2]) and T.is_tile(wp.tile[float, 2])
    t = wp.tile(dtype=float, shape=(2, 3))
    assert T.is_tile(t) and (t.dtype, t.shape, t.storage, t.layout, t.strides, t.size, t.owner) == \
        (wp.float32, (2, 3), "register", "rowmajor", [3, 1], 6, True)
    t = wp.tile(dtype=wp.float16, shape=(2, 3, 4), layout="colmajor")
    assert (t.strides, t.size) == ([1, 2, 6], 24)
    assert wp.tile[float].shape is Any and wp.tile[float].strides is None
    with pytest.raises(RuntimeError, match="Empty shape specified, must have at least 1 dimension"):
        wp.tile(dtype=float, shape=())
