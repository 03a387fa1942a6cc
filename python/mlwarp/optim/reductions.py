"""Dot products for the linear solvers, on the device: several pairs of vectors at once (`columns`), one product
per subproblem when the system is batched (a single problem is one batch spanning the vectors). Results stay in a
device array that the solvers' kernels read, so an iteration never waits on the host.

A product is two launches: `chunks` threads per (column, subproblem) each sum a strided share of the subproblem's
range (neighbouring threads read neighbouring entries), then one thread per (column, subproblem) sums the chunks'
partial sums in order: deterministic, and with error growing with n / chunks + chunks rather than n.
"""

from __future__ import annotations

from typing import Any

from mlwarp.arrays.array import array, array2d, array3d, zeros
from mlwarp.library.builtins import namespace as wp
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.optim.views import repeat_rows, scalar_view

# Threads per (column, subproblem) in the first stage: enough to fill a GPU (spread over the subproblems), a few
# per core on the CPU.
_CUDA_THREADS = 8192
_MAX_CUDA_CHUNKS = 1024
_CPU_CHUNKS = 16


@kernel(enable_backward=False)
def _partial_dots(a: array2d(dtype=Any), b: array2d(dtype=Any), batch_offsets: array(dtype=int),
                  partial_sums: array3d(dtype=Any)):
    column, batch, chunk = wp.tid()
    begin = int(0)
    end = a.shape[1]
    if batch_offsets:
        begin = batch_offsets[batch]
        end = batch_offsets[batch + 1]
    acc = partial_sums.dtype(0.0)
    for i in range(begin + chunk, end, partial_sums.shape[2]):
        acc += a[column, i] * b[column, i]
    partial_sums[column, batch, chunk] = acc


@kernel(enable_backward=False)
def _sum_chunks(partial_sums: array3d(dtype=Any), result: array2d(dtype=Any)):
    column, batch = wp.tid()
    acc = result.dtype(0.0)
    for chunk in range(partial_sums.shape[2]):
        acc += partial_sums[column, batch, chunk]
    result[column, batch] = acc


class DotProducts:
    """Dot products of vectors of `length` scalars, up to `max_columns` pairs at a time, per subproblem of
    `batch_offsets` (one product when None). `compute(a, b, col_offset)` writes the products of the rows of `a`
    and `b` into result columns col_offset.. and returns them, shape (rows, batch_count); `col(i)` is column
    i's products, shape (batch_count,)."""

    def __init__(self, length: int, scalar_type, device, max_columns: int = 1, batch_offsets=None):
        self.device = device
        self.batch_offsets = batch_offsets
        self.batch_count = 1 if batch_offsets is None else batch_offsets.shape[0] - 1
        if device.is_cuda:
            chunks = min(_MAX_CUDA_CHUNKS, max(1, _CUDA_THREADS // self.batch_count))
        else:
            chunks = _CPU_CHUNKS
        chunks = max(1, min(chunks, length))
        self.results = zeros((max_columns, self.batch_count), dtype=scalar_type, device=device)
        self.partial_sums = zeros((max_columns, self.batch_count, chunks), dtype=scalar_type, device=device)

    def compute(self, a, b, col_offset: int = 0):
        a = scalar_view(a)
        b = scalar_view(b)
        if a.ndim == 1:
            a = repeat_rows(a, 1)
        if b.ndim == 1:
            b = repeat_rows(b, 1)
        columns = a.shape[0]
        out = self.results[col_offset:col_offset + columns]
        partial_sums = self.partial_sums[col_offset:col_offset + columns]
        launch(_partial_dots, dim=partial_sums.shape, device=self.device,
               inputs=[a, b, self.batch_offsets, partial_sums])
        launch(_sum_chunks, dim=out.shape, device=self.device, inputs=[partial_sums, out])
        return out

    def col(self, column: int = 0):
        return self.results[column]

    def cols(self, count: int, start: int = 0):
        return self.results[start:start + count]
