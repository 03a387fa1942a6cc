"""Components of vectors and matrices at run-time indices in kernels, including code a branch makes dead that,
once @wp.func calls are inlined and loops unrolled, indexes out of range with a constant (Newton 1.8's
`_axis(index)` in geometry/penetration.py). References: numpy and closed forms (identity rows)."""

import numpy as np

import mlwarp as wp


@wp.func
def unit_axis(index: int) -> wp.vec3:
    axis = wp.vec3(0.0)
    axis[index] = 1.0
    return axis


@wp.func
def axis_or_twos(index: int) -> wp.vec3:
    if index < 3:
        return unit_axis(index)
    return wp.vec3(2.0)


@wp.kernel
def unrolled_axes(out: wp.array(dtype=wp.vec3)):
    for i in range(5):  # unrolled: i is a constant in each copy, 3 and 4 only in the branch `index < 3` skips
        out[i] = axis_or_twos(i)


def test_guarded_out_of_range_constant_index_compiles_and_is_never_reached():
    out = wp.zeros(5, dtype=wp.vec3)
    wp.launch(unrolled_axes, dim=1, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), np.vstack([np.eye(3), np.full((2, 3), 2.0)]))


@wp.kernel
def read_write_at(m: wp.array(dtype=wp.mat33), idx: wp.array(dtype=int), rows: wp.array(dtype=wp.vec3),
                  out: wp.array(dtype=wp.vec4)):
    i = wp.tid()
    k = idx[i]
    v = wp.vec4(1.0, 2.0, 3.0, 4.0)
    v[k] = m[i][k, (k + 1) % 3]
    rows[i] = m[i][k]
    out[i] = v


def test_run_time_indices_in_range_read_and_write_the_component():
    rng = np.random.default_rng(3)
    m = rng.standard_normal((3, 3, 3)).astype(np.float32)
    idx = np.array([0, 2, 1], dtype=np.int32)
    rows, out = wp.zeros(3, dtype=wp.vec3), wp.zeros(3, dtype=wp.vec4)
    wp.launch(read_write_at, dim=3, inputs=[wp.array(m, dtype=wp.mat33), wp.array(idx, dtype=int), rows, out])
    expected = np.tile(np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32), (3, 1))
    for i, k in enumerate(idx):
        expected[i, k] = m[i, k, (k + 1) % 3]
    np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(rows.numpy(), m[np.arange(3), idx])
