"""warp.optim.linear.FSAI (mlwarp.optim.fsai), the adaptive factorized sparse approximate inverse, against numpy
and scipy: each factor row is the normalised solution of its local system (G[i,S] = z / sqrt(z_i) with
A[S,S] z = e_i, numpy's solve), a full pattern gives G^T G = A^-1, one entry per row gives Jacobi, refits on the
same supports follow the new values, and CG / CR preconditioned with it reach scipy.sparse.linalg.spsolve's
solution. Also Warp's errors for bad matrices and options."""

import numpy as np
import pytest
import scipy.sparse as ssp
import scipy.sparse.linalg

import mlwarp as wp
import mlwarp.sparse as sp
from mlwarp.optim.linear import FSAI, cg, cr, preconditioner

from sparse_util import to_dense


def _bsr(a, dtype=wp.float64, block=1):
    rows, cols = np.nonzero(a)
    m = sp.bsr_from_triplets(a.shape[0], a.shape[1], wp.array(rows, dtype=int), wp.array(cols, dtype=int),
                             wp.array(a[rows, cols], dtype=dtype))
    return sp.bsr_copy(m, block_shape=(block, block)) if block != 1 else m


def _grid_laplacian(k, shift=0.5):
    """The 5-point Laplacian of a k x k grid plus shift I (SPD, sparse), with a varying diagonal scale."""
    one = ssp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k))
    a = ssp.kronsum(one, one).toarray() + shift * np.eye(k * k)
    scale = np.diag(np.linspace(1.0, 3.0, k * k))
    return scale @ a @ scale


def _random_spd(n, seed, density=0.35):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n)) * (rng.random((n, n)) < density)
    a = a + a.T
    np.fill_diagonal(a, np.abs(a).sum(axis=1) + 1.0)
    return a


def _assert_local_solves(G, a, rtol=1e-9):
    """Every row of G is lower triangular with a positive diagonal, and on its support S equals
    z / sqrt(z_last) where A[S,S] z = e_last (the row's own index is the largest of S)."""
    assert np.all(np.triu(G, 1) == 0) and np.all(np.diag(G) > 0)
    for i in range(len(a)):
        support = np.flatnonzero(G[i])
        assert support[-1] == i
        rhs = np.zeros(len(support))
        rhs[-1] = 1.0
        z = np.linalg.solve(a[np.ix_(support, support)], rhs)
        np.testing.assert_allclose(G[i, support], z / np.sqrt(z[-1]), rtol=rtol, atol=rtol * np.abs(z).max())


def test_a_full_pattern_is_the_inverse():
    a = _random_spd(8, seed=1, density=1.0)
    M = FSAI(_bsr(a), max_row_size=8, kap_tolerance=0.0)
    G = to_dense(M.G)
    _assert_local_solves(G, a)
    np.testing.assert_allclose(G.T @ G, np.linalg.inv(a), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(to_dense(M.GT), G.T)
    assert M.truncated_rows == 0 and M.update_status is None and M.pattern_ready is None
    # applying it: z = alpha G^T G x + beta y
    x, y = np.arange(1.0, 9.0), np.ones(8)
    z = wp.zeros(8, dtype=wp.float64)
    M.matvec(wp.array(x, dtype=wp.float64), wp.array(y, dtype=wp.float64), z, 2.0, -1.0)
    np.testing.assert_allclose(z.numpy(), 2.0 * np.linalg.solve(a, x) - y, rtol=1e-9)


def test_sparse_supports_are_local_solves_and_one_entry_is_jacobi():
    a = _random_spd(20, seed=4)
    M = FSAI(_bsr(a))  # Warp's defaults: at most 8 entries a row, kap_tolerance 1e-3
    G = to_dense(M.G)
    _assert_local_solves(G, a)
    assert np.count_nonzero(G, axis=1).max() <= 8 and np.count_nonzero(G) > 20
    jacobi = to_dense(FSAI(_bsr(a), max_row_size=1).G)
    np.testing.assert_allclose(jacobi, np.diag(1.0 / np.sqrt(np.diag(a))), rtol=1e-12)


@pytest.mark.parametrize("solver", [cg, cr])
def test_preconditioned_solvers_reach_scipys_solution(solver):
    a = _grid_laplacian(8)
    b = np.random.default_rng(2).uniform(-1.0, 1.0, len(a))
    expected = scipy.sparse.linalg.spsolve(ssp.csc_matrix(a), b)
    A = _bsr(a)
    iterations = {}
    for name, M in (("none", None), ("fsai", FSAI(A)), ("ptype", preconditioner(A, "fsai"))):
        x = wp.zeros(len(b), dtype=wp.float64)
        iterations[name], err, atol = solver(A, wp.array(b, dtype=wp.float64), x, M=M, tol=1e-10, maxiter=500)
        assert err <= atol
        np.testing.assert_allclose(x.numpy(), expected, rtol=1e-7, atol=1e-8 * np.abs(expected).max())
    assert iterations["fsai"] < iterations["none"] and iterations["ptype"] == iterations["fsai"]


def test_float32_matrix_and_float32_factor_of_a_float64_matrix():
    a = _random_spd(20, seed=4)
    G64 = to_dense(FSAI(_bsr(a)).G)
    M = FSAI(_bsr(a), factor_dtype=wp.float32)
    assert M.G.scalar_type == wp.float32 and M.GT.scalar_type == wp.float32
    np.testing.assert_allclose(to_dense(M.G), G64.astype(np.float32), rtol=1e-6)
    G32 = to_dense(FSAI(_bsr(a, wp.float32)).G)
    np.testing.assert_allclose(G32[G64 != 0], G64[G64 != 0], rtol=2e-4, atol=1e-5)


def test_refit_on_the_same_supports():
    a = _random_spd(20, seed=4)
    A = _bsr(a)
    M = FSAI(A, reuse_pattern=True)
    G = to_dense(M.G)
    # new values, same sparsity: the supports stay, each row is the local solve of the new matrix
    b = a * 2.0 + np.diag(np.diag(a)) * np.linspace(0.0, 1.0, 20)
    A.values.assign(wp.array(b[np.nonzero(a)], dtype=wp.float64))
    assert M.update() is M
    G2 = to_dense(M.G)
    np.testing.assert_array_equal(G2 != 0, G != 0)
    _assert_local_solves(G2, b)
    np.testing.assert_array_equal(M.update_status.numpy(), [0, 0, 0, 0])
    np.testing.assert_array_equal(to_dense(M.GT), G2.T)


def test_bad_matrices_and_options():
    a = _random_spd(6, seed=0)
    A = _bsr(a)
    with pytest.raises(ValueError, match="FSAI requires a square BSR matrix with square blocks"):
        FSAI(_bsr(np.ones((3, 4))))
    with pytest.raises(ValueError, match="FSAI requires a square BSR matrix with square blocks"):
        FSAI(wp.array(a))
    with pytest.raises(TypeError, match="FSAI supports float16, float32 and float64"):
        FSAI(sp.bsr_zeros(3, 3, wp.int32))
    for option, message in ((dict(max_row_size=0), r"max_row_size must be an integer in \[1, 64\]"),
                            (dict(max_row_size=65), r"max_row_size must be an integer in \[1, 64\]"),
                            (dict(max_step_size=2.0), r"max_step_size must be an integer in \[1, 64\]"),
                            (dict(kap_tolerance=1.0), r"kap_tolerance must be in \[0, 1\)"),
                            (dict(pivot_floor=0.0), r"pivot_floor must be in \(0, 1\)"),
                            (dict(factor_dtype=wp.float16), "factor_dtype must be the matrix scalar type, or "
                                                            "wp.float32 for a float64 matrix"),
                            (dict(defer_pattern=True), "defer_pattern requires reuse_pattern")):
        with pytest.raises(ValueError, match=message):
            FSAI(A, **option)
    with pytest.raises(ValueError, match="Construct FSAI with reuse_pattern=True before updating"):
        FSAI(A).update()
    b = a.copy()
    b[2, 2] = -1.0
    with pytest.raises(ValueError, match=r"FSAI requires finite positive diagonals \(1 invalid rows\)"):
        FSAI(_bsr(b))
    M = FSAI(A, reuse_pattern=True)
    with pytest.raises(ValueError, match="FSAI update requires the original shape, dtype, device and topology"):
        M.update(_bsr(_random_spd(7, seed=0)))
    with pytest.raises(ValueError, match="update requires a Warp BSR matrix"):
        M.update(wp.array(a))
