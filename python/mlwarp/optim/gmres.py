"""Restarted GMRES (GMRES[k]) as Warp 1.19's warp.optim.linear has it: each cycle builds an orthonormal basis V of
the Krylov space of size k by Arnoldi iterations (classical Gram-Schmidt: the k projections of A v_j computed as
one multi-column dot product), solves the small least-squares problem min |beta e1 - H y| per subproblem by Givens
rotations on the device, and updates x = x + V y (right preconditioning: x + M V y). M may precondition from the
left or the right.
"""

from __future__ import annotations

from typing import Any

from mlwarp.arrays.array import array, array2d, array3d, copy, empty, empty_like, zeros
from mlwarp.library.builtins import namespace as wp  # the builtins, spelt as in user code
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch

from mlwarp.optim.reductions import DotProducts
from mlwarp.optim.solver_state import LinearSolverState, dtype_epsilon, initialize_absolute_tolerance
from mlwarp.optim.views import batch_of_entry, repeat_rows, scalar_count


@kernel(enable_backward=False)
def _normalize(x: array(dtype=Any), norm_sq: array(dtype=Any), y: array(dtype=Any),
               batch_offsets: array(dtype=int), scalars_per_entry: int):
    """y = x / |x| per subproblem (x itself where |x| is 0)."""
    i = wp.tid()
    k = batch_of_entry(i, batch_offsets, scalars_per_entry)
    if k >= 0:
        a = norm_sq[k]
        y[i] = wp.where(a == norm_sq.dtype(0.0), x[i], x[i] / wp.sqrt(a))


@kernel(enable_backward=False)
def _store_norms(norm_sq: array(dtype=Any), norms: array(dtype=Any)):
    k = wp.tid()
    norms[k] = wp.sqrt(norm_sq[k])


@kernel(enable_backward=False)
def _store_hessenberg_entries(values: array2d(dtype=Any), H: array3d(dtype=Any), first_row: int, col: int,
                              square_root: int):
    """H[k, first_row + i, col] = values[i, k] (or its square root)."""
    i, k = wp.tid()
    value = values[i, k]
    if square_root != 0:
        value = wp.sqrt(value)
    H[k, first_row + i, col] = value


@kernel(enable_backward=False)
def _orthogonalize(j: int, V: array2d(dtype=Any), H: array3d(dtype=Any), w: array(dtype=Any),
                   batch_offsets: array(dtype=int), scalars_per_entry: int):
    """w -= sum_{i <= j} H[i, j] v_i."""
    e = wp.tid()
    k = batch_of_entry(e, batch_offsets, scalars_per_entry)
    if k >= 0:
        s = w[e]
        for i in range(j + 1):
            s -= H[k, i, j] * V[i, e]
        w[e] = s


@kernel(enable_backward=False)
def _solve_least_squares(n: int, pivot_tolerance: Any, beta: array(dtype=Any), H: array3d(dtype=Any),
                         y: array2d(dtype=Any)):
    """y[k] = argmin |beta[k] e1 - H[k] y| for the (n+1) x n upper Hessenberg H[k]: Givens rotations make H[k]
    upper triangular (in place), then back substitution. A vanishing subdiagonal pivot ends the basis early (the
    Krylov space is invariant: the solution lies in it)."""
    k = wp.tid()
    zero = beta.dtype(0.0)
    rhs = beta[k]
    rank = n
    for i in range(n):
        a = H[k, i, i]
        b = H[k, i + 1, i]
        norm_sq = a * a + b * b
        if norm_sq < pivot_tolerance:
            rank = i
            break
        norm = wp.sqrt(norm_sq)
        c = a / norm
        s = b / norm
        for col in range(i, n):
            upper = H[k, i, col]
            lower = H[k, i + 1, col]
            H[k, i, col] = c * upper + s * lower
            H[k, i + 1, col] = c * lower - s * upper
        y[k, i] = c * rhs
        rhs = -s * rhs
    for i in range(rank, n):
        y[k, i] = zero
    for row_plus_one in range(rank, 0, -1):
        i = row_plus_one - 1
        yi = y[k, i]
        for col in range(row_plus_one, rank):
            yi -= H[k, i, col] * y[k, col]
        y[k, i] = yi / H[k, i, i]


@kernel(enable_backward=False)
def _combine_basis(n: int, scale: Any, y: array2d(dtype=Any), V: array2d(dtype=Any), x: array(dtype=Any),
                   batch_offsets: array(dtype=int), scalars_per_entry: int):
    """x = scale * x + sum_{i < n} y_i v_i."""
    e = wp.tid()
    k = batch_of_entry(e, batch_offsets, scalars_per_entry)
    if k >= 0:
        s = scale * x[e]
        for i in range(n):
            s += V[i, e] * y[k, i]
        x[e] = s


@kernel(enable_backward=False)
def _add_active(update: array(dtype=Any), x: array(dtype=Any), batch_offsets: array(dtype=int),
                scalars_per_entry: int):
    e = wp.tid()
    if batch_of_entry(e, batch_offsets, scalars_per_entry) >= 0:
        x[e] += update[e]


class GMRES(LinearSolverState):
    """Pre-allocated state of the restarted GMRES solver (Warp's `warp.optim.linear.GMRES`); see
    `LinearSolverState` for the shared parameters, plus `restart`: the k of GMRES[k] (the Krylov basis size;
    capped at maxiter) and `is_left_preconditioner`: whether M preconditions from the left (else the right).
    The preconditioner may change, or be added or dropped, between calls."""

    def __init__(self, A, b, x, tol=None, atol=None, restart: int = 31, maxiter=0, M=None, callback=None,
                 check_every: int = 31, use_cuda_graph: bool = True, is_left_preconditioner: bool = False):
        self._restart = restart
        self._is_left_preconditioner = is_left_preconditioner
        super().__init__(A, b, x, tol=tol, atol=atol, maxiter=maxiter, M=M, callback=callback,
                         check_every=check_every, use_cuda_graph=use_cuda_graph)

    def _allocate(self):
        b, device, scalar = self._b, self._device, self._scalar_type
        restart = self._restart = min(self._restart, self._maxiter)
        if self._check_every > 0:
            self._check_every = max(restart, self._check_every)
        self._pivot_tolerance = scalar(dtype_epsilon(scalar) ** 2)
        self._r = empty_like(b)
        self._w = empty_like(b)
        self._H = empty((self._batch_count, restart + 1, restart), dtype=scalar, device=device)
        self._y = empty((self._batch_count, restart + 1), dtype=scalar, device=device)
        self._V = zeros((restart + 1, b.shape[0]), dtype=b.dtype, device=device)
        self._residuals = empty((2, self._batch_count), dtype=scalar, device=device)
        self._dots = DotProducts(scalar_count(b), scalar, device, restart + 1, self._A.batch_offsets)
        self._w_repeated = repeat_rows(self._w, restart + 1)  # (w, w, ...): the projections on V in one launch

    def _launch(self, kernel, x, *args):
        launch(kernel, dim=x.shape[0], device=self._device,
                  inputs=[*args, self._A.batch_offsets, self._dofs_per_entry])

    def _run(self, A, b, x, M):
        device, restart = self._device, self._restart
        left = self._is_left_preconditioner
        dots, r, w, H, y, V = self._dots, self._r, self._w, self._H, self._y, self._V
        beta, atol_sq = self._residuals[0], self._residuals[1]
        r_norm_sq = dots.col(0)

        initialize_absolute_tolerance(b, self._tol, self._atol, dots, atol_sq)
        A.matvec(x, b, r, alpha=-1.0, beta=1.0)
        dots.compute(r, r)
        w.zero_()  # robustness against operators that read their output

        def store_hessenberg(values, first_row, col, square_root):
            launch(_store_hessenberg_entries, dim=(values.shape[0], self._batch_count), device=device,
                      inputs=[values, H, first_row, col, int(square_root)])

        def arnoldi_iteration(j: int):
            if M is None:
                A.matvec(V[j], w, w, alpha=1.0, beta=0.0)
            elif left:
                A.matvec(V[j], V[j + 1], V[j + 1], alpha=1.0, beta=0.0)
                M.matvec(V[j + 1], w, w, alpha=1.0, beta=0.0)
            else:
                M.matvec(V[j], V[j + 1], V[j + 1], alpha=1.0, beta=0.0)
                A.matvec(V[j + 1], w, w, alpha=1.0, beta=0.0)
            store_hessenberg(dots.compute(self._w_repeated[: j + 1], V[: j + 1]), 0, j, False)
            self._launch(_orthogonalize, w, j, V, H, w)
            w_norm_sq = dots.compute(w, w)
            store_hessenberg(w_norm_sq, j + 1, j, True)
            self._launch(_normalize, w, w, w_norm_sq[0], V[j + 1])

        def restart_cycle():
            if M is not None and left:
                M.matvec(r, w, w, alpha=1.0, beta=0.0)
                rh = w
            else:
                rh = r
            rh_norm_sq = dots.compute(rh, rh)[0]
            self._launch(_normalize, rh, rh, rh_norm_sq, V[0])
            launch(_store_norms, dim=self._batch_count, device=device, inputs=[rh_norm_sq, beta])
            for j in range(restart):
                arnoldi_iteration(j)
            launch(_solve_least_squares, dim=self._batch_count, device=device,
                      inputs=[restart, self._pivot_tolerance, beta, H, y])
            scalar = self._scalar_type
            if M is None or left:
                self._launch(_combine_basis, x, restart, scalar(1.0), y, V, x)
            else:
                self._launch(_combine_basis, x, restart, scalar(0.0), y, V, w)
                M.matvec(w, r, r, alpha=1.0, beta=0.0)
                self._launch(_add_active, x, r, x)
            copy(src=b, dest=r)
            A.matvec(x, b, r, alpha=-1.0, beta=1.0)
            dots.compute(r, r)

        return self._loop(restart_cycle, r_norm_sq, atol_sq, restart)
