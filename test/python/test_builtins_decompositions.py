"""wp.eig3, wp.qr3, wp.svd3, wp.svd2 (python/mlwarp/library/decompositions.py) against numpy.linalg: reconstruction,
orthogonality and determinant conventions, eigen/singular values against eigvalsh/svd (sign conventions:
only |sigma| and the sorted eigenvalues are compared), both call forms, float32 and float64, and
the gradients of the values against central differences of numpy's."""

import numpy as np
import pytest

import mlwarp as wp

TYPES = {np.float32: (wp.mat33f, wp.vec3f, wp.mat22f, wp.vec2f, 1e-5),
         np.float64: (wp.mat33d, wp.vec3d, wp.mat22d, wp.vec2d, 1e-12)}


def _kernels(m33, v3, m22, v2):
    @wp.kernel
    def decompose(A: wp.array(dtype=m33), B: wp.array(dtype=m22), Q: wp.array(dtype=m33), d: wp.array(dtype=v3),
                  U: wp.array(dtype=m33), S: wp.array(dtype=v3), V: wp.array(dtype=m33), QR_Q: wp.array(dtype=m33),
                  QR_R: wp.array(dtype=m33), U2: wp.array(dtype=m22), S2: wp.array(dtype=v2), V2: wp.array(dtype=m22)):
        i = wp.tid()
        a = A[i]
        q, dd = wp.eig3(a + wp.transpose(a))
        Q[i] = q
        d[i] = dd
        u, s, v = wp.svd3(a)
        U[i] = u
        S[i] = s
        V[i] = v
        qq, rr = wp.qr3(a)
        QR_Q[i] = qq
        QR_R[i] = rr
        u2, s2, v2_ = wp.svd2(B[i])
        U2[i] = u2
        S2[i] = s2
        V2[i] = v2_

    @wp.kernel
    def decompose_into(A: wp.array(dtype=m33), B: wp.array(dtype=m22), Q: wp.array(dtype=m33), d: wp.array(dtype=v3),
                       U: wp.array(dtype=m33), S: wp.array(dtype=v3), V: wp.array(dtype=m33),
                       QR_Q: wp.array(dtype=m33), QR_R: wp.array(dtype=m33), U2: wp.array(dtype=m22),
                       S2: wp.array(dtype=v2), V2: wp.array(dtype=m22)):
        i = wp.tid()
        a = A[i]
        q = m33()
        dd = v3()
        wp.eig3(a + wp.transpose(a), q, dd)
        Q[i] = q
        d[i] = dd
        u = m33()
        s = v3()
        v = m33()
        wp.svd3(a, u, s, v)
        U[i] = u
        S[i] = s
        V[i] = v
        qq = m33()
        rr = m33()
        wp.qr3(a, qq, rr)
        QR_Q[i] = qq
        QR_R[i] = rr
        u2 = m22()
        s2 = v2()
        v2_ = m22()
        wp.svd2(B[i], u2, s2, v2_)
        U2[i] = u2
        S2[i] = s2
        V2[i] = v2_

    return decompose, decompose_into


def _matrices(dtype, n=64):
    rng = np.random.default_rng(4)
    A = rng.standard_normal((n, 3, 3))
    A[0] = 0.0  # the zero matrix
    A[1] = np.outer([1.0, 2.0, 3.0], [0.5, -1.0, 2.0])  # rank 1
    A[2] = np.diag([2.0, -3.0, 1.0])  # negative determinant, unsorted
    A[3] = np.eye(3)  # repeated values
    B = rng.standard_normal((n, 2, 2))
    B[0] = 0.0
    B[1] = np.diag([1.0, 4.0])
    return A.astype(dtype), B.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("form", [0, 1], ids=["returned", "output_arguments"])
def test_decompositions_against_numpy(dtype, form):
    m33, v3, m22, v2, eps = TYPES[dtype]
    kernel = _kernels(m33, v3, m22, v2)[form]
    A, B = _matrices(dtype)
    n = len(A)
    outs = [wp.zeros(n, dtype=t) for t in (m33, v3, m33, v3, m33, m33, m33, m22, v2, m22)]
    wp.launch(kernel, dim=n, inputs=[wp.array(A, dtype=m33), wp.array(B, dtype=m22), *outs])
    Q, d, U, S, V, QQ, RR, U2, S2, V2 = (o.numpy().astype(np.float64) for o in outs)
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    tol = 200 * eps
    T = lambda m: np.swapaxes(m, 1, 2)  # noqa: E731
    sym = A64 + T(A64)
    # eig3: A = Q diag(d) Q^T, Q a rotation, the eigenvalues numpy's
    np.testing.assert_allclose(Q @ (d[:, :, None] * T(Q)), sym, atol=tol * 10)
    np.testing.assert_allclose(T(Q) @ Q, np.broadcast_to(np.eye(3), Q.shape), atol=tol)
    np.testing.assert_allclose(np.linalg.det(Q), 1.0, atol=tol)
    np.testing.assert_allclose(np.sort(d, axis=1), np.linalg.eigvalsh(sym), atol=tol * 10)
    # svd3: A = U diag(sigma) V^T, U and V rotations, |sigma| numpy's singular values (decreasing),
    # sigma[0], sigma[1] >= 0 and sigma[2] with the sign of det A
    np.testing.assert_allclose(U @ (S[:, :, None] * T(V)), A64, atol=tol * 10)
    for R in (U, V):
        np.testing.assert_allclose(T(R) @ R, np.broadcast_to(np.eye(3), R.shape), atol=tol)
        np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=tol)
    np.testing.assert_allclose(np.abs(S), np.linalg.svd(A64, compute_uv=False), atol=tol * 10)
    assert np.all(S[:, :2] >= 0.0)
    det = np.linalg.det(A64)
    assert np.all(S[np.abs(det) > 1e-3, 2] * det[np.abs(det) > 1e-3] > 0.0)
    # qr3: A = Q R, Q a rotation, R upper triangular, |R| numpy's (its rows up to sign)
    np.testing.assert_allclose(QQ @ RR, A64, atol=tol * 10)
    np.testing.assert_allclose(np.linalg.det(QQ), 1.0, atol=tol)
    assert np.all(np.tril(RR, -1) == 0.0)
    R_np = np.linalg.qr(A64)[1]
    full = np.abs(det) > 1e-3
    np.testing.assert_allclose(np.abs(RR[full]), np.abs(R_np[full]), atol=tol * 10)
    # svd2: B = U diag(sigma) V^T, U and V orthogonal, sigma numpy's (non-negative, decreasing)
    np.testing.assert_allclose(U2 @ (S2[:, :, None] * T(V2)), B64, atol=tol * 10)
    for R in (U2, V2):
        np.testing.assert_allclose(T(R) @ R, np.broadcast_to(np.eye(2), R.shape), atol=tol)
    np.testing.assert_allclose(S2, np.linalg.svd(B64, compute_uv=False), atol=tol * 10)


@wp.kernel
def _value_losses(A: wp.array(dtype=wp.mat33d), B: wp.array(dtype=wp.mat22d), loss: wp.array(dtype=wp.float64)):
    a = A[0]
    q, d = wp.eig3(a + wp.transpose(a))
    u, s, v = wp.svd3(a)
    u2, s2, v2 = wp.svd2(B[0])
    loss[0] = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + wp.float64(2.0) * (s[0] + s[1] + s[2]) + s2[0] * s2[1]


def _np_loss(A, B):
    d = np.linalg.eigvalsh(A + A.T)
    s = np.linalg.svd(A, compute_uv=False) * np.sign(np.linalg.det(A)) ** np.array([0, 0, 1])
    s2 = np.linalg.svd(B, compute_uv=False)
    return (d * d).sum() + 2.0 * s.sum() + s2[0] * s2[1]


def test_value_gradients_match_central_differences():
    rng = np.random.default_rng(8)
    A = rng.standard_normal((3, 3))
    B = rng.standard_normal((2, 2))
    a = wp.array(A[None], dtype=wp.mat33d, requires_grad=True)
    b = wp.array(B[None], dtype=wp.mat22d, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_value_losses, dim=1, inputs=[a, b, loss])
    tape.backward(loss)
    np.testing.assert_allclose(loss.numpy()[0], _np_loss(A, B), rtol=1e-10)
    h = 1e-6
    for M, g in ((A, a.grad.numpy()[0]), (B, b.grad.numpy()[0])):
        fd = np.zeros_like(M)
        for idx in np.ndindex(M.shape):
            M[idx] += h
            plus = _np_loss(A, B)
            M[idx] -= 2 * h
            minus = _np_loss(A, B)
            M[idx] += h
            fd[idx] = (plus - minus) / (2 * h)
        np.testing.assert_allclose(g, fd, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_eigenvalue_gradients_at_repeated_eigenvalues(dtype):
    """sum(d) = trace(A) and |d|^2 = |A|_F^2 for symmetric A: gradients I and 2 A, even where eigenvalues
    repeat (no NaN from the rotations' derivatives)."""
    m33, v3, _, _, eps = TYPES[dtype]
    wtype = wp.float32 if dtype == np.float32 else wp.float64

    @wp.kernel
    def losses(A: wp.array(dtype=m33), squared: int, out: wp.array(dtype=wtype)):
        i = wp.tid()
        q, d = wp.eig3(A[i])
        if squared == 1:
            out[i] = wp.dot(d, d)
        else:
            out[i] = d[0] + d[1] + d[2]

    c, s = np.cos(0.7), np.sin(0.7)
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ np.array([[1.0, 0.0, 0.0], [0.0, c, -s],
                                                                              [0.0, s, c]])
    cases = np.array([np.zeros((3, 3)), np.eye(3), np.diag([2.0, 2.0, -1.0]), rot @ np.diag([3.0, 3.0, 1.0]) @ rot.T,
                      rot @ np.diag([1.0, 1.0 + 1e-6, 2.0]) @ rot.T, rot @ np.diag([1.0, -2.0, 4.0]) @ rot.T])
    for squared in (0, 1):
        a = wp.array(cases.astype(dtype), dtype=m33, requires_grad=True)
        out = wp.zeros(len(cases), dtype=wtype, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(losses, dim=len(cases), inputs=[a, squared, out])
        tape.backward(grads={out: wp.ones(len(cases), dtype=wtype)})
        expected = 2.0 * cases if squared else np.broadcast_to(np.eye(3), cases.shape)
        np.testing.assert_allclose(a.grad.numpy(), expected, atol=1e4 * eps)
        np.testing.assert_allclose(out.numpy(), (cases ** 2).sum(axis=(1, 2)) if squared else np.trace(cases, axis1=1, axis2=2),
                                   atol=1e4 * eps)
