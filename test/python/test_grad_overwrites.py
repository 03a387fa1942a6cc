"""Gradients through arrays that a recorded launch overwrites: each adjoint reads the values its forward launch
read (the Tape saves the overwritten ones: python/mlwarp/autodiff/overwrites.py), so the gradients are those of the forward
computation. References: closed forms, or central differences of a numpy forward. (Warp 1.19 reads the
overwritten values and gets several of these wrong: 8 instead of -4 in the first test.)"""

import numpy as np
import pytest

import mlwarp as wp

f64 = wp.float64


@wp.kernel
def copy_k(x: wp.array(dtype=f64), a: wp.array(dtype=f64)):
    i = wp.tid()
    a[i] = x[i]


@wp.kernel
def square_k(a: wp.array(dtype=f64)):
    i = wp.tid()
    a[i] = a[i] * a[i]


@wp.kernel
def sin_k(a: wp.array(dtype=f64)):
    i = wp.tid()
    a[i] = wp.sin(a[i]) * f64(3.0)


@wp.kernel
def sum_k(a: wp.array(dtype=f64), l: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_add(l, 0, a[i])


@wp.kernel
def weighted_k(a: wp.array(dtype=f64), w: wp.array(dtype=f64), l: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_add(l, 0, a[i] * a[i] * w[i])


def _fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for k in range(x.size):
        d = np.zeros_like(x)
        d.flat[k] = eps
        g.flat[k] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def _arr(values):
    return wp.array(values, dtype=f64, requires_grad=True)


def test_a_kernel_that_squares_its_array_in_place():
    x, a, l = _arr([-2.0]), wp.zeros(1, dtype=f64, requires_grad=True), wp.zeros(1, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(copy_k, 1, inputs=[x, a])
        wp.launch(square_k, 1, inputs=[a])
        wp.launch(sum_k, 1, inputs=[a, l])
    tape.backward(l)
    assert x.grad.numpy().tolist() == [-4.0]  # d(x^2)/dx
    assert a.numpy().tolist() == [4.0]  # the forward values are back after backward()
    tape.zero()
    tape.backward(l)  # again: the saved values were put back too
    assert x.grad.numpy().tolist() == [-4.0]


def test_several_kernels_in_a_row_overwrite_the_same_array():
    x0 = np.array([0.3, -1.2, 0.7])
    x, a = _arr(x0), wp.zeros(3, dtype=f64, requires_grad=True)
    w = _arr([1.0, 2.0, -0.5])
    l = wp.zeros(1, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(copy_k, 3, inputs=[x, a])
        wp.launch(square_k, 3, inputs=[a])
        wp.launch(sin_k, 3, inputs=[a])
        wp.launch(square_k, 3, inputs=[a])
        wp.launch(weighted_k, 3, inputs=[a, w, l])
    tape.backward(l)

    def forward(xv, wv=w.numpy()):
        v = (3.0 * np.sin(xv * xv)) ** 2
        return np.sum(v * v * wv)

    np.testing.assert_allclose(x.grad.numpy(), _fd(forward, x0), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), (3.0 * np.sin(x0 * x0)) ** 4, rtol=1e-12)
    np.testing.assert_allclose(l.numpy(), [forward(x0)], rtol=1e-12)


@wp.kernel
def square_rows_k(a: wp.array(dtype=f64)):
    i = wp.tid()
    a[i] = a[i] * a[i] + a[i]


@wp.kernel
def sum2d_k(a: wp.array2d(dtype=f64), l: wp.array(dtype=f64)):
    i, j = wp.tid()
    wp.atomic_add(l, 0, a[i, j] * f64(i + 1))


def test_a_kernel_overwriting_a_view_of_an_array_another_kernel_reads():
    x0 = np.array([[0.5, -1.5], [2.0, 0.25]])
    a = _arr(x0)
    l = wp.zeros(1, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square_rows_k, 2, inputs=[a[1]])  # the second row only
        wp.launch(sum2d_k, (2, 2), inputs=[a, l])
    tape.backward(l)
    expected = np.array([[1.0, 1.0], [2.0 * (2.0 * x0[1, 0] + 1.0), 2.0 * (2.0 * x0[1, 1] + 1.0)]])
    np.testing.assert_allclose(a.grad.numpy(), expected, rtol=1e-12)


@wp.struct
class Holder:
    values: wp.array(dtype=f64)


@wp.kernel
def square_field_k(h: Holder):
    i = wp.tid()
    h.values[i] = h.values[i] * h.values[i] * h.values[i]


def test_a_struct_array_field_overwritten_in_place():
    x0 = np.array([0.5, -2.0])
    x, a = _arr(x0), wp.zeros(2, dtype=f64, requires_grad=True)
    h = Holder()
    h.values = a
    l = wp.zeros(1, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(copy_k, 2, inputs=[x, a])
        wp.launch(square_field_k, 2, inputs=[h])
        wp.launch(sum_k, 2, inputs=[a, l])
    tape.backward(l)
    np.testing.assert_allclose(x.grad.numpy(), 3.0 * x0 ** 2, rtol=1e-12)


@wp.kernel
def scale_vec_k(v: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v[i] = v[i] * wp.length(v[i])


@wp.kernel
def vec_loss_k(v: wp.array(dtype=wp.vec3d), l: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_add(l, 0, wp.dot(v[i], wp.vec3d(f64(1.0), f64(-2.0), f64(0.5))))


@wp.kernel
def mat_k(m: wp.array(dtype=wp.mat22d)):
    i = wp.tid()
    m[i] = m[i] * m[i]


@wp.kernel
def mat_loss_k(m: wp.array(dtype=wp.mat22d), l: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_add(l, 0, m[i][0, 1] + f64(2.0) * m[i][1, 0] + m[i][1, 1])


def test_vector_and_matrix_elements_overwritten_in_place():
    v0 = np.array([[0.3, -1.0, 2.0]])
    v = wp.array(v0, dtype=wp.vec3d, requires_grad=True)
    l = wp.zeros(1, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scale_vec_k, 1, inputs=[v])
        wp.launch(vec_loss_k, 1, inputs=[v, l])
    tape.backward(l)
    c = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(v.grad.numpy()[0], _fd(lambda p: np.dot(p * np.linalg.norm(p), c), v0[0]), rtol=1e-6)

    m0 = np.array([[[0.5, -1.0], [2.0, 0.25]]])
    m = wp.array(m0, dtype=wp.mat22d, requires_grad=True)
    l = wp.zeros(1, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(mat_k, 1, inputs=[m])
        wp.launch(mat_loss_k, 1, inputs=[m, l])
    tape.backward(l)

    def mat_loss(p):
        q = p.reshape(2, 2) @ p.reshape(2, 2)
        return q[0, 1] + 2.0 * q[1, 0] + q[1, 1]

    np.testing.assert_allclose(m.grad.numpy()[0], _fd(mat_loss, m0[0].ravel()).reshape(2, 2), rtol=1e-6)


@wp.kernel
def product_k(x: wp.array(dtype=f64), b: wp.array(dtype=f64), l: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_add(l, 0, x[i] * x[i] * b[i])


@pytest.mark.parametrize("how", ["copy", "assign_array", "assign_numpy", "fill", "zero"])
def test_an_array_a_launch_read_overwritten_by_copy_assign_fill_or_zero(how):
    x0, b0 = np.array([1.5, -0.5]), np.array([2.0, 3.0])
    x, b = _arr(x0), wp.array(b0, dtype=f64)  # b has no gradient: its values still matter to x's
    c = wp.array([7.0, 9.0], dtype=f64)
    l = wp.zeros(1, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(product_k, 2, inputs=[x, b, l])
        {"copy": lambda: wp.copy(b, c), "assign_array": lambda: b.assign(c),
         "assign_numpy": lambda: b.assign(np.array([7.0, 9.0])), "fill": lambda: b.fill_(7.0),
         "zero": lambda: b.zero_()}[how]()
    after = b.numpy().copy()
    tape.backward(l)
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * x0 * b0, rtol=1e-12)
    assert b.numpy().tolist() == after.tolist()


def test_a_copy_between_two_in_place_kernels_with_gradients_through_it():
    x0 = np.array([0.4, -1.1])
    x = _arr(x0)
    a, b = wp.zeros(2, dtype=f64, requires_grad=True), wp.zeros(2, dtype=f64, requires_grad=True)
    l = wp.zeros(1, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(copy_k, 2, inputs=[x, a])
        wp.launch(square_k, 2, inputs=[a])
        wp.copy(b, a)
        wp.launch(sin_k, 2, inputs=[b])
        wp.launch(square_k, 2, inputs=[b])
        wp.launch(weighted_k, 2, inputs=[b, a, l])  # sum b^2 a: both paths
    tape.backward(l)

    def forward(v):
        a_ = v * v
        b_ = (3.0 * np.sin(a_)) ** 2
        return np.sum(b_ * b_ * a_)

    np.testing.assert_allclose(x.grad.numpy(), _fd(forward, x0), rtol=1e-6)


@wp.kernel
def square_into_k(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = x[i] * x[i]


def test_the_same_array_passed_as_input_and_output():
    x0 = np.array([1.5, -3.0])
    x, a = _arr(x0), wp.zeros(2, dtype=f64, requires_grad=True)
    l = wp.zeros(1, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(copy_k, 2, inputs=[x, a])
        wp.launch(square_into_k, 2, inputs=[a, a])
        wp.launch(sum_k, 2, inputs=[a, l])
    tape.backward(l)
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * x0, rtol=1e-12)


@wp.kernel
def through_scratch_k(x: wp.array(dtype=f64), t: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    t[i] = x[i] * f64(2.0)
    y[i] = t[i] * t[i]  # reads what it just wrote: its adjoint needs t after the launch


@wp.kernel
def zero_k(t: wp.array(dtype=f64)):
    i = wp.tid()
    t[i] = f64(0.0)


def test_a_kernel_reading_what_it_wrote_then_an_overwrite():
    x0 = np.array([0.5, -2.0])
    x = _arr(x0)
    t, y = wp.zeros(2, dtype=f64, requires_grad=True), wp.zeros(2, dtype=f64, requires_grad=True)
    l = wp.zeros(1, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(through_scratch_k, 2, inputs=[x, t, y])
        wp.launch(zero_k, 2, inputs=[t])
        wp.launch(sum_k, 2, inputs=[y, l])
    tape.backward(l)
    np.testing.assert_allclose(x.grad.numpy(), 8.0 * x0, rtol=1e-12)


@wp.kernel
def axpy_k(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = x[i] * f64(2.0)


def test_launches_that_overwrite_nothing_read_save_nothing():
    x, y = _arr([1.0, 2.0]), wp.zeros(2, dtype=f64, requires_grad=True)
    l = wp.zeros(1, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(axpy_k, 2, inputs=[x, y])
        wp.launch(sum_k, 2, inputs=[y, l])
    assert tape._overwrites.saved == {}
    tape.backward(l)
    assert x.grad.numpy().tolist() == [2.0, 2.0]
    tape.reset()
    assert tape._overwrites.read_spans == []


def test_the_compiler_reports_what_a_kernel_reads_before_and_after_writing():
    cpu = wp.get_device("cpu")

    def access(k):
        return k.compiled(cpu).meta["array_access"]

    assert access(square_k) == {"reads_first": [[0]], "reads_after": [], "writes": [[0]]}
    assert access(through_scratch_k) == {"reads_first": [[0]], "reads_after": [[1]], "writes": [[1], [2]]}
    assert access(square_field_k) == {"reads_first": [[0, 0]], "reads_after": [], "writes": [[0, 0]]}
    assert access(axpy_k) == {"reads_first": [[0]], "reads_after": [], "writes": [[1]]}


@wp.kernel
def add_then_square(y: wp.array(dtype=wp.vec2), x: wp.array(dtype=float), out: wp.array(dtype=float)):
    y[0].x += x[0]
    out[0] = y[0].x * y[0].x


def test_a_launch_reading_what_it_wrote_keeps_the_values_after_it():
    # out = (y + x)^2: d out / dx = 2 (y + x) = 10 for y = 2, x = 3; the replay must read y after the += (a saved
    # pre-launch y would give 4)
    y = wp.array(np.array([[2.0, 0.0]], np.float32), dtype=wp.vec2, requires_grad=True)
    x = wp.array(np.array([3.0], np.float32), requires_grad=True)
    out = wp.zeros(1, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(add_then_square, 1, inputs=[y, x, out])
    tape.backward(grads={out: wp.ones(1)})
    np.testing.assert_allclose(x.grad.numpy(), [10.0])
    np.testing.assert_allclose(y.numpy()[0], [5.0, 0.0])
