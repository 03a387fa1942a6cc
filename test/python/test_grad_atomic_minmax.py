"""The adjoint of wp.atomic_min / wp.atomic_max (as Warp): the value's gradient is the element's gradient where
the value equals what the element holds after the launch (component-wise for vectors and matrices), 0 elsewhere."""
import numpy as np

import mlwarp as wp


@wp.kernel
def _minmax(out_min: wp.array(dtype=float), out_max: wp.array(dtype=wp.vec2), v: wp.array(dtype=float),
            w: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    wp.atomic_min(out_min, 0, v[i])
    wp.atomic_max(out_max, 0, w[i])


@wp.kernel
def _max_mat(out: wp.array(dtype=wp.mat22d), m: wp.array(dtype=wp.mat22d)):
    i = wp.tid()
    wp.atomic_max(out, 0, m[i])


def test_atomic_min_max_scalar_and_vector_gradients():
    v = wp.array([3.0, 1.0, 2.0], dtype=float, requires_grad=True)
    w = wp.array([[1.0, 5.0], [4.0, 2.0], [0.0, 0.0]], dtype=wp.vec2, requires_grad=True)
    mn = wp.array([100.0], dtype=float, requires_grad=True)
    mx = wp.array([[-100.0, -100.0]], dtype=wp.vec2, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_minmax, 3, inputs=[mn, mx, v, w])
    np.testing.assert_array_equal(mn.numpy(), [1.0])
    np.testing.assert_array_equal(mx.numpy(), [[4.0, 5.0]])
    mn.grad.fill_(2.0)
    mx.grad.fill_(3.0)
    tape.backward()
    # min is v[1]; max's x is w[1].x, its y w[0].y
    np.testing.assert_array_equal(v.grad.numpy(), [0.0, 2.0, 0.0])
    np.testing.assert_array_equal(w.grad.numpy(), [[0.0, 3.0], [3.0, 0.0], [0.0, 0.0]])


def test_atomic_max_matrix_gradient_and_nan():
    nan = float("nan")
    m = wp.array([[[1.0, 7.0], [nan, 0.0]], [[2.0, 6.0], [nan, -1.0]]], dtype=wp.mat22d, requires_grad=True)
    out = wp.array([[[nan, -9.0], [nan, -9.0]]], dtype=wp.mat22d, requires_grad=True)
    out.fill_(-9.0)
    tape = wp.Tape()
    with tape:
        wp.launch(_max_mat, 2, inputs=[out, m])
    got = out.numpy()[0]
    assert got[0, 0] == 2.0 and got[0, 1] == 7.0 and got[1, 1] == 0.0
    out.grad.fill_(1.0)
    tape.backward()
    g = m.grad.numpy()
    np.testing.assert_array_equal(g[0], [[0.0, 1.0], [1.0 if np.isnan(got[1, 0]) else 0.0, 1.0]])
    np.testing.assert_array_equal(g[1], [[1.0, 0.0], [1.0 if np.isnan(got[1, 0]) else 0.0, 0.0]])
