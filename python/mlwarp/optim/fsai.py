"""Adaptive factorized sparse approximate inverse (FSAI) preconditioning: Warp 1.19's
`warp.optim.linear.FSAI`, an SPD BSR matrix's preconditioner G^T G with G lower triangular and sparse.

Rows of G are built independently, one thread each, by growing lower-triangular supports on the graph of the
diagonally equilibrated matrix: for a support S of row i, solve A[S,S] z = e_i and set G[i,S] = z / sqrt(z_i).
Applying it is two sparse products, G^T (G x); there is no global factorization or triangular solve. A row-size
cap (not a step cap) bounds the supports (see hypre's adaptive FSAI for the algorithm). The kernels are in
fsai_kernels.py.
"""

from __future__ import annotations

import numpy as np

from mlwarp.arrays.array import array, clone, empty, empty_like, full, zeros
from mlwarp.launching.launch import launch
from mlwarp.sparse import BsrMatrix, bsr_copy, bsr_transposed, bsr_zeros
from mlwarp.launching.stream import Event, synchronize_stream
from mlwarp.types import dtype_to_numpy, float16, float32, float64
from mlwarp.utils import array_scan

from mlwarp.optim.fsai_kernels import (
    block_kernels, build_kernels, compare_topology, deferred_kernels, matvec_kernel, pack_kernels, refit_kernels,
    transpose_map, validate_float32_factor,
)
from mlwarp.optim.operators import LinearOperator

__all__ = ["FSAI"]

class FSAI(LinearOperator):
    """Build an adaptive factorized sparse approximate inverse of an SPD BSR matrix.

    This :class:`warp.optim.linear.LinearOperator` applies ``G.T @ G`` and can be
    passed as ``M`` to :func:`warp.optim.linear.cg` or :func:`warp.optim.linear.cr`.
    Rows of the lower-triangular factor ``G`` are built independently on the matrix
    device. Square blocks are expanded into scalar entries, so this is scalar FSAI
    even when the input uses block storage. No host numerical backend is used.

    Args:
        A: Square :class:`warp.sparse.BsrMatrix` with square blocks and ``float16``,
            ``float32`` or ``float64`` scalar entries. Both triangles must be stored. Symmetry
            and positive definiteness are caller preconditions, not checked globally.
            Stored columns must be sorted and unique within each row, as produced
            by the standard BSR construction functions.
        max_row_size: Maximum scalar entries per factor row, including its diagonal,
            in [1, 64]. One entry gives Jacobi preconditioning. Larger supports use
            quadratic per-thread setup workspace and increase setup and apply costs.
        kap_tolerance: Relative local energy improvement below which support growth
            stops, in [0, 1). Zero disables this stopping test. It is checked after
            each batch, so changing ``max_step_size`` may require retuning it.
        pivot_floor: Smallest accepted pivot of the diagonally equilibrated local
            Cholesky factorization, in (0, 1). ``None`` selects 1e-3 for ``float16``,
            1e-6 for ``float32`` and 1e-12 for ``float64``. Setup truncates a row
            before a rejected pivot.
        factor_dtype: Factor storage type: the matrix scalar type, or ``float32``
            to compress a ``float64`` factor. ``None`` uses the matrix scalar type.
            Products accumulate in the matrix scalar type; the transpose is formed
            from the same rounded factor, preserving the Gram form.
        reuse_pattern: Retain a plan for :meth:`update` on the original factor
            supports. Requires compact input storage; use :func:`warp.sparse.bsr_compress`
            with ``prune_numerical_zeros=False`` to compact a padded matrix first. Ordinary construction accepts either.
        max_step_size: Maximum distinct largest-residual frontier entries selected
            per growth step, in [1, 64]. Batching reduces searches but can change the
            selected supports. A short batch does not exhaust the row-size budget.
        regularize_refit: With ``reuse_pattern``, make :meth:`update` refit every row it can
            instead of rejecting the whole factor when one row fails. A row whose pivot
            falls to ``pivot_floor`` or below is refit with the pivot raised to the floor and
            counted as regularized. A row with a nonfinite pivot, an invalid diagonal, or a
            nonpositive result is replaced by its scaled diagonal and counted as failed. Only a
            topology mismatch rejects the update. Inspect :attr:`update_status` to see
            affected rows.
        validate_topology: With ``reuse_pattern``, have :meth:`update` compare the matrix
            topology with the original on the device and reject a mismatch. Pass ``False``
            to skip the comparison when the caller guarantees an unchanged topology; a
            changed topology then gives undefined results and may read out of bounds.
        defer_pattern: Construct from the topology of ``A`` alone, without reading its values,
            and select the supports on the device during the first successful :meth:`update`.
            Requires ``reuse_pattern``. Until then the preconditioner is the identity. Every
            kernel of that selection checks :attr:`pattern_ready` and does nothing once the
            pattern exists, so a CUDA graph that captured the first update selects the pattern
            on its first replay and only refits on later replays. ``G`` is then stored with
            padded rows (``row_counts``), ``GT`` has capacity for ``max_row_size`` entries per
            row.
            A row with an unusable diagonal keeps a diagonal-only support, which is reported
            in :attr:`update_status`, if ``regularize_refit`` is set; otherwise the update is
            rejected and the next one selects again.

    Attributes:
        G: Canonical scalar BSR factor with finite entries and a positive diagonal.
        GT: Stored transpose of ``G``, including any storage rounding.
        truncated_rows: Number of setup rows stopped by the pivot safeguard, or ``None``
            with ``defer_pattern`` (see :attr:`pattern_status`).
        pattern_ready: ``None`` without ``defer_pattern``. Otherwise an ``int`` array on the
            matrix device holding ``1`` once the supports have been selected and published.
        pattern_status: ``None`` without ``defer_pattern``. Otherwise an ``int`` array on the
            matrix device with the counts from the most recent support selection: the rows
            stopped by the pivot safeguard at index 1 and the rows whose factor lost finite
            entries or a positive diagonal at index 2. Index 0 is unused.
        source: Matrix used by the most recent successful construction or update.
        update_status: ``None`` without ``reuse_pattern``. Otherwise an ``int`` array
            on the matrix device with four counts from the most recent update: the
            topology mismatches against the original matrix, the invalid diagonals,
            the local factorizations that failed, and the rows regularized (always
            zero unless ``regularize_refit``). By default the new factors were applied
            only if the first three are zero; with ``regularize_refit`` they were applied
            unless the topology mismatched.

    Note:
        Construction synchronizes and cannot be captured, but with ``defer_pattern`` it
        needs only the topology of the matrix. :meth:`update` can be
        captured in a CUDA graph (see its documentation), and application is
        CUDA graph-capturable after warming up the kernels, including inside the
        conditional graph loop of the iterative solvers. Applications of one instance
        on different streams are ordered against each other and never overlap. Do not
        overlap an update with application, and do not replay one captured graph that
        applies the instance concurrently with another use of the same instance. Treat ``G`` and ``GT`` as read-only.
        Rebuild or call :meth:`update` after changing the input values. This
        preconditioner does not provide automatic differentiation.

    Raises:
        TypeError: The matrix scalar type is unsupported.
        ValueError: The matrix shape or an option is invalid, a diagonal is missing,
            nonpositive or nonfinite, or the factor cannot be represented by the
            selected storage type with finite entries and a positive diagonal.

    Example:
        .. code-block:: python

            from warp.optim.linear import FSAI, cg

            M = FSAI(A, max_row_size=16, reuse_pattern=True)
            cg(A, b, x, M=M)
            # After updating A.values without changing A's sparsity:
            M.update()
            cg(A, b, x, M=M)
    """

    def __init__(
        self,
        A: BsrMatrix,
        max_row_size: int = 8,
        kap_tolerance: float = 1.0e-3,
        pivot_floor: float | None = None,
        factor_dtype: type | None = None,
        reuse_pattern: bool = False,
        max_step_size: int = 1,
        regularize_refit: bool = False,
        validate_topology: bool = True,
        defer_pattern: bool = False,
    ):
        if not isinstance(A, BsrMatrix) or A.shape[0] != A.shape[1] or A.block_shape[0] != A.block_shape[1]:
            raise ValueError("FSAI requires a square BSR matrix with square blocks")
        if A.scalar_type not in (float16, float32, float64):
            raise TypeError("FSAI supports float16, float32 and float64")
        if not isinstance(max_row_size, int) or not 1 <= max_row_size <= 64:
            raise ValueError("max_row_size must be an integer in [1, 64]")
        if not isinstance(max_step_size, int) or not 1 <= max_step_size <= 64:
            raise ValueError("max_step_size must be an integer in [1, 64]")
        if not 0 <= kap_tolerance < 1:
            raise ValueError("kap_tolerance must be in [0, 1)")
        if pivot_floor is None:
            pivot_floor = {float16: 1.0e-3, float32: 1.0e-6, float64: 1.0e-12}[A.scalar_type]
        if not 0 < pivot_floor < 1:
            raise ValueError("pivot_floor must be in (0, 1)")
        if factor_dtype is None:
            factor_dtype = A.scalar_type
        if factor_dtype != A.scalar_type and not (A.scalar_type == float64 and factor_dtype == float32):
            raise ValueError("factor_dtype must be the matrix scalar type, or wp.float32 for a float64 matrix")
        if reuse_pattern and A.row_counts is not None:
            raise ValueError("reuse_pattern requires compact BSR storage; compact with bsr_compress")
        if defer_pattern and not reuse_pattern:
            raise ValueError("defer_pattern requires reuse_pattern")
        self.max_row_size = max_row_size
        self.max_step_size = max_step_size
        self.factor_dtype = factor_dtype
        self.source = A
        self.pattern_ready = None
        self.pattern_status = None
        if defer_pattern:
            self.truncated_rows = None
            self._refit = _DeferredPlan(
                self, A, max_row_size, max_step_size, kap_tolerance, pivot_floor, regularize_refit, validate_topology
            )
            self.update_status = self._refit.status
            self.pattern_ready = self._refit.ready
            self.pattern_status = self._refit.pattern_status
            self._init_runtime(A, A.shape[0], A.scalar_type, A.device)
            if A.device.is_cuda:
                synchronize_stream(A.device.stream)
            return
        # Selection reads the matrix blocks in place, including padded storage; no
        # scalar copy and no host matrix staging.
        n = A.shape[0]
        dtype, device = A.scalar_type, A.device
        scale = empty(n, dtype=dtype, device=device)
        status = zeros(3, dtype=int, device=device)
        _, _, diagonal = block_kernels(A.dtype, dtype)
        build = build_kernels(A.dtype, dtype, max_row_size, max_step_size)
        launch(
            diagonal,
            n,
            [A.offsets, A.row_counts, A.columns, A.values, scale, status, 0],
            device=device,
        )
        cols = empty(n * max_row_size, dtype=int, device=device)
        vals = empty(n * max_row_size, dtype=dtype, device=device)
        launch(
            build,
            n,
            [
                A.offsets,
                A.row_counts,
                A.columns,
                A.values,
                scale,
                dtype(kap_tolerance),
                dtype(pivot_floor),
                cols,
                vals,
                status,
                zeros(1, dtype=int, device=device),
            ],
            device=device,
        )
        diagnostics = status.numpy()
        if diagnostics[0]:
            raise ValueError(f"FSAI requires finite positive diagonals ({diagnostics[0]} invalid rows)")
        self.truncated_rows = int(diagnostics[1])
        if diagnostics[2]:
            raise ValueError("FSAI factor lost finite entries or a positive diagonal")

        self.G, growth_rank = _pack_factor(n, max_row_size, cols, vals)
        if factor_dtype != dtype:
            self.G = bsr_copy(self.G, scalar_type=factor_dtype)
            status.zero_()
            launch(
                validate_float32_factor,
                n,
                [self.G.offsets, self.G.columns, self.G.values, status],
                device=device,
            )
            if status.numpy()[0]:
                raise ValueError("factor_dtype conversion lost finite entries or a positive diagonal")
        self.GT = bsr_transposed(self.G)
        self._init_runtime(A, n, dtype, device)
        self._refit = None
        self.update_status = None
        if reuse_pattern:
            self._refit = _RefitPlan(
                self, A, growth_rank, max_row_size, pivot_floor, regularize_refit, validate_topology
            )
            self.update_status = self._refit.status
        if device.is_cuda:
            # Factor work is asynchronous; finish it so first use on any other stream,
            # or inside a captured graph, never reads unfinished factors.
            synchronize_stream(device.stream)

    def _init_runtime(self, A, n, dtype, device):
        # One persistent scratch vector, so application allocates nothing and can run
        # inside a conditional graph body. Applications on different CUDA streams are
        # ordered against each other through an event.
        self._tmp = empty(n, dtype=dtype, device=device)
        self._tmp_event = Event(device) if device.is_cuda else None
        self._last_stream = None
        self._views = {}
        super().__init__(A.shape, A.dtype, device, self._apply)

    def _flat(self, vector):
        """Return a flat scalar view of ``vector``, cached so repeated applications skip the view setup."""
        if vector.dtype == self.scalar_type and vector.ndim == 1:
            return vector
        key = (vector.ptr, vector.shape, vector.dtype)
        entry = self._views.get(key)
        if entry is None:
            if len(self._views) >= 8:
                self._views.clear()
            # The entry keeps ``vector`` alive, so its address cannot be reused while cached.
            entry = (vector, vector.view(self.scalar_type).flatten())
            self._views[key] = entry
        return entry[1]

    def update(self, A: BsrMatrix | None = None) -> "FSAI":
        """Refit on the original factor supports, preserving captured apply buffers.

        Requires ``reuse_pattern=True`` and identical compact BSR topology/storage.
        This is not a new adaptive pattern search, except that with ``defer_pattern``
        the first successful update selects the supports. Rebuild when convergence worsens.
        Failed validation leaves the previous factors intact.

        Outside graph capture, the update synchronizes and raises on failure, except that
        with both ``regularize_refit`` and ``validate_topology=False`` nothing can raise, so
        it does not synchronize. During
        CUDA graph capture, the update performs no host reads and cannot raise
        for numerical failures; after each replay, inspect :attr:`update_status`.
        Run one eager update first so the kernels are loaded before capture, and
        have the matrix keep the same arrays so a replay reads its new values.

        Args:
            A: Matrix with new numerical values. ``None`` reuses :attr:`source`.

        Returns:
            This preconditioner with updated numerical factors.

        Raises:
            ValueError: No reuse plan exists, matrix metadata or array sizes changed,
                or, when not capturing, the topology changed or a local factorization
                or storage conversion failed. Unlike
                initial construction, refits reject a bad pivot without truncating
                the fixed support. Rebuild to select new supports.
        """
        if self._refit is None:
            raise ValueError("Construct FSAI with reuse_pattern=True before updating")
        A = self.source if A is None else A
        if not isinstance(A, BsrMatrix):
            raise ValueError("update requires a Warp BSR matrix")
        self._refit.update(self, A)
        self.source = A
        return self

    def _apply(self, x, y, z, alpha, beta):
        x, y, z = (self._flat(v) for v in (x, y, z))
        # Outside graph capture, order this application after the previous one on any
        # other stream, since both share the scratch vector. Inside capture on this
        # stream the graph's own dependencies apply and events must not be recorded or
        # waited on; another stream capturing does not exempt this one.
        stream = x.device.stream if x.device.is_cuda and not x.device.stream.is_capturing else None
        if stream is not None and stream is not self._last_stream:
            # Work on one stream is already ordered; only a change of stream needs an
            # event, recorded on the stream that last used the scratch vector.
            last = self._last_stream
            if last is not None and not last.is_capturing:
                last.record_event(self._tmp_event)
                stream.wait_event(self._tmp_event)
            self._last_stream = stream
        if alpha != 0.0:
            _matvec(self.G, x, self._tmp, self._tmp, 1.0, 0.0)
        # x is fully consumed before writing z, including when x, y, z alias.
        _matvec(self.GT, self._tmp, y, z, alpha, beta)


def _pack_factor(n, width, columns, values):
    """Pack rows into sorted BSR storage, also returning each entry's growth rank."""
    result = bsr_zeros(n, n, values.dtype, device=values.device)
    counts = zeros(n + 1, dtype=int, device=values.device)
    sort, pack = pack_kernels(values.dtype, width)
    ranks = empty(n * width, dtype=int, device=values.device)
    launch(
        sort, n, [columns, values, ranks, counts, zeros(1, dtype=int, device=values.device)], device=values.device
    )
    array_scan(counts, result.offsets)
    result.notify_nnz_changed()
    packed_ranks = empty(result.nnz_sync(), dtype=int, device=values.device)
    launch(
        pack,
        n,
        [result.offsets, columns, values, ranks, result.columns, result.values, packed_ranks],
        device=values.device,
    )
    return result, packed_ranks


class _PlanBase:
    """State and validation shared by the refit plans."""

    def __init__(self, A, n, factor_dtype, width, floor, regularize, validate_topology):
        self.signature = (A.shape, A.dtype, A.device, A.row_counts is not None)
        # Every size used by an update is fixed here, so updating never reads the
        # block count back from the device and can be captured in a CUDA graph.
        self.n = n
        self.nrow = A.nrow
        self.nnz = A.nnz_sync()
        self.topology = None
        if validate_topology:
            self.topology = [clone(A.offsets[: A.nrow + 1])]
            if self.nnz:
                self.topology.append(clone(A.columns[: self.nnz]))
        self.floor = floor
        self.regularize = regularize
        # Only these configurations can report a failure to the host; otherwise an eager
        # update never needs to synchronize.
        self.raises = validate_topology or not regularize
        self.diagonal, self.refit, self.commit = refit_kernels(A.dtype, A.scalar_type, factor_dtype, width, regularize)
        self.scale = empty(n, dtype=A.scalar_type, device=A.device)
        # Counts of [topology mismatches, invalid diagonals, failed local factorizations,
        # regularized local factorizations].
        self.status = zeros(4, dtype=int, device=A.device)
        self.topology_status = self.status[0:1]

    def prepare(self, A):
        """Validate ``A``, reset the status, and compute the diagonal scaling."""
        if (A.shape, A.dtype, A.device, A.row_counts is not None) != self.signature:
            raise ValueError("FSAI update requires the original shape, dtype, device and topology")
        if A.offsets.size < self.nrow + 1 or A.columns.size < self.nnz or A.values.size < self.nnz:
            raise ValueError("FSAI update requires storage covering every block of the original matrix")
        self.status.zero_()
        if self.topology is not None:
            launch(
                compare_topology,
                self.nrow + 1,
                [A.offsets[: self.nrow + 1], self.topology[0], self.topology_status],
                device=A.device,
            )
            if self.nnz:
                launch(
                    compare_topology,
                    self.nnz,
                    [A.columns[: self.nnz], self.topology[1], self.topology_status],
                    device=A.device,
                )
        launch(
            self.diagonal,
            self.n,
            [A.offsets, None, A.columns, A.values, self.scale, self.status, 1],
            device=A.device,
        )

    def check(self):
        """Raise if the most recent update was rejected, synchronizing the device."""
        topology, diagonal, refit, _ = self.status.numpy()
        if topology:
            raise ValueError("FSAI update requires identical sparsity; rebuild to change it")
        if (diagonal or refit) and not self.regularize:
            raise ValueError("FSAI refit requires finite positive diagonals and SPD local supports")


class _RefitPlan(_PlanBase):
    """Refit on supports selected at construction, with compact factors."""

    def __init__(self, owner, A, growth_rank, width, floor, regularize, validate_topology):
        super().__init__(A, owner.G.nrow, owner.factor_dtype, width, floor, regularize, validate_topology)
        self.growth_rank = growth_rank
        self.transpose = empty(owner.G.nnz_sync(), dtype=int, device=A.device)
        launch(
            transpose_map,
            owner.G.nrow,
            [owner.G.offsets, owner.G.columns, owner.GT.offsets, owner.GT.columns, self.transpose],
            device=A.device,
        )
        self.candidate = empty_like(owner.G.values)

    def update(self, owner, A):
        self.prepare(A)
        launch(
            self.refit,
            self.n,
            [
                A.offsets,
                None,
                A.columns,
                A.values,
                owner.G.offsets,
                owner.G.columns,
                None,
                self.growth_rank,
                self.scale,
                A.scalar_type(self.floor),
                self.candidate,
                self.status,
            ],
            device=A.device,
        )
        launch(
            self.commit,
            self.transpose.size,
            [self.candidate, self.status, self.transpose, owner.G.values, owner.GT.values],
            device=A.device,
        )
        if not A.device.is_capturing and self.raises:
            self.check()


class _DeferredPlan(_PlanBase):
    """Select the supports on the device at the first successful update.

    Every kernel that builds the pattern or the transposed index first checks the
    ``ready`` flag and returns if it is set, so a graph that captured the first update
    selects the pattern on its first replay and only refits on later replays.
    """

    def __init__(self, owner, A, width, step_size, tolerance, floor, regularize, validate_topology):
        n = A.shape[0]
        device, dtype, storage = A.device, A.scalar_type, owner.factor_dtype
        super().__init__(A, n, storage, width, floor, regularize, validate_topology)
        self.width = width
        self.tolerance = tolerance
        self.select = build_kernels(A.dtype, dtype, width, step_size)
        self.sort, _ = pack_kernels(dtype, width)
        self.kernels = deferred_kernels(dtype, storage, width, regularize)
        self.ready = zeros(1, dtype=int, device=device)
        self.pattern_status = zeros(3, dtype=int, device=device)
        self.published = False
        self.support_columns = full(n * width, -1, dtype=int, device=device)
        self.support_values = zeros(n * width, dtype=dtype, device=device)
        self.support_ranks = zeros(n * width, dtype=int, device=device)
        self.support_counts = zeros(n + 1, dtype=int, device=device)
        self.candidate = zeros(n * width, dtype=storage, device=device)
        self.transpose_counts = zeros(n + 1, dtype=int, device=device)
        self.transpose_cursor = zeros(n, dtype=int, device=device)
        self.transpose_entries = zeros(n * width, dtype=int, device=device)

        # Until the first update the factor is the identity.
        rows = np.arange(n)
        columns = np.full(n * width, -1, dtype=np.int32)
        columns[rows * width] = rows
        values = np.zeros(n * width, dtype=dtype_to_numpy(storage))
        values[rows * width] = 1
        owner.G = bsr_zeros(n, n, storage, device=device, row_capacity=width)
        owner.G.columns = array(columns, dtype=int, device=device)
        owner.G.values = array(values, dtype=storage, device=device)
        owner.G.row_counts = full(n, 1, dtype=int, device=device)
        owner.G.notify_nnz_changed(nnz=n * width)
        owner.GT = bsr_zeros(n, n, storage, device=device)
        owner.GT.offsets = array(np.arange(n + 1), dtype=int, device=device)
        transposed_columns = np.zeros(n * width, dtype=np.int32)
        transposed_columns[:n] = rows
        owner.GT.columns = array(transposed_columns, dtype=int, device=device)
        transposed_values = np.zeros(n * width, dtype=values.dtype)
        transposed_values[:n] = 1
        owner.GT.values = array(transposed_values, dtype=storage, device=device)
        owner.GT.notify_nnz_changed(nnz=n * width)
        self.pattern_ready = self.ready

    def update(self, owner, A):
        device, n, width = A.device, self.n, self.width
        k = self.kernels
        self.prepare(A)
        capturing = device.is_capturing
        # Eagerly, a published pattern needs none of the pattern kernels at all.
        pending = capturing or not self.published
        if pending:
            launch(k.zero, self.pattern_status.size, [self.pattern_status, self.ready], device=device)
            launch(
                self.select,
                n,
                [
                    A.offsets,
                    None,
                    A.columns,
                    A.values,
                    self.scale,
                    A.scalar_type(self.tolerance),
                    A.scalar_type(self.floor),
                    self.support_columns,
                    self.support_values,
                    self.pattern_status,
                    self.ready,
                ],
                device=device,
            )
            launch(
                self.sort,
                n,
                [self.support_columns, self.support_values, self.support_ranks, self.support_counts, self.ready],
                device=device,
            )
        launch(
            self.refit,
            n,
            [
                A.offsets,
                None,
                A.columns,
                A.values,
                owner.G.offsets,
                self.support_columns,
                self.support_counts[1:],
                self.support_ranks,
                self.scale,
                A.scalar_type(self.floor),
                self.candidate,
                self.status,
            ],
            device=device,
        )
        if pending:
            self._publish(owner, device)
        launch(
            k.commit,
            n * width,
            [
                self.candidate,
                self.status,
                self.transpose_entries,
                owner.GT.offsets,
                owner.G.values,
                owner.GT.values,
                n,
            ],
            device=device,
        )
        if not capturing:
            if self.raises:
                self.check()
            if not self.published:
                self.published = bool(self.ready.numpy()[0])

    def _publish(self, owner, device):
        """Publish the selected supports and build the transposed index, once.

        The counting arrays start at zero and are only touched by an update that completes
        this build, which also sets the ready flag, so they never need to be cleared.
        """
        n, width, k = self.n, self.width, self.kernels
        launch(
            k.publish,
            n,
            [
                self.support_columns,
                self.support_counts,
                width,
                self.transpose_counts,
                self.ready,
                self.status,
                owner.G.columns,
                owner.G.row_counts,
            ],
            device=device,
        )
        launch(k.scan, 1, [self.transpose_counts, owner.GT.offsets, self.ready, self.status], device=device)
        launch(
            k.fill,
            n,
            [
                owner.G.columns,
                owner.G.row_counts,
                width,
                owner.GT.offsets,
                self.transpose_cursor,
                self.transpose_entries,
                self.ready,
                self.status,
            ],
            device=device,
        )
        launch(
            k.sort_columns,
            n,
            [owner.GT.offsets, self.transpose_entries, width, owner.GT.columns, self.ready, self.status],
            device=device,
        )
        launch(k.mark_ready, 1, [self.ready, self.status], device=device)


def _matvec(a, x, y, z, alpha, beta):
    """Compute ``z = alpha * a @ x + beta * y`` for a scalar CSR factor, one thread per row."""
    launch(
        matvec_kernel(a.scalar_type, x.dtype),
        a.nrow,
        [a.offsets, a.row_counts, a.columns, a.values, x, y, z, x.dtype(alpha), x.dtype(beta)],
        device=a.device,
    )

