"""`warp.optim.linear` for mlwarp: iterative solvers of linear systems (Conjugate Gradient, Conjugate Residual,
BiCGSTAB, restarted GMRES), their operators and preconditioners (Jacobi, block Jacobi, FSAI), with Warp 1.19's signatures and semantics.
Every vector operation runs in mlwarp kernels on the operands' device; batched systems (independent subproblems
of one operator, `LinearOperator(batch_offsets=...)`) iterate together.

The functions run a solve (run=False: return the solver's pre-allocated state, callable again); the classes are
those states.
"""

from __future__ import annotations

from collections.abc import Callable

from mlwarp.optim.fsai import FSAI
from mlwarp.optim.gmres import GMRES
from mlwarp.optim.krylov import CG, CR, BiCGSTAB
from mlwarp.optim.operators import LinearOperator, aslinearoperator
from mlwarp.optim.preconditioners import preconditioner
from mlwarp.optim.solver_state import LinearSolverState

__all__ = ["CG", "CR", "FSAI", "GMRES", "BiCGSTAB", "LinearOperator", "LinearSolverState", "aslinearoperator", "bicgstab",
           "cg", "cr", "gmres", "preconditioner"]

_RETURNS = """
    Returns:
        With run=True and check_every > 0: (iterations, residual_norm, absolute_tolerance) as Python numbers
        (the largest over subproblems). With run=True and check_every == 0: device arrays (iteration count,
        squared residual norms, squared absolute tolerances). With run=False: the solver's state, which runs
        the solve when called.

    The absolute tolerance of the residual norm is max(atol, tol * norm(b)).
"""


def cg(A, b, x, tol: float | None = None, atol: float | None = None, maxiter: float | None = 0, M=None,
       callback: Callable | None = None, check_every=10, use_cuda_graph=True, run: bool = True, *,
       restart: int | None = None):
    """Solve the symmetric positive-definite system A x = b by the Conjugate Gradient method.

    Args:
        A: the left-hand side (dense or BSR matrix, diagonal array or `LinearOperator`).
        b: the right-hand side.
        x: the initial guess, overwritten by the solution.
        tol, atol: relative and absolute residual tolerances.
        maxiter: maximum number of iterations (0: the system size).
        M: optional left preconditioner, ideally close to A's inverse.
        callback: called every check_every iterations with (iteration, residual norm, tolerance); with
            check_every 0 a kernel.
        check_every: iterations between host-side convergence checks (0: none, everything stays on the device).
        use_cuda_graph: capture the iterations as a CUDA graph on CUDA devices.
        run: run now (else return the `CG` state).
        restart: optional number of iterations between restarts from the true residual.
    """
    state = CG(A, b, x, tol=tol, atol=atol, maxiter=maxiter, M=M, callback=callback, check_every=check_every,
               use_cuda_graph=use_cuda_graph, restart=restart)
    return state() if run else state


def cr(A, b, x, tol: float | None = None, atol: float | None = None, maxiter: float | None = 0, M=None,
       callback: Callable | None = None, check_every=10, use_cuda_graph=True, run: bool = True, *,
       restart: int | None = None):
    """Solve the symmetric positive-definite system A x = b by the Conjugate Residual method (same arguments as
    `cg`)."""
    state = CR(A, b, x, tol=tol, atol=atol, maxiter=maxiter, M=M, callback=callback, check_every=check_every,
               use_cuda_graph=use_cuda_graph, restart=restart)
    return state() if run else state


def bicgstab(A, b, x, tol: float | None = None, atol: float | None = None, maxiter: float | None = 0, M=None,
             callback: Callable | None = None, check_every=10, use_cuda_graph=True, is_left_preconditioner=False,
             run: bool = True):
    """Solve A x = b by the BiConjugate Gradient Stabilized method (arguments as `cg`; M is a left
    preconditioner when is_left_preconditioner, else a right one)."""
    state = BiCGSTAB(A, b, x, tol=tol, atol=atol, maxiter=maxiter, M=M, callback=callback,
                     check_every=check_every, use_cuda_graph=use_cuda_graph,
                     is_left_preconditioner=is_left_preconditioner)
    return state() if run else state


def gmres(A, b, x, tol: float | None = None, atol: float | None = None, restart=31, maxiter: float | None = 0,
          M=None, callback: Callable | None = None, check_every=31, use_cuda_graph=True,
          is_left_preconditioner=False, run: bool = True):
    """Solve A x = b by the restarted Generalized Minimum Residual method GMRES[restart] (arguments as `cg`;
    `restart` is the Krylov basis size, iterations run `restart` at a time, so maxiter may be exceeded by
    restart - 1; M is a left preconditioner when is_left_preconditioner, else a right one)."""
    state = GMRES(A, b, x, tol=tol, atol=atol, restart=restart, maxiter=maxiter, M=M, callback=callback,
                  check_every=check_every, use_cuda_graph=use_cuda_graph,
                  is_left_preconditioner=is_left_preconditioner)
    return state() if run else state


for _solver in (cg, cr, bicgstab, gmres):
    _solver.__doc__ += _RETURNS
