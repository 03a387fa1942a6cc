"""warp.sparse copies and rearrangements against scipy.sparse / numpy: bsr_copy and bsr_assign (scalar casts, split
and merged blocks, masked and padded destinations), transposes (compact, masked, padded, aliased), diagonals and
identities, scaling, gradients through a transposed scaled copy and a compression (closed forms), and Warp's
messages."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.sparse import (BSR_STATUS_ROW_CAPACITY_EXCEEDED, bsr_assign, bsr_compress, bsr_copy, bsr_diag,
                           bsr_from_triplets, bsr_get_diag, bsr_identity, bsr_scale, bsr_set_diag,
                           bsr_set_identity, bsr_set_transpose, bsr_transposed, bsr_zeros)
from sparse_util import assert_sorted_rows, random_triplets, scipy_of_triplets, to_dense


def _ints(a):
    return wp.array(np.asarray(a, dtype=np.int32), dtype=int)


def _random(rng, nrow, ncol, count, block_shape, scalar=wp.float32):
    rows, cols, vals = random_triplets(rng, nrow, ncol, count, block_shape)
    A = bsr_from_triplets(nrow, ncol, _ints(rows), _ints(cols), wp.array(vals, dtype=scalar))
    return A, scipy_of_triplets(nrow, ncol, rows, cols, vals, block_shape).toarray()


@pytest.mark.parametrize("block_shape", [(2, 2), (1, 1), (4, 4), (8, 8), (4, 1)])
def test_copy_to_other_block_shapes(block_shape):
    A, D = _random(np.random.default_rng(1), 4, 8, 20, (4, 2))
    for topology in ("compact", "padded"):
        B = bsr_copy(A, block_shape=block_shape, topology=topology)
        assert B.block_shape == block_shape and B.shape == A.shape
        np.testing.assert_allclose(to_dense(B), D, rtol=1e-6)
        assert_sorted_rows(B)
        assert (B.row_counts is None) == (topology == "compact")


def test_copy_casts_and_scales():
    A, D = _random(np.random.default_rng(2), 3, 3, 6, (2, 2))
    B = bsr_copy(3.0 * A, scalar_type=wp.float64)
    assert wp.types.types_equal(B.values.dtype, wp.mat22d)
    np.testing.assert_allclose(to_dense(B), 3.0 * D, rtol=1e-6)
    C = bsr_copy(A, structure_only=True)
    np.testing.assert_array_equal(C.columns.numpy()[:C.nnz_sync()], A.columns.numpy()[:A.nnz_sync()])
    P = bsr_copy(2.0 * A, topology="padded")
    np.testing.assert_array_equal(P.offsets.numpy(), A.offsets.numpy())
    np.testing.assert_allclose(to_dense(P), 2.0 * D, rtol=1e-6)


def test_assign_masked_and_padded():
    A, D = _random(np.random.default_rng(3), 16, 8, 20, (1, 2))
    diag = bsr_diag(rows_of_blocks=4, block_type=wp.mat44)
    bsr_assign(diag, A, topology="masked")  # the 4 x 4 diagonal blocks of A
    np.testing.assert_allclose(to_dense(diag), np.kron(np.eye(4), np.ones((4, 4))) * D, rtol=1e-6)

    padded = bsr_zeros(4, 4, wp.mat44, row_capacity=4)
    bsr_assign(padded, A, topology="padded")
    np.testing.assert_allclose(to_dense(padded), D, rtol=1e-6)
    tight = bsr_zeros(16, 8, wp.types.matrix(shape=(1, 2), dtype=wp.float32), row_capacity=1)
    bsr_assign(tight, A, topology="padded")
    counts = np.diff(A.offsets.numpy())
    assert tight.status_sync() == (BSR_STATUS_ROW_CAPACITY_EXCEEDED if counts.max() > 1 else 0)
    np.testing.assert_array_equal(tight.row_counts.numpy(), np.where(counts > 1, 0, counts))

    with pytest.raises(ValueError, match=r"Incompatible dest and src block shapes; block columns must evenly "
                                         r"divide one another \(Got 3, 2\)"):
        bsr_copy(A, block_shape=(1, 3))
    with pytest.raises(ValueError, match=r"The requested block shape \(32, 2\) does not evenly divide the source "
                                         r"matrix of total size \(16, 16\)"):
        bsr_copy(A, block_shape=(32, 2))
    with pytest.raises(ValueError, match=r"Incompatible destination matrix size, expected \(4, 4\), got \(2, 2\)"):
        bsr_assign(bsr_zeros(2, 2, wp.mat44), A, topology="masked")


@pytest.mark.parametrize("block_shape", [(1, 1), (2, 3)])
def test_transpose_compact_masked_padded(block_shape):
    rng = np.random.default_rng(4)
    A, D = _random(rng, 65, 67, 40, block_shape, wp.float64)
    T = bsr_transposed(A)
    assert T.block_shape == block_shape[::-1]
    np.testing.assert_array_equal(to_dense(T), D.T)
    assert_sorted_rows(T)
    np.testing.assert_array_equal(to_dense(A.transpose()), D.T)

    padded = bsr_zeros(67, 65, T.values.dtype, row_capacity=10)
    bsr_set_transpose(padded, -1.0 * A, topology="padded")
    assert padded.status_sync() == 0
    np.testing.assert_array_equal(to_dense(padded), -D.T)

    mask = bsr_from_triplets(67, 65, T.uncompress_rows()[:3], T.columns[:3], T.values[:3])
    bsr_set_transpose(mask, 2.0 * A, topology="masked")
    assert mask.nnz_sync() == 3
    expected = np.zeros_like(D.T)
    for r, c in zip(T.uncompress_rows().numpy()[:3], T.columns.numpy()[:3]):
        sl = np.s_[r * block_shape[1]:(r + 1) * block_shape[1], c * block_shape[0]:(c + 1) * block_shape[0]]
        expected[sl] = 2.0 * D.T[sl]
    np.testing.assert_array_equal(to_dense(mask), expected)

    with pytest.raises(ValueError, match="Destination block shape must be"):
        if block_shape != (1, 1):
            bsr_set_transpose(A, A)
        else:
            bsr_set_transpose(bsr_zeros(67, 65, wp.mat22d), A)


def test_transpose_in_place_of_a_square_matrix():
    diagonal = np.arange(1.0, 6.0, dtype=np.float32)
    A = bsr_from_triplets(5, 5, _ints([0, 1, 4, 2, 3, 3]), _ints([1, 3, 0, 2, 3, 4]), wp.array(
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=float))
    D = to_dense(A)
    bsr_set_transpose(A, 2.0 * A)
    np.testing.assert_array_equal(to_dense(A), 2.0 * D.T)
    I = bsr_diag(wp.array(diagonal, dtype=float))
    bsr_set_transpose(I, 2.0 * I)
    assert I.nnz_sync() == 5
    np.testing.assert_array_equal(I.values.numpy(), 2.0 * diagonal)


def test_diagonals_and_identities():
    rng = np.random.default_rng(6)
    A, D = _random(rng, 4, 4, 10, (3, 3))
    diag = bsr_get_diag(A)
    for k in range(4):
        np.testing.assert_allclose(diag.numpy()[k], D[3 * k:3 * k + 3, 3 * k:3 * k + 3], rtol=1e-6)
    np.testing.assert_allclose(bsr_get_diag(2.0 * A).numpy(), 2.0 * diag.numpy(), rtol=1e-6)
    out = wp.full(4, value=wp.mat33(7.0), dtype=wp.mat33)
    bsr_get_diag(A, out=out)
    np.testing.assert_allclose(out.numpy(), diag.numpy())

    np.testing.assert_allclose(to_dense(bsr_diag(diag)), np.kron(np.eye(4), np.ones((3, 3))) * D, rtol=1e-6)
    uniform = bsr_diag(wp.mat22(1.0, 2.0, 3.0, 4.0), rows_of_blocks=3, cols_of_blocks=4)
    assert uniform.shape == (6, 8) and uniform.nnz_sync() == 3
    np.testing.assert_array_equal(to_dense(uniform)[:, :6], np.kron(np.eye(3), [[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(to_dense(bsr_diag(2.5, rows_of_blocks=3)), 2.5 * np.eye(3))
    np.testing.assert_array_equal(to_dense(bsr_identity(3, block_type=wp.mat44)), np.eye(12))
    np.testing.assert_array_equal(bsr_identity(3, block_type=wp.float64).values.numpy(), np.ones(3))
    bsr_set_identity(A, rows_of_blocks=2)
    np.testing.assert_array_equal(to_dense(A), np.eye(6))
    bsr_set_diag(A, wp.mat33(2.0), rows_of_blocks=3, cols_of_blocks=2)
    assert A.shape == (9, 6) and A.nnz_sync() == 2

    with pytest.raises(ValueError, match="BsrMatrix block type must be either warp matrix or scalar"):
        bsr_diag(wp.vec3(1.0), rows_of_blocks=3)
    with pytest.raises(ValueError, match="rows_of_blocks and/or cols_of_blocks must be provided"):
        bsr_diag(1.0)
    with pytest.raises(ValueError, match="Output array must be of length at least 4"):
        bsr_get_diag(bsr_identity(4, float), out=wp.zeros(3, dtype=float))


def test_scale():
    A, D = _random(np.random.default_rng(7), 3, 3, 5, (2, 2), wp.float64)
    assert bsr_scale(A, 0.5) is A
    np.testing.assert_allclose(to_dense(A), 0.5 * D, rtol=1e-12)
    bsr_scale(2.0 * A, 3.0)
    np.testing.assert_allclose(to_dense(A), 3.0 * D, rtol=1e-12)
    nnz = A.nnz
    bsr_scale(A, 0.0)
    assert A.nnz == nnz and not to_dense(A).any()


def test_gradients_through_transpose_copy_and_compress():
    A, _ = _random(np.random.default_rng(8), 5, 6, 6, (1, 3), wp.float64)
    A.values.requires_grad = True
    with wp.Tape() as tape:
        T = (2.0 * A).transpose().eval()
    tape.backward(grads={T.values: wp.array(np.ones((T.values.shape[0], 3, 1)), dtype=T.values.dtype)})
    active = A.nnz_sync()
    np.testing.assert_array_equal(A.values.grad.numpy()[:active], np.full((active, 1, 3), 2.0))

    vals = wp.array([1.0, 2.0, 3.0, 0.0], dtype=float, requires_grad=True)
    B = bsr_zeros(1, 3, float)
    B.nnz = 4
    B.offsets = _ints([0, 4])
    B.columns = _ints([1, 0, 1, 2])
    B.values = vals
    with wp.Tape() as tape:
        bsr_compress(B)
    np.testing.assert_array_equal(to_dense(B), [[2.0, 4.0, 0.0]])
    B.values.grad[1:2].fill_(1.0)  # the (0, 1) block: triplets 0 and 2
    tape.backward()
    np.testing.assert_array_equal(vals.grad.numpy(), [1.0, 0.0, 1.0, 0.0])
