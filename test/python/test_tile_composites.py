"""Tiles of composites. Reductions of tiles of vectors and matrices (tiles_to_linalg's composite reductions): sums
along an axis, and Warp's component-wise max and min of vectors (wp.tile_reduce(wp.max, t), along an axis too),
against numpy, with their gradients (each component's adjoint goes to its first extreme, as tile_argmax picks it);
what Warp has no operator for is refused. Tiles of transforms: loads, stores, element-wise ops, sums, atomics;
wp.tile() of a quaternion or transform (its components); a vector written into a row of a matrix tile's element."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.launching import cuda_compile


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
        assert "test_tile_composites.py:" in str(e.value)


@wp.kernel
def transform_tiles(x: wp.array[wp.transform], out: wp.array[wp.transform], total: wp.array[wp.transform],
                    position: wp.array[wp.vec3]):
    t = wp.tile_load(x, shape=3)
    wp.tile_store(out, t * 2.0 + wp.tile_full(shape=3, value=wp.transform_identity(), dtype=wp.transform))
    wp.tile_store(total, wp.tile_sum(t))
    position[0] = wp.transform_get_translation(t[1])
    wp.tile_atomic_add(out, t)


def test_tiles_of_transforms_and_their_gradients():
    x0 = _values(3, (3, 7))
    x = wp.array(x0, dtype=wp.transform, requires_grad=True)
    out = wp.zeros(3, dtype=wp.transform, requires_grad=True)
    total = wp.zeros(1, dtype=wp.transform, requires_grad=True)
    position = wp.zeros(1, dtype=wp.vec3, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(transform_tiles, dim=1, inputs=[x, out, total, position], block_dim=1)
    identity = np.array([0, 0, 0, 0, 0, 0, 1], np.float32)  # (p, q): no translation, the unit quaternion
    np.testing.assert_array_equal(out.numpy(), 3 * x0 + identity)
    np.testing.assert_array_equal(total.numpy(), [x0.sum(axis=0)])
    np.testing.assert_array_equal(position.numpy(), [x0[1, :3]])
    total.grad = wp.array([np.arange(7, dtype=np.float32)], dtype=wp.transform)
    position.grad = wp.array([[10.0, 20.0, 30.0]], dtype=wp.vec3)
    tape.backward()
    want = np.tile(np.arange(7, dtype=np.float32), (3, 1))
    want[1, :3] += [10.0, 20.0, 30.0]
    np.testing.assert_array_equal(x.grad.numpy(), want)


@wp.kernel
def lane_components(q: wp.array[wp.quat], x: wp.array[wp.transform], oq: wp.array2d[float], ox: wp.array2d[float]):
    i = wp.tid()
    wp.tile_store(oq, wp.tile(q[i]) * 2.0, offset=(0, i))  # Warp: a quaternion's components, shape (4, block_dim)
    wp.tile_store(ox, wp.tile(x[i]), offset=(0, i))


def test_tile_of_a_quaternion_or_transform_holds_its_components():
    q0, x0 = _values(4, (2, 4)), _values(5, (2, 7))
    oq, ox = wp.zeros((4, 2)), wp.zeros((7, 2))
    wp.launch_tiled(lane_components, dim=2, inputs=[wp.array(q0, dtype=wp.quat), wp.array(x0, dtype=wp.transform),
                                                    oq, ox], block_dim=1)
    np.testing.assert_array_equal(oq.numpy(), 2 * q0.T)
    np.testing.assert_array_equal(ox.numpy(), x0.T)


@wp.kernel
def matrix_rows(m: wp.array[wp.mat33], v: wp.array[wp.vec3], out: wp.array[wp.mat33]):
    t = wp.tile_load(m, shape=2)
    t[1][2] = v[0]  # a vector written into a row of element 1
    t[0][0, 1] = 7.0
    t[0][1] = v[0] * 2.0
    wp.tile_store(out, t)


def test_a_vector_written_into_a_row_of_a_matrix_tile_and_the_gradients():
    m0, v0 = _values(6, (2, 3, 3)), _values(7, (1, 3))
    m, v = wp.array(m0, dtype=wp.mat33, requires_grad=True), wp.array(v0, dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(2, dtype=wp.mat33, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(matrix_rows, dim=1, inputs=[m, v, out], block_dim=1)
    want = m0.copy()
    want[1, 2], want[0, 0, 1], want[0, 1] = v0[0], 7.0, 2 * v0[0]
    np.testing.assert_array_equal(out.numpy(), want)
    g = np.arange(18, dtype=np.float32).reshape(2, 3, 3)
    out.grad = wp.array(g, dtype=wp.mat33)
    tape.backward()
    np.testing.assert_array_equal(v.grad.numpy(), [g[1, 2] + 2 * g[0, 1]])
    overwritten = g.copy()
    overwritten[1, 2], overwritten[0, 1] = 0.0, 0.0  # the rows written
    overwritten[0, 0, 1] = 0.0
    np.testing.assert_array_equal(m.grad.numpy(), overwritten)


@pytest.mark.parametrize("kernel", [vector_reductions, transform_tiles, matrix_rows], ids=["reductions", "transforms", "rows"])
def test_compiles_to_ptx_for_sm_90(kernel):
    assert f".entry {kernel.key}_cuda(" in cuda_compile.to_mlir(kernel, "ptx", 90)
