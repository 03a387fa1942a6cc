"""Slices of vectors, quaternions and matrices in kernels, as Warp: constant bounds with Python's rules
(negative, out of range, negative steps), reads give a vector (one sliced dimension) or a matrix (two),
writes and in-place operators replace the selected components, gradients flow through both; Warp's
ValueError messages for values that do not fit."""

import re

import numpy as np
import pytest

import mlwarp as wp

vec1 = wp.types.vector(1, float)
vec2 = wp.types.vector(2, float)
vec3 = wp.types.vector(3, float)


@wp.kernel
def slice_values(out: wp.array(dtype=float)):
    v = wp.vec4(1.0, 2.0, 3.0, 4.0)
    r = v[::-2]  # (4, 2)
    s = v[-123:123]  # all four
    t = v[1::-2]  # (2,)
    v[::-2] = vec2(23.0, 24.0)  # v = (1, 24, 3, 23)
    v[1:] += vec3(26.0, 27.0, 28.0)  # (1, 50, 30, 51)
    m = wp.mat33(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)
    sub = m[1:, ::2]  # [[4, 6], [7, 9]]
    row = m[0, :2]  # (1, 2)
    col = m[:2, 1]  # (2, 5)
    m[0, :2] = wp.vec2(-1.0, -2.0)
    m[1:, 2] = wp.vec2(-6.0, -9.0)
    q = wp.quat(1.0, 2.0, 3.0, 4.0)
    q[2:] = wp.vec2(7.0, 8.0)
    vals = wp.vec4(r[0], r[1], s[3], t[0])
    for k in range(4):
        out[k] = vals[k]
        out[4 + k] = v[k]
    out[8] = sub[0, 0] * 1000.0 + sub[0, 1] * 100.0 + sub[1, 0] * 10.0 + sub[1, 1]
    out[9] = row[0] * 10.0 + row[1]
    out[10] = col[0] * 10.0 + col[1]
    out[11] = m[0, 0] + m[0, 1] * 10.0 + m[1, 2] * 100.0 + m[2, 2] * 1000.0 + m[2, 0]
    out[12] = q[0] + q[1] * 10.0 + q[2] * 100.0 + q[3] * 1000.0


def test_slice_reads_and_writes():
    out = wp.zeros(13)
    wp.launch(slice_values, 1, [out])
    np.testing.assert_array_equal(out.numpy(), [4, 2, 4, 2, 1, 50, 30, 51, 4000 + 600 + 70 + 9, 12, 25,
                                                -1 - 20 - 600 - 9000 + 7, 1 + 20 + 700 + 8000])


@wp.kernel
def slice_grads(arr_x: wp.array(dtype=wp.vec2), arr_y: wp.array(dtype=wp.vec4), arr_m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    y = arr_y[i]
    y[:2] = arr_x[i]
    y[1:-1] += arr_x[i][:2]
    y[3:1:-1] -= arr_x[i][0:]
    arr_y[i] = y
    z = wp.mat33()
    z[0, :2] = arr_x[i] * 2.0
    z[1:, 1] = arr_x[i][::-1] * 3.0
    arr_m[i] = z


def test_slice_gradients():
    # x = (1, 2): y = (x0, x1 + x0, x1 - x1, -x0) = (1, 3, 0, -1): d sum(y)/dx = (1 + 1 - 1, 1 + 1 - 1) = (1, 1);
    # z row 0 = 2x, z[1:, 1] = 3 (x1, x0): d sum(z)/dx = (2 + 3, 2 + 3) = (5, 5); total (6, 6)
    x = wp.array([[1.0, 2.0]], dtype=wp.vec2, requires_grad=True)
    y = wp.zeros(1, dtype=wp.vec4, requires_grad=True)
    m = wp.zeros(1, dtype=wp.mat33, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(slice_grads, 1, inputs=[x], outputs=[y, m])
    y.grad = wp.ones_like(y)
    m.grad = wp.ones_like(m)
    tape.backward()
    np.testing.assert_array_equal(y.numpy(), [[1, 3, 0, -1]])
    np.testing.assert_array_equal(m.numpy(), [[[2, 4, 0], [0, 6, 0], [0, 3, 0]]])
    np.testing.assert_array_equal(x.grad.numpy(), [[6, 6]])


def _k_dtype():
    v = wp.vec4(1.0, 2.0, 3.0, 4.0)
    v[1:] = wp.vec3d(5.0, 6.0, 7.0)


def _k_scalar():
    v = wp.vec4(1.0, 2.0, 3.0, 4.0)
    v[1:] = wp.float64(5.0)


def _k_length():
    v = wp.vec4(1.0, 2.0, 3.0, 4.0)
    v[1:] = wp.vec2(5.0, 6.0)


def _k_mat_shape():
    m = wp.mat33()
    m[1:, 1:] = wp.mat33()


def _k_step_zero():
    v = wp.vec4(1.0, 2.0, 3.0, 4.0)
    w = v[::0]


def _k_bound_set_in_a_branch(flag: int):
    stop = 3
    if flag > 0:
        stop = 2
    w = wp.vec3(4.0, 5.0, 6.0)[0:stop]


@wp.kernel
def local_constant_bounds(out: wp.array(dtype=float)):
    stop = 3
    start = -2
    v = wp.vec4(4.0, 5.0, 6.0, 7.0)
    head = v[0:stop]
    tail = v[start:]
    out[0] = head[2] + 10.0 * tail[0]


def test_slice_bounds_from_local_constants():
    # Warp's rule: a local bound to a constant is a compile-time integer where a literal is; one a branch may
    # change is not (below)
    out = wp.zeros(1, dtype=float)
    wp.launch(local_constant_bounds, 1, inputs=[out])
    assert out.numpy()[0] == 6.0 + 10.0 * 6.0
    with pytest.raises(wp.CompileError, match=r"the `slice` argument must be a constant integer"):
        wp.launch(wp.kernel(_k_bound_set_in_a_branch), 1, [1])


@pytest.mark.parametrize("func,cls,message", [
    (_k_dtype, ValueError, r"The provided vector is expected to be of length 3 with dtype float32."),
    (_k_scalar, ValueError, r"The provided value is expected to be a vector of length 3, with dtype float32."),
    (_k_length, ValueError, r"The length of the provided vector \(2\) isn't compatible with the given slice "
                            r"\(expected 3\)."),
    (_k_mat_shape, ValueError, r"The shape of the provided matrix \(\(3, 3\)\) isn't compatible with the given slice "
                               r"\(expected \(2, 2\)\)."),
    (_k_step_zero, wp.CompileError, "slice step cannot be zero"),
])
def test_slice_errors(func, cls, message):
    with pytest.raises(cls) as info:
        wp.launch(wp.kernel(func), 1, [])
    assert isinstance(info.value, wp.CompileError)
    assert re.search(message + "$", str(info.value)), str(info.value)


mat23 = wp.types.matrix((2, 3), float)


@wp.kernel
def overwritten_slices(arr_x: wp.array(dtype=wp.vec2), arr_y: wp.array(dtype=mat23), arr_z: wp.array(dtype=wp.mat44)):
    z = arr_z[0]
    z[0, :2] = arr_x[0]
    z[:2, 1:] = arr_y[0]  # overwrites z[0, 1] = x[1]
    z[:2, 3] += arr_x[0][:2]
    z[1:-1, :2] += arr_y[0][::-1, :-1]
    z[2:, 3] -= arr_x[0][0:]
    z[3:, -1:] -= arr_y[0][:1, :1]
    arr_z[0] = z


def test_gradients_skip_overwritten_slice_components():
    # by hand: x0 reaches z00, z03 (+) and z23 (-): 1; x1 reaches z13 (+) and z33 (-), its z01 is overwritten: 0;
    # y00: z01, z20, -z33 -> 1; y01: z02, z21 -> 2; y02: z03 -> 1; y10: z11, z10 -> 2; y11: z12, z11 -> 2; y12: 1
    x, y = wp.ones(1, dtype=wp.vec2, requires_grad=True), wp.ones(1, dtype=mat23, requires_grad=True)
    z = wp.zeros(1, dtype=wp.mat44, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(overwritten_slices, 1, inputs=[x, y], outputs=[z])
    z.grad = wp.ones_like(z)
    tape.backward()
    np.testing.assert_array_equal(z.numpy(), [[[1, 1, 1, 2], [1, 2, 1, 2], [1, 1, 0, -1], [0, 0, 0, -2]]])
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 0]])
    np.testing.assert_array_equal(y.grad.numpy(), [[[1, 2, 1], [2, 2, 1]]])


_vec0 = wp.types.vector(0, float)
_mat00 = wp.types.matrix((0, 0), float)


@wp.func
def _empty_selections(v: wp.vec4, q: wp.quat, m: wp.mat44) -> int:
    same = int(v[123:] == _vec0()) + int(v[:-123] == _vec0()) + int(q[123:] == _vec0()) + int(v[3:1] == _vec0())
    same += int(m[123:] == _mat00()) + int(m[:, 5:] == _mat00()) + int(m[1:1, 2:] == _mat00())
    v[2:2] = _vec0()  # assigning nothing changes nothing
    return same + len(v[4:]) + len(m[9:]) + int(v == wp.vec4(1.0, 2.0, 3.0, 4.0))


@wp.kernel
def _empty_selections_kernel(out: wp.array(dtype=int)):
    out[0] = _empty_selections(wp.vec4(1.0, 2.0, 3.0, 4.0), wp.quat(1.0, 2.0, 3.0, 4.0), wp.mat44(0.0))


def test_empty_slices_are_zero_length_composites():
    """Warp's rule: a slice that selects nothing is a zero-length vector, or a (0, 0) matrix whichever dimension
    is empty; all of them equal the empty constructor's value (7 comparisons true, lengths 0, v unchanged)."""
    out = wp.zeros(1, dtype=int)
    wp.launch(_empty_selections_kernel, 1, inputs=[out])
    assert out.numpy()[0] == 8
    assert _empty_selections(wp.vec4(1.0, 2.0, 3.0, 4.0), wp.quat(1.0, 2.0, 3.0, 4.0), wp.mat44(0.0)) == 8
    assert wp.mat44()[:, 123:]._shape_ == (0, 0) and wp.mat44()[1:1, 2:]._shape_ == (0, 0)
