"""wp.div_approx / wp.inverse_approx: Warp's approximate GPU variants, computed exactly (as Warp's CPU does)."""
import numpy as np

import mlwarp as wp


@wp.kernel
def _approx(a: wp.array(dtype=float), b: wp.array(dtype=float), q: wp.array(dtype=float),
            m: wp.array(dtype=wp.mat22), inv: wp.array(dtype=wp.mat22), v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    q[i] = wp.div_approx(a[i], b[i])
    inv[i] = wp.inverse_approx(m[i])
    v[i] = wp.div_approx(wp.vec3(1.0, 2.0, 3.0), b[i])


def test_div_and_inverse_approx_are_exact_with_gradients():
    a = wp.array([1.0, 3.0], dtype=float, requires_grad=True)
    b = wp.array([4.0, 2.0], dtype=float, requires_grad=True)
    q = wp.zeros(2, dtype=float, requires_grad=True)
    m = wp.array([[[2.0, 1.0], [0.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]], dtype=wp.mat22)
    inv, v = wp.zeros_like(m), wp.zeros(2, dtype=wp.vec3)
    tape = wp.Tape()
    with tape:
        wp.launch(_approx, 2, inputs=[a, b, q, m, inv, v])
    np.testing.assert_array_equal(q.numpy(), [0.25, 1.5])
    np.testing.assert_array_equal(inv.numpy(), [[[0.5, -0.125], [0.0, 0.25]], [[-2.0, 1.0], [1.5, -0.5]]])
    np.testing.assert_array_equal(v.numpy(), [[0.25, 0.5, 0.75], [0.5, 1.0, 1.5]])
    q.grad.fill_(1.0)
    tape.backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.25, 0.5])  # 1/b
    np.testing.assert_array_equal(b.grad.numpy(), [-1.0 / 16.0, -0.75])  # -a/b^2


def test_python_scope():
    assert wp.div_approx(3.0, 2.0) == 1.5
