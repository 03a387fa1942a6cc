"""Builtins seen from Python as Warp's `Function` objects: `key`, `overloads`, each overload's parameter names,
types and result type. Expected values recorded from warp-lang 1.19 (`wp.sin.overloads`, ...)."""

import typing

import pytest

import mlwarp as wp


def _signature(overload):
    return tuple(overload.input_types.items()), overload.value_type


def test_scalar_builtin_lists_a_concrete_overload_per_float_type_then_the_generic_one():
    overloads = wp.sin.overloads
    assert wp.sin.key == "sin" and all(o.key == "sin" and o.is_builtin() for o in overloads)
    for t in (wp.float16, wp.float32, wp.float64):
        assert (((("x", t),), t)) in [_signature(o) for o in overloads]
    assert _signature(overloads[-1]) == ((("x", wp.Float),), None)
    assert repr(next(o for o in overloads if o.value_type is wp.float32)) == "<Function sin(x: float32)>"


def test_overloads_use_warps_parameter_names():
    atan2 = next(o for o in wp.atan2.overloads if o.value_type is wp.float64)
    assert atan2.input_types == {"y": wp.float64, "x": wp.float64}
    clamp = next(o for o in wp.clamp.overloads if o.value_type is wp.int32)
    assert clamp.input_types == {"x": wp.int32, "low": wp.int32, "high": wp.int32}
    assert wp.where.overloads[0].input_types["cond"] is typing.Any


def test_integer_builtins_list_integer_overloads_and_comparisons_return_bool():
    assert {o.value_type for o in wp.bit_count.overloads if o.value_type is not None} <= {wp.int32, wp.int64,
                                                                                          wp.int8, wp.int16,
                                                                                          wp.uint8, wp.uint16,
                                                                                          wp.uint32, wp.uint64}
    assert wp.min.overloads[0].input_types == {"a": wp.float16, "b": wp.float16}


def test_composite_overloads_are_generic():
    generic = [o for o in wp.min.overloads if o.value_type is None]
    vec_t = wp.types.vector(length=typing.Any, dtype=wp.Scalar)
    assert {"a": vec_t, "b": vec_t} in [o.input_types for o in generic]


def test_type_functions_are_builtins_with_warps_signatures():
    assert wp.quat_identity.key == "quat_identity" and wp.quat_identity.is_builtin()
    assert [_signature(o) for o in wp.quat_identity.overloads] == [((("dtype", wp.Float),), None)]
    assert [_signature(o) for o in wp.transform_identity.overloads] == [((("dtype", wp.Float),), None)]
    axis_angle = wp.quat_to_axis_angle.overloads
    assert _signature(axis_angle[1]) == ((("quat", wp.quatf),), (wp.vec3f, wp.float32))
    assert list(wp.transform_set_translation.overloads[2].input_types.items()) == [("xform", wp.transformd),
                                                                                  ("p", wp.vec3d)]
    assert list(wp.transform_set_rotation.overloads[0].input_types) == ["xform", "q"]


@pytest.mark.parametrize("builtin, expected", [(wp.quat_identity, (0, 0, 0, 1)),
                                               (wp.transform_identity, (0, 0, 0, 0, 0, 0, 1))])
def test_type_function_dtype_by_keyword_or_position(builtin, expected):
    for dtype in (wp.float16, wp.float32, wp.float64):
        for value in (builtin(dtype), builtin(dtype=dtype)):
            assert value._wp_scalar_type_ is dtype and tuple(float(x) for x in value) == expected
    for kwargs in ({}, {"dtype": None}, {"dtype": float}):
        assert builtin(**kwargs)._wp_scalar_type_ is wp.float32


def test_intrinsics_have_no_overload_table():
    with pytest.raises(AttributeError, match="wp.tid is an intrinsic of the kernel language"):
        wp.tid.overloads
