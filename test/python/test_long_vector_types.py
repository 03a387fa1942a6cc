"""Vectors and matrices of any length (`wp.types.vector(length=9, ...)`, `wp.types.matrix(shape=(9, 9), ...)`)
through the builtins Warp declares generic over length, and clients' subclasses of them: Warp compares
vector-like types by kind, shape and dtype, so Newton's `class vec9(wp.types.vector(9, wp.float32))` is the same
type as vector(9, float32) (its VBD solver passes `wp.outer(vec9, vec9)`, a 9x9 matrix, to a @wp.func taking its
`mat99` subclass). References are numpy's, in float64."""

import numpy as np
import pytest

import mlwarp as wp


class mat99(wp.types.matrix(shape=(9, 9), dtype=wp.float32)):
    pass


class vec9(wp.types.vector(length=9, dtype=wp.float32)):
    pass


vec9f = wp.types.vector(length=9, dtype=wp.float32)
mat99f = wp.types.matrix(shape=(9, 9), dtype=wp.float32)
mat93 = wp.types.matrix(shape=(9, 3), dtype=wp.float32)
mat39 = wp.types.matrix(shape=(3, 9), dtype=wp.float32)


@wp.func
def _weighted(v: vec9, H: mat99, m: float):
    return wp.dot(v, H * v) * m


@wp.kernel
def _vector_builtins(vs: wp.array(dtype=vec9f), ms: wp.array(dtype=mat99), out_v: wp.array(dtype=vec9),
                     out_m: wp.array(dtype=mat99f), out_s: wp.array(dtype=float), out_93: wp.array(dtype=mat93),
                     out_39: wp.array(dtype=mat39)):
    a = vs[0]
    b = vec9(vs[1])  # the subclass's constructor, from a vector(9)
    A = ms[0]
    B = ms[1]
    out_v[0] = a + b
    out_v[1] = a - b
    out_v[2] = A * a
    out_v[3] = b * A
    out_v[4] = wp.cw_mul(a, b)
    out_v[5] = wp.cw_div(a, b)
    out_v[6] = -a
    out_v[7] = wp.normalize(a)
    out_v[8] = wp.mul(A, b)
    out_v[9] = a / 2.0
    out_v[10] = wp.get_diag(A)
    out_v[11] = wp.min(a, b)
    out_v[12] = wp.max(a, b)
    out_v[13] = wp.abs(-a)
    out_m[0] = A + B
    out_m[1] = A - B
    out_m[2] = A * B
    out_m[3] = wp.transpose(A)
    out_m[4] = wp.outer(a, b)
    out_m[5] = 2.0 * wp.identity(n=9, dtype=float) + A * 0.5
    out_m[6] = wp.diag(a)
    out_m[7] = wp.cw_mul(A, B)
    out_m[8] = -A
    out_m[9] = A / 4.0
    out_s[0] = wp.dot(a, b)
    out_s[1] = wp.length(a)
    out_s[2] = wp.length_sq(b)
    out_s[3] = wp.trace(A)
    out_s[4] = wp.ddot(A, B)
    out_s[5] = wp.min(a)
    out_s[6] = wp.max(b)
    out_s[7] = float(wp.argmax(a))
    out_s[8] = float(wp.argmin(b))
    v3 = wp.vec3(1.0, 2.0, 3.0)
    out_93[0] = wp.outer(a, v3)
    c = wp.outer(a, v3) * wp.mat33(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)
    out_93[1] = c
    out_39[0] = wp.transpose(c)
    out_v[14] = c * v3
    out_s[9] = wp.dot(wp.transpose(c) * a, v3)
    # a @wp.func taking the subclasses, given the vector(9) and matrix(9, 9) that builtins return
    H = 2.0 * wp.identity(n=9, dtype=float) + 3.0 * wp.outer(a, a)
    out_s[10] = _weighted(a + b, H, 0.5)
    # one variable bound to the subclass in one branch and to vector(9) in the other
    w = vec9(a)
    if out_s[0] > 0.0:
        w = wp.cw_mul(a, a)
    out_v[15] = w


def test_length_generic_builtins_on_9_vectors_and_9x9_matrices():
    rng = np.random.default_rng(1)
    V = rng.uniform(0.5, 2.0, (2, 9)).astype(np.float32)
    M = rng.uniform(-1.0, 1.0, (2, 9, 9)).astype(np.float32)
    out_v, out_m, out_s = wp.zeros(16, dtype=vec9), wp.zeros(10, dtype=mat99f), wp.zeros(11, dtype=float)
    out_93, out_39 = wp.zeros(2, dtype=mat93), wp.zeros(1, dtype=mat39)
    wp.launch(_vector_builtins, dim=1, inputs=[wp.array(V, dtype=vec9f), wp.array(M, dtype=mat99), out_v, out_m,
                                                out_s, out_93, out_39])
    a, b = V.astype(np.float64)
    A, B = M.astype(np.float64)
    v3 = np.array([1.0, 2.0, 3.0])
    c = np.outer(a, v3) @ np.arange(1.0, 10.0).reshape(3, 3)
    H = 2.0 * np.eye(9) + 3.0 * np.outer(a, a)
    vectors = [a + b, a - b, A @ a, b @ A, a * b, a / b, -a, a / np.linalg.norm(a), A @ b, a / 2, np.diag(A),
               np.minimum(a, b), np.maximum(a, b), a, c @ v3, a * a]
    matrices = [A + B, A - B, A @ B, A.T, np.outer(a, b), 2 * np.eye(9) + 0.5 * A, np.diag(a), A * B, -A, A / 4]
    scalars = [a @ b, np.linalg.norm(a), b @ b, np.trace(A), np.sum(A * B), a.min(), b.max(), a.argmax(), b.argmin(),
               (c.T @ a) @ v3, 0.5 * (a + b) @ H @ (a + b)]
    np.testing.assert_allclose(out_v.numpy(), vectors, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(out_m.numpy(), matrices, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(out_s.numpy(), scalars, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(out_93.numpy(), [np.outer(a, v3), c], rtol=2e-6)
    np.testing.assert_allclose(out_39.numpy()[0], c.T, rtol=2e-6)


def test_subclass_is_its_vector_type():
    assert wp.types.types_equal(vec9, vec9f) and wp.types.types_equal(mat99, mat99f)
    assert not wp.types.types_equal(vec9, wp.types.vector(length=9, dtype=wp.float64))


@wp.func
def _takes_mat99(H: mat99):
    return H[0, 0]


def test_a_9x9_matrix_is_no_9_vector():
    @wp.kernel
    def bad(out: wp.array(dtype=float)):
        out[0] = _takes_mat99(wp.outer(wp.vec3(1.0, 2.0, 3.0), wp.vec3(1.0, 2.0, 3.0)))

    with pytest.raises(wp.errors.CompileTypeError, match=r"Couldn't find function overload for '_takes_mat99' "
                                                          r"that matched inputs with types: \[mat33f\]"):
        wp.launch(bad, dim=1, inputs=[wp.zeros(1, dtype=float)])
