"""A @wp.func_grad custom adjoint defined in a factory, its parameters annotated with the factory's own type
parameter (`x: V`): the rewritten adjoint's zero of V resolves through the factory's scope. (No
`from __future__ import annotations` here: the factory's annotations must be evaluated types.)"""

import numpy as np

import mlwarp as wp


def _scaled(V, scale: float):
    """f(x) = scale * x on V, with a custom adjoint that reports 2 * scale (a closed form distinct from the
    automatic one, so the test sees which was used)."""

    @wp.func
    def scaled(x: V) -> V:
        return x * scale

    @wp.func_grad(scaled)
    def adj_scaled(x: V, adj_ret: V):
        wp.adjoint[x] += adj_ret * (2.0 * scale)

    return scaled


scaled3 = _scaled(wp.vec3, 3.0)
scaled2 = _scaled(wp.vec2, 0.5)


@wp.kernel
def apply_both(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec2), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.dot(scaled3(a[i]), wp.vec3(1.0, 2.0, 3.0)) + wp.dot(scaled2(b[i]), wp.vec2(4.0, 5.0))


def test_custom_adjoint_of_a_factory_type_parameter():
    a = wp.array(np.ones((2, 3), np.float32), dtype=wp.vec3, requires_grad=True)
    b = wp.array(np.ones((2, 2), np.float32), dtype=wp.vec2, requires_grad=True)
    out = wp.zeros(2, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(apply_both, 2, [a, b, out])
    np.testing.assert_allclose(out.numpy(), [3.0 * 6.0 + 0.5 * 9.0] * 2)
    tape.backward(grads={out: wp.ones(2, dtype=float)})
    # the custom adjoints: 2 * scale times the output weights
    np.testing.assert_allclose(a.grad.numpy(), [[6.0, 12.0, 18.0]] * 2)
    np.testing.assert_allclose(b.grad.numpy(), [[4.0, 5.0]] * 2)
