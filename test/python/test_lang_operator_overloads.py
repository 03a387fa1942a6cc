"""A @wp.func named like an operator's builtin (`add`, `mul`) overloads that operator for its argument types in
the kernels that see it (as in Warp): `a + b`, `a += b` and composite slot updates (`v[0].x += b`) call it."""

import numpy as np

import mlwarp as wp


@wp.func
def add(x: wp.float32, y: wp.float32) -> wp.float32:
    return wp.sub(x, y)  # deliberately not addition, so the test sees which one ran


@wp.func
def mul(x: wp.int32, y: wp.int32) -> wp.int32:
    return x * y + 1  # its own `*` is the builtin (no recursion into itself)


@wp.kernel(enable_backward=False)
def uses_operators(values: wp.array(dtype=float), vecs: wp.array(dtype=wp.vec3), ints: wp.array(dtype=int),
                   rhs: float):
    values[1] = values[0] + rhs
    x = values[0]
    x += rhs
    values[2] = x
    vecs[0].x += rhs
    vecs[0][1] += rhs
    ints[0] = ints[1] * 3
    ints[2] = ints[1] + 3  # no int overload of add: the builtin


def test_user_functions_overload_operators_for_their_types():
    values = wp.array([3.0, 0.0, 0.0], dtype=float)
    vecs = wp.array([wp.vec3(3.0)], dtype=wp.vec3)
    ints = wp.array([0, 4, 0], dtype=int)
    wp.launch(uses_operators, 1, inputs=[values, vecs, ints, 2.0])
    np.testing.assert_array_equal(values.numpy(), [3.0, 1.0, 1.0])
    np.testing.assert_array_equal(vecs.numpy(), [[1.0, 1.0, 3.0]])
    np.testing.assert_array_equal(ints.numpy(), [4 * 3 + 1, 4, 7])
