"""`a[i]` of a k-d array inside a kernel is its (k-1)-d sub-array, as in Warp: `a[i][j]`, rows passed to a
@wp.func, `len(row)`, `row.shape`, writes and atomics through a row, rows carried by branches and loops,
bounds checks in debug mode, and gradients through rows. Also `len()` of vectors and matrices. Checked
against numpy and hand-computed values."""

import numpy as np
import pytest

import mlwarp as wp


@wp.func
def row_total(r: wp.array(dtype=float)):
    s = float(0.0)
    for j in range(len(r)):
        s += r[j]
    return s


@wp.kernel
def row_reads(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    row = a[i]
    out[i] = row_total(row) + a[i][1] * 100.0 + float(row.shape[0]) * 1000.0


def test_row_reads_func_len_and_shape():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = wp.zeros(3, dtype=float)
    wp.launch(row_reads, dim=3, inputs=[wp.array(a), out])
    np.testing.assert_array_equal(out.numpy(), a.sum(1) + a[:, 1] * 100 + 4000)


@wp.kernel
def plane_reads(b: wp.array3d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    plane = b[i]
    out[i] = plane[1, 2] + b[i, 0][1] + b[i][1][0] + float(plane.shape[1])


def test_views_of_a_3d_array():
    b = np.arange(3 * 2 * 3, dtype=np.float32).reshape(3, 2, 3)
    out = wp.zeros(3, dtype=float)
    wp.launch(plane_reads, dim=3, inputs=[wp.array(b), out])
    np.testing.assert_array_equal(out.numpy(), b[:, 1, 2] + b[:, 0, 1] + b[:, 1, 0] + 3)


@wp.kernel
def row_writes(out: wp.array2d(dtype=float)):
    i = wp.tid()
    row = out[i]
    row[0] = float(i)
    out[i][1] = float(len(row))
    wp.atomic_add(row, 2, 0.5)
    row[2] += 0.25
    out[i][2] -= 2.0


def test_writes_and_atomics_through_rows():
    out = wp.zeros((3, 3), dtype=float)
    wp.launch(row_writes, dim=3, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), [[0, 3, -1.25], [1, 3, -1.25], [2, 3, -1.25]])


@wp.kernel
def strided_rows(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i][0] + 10.0 * a[i][2]


def test_rows_of_a_strided_view():
    base = np.arange(40, dtype=np.float32).reshape(5, 8)
    src = wp.array(base)[1:4, ::3]  # rows 1..3, columns 0, 3, 6: non-contiguous
    out = wp.zeros(3, dtype=float)
    wp.launch(strided_rows, dim=3, inputs=[src, out])
    expected = base[1:4, ::3]
    np.testing.assert_array_equal(out.numpy(), expected[:, 0] + 10 * expected[:, 2])


@wp.kernel
def rows_carried(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    r = a[0]
    if i == 1:
        r = a[1]
    for j in range(2):
        if j == 1 and i == 2:
            r = a[2]
    out[i] = r[0]


def test_rows_merged_by_branches_and_carried_by_loops():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = wp.zeros(3, dtype=float)
    wp.launch(rows_carried, dim=3, inputs=[wp.array(a), out])
    np.testing.assert_array_equal(out.numpy(), [0.0, 4.0, 8.0])


@wp.kernel
def vec_rows(a: wp.array2d(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    row = a[i]
    out[i] = row[0] + row[1]
    row[1] = wp.vec3(-1.0)


def test_rows_of_a_vector_array():
    a = np.arange(2 * 2 * 3, dtype=np.float32).reshape(2, 2, 3)
    arr = wp.array(a, dtype=wp.vec3)
    out = wp.zeros(2, dtype=wp.vec3)
    wp.launch(vec_rows, dim=2, inputs=[arr, out])
    np.testing.assert_array_equal(out.numpy(), a[:, 0] + a[:, 1])
    np.testing.assert_array_equal(arr.numpy()[:, 1], -np.ones((2, 3)))


@wp.kernel
def lengths(a: wp.array2d(dtype=float), out: wp.array(dtype=int)):
    out[0] = len(a[0])
    out[1] = len(wp.vec3())
    out[2] = len(wp.mat33())
    out[3] = len(wp.quat())
    out[4] = len(wp.transform())
    out[5] = len(a)
    out[6] = len(wp.mat22d())


def test_len_of_arrays_rows_and_composites():
    out = wp.zeros(7, dtype=int)
    wp.launch(lengths, dim=1, inputs=[wp.zeros((3, 4), dtype=float), out])
    np.testing.assert_array_equal(out.numpy(), [4, 3, 3, 4, 7, 3, 2])


def test_len_of_a_scalar_is_a_clear_error():
    @wp.kernel
    def bad_len(x: float, out: wp.array(dtype=int)):
        out[0] = len(x)

    with pytest.raises(wp.WarpCodegenTypeError, match=r"test_array_views\.py:\d+: .*len\(\) takes an array, a "
                                                     r"tuple, a vector, a quaternion or a matrix, not a float32"):
        wp.launch(bad_len, dim=1, inputs=[1.0, wp.zeros(1, dtype=int)])


def test_storing_to_a_row_is_a_clear_error():
    @wp.kernel
    def store_row(a: wp.array2d(dtype=float)):
        a[0] = 1.0

    with pytest.raises(wp.WarpCodegenError, match=r"test_array_views\.py:\d+: .*a 2-d array needs 2 indices, got 1"):
        wp.launch(store_row, dim=1, inputs=[wp.zeros((2, 2), dtype=float)])


def test_out_of_range_row_in_debug_mode_names_the_line(monkeypatch):
    monkeypatch.setattr(wp.config, "mode", "debug")

    @wp.kernel
    def past_the_end(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        r = a[i + 1]
        out[i] = r[0]

    out = wp.zeros(3, dtype=float)
    with pytest.raises(wp.KernelBoundsError, match=r"test_array_views\.py:\d+:\d+: kernel 'past_the_end': index "
                                                   r"\[3\] is out of bounds addressing argument 'a'"):
        wp.launch(past_the_end, dim=3, inputs=[wp.zeros((3, 4), dtype=float), out])


@wp.func
def row_squares(r: wp.array(dtype=wp.float64)):
    s = wp.float64(0.0)
    for j in range(len(r)):
        s += r[j] * r[j]
    return s


@wp.kernel
def row_energy(a: wp.array2d(dtype=wp.float64), out: wp.array(dtype=wp.float64), rows: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    out[i] = row_squares(a[i]) + a[i][0] * wp.float64(3.0)
    r = rows[i]
    r[1] = a[i][2] * a[i][3]


def test_gradients_through_rows():
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (3, 4))
    A = wp.array(a, dtype=wp.float64, requires_grad=True)
    out = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    rows = wp.zeros((3, 2), dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(row_energy, dim=3, inputs=[A, out, rows])
    np.testing.assert_allclose(out.numpy(), (a * a).sum(1) + 3 * a[:, 0], rtol=1e-14)
    np.testing.assert_allclose(rows.numpy()[:, 1], a[:, 2] * a[:, 3], rtol=1e-14)
    seed_rows = np.zeros((3, 2))
    seed_rows[:, 1] = [1.0, 2.0, 3.0]
    tape.backward(grads={out: wp.ones(3, dtype=wp.float64), rows: wp.array(seed_rows, dtype=wp.float64)})
    expected = 2 * a
    expected[:, 0] += 3
    expected[:, 2] += seed_rows[:, 1] * a[:, 3]
    expected[:, 3] += seed_rows[:, 1] * a[:, 2]
    np.testing.assert_allclose(A.grad.numpy(), expected, rtol=1e-14)


def test_tangents_through_rows():
    rng = np.random.default_rng(4)
    a, da = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (3, 4))
    out, rows = wp.zeros(3, dtype=wp.float64), wp.zeros((3, 2), dtype=wp.float64)
    t_out, t_rows = wp.zeros(3, dtype=wp.float64), wp.zeros((3, 2), dtype=wp.float64)
    wp.jvp(row_energy, dim=3, inputs=[wp.array(a, dtype=wp.float64)], outputs=[out, rows],
           tan_inputs=[wp.array(da, dtype=wp.float64)], tan_outputs=[t_out, t_rows])
    np.testing.assert_allclose(t_out.numpy(), (2 * a * da).sum(1) + 3 * da[:, 0], rtol=1e-13)
    np.testing.assert_allclose(t_rows.numpy()[:, 1], da[:, 2] * a[:, 3] + a[:, 2] * da[:, 3], rtol=1e-13)
