"""warp.sparse for mlwarp (`import mlwarp.sparse`, or `wp.sparse`): block sparse row (BSR) matrices, and CSR ones
(scalar blocks), with Warp 1.19's API: construction from triplets, copies, transposes, diagonals, sums, products
with matrices and vectors, compact / masked / padded topologies. Every operation runs as mlwarp kernels on the
matrix's device (the one host step is wp.utils.radix_sort_pairs' sort of block coordinates).

matrix.py: the matrix type and allocation; funcs.py: the kernel-side lookups; topology.py: building topologies;
triplets.py: from COO triplets and compression; assign.py: copies, transposes, diagonals, scaling;
products.py: axpy, mm, mv; expressions.py: the operators."""

from mlwarp.sparse import expressions as _expressions  # noqa: F401  (attaches BsrMatrix's operators)
from mlwarp.sparse.assign import (
    bsr_assign, bsr_copy, bsr_diag, bsr_get_diag, bsr_identity, bsr_scale, bsr_set_diag, bsr_set_identity,
    bsr_set_transpose, bsr_transposed,
)
from mlwarp.sparse.funcs import bsr_block_index, bsr_row_index
from mlwarp.sparse.matrix import (
    BSR_STATUS_ROW_CAPACITY_EXCEEDED, BSR_STATUS_SUCCESS, BsrMatrix, bsr_matrix_t, bsr_set_zero, bsr_zeros,
)
from mlwarp.sparse.products import bsr_axpy, bsr_axpy_work_arrays, bsr_mm, bsr_mm_work_arrays, bsr_mv
from mlwarp.sparse.triplets import (
    BsrTripletMap, bsr_compress, bsr_from_triplets, bsr_set_from_mapped_values, bsr_set_from_triplets,
)

__all__ = [
    "BSR_STATUS_ROW_CAPACITY_EXCEEDED", "BSR_STATUS_SUCCESS", "BsrMatrix", "BsrTripletMap", "bsr_assign",
    "bsr_axpy", "bsr_axpy_work_arrays", "bsr_block_index", "bsr_compress", "bsr_copy", "bsr_diag",
    "bsr_from_triplets", "bsr_get_diag", "bsr_identity", "bsr_matrix_t", "bsr_mm", "bsr_mm_work_arrays", "bsr_mv",
    "bsr_row_index", "bsr_scale", "bsr_set_diag", "bsr_set_from_mapped_values", "bsr_set_from_triplets",
    "bsr_set_identity", "bsr_set_transpose", "bsr_set_zero", "bsr_transposed", "bsr_zeros",
]
