"""Sums and products: `bsr_axpy` (y := alpha x + beta y), `bsr_mm` (z := alpha x @ y + beta z), `bsr_mv`
(y := alpha A x + beta y, or A transposed) and their reusable work arrays.

Sums and products get their topology as every new topology here does (topology.build_compact): the coordinates
of both operands' blocks, or of every block product x[r, k] y[k, c], merged; a padded result writes into its row
capacity instead (axpy through scatter_into_capacity, mm by merging the candidate columns of each row in one
thread, which needs no count and so no host read). Values are then summed by kernels that find each block by
binary search in its row (`bsr_block_index`). Operands that alias the result are read from copies."""

from typing import Any

from mlwarp.core import types as wt
from mlwarp.core.vector import vector
from mlwarp.arrays.array import array, array3d, copy, empty, zeros
from mlwarp.library.builtins import namespace as wp  # wp.tid, wp.atomic_add, wp.printf: the builtins, spelt as in user code
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.utils import array_scan
from mlwarp.sparse.assign import assign_padded, bsr_assign, bsr_scale
from mlwarp.sparse.funcs import bsr_block_index, bsr_row_end, bsr_row_index
from mlwarp.sparse.matrix import (
    BSR_STATUS_ROW_CAPACITY_EXCEEDED, BsrMatrix, block_type_of, bsr_zeros, check_topology, ensure_fits,
    ensure_row_counts, host_scalar, matrix_and_scale, scalar_view, set_compact,
)
from mlwarp.sparse.topology import (
    CoordinateList, build_compact, list_block_coordinates, scatter_into_capacity, snapshot,
)


@kernel
def _add_blocks(scale: Any, src_row_count: int, src_offsets: array(dtype=int), src_row_counts: array(dtype=int),
                src_columns: array(dtype=int), src_values: array3d(dtype=Any), offsets: array(dtype=int),
                row_counts: array(dtype=int), columns: array(dtype=int), values: array3d(dtype=Any)):
    # dest += scale * src, each source block into the destination block of its coordinates (if any)
    block, i, j = wp.tid()
    row = bsr_row_index(src_offsets, src_row_count, block, src_row_counts)
    if row == -1:
        return
    dest = bsr_block_index(row, src_columns[block], offsets, columns, row_counts)
    if dest != -1:
        wp.atomic_add(values, dest, i, j, scale * src_values[block, i, j])


@kernel
def _add_masked(scale: Any, row_count: int, src_offsets: array(dtype=int), src_row_counts: array(dtype=int),
                src_columns: array(dtype=int), src_values: array3d(dtype=Any), offsets: array(dtype=int),
                row_counts: array(dtype=int), columns: array(dtype=int), values: array3d(dtype=Any)):
    # each destination block += scale * the source block of its coordinates (if any)
    block, i, j = wp.tid()
    row = bsr_row_index(offsets, row_count, block, row_counts)
    if row == -1:
        return
    src = bsr_block_index(row, columns[block], src_offsets, src_columns, src_row_counts)
    if src != -1:
        values[block, i, j] = values[block, i, j] + scale * src_values[src, i, j]


def _add_scaled(dest, scale, src, masked: bool = False) -> None:
    """dest += scale * src (src a matrix or Snapshot), into dest's existing blocks."""
    if masked:
        if dest.nnz > 0:
            launch(_add_masked, dim=(dest.nnz, *dest.block_shape), device=dest.device,
                   inputs=[scale, dest.nrow, src.offsets, src.row_counts, src.columns, scalar_view(src.values),
                           dest.offsets, dest.row_counts, dest.columns], outputs=[dest.scalar_values])
    elif src.nnz > 0:
        launch(_add_blocks, dim=(src.nnz, *dest.block_shape), device=dest.device,
               inputs=[scale, src.nrow, src.offsets, src.row_counts, src.columns, scalar_view(src.values),
                       dest.offsets, dest.row_counts, dest.columns], outputs=[dest.scalar_values])


class bsr_axpy_work_arrays:  # noqa: N801  (Warp's name)
    """Temporary storage `bsr_axpy` may reuse across calls (opaque)."""

    def __init__(self):
        self.device = None


def _check_same_shape(x, y) -> None:
    if x.values.device != y.values.device:
        raise ValueError(f"All arguments must reside on the same device, got {x.values.device} and "
                         f"{y.values.device}")
    if x.scalar_type != y.scalar_type or tuple(x.block_shape) != tuple(y.block_shape):
        raise ValueError(f"Matrices must have the same block type, got ({x.block_shape}, {x.scalar_type}) and "
                         f"({y.block_shape}, {y.scalar_type})")
    if x.nrow != y.nrow or x.ncol != y.ncol:
        raise ValueError(f"Matrices must have the same number of rows and columns, got ({x.nrow}, {x.ncol}) and "
                         f"({y.nrow}, {y.ncol})")


def bsr_axpy(x, y: BsrMatrix | None = None, alpha=1.0, beta=1.0, work_arrays: bsr_axpy_work_arrays | None = None,
             topology: str | None = None) -> BsrMatrix:
    """`y := alpha * x + beta * y` (`x` a matrix or scaled matrix; `y` allocated as zero if None) and returns y;
    `x` and `y` may be the same matrix. `topology`: "compact" (union of both topologies), "masked" (keep `y`'s
    blocks), "padded" (into `y`'s row capacity; overflow sets `y.status_sync()`)."""
    x, x_scale = matrix_and_scale(x)
    alpha = host_scalar(alpha) * host_scalar(x_scale)
    beta = host_scalar(beta)
    topology = check_topology(topology)
    if y is None:
        if topology != "compact":
            raise ValueError("Left-hand-side 'y' matrix must be provided for this topology policy")
        y = bsr_zeros(x.nrow, x.ncol, block_type=x.values.dtype, device=x.values.device)
        y.values.requires_grad = x.requires_grad
        beta = 0.0

    if topology == "padded":
        _check_same_shape(x, y)
        y.ensure_status()
        if beta == 0.0:
            if x is y:
                return bsr_scale(y, alpha)
            assign_padded(y, x, alpha, (1, 1), (1, 1), structure_only=False)
            return y
        if alpha == 0.0 or x.nnz == 0:
            return bsr_scale(y, beta)
        if x is y:
            return bsr_scale(y, alpha + beta)
        ensure_row_counts(y)
        old_y = snapshot(y)
        coords = CoordinateList(old_y.nnz + x.nnz, y.nrow, y.ncol, y.device)
        list_block_coordinates(coords, 0, old_y)
        list_block_coordinates(coords, old_y.nnz, x)
        compact_offsets = empty(shape=(y.nrow + 1,), dtype=int, device=y.device)
        compact_columns = empty(shape=(max(coords.count, 1),), dtype=int, device=y.device)
        build_compact(coords, compact_offsets, compact_columns)
        scatter_into_capacity(y, compact_offsets, compact_columns)
        y.values.zero_()
        _add_scaled(y, y.scalar_type(beta), old_y)
        _add_scaled(y, y.scalar_type(alpha), x)
        return y

    if beta == 0.0 or y.nnz == 0:
        bsr_assign(src=x, dest=y, topology=topology)
        return bsr_scale(y, alpha)
    if alpha == 0.0 or x.nnz == 0:
        return bsr_scale(y, beta)
    if x is y:
        return bsr_scale(y, alpha + beta)
    _check_same_shape(x, y)
    if topology == "masked":
        bsr_scale(y, beta)
        _add_scaled(y, y.scalar_type(alpha), x, masked=True)
        return y
    old_y = snapshot(y)
    coords = CoordinateList(old_y.nnz + x.nnz, y.nrow, y.ncol, y.device)
    list_block_coordinates(coords, 0, old_y)
    list_block_coordinates(coords, old_y.nnz, x)
    ensure_fits(y, nnz=coords.count)
    build_compact(coords, y.offsets, y.columns)
    set_compact(y)
    y.values.zero_()
    _add_scaled(y, y.scalar_type(beta), old_y)
    _add_scaled(y, y.scalar_type(alpha), x)
    return y


@kernel(enable_backward=False)
def _product_counts(y_col_count: int, x_offsets: array(dtype=int), x_row_counts: array(dtype=int),
                    x_columns: array(dtype=int), y_offsets: array(dtype=int), y_row_counts: array(dtype=int),
                    y_columns: array(dtype=int), row_first_col: array(dtype=int), counts: array(dtype=int)):
    # one thread per row of x: counts[b + 1], the block products of x's block b (the blocks of y's row
    # x_columns[b]); a row with more products than columns in their range (a deep product: many are
    # duplicates) lists that range instead, once (the count of its last block), as Warp does
    row = wp.tid()
    x_beg = x_offsets[row]
    x_end = bsr_row_end(x_offsets, x_row_counts, row)
    total = int(0)
    min_col = y_col_count
    max_col = int(0)
    for x_block in range(x_beg, x_end):
        y_row = x_columns[x_block]
        y_beg = y_offsets[y_row]
        y_end = bsr_row_end(y_offsets, y_row_counts, y_row)
        if y_end > y_beg:
            min_col = wp.min(min_col, y_columns[y_beg])
            max_col = wp.max(max_col, y_columns[y_end - 1])
        counts[x_block + 1] = y_end - y_beg
        total += y_end - y_beg
    col_range = wp.max(0, max_col - min_col + 1)
    if total > col_range:
        row_first_col[row] = min_col
        for x_block in range(x_beg, x_end - 1):
            counts[x_block + 1] = 0
        counts[x_end] = col_range
    else:
        row_first_col[row] = -1


@kernel(enable_backward=False)
def _list_products(first: int, capacity: int, x_block_count: int, x_row_count: int, x_offsets: array(dtype=int),
                   x_row_counts: array(dtype=int), x_columns: array(dtype=int), y_offsets: array(dtype=int),
                   y_columns: array(dtype=int), row_first_col: array(dtype=int), product_starts: array(dtype=int),
                   col_count: wt.int64, invalid: wt.int64, keys: array(dtype=wt.int64), payloads: array(dtype=int)):
    # one slot per listed product: the coordinates (row of x's block, column of y's block, or the next column
    # of the row's range)
    slot = wp.tid()
    t = first + slot
    keys[t] = invalid
    payloads[t] = -1
    x_block = bsr_row_index(product_starts, x_block_count, slot)
    if x_block == -1:
        return
    if slot + 1 == capacity and capacity < product_starts[x_block_count]:
        wp.printf("Number of potential `bsr_mm` blocks (%d) exceeded `max_nnz` (%d)\n",
                  product_starts[x_block_count], capacity)
    row = bsr_row_index(x_offsets, x_row_count, x_block, x_row_counts)
    position = slot - product_starts[x_block]
    col = row_first_col[row] + position
    if row_first_col[row] == -1:
        col = y_columns[y_offsets[x_columns[x_block]] + position]
    keys[t] = wt.int64(row) * col_count + wt.int64(col)
    payloads[t] = x_block


@kernel(enable_backward=False)
def _padded_product_topology(include_old: int, col_count: int, x_offsets: array(dtype=int),
                             x_row_counts: array(dtype=int), x_columns: array(dtype=int), y_offsets: array(dtype=int),
                             y_row_counts: array(dtype=int), y_columns: array(dtype=int), offsets: array(dtype=int),
                             old_row_counts: array(dtype=int), old_columns: array(dtype=int),
                             row_counts: array(dtype=int), columns: array(dtype=int), cursors: array(dtype=int),
                             status: array(dtype=int)):
    # a row of the product's columns in increasing order: repeatedly the smallest column past the last written
    # among the rows of y its x blocks select (one cursor each) and, with include_old, the row's old columns
    row = wp.tid()
    beg = offsets[row]
    capacity_end = offsets[row + 1]
    x_beg = x_offsets[row]
    x_end = bsr_row_end(x_offsets, x_row_counts, row)
    for x_block in range(x_beg, x_end):
        cursors[x_block] = y_offsets[x_columns[x_block]]
    old = beg
    old_end = bsr_row_end(offsets, old_row_counts, row)
    write = beg
    last = int(-1)
    overflow = int(0)
    searching = int(1)
    while searching != 0:
        next_col = col_count
        if include_old != 0:
            while old < old_end and old_columns[old] <= last:
                old += 1
            if old < old_end:
                next_col = wp.min(next_col, old_columns[old])
        for x_block in range(x_beg, x_end):
            y_row = x_columns[x_block]
            y_end = bsr_row_end(y_offsets, y_row_counts, y_row)
            cursor = cursors[x_block]
            while cursor < y_end and y_columns[cursor] <= last:
                cursor += 1
            cursors[x_block] = cursor
            if cursor < y_end:
                next_col = wp.min(next_col, y_columns[cursor])
        if next_col == col_count:
            searching = 0
        elif write >= capacity_end:
            overflow = 1
            searching = 0
        else:
            columns[write] = next_col
            write += 1
            last = next_col
    if overflow != 0:
        row_counts[row] = 0
        wp.atomic_max(status, 0, BSR_STATUS_ROW_CAPACITY_EXCEEDED)
    else:
        row_counts[row] = write - beg


@kernel
def _product_values(alpha: Any, x_offsets: array(dtype=int), x_row_counts: array(dtype=int),
                    x_columns: array(dtype=int), x_values: array3d(dtype=Any), y_offsets: array(dtype=int),
                    y_row_counts: array(dtype=int), y_columns: array(dtype=int), y_values: array3d(dtype=Any),
                    row_count: int, offsets: array(dtype=int), row_counts: array(dtype=int),
                    columns: array(dtype=int), values: array3d(dtype=Any)):
    # z[r, c] += alpha * sum over x's blocks x[r, k] of x[r, k] @ y[k, c] (one thread per coefficient)
    block, i, j = wp.tid()
    row = bsr_row_index(offsets, row_count, block, row_counts)
    if row == -1:
        return
    col = columns[block]
    val = values.dtype(0)
    for x_block in range(x_offsets[row], bsr_row_end(x_offsets, x_row_counts, row)):
        y_block = bsr_block_index(x_columns[x_block], col, y_offsets, y_columns, y_row_counts)
        if y_block != -1:
            for k in range(x_values.shape[2]):
                val += x_values[x_block, i, k] * y_values[y_block, k, j]
    values[block, i, j] = values[block, i, j] + alpha * val


def _add_products(z, alpha, x, y) -> None:
    if z.nnz > 0:
        launch(_product_values, dim=(z.nnz, *z.block_shape), device=z.device,
               inputs=[alpha, x.offsets, x.row_counts, x.columns, scalar_view(x.values), y.offsets, y.row_counts,
                       y.columns, scalar_view(y.values), z.nrow, z.offsets, z.row_counts, z.columns,
                       z.scalar_values])


class bsr_mm_work_arrays:  # noqa: N801  (Warp's name)
    """Temporary storage `bsr_mm` may reuse across calls (opaque); with `reuse_topology=True`, the product
    topology of the call that filled it."""

    def __init__(self):
        self.device = None
        self._coords = None  # the product's block coordinates (sorted by the last build)
        self.result_nnz = 0


def _check_product(x, y, z) -> None:
    if x.values.device != y.values.device or x.values.device != z.values.device:
        raise ValueError(f"All arguments must reside on the same device, got {x.values.device}, {y.values.device} "
                         f"and {z.values.device}")
    if x.scalar_type != y.scalar_type or x.scalar_type != z.scalar_type:
        raise ValueError(f"Matrices must have the same scalar type, got {x.scalar_type}, {y.scalar_type} and "
                         f"{z.scalar_type}")
    if x.block_shape[0] != z.block_shape[0] or y.block_shape[1] != z.block_shape[1] \
            or x.block_shape[1] != y.block_shape[0]:
        raise ValueError(f"Incompatible block sizes for matrix multiplication, got ({x.block_shape}, "
                         f"{y.block_shape}) and ({z.block_shape})")
    if x.nrow != z.nrow or z.ncol != y.ncol or x.ncol != y.nrow:
        raise ValueError(f"Incompatible number of rows/columns for matrix multiplication, got ({x.nrow}, {x.ncol}) "
                         f"and ({y.nrow}, {y.ncol})")


def bsr_mm(x, y, z: BsrMatrix | None = None, alpha=1.0, beta=0.0, work_arrays: bsr_mm_work_arrays | None = None,
           reuse_topology: bool = False, tile_size: int = 0, max_new_nnz: int | None = None,
           topology: str | None = None) -> BsrMatrix:
    """`z := alpha * x @ y + beta * z` (x, y matrices or scaled matrices; `z` allocated as zero if None) and
    returns z; the three may alias. `topology`: "compact", "masked" (keep `z`'s blocks) or "padded" (into `z`'s
    row capacity; overflow sets `z.status_sync()`). Compact products read the product count back to the host
    unless `max_new_nnz` bounds it (a bound too small drops products, with a printed warning, as in Warp) or
    `reuse_topology` takes the topology `work_arrays` kept from a previous call. `tile_size` is accepted for
    Warp's signature (it picks a GPU kernel variant there)."""
    x, x_scale = matrix_and_scale(x)
    y, y_scale = matrix_and_scale(y)
    alpha = host_scalar(alpha) * host_scalar(x_scale) * host_scalar(y_scale)
    beta = host_scalar(beta)
    topology = check_topology(topology)
    if topology == "padded" and reuse_topology:
        raise ValueError("reuse_topology is only supported with topology='compact'")
    if z is None:
        if topology != "compact":
            raise ValueError("Left-hand-side 'z' matrix must be provided for this topology policy")
        z_block = block_type_of(x.scalar_type, (x.block_shape[0], y.block_shape[1]))
        z = bsr_zeros(x.nrow, y.ncol, block_type=z_block, device=x.values.device)
        z.values.requires_grad = x.requires_grad or y.requires_grad
        beta = 0.0
    _check_product(x, y, z)
    device = z.device
    aliasing = x is z or y is z

    if topology == "padded":
        status = z.ensure_status()
        if alpha == 0.0 or x.nnz == 0 or y.nnz == 0:
            return bsr_scale(z, beta)
        ensure_row_counts(z)
        old = snapshot(z) if beta != 0.0 or aliasing else None
        xs = old if x is z else x
        ys = old if y is z else y
        cursors = empty(shape=(max(xs.nnz, 1),), dtype=int, device=device)
        if z.nrow > 0:
            launch(_padded_product_topology, dim=z.nrow, device=device,
                   inputs=[int(beta != 0.0), z.ncol, xs.offsets, xs.row_counts, xs.columns, ys.offsets,
                           ys.row_counts, ys.columns, z.offsets, None if old is None else old.row_counts,
                           None if old is None else old.columns, z.row_counts, z.columns, cursors, status],
                   record_tape=False)
        z.values.zero_()
        if beta != 0.0:
            _add_scaled(z, z.scalar_type(beta), old)
        _add_products(z, z.scalar_type(alpha), xs, ys)
        return z

    if alpha == 0.0 or x.nnz == 0 or y.nnz == 0:
        return bsr_scale(z, beta)

    if topology == "masked":
        if aliasing:
            raise ValueError("topology='masked' is not supported for aliased inputs")
        if beta == 0.0:
            z.values.zero_()  # (bsr_scale by 0 would too; kept explicit: the topology stays)
        else:
            bsr_scale(z, beta)
        _add_products(z, z.scalar_type(alpha), x, y)
        return z

    if reuse_topology:
        if work_arrays is None or work_arrays._coords is None:
            raise ValueError("`work_arrays` must not be ``None`` in order to reuse matrix-matrix product topology")
        coords = work_arrays._coords
    else:
        if work_arrays is None:
            work_arrays = bsr_mm_work_arrays()
        if max_new_nnz is None:
            if device.is_capturing:
                raise RuntimeError("`bsr_mm` requires either `reuse_topology=True`, `topology='masked'` or "
                                   "`max_new_nnz` to be set for use in graph capture")
            z.nnz_sync()
        copied = z.nnz if beta != 0.0 or aliasing else 0
        starts = zeros(shape=(x.nnz + 1,), dtype=int, device=device)
        row_first_col = empty(shape=(max(x.nrow, 1),), dtype=int, device=device)
        if x.nrow > 0:
            launch(_product_counts, dim=x.nrow, device=device,
                   inputs=[y.ncol, x.offsets, x.row_counts, x.columns, y.offsets, y.row_counts, y.columns,
                           row_first_col, starts], record_tape=False)
        array_scan(starts, starts, inclusive=True)
        if max_new_nnz is not None:
            products = int(max_new_nnz)
        else:
            products = int(starts[x.nnz:].numpy()[0])
            if products == 0:
                return bsr_scale(z, beta)
        coords = CoordinateList(copied + products, z.nrow, z.ncol, device)
        if copied > 0:
            list_block_coordinates(coords, 0, z)
        if products > 0:
            launch(_list_products, dim=products, device=device,
                   inputs=[copied, products, x.nnz, x.nrow, x.offsets, x.row_counts, x.columns, y.offsets,
                           y.columns, row_first_col, starts, max(z.ncol, 1), coords.invalid, coords.keys,
                           coords.payloads], record_tape=False)
        work_arrays.device = device
        work_arrays._coords = coords

    old = snapshot(z) if beta != 0.0 or aliasing else None
    xs = old if x is z else x
    ys = old if y is z else y
    if z.columns.shape[0] < coords.count:
        z.columns = empty(shape=(coords.count,), dtype=int, device=device)
    build_compact(coords, z.offsets, z.columns)
    set_compact(z)
    if not reuse_topology:
        work_arrays.result_nnz = z.nnz_sync() if max_new_nnz is None else coords.count
    ensure_fits(z, nnz=work_arrays.result_nnz)
    z.values.zero_()
    if beta != 0.0:
        _add_scaled(z, z.scalar_type(beta), old)
    _add_products(z, z.scalar_type(alpha), xs, ys)
    return z


@kernel
def _mv(alpha: Any, beta: Any, offsets: array(dtype=int), row_counts: array(dtype=int), columns: array(dtype=int),
        values: array3d(dtype=Any), x: array(dtype=Any), y: array(dtype=Any)):
    row, subrow = wp.tid()
    block_rows = values.shape[1]
    block_cols = values.shape[2]
    yi = row * block_rows + subrow
    zero = type(alpha)(0)
    v = zero
    if alpha != zero:
        for block in range(offsets[row], bsr_row_end(offsets, row_counts, row)):
            first = columns[block] * block_cols
            for col in range(block_cols):
                v += values[block, subrow, col] * x[first + col]
        v *= alpha
    if beta != zero:
        v += beta * y[yi]
    y[yi] = v


@kernel
def _mv_transpose(alpha: Any, row_count: int, offsets: array(dtype=int), row_counts: array(dtype=int),
                  columns: array(dtype=int), values: array3d(dtype=Any), x: array(dtype=Any), y: array(dtype=Any)):
    block, subcol = wp.tid()
    row = bsr_row_index(offsets, row_count, block, row_counts)
    if row == -1:
        return
    block_rows = values.shape[1]
    col_sum = type(alpha)(0)
    for subrow in range(block_rows):
        col_sum += values[block, subrow, subcol] * x[row * block_rows + subrow]
    wp.atomic_add(y, columns[block] * values.shape[2] + subcol, alpha * col_sum)


@kernel
def _scale_vector(alpha: Any, y: array(dtype=Any)):
    i = wp.tid()
    y[i] = alpha * y[i]


def _scalar_vector(a: array, scalar_type, expected_scalar_count: int) -> array:
    """A 1-d or 2-d array of scalars or vectors of `scalar_type` as a 1-d array of its scalars (a view)."""
    scalar_count = a.size * wt.type_size(a.dtype)
    if scalar_count != expected_scalar_count:
        raise ValueError(f"Invalid array scalar size, expected {expected_scalar_count}, got {scalar_count}")
    if a.ndim == 1 and wt.types_equal(a.dtype, scalar_type):
        return a
    if wt.type_scalar_type(a.dtype) != scalar_type:
        raise ValueError(f"Incompatible scalar types, expected {wt.type_repr(a.dtype)}, got "
                         f"{wt.type_repr(scalar_type)}")
    if a.ndim > 2:
        raise ValueError(f"Incompatible array number of dimensions, expected 1 or 2, got {a.ndim}")
    if not a.is_contiguous:
        raise ValueError("Array must be contiguous")
    scalars = a if wt.types_equal(a.dtype, scalar_type) else a.view(scalar_type)
    return scalars.reshape((scalar_count,))


def bsr_mv(A, x: array, y: array | None = None, alpha=1.0, beta=0.0, transpose: bool = False,
           work_buffer: array | None = None, tile_size: int = 0) -> array:
    """`y := alpha * A @ x + beta * y` (A a matrix or scaled matrix, or its transpose with `transpose`; y
    allocated if None) and returns y. x and y: 1-d arrays of scalars or vectors (or 2-d scalar arrays) holding
    as many scalars as A has columns / rows. With beta == 0, y is not read; with alpha == 0, x is not. x may be
    y (copied to `work_buffer`, or a new array, first). The transposed product adds with atomics, so its
    rounding depends on the order threads run in, as in Warp. `tile_size` is accepted for Warp's signature."""
    A, A_scale = matrix_and_scale(A)
    alpha = host_scalar(alpha) * host_scalar(A_scale)
    if transpose:
        block_shape = (A.block_shape[1], A.block_shape[0])
        nrow, ncol = A.ncol, A.nrow
    else:
        block_shape = tuple(A.block_shape)
        nrow, ncol = A.nrow, A.ncol
    if y is None:
        y_dtype = A.scalar_type if block_shape[0] == 1 else vector(length=block_shape[0], dtype=A.scalar_type)
        y = empty(shape=(nrow,), device=A.values.device, dtype=y_dtype, requires_grad=x.requires_grad)
        beta = 0.0
    alpha = A.scalar_type(alpha)
    beta = A.scalar_type(host_scalar(beta))
    if A.values.device != x.device or A.values.device != y.device:
        raise ValueError(f"A, x, and y must reside on the same device, got {A.values.device}, {x.device} and "
                         f"{y.device}")
    if x.ptr == y.ptr:
        if work_buffer is None:
            work_buffer = empty(shape=y.shape, dtype=y.dtype, device=y.device)
        elif work_buffer.size < y.size:
            raise ValueError(f"Work buffer size is insufficient, needs to be at least {y.size}, got "
                             f"{work_buffer.size}")
        elif not wt.types_equal(work_buffer.dtype, y.dtype):
            raise ValueError(f"Work buffer must have same data type as y, {wt.type_repr(y.dtype)} vs "
                             f"{wt.type_repr(work_buffer.dtype)}")
        copy(work_buffer, y, count=y.size)
        x = work_buffer
    try:
        x_view = _scalar_vector(x, A.scalar_type, ncol * block_shape[1])
    except ValueError as err:
        raise ValueError("Incompatible 'x' vector for bsr_mv") from err
    try:
        y_view = _scalar_vector(y, A.scalar_type, nrow * block_shape[0])
    except ValueError as err:
        raise ValueError("Incompatible 'y' vector for bsr_mv") from err

    device = A.values.device
    if transpose:
        if beta.value == 0.0:
            y.zero_()
        elif beta.value != 1.0 and y_view.shape[0] > 0:
            launch(_scale_vector, dim=y_view.shape[0], device=device, inputs=[beta, y_view])
        if alpha.value != 0.0 and A.nnz > 0:
            launch(_mv_transpose, dim=(A.nnz, block_shape[0]), device=device,
                   inputs=[alpha, A.nrow, A.offsets, A.row_counts, A.columns, A.scalar_values, x_view, y_view])
    elif nrow > 0:
        launch(_mv, dim=(nrow, block_shape[0]), device=device,
               inputs=[alpha, beta, A.offsets, A.row_counts, A.columns, A.scalar_values, x_view, y_view])
    return y
