"""warp.sparse sums and products against scipy.sparse: bsr_mv (plain, transposed, scaled, aliased), bsr_mm
(compact with and without a bound, reused topology, masked, padded, aliased), bsr_axpy (compact, masked,
padded, aliased), the matrix operators, the gradient of a matrix-vector product (closed form: A^T seed), and
Warp's messages."""

import numpy as np
import pytest
import scipy.sparse as sp

import mlwarp as wp
from mlwarp.sparse import (BSR_STATUS_ROW_CAPACITY_EXCEEDED, bsr_axpy, bsr_axpy_work_arrays, bsr_diag,
                           bsr_from_triplets, bsr_mm, bsr_mm_work_arrays, bsr_mv, bsr_set_from_triplets,
                           bsr_zeros)
from sparse_util import assert_sorted_rows, random_triplets, to_dense


def _ints(a):
    return wp.array(np.asarray(a, dtype=np.int32), dtype=int)


def _random_bsr(rng, nrow, ncol, count, block_shape, scalar=wp.float64):
    rows, cols, vals = random_triplets(rng, nrow, ncol, count, block_shape)
    return bsr_from_triplets(nrow, ncol, _ints(rows), _ints(cols), wp.array(vals, dtype=scalar))


def _vector(values, length, scalar=wp.float64):
    dtype = scalar if length == 1 else wp.types.vector(length=length, dtype=scalar)
    return wp.array(values.reshape(-1) if length == 1 else values.reshape(-1, length), dtype=dtype)


@pytest.mark.parametrize("block_shape", [(1, 1), (1, 3), (3, 2)])
def test_mv_plain_transposed_scaled_and_aliased(block_shape):
    rng = np.random.default_rng(11)
    A = _random_bsr(rng, 4, 5, 12, block_shape)
    D = sp.csr_matrix(to_dense(A))
    rows, cols = A.shape
    x_np, y_np = rng.random(cols), rng.random(rows)
    x, y = _vector(x_np, block_shape[1]), _vector(y_np, block_shape[0])

    np.testing.assert_allclose(bsr_mv(A, x).numpy().ravel(), D @ x_np, rtol=1e-12)
    np.testing.assert_allclose((A @ x).numpy().ravel(), D @ x_np, rtol=1e-12)
    bsr_mv(A, x, y, alpha=-1.5, beta=2.0)
    np.testing.assert_allclose(y.numpy().ravel(), -1.5 * (D @ x_np) + 2.0 * y_np, rtol=1e-12)

    y_np = y.numpy().ravel().copy()
    np.testing.assert_allclose(bsr_mv(A, y, transpose=True).numpy().ravel(), D.T @ y_np, rtol=1e-12)
    np.testing.assert_allclose((y @ (2.0 * A)).numpy().ravel(), 2.0 * (D.T @ y_np), rtol=1e-12)
    x_np = x.numpy().ravel().copy()
    bsr_mv(A, y, x, alpha=0.5, beta=-1.0, transpose=True)
    np.testing.assert_allclose(x.numpy().ravel(), 0.5 * (D.T @ y_np) - x_np, rtol=1e-12)

    # x aliasing y: the product reads a copy (a given work buffer, or a new one)
    AAt = bsr_mm(A, A.transpose())
    DDt = (D @ D.T).toarray()
    bsr_mv(AAt, y, y, alpha=-1.0, beta=2.0, work_buffer=wp.empty_like(y))
    np.testing.assert_allclose(y.numpy().ravel(), -(DDt @ y_np) + 2.0 * y_np, rtol=1e-12)


def test_mv_2d_scalar_arrays_and_errors():
    rng = np.random.default_rng(2)
    A = _random_bsr(rng, 3, 2, 6, (2, 2))
    x_np = rng.random((2, 2))
    y = wp.zeros((3, 2), dtype=wp.float64)
    bsr_mv(A, wp.array(x_np, dtype=wp.float64), y)
    np.testing.assert_allclose(y.numpy().ravel(), to_dense(A) @ x_np.ravel(), rtol=1e-12)
    with pytest.raises(ValueError, match="Incompatible 'x' vector for bsr_mv"):
        bsr_mv(A, wp.zeros(5, dtype=wp.float64), y)
    with pytest.raises(ValueError, match="Incompatible 'y' vector for bsr_mv"):
        bsr_mv(A, wp.zeros(4, dtype=wp.float64), wp.zeros(5, dtype=wp.float64))
    with pytest.raises(ValueError, match="Work buffer size is insufficient"):
        bsr_mv(A.transpose() @ A, y, y, work_buffer=wp.zeros(1, dtype=wp.float64))


def test_mv_gradient_is_the_transposed_product():
    rng = np.random.default_rng(5)
    A = _random_bsr(rng, 3, 4, 8, (2, 3))
    x = wp.array(rng.random(12), dtype=wp.float64, requires_grad=True)
    y = wp.zeros(6, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        bsr_mv(A, x, y)
    seed = rng.random(6)
    tape.backward(grads={y: wp.array(seed, dtype=wp.float64)})
    np.testing.assert_allclose(x.grad.numpy(), to_dense(A).T @ seed, rtol=1e-12)


@pytest.mark.parametrize("block_shapes", [((1, 1), (1, 1)), ((3, 2), (2, 3)), ((1, 3), (3, 1))])
def test_mm_compact_against_scipy(block_shapes):
    rng = np.random.default_rng(4)
    xs, ys = block_shapes
    x = _random_bsr(rng, 3, 2, 6, xs)
    y = _random_bsr(rng, 2, 4, 6, ys)
    z = _random_bsr(rng, 3, 4, 6, (xs[0], ys[1]))
    X, Y = sp.csr_matrix(to_dense(x)), sp.csr_matrix(to_dense(y))
    work = bsr_mm_work_arrays()
    for alpha, beta in ((-1.0, 2.0), (2.0, 0.0)):
        Z = to_dense(z)
        bsr_mm(x, y, z, alpha, beta, work_arrays=work)
        np.testing.assert_allclose(to_dense(z), alpha * (X @ Y).toarray() + beta * Z, rtol=1e-12)
        assert_sorted_rows(z)
    bsr_mm(x, y, z, 3.0, 0.0, work_arrays=work, reuse_topology=True)
    np.testing.assert_allclose(to_dense(z), 3.0 * (X @ Y).toarray(), rtol=1e-12)
    np.testing.assert_allclose(to_dense((2.0 * x) @ y), 2.0 * (X @ Y).toarray(), rtol=1e-12)


def test_mm_bound_masked_padded_and_aliased():
    rng = np.random.default_rng(8)
    x = _random_bsr(rng, 4, 4, 10, (2, 2))
    X = to_dense(x)

    bounded = bsr_zeros(4, 4, wp.mat22d)
    bsr_mm(x, x, bounded, max_new_nnz=64)
    assert bounded.nnz == 64
    np.testing.assert_allclose(to_dense(bounded), X @ X, rtol=1e-12)

    masked = bsr_diag(rows_of_blocks=4, block_type=wp.mat22d)
    bsr_mm(x, x, masked, topology="masked")
    np.testing.assert_allclose(to_dense(masked), np.kron(np.eye(4), np.ones((2, 2))) * (X @ X), rtol=1e-12)

    padded = bsr_zeros(4, 4, wp.mat22d, row_capacity=4)
    bsr_mm(x, x, padded, alpha=2.0, topology="padded")
    np.testing.assert_allclose(to_dense(padded), 2.0 * (X @ X), rtol=1e-12)
    np.testing.assert_array_equal(padded.offsets.numpy(), [0, 4, 8, 12, 16])
    bsr_mm(x, x, padded, alpha=1.0, beta=-1.0, topology="padded")
    np.testing.assert_allclose(to_dense(padded), -(X @ X), rtol=1e-12)
    tight = bsr_zeros(4, 4, wp.mat22d, row_capacity=1)
    bsr_mm(x, x, tight, topology="padded")
    assert tight.status_sync() == BSR_STATUS_ROW_CAPACITY_EXCEEDED

    z = _random_bsr(rng, 4, 4, 6, (2, 2))
    Z = to_dense(z)
    bsr_mm(z, x, x, -1.0, 2.0)  # x := -z @ x + 2 x
    np.testing.assert_allclose(to_dense(x), -(Z @ X) + 2.0 * X, rtol=1e-12)
    bsr_mm(z, z, z, 1.0, 1.0)
    np.testing.assert_allclose(to_dense(z), Z @ Z + Z, rtol=1e-12)


def test_mm_deep_rows():
    # rows with many more block products than distinct columns (a dense row times a dense column block)
    rng = np.random.default_rng(9)
    rows, cols = np.meshgrid(np.arange(2), np.arange(150), indexing="ij")
    A = bsr_from_triplets(2, 150, _ints(rows.ravel()), _ints(cols.ravel()),
                          wp.array(rng.random((300, 2, 2)), dtype=wp.float64))
    D = to_dense(A)
    np.testing.assert_allclose(to_dense(bsr_mm(A, A.transpose())), D @ D.T, rtol=1e-12)
    np.testing.assert_allclose(to_dense(bsr_mm(A.transpose(), A)), D.T @ D, rtol=1e-12)


def test_mm_errors():
    x = bsr_zeros(2, 3, wp.mat22)
    with pytest.raises(ValueError, match="Incompatible number of rows/columns for matrix multiplication"):
        bsr_mm(x, x)
    with pytest.raises(ValueError, match="Incompatible block sizes for matrix multiplication"):
        bsr_mm(x, bsr_zeros(3, 2, wp.types.matrix(shape=(3, 2), dtype=wp.float32)))
    with pytest.raises(ValueError, match="Matrices must have the same scalar type"):
        bsr_mm(x, bsr_zeros(3, 2, wp.mat22d))
    with pytest.raises(ValueError, match="reuse_topology is only supported with topology='compact'"):
        bsr_mm(x, x.transpose(), reuse_topology=True, topology="padded")
    with pytest.raises(ValueError, match="Left-hand-side 'z' matrix must be provided"):
        bsr_mm(x, x.transpose(), topology="masked")


@pytest.mark.parametrize("block_shape", [(1, 1), (3, 3)])
def test_axpy_against_scipy(block_shape):
    rng = np.random.default_rng(12)
    x = _random_bsr(rng, 3, 4, 7, block_shape)
    y = _random_bsr(rng, 3, 4, 7, block_shape)
    X = to_dense(x)
    work = bsr_axpy_work_arrays()
    for alpha, beta in ((-1.0, 2.0), (0.0, -1.0), (1.0, 0.0), (2.5, 1.0)):
        Y = to_dense(y)
        bsr_axpy(x, y, alpha, beta, work_arrays=work)
        np.testing.assert_allclose(to_dense(y), alpha * X + beta * Y, rtol=1e-12)
    Y = to_dense(y)
    y += y * 2.0  # aliasing: y := 2 y + y
    np.testing.assert_allclose(to_dense(y), 3.0 * Y, rtol=1e-12)

    mask = bsr_from_triplets(3, 4, _ints([0, 2]), _ints([1, 3]), wp.array(np.ones((2, *block_shape)), dtype=wp.float64))
    bsr_axpy(x, mask, alpha=2.0, topology="masked")
    expected = np.zeros_like(X)
    for r, c in ((0, 1), (2, 3)):
        sl = np.s_[r * block_shape[0]:(r + 1) * block_shape[0], c * block_shape[1]:(c + 1) * block_shape[1]]
        expected[sl] = 1.0 + 2.0 * X[sl]
    np.testing.assert_allclose(to_dense(mask), expected, rtol=1e-12)


def test_axpy_padded_and_errors():
    x = bsr_from_triplets(2, 3, _ints([0, 1, 1]), _ints([1, 0, 2]), wp.array([5.0, 7.0, 11.0], dtype=float))
    y = bsr_zeros(2, 3, float, row_capacity=3)
    bsr_set_from_triplets(y, _ints([0, 0, 1, 1]), _ints([0, 2, 1, 2]), wp.array([1.0, 2.0, 3.0, 4.0], dtype=float),
                          topology="padded")
    bsr_axpy(x, y, alpha=2.0, beta=3.0, topology="padded")
    np.testing.assert_array_equal(to_dense(y), [[3.0, 10.0, 6.0], [14.0, 9.0, 34.0]])
    np.testing.assert_array_equal(y.offsets.numpy(), [0, 3, 6])
    tight = bsr_zeros(2, 3, float, row_capacity=2)
    bsr_set_from_triplets(tight, _ints([0, 1]), _ints([0, 1]), wp.array([1.0, 1.0], dtype=float), topology="padded")
    bsr_axpy(x, tight, topology="padded")
    assert tight.status_sync() == BSR_STATUS_ROW_CAPACITY_EXCEEDED
    np.testing.assert_array_equal(to_dense(tight)[0], [1.0, 5.0, 0.0])  # row 1 needs 3 blocks: left empty

    with pytest.raises(ValueError, match="Matrices must have the same number of rows and columns"):
        bsr_axpy(x, bsr_from_triplets(2, 4, _ints([0]), _ints([0]), wp.array([1.0], dtype=float)))
    with pytest.raises(ValueError, match="Matrices must have the same block type"):
        bsr_axpy(x, bsr_from_triplets(2, 3, _ints([0]), _ints([0]), wp.array([1.0], dtype=wp.float64)))
    with pytest.raises(ValueError, match="Left-hand-side 'y' matrix must be provided for this topology policy"):
        bsr_axpy(x, topology="padded")


def test_operators():
    rng = np.random.default_rng(13)
    A = _random_bsr(rng, 3, 4, 6, (1, 1), wp.float32)
    B = _random_bsr(rng, 3, 4, 6, (1, 1), wp.float32)
    DA, DB = to_dense(A), to_dense(B)
    for value, expected in (((2.0 * A) + B, 2.0 * DA + DB), (B + (2.0 * A), 2.0 * DA + DB),
                            ((2.0 * A) - B, 2.0 * DA - DB), (B - (2.0 * A), DB - 2.0 * DA),
                            ((2.0 * A) - (3.0 * B), 2.0 * DA - 3.0 * DB), (A - B, DA - DB),
                            ((-A).eval(), -DA), ((A / 4.0).eval(), DA / 4.0), ((A * 3.0).eval(), 3.0 * DA),
                            (A.transpose(), DA.T), ((2.0 * A).transpose().eval(), 2.0 * DA.T),
                            (A @ B.transpose(), DA @ DB.T)):
        np.testing.assert_allclose(to_dense(value), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_dense(A), DA)  # operands untouched
    S = A.transpose() @ A
    S @= S  # S := S @ S
    np.testing.assert_allclose(to_dense(S), DA.T @ DA @ DA.T @ DA, rtol=1e-5)
    A -= B
    np.testing.assert_allclose(to_dense(A), DA - DB, rtol=1e-6, atol=1e-6)
    A *= 2.0
    np.testing.assert_allclose(to_dense(A), 2.0 * (DA - DB), rtol=1e-6, atol=1e-6)
