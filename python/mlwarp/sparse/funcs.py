"""Kernel-side helpers of warp.sparse: where a block's row is and where a (row, column) block is stored.

`bsr_row_index` and `bsr_block_index` are Warp's public `@wp.func`s (user kernels call them on a matrix's
arrays); each has a compact overload (rows delimited by `offsets`) and a padded one that also takes
`row_counts`, the active block count of each row (a null array there means a compact matrix). The columns of a
row's active blocks are sorted, so a block is found by binary search."""

from mlwarp.arrays.array import array
from mlwarp.library.array_search import lower_bound
from mlwarp.library.builtins import namespace as wp  # wp.where: the builtins, spelt as in user code
from mlwarp.kernels.func import func


@func
def bsr_row_end(offsets: array(dtype=int), row_counts: array(dtype=int), row: int) -> int:
    """One past the last active block of `row`: its storage end, or its start plus its active count."""
    if row_counts:
        return offsets[row] + row_counts[row]
    return offsets[row + 1]


@func
def bsr_row_index(offsets: array(dtype=int), row_count: int, block_index: int) -> int:
    """The row whose storage range holds `block_index` (compact storage), or -1 past the last row's end."""
    # the last row whose start is <= block_index: one before the first start > block_index
    return wp.where(block_index < offsets[row_count], lower_bound(offsets, 0, row_count + 1, block_index + 1), 0) - 1


@func
def bsr_row_index(offsets: array(dtype=int), row_count: int, block_index: int,  # noqa: F811  (padded overload)
                  row_counts: array(dtype=int)) -> int:
    """The row whose active blocks include `block_index`, or -1 for a block in a row's slack or past the end."""
    row = bsr_row_index(offsets, row_count, block_index)
    if row_counts and row >= 0:
        if block_index >= offsets[row] + row_counts[row]:
            row = -1
    return row


@func
def bsr_row_block_index(col: int, row_beg: int, row_end: int, columns: array(dtype=int)) -> int:
    """The block of column `col` among the sorted columns[row_beg:row_end], or -1."""
    if row_beg == row_end:
        return -1
    block = lower_bound(columns, row_beg, row_end, col)
    if block == row_end:
        return -1
    return wp.where(columns[block] == col, block, -1)


@func
def bsr_block_index(row: int, col: int, bsr_offsets: array(dtype=int), bsr_columns: array(dtype=int)) -> int:
    """The block stored at block coordinates (row, col) of a compact matrix, or -1 (also for row < 0)."""
    if row < 0:
        return -1
    return bsr_row_block_index(col, bsr_offsets[row], bsr_offsets[row + 1], bsr_columns)


@func
def bsr_block_index(row: int, col: int, bsr_offsets: array(dtype=int),  # noqa: F811  (padded overload)
                    bsr_columns: array(dtype=int), bsr_row_counts: array(dtype=int)) -> int:
    """The active block at block coordinates (row, col), searching only the row's active range."""
    if row < 0:
        return -1
    return bsr_row_block_index(col, bsr_offsets[row], bsr_row_end(bsr_offsets, bsr_row_counts, row), bsr_columns)
