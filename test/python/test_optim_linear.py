"""warp.optim.linear's iterative solvers (mlwarp.optim.linear) against numpy's direct solutions and scipy's
iterative ones: CG, CR, BiCGSTAB and GMRES on dense, diagonal and block-diagonal operators, preconditioned or
not, scalar and vector unknowns, batched subproblems, device-side loops (check_every=0), callbacks, reusable
solver states and Warp's errors. Sparse (BSR) operators are tested with mlwarp.sparse."""

import numpy as np
import pytest
import scipy.sparse.linalg

import mlwarp as wp
from mlwarp.optim.linear import (
    CG, CR, GMRES, BiCGSTAB, LinearOperator, LinearSolverState, aslinearoperator, bicgstab, cg, cr, gmres,
    preconditioner,
)


def _spd_system(n, seed):
    rng = np.random.default_rng(seed)
    C = rng.uniform(-1.0, 1.0, (n, n))
    return C @ C.T + n * np.eye(n) * rng.uniform(0.5, 2.0, n), rng.uniform(-1.0, 1.0, n)


def _nonsymmetric_system(n, seed):
    A, b = _spd_system(n, seed)
    return A @ np.diag(np.random.default_rng(seed + 1).uniform(0.1, 10.0, n)), b


def _assert_solves(x, A, b, rtol):
    """x is A^-1 b to rtol, relative to the solution's largest entry (solvers bound the residual's norm)."""
    expected = np.linalg.solve(A, b)
    np.testing.assert_allclose(x, expected, rtol=rtol, atol=rtol * np.abs(expected).max())


def _solve(solver, A, b, dtype, **kwargs):
    x = wp.zeros(len(b), dtype=dtype)
    result = solver(wp.array(A, dtype=dtype), wp.array(b, dtype=dtype), x, **kwargs)
    return x.numpy(), result


@pytest.mark.parametrize("dtype, rtol", [(wp.float64, 1e-9), (wp.float32, 2e-4)])
@pytest.mark.parametrize("solver, system", [(cg, _spd_system), (cr, _spd_system), (bicgstab, _nonsymmetric_system),
                                            (gmres, _nonsymmetric_system)])
@pytest.mark.parametrize("ptype", [None, "diag", "diag_abs"])
def test_solvers_reach_numpys_solution(solver, system, dtype, rtol, ptype):
    A, b = system(24, seed=7)
    M = None if ptype is None else preconditioner(wp.array(A, dtype=dtype), ptype)
    x, (iterations, err, atol) = _solve(solver, A, b, dtype, M=M, maxiter=500)
    assert err <= atol and 0 < iterations <= 500
    _assert_solves(x, A, b, rtol)
    # the reported tolerance is max(atol, tol * |b|) with Warp's defaults (eps^(3/4), eps = 1e-16 or 1e-8)
    eps = 1e-16 if dtype == wp.float64 else 1e-8
    assert atol == pytest.approx(eps**0.75 * np.linalg.norm(b), rel=1e-5)


@pytest.mark.parametrize("left", [False, True])
@pytest.mark.parametrize("solver", [bicgstab, gmres])
def test_left_and_right_preconditioning(solver, left):
    A, b = _nonsymmetric_system(20, seed=3)
    M = preconditioner(wp.array(A, dtype=wp.float64), "diag")
    x, (_, err, atol) = _solve(solver, A, b, wp.float64, M=M, is_left_preconditioner=left, maxiter=400)
    _assert_solves(x, A, b, 1e-8)


def test_cg_takes_scipys_iterations():
    # float64 CG checked every iteration stops where scipy's CG (the same recurrences) does
    A, b = _spd_system(40, seed=11)
    counts = []
    x_ref, info = scipy.sparse.linalg.cg(A, b, rtol=1e-10, atol=0.0, callback=lambda xk: counts.append(1))
    assert info == 0
    x, (iterations, _, _) = _solve(cg, A, b, wp.float64, tol=1e-10, atol=0.0, check_every=1)
    assert iterations == len(counts)
    np.testing.assert_allclose(x, x_ref, rtol=1e-9)


def test_gmres_restarts_and_matches_scipys_solution():
    A, b = _nonsymmetric_system(30, seed=5)
    x_ref, info = scipy.sparse.linalg.gmres(A, b, restart=8, rtol=1e-12, atol=0.0, maxiter=200)
    assert info == 0
    x, (iterations, err, atol) = _solve(gmres, A, b, wp.float64, restart=8, tol=1e-12, maxiter=1000)
    assert iterations % 8 == 0 and err <= atol
    np.testing.assert_allclose(x, x_ref, rtol=1e-8)


@pytest.mark.parametrize("solver", [cg, cr])
def test_restarted_conjugate_solvers(solver):
    A, b = _spd_system(16, seed=9)
    x, (iterations, err, atol) = _solve(solver, A, b, wp.float64, restart=4, maxiter=200)
    assert iterations % 4 == 0 and err <= atol
    # with restarts the reported residual is the true one, |b - A x|
    assert err == pytest.approx(np.linalg.norm(b - A @ x), rel=1e-6, abs=1e-14)
    _assert_solves(x, A, b, 1e-9)
    with pytest.raises(TypeError, match="restart must be an integer or None"):
        solver(wp.array(A), wp.array(b), wp.zeros(16, dtype=float), restart=2.5)
    with pytest.raises(TypeError, match="restart must be an integer or None"):
        solver(wp.array(A), wp.array(b), wp.zeros(16, dtype=float), restart=True)
    with pytest.raises(ValueError, match="restart must be positive"):
        solver(wp.array(A), wp.array(b), wp.zeros(16, dtype=float), restart=0)


def test_vector_unknowns_with_a_block_diagonal_operator():
    rng = np.random.default_rng(2)
    blocks = np.stack([_spd_system(3, seed=s)[0] for s in range(5)])
    b = rng.uniform(-1.0, 1.0, (5, 3))
    A = wp.array(blocks, dtype=wp.mat33d)  # a 1-D array of matrices: a block-diagonal operator
    x = wp.zeros(5, dtype=wp.vec3d)
    _, err, atol = cg(A, wp.array(b, dtype=wp.vec3d), x, maxiter=50)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(blocks, b[..., None])[..., 0], rtol=1e-9)
    # a diagonal of vectors is the diagonal of their scalars
    d = rng.uniform(1.0, 2.0, (5, 3))
    x = wp.zeros(5, dtype=wp.vec3d)
    bicgstab(wp.array(d, dtype=wp.vec3d), wp.array(b, dtype=wp.vec3d), x)
    np.testing.assert_allclose(x.numpy(), b / d, rtol=1e-10)


def test_a_user_linear_operator():
    A, b = _spd_system(12, seed=4)
    A_wp = wp.array(A, dtype=wp.float64)
    dense = aslinearoperator(A_wp)
    calls = []

    def matvec(x, y, z, alpha, beta):
        calls.append(1)
        dense.matvec(x, y, z, alpha, beta)

    op = LinearOperator(A.shape, wp.float64, A_wp.device, matvec)
    assert op.scalar_type == wp.float64 and op.batch_count == 1 and op.batch_offsets is None
    assert aslinearoperator(op) is op and aslinearoperator(None) is None
    x = wp.zeros(12, dtype=wp.float64)
    cr(op, wp.array(b, dtype=wp.float64), x)
    assert calls
    _assert_solves(x.numpy(), A, b, 1e-9)
    # the generalized product: z = alpha A x + beta y, y unread when beta is 0
    v, y = np.arange(12.0), np.full(12, np.nan)
    z = wp.zeros(12, dtype=wp.float64)
    dense.matvec(wp.array(v), wp.array(y), z, 2.0, 0.0)
    np.testing.assert_allclose(z.numpy(), 2.0 * A @ v)


def _batched_problem(sizes, tail=0, seed=0):
    blocks = [_spd_system(n, seed=seed + k) for k, n in enumerate(sizes)]
    n = sum(sizes) + tail
    A = np.eye(n)
    b = np.zeros(n)
    start = 0
    for M, rhs in blocks:
        A[start:start + len(rhs), start:start + len(rhs)] = M
        b[start:start + len(rhs)] = rhs
        start += len(rhs)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    return A, b, offsets, blocks


@pytest.mark.parametrize("solver", [cg, cr, bicgstab, gmres])
def test_batched_subproblems_converge_independently(solver):
    A, b, offsets, blocks = _batched_problem([5, 9, 3], tail=2)
    b[-2:] = 7.0  # inactive entries: left alone
    op = aslinearoperator(wp.array(A), batch_offsets=wp.array(offsets, dtype=int), max_batch_length=9)
    assert op.batch_count == 3
    x0 = np.zeros(len(b))
    x0[-2:] = 3.0
    x = wp.array(x0)
    iterations, err, atol = solver(op, wp.array(b), x, maxiter=100)
    result = x.numpy()
    for k, (M, rhs) in enumerate(blocks):
        np.testing.assert_allclose(result[offsets[k]:offsets[k + 1]], np.linalg.solve(M, rhs), rtol=1e-8)
    np.testing.assert_array_equal(result[-2:], 3.0)
    # the reported tolerance is the largest subproblem's: max over k of eps^(3/4) |b_k|
    assert atol == pytest.approx(1e-12 * max(np.linalg.norm(rhs) for _, rhs in blocks), rel=1e-6)


def test_device_side_loop_with_check_every_zero():
    A, b = _spd_system(10, seed=6)
    x = wp.zeros(10, dtype=wp.float64)
    iteration, r_norm_sq, atol_sq = cg(wp.array(A), wp.array(b), x, check_every=0, maxiter=30)
    assert isinstance(iteration, wp.array) and r_norm_sq.shape == (1,)
    assert iteration.numpy()[0] == 30  # without a conditional graph the loop runs maxiter iterations
    assert r_norm_sq.numpy()[0] <= atol_sq.numpy()[0]
    _assert_solves(x.numpy(), A, b, 1e-9)


def test_callbacks_and_check_every():
    A, b = _spd_system(20, seed=8)
    seen = []
    iterations, err, atol = cg(wp.array(A), wp.array(b), wp.zeros(20, dtype=wp.float64), check_every=3,
                               callback=lambda i, e, a: seen.append((i, e, a)))
    steps = [i for i, _, _ in seen]
    assert steps[0] == 0 and steps[-1] == iterations
    assert all(i % 3 == 0 for i in steps[1:-1])
    assert seen[-1][1] == err and all(a == atol for _, _, a in seen)
    assert seen[0][1] == pytest.approx(np.linalg.norm(b), rel=1e-12)  # x = 0: the first residual is b



@wp.kernel
def _print_iteration(iteration: wp.array(dtype=int), r_norm_sq: wp.array(dtype=wp.float64),
                     atol_sq: wp.array(dtype=wp.float64)):
    wp.printf("iteration %d\n", iteration[0])


def test_a_kernel_callback_runs_after_every_device_side_iteration(capfd):
    A, b = _spd_system(6, seed=8)
    cg(wp.array(A), wp.array(b), wp.zeros(6, dtype=wp.float64), check_every=0, maxiter=4,
       callback=_print_iteration)
    wp.synchronize()
    assert capfd.readouterr().out.split("\n")[:5] == [f"iteration {i}" for i in range(5)]
    # a Python function is no callback of the device-side loop (Warp's rule): it is not called
    cg(wp.array(A), wp.array(b), wp.zeros(6, dtype=wp.float64), check_every=0, maxiter=4,
       callback=lambda *args: pytest.fail("called"))


def test_solver_states_run_again_on_new_operands():
    A, b = _spd_system(8, seed=1)
    A_wp, b_wp, x = wp.array(A), wp.array(b), wp.zeros(8, dtype=wp.float64)
    state = cg(A_wp, b_wp, x, run=False)
    assert isinstance(state, CG) and isinstance(state, LinearSolverState)
    state()
    _assert_solves(x.numpy(), A, b, 1e-9)
    b2 = np.arange(8.0)
    x2 = wp.zeros(8, dtype=wp.float64)
    state(b=wp.array(b2), x=x2, M=preconditioner(A_wp, "diag"))
    _assert_solves(x2.numpy(), A, b2, 1e-9)
    for state_class in (CR, GMRES, BiCGSTAB):
        x3 = wp.zeros(8, dtype=wp.float64)
        state_class(A_wp, b_wp, x3)()
        _assert_solves(x3.numpy(), A, b, 1e-9)

    with pytest.raises(ValueError, match=r"Incompatible b.shape: expected \(8,\), got \(9,\)"):
        state(b=wp.zeros(9, dtype=wp.float64))
    with pytest.raises(ValueError, match="Incompatible x.dtype"):
        state(x=wp.zeros(8, dtype=wp.float32))
    with pytest.raises(ValueError, match=r"Incompatible A.shape: expected \(8, 8\), got \(9, 9\)"):
        state(A=wp.zeros((9, 9), dtype=wp.float64))
    bicg = BiCGSTAB(A_wp, b_wp, x)
    with pytest.raises(ValueError, match="BiCGSTAB requires M to be consistently provided"):
        bicg(M=preconditioner(A_wp))
    with pytest.raises(NotImplementedError, match="use CG, CR, BiCGSTAB or GMRES"):
        LinearSolverState(A_wp, b_wp, x)


def test_operator_and_preconditioner_errors():
    with pytest.raises(ValueError, match="Unable to create LinearOperator"):
        aslinearoperator(wp.zeros((2, 2, 2), dtype=float))
    with pytest.raises(ValueError, match="max_batch_length requires batch_offsets"):
        LinearOperator((2, 2), float, wp.get_device("cpu"), None, max_batch_length=2)
    with pytest.raises(ValueError, match="max_batch_length must be non-negative"):
        LinearOperator((2, 2), float, wp.get_device("cpu"), None, wp.zeros(2, dtype=int), -1)
    A = wp.array(np.eye(3))
    with pytest.raises(ValueError, match="Unsupported preconditioner type 'ilu'"):
        preconditioner(A, "ilu")
    with pytest.raises(ValueError, match="Unsupported source matrix type for building diagonal preconditioner"):
        preconditioner(wp.ones(3, dtype=float), "diag")
    with pytest.raises(ValueError, match="Block-Jacobi preconditioner requires a warp.sparse.BsrMatrix input"):
        preconditioner(A, "block_jacobi_direct")
    assert preconditioner(A, "id") is None
    with pytest.raises(ValueError, match="FSAI requires a square BSR matrix with square blocks"):
        preconditioner(A, "fsai")  # a dense matrix (test_optim_fsai.py tests FSAI itself)


def test_jacobi_preconditioners_invert_the_diagonal():
    A = np.diag([2.0, -4.0, 0.0]) + 0.1
    z = wp.zeros(3, dtype=wp.float64)
    v = wp.array([1.0, 1.0, 1.0])
    preconditioner(wp.array(A), "diag").matvec(v, v, z, 1.0, 0.0)
    np.testing.assert_allclose(z.numpy(), [1 / 2.1, 1 / -3.9, 1 / 0.1])
    preconditioner(wp.array(np.diag([2.0, -4.0, 0.0])), "diag_abs").matvec(v, v, z, 2.0, 1.0)
    np.testing.assert_allclose(z.numpy(), [2 / 2.0 + 1, 2 / 4.0 + 1, 2 / 1.0 + 1])  # a zero coefficient gives 1


class _BsrLike:
    """A matrix with Warp's BsrMatrix interface, enough for the preconditioners (which read its diagonal
    blocks): rows of blocks given as {column: block} dicts."""

    def __init__(self, rows, ncol, block_shape, scalar_type=wp.float64):
        self.nrow, self.ncol, self.block_shape = len(rows), ncol, block_shape
        self.scalar_type = scalar_type
        self.dtype = scalar_type if block_shape == (1, 1) else wp.types.matrix(shape=block_shape, dtype=scalar_type)
        self.shape = (self.nrow * block_shape[0], ncol * block_shape[1])
        self.device = wp.get_device("cpu")
        columns = [c for row in rows for c in sorted(row)]
        blocks = [np.asarray(row[c], dtype=np.float64).reshape(block_shape) for row in rows for c in sorted(row)]
        self.offsets = wp.array(np.cumsum([0] + [len(row) for row in rows]), dtype=int)
        self.columns = wp.array(columns, dtype=int)
        values = np.array(blocks).reshape(-1) if block_shape == (1, 1) else np.array(blocks)
        self.values = wp.array(values, dtype=self.dtype)


def _apply(M, v, scalar_type=wp.float64):
    z = wp.zeros(len(v), dtype=scalar_type)
    M.matvec(wp.array(v, dtype=scalar_type), wp.array(v, dtype=scalar_type), z, 1.0, 0.0)
    return z.numpy()


@pytest.mark.parametrize("ptype", ["block_jacobi_direct", "block_jacobi_sequential", "block_jacobi_tile"])
def test_block_jacobi_inverts_the_diagonal_blocks(ptype):
    diagonal = [_spd_system(3, seed=s)[0] for s in range(4)]
    off_diagonal = np.full((3, 3), 0.25)
    rows = [{i: diagonal[i], (i + 1) % 4: off_diagonal} for i in range(4)]
    M = preconditioner(_BsrLike(rows, 4, (3, 3)), ptype)
    assert M.shape == (12, 12)
    v = np.random.default_rng(0).uniform(-1, 1, 12)
    expected = np.concatenate([np.linalg.solve(diagonal[i], v[3 * i:3 * i + 3]) for i in range(4)])
    np.testing.assert_allclose(_apply(M, v), expected, rtol=1e-10)
    # the generalized product: z = alpha M x + beta y
    z = wp.array(np.ones(12))
    M.matvec(wp.array(v), z, z, 2.0, -1.0)
    np.testing.assert_allclose(z.numpy(), 2.0 * expected - 1.0, rtol=1e-10)


def test_block_jacobi_falls_back_to_the_identity_on_blocks_it_cannot_factorize():
    v = np.arange(1.0, 5.0)
    singular = [[1.0, 2.0], [2.0, 4.0]]  # rank 1: rounding leaves a tiny pivot
    asymmetric = [[2.0, 1.0], [0.0, 3.0]]
    indefinite = [[1.0, 2.0], [2.0, 1.0]]
    for ptype, block, fallback in [("block_jacobi_direct", singular, True), ("block_jacobi_direct", asymmetric, False),
                                   ("block_jacobi_sequential", singular, True),
                                   ("block_jacobi_sequential", asymmetric, True),
                                   ("block_jacobi_sequential", indefinite, True),
                                   ("block_jacobi_tile", asymmetric, True)]:
        M = preconditioner(_BsrLike([{0: block}, {1: np.eye(2) * 4.0}], 2, (2, 2)), ptype)
        first = _apply(M, v)[:2]
        expected = v[:2] if fallback else np.linalg.solve(block, v[:2])
        np.testing.assert_allclose(first, expected, rtol=1e-12, err_msg=f"{ptype} {block}")
        np.testing.assert_allclose(_apply(M, v)[2:], v[2:] / 4.0)


def test_block_jacobi_in_float32_and_float16():
    block = _spd_system(2, seed=3)[0]
    v = np.array([1.0, -1.0, 0.5, 2.0])
    for ptype, scalar_type, rtol in [("block_jacobi_tile", wp.float32, 1e-5), ("block_jacobi_direct", wp.float16, 3e-2),
                                     ("block_jacobi_sequential", wp.float16, 3e-2)]:
        M = preconditioner(_BsrLike([{0: block}, {1: block}], 2, (2, 2), scalar_type), ptype)
        expected = np.concatenate([np.linalg.solve(block, v[:2]), np.linalg.solve(block, v[2:])])
        np.testing.assert_allclose(_apply(M, v, scalar_type), expected, rtol=rtol, atol=rtol)


def test_jacobi_of_bsr_matrices_and_block_jacobi_errors():
    # 1x1 blocks: block Jacobi is Jacobi; a missing diagonal block counts as zero (1 in the inverse)
    csr = _BsrLike([{0: 2.0, 1: 5.0}, {0: 1.0}, {2: -4.0}], 3, (1, 1))
    for ptype in ("diag", "block_jacobi_sequential"):
        np.testing.assert_allclose(_apply(preconditioner(csr, ptype), np.ones(3)), [0.5, 1.0, -0.25])
    blocked = _BsrLike([{0: [[2.0, 9.0], [9.0, -8.0]]}], 1, (2, 2))
    np.testing.assert_allclose(_apply(preconditioner(blocked, "diag_abs"), np.ones(2)), [0.5, 0.125])
    with pytest.raises(ValueError, match=r"requires square matrix blocks, got shape \(2, 3\)"):
        preconditioner(_BsrLike([{0: np.ones((2, 3))}], 1, (2, 3)), "block_jacobi_direct")
    with pytest.raises(ValueError, match="same number of block rows and block columns, got 1 block rows and 2"):
        preconditioner(_BsrLike([{0: np.eye(2)}], 2, (2, 2)), "block_jacobi_sequential")
    with pytest.raises(ValueError, match="'block_jacobi_tile' preconditioner requires a float32 or float64 scalar "
                                         "type, got float16"):
        preconditioner(_BsrLike([{0: np.eye(2)}], 1, (2, 2), wp.float16), "block_jacobi_tile")


def test_block_jacobi_preconditions_cg_on_a_block_operator():
    # the operator: a 1-D array of 3x3 blocks (block diagonal), with x and b arrays of vec3
    blocks = np.stack([_spd_system(3, seed=s)[0] for s in range(6)])
    b = np.random.default_rng(1).uniform(-1, 1, (6, 3))
    M = preconditioner(_BsrLike([{i: blocks[i]} for i in range(6)], 6, (3, 3)), "block_jacobi_direct")
    x = wp.zeros(6, dtype=wp.vec3d)
    iterations, err, atol = cg(wp.array(blocks, dtype=wp.mat33d), wp.array(b, dtype=wp.vec3d), x, M=M,
                               check_every=1)
    assert iterations == 1  # the preconditioner is the exact inverse
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(blocks, b[..., None])[..., 0], rtol=1e-10)
