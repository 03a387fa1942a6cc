"""Matrices from coordinate (COO) triplets: `bsr_set_from_triplets`, `bsr_from_triplets`, reusable triplet maps
(`BsrTripletMap`, `bsr_set_from_mapped_values`) and `bsr_compress`.

The topology comes from topology.build_compact (sorted, duplicates merged); each block's value is then the sum
of its triplets in the order the stable sort left them (their input order), one thread per block coefficient:
a gather, with no atomics, that a Tape differentiates (the gradient of a block reaches each of its triplets)."""

from typing import Any

from mlwarp.core import types as wt
from mlwarp.core.vector import matrix
from mlwarp.arrays.array import array, array3d, copy, empty
from mlwarp.library.builtins import namespace as wp  # wp.tid, wp.atomic_add: the builtins, spelt as in user code
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.runtime.device import get_device
from mlwarp.sparse.funcs import bsr_block_index, bsr_row_end, bsr_row_index
from mlwarp.sparse.matrix import (
    BsrMatrix, block_type_of, bsr_set_zero, bsr_zeros, check_topology, ensure_fits, ensure_row_counts, scalar_view,
    set_compact,
)
from mlwarp.sparse.topology import (
    CoordinateList, build_compact, drop_zero_blocks, list_block_coordinates, list_triplet_coordinates,
    scatter_into_capacity, snapshot, sort_coalesce_in_place,
)


class BsrTripletMap:
    """A reusable map from COO triplets to the blocks of an existing topology: build it with
    `bsr_set_from_triplets(..., build_mapping=True or a map)`, then refresh values with
    `bsr_set_from_mapped_values`. `capacity` triplets of storage are allocated up front (it grows as needed), so
    a map made outside a graph capture can be rebuilt inside one. The destination's topology must not change
    while the map is in use; its values may."""

    def __init__(self, capacity: int = 0, device=None):
        self.triplet_count = 0
        """Number of triplets the map was last built for."""
        self._storage = BsrTripletMap._allocate_storage(capacity, get_device(device))
        self._dest = None  # (nrow, ncol, offsets ptr, columns ptr, row_counts ptr) of the matrix it was built for

    @staticmethod
    def _allocate_storage(capacity: int, device) -> tuple:
        return tuple(empty(shape=(capacity,), dtype=wt.int32, device=device) for _ in range(3))

    @property
    def device(self):
        """Device of the map's storage."""
        return self._storage[0].device

    @property
    def capacity(self) -> int:
        """Triplets the map can be built for without reallocating."""
        return self._storage[0].shape[0]

    @staticmethod
    def _view(storage: array, count: int) -> array:
        if count == storage.shape[0]:
            return storage
        if count == 0:
            return empty(shape=(0,), dtype=storage.dtype, device=storage.device)
        return storage[:count]

    @property
    def _block_ends(self) -> array:
        """One past the last entry of `_triplet_indices` of each destination block."""
        return BsrTripletMap._view(self._storage[0], self.triplet_count)

    @property
    def _triplet_indices(self) -> array:
        """Triplet indices grouped by destination block, in summation order."""
        return BsrTripletMap._view(self._storage[1], self.triplet_count)

    @property
    def _triplet_blocks(self) -> array:
        """Destination block of each triplet, -1 for a dropped one."""
        return BsrTripletMap._view(self._storage[2], self.triplet_count)

    def _reserve(self, triplet_count: int) -> None:
        if triplet_count > self.capacity:
            self._storage = BsrTripletMap._allocate_storage(triplet_count, self.device)

    @staticmethod
    def _identity(dest: BsrMatrix) -> tuple:
        return (dest.nrow, dest.ncol, dest.offsets.ptr, dest.columns.ptr,
                0 if dest.row_counts is None else dest.row_counts.ptr)

    def _bind(self, dest: BsrMatrix, triplet_count: int) -> None:
        self.triplet_count = triplet_count
        self._dest = BsrTripletMap._identity(dest)

    def validate(self, dest: BsrMatrix) -> None:
        """Raises ValueError unless `dest` has the dimensions and topology arrays the map was built for (array
        identity only: changes made inside those arrays go unseen)."""
        if self._dest is None:
            raise ValueError("The triplet map has not been built; pass it to bsr_set_from_triplets() first")
        if BsrTripletMap._identity(dest) != self._dest:
            raise ValueError("Destination BSR topology storage differs from that used to build the triplet map")


@kernel
def _sum_runs(limit_row: int, limit_offsets: array(dtype=int), compact_blocks: array(dtype=int),
              block_ends: array(dtype=int), sorted_indices: array(dtype=int), src: array3d(dtype=Any),
              dest: array3d(dtype=Any)):
    block, i, j = wp.tid()
    if block >= limit_offsets[limit_row]:
        return
    run = block
    if compact_blocks:
        run = compact_blocks[block]
        if run < 0:
            return
    beg = int(0)
    if run > 0:
        beg = block_ends[run - 1]
    val = src[sorted_indices[beg], i, j]
    for k in range(beg + 1, block_ends[run]):
        val += src[sorted_indices[k], i, j]
    dest[block, i, j] = val


@kernel
def _add_masked_triplets(count: array(dtype=int), row_count: int, col_count: int, rows: array(dtype=int),
                         columns: array(dtype=int), values: array3d(dtype=Any), offsets: array(dtype=int),
                         row_counts: array(dtype=int), bsr_columns: array(dtype=int), dest: array3d(dtype=Any)):
    t, i, j = wp.tid()
    if count:
        if t >= count[0]:
            return
    row = rows[t]
    col = columns[t]
    if row < 0 or row >= row_count or col < 0 or col >= col_count:
        return
    block = bsr_block_index(row, col, offsets, bsr_columns, row_counts)
    if block != -1:
        wp.atomic_add(dest, block, i, j, values[t, i, j])


@kernel
def _add_mapped_triplets(triplet_blocks: array(dtype=int), values: array3d(dtype=Any), dest: array3d(dtype=Any)):
    t, i, j = wp.tid()
    block = triplet_blocks[t]
    if block >= 0:
        wp.atomic_add(dest, block, i, j, values[t, i, j])


@kernel(enable_backward=False)
def _triplet_blocks_from_runs(row_count: int, offsets: array(dtype=int), block_ends: array(dtype=int),
                              sorted_indices: array(dtype=int), triplet_blocks: array(dtype=int)):
    block = wp.tid()
    if block >= offsets[row_count]:  # launched over the triplet count, a bound on the block count
        return
    beg = int(0)
    if block > 0:
        beg = block_ends[block - 1]
    for k in range(beg, block_ends[block]):
        triplet_blocks[sorted_indices[k]] = block


@kernel
def _sum_equal_columns(row_count: int, src_offsets: array(dtype=int), src_row_counts: array(dtype=int),
                       src_columns: array(dtype=int), src_values: array3d(dtype=Any), dest_offsets: array(dtype=int),
                       dest_row_counts: array(dtype=int), dest_columns: array(dtype=int),
                       dest_values: array3d(dtype=Any)):
    block, i, j = wp.tid()
    row = bsr_row_index(dest_offsets, row_count, block, dest_row_counts)
    if row == -1:
        return
    col = dest_columns[block]
    val = dest_values.dtype(0)
    for src_block in range(src_offsets[row], bsr_row_end(src_offsets, src_row_counts, row)):
        if src_columns[src_block] == col:
            val += src_values[src_block, i, j]
    dest_values[block, i, j] = val


def triplet_values_3d(values: array, dest: BsrMatrix, what: str = "dest matrix") -> array:
    """Triplet values (contiguous; 1-d of the block type or 3-d of its scalars) as a 3-d scalar array."""
    if values.ndim == 1:
        if not wt.types_equal(values.dtype, dest.values.dtype):
            raise ValueError(f"Values array type must correspond to that of the {what}, got "
                             f"{wt.type_repr(values.dtype)} and {wt.type_repr(dest.values.dtype)}")
    elif values.ndim == 3:
        if tuple(values.shape[1:]) != tuple(dest.block_shape):
            raise ValueError(f"Last two dimensions in values array ({tuple(values.shape[1:])}) should correspond to "
                             f"matrix block shape {tuple(dest.block_shape)})")
        if wt.type_scalar_type(values.dtype) != dest.scalar_type:
            raise ValueError(f"Scalar type of values array ({wt.type_repr(values.dtype)}) should correspond to that "
                             f"of matrix ({wt.type_repr(dest.scalar_type)})")
    else:
        raise ValueError(f"Number of dimension for values array should be 1 or 3, got {values.ndim}")
    if not values.is_contiguous:
        raise ValueError("Values array must be contiguous")
    return values if values.ndim == 3 else scalar_view(values)


def _check_triplets(dest, rows, columns, values, count) -> None:
    if rows.device != columns.device or rows.device != dest.device:
        raise ValueError(f"Rows and columns must reside on the destination matrix device, got {rows.device}, "
                         f"{columns.device} and {dest.device}")
    if rows.shape[0] != columns.shape[0]:
        raise ValueError(f"Rows and columns arrays must have the same length, got {rows.shape[0]} and "
                         f"{columns.shape[0]}")
    if rows.dtype != wt.int32 or columns.dtype != wt.int32:
        raise TypeError("Rows and columns arrays must be of type int32")
    if count is not None:
        if count.device != rows.device:
            raise ValueError(f"Count and rows must reside on the same device, got {count.device} and {rows.device}")
        if tuple(count.shape) != (1,):
            raise ValueError(f"Count array must be a single-element array, got {count.shape}")
        if count.dtype != wt.int32:
            raise TypeError("Count array must be of type int32")
    if values is not None:
        if values.device != rows.device:
            raise ValueError(f"Values and rows must reside on the same device, got {values.device} and "
                             f"{rows.device}")
        if values.shape[0] != rows.shape[0]:
            raise ValueError(f"Values and rows arrays must have the same length, got {values.shape[0]} and "
                             f"{rows.shape[0]}")


def _mapping_for(build_mapping, dest) -> BsrTripletMap | None:
    if build_mapping is None or build_mapping is False:
        return None
    if build_mapping is True:
        return BsrTripletMap(device=dest.device)
    if isinstance(build_mapping, BsrTripletMap):
        if build_mapping.device != dest.device:
            raise ValueError(f"Mapping and destination must reside on the same device, got {build_mapping.device} "
                             f"and {dest.device}")
        return build_mapping
    raise TypeError(f"build_mapping must be None, a bool or a BsrTripletMap, got {type(build_mapping)}")


def bsr_set_from_triplets(dest: BsrMatrix, rows: array, columns: array, values: array | None = None,
                          count: array | None = None, prune_numerical_zeros: bool = True,
                          topology: str | None = None, build_mapping=None) -> BsrTripletMap | None:
    """Fills `dest` from COO triplets (int32 `rows`, `columns`; `values` 1-d of the block type or 3-d of its
    scalars, or None to leave values uninitialized), discarding its blocks: duplicates are summed, out of range
    triplets and those past `count[0]` dropped, zero blocks too with `prune_numerical_zeros`.

    `topology`: "compact" (rebuild; `dest.nnz` becomes the triplet count, a bound), "masked" (only `dest`'s
    existing blocks take values), "padded" (into `dest`'s row capacity; overflow sets `dest.status_sync()`).
    `build_mapping` (True or a `BsrTripletMap`, compact and without pruning only) returns the map from the
    triplets to the built blocks."""
    topology = check_topology(topology)
    mapping = _mapping_for(build_mapping, dest)
    if mapping is not None and topology != "compact":
        raise ValueError('build_mapping requires topology="compact"')
    if mapping is not None and prune_numerical_zeros:
        raise ValueError("build_mapping requires prune_numerical_zeros=False")
    _check_triplets(dest, rows, columns, values, count)
    values3d = None if values is None else triplet_values_3d(values, dest)

    nnz = rows.shape[0]
    if nnz == 0:
        bsr_set_zero(dest, topology=topology)
        if mapping is not None:
            mapping._bind(dest, 0)
        return mapping

    device = dest.device
    block_shape = tuple(dest.block_shape)
    if topology == "masked":
        dest.values.zero_()
        if values3d is not None:
            launch(_add_masked_triplets, dim=(nnz, *block_shape), device=device,
                   inputs=[count, dest.nrow, dest.ncol, rows, columns, values3d, dest.offsets, dest.row_counts,
                           dest.columns, dest.scalar_values])
        return None

    coords = CoordinateList(nnz, dest.nrow, dest.ncol, device)
    list_triplet_coordinates(coords, rows, columns, count, values3d, prune_numerical_zeros)

    if topology == "padded":
        ensure_row_counts(dest, preserve=False)
        compact_offsets = empty(shape=(dest.nrow + 1,), dtype=int, device=device)
        compact_columns = empty(shape=(nnz,), dtype=int, device=device)
        block_ends = None if values3d is None else empty(shape=(nnz,), dtype=int, device=device)
        build_compact(coords, compact_offsets, compact_columns, block_ends=block_ends)
        compact_blocks = None if values3d is None else empty(shape=(max(dest.nnz, 1),), dtype=int, device=device)
        scatter_into_capacity(dest, compact_offsets, compact_columns, compact_blocks)
        if values3d is not None:
            dest.values.zero_()
            if dest.nnz > 0:
                launch(_sum_runs, dim=(dest.nnz, *block_shape), device=device,
                       inputs=[dest.nrow, dest.offsets, compact_blocks, block_ends, coords.payloads, values3d],
                       outputs=[dest.scalar_values])
        return None

    ensure_fits(dest, nnz=nnz)
    if mapping is not None:
        mapping._reserve(nnz)
        block_ends, sorted_indices, triplet_blocks = (BsrTripletMap._view(a, nnz) for a in mapping._storage)
    else:
        block_ends = None if values3d is None else empty(shape=(nnz,), dtype=int, device=device)
    build_compact(coords, dest.offsets, dest.columns, block_ends=block_ends)
    set_compact(dest)
    if values3d is not None:
        launch(_sum_runs, dim=(nnz, *block_shape), device=device,
               inputs=[dest.nrow, dest.offsets, None, block_ends, coords.payloads, values3d],
               outputs=[dest.scalar_values])
    if mapping is not None:
        copy(sorted_indices, coords.payloads, count=nnz)
        triplet_blocks.fill_(-1)
        launch(_triplet_blocks_from_runs, dim=nnz, device=device,
               inputs=[dest.nrow, dest.offsets, block_ends, sorted_indices, triplet_blocks], record_tape=False)
        mapping._bind(dest, nnz)
    return mapping


def bsr_set_from_mapped_values(dest: BsrMatrix, mapping: BsrTripletMap, values: array,
                               reduction: str = "gather") -> None:
    """Sets `dest`'s values from triplet `values` through a map built by `bsr_set_from_triplets` (no topology
    work). "gather": one thread per block coefficient, summing in `bsr_set_from_triplets`'s order (launched over
    `dest.nnz`, a bound `nnz_sync()` tightens); "atomic": one thread per triplet coefficient."""
    if not isinstance(mapping, BsrTripletMap):
        raise TypeError("Mapping must be a BsrTripletMap")
    mapping.validate(dest)
    if values.device != dest.device:
        raise ValueError(f"Values and destination must reside on the same device, got {values.device} and "
                         f"{dest.device}")
    if values.shape[0] != mapping.triplet_count:
        raise ValueError(f"Values must contain {mapping.triplet_count} triplets, got first dimension "
                         f"{values.shape[0]}")
    if not values.is_contiguous:
        raise ValueError("Values array must be contiguous")
    if values.ndim == 3 and (tuple(values.shape[1:]) != tuple(dest.block_shape)
                             or wt.type_scalar_type(values.dtype) != dest.scalar_type):
        raise ValueError(f"Values trailing shape and scalar type must match destination blocks {dest.block_shape} "
                         f"of {wt.type_repr(dest.scalar_type)}")
    if values.ndim not in (1, 3):
        raise ValueError(f"Number of dimensions for values must be one or three, got {values.ndim}")
    if reduction not in ("gather", "atomic"):
        raise ValueError(f"Unsupported mapped reduction '{reduction}', expected 'gather' or 'atomic'")
    values3d = triplet_values_3d(values, dest, what="destination block type")
    block_shape = tuple(dest.block_shape)
    if reduction == "gather":
        blocks = min(dest.nnz, mapping.triplet_count)
        if blocks > 0:
            launch(_sum_runs, dim=(blocks, *block_shape), device=dest.device,
                   inputs=[dest.nrow, dest.offsets, None, mapping._block_ends, mapping._triplet_indices, values3d],
                   outputs=[dest.scalar_values])
    else:
        dest.values[:dest.nnz].zero_()
        if mapping.triplet_count > 0:
            launch(_add_mapped_triplets, dim=(mapping.triplet_count, *block_shape), device=dest.device,
                   inputs=[mapping._triplet_blocks, values3d], outputs=[dest.scalar_values])


def bsr_from_triplets(rows_of_blocks: int, cols_of_blocks: int, rows: array, columns: array, values: array,
                      prune_numerical_zeros: bool = True) -> BsrMatrix:
    """A new compact matrix from COO triplets (duplicates summed; see `bsr_set_from_triplets`). Its `nnz` is the
    triplet count until `nnz_sync()`."""
    if values.ndim == 3:
        block_type = block_type_of(values.dtype, values.shape[1:])
        if tuple(values.shape[1:]) == (1, 1):
            block_type = matrix(shape=(1, 1), dtype=values.dtype)
    else:
        block_type = values.dtype
    A = bsr_zeros(rows_of_blocks, cols_of_blocks, block_type=block_type, device=values.device)
    A.values.requires_grad = values.requires_grad
    bsr_set_from_triplets(A, rows, columns, values, prune_numerical_zeros=prune_numerical_zeros)
    return A


def bsr_compress(src: BsrMatrix, prune_numerical_zeros: bool = True, inplace: bool = False,
                 topology: str | None = None, structure_only: bool = False) -> BsrMatrix:
    """Sorts and merges the active blocks of `src` (dropping negative and out of range columns, and zero blocks
    with `prune_numerical_zeros`) and returns it. "compact" packs the rows (`row_counts` becomes None), "padded"
    keeps the row capacity. Without `inplace` the values are summed by a differentiable kernel from a copy; with
    it, each row is sorted and merged where it lies (not differentiable). `structure_only` sorts and merges the
    columns alone, leaving `values` as they are."""
    if not isinstance(src, BsrMatrix):
        raise ValueError("bsr_compress() requires a concrete BsrMatrix")
    topology = check_topology(topology, ("compact", "padded"))
    compact = topology == "compact"
    if not compact:
        ensure_row_counts(src)

    if structure_only or inplace:
        sort_coalesce_in_place(src, prune=prune_numerical_zeros and not structure_only,
                               move_values=not structure_only, compact=compact)
        if compact:
            set_compact(src)
        return src

    device = src.device
    old = snapshot(src)  # (cloned under a Tape: the values' gradient reaches src's)
    old_values3d = scalar_view(old.values)
    coords = CoordinateList(src.nnz, src.nrow, src.ncol, device)
    list_block_coordinates(coords, 0, old)
    if prune_numerical_zeros:
        drop_zero_blocks(coords, old_values3d)
    if compact:
        build_compact(coords, src.offsets, src.columns)
        set_compact(src)
    else:
        compact_offsets = empty(shape=(src.nrow + 1,), dtype=int, device=device)
        compact_columns = empty(shape=(max(src.nnz, 1),), dtype=int, device=device)
        build_compact(coords, compact_offsets, compact_columns)
        scatter_into_capacity(src, compact_offsets, compact_columns)
    if src.nnz > 0:
        launch(_sum_equal_columns, dim=(src.nnz, *src.block_shape), device=device,
               inputs=[src.nrow, old.offsets, old.row_counts, old.columns, old_values3d, src.offsets, src.row_counts,
                       src.columns], outputs=[src.scalar_values])
    return src
