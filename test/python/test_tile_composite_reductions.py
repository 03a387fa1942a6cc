"""Reductions of tiles of vectors and matrices (tiles_to_linalg's composite reductions): sums along an axis, and
Warp's component-wise max and min of vectors (wp.tile_reduce(wp.max, t), along an axis too), against numpy, with
their gradients (each component's adjoint goes to its first extreme, as tile_argmax picks it); what Warp has no
operator for is refused."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp import cuda_compile


@wp.kernel
def vector_reductions(x: wp.array2d[wp.vec3], whole_max: wp.array[wp.vec3], column_sums: wp.array[wp.vec3],
                      row_mins: wp.array[wp.vec3], column_max: wp.array[wp.vec3]):
    t = wp.tile_load(x, shape=(3, 4))
    wp.tile_store(whole_max, wp.tile_reduce(wp.max, t))
    wp.tile_store(column_sums, wp.tile_sum(t, axis=0))
    wp.tile_store(row_mins, wp.tile_reduce(wp.min, t, axis=1))
    wp.tile_store(column_max, wp.tile_max(t, axis=0))


@wp.kernel
def matrix_axis_sum(m: wp.array2d[wp.mat22], out: wp.array[wp.mat22]):
    wp.tile_store(out, wp.tile_sum(wp.tile_load(m, shape=(2, 3)), axis=1))


def _values(seed, shape):
    # distinct values: each extreme is unique, so its adjoint's position is the numpy argmax's
    return np.random.default_rng(seed).permutation(np.prod(shape)).reshape(shape).astype(np.float32)


def test_vector_reductions_and_their_gradients():
    x0 = _values(1, (3, 4, 3))
    x = wp.array(x0, dtype=wp.vec3, requires_grad=True)
    outs = [wp.zeros(n, dtype=wp.vec3, requires_grad=True) for n in (1, 4, 3, 4)]
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(vector_reductions, dim=1, inputs=[x, *outs], block_dim=1)
    np.testing.assert_array_equal(outs[0].numpy(), [x0.max(axis=(0, 1))])
    np.testing.assert_array_equal(outs[1].numpy(), x0.sum(axis=0))
    np.testing.assert_array_equal(outs[2].numpy(), x0.min(axis=1))
    np.testing.assert_array_equal(outs[3].numpy(), x0.max(axis=0))
    grads = [np.arange(1, 3 * n + 1, dtype=np.float32).reshape(n, 3) for n in (1, 4, 3, 4)]
    for out, g in zip(outs, grads):
        out.grad = wp.array(g, dtype=wp.vec3)
    tape.backward()
    want = np.zeros_like(x0)
    want += grads[1][None, :, :]  # column sums: every element of a column
    for c in range(3):
        flat = x0[:, :, c].reshape(-1)
        want.reshape(12, 3)[flat.argmax(), c] += grads[0][0, c]
        for r in range(3):
            want[r, x0[r, :, c].argmin(), c] += grads[2][r, c]
        for j in range(4):
            want[x0[:, j, c].argmax(), j, c] += grads[3][j, c]
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_matrix_sums_along_an_axis():
    m0 = _values(2, (2, 3, 2, 2))
    m = wp.array(m0, dtype=wp.mat22, requires_grad=True)
    out = wp.zeros(2, dtype=wp.mat22, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(matrix_axis_sum, dim=1, inputs=[m, out], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), m0.sum(axis=1))
    g = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
    out.grad = wp.array(g, dtype=wp.mat22)
    tape.backward()
    np.testing.assert_array_equal(m.grad.numpy(), np.broadcast_to(g[:, None], m0.shape))


def test_operators_warp_lacks_are_refused():
    @wp.kernel
    def product_of_vectors(x: wp.array[wp.vec3]):
        wp.tile_reduce(wp.mul, wp.tile_load(x, shape=2))

    @wp.kernel
    def max_of_matrices(x: wp.array[wp.mat22]):
        wp.tile_max(wp.tile_load(x, shape=2))

    for kernel, arr, message in ((product_of_vectors, wp.zeros(2, dtype=wp.vec3), "'mul' of a tile of vec3f"),
                                 (max_of_matrices, wp.zeros(2, dtype=wp.mat22), "'max' of a tile of mat22f")):
        with pytest.raises(wp.CompileError, match=message) as e:
            wp.launch_tiled(kernel, dim=1, inputs=[arr], block_dim=1)
        assert "test_tile_composite_reductions.py:" in str(e.value)


def test_compiles_to_ptx_for_sm_90():
    assert ".entry vector_reductions_cuda(" in cuda_compile.to_mlir(vector_reductions, "ptx", 90)
