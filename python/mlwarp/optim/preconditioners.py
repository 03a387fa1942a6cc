"""`preconditioner(A, ptype)`: Warp 1.19's preconditioners as `LinearOperator`s.

- "diag" (Jacobi): the inverse of A's diagonal (a zero diagonal coefficient gives 1); "diag_abs" the inverse of
  its absolute values. From a dense matrix (2-D array) or a BSR matrix (of its diagonal blocks' diagonals).
- "block_jacobi_direct", "block_jacobi_sequential", "block_jacobi_tile": the inverse of the block diagonal of a
  square BSR matrix with square blocks (block_jacobi.py says how each inverts a block).
- "fsai": the adaptive factorized sparse approximate inverse of an SPD BSR matrix, with FSAI's defaults
  (fsai.py; construct `FSAI` directly to choose its sparsity or reuse it).
- "id": none (None).
"""

from __future__ import annotations

from typing import Any

from mlwarp.arrays.array import array, array2d, empty
from mlwarp.library.builtins import namespace as wp  # the builtins, spelt as in user code
from mlwarp.kernels.func import func
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.types import type_is_matrix, vector

from mlwarp.optim.block_jacobi import (
    BLOCK_JACOBI_STRATEGIES, block_diagonal, block_jacobi_block_size, block_jacobi_preconditioner,
)
from mlwarp.optim.fsai import FSAI
from mlwarp.optim.operators import LinearOperator, aslinearoperator, is_bsr_matrix


@func
def _inverse_diagonal_coefficient(coefficient: Any, use_abs: bool):
    zero = type(coefficient)(0.0)
    one = type(coefficient)(1.0)
    return wp.where(coefficient == zero, one, one / wp.where(use_abs, wp.abs(coefficient), coefficient))


@kernel(enable_backward=False)
def _inverse_dense_diagonal(A: array2d(dtype=Any), use_abs: int, inverse: array(dtype=Any)):
    i = wp.tid()
    inverse[i] = _inverse_diagonal_coefficient(A[i, i], use_abs != 0)


@kernel(enable_backward=False)
def _inverse_block_diagonals(blocks: array(dtype=Any), use_abs: int, inverse: array(dtype=Any)):
    """The inverses of the diagonal coefficients of each diagonal block, as a vector per block row."""
    i = wp.tid()
    d = wp.get_diag(blocks[i])
    for k in range(d.length):
        d[k] = _inverse_diagonal_coefficient(d[k], use_abs != 0)
    inverse[i] = d


@kernel(enable_backward=False)
def _inverse_scalar_diagonal(diagonal: array(dtype=Any), use_abs: int, inverse: array(dtype=Any)):
    i = wp.tid()
    inverse[i] = _inverse_diagonal_coefficient(diagonal[i], use_abs != 0)


def jacobi_preconditioner(A, use_abs: bool) -> LinearOperator:
    """The diagonal (Jacobi) preconditioner of a dense or BSR matrix."""
    if is_bsr_matrix(A):
        blocks = block_diagonal(A)
        if type_is_matrix(A.dtype):
            inverse = empty(shape=blocks.shape[0], device=A.device,
                               dtype=vector(length=A.block_shape[0], dtype=A.scalar_type))
            kernel = _inverse_block_diagonals
        else:
            inverse = empty(shape=blocks.shape[0], dtype=A.scalar_type, device=A.device)
            kernel = _inverse_scalar_diagonal
        launch(kernel, dim=inverse.shape[0], device=A.device, inputs=[blocks, int(use_abs), inverse])
    elif isinstance(A, array) and A.ndim == 2:
        inverse = empty(shape=A.shape[0], dtype=A.dtype, device=A.device)
        launch(_inverse_dense_diagonal, dim=A.shape[0], device=A.device, inputs=[A, int(use_abs), inverse])
    else:
        raise ValueError("Unsupported source matrix type for building diagonal preconditioner")
    return aslinearoperator(inverse)


def preconditioner(A, ptype: str = "diag") -> LinearOperator | None:
    """A preconditioner of the matrix `A` (Warp's `warp.optim.linear.preconditioner`).

    Args:
        A: the matrix to precondition: a dense 2-D array or a BSR matrix.
        ptype: "diag" (Jacobi), "diag_abs" (Jacobi with absolute diagonal values), "block_jacobi_direct",
            "block_jacobi_sequential", "block_jacobi_tile" (block Jacobi of a square BSR matrix with square
            blocks; a 1x1-block matrix gets "diag"), "fsai" (factorized sparse approximate inverse of an SPD BSR
            matrix, `FSAI(A)`) or "id" (none: returns None).

    Returns:
        A `LinearOperator` applying the preconditioner, or None for "id".
    """
    if ptype == "fsai":
        return FSAI(A)
    if ptype == "id":
        return None
    if ptype in ("diag", "diag_abs"):
        return jacobi_preconditioner(A, use_abs=ptype == "diag_abs")
    if ptype in BLOCK_JACOBI_STRATEGIES:
        if block_jacobi_block_size(A) == 1:  # a CSR matrix: block Jacobi is Jacobi
            return jacobi_preconditioner(A, use_abs=False)
        return block_jacobi_preconditioner(A, BLOCK_JACOBI_STRATEGIES[ptype])
    raise ValueError(f"Unsupported preconditioner type '{ptype}'")
