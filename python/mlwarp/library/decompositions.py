"""Small matrix decompositions that Warp 1.19 has as builtins (warp/native/svd.h), written here in the
kernel language as @wp.func overloads for float16, float32 and float64 matrices (computed in float64, then rounded):

- `eig3(A) -> (Q, d)`: A symmetric, A = Q diag(d) Q^T, Q a rotation (det +1); eigenvalues unsorted.
- `qr3(A) -> (Q, R)`: A = Q R, Q a rotation, R upper triangular (R[2, 2] has the sign of det A).
- `svd3(A) -> (U, sigma, V)`: A = U diag(sigma) V^T, U and V rotations, |sigma| decreasing, sigma[0] and
  sigma[1] >= 0, sigma[2] with the sign of det A.
- `svd2(A) -> (U, sigma, V)`: A = U diag(sigma) V^T, sigma >= 0 decreasing, U and V orthogonal.

Each also has Warp's output-argument form (`wp.svd3(A, U, sigma, V)`, `wp.qr3(A, Q, R)`,
`wp.eig3(A, Q, d)`, `wp.svd2(A, U, sigma, V)`). The eigenvectors come from cyclic Jacobi rotations (a fixed
number of sweeps, as Warp), the SVD from the eigenvectors of A^T A followed by a Gram-Schmidt QR of A V.
Derivatives are those of the algorithm (warp-autodiff differentiates the rotations), which at convergence
are the derivatives of the decomposition away from repeated eigen/singular values.
"""

# no `from __future__ import annotations`: the overloads annotate with the factory's closure types

from mlwarp.library.builtins import namespace as wp  # wp.sqrt, wp.transpose, ...: the builtins, spelt as in user code
from mlwarp.kernels.func import func
from mlwarp.kernels.func_grad import func_grad
from mlwarp.core.refs import ref
from mlwarp.types import float16, float32, float64
from mlwarp.core.vector import mat22d, mat22f, mat22h, mat33d, mat33f, mat33h, vec2d, vec2f, vec2h, vec3d, vec3f, vec3h

@func
def _detach_h(A: mat33h) -> mat33h:
    return A


@func
def _detach_f(A: mat33f) -> mat33f:
    return A


@func
def _detach_d(A: mat33d) -> mat33d:
    return A


# A's value with no derivative: the Jacobi rotations are computed on it, and the derivatives of the
# eigen-decomposition are added in closed form (differentiating the rotations themselves divides by
# off-diagonal entries that vanish at convergence: NaN or 1e9 gradients at repeated eigenvalues)
@func_grad(_detach_h)
def _adj_detach_h(A: mat33h, adj_ret: mat33h):
    pass


@func_grad(_detach_f)
def _adj_detach_f(A: mat33f, adj_ret: mat33f):
    pass


@func_grad(_detach_d)
def _adj_detach_d(A: mat33d, adj_ret: mat33d):
    pass


_SWEEPS = 6  # cyclic Jacobi sweeps of the three rotations; quadratic convergence: float64 after 4-5


def _overloads(m33, v3, m22, v2, s, detach):
    """The decompositions for one float type: `s` the scalar, `m33`/`v3`/`m22`/`v2` its matrices, vectors."""

    @func
    def _col(M: m33, j: int):
        return v3(M[0, j], M[1, j], M[2, j])

    @func
    def _rotate(A: m33, V: m33, p: int, q: int):
        """One Jacobi rotation in the (p, q) plane zeroing A[p, q] of the symmetric A: (J^T A J, V J)."""
        apq = A[p, q]
        if wp.abs(apq) > s(0.0):
            theta = (A[q, q] - A[p, p]) / (s(2.0) * apq)
            t = s(1.0) / (wp.abs(theta) + wp.sqrt(theta * theta + s(1.0)))
            if theta < s(0.0):
                t = -t
            c = s(1.0) / wp.sqrt(t * t + s(1.0))
            sn = t * c
            J = m33(s(1.0), s(0.0), s(0.0), s(0.0), s(1.0), s(0.0), s(0.0), s(0.0), s(1.0))
            J[p, p] = c
            J[q, q] = c
            J[p, q] = sn
            J[q, p] = -sn
            A = wp.transpose(J) * A * J
            V = V * J
        return A, V

    @func
    def _inv_gap(g: s):
        """1 / g with g moved out of (-1e-6, 1e-6) (0 counts as positive), as Warp's adjoint does."""
        if g < s(0.0) and g > s(-1.0e-6):
            g = s(-1.0e-6)
        if g >= s(0.0) and g < s(1.0e-6):
            g = s(1.0e-6)
        return s(1.0) / g

    @func
    def eig3(A: m33):
        A0 = detach(A)
        D = A0
        Q = m33(s(1.0), s(0.0), s(0.0), s(0.0), s(1.0), s(0.0), s(0.0), s(0.0), s(1.0))
        for _sweep in range(_SWEEPS):
            D, Q = _rotate(D, Q, 0, 1)
            D, Q = _rotate(D, Q, 0, 2)
            D, Q = _rotate(D, Q, 1, 2)
        D = wp.transpose(Q) * A0 * Q
        # first-order terms, zero in value: P = Q^T dA Q; dd_i = P_ii, dQ = Q W with W_ij = P_ij / (d_j - d_i)
        P = wp.transpose(Q) * (A - A0) * Q
        f01 = _inv_gap(D[1, 1] - D[0, 0])
        f02 = _inv_gap(D[2, 2] - D[0, 0])
        f12 = _inv_gap(D[2, 2] - D[1, 1])
        W = m33(s(0.0), P[0, 1] * f01, P[0, 2] * f02,
                -P[1, 0] * f01, s(0.0), P[1, 2] * f12,
                -P[2, 0] * f02, -P[2, 1] * f12, s(0.0))
        return Q + Q * W, v3(D[0, 0] + P[0, 0], D[1, 1] + P[1, 1], D[2, 2] + P[2, 2])

    @func
    def eig3(A: m33, Q: ref[m33], d: ref[v3]):  # noqa: F811
        Q, d = eig3(A)

    @func
    def _orthonormal_to(u: v3):
        """A unit vector orthogonal to the unit vector u."""
        w = v3(s(1.0), s(0.0), s(0.0))
        if wp.abs(u[0]) > s(0.5):
            w = v3(s(0.0), s(1.0), s(0.0))
        return wp.normalize(w - wp.dot(w, u) * u)

    @func
    def _gram_schmidt(A: m33):
        """(Q, R): Q a rotation whose first two columns span A's first two (where they are independent)."""
        a0 = v3(A[0, 0], A[1, 0], A[2, 0])
        a1 = v3(A[0, 1], A[1, 1], A[2, 1])
        a2 = v3(A[0, 2], A[1, 2], A[2, 2])
        u0 = v3(s(1.0), s(0.0), s(0.0))
        n0 = wp.length(a0)
        if n0 > s(0.0):
            u0 = a0 / n0
        r01 = wp.dot(u0, a1)
        w = a1 - r01 * u0
        c = wp.dot(u0, w)  # a second pass ("twice is enough"): w is orthogonal to u0 even when a1 nearly isn't
        r01 = r01 + c
        w = w - c * u0
        n1 = wp.length(w)
        u1 = v3(s(0.0), s(0.0), s(0.0))
        if n1 > s(0.0):
            u1 = w / n1
        else:
            u1 = _orthonormal_to(u0)
        u2 = wp.cross(u0, u1)
        Q = wp.matrix_from_cols(u0, u1, u2)
        R = m33(n0, r01, wp.dot(u0, a2),
                s(0.0), n1, wp.dot(u1, a2),
                s(0.0), s(0.0), wp.dot(u2, a2))
        return Q, R

    @func
    def qr3(A: m33):
        return _gram_schmidt(A)

    @func
    def qr3(A: m33, Q: ref[m33], R: ref[m33]):  # noqa: F811
        Q, R = _gram_schmidt(A)

    @func
    def svd3(A: m33):
        V, lam = eig3(wp.transpose(A) * A)
        # sort by decreasing lam (squared singular values); each swap negates a column to keep det V = +1
        if lam[0] < lam[1]:
            lam = v3(lam[1], lam[0], lam[2])
            V = wp.matrix_from_cols(_col(V, 1), -_col(V, 0), _col(V, 2))
        if lam[0] < lam[2]:
            lam = v3(lam[2], lam[1], lam[0])
            V = wp.matrix_from_cols(_col(V, 2), _col(V, 1), -_col(V, 0))
        if lam[1] < lam[2]:
            lam = v3(lam[0], lam[2], lam[1])
            V = wp.matrix_from_cols(_col(V, 0), _col(V, 2), -_col(V, 1))
        U, R = _gram_schmidt(A * V)
        return U, v3(R[0, 0], R[1, 1], R[2, 2]), V

    @func
    def svd3(A: m33, U: ref[m33], sigma: ref[v3], V: ref[m33]):  # noqa: F811
        U, sigma, V = svd3(A)

    @func
    def svd2(A: m22):
        # A = rot(phi) diag(s1, s2) rot(theta) with s1 = q + r, s2 = q - r (the 2x2 closed form)
        e = (A[0, 0] + A[1, 1]) * s(0.5)
        f = (A[0, 0] - A[1, 1]) * s(0.5)
        g = (A[1, 0] + A[0, 1]) * s(0.5)
        h = (A[1, 0] - A[0, 1]) * s(0.5)
        q = wp.sqrt(e * e + h * h)
        r = wp.sqrt(f * f + g * g)
        a1 = s(0.0)
        if r > s(0.0):
            a1 = wp.atan2(g, f)
        a2 = s(0.0)
        if q > s(0.0):
            a2 = wp.atan2(h, e)
        phi = (a2 + a1) * s(0.5)
        theta = (a2 - a1) * s(0.5)
        cu = wp.cos(phi)
        su = wp.sin(phi)
        cv = wp.cos(theta)
        sv = wp.sin(theta)
        s2 = q - r
        sign = s(1.0)
        if s2 < s(0.0):
            s2 = -s2
            sign = s(-1.0)
        U = m22(cu, -su * sign, su, cu * sign)
        V = m22(cv, sv, -sv, cv)  # A = rot(phi) diag(s1, s2) rot(theta): V = rot(theta)^T
        return U, v2(q + r, s2), V

    @func
    def svd2(A: m22, U: ref[m22], sigma: ref[v2], V: ref[m22]):  # noqa: F811
        U, sigma, V = svd2(A)

    return eig3, qr3, svd3, svd2


eig3, qr3, svd3, svd2 = _overloads(mat33d, vec3d, mat22d, vec2d, float64, _detach_d)


def _narrow(m33, v3, m22, v2):
    """float16/float32 overloads that compute in float64 (A^T A squares A's condition number: in float32 the
    singular vectors of close singular values lost most of their digits) and round the results."""

    def _eig3(A: m33):
        Q, d = eig3(mat33d(A))
        return m33(Q), v3(d)

    def _eig3_into(A: m33, Q: ref[m33], d: ref[v3]):
        Q, d = _eig3(A)

    def _qr3(A: m33):
        Q, R = qr3(mat33d(A))
        return m33(Q), m33(R)

    def _qr3_into(A: m33, Q: ref[m33], R: ref[m33]):
        Q, R = _qr3(A)

    def _svd3(A: m33):
        U, sigma, V = svd3(mat33d(A))
        return m33(U), v3(sigma), m33(V)

    def _svd3_into(A: m33, U: ref[m33], sigma: ref[v3], V: ref[m33]):
        U, sigma, V = _svd3(A)

    def _svd2(A: m22):
        U, sigma, V = svd2(mat22d(A))
        return m22(U), v2(sigma), m22(V)

    def _svd2_into(A: m22, U: ref[m22], sigma: ref[v2], V: ref[m22]):
        U, sigma, V = _svd2(A)

    returned = (_eig3, _qr3, _svd3, _svd2)
    _eig3, _qr3, _svd3, _svd2 = (func(f) for f in returned)  # what the output-argument forms call
    for public, py_funcs in ((eig3, (returned[0], _eig3_into)), (qr3, (returned[1], _qr3_into)),
                             (svd3, (returned[2], _svd3_into)), (svd2, (returned[3], _svd2_into))):
        for f in py_funcs:
            public.add(f)


_narrow(mat33h, vec3h, mat22h, vec2h)
_narrow(mat33f, vec3f, mat22f, vec2f)

__all__ = ["eig3", "qr3", "svd3", "svd2"]
