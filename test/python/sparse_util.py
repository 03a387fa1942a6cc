"""Helpers of the warp.sparse tests: a matrix read back as scipy.sparse / numpy (from its arrays, by the storage
rules Warp documents), and random COO triplets with their scipy reference."""

import numpy as np
import scipy.sparse as sp


def active_blocks(bsr):
    """(rows, columns, values) of the active blocks: rows' storage, or its first row_counts[r] blocks."""
    offsets = bsr.offsets.numpy()
    counts = None if bsr.row_counts is None else bsr.row_counts.numpy()
    columns = bsr.columns.numpy()
    values = bsr.values.numpy().reshape(-1, *bsr.block_shape)
    rows, cols, vals = [], [], []
    for r in range(bsr.nrow):
        end = offsets[r + 1] if counts is None else offsets[r] + counts[r]
        for b in range(offsets[r], end):
            rows.append(r)
            cols.append(columns[b])
            vals.append(values[b])
    return np.array(rows, dtype=int), np.array(cols, dtype=int), np.array(vals).reshape(-1, *bsr.block_shape)


def to_dense(bsr) -> np.ndarray:
    """The matrix in scalars, duplicate blocks summed (scipy's bsr_matrix of its blocks)."""
    rows, cols, vals = active_blocks(bsr)
    br, bc = bsr.block_shape
    out = np.zeros(bsr.shape)
    for r, c, v in zip(rows, cols, vals):
        out[r * br:(r + 1) * br, c * bc:(c + 1) * bc] += v
    return out


def scipy_of_triplets(nrow, ncol, rows, cols, vals, block_shape) -> sp.csr_matrix:
    """The scalar CSR matrix of block triplets (duplicates summed by scipy)."""
    br, bc = block_shape
    i, j = np.meshgrid(np.arange(br), np.arange(bc), indexing="ij")
    r = (rows[:, None, None] * br + i[None]).ravel()
    c = (cols[:, None, None] * bc + j[None]).ravel()
    return sp.coo_matrix((np.asarray(vals, dtype=np.float64).reshape(-1, br, bc).ravel(), (r, c)),
                         shape=(nrow * br, ncol * bc)).tocsr()


def random_triplets(rng, nrow, ncol, count, block_shape):
    rows = rng.integers(0, nrow, count).astype(np.int32)
    cols = rng.integers(0, ncol, count).astype(np.int32)
    vals = rng.random((count, *block_shape))
    return rows, cols, vals


def assert_sorted_rows(bsr):
    """Active columns strictly increase within each row (compressed)."""
    rows, cols, _ = active_blocks(bsr)
    for r in np.unique(rows):
        assert np.all(np.diff(cols[rows == r]) > 0), (r, cols[rows == r])
