"""The short-recurrence Krylov solvers of Warp 1.19's warp.optim.linear: Conjugate Gradient (CG) and Conjugate
Residual (CR), optionally restarted, and BiConjugate Gradient Stabilized (BiCGSTAB, left or right
preconditioned). Each iteration is a few operator products, device dot products and one or two update kernels;
scalars (step lengths) never leave the device. A subproblem whose residual is within its tolerance takes zero
steps, so batched subproblems converge independently while iterating together.
"""

from __future__ import annotations

import operator
from typing import Any

from mlwarp.arrays.array import array, empty, empty_like, zeros_like
from mlwarp.library.builtins import namespace as wp  # the builtins, spelt as in user code
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch

from mlwarp.optim.reductions import DotProducts
from mlwarp.optim.solver_state import LinearSolverState, initialize_absolute_tolerance
from mlwarp.optim.views import batch_of_entry, repeat_first_row, scalar_count


@kernel(enable_backward=False)
def _step(tol_sq: array(dtype=Any), r_norm_sq: array(dtype=Any), numerator: array(dtype=Any),
          denominator: array(dtype=Any), x: array(dtype=Any), r: array(dtype=Any),
          dx: array(dtype=Any), dr: array(dtype=Any), batch_offsets: array(dtype=int),
          scalars_per_entry: int):
    """x += c dx, r -= c dr with c = numerator / denominator, for the subproblems not converged yet."""
    i = wp.tid()
    k = batch_of_entry(i, batch_offsets, scalars_per_entry)
    if k >= 0:
        c = wp.where(r_norm_sq[k] > tol_sq[k], numerator[k] / denominator[k], r_norm_sq.dtype(0.0))
        x[i] += c * dx[i]
        r[i] -= c * dr[i]


@kernel(enable_backward=False)
def _cg_direction(tol_sq: array(dtype=Any), r_norm_sq: array(dtype=Any), rz_old: array(dtype=Any),
                  rz_new: array(dtype=Any), z: array(dtype=Any), p: array(dtype=Any),
                  batch_offsets: array(dtype=int), scalars_per_entry: int):
    """p = z + (rz_new / rz_old) p."""
    i = wp.tid()
    k = batch_of_entry(i, batch_offsets, scalars_per_entry)
    if k >= 0:
        beta = wp.where(r_norm_sq[k] > tol_sq[k], rz_new[k] / rz_old[k], r_norm_sq.dtype(0.0))
        p[i] = z[i] + beta * p[i]


@kernel(enable_backward=False)
def _cr_preconditioned_step(tol_sq: array(dtype=Any), r_norm_sq: array(dtype=Any),
                            zAz: array(dtype=Any), yAp: array(dtype=Any), x: array(dtype=Any),
                            r: array(dtype=Any), z: array(dtype=Any), p: array(dtype=Any),
                            Ap: array(dtype=Any), y: array(dtype=Any), batch_offsets: array(dtype=int),
                            scalars_per_entry: int):
    """x += a p, r -= a Ap, z -= a y (y = M Ap) with a = zAz / yAp."""
    i = wp.tid()
    k = batch_of_entry(i, batch_offsets, scalars_per_entry)
    if k >= 0:
        zero = r_norm_sq.dtype(0.0)
        a = wp.where(r_norm_sq[k] > tol_sq[k] and yAp[k] > zero, zAz[k] / yAp[k], zero)
        x[i] += a * p[i]
        r[i] -= a * Ap[i]
        z[i] -= a * y[i]


@kernel(enable_backward=False)
def _cr_direction(tol_sq: array(dtype=Any), r_norm_sq: array(dtype=Any), zAz_old: array(dtype=Any),
                  zAz_new: array(dtype=Any), z: array(dtype=Any), p: array(dtype=Any),
                  Az: array(dtype=Any), Ap: array(dtype=Any), batch_offsets: array(dtype=int),
                  scalars_per_entry: int):
    """p = z + b p and Ap = Az + b Ap with b = zAz_new / zAz_old."""
    i = wp.tid()
    k = batch_of_entry(i, batch_offsets, scalars_per_entry)
    if k >= 0:
        zero = r_norm_sq.dtype(0.0)
        beta = wp.where(r_norm_sq[k] > tol_sq[k] and zAz_old[k] > zero, zAz_new[k] / zAz_old[k], zero)
        p[i] = z[i] + beta * p[i]
        Ap[i] = Az[i] + beta * Ap[i]


@kernel(enable_backward=False)
def _bicgstab_direction(tol_sq: array(dtype=Any), r_norm_sq: array(dtype=Any), rho: array(dtype=Any),
                        r0v: array(dtype=Any), st: array(dtype=Any), tt: array(dtype=Any),
                        p: array(dtype=Any), r: array(dtype=Any), v: array(dtype=Any),
                        batch_offsets: array(dtype=int), scalars_per_entry: int):
    """p = r + beta (p - omega v) with beta = (rho / r0v) / omega and omega = st / tt."""
    i = wp.tid()
    k = batch_of_entry(i, batch_offsets, scalars_per_entry)
    if k >= 0:
        active = r_norm_sq[k] > tol_sq[k]
        zero = r_norm_sq.dtype(0.0)
        beta = wp.where(active, rho[k] * tt[k] / (r0v[k] * st[k]), zero)
        beta_omega = wp.where(active, rho[k] / r0v[k], zero)
        p[i] = r[i] + beta * p[i] - beta_omega * v[i]


class _KrylovState(LinearSolverState):
    def _new_dots(self, columns: int) -> DotProducts:
        return DotProducts(scalar_count(self._b), self._scalar_type, self._device, columns, self._A.batch_offsets)

    def _launch(self, kernel, x, *args):
        """Launch an update kernel over the entries of `x` (its last two arguments: the batch layout)."""
        launch(kernel, dim=x.shape[0], device=self._device,
                  inputs=[*args, self._A.batch_offsets, self._dofs_per_entry])


class _RestartableState(_KrylovState):
    """CG and CR: an optional restart every `restart` iterations (the true residual b - A x replaces the
    recursive one, and the search direction restarts from it)."""

    def __init__(self, A, b, x, tol=None, atol=None, maxiter=0, M=None, callback=None, check_every=10,
                 use_cuda_graph=True, *, restart: int | None = None):
        if restart is not None:
            if isinstance(restart, bool):
                raise TypeError("restart must be an integer or None")
            try:
                restart = operator.index(restart)
            except TypeError as error:
                raise TypeError("restart must be an integer or None") from error
            if restart < 1:
                raise ValueError("restart must be positive")
        self._restart = restart
        super().__init__(A, b, x, tol=tol, atol=atol, maxiter=maxiter, M=M, callback=callback,
                         check_every=check_every, use_cuda_graph=use_cuda_graph)

    def _configure_restart(self):
        if self._restart is not None:
            self._restart = max(1, min(self._restart, self._maxiter))
            if self._check_every > 0:
                self._check_every = max(self._check_every, self._restart)

    def _cycles(self, do_iteration, restart_from_true_residual):
        """(one cycle, its length): one iteration, or `restart` of them ending on the true residual."""
        restart = self._restart
        if restart is None:
            return do_iteration, 1

        def do_restart_cycle():
            for _ in range(restart - 1):
                do_iteration()
            do_iteration(update_direction=False)
            restart_from_true_residual()

        return do_restart_cycle, restart


class CG(_RestartableState):
    """Pre-allocated state of the Conjugate Gradient solver (Warp's `warp.optim.linear.CG`); see
    `LinearSolverState` for the parameters, plus `restart` (keyword): iterations between restarts (None: none).
    The preconditioner may change, or be added or dropped, between calls."""

    def _allocate(self):
        self._configure_restart()
        b = self._b
        self._r_and_z = empty((2, b.shape[0]), dtype=b.dtype, device=self._device)
        self._p_and_Ap = empty_like(self._r_and_z)
        self._residuals = empty((2, self._batch_count), dtype=self._scalar_type, device=self._device)
        self._dots = self._new_dots(2)
        self._r_repeated = repeat_first_row(self._r_and_z)  # (r, r): r.r and r.z in one launch

    def _run(self, A, b, x, M):
        dots = self._dots
        r, z = self._r_and_z[0], self._r_and_z[1]
        if M is None:
            z = r  # unpreconditioned: z = r, r.z = r.r
        p, Ap = self._p_and_Ap[0], self._p_and_Ap[1]
        rz_old, atol_sq = self._residuals[0], self._residuals[1]
        r_norm_sq = dots.col(0)
        rz_new = dots.col(0 if M is None else 1)

        Ap.zero_()  # robustness against operators that read their output
        self._r_and_z[1].zero_()
        initialize_absolute_tolerance(b, self._tol, self._atol, dots, atol_sq)
        A.matvec(x, b, r, alpha=-1.0, beta=1.0)

        def update_rr_rz():
            if M is None:
                dots.compute(r, r)
            else:
                M.matvec(r, z, z, alpha=1.0, beta=0.0)
                dots.compute(self._r_repeated, self._r_and_z)

        update_rr_rz()
        p.assign(z)

        def do_iteration(update_direction=True):
            rz_old.assign(rz_new)
            A.matvec(p, Ap, Ap, alpha=1.0, beta=0.0)
            p_Ap = dots.compute(p, Ap, col_offset=1)[0]
            self._launch(_step, x, atol_sq, r_norm_sq, rz_old, p_Ap, x, r, p, Ap)
            if update_direction:
                update_rr_rz()
                self._launch(_cg_direction, z, atol_sq, r_norm_sq, rz_old, rz_new, z, p)

        def restart_from_true_residual():
            A.matvec(x, b, r, alpha=-1.0, beta=1.0)
            update_rr_rz()
            p.assign(z)

        do_cycle, cycle_size = self._cycles(do_iteration, restart_from_true_residual)
        return self._loop(do_cycle, r_norm_sq, atol_sq, cycle_size)


class CR(_RestartableState):
    """Pre-allocated state of the Conjugate Residual solver (Warp's `warp.optim.linear.CR`); see
    `LinearSolverState` for the parameters, plus `restart` (keyword): iterations between restarts (None: none).
    The preconditioner may change, or be added or dropped, between calls."""

    def _allocate(self):
        self._configure_restart()
        b = self._b
        # notation of https://en.wikipedia.org/wiki/Conjugate_residual_method, with z = M r and y = M Ap
        self._r_and_z = empty((2, b.shape[0]), dtype=b.dtype, device=self._device)
        self._r_and_Az = empty_like(self._r_and_z)
        self._y_and_Ap = empty_like(self._r_and_z)
        self._p = empty_like(b)
        self._residuals = empty((2, self._batch_count), dtype=self._scalar_type, device=self._device)
        self._dots = self._new_dots(2)
        self._r_and_z_repeated = repeat_first_row(self._r_and_z)
        self._y_and_Ap_repeated = repeat_first_row(self._y_and_Ap)

    def _run(self, A, b, x, M):
        dots = self._dots
        r_and_z = self._r_and_z if M is not None else self._r_and_z_repeated
        y_and_Ap = self._y_and_Ap if M is not None else self._y_and_Ap_repeated
        r, z = r_and_z[0], r_and_z[1]
        r_copy, Az = self._r_and_Az[0], self._r_and_Az[1]
        y, Ap = y_and_Ap[0], y_and_Ap[1]
        p = self._p
        r_norm_sq, zAz_new = dots.col(0), dots.col(1)
        zAz_old, atol_sq = self._residuals[0], self._residuals[1]

        initialize_absolute_tolerance(b, self._tol, self._atol, dots, atol_sq)
        A.matvec(x, b, r, alpha=-1.0, beta=1.0)
        self._y_and_Ap.zero_()  # robustness against operators that read their output

        def update_z():
            if M is not None:
                M.matvec(r, z, z, alpha=1.0, beta=0.0)

        def update_rr_zAz():
            A.matvec(z, Az, Az, alpha=1.0, beta=0.0)
            r_copy.assign(r)
            dots.compute(r_and_z, self._r_and_Az)  # r.r and z.Az

        if M is not None:
            z.zero_()
        update_z()
        update_rr_zAz()
        p.assign(z)
        Ap.assign(Az)

        def do_iteration(update_direction=True):
            zAz_old.assign(zAz_new)
            if M is not None:
                M.matvec(Ap, y, y, alpha=1.0, beta=0.0)
            y_Ap = dots.compute(Ap, y, col_offset=1)[0]
            if M is None:
                self._launch(_step, x, atol_sq, r_norm_sq, zAz_old, y_Ap, x, r, p, Ap)
            else:
                self._launch(_cr_preconditioned_step, x, atol_sq, r_norm_sq, zAz_old, y_Ap, x, r, z, p, Ap, y)
            if update_direction:
                update_rr_zAz()
                self._launch(_cr_direction, z, atol_sq, r_norm_sq, zAz_old, zAz_new, z, p, Az, Ap)

        def restart_from_true_residual():
            A.matvec(x, b, r, alpha=-1.0, beta=1.0)
            update_z()
            update_rr_zAz()
            p.assign(z)
            Ap.assign(Az)

        do_cycle, cycle_size = self._cycles(do_iteration, restart_from_true_residual)
        return self._loop(do_cycle, r_norm_sq, atol_sq, cycle_size)


class BiCGSTAB(_KrylovState):
    """Pre-allocated state of the BiConjugate Gradient Stabilized solver (Warp's `warp.optim.linear.BiCGSTAB`);
    see `LinearSolverState` for the parameters, plus `is_left_preconditioner`: whether M preconditions from the
    left (else the right). Whether M is given is fixed at construction."""

    def __init__(self, A, b, x, tol=None, atol=None, maxiter=0, M=None, callback=None, check_every=10,
                 use_cuda_graph=True, is_left_preconditioner=False):
        self._is_left_preconditioner = is_left_preconditioner
        super().__init__(A, b, x, tol=tol, atol=atol, maxiter=maxiter, M=M, callback=callback,
                         check_every=check_every, use_cuda_graph=use_cuda_graph)

    def _allocate(self):
        b = self._b
        # notation of https://en.wikipedia.org/wiki/Biconjugate_gradient_stabilized_method
        self._r_and_r0 = empty((2, b.shape[0]), dtype=b.dtype, device=self._device)
        self._p = empty_like(b)
        self._v = empty_like(b)
        self._t = empty_like(b)
        self._r_repeated = repeat_first_row(self._r_and_r0)
        if self._M is not None:
            self._y = zeros_like(b)
            self._z = zeros_like(b)
            self._Mt = zeros_like(b) if self._is_left_preconditioner else self._t
        else:
            self._y, self._z, self._Mt = self._p, self._r_and_r0[0], self._t
        self._dots = self._new_dots(5)
        self._atol_sq = empty(self._batch_count, dtype=self._scalar_type, device=self._device)

    def _check_compatible(self, A, b, x, M):
        super()._check_compatible(A, b, x, M)
        if (M is None) != (self._M is None):
            raise ValueError("BiCGSTAB requires M to be consistently provided between construction and call "
                             "(both None or both non-None)")

    def _run(self, A, b, x, M):
        dots = self._dots
        r, r0 = self._r_and_r0[0], self._r_and_r0[1]
        p, v, t, y, z, Mt = self._p, self._v, self._t, self._y, self._z, self._Mt
        left = M is not None and self._is_left_preconditioner
        r_norm_sq, rho = dots.col(0), dots.col(1)
        atol_sq = self._atol_sq

        initialize_absolute_tolerance(b, self._tol, self._atol, dots, atol_sq)
        A.matvec(x, b, r, alpha=-1.0, beta=1.0)
        dots.compute(r, r)
        p.assign(r)
        r0.assign(r)
        rho.assign(r_norm_sq)
        v.zero_()  # robustness against operators that read their output
        t.zero_()

        def do_iteration():
            if M is not None:
                M.matvec(p, y, y, alpha=1.0, beta=0.0)
            A.matvec(y, v, v, alpha=1.0, beta=0.0)
            r0v = dots.compute(r0, v, col_offset=2)[0]
            self._launch(_step, x, atol_sq, r_norm_sq, rho, r0v, x, r, y, v)  # x += alpha y, r -= alpha v
            dots.compute(r, r)
            if M is not None:
                M.matvec(r, z, z, alpha=1.0, beta=0.0)
            A.matvec(z, t, t, alpha=1.0, beta=0.0)
            if left:
                M.matvec(t, Mt, Mt, alpha=1.0, beta=0.0)
                dots.compute(z, Mt, col_offset=3)
                dots.compute(Mt, Mt, col_offset=4)
            else:
                dots.compute(r, t, col_offset=3)
                dots.compute(t, t, col_offset=4)
            st, tt = dots.col(3), dots.col(4)
            self._launch(_step, x, atol_sq, r_norm_sq, st, tt, x, r, z, t)  # x += omega z, r -= omega t
            dots.compute(self._r_and_r0, self._r_repeated)  # r.r and r0.r
            self._launch(_bicgstab_direction, x, atol_sq, r_norm_sq, rho, r0v, st, tt, p, r, v)

        return self._loop(do_iteration, r_norm_sq, atol_sq)
