"""Block-Jacobi preconditioners of a square BSR matrix with square blocks (Warp 1.19's "block_jacobi_*"): z =
alpha * blockdiag(A)^-1 x + beta * y, with each diagonal block inverted once, on the device, in one of three ways:

- "direct": an explicit inverse from a Householder QR factorization (any block);
- "sequential": a packed L D L^T factorization, applied by two triangular solves (symmetric positive-definite
  blocks);
- "tile": a Cholesky factorization per block with tile operations (wp.tile_cholesky; float32/float64, SPD).

A block that cannot be factorized that way (numerically singular for "direct"; not symmetric, or not positive
definite for "sequential"; not symmetric for "tile") is replaced by the identity, so the preconditioner stays
defined. A pivot counts as singular when it is not finite or at most a dtype-dependent relative tolerance (about
eps^(3/4)) times the block's largest pivot (or diagonal coefficient): rounding leaves a tiny nonzero pivot on a
rank-deficient block, which an exact-zero test would divide by.

The kernels are made per block size (its loops and matrix types are fixed at compile time).
"""

from __future__ import annotations

import functools
from typing import Any

from mlwarp.arrays.array import array, array2d, empty, empty_like
from mlwarp.library.builtins import namespace as wp  # the builtins, spelt as in user code
from mlwarp.kernels.func import func
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.library.tiles import (
    launch_tiled, tile_cholesky, tile_cholesky_solve_inplace, tile_load, tile_store, tile_zeros
)
from mlwarp.types import float16, float32, float64
from mlwarp.core.vector import identity

from mlwarp.optim.operators import LinearOperator, is_bsr_matrix
from mlwarp.optim.views import scalar_view, vector_view

BLOCK_JACOBI_STRATEGIES = {"block_jacobi_direct": "direct", "block_jacobi_sequential": "sequential",
                           "block_jacobi_tile": "tile"}

_PIVOT_RELATIVE_TOLERANCE = {float16: 1.0e-3, float32: 1.0e-6, float64: 1.0e-12}


@kernel(enable_backward=False)
def _diagonal_blocks(offsets: array(dtype=int), columns: array(dtype=int), values: array(dtype=Any),
                     blocks: array(dtype=Any)):
    """blocks[i] = A's block (i, i), zero where the matrix stores none."""
    row = wp.tid()
    block = blocks.dtype(0.0)
    for slot in range(offsets[row], offsets[row + 1]):
        if columns[slot] == row:
            block = values[slot]
            break
    blocks[row] = block


def block_diagonal(A):
    """The diagonal blocks of the BSR matrix `A`, one per block row of its leading square part."""
    count = min(A.nrow, A.ncol)
    blocks = empty(count, dtype=A.values.dtype, device=A.device)
    launch(_diagonal_blocks, dim=count, device=A.device, inputs=[A.offsets, A.columns, A.values, blocks])
    return blocks


def block_jacobi_block_size(A) -> int:
    """The block size of `A` after Warp's checks of a block-Jacobi preconditioner's matrix."""
    if not is_bsr_matrix(A):
        raise ValueError("Block-Jacobi preconditioner requires a warp.sparse.BsrMatrix input")
    block_shape = tuple(A.block_shape)
    if block_shape[0] != block_shape[1]:
        raise ValueError(f"Block-Jacobi preconditioner requires square matrix blocks, got shape {block_shape}")
    if A.nrow != A.ncol:
        raise ValueError(f"Block-Jacobi preconditioner requires the same number of block rows and block columns, "
                         f"got {A.nrow} block rows and {A.ncol} block columns (overall shape {A.shape})")
    return block_shape[0]


@functools.cache
def _factorization_kernels(n: int):
    """(QR inverse, LDL^T factorization, symmetry flags, inverse product, LDL^T product) for n x n blocks."""

    @func
    def is_symmetric(A: Any, rel_tol: Any):
        max_diag = A.dtype(0.0)
        for j in range(n):
            max_diag = wp.max(max_diag, wp.abs(A[j, j]))
        symmetric = bool(True)
        for j in range(n):
            for i in range(j + 1, n):
                if wp.abs(A[i, j] - A[j, i]) > rel_tol * max_diag:
                    symmetric = False
        return symmetric

    @func
    def qr_inverse(A: Any, rel_tol: Any):
        """A^-1 from A = Q R (Householder reflections), or the identity when a pivot of R is singular."""
        zero = A.dtype(0.0)
        two = A.dtype(2.0)
        R = A
        Q = identity(n=n, dtype=A.dtype)
        for i in range(n):
            u = type(A[0])()
            for k in range(i, n):
                u[k] = R[k, i]
            alpha = wp.length(u) * wp.sign(u[i])
            u[i] += alpha
            scale = wp.where(alpha == zero, zero, two / wp.length_sq(u))
            R -= wp.outer(scale * u, u * R)  # R = (I - scale u u^T) R
            Q -= wp.outer(Q * u, scale * u)  # Q = Q (I - scale u u^T)
        max_pivot = zero
        for j in range(n):
            max_pivot = wp.max(max_pivot, wp.abs(R[j, j]))
        singular = bool(False)
        for j in range(n):
            if not wp.isfinite(R[j, j]) or wp.abs(R[j, j]) <= rel_tol * max_pivot:
                singular = True
        if singular:
            return identity(n=n, dtype=A.dtype)
        # A^-1 = R^-1 Q^T: column c of it solves R x = (row c of Q)
        inverse_transposed = type(A)()
        for c in range(n):
            qc = Q[c]
            x = type(A[0])()
            for row_plus_one in range(n, 0, -1):
                row = row_plus_one - 1
                x[row] = (qc[row] - wp.dot(R[row], x)) / R[row, row]
            inverse_transposed[c] = x
        return wp.transpose(inverse_transposed)

    @func
    def ldlt(A: Any, rel_tol: Any):
        """A = L D L^T packed as M (M[i, i] = D[i], M[i, j] = L[i, j] below the diagonal), or the identity."""
        zero = A.dtype(0.0)
        if not is_symmetric(A, rel_tol):
            return identity(n=n, dtype=A.dtype)
        max_diag = zero
        for j in range(n):
            max_diag = wp.max(max_diag, wp.abs(A[j, j]))
        M = type(A)()
        positive_definite = bool(True)
        for j in range(n):
            d = A[j, j]
            for k in range(j):
                d -= M[j, k] * M[j, k] * M[k, k]
            if not wp.isfinite(d) or d <= rel_tol * max_diag:
                positive_definite = False
                break
            M[j, j] = d
            for i in range(j + 1, n):
                s = A[i, j]
                for k in range(j):
                    s -= M[i, k] * M[j, k] * M[k, k]
                M[i, j] = s / d
        if not positive_definite:
            return identity(n=n, dtype=A.dtype)
        return M

    @func
    def ldlt_solve(M: Any, b: Any):
        """(L D L^T)^-1 b from the packed factors M."""
        y = type(b)()
        for i in range(n):
            s = b[i]
            for j in range(i):
                s -= M[i, j] * y[j]
            y[i] = s
        x = type(b)()
        for i_plus_one in range(n, 0, -1):
            i = i_plus_one - 1
            s = y[i] / M[i, i]
            for j in range(i + 1, n):
                s -= M[j, i] * x[j]
            x[i] = s
        return x

    @kernel(enable_backward=False, module="unique")
    def invert_blocks(blocks: array(dtype=Any), rel_tol: Any, inverses: array(dtype=Any)):
        i = wp.tid()
        inverses[i] = qr_inverse(blocks[i], rel_tol)

    @kernel(enable_backward=False, module="unique")
    def factorize_blocks(blocks: array(dtype=Any), rel_tol: Any, factors: array(dtype=Any)):
        i = wp.tid()
        factors[i] = ldlt(blocks[i], rel_tol)

    @kernel(enable_backward=False, module="unique")
    def symmetric_or_identity(blocks: array(dtype=Any), rel_tol: Any, out: array(dtype=Any)):
        """Cholesky reads one triangle: a non-symmetric block would be silently misread, so it becomes I."""
        i = wp.tid()
        block = blocks[i]
        if not is_symmetric(block, rel_tol):
            block = identity(n=n, dtype=block.dtype)
        out[i] = block

    @kernel(enable_backward=False, module="unique")
    def apply_inverses(inverses: array(dtype=Any), x: array(dtype=Any), y: array(dtype=Any),
                       z: array(dtype=Any), alpha: Any, beta: Any):
        i = wp.tid()
        zero = type(alpha)(0.0)
        s = z.dtype(zero)
        if alpha != zero:
            s = alpha * (inverses[i] * x[i])
        if beta != zero:
            s += beta * y[i]
        z[i] = s

    @kernel(enable_backward=False, module="unique")
    def apply_factors(factors: array(dtype=Any), x: array(dtype=Any), y: array(dtype=Any),
                      z: array(dtype=Any), alpha: Any, beta: Any):
        i = wp.tid()
        zero = type(alpha)(0.0)
        s = z.dtype(zero)
        if alpha != zero:
            s = alpha * ldlt_solve(factors[i], x[i])
        if beta != zero:
            s += beta * y[i]
        z[i] = s

    return invert_blocks, factorize_blocks, symmetric_or_identity, apply_inverses, apply_factors


@functools.cache
def _tile_kernels(n: int):
    """(factorize, solve) of n x n SPD blocks with tile Cholesky, one block per tile."""

    @kernel(enable_backward=False, module="unique")
    def factorize(A_flat: array2d(dtype=Any), L_flat: array2d(dtype=Any)):
        i = wp.tid()
        A = tile_load(A_flat, shape=(n, n), offset=(i * n, 0))
        tile_store(L_flat, tile_cholesky(A), offset=(i * n, 0))

    @kernel(enable_backward=False, module="unique")
    def solve(L_flat: array2d(dtype=Any), x: array(dtype=Any), y: array(dtype=Any),
              z: array(dtype=Any), alpha: Any, beta: Any):
        i = wp.tid()
        zero = type(alpha)(0.0)
        L = tile_load(L_flat, shape=(n, n), offset=(i * n, 0))
        if alpha == zero:
            out = tile_zeros(shape=(n,), dtype=x.dtype)
        else:
            rhs = tile_load(x, shape=(n,), offset=(i * n,))
            tile_cholesky_solve_inplace(L, rhs)
            out = rhs * alpha
        if beta != zero:
            out += tile_load(y, shape=(n,), offset=(i * n,)) * beta
        tile_store(z, out, offset=(i * n,))

    return factorize, solve


def block_jacobi_preconditioner(A, strategy: str) -> LinearOperator:
    """The block-Jacobi preconditioner of the BSR matrix `A` (blocks larger than 1x1) by `strategy`."""
    n = block_jacobi_block_size(A)
    scalar = A.scalar_type
    if strategy == "tile" and scalar not in (float32, float64):
        raise ValueError(f"'block_jacobi_tile' preconditioner requires a float32 or float64 scalar type, got "
                         f"{scalar.__name__}")
    device = A.device
    blocks = block_diagonal(A)
    count = blocks.shape[0]
    rel_tol = scalar(_PIVOT_RELATIVE_TOLERANCE.get(scalar, 1.0e-6))
    invert_blocks, factorize_blocks, symmetric_or_identity, apply_inverses, apply_factors = _factorization_kernels(n)

    if strategy == "tile":
        symmetric_blocks = empty_like(blocks)
        launch(symmetric_or_identity, dim=count, device=device, inputs=[blocks, rel_tol, symmetric_blocks])
        factors = empty((count * n, n), dtype=scalar, device=device)
        factorize, solve = _tile_kernels(n)
        launch_tiled(factorize, dim=[count], device=device, block_dim=32,
                     inputs=[symmetric_blocks.view(scalar).reshape((count * n, n)), factors])

        def matvec(x, y, z, alpha, beta):
            launch_tiled(solve, dim=[count], device=device, block_dim=32,
                         inputs=[factors, scalar_view(x), scalar_view(y), scalar_view(z), scalar(alpha),
                                 scalar(beta)])
    else:
        factors = empty_like(blocks)
        factorize_kernel, apply = ((invert_blocks, apply_inverses) if strategy == "direct"
                                   else (factorize_blocks, apply_factors))
        launch(factorize_kernel, dim=count, device=device, inputs=[blocks, rel_tol, factors])

        def matvec(x, y, z, alpha, beta):
            launch(apply, dim=count, device=device,
                      inputs=[factors, *(vector_view(scalar_view(v), n) for v in (x, y, z)), scalar(alpha),
                              scalar(beta)])

    return LinearOperator((count * n, count * n), A.dtype, device, matvec)
