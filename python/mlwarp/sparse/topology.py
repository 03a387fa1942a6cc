"""Building sparse topologies with kernels: from coordinates to compact row offsets and sorted columns, into
padded row capacity, and per-row sorting and coalescing in place.

Every operation that makes a new topology (triplets, assignment with new block shapes, sums, products,
transposes, compression) reduces to a list of block coordinates, each encoded as one int64 key
`row * ncol + col` (or `invalid = nrow * ncol` for a coordinate to drop), with an int32 payload (the index of
what produced it). `build_compact` sorts them (`wp.utils.radix_sort_pairs`, stable: equal coordinates keep the
order they were listed in), marks the first key of each run of equal coordinates, numbers the runs with a
prefix sum and writes the compact topology: one block per distinct coordinate (`merge`) or per entry, columns
in sorted order, and each row's start from a binary search of its first key. No step reads a count back to the
host, so these builds can be captured in a graph.

A padded destination takes a compact topology built aside, row by row (`scatter_into_capacity`): a row that
does not fit its capacity is left empty and the matrix status records BSR_STATUS_ROW_CAPACITY_EXCEEDED, as in
Warp."""

from typing import Any, NamedTuple

from mlwarp.core import types as wt
from mlwarp.arrays.array import array, array3d, clone, copy, empty
from mlwarp.library.builtins import namespace as wp  # wp.tid, wp.atomic_max: the builtins, spelt as in user code
from mlwarp.kernels.func import func
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.utils import array_scan, radix_sort_pairs
from mlwarp.sparse.funcs import bsr_row_end, bsr_row_index
from mlwarp.sparse.matrix import BSR_STATUS_ROW_CAPACITY_EXCEEDED, scalar_view


class CoordinateList:
    """Room for `count` block coordinates: int64 keys and int32 payloads, each twice as long as the list (the
    sort's scratch half, as Warp's radix sort wants), and the invalid key of a `nrow` x `ncol` destination."""

    def __init__(self, count: int, nrow: int, ncol: int, device):
        self.count, self.nrow, self.ncol, self.device = count, nrow, ncol, device
        self.invalid = nrow * ncol
        self.keys = empty(shape=(max(2 * count, 1),), dtype=wt.int64, device=device)
        self.payloads = empty(shape=(max(2 * count, 1),), dtype=int, device=device)


@kernel(enable_backward=False)
def _coordinate_keys(row_count: int, col_count: int, invalid: wt.int64, count: array(dtype=int),
                     rows: array(dtype=int), columns: array(dtype=int), keys: array(dtype=wt.int64),
                     payloads: array(dtype=int)):
    t = wp.tid()
    row = rows[t]
    col = columns[t]
    key = invalid
    if row >= 0 and row < row_count and col >= 0 and col < col_count:
        key = wt.int64(row) * wt.int64(col_count) + wt.int64(col)
    if count:
        if t >= count[0]:
            key = invalid
    keys[t] = key
    payloads[t] = t


@kernel(enable_backward=False)
def _drop_zero_blocks(values: array3d(dtype=Any), invalid: wt.int64, keys: array(dtype=wt.int64)):
    # zero blocks (every coefficient == 0, so -0.0 too; NaN is not zero) are dropped before runs are merged
    t = wp.tid()
    nonzero = int(0)
    for i in range(values.shape[1]):
        for j in range(values.shape[2]):
            if values[t, i, j] != values.dtype(0):
                nonzero = 1
    if nonzero == 0:
        keys[t] = invalid


@kernel(enable_backward=False)
def _block_keys(transpose: int, src_subrows: int, src_subcols: int, dest_subrows: int, dest_subcols: int,
                src_row_count: int, src_col_count: int, dest_col_count: int, invalid: wt.int64, first: int,
                offsets: array(dtype=int), row_counts: array(dtype=int), columns: array(dtype=int),
                keys: array(dtype=wt.int64), payloads: array(dtype=int)):
    # one coordinate per (active block, sub-block): its destination block when a block_shape[0] / src_subrows
    # x block_shape[1] / src_subcols piece of the source goes to blocks dest_subrows x dest_subcols as large;
    # transposed, (col, row) without reblocking
    block, subrow, subcol = wp.tid()
    t = first + (block * src_subcols + subcol) * src_subrows + subrow
    row = bsr_row_index(offsets, src_row_count, block, row_counts)
    col = columns[block]
    key = invalid
    if row >= 0 and col >= 0 and col < src_col_count:
        if transpose != 0:
            key = wt.int64(col) * wt.int64(dest_col_count) + wt.int64(row)
        else:
            dest_row = (row * src_subrows + subrow) // dest_subrows
            dest_col = (col * src_subcols + subcol) // dest_subcols
            key = wt.int64(dest_row) * wt.int64(dest_col_count) + wt.int64(dest_col)
    keys[t] = key
    payloads[t] = block


@kernel(enable_backward=False)
def _run_heads(count: int, invalid: wt.int64, merge: int, keys: array(dtype=wt.int64), heads: array(dtype=int)):
    i = wp.tid()
    key = keys[i]
    head = int(0)
    if key < invalid:
        head = 1
        if merge != 0 and i > 0:
            if keys[i - 1] == key:
                head = 0
    heads[i] = head


@kernel(enable_backward=False)
def _emit_blocks(count: int, col_count: wt.int64, invalid: wt.int64, merge: int, keys: array(dtype=wt.int64),
                 payloads: array(dtype=int), heads: array(dtype=int), block_ids: array(dtype=int),
                 columns: array(dtype=int), block_ends: array(dtype=int), block_sources: array(dtype=int)):
    i = wp.tid()
    key = keys[i]
    if key >= invalid:
        return
    block = block_ids[i] - 1
    if heads[i] != 0:
        columns[block] = int(key % col_count)
        if block_sources:
            block_sources[block] = payloads[i]
    if block_ends:
        last = i == count - 1
        if not last:
            last = merge == 0 or keys[i + 1] != key
        if last:
            block_ends[block] = i + 1


@func
def _first_key_at_least(keys: array(dtype=wt.int64), count: int, value: wt.int64) -> int:
    # (count when every key is smaller: wp.lower_bound gives count - 1 there)
    lower = int(0)
    upper = count
    while lower < upper:
        mid = lower + (upper - lower) // 2
        if keys[mid] < value:
            lower = mid + 1
        else:
            upper = mid
    return lower


@kernel(enable_backward=False)
def _row_starts(count: int, col_count: wt.int64, keys: array(dtype=wt.int64), block_ids: array(dtype=int),
                offsets: array(dtype=int)):
    row = wp.tid()
    first = _first_key_at_least(keys, count, wt.int64(row) * col_count)
    start = int(0)
    if first > 0:
        start = block_ids[first - 1]
    offsets[row] = start


def build_compact(coords: CoordinateList, offsets: array, columns: array, merge: bool = True,
                  block_ends: array | None = None, block_sources: array | None = None) -> None:
    """Sorts `coords` and writes the compact topology of its valid coordinates: `offsets` (nrow + 1) and
    `columns` (one per block, at most `coords.count`). Optionally, for each block, `block_ends` (one past its
    last entry in sorted order: its entries are `payloads[block_ends[b - 1]:block_ends[b]]`, the sorted payloads
    staying in `coords.payloads`) and `block_sources` (the payload of its first entry)."""
    n, device = coords.count, coords.device
    if n == 0:
        offsets[:coords.nrow + 1].zero_()
        return
    radix_sort_pairs(coords.keys, coords.payloads, n)
    heads = empty(shape=(n,), dtype=int, device=device)
    block_ids = empty(shape=(n,), dtype=int, device=device)
    launch(_run_heads, dim=n, device=device, inputs=[n, coords.invalid, int(merge), coords.keys, heads],
           record_tape=False)
    array_scan(heads, block_ids, inclusive=True)
    col_count = max(coords.ncol, 1)
    launch(_emit_blocks, dim=n, device=device,
           inputs=[n, col_count, coords.invalid, int(merge), coords.keys, coords.payloads, heads, block_ids, columns,
                   block_ends, block_sources], record_tape=False)
    launch(_row_starts, dim=coords.nrow + 1, device=device, inputs=[n, col_count, coords.keys, block_ids, offsets],
           record_tape=False)


def list_block_coordinates(coords: CoordinateList, first: int, bsr, subrows=(1, 1), subcols=(1, 1),
                           transpose: bool = False) -> None:
    """Lists the coordinates of `bsr`'s active blocks in `coords` from entry `first` on (`bsr.nnz` entries, times
    the sub-blocks each splits into), their payloads the source blocks. `subrows`/`subcols`: (source, dest)
    sub-block counts of a reblocking (see `_block_keys`)."""
    if bsr.nnz == 0:
        return
    launch(_block_keys, dim=(bsr.nnz, subrows[0], subcols[0]), device=coords.device,
           inputs=[int(transpose), subrows[0], subcols[0], subrows[1], subcols[1], bsr.nrow, bsr.ncol, coords.ncol,
                   coords.invalid, first, bsr.offsets, bsr.row_counts, bsr.columns, coords.keys, coords.payloads],
           record_tape=False)


def list_triplet_coordinates(coords: CoordinateList, rows: array, columns: array, count: array | None,
                             values3d: array | None, prune: bool) -> None:
    """Lists triplet coordinates (out of range ones, those past `count[0]` and, with `prune`, zero blocks
    invalid), their payloads the triplet indices."""
    n = coords.count
    if n == 0:
        return
    launch(_coordinate_keys, dim=n, device=coords.device,
           inputs=[coords.nrow, coords.ncol, coords.invalid, count, rows, columns, coords.keys, coords.payloads],
           record_tape=False)
    if prune and values3d is not None:
        drop_zero_blocks(coords, values3d)


def drop_zero_blocks(coords: CoordinateList, values3d: array) -> None:
    """Invalidates the coordinates whose block (values3d[entry]) is zero."""
    if coords.count > 0:
        launch(_drop_zero_blocks, dim=coords.count, device=coords.device,
               inputs=[values3d, coords.invalid, coords.keys], record_tape=False)


class Snapshot(NamedTuple):
    """Copies of a matrix's topology and values, read while the matrix itself is rewritten."""
    nrow: int
    ncol: int
    nnz: int
    offsets: array
    row_counts: array | None
    columns: array
    values: array


def snapshot(bsr) -> Snapshot:
    """Copies of `bsr`'s topology and first `nnz` values (a Tape records the copy: gradients flow back)."""
    return Snapshot(bsr.nrow, bsr.ncol, bsr.nnz, clone(bsr.offsets[:bsr.nrow + 1]),
                    None if bsr.row_counts is None else clone(bsr.row_counts), clone(bsr.columns[:bsr.nnz]),
                    clone(bsr.values[:bsr.nnz]))


@kernel(enable_backward=False)
def _scatter_into_capacity(compact_offsets: array(dtype=int), compact_columns: array(dtype=int),
                           dest_offsets: array(dtype=int), dest_row_counts: array(dtype=int),
                           dest_columns: array(dtype=int), dest_compact_blocks: array(dtype=int),
                           status: array(dtype=int)):
    row = wp.tid()
    compact_beg = compact_offsets[row]
    block_count = compact_offsets[row + 1] - compact_beg
    row_beg = dest_offsets[row]
    capacity_end = dest_offsets[row + 1]
    if row_beg + block_count > capacity_end:
        block_count = 0
        wp.atomic_max(status, 0, BSR_STATUS_ROW_CAPACITY_EXCEEDED)
    dest_row_counts[row] = block_count
    for k in range(block_count):
        dest_columns[row_beg + k] = compact_columns[compact_beg + k]
        if dest_compact_blocks:
            dest_compact_blocks[row_beg + k] = compact_beg + k
    if dest_compact_blocks:
        for block in range(row_beg + block_count, capacity_end):
            dest_compact_blocks[block] = -1


def scatter_into_capacity(dest, compact_offsets: array, compact_columns: array,
                          compact_blocks: array | None = None) -> None:
    """Writes a compact topology into the row capacity of padded `dest` (its `row_counts` and `columns`); a row
    that overflows is left empty and sets the status. `compact_blocks` (dest.nnz long): the compact block of
    each destination slot, -1 in the slack."""
    if dest.nrow == 0:
        return
    launch(_scatter_into_capacity, dim=dest.nrow, device=dest.device,
           inputs=[compact_offsets, compact_columns, dest.offsets, dest.row_counts, dest.columns, compact_blocks,
                   dest.ensure_status()], record_tape=False)


@kernel(enable_backward=False)
def _sort_coalesce_rows(col_count: int, prune: int, move_values: int, offsets: array(dtype=int),
                        row_counts: array(dtype=int), columns: array(dtype=int), values: array3d(dtype=Any),
                        new_counts: array(dtype=int)):
    # one thread per row, in place: drop invalid columns (and zero blocks), insertion sort (stable), then sum the
    # blocks of equal columns into the first
    row = wp.tid()
    beg = offsets[row]
    end = bsr_row_end(offsets, row_counts, row)
    block_rows = values.shape[1]
    block_cols = values.shape[2]

    kept = beg
    for block in range(beg, end):
        col = columns[block]
        keep = col >= 0 and col < col_count
        if keep and prune != 0:
            nonzero = int(0)
            for i in range(block_rows):
                for j in range(block_cols):
                    if values[block, i, j] != values.dtype(0):
                        nonzero = 1
            keep = nonzero != 0
        if keep:
            if kept != block:
                columns[kept] = col
                if move_values != 0:
                    for i in range(block_rows):
                        for j in range(block_cols):
                            values[kept, i, j] = values[block, i, j]
            kept += 1

    for block in range(beg + 1, kept):
        k = block
        while k > beg and columns[k - 1] > columns[k]:
            col = columns[k]
            columns[k] = columns[k - 1]
            columns[k - 1] = col
            if move_values != 0:
                for i in range(block_rows):
                    for j in range(block_cols):
                        v = values[k, i, j]
                        values[k, i, j] = values[k - 1, i, j]
                        values[k - 1, i, j] = v
            k -= 1

    out = beg
    for block in range(beg, kept):
        if out > beg and columns[out - 1] == columns[block]:
            if move_values != 0:
                for i in range(block_rows):
                    for j in range(block_cols):
                        values[out - 1, i, j] = values[out - 1, i, j] + values[block, i, j]
        else:
            if out != block:
                columns[out] = columns[block]
                if move_values != 0:
                    for i in range(block_rows):
                        for j in range(block_cols):
                            values[out, i, j] = values[block, i, j]
            out += 1
    new_counts[row] = out - beg


@kernel(enable_backward=False)
def _pack_rows(move_values: int, old_offsets: array(dtype=int), counts: array(dtype=int),
               new_offsets: array(dtype=int), old_columns: array(dtype=int), old_values: array3d(dtype=Any),
               columns: array(dtype=int), values: array3d(dtype=Any)):
    row = wp.tid()
    src = old_offsets[row]
    dst = new_offsets[row]
    for k in range(counts[row]):
        columns[dst + k] = old_columns[src + k]
        if move_values != 0:
            for i in range(values.shape[1]):
                for j in range(values.shape[2]):
                    values[dst + k, i, j] = old_values[src + k, i, j]


def sort_coalesce_in_place(bsr, prune: bool, move_values: bool, compact: bool) -> None:
    """Sorts and coalesces each active row of `bsr` where it is stored; `compact` then packs the rows (offsets
    from the new counts), else the counts become `row_counts` (row capacity kept)."""
    device = bsr.device
    nrow = bsr.nrow
    counts = empty(shape=(max(nrow, 1),), dtype=int, device=device)
    if nrow > 0:
        launch(_sort_coalesce_rows, dim=nrow, device=device,
               inputs=[bsr.ncol, int(prune), int(move_values), bsr.offsets, bsr.row_counts, bsr.columns,
                       bsr.scalar_values, counts], record_tape=False)
    if not compact:
        copy(bsr.row_counts, counts, count=nrow)
        return
    if nrow == 0:
        bsr.offsets[:1].zero_()
        return
    # moving rows left in place would overwrite rows not yet moved: pack from copies
    old_offsets = clone(bsr.offsets[:nrow + 1])
    nnz = bsr.nnz
    old_columns = clone(bsr.columns[:nnz])
    old_values = clone(bsr.values[:nnz]) if move_values else bsr.values[:nnz]
    bsr.offsets[:1].zero_()
    array_scan(counts[:nrow], bsr.offsets[1:nrow + 1], inclusive=True)
    launch(_pack_rows, dim=nrow, device=device,
           inputs=[int(move_values), old_offsets, counts, bsr.offsets, old_columns, scalar_view(old_values),
                   bsr.columns, bsr.scalar_values], record_tape=False)
