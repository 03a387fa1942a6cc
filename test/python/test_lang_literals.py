"""Literals in scalar constructors, constant indices and members of computed values, as Warp 1.19 reads
them (values checked by hand and against Warp on the CPU): a signed literal is one constant of the target
type (`wp.float64(-0.3)` never rounds through float32), integer literals wrap to narrow types, float
literals truncate toward zero, a negative constant index counts from the end, and `.x` / `[i]` apply to any
computed composite (`(v + v).x`, `(-m)[0]`)."""

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def float64_literals(out: wp.array(dtype=wp.float64)):
    out[0] = wp.float64(-0.3)
    out[1] = wp.float64(-1.0e300)
    out[2] = wp.float64(+2.5)
    out[3] = wp.float64(-(-0.1))
    out[4] = wp.float64(1.0e-310)  # a float64 subnormal: zero in float32


def test_signed_float64_literals_keep_float64_precision():
    out = wp.zeros(5, dtype=wp.float64)
    wp.launch(float64_literals, dim=1, inputs=[out])
    assert out.numpy().tolist() == [-0.3, -1.0e300, 2.5, 0.1, 1.0e-310]


@wp.kernel
def narrow_int_literals(out: wp.array(dtype=int)):
    out[0] = int(wp.int8(300))
    out[1] = int(wp.uint8(-1))
    out[2] = int(wp.int16(70000))
    out[3] = int(wp.int8(3.7))
    out[4] = int(wp.int8(-3.7))
    out[5] = int(wp.uint16(-70000))
    out[6] = int(wp.int8(-129))


def test_integer_literals_wrap_and_float_literals_truncate():
    out = wp.zeros(7, dtype=int)
    wp.launch(narrow_int_literals, dim=1, inputs=[out])
    # 300 - 256, 255, 70000 - 65536, trunc(3.7), trunc(-3.7), (-70000) mod 65536, -129 + 256
    assert out.numpy().tolist() == [44, 255, 4464, 3, -3, 61072, 127]


def test_a_non_finite_float_literal_for_an_int_type_is_a_clear_error():
    @wp.kernel
    def inf_to_int(out: wp.array(dtype=int)):
        out[0] = int(wp.int32(1.0e400))

    with pytest.raises(wp.WarpCodegenError, match=r"test_lang_literals\.py:\d+: .*int32\(inf\) has no integer value"):
        wp.launch(inf_to_int, dim=1, inputs=[wp.zeros(1, dtype=int)])


@wp.kernel
def negative_constant_indices(out: wp.array(dtype=float)):
    v = wp.vec3(1.0, 2.0, 3.0)
    m = wp.mat22(1.0, 2.0, 3.0, 4.0)
    q = wp.quat(0.1, 0.2, 0.3, 0.4)
    out[0] = v[-1]
    out[1] = v[-3]
    out[2] = m[-1, -2]
    out[3] = m[-2][1]
    out[4] = q[-1]
    v[-2] = 7.0
    out[5] = v[1]


def test_negative_constant_indices_count_from_the_end():
    out = wp.zeros(6, dtype=float)
    wp.launch(negative_constant_indices, dim=1, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), np.float32([3.0, 1.0, 3.0, 2.0, 0.4, 7.0]))


def test_a_constant_index_past_either_end_is_a_clear_error():
    @wp.kernel
    def past_the_start(out: wp.array(dtype=float)):
        v = wp.vec3(1.0, 2.0, 3.0)
        out[0] = v[-4]

    with pytest.raises(wp.WarpCodegenError, match=r"test_lang_literals\.py:\d+: .*index -4 out of range for 3 "
                                                  r"components"):
        wp.launch(past_the_start, dim=1, inputs=[wp.zeros(1, dtype=float)])


@wp.kernel
def members_of_expressions(out: wp.array(dtype=float)):
    v = wp.vec3(1.0, 2.0, 3.0)
    m = wp.mat22(1.0, 2.0, 3.0, 4.0)
    out[0] = (v + v).x
    out[1] = (-m)[0][1]
    out[2] = (m * 2.0)[1, 0]
    out[3] = wp.cross(v, v + wp.vec3(1.0))[1]
    out[4] = (wp.transpose(m))[0, 1]
    out[5] = (v * 3.0)[-1]


def test_members_of_computed_values():
    out = wp.zeros(6, dtype=float)
    wp.launch(members_of_expressions, dim=1, inputs=[out])
    cross = np.cross([1.0, 2.0, 3.0], [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(out.numpy(), np.float32([2.0, -2.0, 6.0, cross[1], 3.0, 9.0]))
