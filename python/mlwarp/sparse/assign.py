"""Copies and rearrangements of whole matrices: `bsr_assign` and `bsr_copy` (other scalar types and block
shapes), `bsr_set_transpose` and `bsr_transposed`, the diagonal (`bsr_get_diag`, `bsr_set_diag`, `bsr_diag`,
`bsr_set_identity`, `bsr_identity`) and `bsr_scale`.

New topologies come from topology.build_compact (padded destinations through scatter_into_capacity); values
are then moved by differentiable kernels, one thread per block coefficient, so a Tape carries gradients
through copies, transposes and scalings."""

from typing import Any

import numpy as np

from mlwarp.core import types as wt
from mlwarp.core.vector import matrix
from mlwarp.arrays.array import array, array3d, copy, empty, zeros
from mlwarp.library.builtins import namespace as wp  # wp.tid, wp.min: the builtins, spelt as in user code
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.utils import array_scan
from mlwarp.sparse.funcs import bsr_block_index, bsr_row_index
from mlwarp.sparse.matrix import (
    BsrMatrix, block_type_of, bsr_set_zero, bsr_zeros, check_topology, ensure_fits, ensure_row_counts, host_scalar,
    matrix_and_scale, resize, scalar_view, set_compact,
)
from mlwarp.sparse.topology import (
    CoordinateList, build_compact, list_block_coordinates, scatter_into_capacity, snapshot,
)


@kernel
def _copy_blocks(scale: Any, src_subrows: int, src_subcols: int, dest_subrows: int, dest_subcols: int,
                 src_row_count: int, src_offsets: array(dtype=int), src_row_counts: array(dtype=int),
                 src_columns: array(dtype=int), src_values: array3d(dtype=Any), dest_offsets: array(dtype=int),
                 dest_row_counts: array(dtype=int), dest_columns: array(dtype=int), dest_values: array3d(dtype=Any)):
    # one thread per (source block, sub-block): its piece, scaled and cast, into the destination block holding it
    src_block, subrow, subcol = wp.tid()
    src_row = bsr_row_index(src_offsets, src_row_count, src_block, src_row_counts)
    if src_row == -1:
        return
    dest_subrow = src_row * src_subrows + subrow
    dest_subcol = src_columns[src_block] * src_subcols + subcol
    dest_row = dest_subrow // dest_subrows
    dest_col = dest_subcol // dest_subcols
    dest_block = bsr_block_index(dest_row, dest_col, dest_offsets, dest_columns, dest_row_counts)
    if dest_block == -1:
        return
    piece_rows = src_values.shape[1] // src_subrows
    piece_cols = src_values.shape[2] // src_subcols
    dest_i = (dest_subrow - dest_subrows * dest_row) * piece_rows
    dest_j = (dest_subcol - dest_subcols * dest_col) * piece_cols
    src_i = subrow * piece_rows
    src_j = subcol * piece_cols
    for i in range(piece_rows):
        for j in range(piece_cols):
            dest_values[dest_block, dest_i + i, dest_j + j] = dest_values.dtype(
                scale * src_values[src_block, src_i + i, src_j + j])


@kernel
def _copy_active_values(scale: Any, row_count: int, offsets: array(dtype=int), row_counts: array(dtype=int),
                        src_values: array3d(dtype=Any), dest_values: array3d(dtype=Any)):
    block, i, j = wp.tid()
    if bsr_row_index(offsets, row_count, block, row_counts) != -1:
        dest_values[block, i, j] = dest_values.dtype(scale * src_values[block, i, j])


@kernel
def _transpose_values(row_count: int, scale: Any, src_offsets: array(dtype=int), src_row_counts: array(dtype=int),
                      src_columns: array(dtype=int), src_values: array3d(dtype=Any), slot_blocks: array(dtype=int),
                      block_sources: array(dtype=int), offsets: array(dtype=int), row_counts: array(dtype=int),
                      columns: array(dtype=int), values: array3d(dtype=Any)):
    # one thread per destination coefficient; its source block from the build (through the padded slot's compact
    # block), or looked up (masked)
    block, i, j = wp.tid()
    row = bsr_row_index(offsets, row_count, block, row_counts)
    if row == -1:
        return
    src_block = int(-1)
    if block_sources:
        compact = block
        if slot_blocks:
            compact = slot_blocks[block]
        if compact < 0:
            return
        src_block = block_sources[compact]
    else:
        src_block = bsr_block_index(columns[block], row, src_offsets, src_columns, src_row_counts)
        if src_block == -1:
            return
    values[block, i, j] = src_values[src_block, j, i] * scale


@kernel
def _get_diag(scale: Any, offsets: array(dtype=int), row_counts: array(dtype=int), columns: array(dtype=int),
              values: array3d(dtype=Any), out: array3d(dtype=Any)):
    row, i, j = wp.tid()
    block = bsr_block_index(row, row, offsets, columns, row_counts)
    if block != -1:
        out[row, i, j] = scale * values[block, i, j]


@kernel(enable_backward=False)
def _set_diag_topology(nnz: int, offsets: array(dtype=int), columns: array(dtype=int)):
    row = wp.tid()
    offsets[row] = wp.min(row, nnz)
    if row < nnz:
        columns[row] = row


@kernel
def _scale_values(alpha: Any, values: array3d(dtype=Any)):
    block, i, j = wp.tid()
    values[block, i, j] = alpha * values[block, i, j]


@kernel(enable_backward=False)
def _reblocked_capacity(src_subrows: int, src_subcols: int, dest_subrows: int, src_row_count: int,
                        src_offsets: array(dtype=int), dest_offsets: array(dtype=int)):
    # a destination row's capacity: the storage of the source rows it covers, each block split src_subcols ways
    dest_row = wp.tid()
    if dest_row == 0:
        dest_offsets[0] = 0
    first = dest_row * dest_subrows
    src_end = wp.min(src_row_count, (first + dest_subrows + src_subrows - 1) // src_subrows)
    capacity = int(0)
    for src_row in range(first // src_subrows, src_end):
        capacity += (src_offsets[src_row + 1] - src_offsets[src_row]) * src_subcols
    dest_offsets[dest_row + 1] = capacity


def _reblocking(src_shape: tuple, dest_shape: tuple, src_nrow: int, src_ncol: int, total_shape: tuple):
    """(src_subrows, dest_subrows), (src_subcols, dest_subcols) and the destination's rows and columns of
    blocks: a source block splits into src_sub pieces, a destination block gathers dest_sub of them."""
    subs = []
    for axis, what in ((0, "rows"), (1, "columns")):
        if src_shape[axis] >= dest_shape[axis]:
            pair = (src_shape[axis] // dest_shape[axis], 1)
        else:
            pair = (1, dest_shape[axis] // src_shape[axis])
        if pair[0] * dest_shape[axis] != src_shape[axis] * pair[1]:
            raise ValueError(f"Incompatible dest and src block shapes; block {what} must evenly divide one another "
                             f"(Got {dest_shape[axis]}, {src_shape[axis]})")
        subs.append(pair)
    dest_nrow = (src_nrow * subs[0][0]) // subs[0][1]
    dest_ncol = (src_ncol * subs[1][0]) // subs[1][1]
    if src_nrow * subs[0][0] != dest_nrow * subs[0][1] or src_ncol * subs[1][0] != dest_ncol * subs[1][1]:
        raise ValueError(f"The requested block shape {tuple(dest_shape)} does not evenly divide the source matrix "
                         f"of total size {tuple(total_shape)}")
    return subs[0], subs[1], dest_nrow, dest_ncol


def _copy_values(dest, src, scale, subrows, subcols) -> None:
    dest.values.zero_()
    if src.nnz > 0:
        launch(_copy_blocks, dim=(src.nnz, subrows[0], subcols[0]), device=dest.device,
               inputs=[src.scalar_type(host_scalar(scale)), subrows[0], subcols[0], subrows[1], subcols[1], src.nrow,
                       src.offsets, src.row_counts, src.columns, src.scalar_values, dest.offsets, dest.row_counts,
                       dest.columns, dest.scalar_values])


def assign_padded(dest, src, scale, subrows, subcols, structure_only) -> None:
    """`src` (reblocked) into `dest`'s row capacity."""
    ensure_row_counts(dest)
    count = src.nnz * subrows[0] * subcols[0]
    coords = CoordinateList(count, dest.nrow, dest.ncol, dest.device)
    list_block_coordinates(coords, 0, src, subrows, subcols)
    compact_offsets = empty(shape=(dest.nrow + 1,), dtype=int, device=dest.device)
    compact_columns = empty(shape=(max(count, 1),), dtype=int, device=dest.device)
    build_compact(coords, compact_offsets, compact_columns)
    scatter_into_capacity(dest, compact_offsets, compact_columns)
    if not structure_only:
        _copy_values(dest, src, scale, subrows, subcols)


def bsr_assign(dest: BsrMatrix, src, structure_only: bool = False, topology: str | None = None) -> None:
    """Copies `src` (a matrix or scaled matrix) into `dest`, whose block shape may split or merge `src`'s blocks
    (each dimension a multiple or divisor) and whose scalar type may differ (values are cast).

    `structure_only`: only the topology (values left uninitialized). `topology`: "compact" (rebuild), "masked"
    (keep `dest`'s blocks, take `src`'s values where they fall), "padded" (into `dest`'s row capacity; overflow
    sets `dest.status_sync()`)."""
    src, scale = matrix_and_scale(src)
    if dest.values.device != src.values.device:
        raise ValueError("Source and destination matrices must reside on the same device")
    topology = check_topology(topology)
    subrows, subcols, dest_nrow, dest_ncol = _reblocking(src.block_shape, dest.block_shape, src.nrow, src.ncol,
                                                         src.shape)
    if topology != "compact" and (dest_nrow != dest.nrow or dest_ncol != dest.ncol):
        raise ValueError(f"Incompatible destination matrix size, expected ({dest_nrow}, {dest_ncol}), got "
                         f"({dest.nrow}, {dest.ncol})")
    if dest is src and topology != "masked":
        if topology == "padded":
            dest.ensure_status()
        if not structure_only and host_scalar(scale) != 1.0:
            bsr_scale(dest, scale)
        return
    if topology == "padded":
        dest.ensure_status()
        assign_padded(dest, src, scale, subrows, subcols, structure_only)
        return
    if topology == "compact":
        resize(dest, rows_of_blocks=dest_nrow, cols_of_blocks=dest_ncol)
        count = src.nnz * subrows[0] * subcols[0]
        ensure_fits(dest, nnz=count)
        coords = CoordinateList(count, dest.nrow, dest.ncol, dest.device)
        list_block_coordinates(coords, 0, src, subrows, subcols)
        build_compact(coords, dest.offsets, dest.columns)
        set_compact(dest)
    if not structure_only:
        _copy_values(dest, src, scale, subrows, subcols)


def bsr_copy(A, scalar_type=None, block_shape: tuple | None = None, structure_only: bool = False,
             topology: str = "compact") -> BsrMatrix:
    """A copy of `A` (a matrix or scaled matrix), optionally with another scalar type or block shape (see
    `bsr_assign`). "compact" packs the copy; "padded" keeps the row capacity (reblocked: a destination row gets
    the capacity of the source rows it covers)."""
    src, scale = matrix_and_scale(A)
    check_topology(topology, ("compact", "padded"))
    scalar_type = src.scalar_type if scalar_type is None else wt.type_to_warp(scalar_type)
    block_shape = tuple(src.block_shape if block_shape is None else block_shape)
    block_type = block_type_of(scalar_type, block_shape)
    if topology == "compact":
        result = bsr_zeros(src.nrow, src.ncol, block_type=block_type, device=src.device)
        result.values.requires_grad = src.requires_grad
        bsr_assign(dest=result, src=A, structure_only=structure_only, topology="compact")
        return result

    subrows, subcols, nrow, ncol = _reblocking(src.block_shape, block_shape, src.nrow, src.ncol, src.shape)
    result = bsr_zeros(nrow, ncol, block_type=block_type, device=src.device)
    result.values.requires_grad = src.requires_grad
    result.ensure_status()
    if block_shape == tuple(src.block_shape):
        ensure_fits(result, nnz=src.nnz)
        copy(result.offsets, src.offsets, count=src.nrow + 1)
        if src.nnz > 0:
            copy(result.columns, src.columns, count=src.nnz)
        ensure_row_counts(result, preserve=src.row_counts is None)
        if src.row_counts is not None and src.nrow > 0:
            copy(result.row_counts, src.row_counts, count=src.nrow)
        if not structure_only and src.nnz > 0:
            launch(_copy_active_values, dim=(src.nnz, *block_shape), device=src.device,
                   inputs=[src.scalar_type(host_scalar(scale)), src.nrow, src.offsets, src.row_counts,
                           src.scalar_values, result.scalar_values])
        return result
    ensure_fits(result, nnz=src.nnz * subrows[0] * subcols[0])
    if nrow > 0:
        launch(_reblocked_capacity, dim=nrow, device=src.device,
               inputs=[subrows[0], subcols[0], subrows[1], src.nrow, src.offsets, result.offsets], record_tape=False)
        array_scan(result.offsets[:nrow + 1], result.offsets[:nrow + 1], inclusive=True)
    ensure_row_counts(result, preserve=False)
    assign_padded(result, src, scale, subrows, subcols, structure_only)
    return result


def bsr_set_transpose(dest: BsrMatrix, src, topology: str | None = None) -> None:
    """Sets `dest` to the transpose of `src` (a matrix or scaled matrix): blocks transposed, their order within a
    row that of `src`'s rows. `topology`: "compact", "masked" (keep `dest`'s blocks) or "padded" (into `dest`'s
    row capacity; overflow sets `dest.status_sync()`)."""
    src, scale = matrix_and_scale(src)
    topology = check_topology(topology)
    if dest.values.device != src.values.device:
        raise ValueError(f"All arguments must reside on the same device, got {dest.values.device} and "
                         f"{src.values.device}")
    if dest.scalar_type != src.scalar_type:
        raise ValueError(f"All arguments must have the same scalar type, got {dest.scalar_type} and "
                         f"{src.scalar_type}")
    transposed_shape = tuple(src.block_shape)[::-1]
    if tuple(dest.block_shape) != transposed_shape:
        raise ValueError(f"Destination block shape must be {transposed_shape}, got {tuple(dest.block_shape)}")
    if topology != "compact" and (dest.nrow != src.ncol or dest.ncol != src.nrow):
        raise ValueError(f"Destination matrix must have {src.ncol} rows and {src.nrow} columns, got {dest.nrow} "
                         f"and {dest.ncol}")
    scale = dest.scalar_type(host_scalar(scale))
    device = dest.device
    if dest is src:
        src = snapshot(src)  # rewritten below while read
    src_values = scalar_view(src.values)

    if topology == "masked":
        dest.values.zero_()
        slot_blocks = block_sources = None
    else:
        if topology == "padded":
            dest.ensure_status()
            if src.nnz == 0:
                bsr_set_zero(dest, topology="padded")
                return
            ensure_row_counts(dest)
            offsets = empty(shape=(dest.nrow + 1,), dtype=int, device=device)
            columns = empty(shape=(src.nnz,), dtype=int, device=device)
        else:
            resize(dest, rows_of_blocks=src.ncol, cols_of_blocks=src.nrow)
            if src.nnz == 0:
                bsr_set_zero(dest)
                return
            ensure_fits(dest, nnz=src.nnz)
            offsets, columns = dest.offsets, dest.columns
        coords = CoordinateList(src.nnz, src.ncol, src.nrow, device)
        list_block_coordinates(coords, 0, src, transpose=True)
        block_sources = empty(shape=(src.nnz,), dtype=int, device=device)
        build_compact(coords, offsets, columns, merge=False, block_sources=block_sources)
        slot_blocks = None
        if topology == "padded":
            slot_blocks = empty(shape=(max(dest.nnz, 1),), dtype=int, device=device)
            scatter_into_capacity(dest, offsets, columns, slot_blocks)
        else:
            set_compact(dest)
    if dest.nnz > 0:
        launch(_transpose_values, dim=(dest.nnz, *dest.block_shape), device=device,
               inputs=[dest.nrow, scale, src.offsets, src.row_counts, src.columns, src_values, slot_blocks,
                       block_sources, dest.offsets, dest.row_counts, dest.columns], outputs=[dest.scalar_values])


def bsr_transposed(A) -> BsrMatrix:
    """A new matrix, the transpose of `A` (a matrix or scaled matrix)."""
    if tuple(A.block_shape) == (1, 1):
        block_type = A.values.dtype
    else:
        block_type = matrix(shape=tuple(A.block_shape)[::-1], dtype=A.scalar_type)
    transposed = bsr_zeros(A.ncol, A.nrow, block_type=block_type, device=A.device)
    transposed.values.requires_grad = A.requires_grad
    bsr_set_transpose(dest=transposed, src=A)
    return transposed


def bsr_get_diag(A, out: array | None = None) -> array:
    """The diagonal blocks of `A` (a matrix or scaled matrix; zero where it has none), in `out` if given."""
    A, scale = matrix_and_scale(A)
    dim = min(A.nrow, A.ncol)
    if out is None:
        out = zeros(shape=(dim,), dtype=A.values.dtype, device=A.values.device)
    else:
        if not wt.types_equal(out.dtype, A.values.dtype):
            raise ValueError(f"Output array must have type {A.values.dtype}, got {out.dtype}")
        if out.device != A.values.device:
            raise ValueError(f"Output array must reside on device {A.values.device}, got {out.device}")
        if out.shape[0] < dim:
            raise ValueError(f"Output array must be of length at least {dim}, got {out.shape[0]}")
        out.zero_()
    if dim > 0:
        launch(_get_diag, dim=(dim, *A.block_shape), device=A.device,
               inputs=[A.scalar_type(host_scalar(scale)), A.offsets, A.row_counts, A.columns, A.scalar_values,
                       scalar_view(out)])
    return out


def _square_dims(rows_of_blocks, cols_of_blocks) -> tuple:
    if rows_of_blocks is None and cols_of_blocks is not None:
        rows_of_blocks = cols_of_blocks
    if cols_of_blocks is None and rows_of_blocks is not None:
        cols_of_blocks = rows_of_blocks
    return rows_of_blocks, cols_of_blocks


def bsr_set_diag(A: BsrMatrix, diag, rows_of_blocks: int | None = None, cols_of_blocks: int | None = None) -> None:
    """Makes `A` block diagonal: blocks from an array `diag`, one value for every diagonal block, or None
    (values uninitialized). Its size: `rows_of_blocks`/`cols_of_blocks` (one gives both), else the length of an
    array `diag`, else unchanged."""
    rows_of_blocks, cols_of_blocks = _square_dims(rows_of_blocks, cols_of_blocks)
    if wt.is_array(diag) and rows_of_blocks is None:
        rows_of_blocks = cols_of_blocks = diag.shape[0]
    if rows_of_blocks is not None:
        resize(A, rows_of_blocks, cols_of_blocks)
    nnz = min(A.nrow, A.ncol)
    ensure_fits(A, nnz=nnz)
    launch(_set_diag_topology, dim=A.nrow + 1, device=A.device, inputs=[nnz, A.offsets, A.columns], record_tape=False)
    set_compact(A)
    A.notify_nnz_changed(nnz=nnz)
    if wt.is_array(diag):
        if nnz > 0:
            copy(A.values, diag, count=nnz)
    elif diag is not None:
        A.values.fill_(diag)


def bsr_diag(diag=None, rows_of_blocks: int | None = None, cols_of_blocks: int | None = None, block_type=None,
             device=None) -> BsrMatrix:
    """A new block diagonal matrix (see `bsr_set_diag`); its block type and device are `diag`'s when it is an
    array, else `block_type` (or the type of the value `diag`) and `device`."""
    rows_of_blocks, cols_of_blocks = _square_dims(rows_of_blocks, cols_of_blocks)
    if wt.is_array(diag):
        if rows_of_blocks is None:
            rows_of_blocks = cols_of_blocks = diag.shape[0]
        block_type, device = diag.dtype, diag.device
    elif rows_of_blocks is None:
        raise ValueError("rows_of_blocks and/or cols_of_blocks must be provided for constructing a diagonal matrix "
                         "with uniform diagonal")
    if block_type is None:
        if diag is None:
            raise ValueError("Either `diag` or `block_type` needs to be provided")
        block_type = type(diag)
        if not wt.type_is_matrix(block_type) and len(getattr(diag, "shape", ())) == 2:
            block_type = matrix(shape=diag.shape, dtype=diag.dtype)
    A = bsr_zeros(rows_of_blocks, cols_of_blocks, block_type=block_type, device=device)
    if wt.is_array(diag):
        A.values.requires_grad = diag.requires_grad
    bsr_set_diag(A, diag)
    return A


def bsr_set_identity(A: BsrMatrix, rows_of_blocks: int | None = None) -> None:
    """Makes `A` the identity (square blocks), `rows_of_blocks` square if given."""
    if tuple(A.block_shape) == (1, 1):
        identity = A.scalar_type(1.0)
    else:
        identity = A.values.dtype(np.eye(A.block_shape[0]))
    bsr_set_diag(A, diag=identity, rows_of_blocks=rows_of_blocks, cols_of_blocks=rows_of_blocks)


def bsr_identity(rows_of_blocks: int, block_type, device=None) -> BsrMatrix:
    """A new `rows_of_blocks` square identity matrix of `block_type` blocks (square)."""
    A = bsr_zeros(rows_of_blocks, rows_of_blocks, block_type=block_type, device=device)
    bsr_set_identity(A)
    return A


def bsr_scale(x, alpha) -> BsrMatrix:
    """`x := alpha * x` on the stored blocks of `x` (a matrix or scaled matrix); returns the matrix."""
    x, scale = matrix_and_scale(x)
    alpha = host_scalar(alpha) * host_scalar(scale)
    if alpha != 1.0 and x.nnz > 0:
        if alpha == 0.0:
            x.values.zero_()
        else:
            launch(_scale_values, dim=(x.nnz, *x.block_shape), device=x.device,
                   inputs=[x.scalar_type(alpha), x.scalar_values])
    return x
