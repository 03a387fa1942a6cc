"""What the iterative solvers share (Warp 1.19's semantics): tolerances, the iteration loop with its convergence
checks and callbacks, and `LinearSolverState`, the pre-allocated buffers of a solver that can run again on new
operands of the same layout.

Convergence: the absolute tolerance of subproblem k is max(atol, tol * |b_k|); a solve has converged when every
subproblem's squared residual norm is at most its squared tolerance. With check_every > 0 the host reads the
residuals every check_every iterations (and calls `callback(iteration, residual_norm, atol)`); with check_every
0 nothing is read back: the iteration count, the squared residuals and tolerances stay on the device, the loop is
a conditional CUDA graph (capture_while) on a CUDA device, and a fixed `maxiter` iterations elsewhere (the
kernels stop moving converged subproblems).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from mlwarp.arrays.array import array, empty
from mlwarp.library.builtins import namespace as wp  # the builtins, spelt as in user code
from mlwarp.launching.graph_capture import ScopedCapture, capture_launch, capture_while
from mlwarp.kernels.kernel import Kernel, kernel
from mlwarp.launching.launch import launch
from mlwarp.types import float16, float64

from mlwarp.optim.operators import aslinearoperator
from mlwarp.optim.views import scalar_count, scalars_per_entry


def dtype_epsilon(dtype) -> float:
    if dtype == float64:
        return 1.0e-16
    if dtype == float16:
        return 1.0e-4
    return 1.0e-8


def tolerances(dtype, tol, atol) -> tuple[float, float]:
    """(relative, absolute) tolerances: either one given stands for both, neither gives eps^(3/4) (eps a
    precision-dependent epsilon) and the absolute one is at least eps^(9/4)."""
    eps = dtype_epsilon(dtype)
    if tol is None and atol is None:
        tol = atol = eps ** 0.75
    elif tol is None:
        tol = atol
    elif atol is None:
        atol = tol
    return tol, max(atol, eps ** 2.25)


@kernel(enable_backward=False)
def _absolute_tolerance(rtol: Any, atol: Any, b_norm_sq: array(dtype=Any), atol_sq: array(dtype=Any)):
    k = wp.tid()
    a = wp.max(rtol * wp.sqrt(b_norm_sq[k]), atol)
    atol_sq[k] = a * a


def initialize_absolute_tolerance(b, tol, atol, dots, atol_sq) -> None:
    """atol_sq[k] = max(atol, tol * |b_k|)^2 for every subproblem k."""
    scalar = atol_sq.dtype
    b_norm_sq = dots.compute(b, b)[0]
    rtol, atol = tolerances(scalar, tol, atol)
    launch(_absolute_tolerance, dim=atol_sq.shape[0], device=b.device,
              inputs=[scalar(rtol), scalar(atol), b_norm_sq, atol_sq])


@kernel(enable_backward=False)
def _update_condition(maxiter: int, cycle_size: int, cur_iter: array(dtype=int), r_norm_sq: array(dtype=Any),
                      atol_sq: array(dtype=Any), condition: array(dtype=int)):
    converged = bool(True)
    for k in range(r_norm_sq.shape[0]):
        if r_norm_sq[k] > atol_sq[k]:
            converged = False
    cur_iter[0] += cycle_size
    condition[0] = wp.where(converged or cur_iter[0] >= maxiter, 0, 1)


def _run_on_device(do_cycle, cycle_size, iteration_and_condition, r_norm_sq, maxiter, atol_sq, callback,
                   use_cuda_graph):
    """The loop with check_every == 0: the iteration count and the continue flag live on the device."""
    device = atol_sq.device
    iteration_and_condition.fill_(-cycle_size)
    cur_iter = iteration_and_condition[0:1]
    condition = iteration_and_condition[1:2]

    def check():
        launch(_update_condition, dim=1, device=device,
                  inputs=[int(maxiter), cycle_size, cur_iter, r_norm_sq, atol_sq, condition])
        if isinstance(callback, Kernel):
            launch(callback, dim=1, device=device, inputs=[cur_iter, r_norm_sq, atol_sq])

    def do_cycle_and_check():
        do_cycle()
        check()

    check()
    if use_cuda_graph and device.is_cuda:
        if device.is_capturing:
            capture_while(condition, do_cycle_and_check)
        else:
            with ScopedCapture(device=device) as capture:
                capture_while(condition, do_cycle_and_check)
            capture_launch(capture.graph)
    else:
        for _ in range(0, maxiter, cycle_size):
            do_cycle_and_check()
    return cur_iter, r_norm_sq, atol_sq


def _run_with_host_checks(do_cycle, cycle_size, r_norm_sq, maxiter, atol_sq, callback, check_every,
                          use_cuda_graph):
    """The loop with check_every > 0: the host reads the residuals every check_every iterations."""
    device = atol_sq.device
    atol_sq_host = atol_sq.numpy()
    atol = math.sqrt(float(atol_sq_host.max()))
    check_every = max(check_every, cycle_size)

    def read_residuals():
        host = r_norm_sq.numpy()
        return host, math.sqrt(float(host.max()))

    iteration = 0
    residuals, err = read_residuals()
    if callback is not None:
        callback(iteration, err, atol)
    if np.all(residuals <= atol_sq_host):
        return iteration, err, atol

    graph = None
    while True:
        # the first cycle runs outside a capture: it loads the modules
        if device.is_cuda and use_cuda_graph and iteration > 0:
            if graph is None:
                with ScopedCapture(device=device, force_module_load=False) as capture:
                    do_cycle()
                graph = capture.graph
            capture_launch(graph)
        else:
            do_cycle()
        iteration += cycle_size
        if iteration >= maxiter:
            break
        if iteration % check_every < cycle_size:
            residuals, err = read_residuals()
            if np.all(residuals <= atol_sq_host):
                break
            if callback is not None:
                callback(iteration, err, atol)

    _, err = read_residuals()
    if callback is not None:
        callback(iteration, err, atol)
    return iteration, err, atol


class LinearSolverState:
    """Pre-allocated state of an iterative linear solver (Warp's `warp.optim.linear.LinearSolverState`): the
    temporary buffers and the problem (A, b, x, optional M). Calling the state runs the solver, optionally on a
    new matrix, right-hand side, solution vector or preconditioner of the construction-time shape, dtype, device
    and batch layout.

    Args:
        A: the linear system's left-hand side.
        b: the right-hand side.
        x: initial guess and solution vector.
        tol: relative tolerance for the residual, as a ratio of the right-hand side's norm.
        atol: absolute tolerance for the residual.
        maxiter: maximum number of iterations (0 or None: the system size).
        M: optional preconditioner.
        callback: called every check_every iterations with the iteration number, residual norm and tolerance
            (with check_every 0: a kernel launched with the device-side iteration, squared residuals and squared
            tolerances).
        check_every: iterations between host-side convergence checks (0: none).
        use_cuda_graph: whether to capture iterations in a CUDA graph on CUDA devices.

    Use the subclasses `CG`, `CR`, `BiCGSTAB` and `GMRES`, or the solver functions with run=False.
    """

    def __init__(self, A, b, x, tol: float | None = None, atol: float | None = None, maxiter: float | None = 0,
                 M=None, callback: Callable | None = None, check_every: int = 10, use_cuda_graph: bool = True):
        self._A = aslinearoperator(A)
        self._M = aslinearoperator(M)
        self._b = b
        self._x = x
        self._tol = tol
        self._atol = atol
        self._callback = callback
        self._check_every = check_every
        self._use_cuda_graph = use_cuda_graph

        self._device = self._A.device
        self._scalar_type = self._A.scalar_type
        self._batch_count = self._A.batch_count
        self._dofs_per_entry = scalars_per_entry(b.dtype)
        if maxiter is None or maxiter == 0:
            maxiter = scalar_count(b) // self._batch_count
        self._maxiter = int(maxiter)
        self._iteration_and_condition = empty((2,), dtype=int, device=self._device)
        self._allocate()

    def _allocate(self):
        raise NotImplementedError("LinearSolverState is the base of the solver states: use CG, CR, BiCGSTAB or "
                                  "GMRES (or cg, cr, bicgstab, gmres with run=False)")

    def _run(self, A, b, x, M):
        raise NotImplementedError

    def _check_compatible(self, A, b, x, M):
        """Warp's checks of substituted operands against the construction-time ones."""
        if A is not self._A:
            for name in ("shape", "dtype", "device", "batch_count"):
                if getattr(A, name) != getattr(self._A, name):
                    raise ValueError(f"Incompatible A.{name}: expected {getattr(self._A, name)}, "
                                     f"got {getattr(A, name)}")
            if A.batch_offsets is not self._A.batch_offsets:
                raise ValueError("A.batch_offsets must be the same array as at construction")
            if A.max_batch_length != self._A.max_batch_length:
                raise ValueError("For batched systems, A.max_batch_length must match the value used at construction")
        for name, new, old in (("b", b, self._b), ("x", x, self._x)):
            if new is not old:
                for attribute in ("shape", "dtype"):
                    if getattr(new, attribute) != getattr(old, attribute):
                        raise ValueError(f"Incompatible {name}.{attribute}: expected {getattr(old, attribute)}, "
                                         f"got {getattr(new, attribute)}")
        if M is not None and self._M is not None and M is not self._M:
            for attribute in ("shape", "dtype"):
                if getattr(M, attribute) != getattr(self._M, attribute):
                    raise ValueError(f"Incompatible M.{attribute}: expected {getattr(self._M, attribute)}, "
                                     f"got {getattr(M, attribute)}")

    def __call__(self, A=None, b=None, x=None, M=None):
        """Run the solver, optionally on a new compatible matrix, right-hand side, solution vector or
        preconditioner; an argument left None uses the construction-time one."""
        A_op = aslinearoperator(A) if A is not None else self._A
        M_op = aslinearoperator(M) if M is not None else self._M
        b = b if b is not None else self._b
        x = x if x is not None else self._x
        self._check_compatible(A_op, b, x, M_op)
        return self._run(A_op, b, x, M_op)

    def _loop(self, do_cycle, r_norm_sq, atol_sq, cycle_size: int = 1):
        """Run `do_cycle` (cycle_size iterations each) until convergence or maxiter; Warp's return values."""
        if self._check_every > 0:
            return _run_with_host_checks(do_cycle, cycle_size, r_norm_sq, self._maxiter, atol_sq, self._callback,
                                         self._check_every, self._use_cuda_graph)
        return _run_on_device(do_cycle, cycle_size, self._iteration_and_condition, r_norm_sq, self._maxiter,
                              atol_sq, self._callback, self._use_cuda_graph)
