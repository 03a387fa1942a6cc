"""warp.sparse's matrix type: `BsrMatrix` (a block sparse row matrix, CSR when its blocks are scalars), its typed
struct types (`bsr_matrix_t`), allocation (`bsr_zeros`, `bsr_set_zero`) and the storage bookkeeping every
operation shares.

Storage, as Warp's: `offsets[r]:offsets[r + 1]` is row r's storage; a compact matrix (`row_counts is None`) uses
all of it, a padded one (row capacity reserved per row) only `offsets[r]:offsets[r] + row_counts[r]`. Active
columns are sorted within a row. `nnz` is a host-side upper bound on the stored block slots (what launches are
sized by): operations that build a topology on the device leave it at a bound, and `nnz_sync()` reads the exact
`offsets[nrow]` back. `columns` and `values` may be longer than `nnz`.

A matrix is an instance of a `@wp.struct` (one struct type per block type, from `bsr_matrix_t`) whose class
derives from `BsrMatrix`, so kernels can take a matrix as a struct argument, as in Warp. Its arithmetic
operators (`A @ x`, `A + B`, `alpha * A`, ...) are attached by expressions.py, above the operations they call."""

import warnings
from typing import Generic, TypeVar

from mlwarp.core import types as wt
from mlwarp.core.vector import matrix
from mlwarp.arrays.array import array, copy, empty, zeros
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.library.builtins import namespace as wp  # wp.tid: the builtins, spelt as in user code
from mlwarp.kernels.struct import struct
from mlwarp.utils import array_scan
from mlwarp.sparse.funcs import bsr_row_index

BSR_STATUS_SUCCESS = 0
"""Sparse operation status code for success."""

BSR_STATUS_ROW_CAPACITY_EXCEEDED = 1
"""Sparse operation status code for insufficient padded row capacity."""

_TOPOLOGIES = ("compact", "padded")

_BlockType = TypeVar("BlockType")  # noqa: PLC0132  (Warp's name)


class BsrMatrix(Generic[_BlockType]):
    """Base class of BSR and CSR matrices; make them with `bsr_zeros`, `bsr_from_triplets`, `bsr_diag`, ...

    Attributes (the struct's fields): `nrow`, `ncol` (rows and columns of blocks), `nnz` (host-side upper bound on
    the stored block slots), `offsets` (nrow + 1 row starts), `row_counts` (active blocks per row of a padded
    matrix, None for a compact one), `columns` and `values` (block columns and values, at least `nnz` long)."""

    @property
    def scalar_type(self):
        """Scalar type of the block coefficients (the block type itself for a CSR matrix)."""
        return wt.type_scalar_type(self.values.dtype)

    @property
    def block_shape(self) -> tuple:
        """Shape of one block, (1, 1) for a CSR matrix."""
        return getattr(self.values.dtype, "_shape_", (1, 1))

    @property
    def block_size(self) -> int:
        """Coefficients per block."""
        return wt.type_size(self.values.dtype)

    @property
    def shape(self) -> tuple:
        """(rows, columns) of the matrix in scalars."""
        rows, cols = self.block_shape
        return (self.nrow * rows, self.ncol * cols)

    @property
    def dtype(self):
        """Type of one block."""
        return self.values.dtype

    @property
    def device(self):
        """Device of the matrix's arrays."""
        return self.offsets.device

    @property
    def requires_grad(self) -> bool:
        """Whether the values take part in adjoint computations."""
        return self.values.requires_grad

    @property
    def scalar_values(self) -> array:
        """`values` as a (blocks, block rows, block columns) array of scalars (same memory and gradient)."""
        return scalar_view(self.values)

    def uncompress_rows(self, out: array = None) -> array:
        """The row of each of the first `nnz` stored block slots (-1 outside active row ranges), in `out` if
        given (its first `nnz` entries) or a new array."""
        if out is None:
            out = empty(self.nnz, dtype=int, device=self.device)
        if self.nnz > 0:
            launch(_block_rows, dim=self.nnz, device=self.device,
                   inputs=[self.nrow, self.offsets, self.row_counts, out], record_tape=False)
        return out

    def nnz_sync(self) -> int:
        """Reads `offsets[nrow]` back to the host and makes it `nnz` (for a compact matrix, the exact block
        count; for a padded one, the total row capacity)."""
        if self.device.is_capturing and not self.device.is_cpu:
            raise RuntimeError(
                "BsrMatrix.nnz_sync() cannot read the block count during a live CUDA graph capture because it "
                "requires a device-to-host readback. Provide an explicit nnz_capacity for padded construction, or "
                "query the count outside the capture.")
        self.nnz = int(self.offsets[self.nrow:self.nrow + 1].numpy()[0])
        return self.nnz

    def status_sync(self) -> int:
        """The sticky status of padded operations (BSR_STATUS_*): successful operations do not clear it."""
        status = getattr(self, "_status", None)
        if status is None:
            return BSR_STATUS_SUCCESS
        if self.device.is_capturing and not self.device.is_cpu:
            raise RuntimeError(
                "BsrMatrix.status_sync() cannot read sparse status during a live CUDA graph capture because it "
                "requires a device-to-host readback. Query the status outside the capture.")
        return int(status.numpy()[0])

    def status_message(self) -> str:
        """`status_sync()` in words."""
        return status_message(self.status_sync())

    def clear_status(self) -> None:
        """Resets the status to BSR_STATUS_SUCCESS."""
        status = getattr(self, "_status", None)
        if status is not None:
            status.zero_()

    def notify_nnz_changed(self, nnz: int | None = None, nnz_capacity: int | None = None) -> None:
        """Tells the matrix its `offsets` (or the `nnz` bound) changed outside warp.sparse: `nnz` becomes the
        given bound (else `nnz_capacity`, else `offsets[nrow]` read back), and `columns`/`values` grow to hold
        `nnz_capacity` (default `nnz`) blocks."""
        if nnz is None:
            if nnz_capacity is None:
                self.nnz_sync()
            else:
                self.nnz = nnz_capacity
        ensure_fits(self, nnz=nnz, capacity=nnz_capacity)

    def copy_nnz_async(self) -> None:
        """Deprecated in Warp 1.10 (use `nnz_sync`). mlwarp's arrays are host memory or read synchronously, so
        there is no transfer to start: `nnz_sync` reads the current count."""
        warnings.warn("The `copy_nnz_async` method is deprecated and will be removed in a future version. Its "
                      "asynchronous transfer may be unsafe with multiple streams or CUDA graph capture; call "
                      "`nnz_sync` to synchronously update the host-side block count.", DeprecationWarning,
                      stacklevel=2)

    def ensure_status(self) -> array:
        """The matrix's status array (one int32), created zero on first use."""
        status = getattr(self, "_status", None)
        if status is None or status.device != self.device:
            status = zeros(shape=(1,), dtype=int, device=self.device)
            object.__setattr__(self, "_status", status)
        return status


class BsrExpression(Generic[_BlockType]):
    """A lazily evaluated matrix expression (Warp's `_BsrExpression`)."""


class BsrScalingExpression(BsrExpression):
    """`scale * mat`, kept unevaluated: operations read `mat` and fold `scale` into their own scaling."""

    def __init__(self, mat, scale):
        self.mat = mat
        self.scale = scale

    nrow = property(lambda self: self.mat.nrow)
    ncol = property(lambda self: self.mat.ncol)
    nnz = property(lambda self: self.mat.nnz)
    offsets = property(lambda self: self.mat.offsets)
    row_counts = property(lambda self: self.mat.row_counts)
    columns = property(lambda self: self.mat.columns)
    values = property(lambda self: self.mat.values)
    scalar_type = property(lambda self: self.mat.scalar_type)
    block_shape = property(lambda self: self.mat.block_shape)
    block_size = property(lambda self: self.mat.block_size)
    shape = property(lambda self: self.mat.shape)
    dtype = property(lambda self: self.mat.dtype)
    requires_grad = property(lambda self: self.mat.requires_grad)
    device = property(lambda self: self.mat.device)


def matrix_and_scale(bsr):
    """(matrix, scale) of a matrix or a scaling expression."""
    if isinstance(bsr, BsrMatrix):
        return bsr, 1.0
    if isinstance(bsr, BsrScalingExpression):
        return bsr.mat, bsr.scale
    raise ValueError("Argument cannot be interpreted as a BsrMatrix")


def status_message(status: int) -> str:
    if status == BSR_STATUS_SUCCESS:
        return "success"
    if status == BSR_STATUS_ROW_CAPACITY_EXCEEDED:
        return "row capacity exceeded"
    return f"unknown status {status}"


_struct_cache = {}


def bsr_matrix_t(dtype):
    """The struct type of matrices whose blocks are `dtype` (a Warp matrix type, or a scalar type for CSR)."""
    dtype = wt.type_to_warp(dtype)
    if not wt.type_is_matrix(dtype) and dtype not in wt.scalar_types:
        raise ValueError(f"BsrMatrix block type must be either warp matrix or scalar; got {wt.type_repr(dtype)}")
    if wt.type_is_matrix(dtype):
        rows, cols = dtype._shape_
        type_str = f"{wt.type_scalar_type(dtype).__name__}_{rows}_{cols}"
    else:
        type_str = dtype.__name__
    key = f"BsrMatrix_{type_str}"
    if key not in _struct_cache:
        fields = {"nrow": int, "ncol": int, "nnz": int, "offsets": array(dtype=int), "row_counts": array(dtype=int),
                  "columns": array(dtype=int), "values": array(dtype=dtype)}
        typed = type(key, (BsrMatrix,), {"__annotations__": fields, "__module__": __name__, "__qualname__": key,
                                         "__doc__": f"A BsrMatrix of {wt.type_repr(dtype)} blocks."})
        _struct_cache[key] = struct(typed)
    return _struct_cache[key]


def scalar_view(values: array) -> array:
    """A 1-d array of blocks as a (blocks, block rows, block columns) array of scalars, sharing its memory and
    gradient (a scalar block is a 1 x 1 block)."""
    block_shape = getattr(values.dtype, "_shape_", (1, 1))
    if wt.type_is_matrix(values.dtype):
        values = values.view(wt.type_scalar_type(values.dtype))  # (a 1 x 1 matrix keeps the 1-d shape)
    return values.reshape((values.shape[0], *block_shape))


def block_type_of(scalar_type, block_shape: tuple):
    """The block type of `block_shape` blocks of `scalar_type`: the scalar itself for (1, 1)."""
    if tuple(block_shape) == (1, 1):
        return scalar_type
    return matrix(shape=tuple(block_shape), dtype=scalar_type)


@kernel(enable_backward=False)
def _fill_uniform_row_capacity(row_capacity: int, offsets: array(dtype=int)):
    row = wp.tid()
    offsets[row] = row * row_capacity


@kernel(enable_backward=False)
def _fill_row_counts_from_offsets(offsets: array(dtype=int), row_counts: array(dtype=int)):
    row = wp.tid()
    row_counts[row] = offsets[row + 1] - offsets[row]


@kernel(enable_backward=False)
def _extend_offsets_with_empty_rows(old_row_count: int, offsets: array(dtype=int)):
    row = old_row_count + 1 + wp.tid()
    offsets[row] = offsets[old_row_count]


@kernel(enable_backward=False)
def _block_rows(row_count: int, offsets: array(dtype=int), row_counts: array(dtype=int), rows: array(dtype=int)):
    block = wp.tid()
    rows[block] = bsr_row_index(offsets, row_count, block, row_counts)


def ensure_fits(bsr: BsrMatrix, nnz: int | None = None, capacity: int | None = None) -> None:
    """Makes `nnz` the new bound (if given) and grows `columns`/`values` to `capacity` (default `nnz`) blocks."""
    if nnz is None:
        nnz = bsr.nnz
    else:
        bsr.nnz = int(nnz)
    if capacity is None:
        capacity = nnz
    elif capacity < nnz:
        raise ValueError(f"capacity must be at least nnz, got {capacity} and {nnz}")
    if bsr.columns.size < capacity:
        bsr.columns = empty(shape=(capacity,), dtype=int, device=bsr.columns.device)
    if bsr.values.size < capacity:
        bsr.values = empty(shape=(capacity,), dtype=bsr.values.dtype, device=bsr.values.device,
                           requires_grad=bsr.values.requires_grad)


def resize(bsr: BsrMatrix, rows_of_blocks: int | None = None, cols_of_blocks: int | None = None,
           preserve_offsets: bool = False) -> None:
    """New dimensions; with `preserve_offsets`, retained rows keep their storage and added rows get none."""
    old_nrow, old_offsets = bsr.nrow, bsr.offsets
    if rows_of_blocks is not None:
        bsr.nrow = int(rows_of_blocks)
    if cols_of_blocks is not None:
        bsr.ncol = int(cols_of_blocks)
    if bsr.offsets.size < bsr.nrow + 1:
        bsr.offsets = empty(shape=(bsr.nrow + 1,), dtype=int, device=bsr.offsets.device)
    if preserve_offsets and bsr.nrow > old_nrow:
        if bsr.offsets is not old_offsets:
            copy(bsr.offsets, old_offsets, count=old_nrow + 1)
        launch(_extend_offsets_with_empty_rows, dim=bsr.nrow - old_nrow, device=bsr.device,
               inputs=[old_nrow, bsr.offsets], record_tape=False)


def ensure_row_counts(bsr: BsrMatrix, preserve: bool = True) -> None:
    """Gives the matrix its own `row_counts` (nrow long): kept (or zeroed without `preserve`) if it has one,
    else each row's full storage (or zero)."""
    old = bsr.row_counts
    if old is not None and old.size >= bsr.nrow:
        if not preserve:
            old.zero_()
        return
    bsr.row_counts = zeros(shape=(bsr.nrow,), dtype=int, device=bsr.device)
    if preserve and bsr.nrow > 0:
        launch(_fill_row_counts_from_offsets, dim=bsr.nrow, device=bsr.device, inputs=[bsr.offsets, bsr.row_counts],
               record_tape=False)


def set_compact(bsr: BsrMatrix) -> None:
    bsr.row_counts = None


def set_zero_topology(bsr: BsrMatrix, topology: str, row_capacity, nnz_capacity, preserve_row_capacity: bool):
    if nnz_capacity is not None:
        nnz_capacity = int(nnz_capacity)
        if nnz_capacity < 0:
            raise ValueError("nnz_capacity must be nonnegative")
    if row_capacity is not None:
        if topology != "padded":
            raise ValueError("row_capacity requires topology='padded'")
        if wt.is_array(row_capacity):
            if row_capacity.ndim != 1 or row_capacity.shape[0] != bsr.nrow:
                raise ValueError(f"row_capacity array must have shape ({bsr.nrow},), got {row_capacity.shape}")
            if row_capacity.dtype != wt.int32:
                raise TypeError("row_capacity array must have dtype int32")
            if row_capacity.device != bsr.device:
                raise ValueError(f"row_capacity array must reside on the destination matrix device, got "
                                 f"{row_capacity.device} and {bsr.device}")
        else:
            row_capacity = int(row_capacity)
            if row_capacity < 0:
                raise ValueError("row_capacity must be nonnegative")

    if topology == "padded":
        if wt.is_array(row_capacity):
            bsr.offsets[:1].zero_()
            array_scan(row_capacity, bsr.offsets[1:bsr.nrow + 1], inclusive=True)
            nnz = None  # the total capacity is on the device: read back unless nnz_capacity bounds it
        elif row_capacity is not None:
            launch(_fill_uniform_row_capacity, dim=bsr.nrow + 1, device=bsr.device, inputs=[row_capacity, bsr.offsets],
                   record_tape=False)
            nnz = bsr.nrow * row_capacity
        elif preserve_row_capacity:
            nnz = bsr.nnz
        else:
            bsr.offsets.zero_()
            nnz = 0
        ensure_row_counts(bsr, preserve=False)
        bsr.ensure_status()
    else:
        bsr.offsets.zero_()
        set_compact(bsr)
        nnz = 0
    bsr.notify_nnz_changed(nnz=nnz, nnz_capacity=nnz_capacity)


def bsr_zeros(rows_of_blocks: int, cols_of_blocks: int, block_type, device=None, *, topology: str | None = None,
              row_capacity=None, nnz_capacity: int | None = None) -> BsrMatrix:
    """An empty `rows_of_blocks` x `cols_of_blocks` matrix of `block_type` blocks (a scalar type for CSR).

    `topology` "compact" (the default without `row_capacity`) or "padded" (the default with it): `row_capacity`
    reserves that many blocks per row (an int, or an int32 array of one capacity per row); `nnz_capacity`
    allocates `columns`/`values` for that many blocks (with a per-row array, it must bound their sum)."""
    if topology is None:
        topology = "padded" if row_capacity is not None else "compact"
    elif topology not in _TOPOLOGIES:
        raise ValueError(f"Unsupported topology policy: {topology}")
    bsr = bsr_matrix_t(block_type)()
    bsr.nrow = int(rows_of_blocks)
    bsr.ncol = int(cols_of_blocks)
    bsr.nnz = 0
    bsr.offsets = empty(shape=(bsr.nrow + 1,), dtype=int, device=device)
    bsr.columns = empty(shape=(0,), dtype=int, device=device)
    bsr.values = empty(shape=(0,), dtype=block_type, device=device)
    set_zero_topology(bsr, topology, row_capacity, nnz_capacity, preserve_row_capacity=False)
    return bsr


def bsr_set_zero(bsr: BsrMatrix, rows_of_blocks: int | None = None, cols_of_blocks: int | None = None, *,
                 topology: str = "compact", row_capacity=None, nnz_capacity: int | None = None):
    """Sets `bsr` to zero, possibly resizing it. "compact" drops all storage, "padded" keeps (or, with
    `row_capacity`, resets) each row's capacity with no active block, "masked" keeps the topology and zeroes the
    values."""
    if topology not in ("compact", "padded", "masked"):
        raise ValueError(f"Unsupported topology policy: {topology}")
    if row_capacity is not None and topology != "padded":
        raise ValueError("row_capacity requires topology='padded'")
    if topology == "masked":
        if rows_of_blocks is not None or cols_of_blocks is not None:
            raise ValueError("Cannot resize a matrix with topology='masked'")
        bsr.values.zero_()
        return
    preserve = topology == "padded" and row_capacity is None
    resize(bsr, rows_of_blocks, cols_of_blocks, preserve_offsets=preserve)
    set_zero_topology(bsr, topology, row_capacity, nnz_capacity, preserve_row_capacity=preserve)


def check_topology(topology, allowed=("compact", "masked", "padded")) -> str:
    if topology is None:
        return "compact"
    if topology not in allowed:
        raise ValueError(f"Unsupported topology policy: {topology}")
    return topology


def host_scalar(value) -> float:
    """A scale given as a Python or Warp scalar, as a Python number."""
    return value.value if hasattr(value, "value") else value


def as_scalar(scalar_type, value):
    """`value` (Python number or Warp scalar) as a Warp scalar of `scalar_type`."""
    return scalar_type(host_scalar(value))

