"""Writes into a member of an array element (Warp's "array slots": `a[i].x *= s`, `m[i][r] /= s`,
`h.values[i].p *= s`): what Warp 1.19 accepts and refuses, with its words (recorded from warp-lang)."""

import numpy as np
import pytest

import mlwarp as wp


@wp.struct
class Holder:
    values: wp.array(dtype=wp.vec3)


@wp.kernel(enable_backward=False)
def scale_component_forward_only(s: wp.array(dtype=float), dst: wp.array(dtype=wp.vec3)):
    dst[0].x *= s[0]
    dst[0].y /= s[0]


@wp.kernel
def scale_component(s: wp.array(dtype=float), dst: wp.array(dtype=wp.vec3)):
    dst[0].x *= s[0]


@wp.kernel
def scale_matrix_row(s: wp.array(dtype=float), dst: wp.array(dtype=wp.mat22)):
    dst[0][1] *= s[0]


@wp.kernel
def scale_struct_field_element(s: wp.array(dtype=float), h: Holder):
    h.values[0].y *= s[0]


@wp.kernel
def scale_view_element(s: wp.array(dtype=float), dst: wp.array2d(dtype=wp.vec3)):
    row = dst[0]
    row[0].z %= s[0]


@wp.kernel
def add_to_component(s: wp.array(dtype=float), dst: wp.array(dtype=wp.vec3)):
    dst[0].x += s[0]  # += and -= Warp does atomically, and differentiates


@wp.kernel
def scale_whole_element(s: wp.array(dtype=float), dst: wp.array(dtype=wp.vec3)):
    dst[0] *= s[0]  # the element itself, no member of it


@wp.kernel
def scale_local_copy(s: wp.array(dtype=float), dst: wp.array(dtype=wp.vec3)):
    v = dst[0]
    v.x *= s[0]
    dst[0] = v


@wp.kernel
def scale_int_component(s: wp.array(dtype=int), dst: wp.array(dtype=wp.vec3i)):
    dst[0].x *= s[0]  # no derivative: nothing to refuse


def test_member_augassign_runs_forward_only():
    dst = wp.array([[5.0, 6.0, 0.0]], dtype=wp.vec3)
    wp.launch(scale_component_forward_only, dim=1, inputs=[wp.array([2.0], dtype=float), dst])
    np.testing.assert_array_equal(dst.numpy(), [[10.0, 3.0, 0.0]])


SLOT_AUGASSIGN = ("Differentiable composite slot augmented assignments with this operator are not supported with "
                  "backward code generation enabled")


@pytest.mark.parametrize("kernel,dst", [
    (scale_component, lambda: wp.zeros(1, dtype=wp.vec3)),
    (scale_matrix_row, lambda: wp.zeros(1, dtype=wp.mat22)),
    (scale_struct_field_element, lambda: Holder(values=wp.zeros(1, dtype=wp.vec3))),
    (scale_view_element, lambda: wp.zeros((1, 1), dtype=wp.vec3)),
])
def test_differentiable_member_augassign_is_refused_with_backward(kernel, dst):
    with pytest.raises(wp.CompileError, match=SLOT_AUGASSIGN) as info:
        wp.launch(kernel, dim=1, inputs=[wp.array([2.0], dtype=float), dst()])
    assert "test_lang_slot_writes.py" in str(info.value)


def test_other_member_updates_compile_with_backward():
    s = wp.array([2.0], dtype=float)
    for kernel, expected in [(add_to_component, [7.0, 1.0, 0.0]), (scale_whole_element, [10.0, 2.0, 0.0]),
                             (scale_local_copy, [10.0, 1.0, 0.0])]:
        dst = wp.array([[5.0, 1.0, 0.0]], dtype=wp.vec3)
        wp.launch(kernel, dim=1, inputs=[s, dst])
        np.testing.assert_array_equal(dst.numpy(), [expected])
    dst = wp.array([[5, 1, 0]], dtype=wp.vec3i)
    wp.launch(scale_int_component, dim=1, inputs=[wp.array([3], dtype=int), dst])
    np.testing.assert_array_equal(dst.numpy(), [[15, 1, 0]])


@wp.kernel(module="unique")
def float_index_member_write(dst: wp.array(dtype=wp.vec3)):
    dst[0.0].x = 1.0


@wp.kernel(module="unique")
def float_index_member_augassign(dst: wp.array(dtype=wp.vec3), idx: wp.array(dtype=float)):
    dst[idx[0]].x += 1.0


@wp.kernel(module="unique")
def float_index_row_write(dst: wp.array(dtype=wp.mat22)):
    dst[0.0][0] = wp.vec2()


@wp.kernel(module="unique")
def float_index_read(dst: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    out[0] = dst[0.0].x


@pytest.mark.parametrize("kernel", [float_index_member_write, float_index_member_augassign, float_index_row_write])
def test_member_write_with_a_float_index_in_warps_words(kernel):
    with pytest.raises(TypeError, match="Array slot write indices must be integers or slices"):
        kernel.module.load("cpu")


def test_read_with_a_float_index_keeps_the_plain_words():
    with pytest.raises(TypeError, match="array indices must be integers, got float32"):
        float_index_read.module.load("cpu")
