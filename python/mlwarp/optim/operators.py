"""`LinearOperator` and `aslinearoperator`: the left-hand sides (and preconditioners) of the linear solvers, as
Warp 1.19 defines them. An operator is a shape, a dtype, a device and a generalized product
`matvec(x, y, z, alpha, beta)`: z = alpha * (A @ x) + beta * y, with z allowed to alias y and, when beta is 0, y
never read.

`aslinearoperator` wraps a dense matrix (a 2-D array), a diagonal (a 1-D array of scalars, vectors, or of
matrices: a block diagonal) or a sparse BSR matrix. BSR matrices are recognized by Warp's BsrMatrix interface
(nrow, ncol, block_shape, values, offsets, columns) and multiplied by `bsr_mv` of mlwarp.sparse.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from mlwarp.arrays.array import array, array1d, array2d, copy
from mlwarp.library.builtins import namespace as wp  # the builtins, spelt as in user code
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.types import type_is_vector, type_scalar_type

from mlwarp.optim.views import scalar_view

_BSR_ATTRIBUTES = ("nrow", "ncol", "block_shape", "values", "offsets", "columns")


class LinearOperator:
    """Linear operator to be used as left-hand-side of linear iterative solvers (Warp's
    `warp.optim.linear.LinearOperator`).

    Args:
        shape: (rows, columns) of the operator.
        dtype: type of the operator's elements (a scalar, or a matrix block type).
        device: device on which products with the operator run.
        matvec: `matvec(x, y, z, alpha, beta)` stores `alpha * (A @ x) + beta * y` in `z`.
        batch_offsets: optional array of B+1 offsets splitting the scalar degrees of freedom into B independent
            subproblems (offsets of vector arrays aligned to the vector length); scalars at or past the last
            offset are inactive. None: a single problem.
        max_batch_length: optional upper bound on a subproblem's scalar count (requires batch_offsets).
    """

    def __init__(self, shape: tuple[int, int], dtype: type, device, matvec: Callable, batch_offsets=None,
                 max_batch_length: int | None = None):
        if max_batch_length is not None:
            if batch_offsets is None:
                raise ValueError("max_batch_length requires batch_offsets")
            if max_batch_length < 0:
                raise ValueError("max_batch_length must be non-negative")
        self._shape = shape
        self._dtype = dtype
        self._device = device
        self._matvec = matvec
        self._batch_offsets = batch_offsets
        self._max_batch_length = max_batch_length

    @property
    def shape(self) -> tuple[int, int]:
        """Rows and columns of the operator (an operator of a 1-D diagonal array keeps that array's shape)."""
        return self._shape

    @property
    def dtype(self) -> type:
        """Type of the operator's elements."""
        return self._dtype

    @property
    def device(self):
        """Device on which products with the operator run."""
        return self._device

    @property
    def matvec(self) -> Callable:
        """`matvec(x, y, z, alpha, beta)`: z = alpha * (A @ x) + beta * y."""
        return self._matvec

    @property
    def scalar_type(self):
        """Scalar type of the operator's elements."""
        return type_scalar_type(self.dtype)

    @property
    def batch_offsets(self):
        """Offsets of the subproblems' scalar degrees of freedom, or None."""
        return self._batch_offsets

    @property
    def batch_count(self) -> int:
        """Number of independent subproblems (1 without batch_offsets)."""
        return 1 if self._batch_offsets is None else self._batch_offsets.shape[0] - 1

    @property
    def max_batch_length(self) -> int | None:
        """Upper bound on a subproblem's scalar count, or None."""
        return self._max_batch_length


@kernel(enable_backward=False)
def _dense_mv(A: array2d(dtype=Any), x: array1d(dtype=Any), y: array1d(dtype=Any),
              z: array1d(dtype=Any), alpha: Any, beta: Any):
    row = wp.tid()
    zero = type(alpha)(0)
    s = z.dtype(zero)
    if alpha != zero:
        for col in range(A.shape[1]):
            s += A[row, col] * x[col]
        s = alpha * s
    if beta != zero:
        s += beta * y[row]
    z[row] = s


@kernel(enable_backward=False)
def _diag_mv(A: array(dtype=Any), x: array(dtype=Any), y: array(dtype=Any), z: array(dtype=Any),
             alpha: Any, beta: Any):
    i = wp.tid()
    zero = type(alpha)(0)
    s = z.dtype(zero)
    if alpha != zero:
        s += alpha * (A[i] * x[i])
    if beta != zero:
        s += beta * y[i]
    z[i] = s


def is_bsr_matrix(A) -> bool:
    """Whether `A` has Warp's BsrMatrix interface."""
    return all(hasattr(A, name) for name in _BSR_ATTRIBUTES)


def _bsr_mv():
    """mlwarp.sparse's bsr_mv: BSR operators multiply through it (imported on first use; the package is optional
    for dense and diagonal operators)."""
    try:
        sparse = importlib.import_module("mlwarp.sparse")
    except ModuleNotFoundError as error:
        raise RuntimeError("products with a sparse BSR matrix need mlwarp.sparse (bsr_mv), which is not "
                           "available") from error
    return sparse.bsr_mv


def _dense_operator(A, batch_offsets, max_batch_length):
    scalar = type_scalar_type(A.dtype)

    def dense_mv(x, y, z, alpha, beta):
        launch(_dense_mv, dim=A.shape[0], device=A.device,
                  inputs=[A, x, y, z, scalar(alpha), scalar(beta)])

    return LinearOperator(A.shape, A.dtype, A.device, dense_mv, batch_offsets, max_batch_length)


def _diagonal_operator(A, batch_offsets, max_batch_length):
    scalar = type_scalar_type(A.dtype)
    # a diagonal of vectors is the diagonal of their scalars; one of matrices is block diagonal
    as_operand = scalar_view if type_is_vector(A.dtype) else (lambda array: array)
    diagonal = as_operand(A)

    def diag_mv(x, y, z, alpha, beta):
        launch(_diag_mv, dim=diagonal.shape, device=A.device,
                  inputs=[diagonal, as_operand(x), as_operand(y), as_operand(z), scalar(alpha), scalar(beta)])

    return LinearOperator(A.shape, A.dtype, A.device, diag_mv, batch_offsets, max_batch_length)


def _bsr_operator(A, batch_offsets, max_batch_length):
    def bsr_mv(x, y, z, alpha, beta):
        if z.ptr != y.ptr and beta != 0.0:
            copy(src=y, dest=z)
        _bsr_mv()(A, x, z, alpha, beta)

    return LinearOperator(A.shape, A.dtype, A.device, bsr_mv, batch_offsets, max_batch_length)


def aslinearoperator(A, batch_offsets=None, max_batch_length: int | None = None) -> LinearOperator:
    """Cast the dense or sparse matrix `A` as a `LinearOperator`.

    `A` may be a sparse BSR matrix, a 2-D array (a dense matrix), a 1-D array (a diagonal matrix) or already a
    `LinearOperator` (returned as is; batch_offsets and max_batch_length are then ignored). None gives None.

    Args:
        A: the matrix to wrap.
        batch_offsets: optional offsets splitting the degrees of freedom into independent subproblems (see
            `LinearOperator`).
        max_batch_length: optional upper bound on a subproblem's scalar count (requires batch_offsets).
    """
    if A is None or isinstance(A, LinearOperator):
        return A
    if isinstance(A, array):
        if A.ndim == 2:
            return _dense_operator(A, batch_offsets, max_batch_length)
        if A.ndim == 1:
            return _diagonal_operator(A, batch_offsets, max_batch_length)
    elif is_bsr_matrix(A):
        return _bsr_operator(A, batch_offsets, max_batch_length)
    raise ValueError(f"Unable to create LinearOperator from {A}")
