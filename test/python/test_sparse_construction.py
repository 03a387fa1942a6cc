"""warp.sparse construction against scipy.sparse: matrices from COO triplets (compact, padded, masked), triplet maps,
compression, allocation and storage bookkeeping, matrices as struct arguments of user kernels, Warp's error
messages, and the gradient of triplet values (closed form: each triplet receives its block's seed)."""

import numpy as np
import pytest

import mlwarp as wp
import mlwarp.sparse as sparse
from mlwarp.sparse import (BSR_STATUS_ROW_CAPACITY_EXCEEDED, BSR_STATUS_SUCCESS, BsrMatrix, BsrTripletMap,
                           bsr_compress, bsr_from_triplets, bsr_matrix_t, bsr_set_from_mapped_values,
                           bsr_set_from_triplets, bsr_set_zero, bsr_zeros)
from sparse_util import active_blocks, assert_sorted_rows, random_triplets, scipy_of_triplets, to_dense


def _ints(a):
    return wp.array(np.asarray(a, dtype=np.int32), dtype=int)


def _floats(a):
    return wp.array(np.asarray(a, dtype=np.float32), dtype=float)


def test_wp_sparse_is_the_package_with_warps_names():
    assert wp.sparse is sparse
    assert len(sparse.__all__) == 28
    assert all(hasattr(sparse, name) for name in sparse.__all__)


@pytest.mark.parametrize("scalar", [wp.float32, wp.float64])
@pytest.mark.parametrize("block_shape", [(1, 1), (3, 2)])
def test_from_triplets_sums_duplicates_like_scipy(scalar, block_shape):
    rng = np.random.default_rng(7)
    nrow, ncol, count = 5, 7, 60
    rows, cols, vals = random_triplets(rng, nrow, ncol, count, block_shape)
    block_type = scalar if block_shape == (1, 1) else wp.types.matrix(shape=block_shape, dtype=scalar)
    values = wp.array(vals.reshape(count) if block_shape == (1, 1) else vals, dtype=block_type)
    A = bsr_from_triplets(nrow, ncol, _ints(rows), _ints(cols), values)
    assert A.nnz == count  # the triplet count bounds the blocks until nnz_sync
    assert A.row_counts is None and A.block_shape == block_shape and A.shape == (nrow * block_shape[0],
                                                                                ncol * block_shape[1])
    assert A.nnz_sync() == len(set(zip(rows.tolist(), cols.tolist())))
    assert_sorted_rows(A)
    reference = scipy_of_triplets(nrow, ncol, rows, cols, vals, block_shape).toarray()
    np.testing.assert_allclose(to_dense(A), reference, rtol=1e-5 if scalar == wp.float32 else 1e-12)

    # a 3-d array of scalars is the same values
    B = bsr_zeros(nrow, ncol, block_type)
    bsr_set_from_triplets(B, _ints(rows), _ints(cols), wp.array(vals.reshape(count, *block_shape), dtype=scalar))
    np.testing.assert_allclose(to_dense(B), reference, rtol=1e-5 if scalar == wp.float32 else 1e-12)


def test_triplets_past_count_out_of_range_and_zero_blocks_are_dropped():
    rows = [1, -1, 1, 3, 1, 0, 1, 1, -7, 1]
    cols = [2, 2, -1, 2, 3, 0, 2, 2, 2, 2]
    vals = [1.0, 7.0, 8.0, 9.0, 10.0, 11.0, 2.0, 0.0, 13.0, 32.0]
    A = bsr_zeros(2, 3, float)
    bsr_set_from_triplets(A, _ints(rows), _ints(cols), wp.array(vals, dtype=float), count=_ints([9]))
    expected = np.zeros((2, 3))
    expected[0, 0], expected[1, 2] = 11.0, 3.0  # (1, 2): 1 + 2 + 0; the last (1, 2) is past count
    np.testing.assert_array_equal(to_dense(A), expected)
    assert A.nnz_sync() == 2

    zeros = wp.zeros(4, dtype=float)
    assert bsr_from_triplets(4, 4, _ints([0, 1, 2, 3]), _ints([0, 1, 2, 3]), zeros).nnz_sync() == 0
    assert bsr_from_triplets(4, 4, _ints([0, 1, 2, 3]), _ints([0, 1, 2, 3]), zeros,
                             prune_numerical_zeros=False).nnz_sync() == 4
    for nrow, ncol in ((0, 3), (3, 0)):
        empty = bsr_zeros(nrow, ncol, float)
        bsr_set_from_triplets(empty, _ints([0]), _ints([0]), wp.array([1.0], dtype=float))
        assert empty.nnz_sync() == 0


def test_topology_only_triplets_and_zero_length_input():
    A = bsr_zeros(2, 3, float)
    bsr_set_from_triplets(A, _ints([1, 0, 1]), _ints([2, 1, 2]), values=None)
    assert A.nnz_sync() == 2
    np.testing.assert_array_equal(A.offsets.numpy(), [0, 1, 2])
    np.testing.assert_array_equal(A.columns.numpy()[:2], [1, 2])
    bsr_set_from_triplets(A, _ints([]), _ints([]), wp.zeros(0, dtype=float))
    assert A.nnz == 0 and A.nnz_sync() == 0


def test_padded_triplets_keep_row_capacity_and_report_overflow():
    A = bsr_zeros(2, 3, float, row_capacity=_ints([2, 3]))
    assert A.nnz == 5 and A.row_counts is not None
    bsr_set_from_triplets(A, _ints([1, 0, 1, 0, 1]), _ints([2, 1, 2, 0, 1]), _floats([4.0, 1.0, 5.0, 2.0, 3.0]),
                          topology="padded")
    np.testing.assert_array_equal(A.offsets.numpy(), [0, 2, 5])
    np.testing.assert_array_equal(A.row_counts.numpy(), [2, 2])
    np.testing.assert_array_equal(to_dense(A), [[2.0, 1.0, 0.0], [0.0, 3.0, 9.0]])
    np.testing.assert_array_equal(A.uncompress_rows().numpy(), [0, 0, 1, 1, -1])
    assert A.status_sync() == BSR_STATUS_SUCCESS and A.status_message() == "success"

    small = bsr_zeros(2, 3, float, row_capacity=1)
    bsr_set_from_triplets(small, _ints([0, 0, 1]), _ints([0, 2, 1]), _floats([1.0, 2.0, 3.0]), topology="padded")
    assert small.status_sync() == BSR_STATUS_ROW_CAPACITY_EXCEEDED
    assert small.status_message() == "row capacity exceeded"
    np.testing.assert_array_equal(small.row_counts.numpy(), [0, 1])  # the row that overflows is left empty
    np.testing.assert_array_equal(to_dense(small), [[0.0, 0.0, 0.0], [0.0, 3.0, 0.0]])
    small.clear_status()
    assert small.status_sync() == BSR_STATUS_SUCCESS

    bsr_set_zero(A, topology="padded")
    np.testing.assert_array_equal(A.offsets.numpy(), [0, 2, 5])
    np.testing.assert_array_equal(A.row_counts.numpy(), [0, 0])
    bsr_set_zero(A, topology="padded", row_capacity=_ints([0, 2]))
    assert A.nnz_sync() == 2
    bsr_set_zero(A)
    assert A.row_counts is None and A.nnz == 0


def test_masked_triplets_fill_only_existing_blocks():
    A = bsr_from_triplets(3, 3, _ints([0, 1, 2]), _ints([0, 1, 2]), _floats([1.0, 1.0, 1.0]))
    bsr_set_from_triplets(A, _ints([0, 0, 2, 1, 2]), _ints([0, 1, 2, 1, 2]), _floats([5.0, 6.0, 7.0, 8.0, 9.0]),
                          topology="masked")
    np.testing.assert_array_equal(to_dense(A), np.diag([5.0, 8.0, 16.0]))


@pytest.mark.parametrize("reduction", ["gather", "atomic"])
def test_triplet_map_refreshes_values(reduction):
    rng = np.random.default_rng(3)
    rows, cols, vals = random_triplets(rng, 4, 5, 30, (2, 2))
    A = bsr_zeros(4, 5, wp.mat22)
    mapping = bsr_set_from_triplets(A, _ints(rows), _ints(cols), wp.array(vals, dtype=wp.mat22),
                                    prune_numerical_zeros=False, build_mapping=True)
    assert isinstance(mapping, BsrTripletMap) and mapping.triplet_count == 30 and mapping.capacity >= 30
    new_vals = rng.random((30, 2, 2))
    bsr_set_from_mapped_values(A, mapping, wp.array(new_vals, dtype=wp.mat22), reduction=reduction)
    np.testing.assert_allclose(to_dense(A), scipy_of_triplets(4, 5, rows, cols, new_vals, (2, 2)).toarray(),
                               rtol=1e-5)
    blocks = mapping._triplet_blocks.numpy()
    r, c, _ = active_blocks(A)
    np.testing.assert_array_equal(r[blocks], rows)
    np.testing.assert_array_equal(c[blocks], cols)

    reused = BsrTripletMap(capacity=64)
    assert bsr_set_from_triplets(A, _ints(rows), _ints(cols), prune_numerical_zeros=False,
                                 build_mapping=reused) is reused
    with pytest.raises(ValueError, match="differs from that used to build the triplet map"):  # (other arrays)
        bsr_set_from_mapped_values(bsr_zeros(4, 5, wp.mat22), mapping, wp.array(new_vals, dtype=wp.mat22))


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("topology", ["compact", "padded"])
def test_compress_sorts_merges_and_drops_invalid_columns(inplace, topology):
    A = bsr_zeros(2, 3, float, row_capacity=_ints([5, 4]))
    A.row_counts = _ints([5, 3])
    A.columns = _ints([2, 0, 2, -1, 1, 1, 2, 1, 7])
    A.values = wp.array([5.0, 2.0, -1.0, 9.0, 0.0, 4.0, 8.0, -4.0, 6.0], dtype=float)
    bsr_compress(A, inplace=inplace, topology=topology)
    np.testing.assert_array_equal(to_dense(A), [[2.0, 0.0, 4.0], [0.0, 0.0, 8.0]])
    assert_sorted_rows(A)
    if topology == "compact":
        assert A.row_counts is None and A.nnz_sync() == 4  # the zero (0, 1) block is pruned, 1 + -4 is kept
        np.testing.assert_array_equal(A.offsets.numpy(), [0, 2, 4])
    else:
        np.testing.assert_array_equal(A.offsets.numpy(), [0, 5, 9])
        np.testing.assert_array_equal(A.row_counts.numpy(), [2, 2])


def test_compress_structure_only_leaves_values():
    A = bsr_zeros(1, 3, wp.mat22)
    A.nnz = 4
    A.offsets = _ints([0, 4])
    A.columns = _ints([1, 0, 1, 2])
    values = np.arange(16, dtype=np.float32).reshape(4, 2, 2)
    A.values = wp.array(values, dtype=wp.mat22)
    bsr_compress(A, structure_only=True)
    assert A.nnz_sync() == 3
    np.testing.assert_array_equal(A.columns.numpy()[:3], [0, 1, 2])
    np.testing.assert_array_equal(A.values.numpy(), values)


def test_allocation_and_nnz_bookkeeping():
    A = bsr_zeros(3, 4, float)
    assert (A.nrow, A.ncol, A.nnz, A.block_size, A.scalar_type) == (3, 4, 0, 1, wp.float32)
    A.notify_nnz_changed(10)
    assert A.nnz == 10 and A.columns.shape[0] >= 10 and A.values.shape[0] >= 10 and A.nnz_sync() == 0
    A.offsets.assign(_ints([0, 2, 3, 6]))
    A.notify_nnz_changed()
    assert A.nnz == 6
    bsr_set_zero(A, rows_of_blocks=2, cols_of_blocks=5)
    assert A.shape == (2, 5) and A.nnz_sync() == 0
    with pytest.warns(DeprecationWarning, match="copy_nnz_async"):
        A.copy_nnz_async()
    B = bsr_zeros(2, 2, float, row_capacity=3, nnz_capacity=8)
    assert B.nnz == 6 and B.values.shape[0] == 8  # the uniform capacity is known: storage for 8
    np.testing.assert_array_equal(B.offsets.numpy(), [0, 3, 6])


def test_matrix_struct_in_a_user_kernel():
    A = bsr_from_triplets(3, 4, _ints([0, 2, 2, 1]), _ints([3, 0, 2, 1]), _floats([1.0, 2.0, 3.0, 4.0]))
    assert isinstance(A, BsrMatrix) and type(A) is bsr_matrix_t(wp.float32)

    @wp.kernel
    def densify(m: bsr_matrix_t(wp.float32), out: wp.array2d(dtype=float)):
        r, c = wp.tid()
        block = sparse.bsr_block_index(r, c, m.offsets, m.columns)
        if block != -1:
            out[r, c] = m.values[block]
            assert sparse.bsr_row_index(m.offsets, m.nrow, block) == r

    out = wp.zeros((3, 4), dtype=float)
    wp.launch(densify, dim=(3, 4), inputs=[A, out])
    np.testing.assert_array_equal(out.numpy(), to_dense(A))


def test_gradient_reaches_each_triplet():
    vals = wp.array(np.random.default_rng(1).random((4, 3, 3)), dtype=wp.mat33, requires_grad=True)
    with wp.Tape() as tape:
        A = bsr_from_triplets(2, 2, _ints([1, 0, 0, 1]), _ints([0, 1, 0, 0]), vals)
    assert A.nnz_sync() == 3  # blocks (0, 0), (0, 1), (1, 0) <- triplets 2, 1, {0, 3}
    seeds = np.arange(1.0, 4.0)
    A.values.grad[:3].assign(wp.array(np.repeat(seeds, 9).reshape(3, 3, 3), dtype=wp.mat33))
    tape.backward()
    np.testing.assert_array_equal(vals.grad.numpy()[:, 0, 0], [3.0, 2.0, 1.0, 3.0])


def test_warps_errors():
    A = bsr_zeros(2, 2, float)
    with pytest.raises(TypeError, match=r"Rows and columns arrays must be of type int32$"):
        bsr_set_from_triplets(A, _floats([0.0]), _floats([0.0]), _floats([1.0]))
    with pytest.raises(ValueError, match="Rows and columns arrays must have the same length, got 2 and 1"):
        bsr_set_from_triplets(A, _ints([0, 1]), _ints([0]), _floats([1.0, 2.0]))
    with pytest.raises(ValueError, match="Values array type must correspond to that of the dest matrix"):
        bsr_set_from_triplets(A, _ints([0]), _ints([0]), wp.array([1.0], dtype=wp.float64))
    with pytest.raises(ValueError, match="Values array must be contiguous"):
        bsr_set_from_triplets(A, _ints([0, 1]), _ints([0, 1]), _floats([1.0, 2.0, 3.0, 4.0])[::2])
    with pytest.raises(ValueError, match="Count array must be a single-element array"):
        bsr_set_from_triplets(A, _ints([0]), _ints([0]), _floats([1.0]), count=_ints([1, 1]))
    with pytest.raises(ValueError, match="Unsupported topology policy: sparse"):
        bsr_set_from_triplets(A, _ints([0]), _ints([0]), _floats([1.0]), topology="sparse")
    with pytest.raises(ValueError, match="build_mapping requires prune_numerical_zeros=False"):
        bsr_set_from_triplets(A, _ints([0]), _ints([0]), _floats([1.0]), build_mapping=True)
    with pytest.raises(ValueError, match='build_mapping requires topology="compact"'):
        bsr_set_from_triplets(A, _ints([0]), _ints([0]), prune_numerical_zeros=False, topology="masked",
                              build_mapping=True)
    with pytest.raises(TypeError, match="build_mapping must be None, a bool or a BsrTripletMap"):
        bsr_set_from_triplets(A, _ints([0]), _ints([0]), prune_numerical_zeros=False, build_mapping="yes")
    with pytest.raises(ValueError, match="has not been built"):
        bsr_set_from_mapped_values(A, BsrTripletMap(4), _floats([1.0]))
    with pytest.raises(ValueError, match="BsrMatrix block type must be either warp matrix or scalar; got vec3f"):
        bsr_zeros(2, 2, wp.vec3)
    with pytest.raises(ValueError, match="row_capacity requires topology='padded'"):
        bsr_zeros(2, 2, float, topology="compact", row_capacity=2)
    with pytest.raises(ValueError, match="Cannot resize a matrix with topology='masked'"):
        bsr_set_zero(A, rows_of_blocks=3, topology="masked")
    with pytest.raises(ValueError, match="requires a concrete BsrMatrix"):
        bsr_compress(2.0 * A)
