"""Warp's tiles on the CPU (wp.launch_tiled, wp.tile_*), each against numpy: loads with zero padding, stores that
skip past the array, element-wise operators and builtins, constructors, reductions, the documentation's tiled
GEMM, transpose, broadcast, element reads, and the errors for what is refused."""

import numpy as np
import pytest

import mlwarp as wp

TILE_M = wp.constant(8)
TILE_N = wp.constant(4)
TILE_K = wp.constant(8)
BLOCK_DIM = 64


def _rand(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# -- loads and stores -------------------------------------------------------------------------------------
@wp.kernel
def copy_tiles(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float)):
    i, j = wp.tid()
    t = wp.tile_load(a, shape=(3, 4), offset=(i * 3, j * 4))
    wp.tile_store(b, t, offset=(i * 3, j * 4))


def test_load_store_round_trip_with_partial_tiles():
    a0 = np.arange(1, 21, dtype=np.float32).reshape(4, 5)
    a, b = wp.array(a0), wp.full((6, 8), -1.0, dtype=float)
    wp.launch_tiled(copy_tiles, dim=(2, 2), inputs=[a, b], block_dim=8)
    want = np.full((6, 8), -1.0, np.float32)
    want[:6, :8] = 0.0  # the tiles cover b: elements past a's extent read as zero
    want[:4, :5] = a0
    np.testing.assert_array_equal(b.numpy(), want)


@wp.kernel
def store_past_the_end(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float)):
    t = wp.tile_load(a, shape=(3, 4))
    wp.tile_store(b, t, offset=(1, 1))


def test_store_skips_elements_past_the_array():
    a, b = wp.array(np.arange(1, 13, dtype=np.float32).reshape(3, 4)), wp.full((3, 3), -1.0, dtype=float)
    wp.launch_tiled(store_past_the_end, dim=1, inputs=[a, b], block_dim=1)
    np.testing.assert_array_equal(b.numpy(), [[-1, -1, -1], [-1, 1, 2], [-1, 5, 6]])


@wp.kernel
def load_forms(a: wp.array(dtype=float), b: wp.array2d(dtype=float)):
    t0 = wp.tile_load(a, 4)
    t1 = wp.tile_load(a, 4, 2)
    t2 = wp.tile_load(a, shape=4, offset=6, storage="shared")
    t3 = wp.tile_load(a[1:], shape=(4,))
    wp.tile_store(b[0], t0)
    wp.tile_store(b[1], t1)
    wp.tile_store(b[2], t2)
    wp.tile_store(b[3], t3)


def test_positional_and_keyword_forms_and_views():
    a, b = wp.array(np.arange(1, 9, dtype=np.float32)), wp.full((4, 4), -1.0, dtype=float)
    wp.launch_tiled(load_forms, dim=1, inputs=[a, b], block_dim=1)
    np.testing.assert_array_equal(b.numpy(), [[1, 2, 3, 4], [3, 4, 5, 6], [7, 8, 0, 0], [2, 3, 4, 5]])


# -- element-wise ---------------------------------------------------------------------------------------
@wp.kernel
def elementwise(a: wp.array2d(dtype=float), c: wp.array2d(dtype=float), out: wp.array3d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(a, shape=(4, 8), offset=(i * 4, 0))
    u = wp.tile_load(c, shape=(4, 8), offset=(i * 4, 0))
    wp.tile_store(out[0], wp.sin(t) * 2.0 + t, offset=(i * 4, 0))
    wp.tile_store(out[1], -t / 2.0, offset=(i * 4, 0))
    wp.tile_store(out[2], t * u - u, offset=(i * 4, 0))
    wp.tile_store(out[3], wp.tile_map(wp.exp, t), offset=(i * 4, 0))
    wp.tile_store(out[4], wp.tile_map(wp.max, t, u), offset=(i * 4, 0))
    wp.tile_store(out[5], 3.0 * t, offset=(i * 4, 0))


def test_elementwise_operators_and_builtins():
    a0, c0 = _rand((8, 8), 1), _rand((8, 8), 2)
    out = wp.zeros((6, 8, 8), dtype=float)
    wp.launch_tiled(elementwise, dim=2, inputs=[wp.array(a0), wp.array(c0), out], block_dim=BLOCK_DIM)
    got = out.numpy()
    np.testing.assert_allclose(got[0], np.sin(a0) * 2 + a0, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(got[1], -a0 / np.float32(2))
    np.testing.assert_array_equal(got[2], a0 * c0 - c0)
    np.testing.assert_allclose(got[3], np.exp(a0), rtol=1e-6)
    np.testing.assert_array_equal(got[4], np.maximum(a0, c0))
    np.testing.assert_array_equal(got[5], np.float32(3) * a0)


@wp.kernel
def int_tiles(a: wp.array(dtype=int), out: wp.array(dtype=int)):
    t = wp.tile_load(a, shape=16)
    wp.tile_store(out, t * 3 + wp.tile_arange(16, dtype=int))


def test_int_tiles():
    a0 = np.arange(16, dtype=np.int32) * 7 - 40
    out = wp.zeros(16, dtype=int)
    wp.launch_tiled(int_tiles, dim=1, inputs=[wp.array(a0), out], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), a0 * 3 + np.arange(16))


# -- constructors ---------------------------------------------------------------------------------------
@wp.kernel
def constructors(out: wp.array2d(dtype=float), ints: wp.array2d(dtype=int)):
    wp.tile_store(out[0], wp.tile_zeros(shape=5, dtype=float))
    wp.tile_store(out[1], wp.tile_ones(shape=(5,), dtype=float))
    wp.tile_store(out[2], wp.tile_full(shape=5, value=2.5, dtype=float))
    wp.tile_store(out[3], wp.tile_arange(1.0, 2.0, 0.25, dtype=float))
    wp.tile_store(ints[0], wp.tile_arange(5, dtype=int))
    wp.tile_store(ints[1], wp.tile_arange(1, 10, 2, dtype=int))
    wp.tile_store(ints[2], wp.tile_full(shape=5, value=wp.int32(7), dtype=int))


def test_constructors():
    out, ints = wp.full((4, 5), -1.0, dtype=float), wp.full((3, 5), -1, dtype=int)
    wp.launch_tiled(constructors, dim=1, inputs=[out, ints], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), [[0] * 5, [1] * 5, [2.5] * 5, [1, 1.25, 1.5, 1.75, -1]])
    np.testing.assert_array_equal(ints.numpy(), [np.arange(5), np.arange(1, 10, 2), [7] * 5])


# -- reductions -----------------------------------------------------------------------------------------
@wp.kernel
def reductions(a: wp.array2d(dtype=float), out: wp.array(dtype=float), index: wp.array(dtype=int)):
    i = wp.tid()
    t = wp.tile_load(a, shape=(4, 6), offset=(i * 4, 0))
    wp.tile_store(out, wp.tile_sum(t), offset=i * 3)
    wp.tile_store(out, wp.tile_max(t), offset=i * 3 + 1)
    wp.tile_store(out, wp.tile_min(t), offset=i * 3 + 2)
    wp.tile_store(index, wp.tile_argmax(t), offset=i * 2)
    wp.tile_store(index, wp.tile_argmin(t), offset=i * 2 + 1)


def test_reductions():
    a0 = _rand((8, 6), 3)
    out, index = wp.zeros(6, dtype=float), wp.zeros(4, dtype=int)
    wp.launch_tiled(reductions, dim=2, inputs=[wp.array(a0), out, index], block_dim=BLOCK_DIM)
    for i in range(2):
        block = a0[i * 4:(i + 1) * 4]
        sequential = np.float32(0)
        for v in block.reshape(-1):  # row-major order, one add at a time (Warp's CPU loop)
            sequential = np.float32(sequential + v)
        assert out.numpy()[i * 3] == sequential
        assert out.numpy()[i * 3 + 1] == block.max() and out.numpy()[i * 3 + 2] == block.min()
        assert index.numpy()[i * 2] == block.argmax() and index.numpy()[i * 2 + 1] == block.argmin()


WIDE = wp.constant(4096)


@wp.kernel
def block_sums(x: wp.array(dtype=float), sums: wp.array(dtype=float), axis0: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=WIDE, offset=i * WIDE)
    wp.tile_store(sums, wp.tile_sum(t), offset=i)
    wp.tile_store(axis0, wp.tile_sum(wp.tile_reshape(t, shape=(2, 2048)), axis=0), offset=i * 2048)


def test_sums_of_wide_tiles_and_of_negative_zeros():
    # 4096-element rows (the fast branch's element copy, ROW_VECTOR_MAX), each block's sum in Warp's order; a
    # tile of -0.0 sums to -0.0 (Warp sums from the first element), as does an axis sum
    blocks = 5
    x0 = _rand((blocks * 4096 - 1000,), 11)  # the last block partly outside: its missing elements are zeros
    x0[:4096] = -0.0
    sums, axis0 = wp.zeros(blocks, dtype=float), wp.zeros(blocks * 2048, dtype=float)
    wp.launch_tiled(block_sums, dim=blocks, inputs=[wp.array(x0), sums, axis0], block_dim=BLOCK_DIM)
    padded = np.concatenate([x0, np.zeros(1000, np.float32)]).reshape(blocks, 4096)
    for b in range(blocks):
        sequential = padded[b, 0]
        for v in padded[b, 1:]:
            sequential = np.float32(sequential + v)
        assert sums.numpy()[b].tobytes() == np.float32(sequential).tobytes(), b
    assert np.signbit(sums.numpy()[0]) and np.signbit(axis0.numpy()[:2048]).all()
    np.testing.assert_array_equal(axis0.numpy().reshape(blocks, 2048), padded[:, :2048] + padded[:, 2048:])


@wp.kernel
def extract(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=(2, 3))
    s = wp.tile_sum(t)
    out[0] = t[1, 2]
    out[1] = s[0]
    out[2] = wp.tile_extract(t, 0, 1)


def test_element_reads():
    a0 = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = wp.zeros(3, dtype=float)
    wp.launch_tiled(extract, dim=1, inputs=[wp.array(a0), out], block_dim=4)
    np.testing.assert_array_equal(out.numpy(), [5, 15, 1])


# -- matmul ---------------------------------------------------------------------------------------------
@wp.kernel
def tile_gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    # the kernel of Warp's documentation (tiles: GEMM)
    i, j = wp.tid()
    sum = wp.tile_zeros(shape=(TILE_M, TILE_N), dtype=wp.float32)
    K = A.shape[1]
    count = int(K / TILE_K)
    for k in range(0, count):
        a = wp.tile_load(A, shape=(TILE_M, TILE_K), offset=(i * TILE_M, k * TILE_K))
        b = wp.tile_load(B, shape=(TILE_K, TILE_N), offset=(k * TILE_K, j * TILE_N))
        wp.tile_matmul(a, b, sum)
    wp.tile_store(C, sum, offset=(i * TILE_M, j * TILE_N))


def test_documentation_gemm():
    m, n, k = 32, 16, 64
    a0, b0 = _rand((m, k), 4), _rand((k, n), 5)
    c = wp.zeros((m, n), dtype=float)
    wp.launch_tiled(tile_gemm, dim=(m // TILE_M, n // TILE_N), inputs=[wp.array(a0), wp.array(b0), c],
                    block_dim=BLOCK_DIM)
    np.testing.assert_allclose(c.numpy(), a0.astype(np.float64) @ b0, rtol=1e-4, atol=1e-4)


@wp.kernel
def matmul_forms(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array3d(dtype=float)):
    a = wp.tile_load(A, shape=(2, 3))
    b = wp.tile_load(B, shape=(3, 2))
    out = wp.tile_ones(shape=(2, 2), dtype=float)
    wp.tile_matmul(a, b, out)  # out = a @ b + out
    wp.tile_store(C[0], out)
    wp.tile_store(C[1], wp.tile_matmul(a, b, alpha=2.0))
    scaled = wp.tile_ones(shape=(2, 2), dtype=float)
    wp.tile_matmul(a, b, scaled, alpha=0.5, beta=3.0)
    wp.tile_store(C[2], scaled)


def test_matmul_forms():
    a0, b0 = _rand((2, 3), 6), _rand((3, 2), 7)
    c = wp.zeros((3, 2, 2), dtype=float)
    wp.launch_tiled(matmul_forms, dim=1, inputs=[wp.array(a0), wp.array(b0), c], block_dim=4)
    ab = a0.astype(np.float64) @ b0
    np.testing.assert_allclose(c.numpy()[0], ab + 1, rtol=1e-6)
    np.testing.assert_allclose(c.numpy()[1], 2 * ab, rtol=1e-6)
    np.testing.assert_allclose(c.numpy()[2], 0.5 * ab + 3, rtol=1e-6)


@wp.kernel
def transpose_broadcast(a: wp.array2d(dtype=float), row: wp.array(dtype=float), out: wp.array3d(dtype=float)):
    t = wp.tile_load(a, shape=(2, 3))
    wp.tile_store(out[0], wp.tile_transpose(t))
    r = wp.tile_load(row, shape=3)
    wp.tile_store(out[1], wp.tile_transpose(wp.tile_broadcast(r, shape=(2, 3)) + t))


def test_transpose_and_broadcast():
    a0, r0 = np.arange(6, dtype=np.float32).reshape(2, 3), np.array([10, 20, 30], np.float32)
    out = wp.zeros((2, 3, 2), dtype=float)
    wp.launch_tiled(transpose_broadcast, dim=1, inputs=[wp.array(a0), wp.array(r0), out], block_dim=1)
    np.testing.assert_array_equal(out.numpy()[0], a0.T)
    np.testing.assert_array_equal(out.numpy()[1], (a0 + r0).T)


# -- launch_tiled ---------------------------------------------------------------------------------------
@wp.kernel
def lanes(out: wp.array2d(dtype=int)):
    i, lane = wp.tid()
    wp.atomic_add(out, i, lane, 1)


def test_launch_tiled_runs_one_lane_per_block_on_the_cpu():
    out = wp.zeros((3, 4), dtype=int)
    wp.launch_tiled(lanes, dim=3, inputs=[out], block_dim=4)
    np.testing.assert_array_equal(out.numpy(), [[1, 0, 0, 0]] * 3)  # block_dim resolves to 1 (Warp's CPU rule)


def test_launch_tiled_errors():
    out = wp.zeros((3, 4), dtype=int)
    with pytest.raises(RuntimeError, match=r"^Launch dimensions 'dim' argument should be passed via\. keyword args "
                                           r"for wp\.launch_tiled\(\)$"):
        wp.launch_tiled(lanes, 3, inputs=[out], block_dim=4)
    with pytest.raises(RuntimeError, match=r"^Launch block dimension 'block_dim' argument should be passed via\. "
                                           r"keyword args for wp\.launch_tiled\(\)$"):
        wp.launch_tiled(lanes, dim=3, inputs=[out])
    with pytest.raises(RuntimeError, match=r"^wp\.launch_tiled\(\) requires a grid with fewer than 4 dimensions$"):
        wp.launch_tiled(lanes, dim=(1, 1, 1, 1), inputs=[out], block_dim=4)
    with pytest.raises(ValueError, match=r"^block_dim must be at most 1024 on CPU, got 1025$"):
        wp.launch_tiled(lanes, dim=3, inputs=[out], block_dim=1025)


def test_tile_builtins_are_kernel_only():
    with pytest.raises(RuntimeError, match=r"^wp\.tile_zeros\(\) can only be called inside a kernel or wp\.func$"):
        wp.tile_zeros(shape=4, dtype=float)


# -- refused input ----------------------------------------------------------------------------------------
def _compile_error(kernel, args, match):
    with pytest.raises(wp.CompileError, match=match):
        wp.launch_tiled(kernel, dim=1, inputs=args, block_dim=1)


def test_shape_must_be_constant():
    @wp.kernel
    def dynamic_shape(a: wp.array(dtype=float), n: int):
        t = wp.tile_load(a, shape=n)

    _compile_error(dynamic_shape, [wp.zeros(4, dtype=float), 4],
                   r"wp\.tile_load\(\): the tile shape must be a constant int or tuple of ints")


def test_shape_rank_must_match_the_array():
    @wp.kernel
    def wrong_rank(a: wp.array2d(dtype=float)):
        t = wp.tile_load(a, shape=4)

    _compile_error(wrong_rank, [wp.zeros((4, 4), dtype=float)],
                   r"tile_load\(\) array argument must have same number of dimensions as the tile shape, trying to "
                   r"perform an 1 dimensional load from an array with 2 dimensions\.")


def test_store_dtype_must_match():
    @wp.kernel
    def wrong_dtype(a: wp.array(dtype=int)):
        wp.tile_store(a, wp.tile_ones(shape=4, dtype=float))

    _compile_error(wrong_dtype, [wp.zeros(4, dtype=int)],
                   r"tile_store\(\) 'a' and 't' arguments must have the same dtype, got int32 and float32")


def test_unknown_keyword():
    @wp.kernel
    def unknown_keyword(a: wp.array(dtype=float)):
        t = wp.tile_load(a, shape=4, strides=2)

    _compile_error(unknown_keyword, [wp.zeros(4, dtype=float)],
                   r"wp\.tile_load\(\) got an unexpected keyword argument 'strides'")


def test_shapes_must_agree_for_elementwise_ops():
    @wp.kernel
    def mismatched(a: wp.array(dtype=float)):
        t = wp.tile_load(a, shape=4) + wp.tile_ones(shape=3, dtype=float)

    _compile_error(mismatched, [wp.zeros(4, dtype=float)], r"'add' of tiles of different shapes \[\(3,\), \(4,\)\]")


def test_matmul_shapes_must_multiply():
    @wp.kernel
    def bad_matmul(a: wp.array2d(dtype=float)):
        t = wp.tile_load(a, shape=(2, 3))
        p = wp.tile_matmul(t, t)

    _compile_error(bad_matmul, [wp.zeros((2, 3), dtype=float)],
                   r"wp\.tile_matmul\(\): shapes \(2, 3\) and \(2, 3\) do not multiply")


def test_tiles_of_arrays_are_refused_with_a_clear_error():
    # (tiles of structs work: test_tile_structs.py)
    @wp.kernel
    def array_tiles(a: wp.array(dtype=float)):
        t = wp.tile_zeros(4, dtype=wp.array(dtype=float))

    _compile_error(array_tiles, [wp.zeros(4, dtype=float)],
                   r"wp\.tile_zeros\(\): mlwarp's tiles hold scalars \(int, float, bool types\), vectors, matrices, "
                   r"quaternions and transforms of them, and structs, got dtype")


# -- tiles of vectors and matrices ------------------------------------------------------------------------
@wp.kernel
def vec_tiles(v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22), out_v: wp.array2d(dtype=wp.vec3),
              out_s: wp.array(dtype=float), out_m: wp.array(dtype=wp.mat22)):
    tv = wp.tile_load(v, shape=4)
    wp.tile_store(out_v[0], tv * 2.0 + wp.tile_full(shape=4, value=wp.vec3(1.0, 2.0, 3.0), dtype=wp.vec3))
    wp.tile_store(out_v[1], wp.tile_map(wp.normalize, tv))
    wp.tile_store(out_s, wp.tile_map(wp.length, tv))
    wp.tile_store(out_v[2], wp.tile_sum(tv), offset=1)
    tm = wp.tile_load(m, shape=2)
    wp.tile_store(out_m, wp.tile_map(wp.mul, tm, tm))  # (tm * tm: Warp refuses a product of two matrix tiles)
    out_v[3, 0] = tv[3]


def test_tiles_of_vectors_and_matrices():
    v0 = _rand((4, 3), 16)
    m0 = _rand((2, 2, 2), 17)
    out_v, out_s, out_m = wp.zeros((4, 4), dtype=wp.vec3), wp.zeros(4, dtype=float), wp.zeros(2, dtype=wp.mat22)
    wp.launch_tiled(vec_tiles, dim=1, inputs=[wp.array(v0, dtype=wp.vec3), wp.array(m0, dtype=wp.mat22), out_v, out_s,
                                               out_m], block_dim=4)
    got = out_v.numpy()
    np.testing.assert_allclose(got[0], v0 * 2 + np.array([1, 2, 3], np.float32), rtol=1e-6)
    np.testing.assert_allclose(got[1], v0 / np.linalg.norm(v0, axis=1, keepdims=True), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(out_s.numpy(), np.linalg.norm(v0, axis=1), rtol=1e-6)
    np.testing.assert_allclose(got[2, 1], v0.astype(np.float64).sum(axis=0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out_m.numpy(), m0 @ m0, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(got[3, 0], v0[3])


@wp.kernel
def vec_grad(v: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    tv = wp.tile_load(v, shape=4)
    wp.tile_atomic_add(loss, wp.tile_sum(wp.tile_map(wp.dot, tv, tv)))


def test_gradient_through_vector_tiles():
    v0 = _rand((4, 3), 18)
    v = wp.array(v0, dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(vec_grad, dim=1, inputs=[v, loss], block_dim=4)
    np.testing.assert_allclose(loss.numpy(), [np.sum(v0.astype(np.float64) ** 2)], rtol=1e-5)
    tape.backward(loss=loss)
    np.testing.assert_allclose(v.grad.numpy(), 2 * v0, rtol=1e-6)  # d sum(v . v)


# -- gradients (Tape over tiled launches), against closed forms ------------------------------------------------
@wp.kernel
def loss_tiles(x: wp.array(dtype=float), y: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=4, offset=i * 4)
    wp.tile_store(y, wp.tile_map(wp.sin, t) * 3.0, offset=i * 4)
    wp.tile_atomic_add(loss, wp.tile_sum(t * t))


def test_gradients_of_load_map_store_sum_atomic_add():
    x0 = (0.1 * np.arange(8)).astype(np.float32)
    x = wp.array(x0, requires_grad=True)
    y, loss = wp.zeros(8, dtype=float, requires_grad=True), wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(loss_tiles, dim=2, inputs=[x, y, loss], block_dim=8)
    np.testing.assert_allclose(loss.numpy(), [np.sum(x0.astype(np.float64) ** 2)], rtol=1e-6)
    tape.backward(loss=loss)
    np.testing.assert_allclose(x.grad.numpy(), 2 * x0, rtol=1e-6)  # d sum(x^2)
    tape.zero()
    tape.backward(grads={y: wp.ones(8, dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.cos(x0), rtol=1e-6, atol=1e-6)  # d 3 sin(x)


def test_gradients_of_the_documentation_gemm():
    m, n, k = 16, 8, 16
    a0, b0 = _rand((m, k), 10), _rand((k, n), 11)
    a, b = wp.array(a0, requires_grad=True), wp.array(b0, requires_grad=True)
    c = wp.zeros((m, n), dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(tile_gemm, dim=(m // TILE_M, n // TILE_N), inputs=[a, b, c], block_dim=BLOCK_DIM)
    g = _rand((m, n), 12)
    tape.backward(grads={c: wp.array(g)})
    np.testing.assert_allclose(a.grad.numpy(), g.astype(np.float64) @ b0.T, rtol=1e-4, atol=1e-4)  # dC/dA^T g
    np.testing.assert_allclose(b.grad.numpy(), a0.T.astype(np.float64) @ g, rtol=1e-4, atol=1e-4)


@wp.kernel
def map_grad(x: wp.array(dtype=float), y: wp.array(dtype=float), row: wp.array(dtype=float),
             out: wp.array2d(dtype=float), picked: wp.array(dtype=float)):
    tx = wp.tile_load(x, shape=4)
    ty = wp.tile_load(y, shape=4)
    wp.tile_store(y, wp.tile_map(scaled_sum, tx, ty))  # y = 2x + sin(y), in place
    r = wp.tile_load(row, shape=4)
    wp.tile_store(out, wp.tile_transpose(wp.tile_broadcast(r, shape=(3, 4))) * 2.0)
    picked[0] = tx[2] * tx[2]


def test_gradients_of_a_wp_func_map_transpose_broadcast_and_extract():
    x0, y0, r0 = _rand(4, 13), _rand(4, 14), _rand(4, 15)
    x, y, r = (wp.array(v, requires_grad=True) for v in (x0, y0, r0))
    out, picked = wp.zeros((4, 3), dtype=float, requires_grad=True), wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(map_grad, dim=1, inputs=[x, y, r, out, picked], block_dim=4)
    np.testing.assert_allclose(y.numpy(), 2 * x0 + np.sin(y0), rtol=1e-6, atol=1e-6)
    tape.backward(grads={y: wp.ones(4, dtype=float), out: wp.ones((4, 3), dtype=float),
                         picked: wp.ones(1, dtype=float)})
    want_x = np.full(4, 2.0, np.float32)
    want_x[2] += 2 * x0[2]  # picked = x[2]^2
    np.testing.assert_allclose(x.grad.numpy(), want_x, rtol=1e-6)
    np.testing.assert_allclose(r.grad.numpy(), np.full(4, 6.0), rtol=1e-6)  # each r[j] appears 3 times, times 2


@wp.func
def scaled_sum(x: float, y: float):
    return 2.0 * x + wp.sin(y)


@wp.kernel
def map_func(a: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(a, shape=8, offset=i * 8)
    y = wp.tile_load(b, shape=8, offset=i * 8)
    wp.tile_store(out, wp.tile_map(scaled_sum, x, y), offset=i * 8)


def test_tile_map_of_a_wp_func():
    a0, b0 = _rand(16, 8), _rand(16, 9)
    out = wp.zeros(16, dtype=float)
    wp.launch_tiled(map_func, dim=2, inputs=[wp.array(a0), wp.array(b0), out], block_dim=8)
    np.testing.assert_allclose(out.numpy(), 2 * a0 + np.sin(b0), rtol=1e-6, atol=1e-6)


@wp.kernel
def atomic_tiles(a: wp.array(dtype=float), total: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(a, shape=4, offset=i * 4)
    wp.tile_atomic_add(total, t)


def test_tile_atomic_add():
    a0 = np.arange(12, dtype=np.float32)
    total = wp.zeros(4, dtype=float)
    wp.launch_tiled(atomic_tiles, dim=3, inputs=[wp.array(a0), total], block_dim=4)
    np.testing.assert_array_equal(total.numpy(), a0.reshape(3, 4).sum(axis=0))


@wp.kernel
def mixed_map_and_beta_zero(a: wp.array(dtype=int), b: wp.array(dtype=float), out: wp.array2d(dtype=float),
                            dims: wp.array(dtype=int)):
    ta = wp.tile_load(a, shape=4)
    tb = wp.tile_load(b, shape=4)
    wp.tile_store(out[0], wp.tile_map(int_plus_float, ta, tb))
    m = wp.tile_load(out, shape=(2, 4))
    nan = wp.tile_full(shape=(2, 2), value=wp.nan, dtype=float)
    wp.tile_matmul(m, wp.tile_transpose(m), nan, beta=0.0)  # out's NaNs ignored
    wp.tile_store(out, nan, offset=(2, 0))
    dims[0] = wp.block_dim()


@wp.func
def int_plus_float(i: int, x: float):
    return float(i) + x


def test_map_of_mixed_element_types_beta_zero_and_block_dim():
    a0, b0 = np.arange(4, dtype=np.int32), np.full(4, 0.5, np.float32)
    out, dims = wp.zeros((4, 4), dtype=float), wp.zeros(1, dtype=int)
    wp.launch_tiled(mixed_map_and_beta_zero, dim=1, inputs=[wp.array(a0), wp.array(b0), out, dims], block_dim=8)
    got = out.numpy()
    np.testing.assert_array_equal(got[0], a0 + 0.5)
    m = got[:2]
    np.testing.assert_allclose(got[2:4, :2], m.astype(np.float64) @ m.T, rtol=1e-6)
    assert dims.numpy()[0] == 1


@wp.kernel
def axis_reductions(a: wp.array2d(dtype=float), rows: wp.array2d(dtype=float), cols: wp.array2d(dtype=float),
                    prod: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=(3, 4))
    wp.tile_store(rows[0], wp.tile_sum(t, axis=1))
    wp.tile_store(rows[1], wp.tile_max(t, axis=1))
    wp.tile_store(rows[2], wp.tile_reduce(wp.min, t, axis=-1))
    wp.tile_store(cols[0], wp.tile_sum(t, axis=0))
    wp.tile_store(cols[1], wp.tile_reduce(wp.mul, t, axis=0))
    wp.tile_store(prod, wp.tile_reduce(wp.mul, t))


def test_axis_reductions_and_tile_reduce():
    a0 = _rand((3, 4), 19)
    rows, cols, prod = wp.zeros((3, 3), dtype=float), wp.zeros((2, 4), dtype=float), wp.zeros(1, dtype=float)
    wp.launch_tiled(axis_reductions, dim=1, inputs=[wp.array(a0), rows, cols, prod], block_dim=4)
    np.testing.assert_allclose(rows.numpy(), [a0.sum(axis=1), a0.max(axis=1), a0.min(axis=1)], rtol=1e-6)
    np.testing.assert_allclose(cols.numpy(), [a0.sum(axis=0), a0.prod(axis=0)], rtol=1e-6)
    np.testing.assert_allclose(prod.numpy(), [a0.astype(np.float64).prod()], rtol=1e-5)


@wp.kernel
def axis_sum_grad(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=(3, 4))
    wp.tile_store(out, wp.tile_sum(t * t, axis=0))


def test_gradient_of_an_axis_sum():
    a0 = _rand((3, 4), 20)
    a = wp.array(a0, requires_grad=True)
    out = wp.zeros(4, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(axis_sum_grad, dim=1, inputs=[a, out], block_dim=4)
    g = np.array([1, 2, 3, 4], np.float32)
    tape.backward(grads={out: wp.array(g)})
    np.testing.assert_allclose(a.grad.numpy(), 2 * a0 * g, rtol=1e-6)  # d out[j] / d a[i, j] = 2 a[i, j]


def test_a_missing_function_with_keywords_is_named():
    @wp.kernel
    def unknown(a: wp.array(dtype=float)):
        t = wp.tile_load(a, shape=4)
        u = wp.tile_frobnicate(t, scale=2.0)

    with pytest.raises(wp.CompileError, match=r"Could not find function wp\.tile_frobnicate as a built-in"):
        wp.launch_tiled(unknown, dim=1, inputs=[wp.zeros(4, dtype=float)], block_dim=1)


@wp.kernel
def reshapes(a: wp.array2d(dtype=float), flat: wp.array(dtype=float), col: wp.array2d(dtype=float),
             ints: wp.array(dtype=int)):
    t = wp.tile_load(a, shape=(2, 3))
    wp.tile_store(flat, wp.tile_reshape(t, shape=(-1,)))
    wp.tile_store(col, wp.tile_reshape(t, (3, 2)))
    one = wp.tile_load(a, shape=(1, 3))
    wp.tile_store(ints, wp.tile_astype(wp.tile_squeeze(one) * 2.0, dtype=int))


def test_reshape_squeeze_astype():
    a0 = np.array([[1.25, 2.5, 3.75], [4, 5, 6]], np.float32)
    flat, col, ints = wp.zeros(6, dtype=float), wp.zeros((3, 2), dtype=float), wp.zeros(3, dtype=int)
    wp.launch_tiled(reshapes, dim=1, inputs=[wp.array(a0), flat, col, ints], block_dim=1)
    np.testing.assert_array_equal(flat.numpy(), a0.reshape(-1))
    np.testing.assert_array_equal(col.numpy(), a0.reshape(3, 2))
    np.testing.assert_array_equal(ints.numpy(), (a0[0] * 2).astype(np.int32))  # truncated toward zero


# -- CUDA: compiled here (ptxas for sm_90); run where there is a GPU -----------------------------------------
def test_tile_kernels_assemble_for_sm_90():
    from mlwarp.launching import cuda_compile
    from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path

    if ptxas_path() is None:
        pytest.skip("ptxas is not installed (the test extra installs it: scripts/setup-env.sh)")
    for k in (tile_gemm, vec_tiles, map_func, reductions, loss_tiles):
        meta = cuda_compile.build(k, 90)
        assert meta["cubin"] == "kernel.cubin" and meta["arch"] == 90, (k.key, meta)
    ptx = cuda_compile.to_mlir(tile_gemm, "ptx", 90)
    # a block's lanes share its tiles (warp-gpu-cooperative-tiles): shared memory, barriers, no local buffers (the
    # adjoint, run whole on lane 0 of each block, keeps its tiles in local memory)
    forward = ptx[ptx.index(".visible .entry tile_gemm_cuda("):ptx.index(".visible .entry tile_gemm_adj_cuda(")]
    assert ".shared" in forward and "bar.sync" in forward and ".local" not in forward
    # (test_tiles_cuda.py: the kernels that keep one thread per block, and why)


@pytest.mark.skipif(not wp.is_cuda_available(), reason="no CUDA GPU on this machine")
def test_documentation_gemm_on_cuda():
    m, n, k = 64, 32, 64
    a0, b0 = _rand((m, k), 21), _rand((k, n), 22)
    a, b = wp.array(a0, device="cuda:0"), wp.array(b0, device="cuda:0")
    c = wp.zeros((m, n), dtype=float, device="cuda:0")
    wp.launch_tiled(tile_gemm, dim=(m // TILE_M, n // TILE_N), inputs=[a, b, c], block_dim=BLOCK_DIM, device="cuda:0")
    np.testing.assert_allclose(c.numpy(), a0.astype(np.float64) @ b0, rtol=1e-4, atol=1e-4)


@wp.func
def doubled(t: wp.tile[float, 4]):
    return t * 2.0


@wp.func
def total(t: wp.tile[float, 4]) -> float:
    return wp.tile_sum(t)[0]


@wp.kernel
def funcs_and_tile_untile(a: wp.array(dtype=float), out: wp.array(dtype=float), s: wp.array(dtype=float),
                          v: wp.array(dtype=wp.vec3)):
    t = wp.tile_load(a, shape=4)
    wp.tile_store(out, doubled(t))
    s[0] = total(t)
    x = v[0]
    components = wp.tile(x)  # (3, 1): a vector's components
    s[1] = wp.tile_sum(components)[0]
    v[1] = wp.untile(components * 2.0)
    kept = wp.tile(x, preserve_type=True)  # (1,) of vec3
    v[2] = wp.untile(kept) + x


def test_wp_funcs_taking_and_returning_tiles_and_tile_of_a_vector():
    a0 = np.arange(4, dtype=np.float32)
    out, s = wp.zeros(4, dtype=float), wp.zeros(2, dtype=float)
    v = wp.array(np.array([[1, 2, 3], [0, 0, 0], [0, 0, 0]], np.float32), dtype=wp.vec3)
    wp.launch_tiled(funcs_and_tile_untile, dim=1, inputs=[wp.array(a0), out, s, v], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), 2 * a0)
    np.testing.assert_array_equal(s.numpy(), [6, 6])
    np.testing.assert_array_equal(v.numpy(), [[1, 2, 3], [2, 4, 6], [2, 4, 6]])


# -- linear algebra ---------------------------------------------------------------------------------------
@wp.kernel
def solve_spd(a: wp.array2d(dtype=wp.float64), b: wp.array(dtype=wp.float64), rhs: wp.array2d(dtype=wp.float64),
              ell: wp.array2d(dtype=wp.float64), u: wp.array2d(dtype=wp.float64), x: wp.array(dtype=wp.float64),
              xu: wp.array(dtype=wp.float64), xs: wp.array2d(dtype=wp.float64), z: wp.array(dtype=wp.float64)):
    at = wp.tile_load(a, shape=(4, 4))
    bt = wp.tile_load(b, shape=4)
    lt = wp.tile_cholesky(at)
    ut = wp.tile_cholesky(at, fill_mode="upper")
    wp.tile_store(ell, lt)
    wp.tile_store(u, ut)
    wp.tile_store(x, wp.tile_cholesky_solve(lt, bt))
    wp.tile_store(xu, wp.tile_cholesky_solve(ut, bt, fill_mode="upper"))
    many = wp.tile_load(rhs, shape=(4, 2))
    wp.tile_cholesky_solve_inplace(lt, many)
    wp.tile_store(xs, many)
    zt = wp.tile_lower_solve(lt, bt)
    wp.tile_upper_solve_inplace(ut, zt)  # L z = b, then U x = z with U = L^T: x = A^-1 b again
    wp.tile_store(z, zt)


def test_cholesky_and_triangular_solves():
    rng = np.random.default_rng(23)
    m = rng.standard_normal((4, 4))
    a0 = m @ m.T + 4 * np.eye(4)
    b0, r0 = rng.standard_normal(4), rng.standard_normal((4, 2))
    outs = [wp.zeros((4, 4), dtype=wp.float64), wp.zeros((4, 4), dtype=wp.float64), wp.zeros(4, dtype=wp.float64),
            wp.zeros(4, dtype=wp.float64), wp.zeros((4, 2), dtype=wp.float64), wp.zeros(4, dtype=wp.float64)]
    wp.launch_tiled(solve_spd, dim=1, inputs=[wp.array(a0), wp.array(b0), wp.array(r0), *outs], block_dim=4)
    ell, u, x, xu, xs, z = (o.numpy() for o in outs)
    want_l = np.linalg.cholesky(a0)
    np.testing.assert_allclose(ell, want_l, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(u, want_l.T, rtol=1e-12, atol=1e-12)
    want_x = np.linalg.solve(a0, b0)
    for got in (x, xu, z):
        np.testing.assert_allclose(got, want_x, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(xs, np.linalg.solve(a0, r0), rtol=1e-10, atol=1e-12)


@wp.kernel
def dft(x: wp.array2d(dtype=wp.vec2d), fwd: wp.array2d(dtype=wp.vec2d), back: wp.array2d(dtype=wp.vec2d)):
    t = wp.tile_load(x, shape=(2, 8))
    wp.tile_fft(t)
    wp.tile_store(fwd, t)
    wp.tile_ifft(t)
    wp.tile_store(back, t)


def test_fft_and_ifft_along_the_last_dimension():
    rng = np.random.default_rng(24)
    z = rng.standard_normal((2, 8)) + 1j * rng.standard_normal((2, 8))
    as_vec2 = np.stack([z.real, z.imag], axis=-1)
    x = wp.array(as_vec2, dtype=wp.vec2d)
    fwd, back = wp.zeros((2, 8), dtype=wp.vec2d), wp.zeros((2, 8), dtype=wp.vec2d)
    wp.launch_tiled(dft, dim=1, inputs=[x, fwd, back], block_dim=8)
    want = np.fft.fft(z, axis=-1)
    got = fwd.numpy()
    np.testing.assert_allclose(got[..., 0] + 1j * got[..., 1], want, rtol=1e-12, atol=1e-12)
    got = back.numpy()
    np.testing.assert_allclose(got[..., 0] + 1j * got[..., 1], 8 * z, rtol=1e-12, atol=1e-12)  # unnormalised


@wp.kernel
def fft_rows_f32(x: wp.array2d(dtype=wp.vec2f), y: wp.array2d(dtype=wp.vec2f)):
    row = wp.tid()
    t = wp.tile_load(x, shape=(1, 512), offset=(row, 0))
    wp.tile_fft(t)
    wp.tile_store(y, t, offset=(row, 0))


def test_fft_of_512_point_float32_rows_matches_numpy():
    # 512 points: the radix-2 path at the size of Warp's Navier-Stokes examples, against numpy's FFT in float64
    rng = np.random.default_rng(26)
    z = (rng.standard_normal((3, 512)) + 1j * rng.standard_normal((3, 512))).astype(np.complex64)
    x = wp.array(np.stack([z.real, z.imag], axis=-1), dtype=wp.vec2f)
    y = wp.zeros((3, 512), dtype=wp.vec2f)
    wp.launch_tiled(fft_rows_f32, dim=3, inputs=[x, y], block_dim=64)
    got = y.numpy()
    want = np.fft.fft(z.astype(np.complex128), axis=-1)
    # float32 FFT error grows as log2(N) ulps of the transform's scale (sqrt(N) |x|)
    np.testing.assert_allclose(got[..., 0] + 1j * got[..., 1], want, atol=2e-4 * np.sqrt(512))


@wp.kernel
def dft_odd_lengths(x: wp.array3d(dtype=wp.vec2d), fwd: wp.array3d(dtype=wp.vec2d), back: wp.array3d(dtype=wp.vec2d)):
    t = wp.tile_load(x, shape=(2, 3, 6))
    wp.tile_fft(t)
    wp.tile_store(fwd, t)
    wp.tile_ifft(t)
    wp.tile_store(back, t)


def test_fft_of_a_length_that_is_not_a_power_of_two_on_a_3d_tile():
    rng = np.random.default_rng(27)
    z = rng.standard_normal((2, 3, 6)) + 1j * rng.standard_normal((2, 3, 6))
    x = wp.array(np.stack([z.real, z.imag], axis=-1), dtype=wp.vec2d)
    fwd, back = wp.zeros((2, 3, 6), dtype=wp.vec2d), wp.zeros((2, 3, 6), dtype=wp.vec2d)
    wp.launch_tiled(dft_odd_lengths, dim=1, inputs=[x, fwd, back], block_dim=8)
    got = fwd.numpy()
    np.testing.assert_allclose(got[..., 0] + 1j * got[..., 1], np.fft.fft(z, axis=-1), rtol=1e-12, atol=1e-12)
    got = back.numpy()
    np.testing.assert_allclose(got[..., 0] + 1j * got[..., 1], 6 * z, rtol=1e-12, atol=1e-12)


@wp.kernel
def dft_loss(x: wp.array2d(dtype=wp.vec2d), y: wp.array2d(dtype=wp.vec2d)):
    t = wp.tile_load(x, shape=(1, 4))
    wp.tile_fft(t)
    wp.tile_store(y, t)


def test_fft_gradient_is_the_inverse_transform_of_the_incoming_one():
    rng = np.random.default_rng(25)
    x = wp.array(rng.standard_normal((1, 4, 2)), dtype=wp.vec2d, requires_grad=True)
    y = wp.zeros((1, 4), dtype=wp.vec2d, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(dft_loss, dim=1, inputs=[x, y], block_dim=4)
    g = rng.standard_normal((1, 4, 2))
    tape.backward(grads={y: wp.array(g, dtype=wp.vec2d)})
    gz = g[..., 0] + 1j * g[..., 1]
    want = np.fft.ifft(gz, axis=-1) * 4  # Warp's rule: ifft of the gradient, not divided by N
    got = x.grad.numpy()
    np.testing.assert_allclose(got[..., 0] + 1j * got[..., 1], want, rtol=1e-12, atol=1e-12)


@wp.kernel
def scalar_times_vector_tiles(a: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), out: wp.array2d(dtype=wp.vec3)):
    ts = wp.tile_load(a, shape=4)
    tv = wp.tile_load(v, shape=4)
    wp.tile_store(out[0], ts * tv)
    wp.tile_store(out[1], ts * wp.vec3(1.0, 2.0, 3.0))


def test_products_of_scalar_and_vector_tiles():
    a0, v0 = np.arange(1, 5, dtype=np.float32), _rand((4, 3), 26)
    out = wp.zeros((2, 4), dtype=wp.vec3)
    wp.launch_tiled(scalar_times_vector_tiles, dim=1, inputs=[wp.array(a0), wp.array(v0, dtype=wp.vec3), out],
                    block_dim=4)
    np.testing.assert_allclose(out.numpy()[0], a0[:, None] * v0, rtol=1e-6)
    np.testing.assert_allclose(out.numpy()[1], a0[:, None] * np.array([1, 2, 3], np.float32), rtol=1e-6)


def test_products_of_vector_tiles_and_vectors_are_refused():
    @wp.kernel
    def tile_by_vector(v: wp.array(dtype=wp.vec3)):
        t = wp.tile_load(v, shape=4) / wp.vec3(1.0, 2.0, 3.0)

    @wp.kernel
    def two_vector_tiles(v: wp.array(dtype=wp.vec3)):
        t = wp.tile_load(v, shape=4)
        u = t * t

    _compile_error(tile_by_vector, [wp.zeros(4, dtype=wp.vec3)],
                   r"Cannot divide tile<vec3f> by vec3f: at least one operand must be a scalar type")
    _compile_error(two_vector_tiles, [wp.zeros(4, dtype=wp.vec3)],
                   r"'mul' of two tiles of vec3f and vec3f: the element type must be scalar on one side")


@wp.kernel
def stack_ops(values: wp.array(dtype=float), popped: wp.array(dtype=float), slots: wp.array(dtype=int),
              counts: wp.array(dtype=int)):
    s = wp.tile_stack(capacity=3, dtype=float)
    for i in range(4):
        slots[i] = wp.tile_stack_push(s, values[i], i != 1)  # 0, -1 (not offered), 1, 2
    counts[0] = wp.tile_stack_count(s)
    wp.tile_stack_push(s, 99.0, True)  # full: dropped
    for i in range(4):
        v, slot = wp.tile_stack_pop(s)
        popped[i] = v
        slots[4 + i] = slot
    counts[1] = wp.tile_stack_count(s)
    wp.tile_stack_push(s, 7.0, True)
    wp.tile_stack_clear(s)
    counts[2] = wp.tile_stack_count(s)


def test_tile_stack_push_pop_count_clear():
    values = wp.array(np.array([10, 11, 12, 13], np.float32))
    popped, slots, counts = wp.zeros(4, dtype=float), wp.zeros(8, dtype=int), wp.zeros(3, dtype=int)
    wp.launch_tiled(stack_ops, dim=1, inputs=[values, popped, slots, counts], block_dim=1)
    np.testing.assert_array_equal(slots.numpy(), [0, -1, 1, 2, 2, 1, 0, -1])
    np.testing.assert_array_equal(popped.numpy(), [13, 12, 10, 0])  # last in, first out; empty: zero
    np.testing.assert_array_equal(counts.numpy(), [3, 0, 0])


@wp.kernel
def stack_of_no_slots():
    s = wp.tile_stack(capacity=0, dtype=int)


@wp.kernel
def stack_of_run_time_capacity(n: int):
    s = wp.tile_stack(capacity=n, dtype=int)


@wp.kernel
def float_pushed_on_an_int_stack():
    s = wp.tile_stack(capacity=4, dtype=int)
    wp.tile_stack_push(s, 1.0, True)


def test_tile_stack_refusals_in_warps_words():
    with pytest.raises(ValueError, match=r"wp\.tile_stack\(\) requires capacity to be a positive integer, got 0"):
        wp.launch_tiled(stack_of_no_slots, dim=1, inputs=[], block_dim=1)
    with pytest.raises(ValueError, match=r"wp\.tile_stack\(\) requires capacity to be a compile-time constant"):
        wp.launch_tiled(stack_of_run_time_capacity, dim=1, inputs=[4], block_dim=1)
    with pytest.raises(TypeError, match=r"wp\.tile_stack_push\(\): the value's type float32 does not match the "
                                        r"stack's dtype int32"):
        wp.launch_tiled(float_pushed_on_an_int_stack, dim=1, inputs=[], block_dim=1)


@wp.kernel
def scans_and_assignment(a: wp.array2d(dtype=float), out: wp.array3d(dtype=float), beta: float):
    t = wp.tile_load(a, shape=(2, 3))
    wp.tile_store(out[0], wp.tile_scan_inclusive(t))
    wp.tile_store(out[1], wp.tile_scan_exclusive(t))
    wp.tile_store(out[2], wp.tile_scan_max_inclusive(t))
    wp.tile_store(out[3], wp.tile_scan_min_inclusive(t))
    t[1, 2] = 100.0
    t[0, 0] += 1.0
    wp.tile_store(out[4], t)
    nan = wp.tile_full(shape=(2, 2), value=wp.nan, dtype=float)
    wp.tile_matmul(wp.tile_load(a, shape=(2, 2)), wp.tile_load(a, shape=(2, 2)), nan, beta=beta)
    wp.tile_store(out[5], nan)


def test_scans_element_assignment_and_a_run_time_beta_of_zero():
    a0 = np.array([[3, 1, 4], [1, 5, 9]], np.float32)
    out = wp.zeros((6, 2, 3), dtype=float)
    wp.launch_tiled(scans_and_assignment, dim=1, inputs=[wp.array(a0), out, 0.0], block_dim=1)
    got, flat = out.numpy(), a0.reshape(-1)
    np.testing.assert_array_equal(got[0].reshape(-1), np.cumsum(flat))
    np.testing.assert_array_equal(got[1].reshape(-1), np.concatenate([[0], np.cumsum(flat)[:-1]]))
    np.testing.assert_array_equal(got[2].reshape(-1), np.maximum.accumulate(flat))
    np.testing.assert_array_equal(got[3].reshape(-1), np.minimum.accumulate(flat))
    want = a0.copy()
    want[1, 2], want[0, 0] = 100, 4
    np.testing.assert_array_equal(got[4], want)
    np.testing.assert_array_equal(got[5][:, :2], a0[:, :2] @ a0[:, :2])  # beta = 0 at run time: the NaNs ignored


@wp.kernel
def bf16_sum(a: wp.array(dtype=wp.bfloat16), out: wp.array(dtype=wp.bfloat16)):
    t = wp.tile_load(a, shape=4)
    wp.tile_store(out, t + t)


def test_bfloat16_tiles():
    a = wp.array(np.array([1.0, 2.5, -3.0, 0.5], np.float32), dtype=wp.bfloat16)
    out = wp.zeros(4, dtype=wp.bfloat16)
    wp.launch_tiled(bf16_sum, dim=1, inputs=[a, out], block_dim=1)
    bits = out.numpy().view(np.uint16).astype(np.uint32) << 16  # bfloat16 is a float32's upper half
    np.testing.assert_array_equal(bits.view(np.float32), [2.0, 5.0, -6.0, 1.0])


@wp.kernel
def solve_loss(l: wp.array2d(dtype=wp.float64), y: wp.array2d(dtype=wp.float64), x: wp.array2d(dtype=wp.float64),
               u: wp.array2d(dtype=wp.float64), z: wp.array(dtype=wp.float64), w: wp.array(dtype=wp.float64)):
    lt = wp.tile_load(l, shape=(3, 3))
    wp.tile_store(x, wp.tile_lower_solve(lt, wp.tile_load(y, shape=(3, 2))))
    wp.tile_store(w, wp.tile_upper_solve(wp.tile_load(u, shape=(3, 3)), wp.tile_load(z, shape=3)))


def test_gradients_of_the_triangular_solves_against_finite_differences():
    rng = np.random.default_rng(27)
    l0 = np.tril(rng.standard_normal((3, 3))) + 3 * np.eye(3)
    u0 = np.triu(rng.standard_normal((3, 3))) + 3 * np.eye(3)
    y0, z0 = rng.standard_normal((3, 2)), rng.standard_normal(3)
    gx, gw = rng.standard_normal((3, 2)), rng.standard_normal(3)

    def loss(l, y, u, z):  # numpy forward, the same function the gradients are of
        return np.sum(gx * np.linalg.solve(np.tril(l), y)) + np.sum(gw * np.linalg.solve(np.triu(u), z))

    arrays = [wp.array(v, dtype=wp.float64, requires_grad=True) for v in (l0, y0, u0, z0)]
    x, w = wp.zeros((3, 2), dtype=wp.float64, requires_grad=True), wp.zeros(3, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(solve_loss, dim=1, inputs=[arrays[0], arrays[1], x, arrays[2], arrays[3], w], block_dim=1)
    tape.backward(grads={x: wp.array(gx), w: wp.array(gw)})
    values = [l0, y0, u0, z0]
    for k, arr in enumerate(arrays):
        want = np.zeros_like(values[k])
        for idx in np.ndindex(values[k].shape):
            plus, minus = [v.copy() for v in values], [v.copy() for v in values]
            plus[k][idx] += 1e-6
            minus[k][idx] -= 1e-6
            want[idx] = (loss(*plus) - loss(*minus)) / 2e-6
        if k == 0:
            want = np.tril(want)  # only the triangle the solve reads
        if k == 2:
            want = np.triu(want)
        np.testing.assert_allclose(arr.grad.numpy(), want, rtol=1e-6, atol=1e-8)


@wp.kernel
def component_assign(vec_out: wp.array(dtype=wp.vec3), mat_out: wp.array(dtype=wp.mat22)):
    v = wp.tile_zeros(shape=2, dtype=wp.vec3)
    m = wp.tile_zeros(shape=2, dtype=wp.mat22)
    v[1][2] = 5.0
    m[0][1, 0] = 7.0
    wp.tile_store(vec_out, v)
    wp.tile_store(mat_out, m)


def test_component_assignment_of_tile_elements():
    v, m = wp.zeros(2, dtype=wp.vec3), wp.zeros(2, dtype=wp.mat22)
    wp.launch_tiled(component_assign, dim=1, inputs=[v, m], block_dim=1)
    np.testing.assert_array_equal(v.numpy(), [[0, 0, 0], [0, 0, 5]])
    np.testing.assert_array_equal(m.numpy(), [[[0, 0], [7, 0]], [[0, 0], [0, 0]]])


@wp.kernel
def cholesky_loss(a: wp.array2d(dtype=wp.float64), l: wp.array2d(dtype=wp.float64), u: wp.array2d(dtype=wp.float64)):
    at = wp.tile_load(a, shape=(3, 3))
    wp.tile_store(l, wp.tile_cholesky(at))
    wp.tile_store(u, wp.tile_cholesky(at, fill_mode="upper"))


def test_gradient_of_the_cholesky_factor_against_finite_differences():
    rng = np.random.default_rng(28)
    m = rng.standard_normal((3, 3))
    a0 = m @ m.T + 3 * np.eye(3)
    gl, gu = np.tril(rng.standard_normal((3, 3))), np.triu(rng.standard_normal((3, 3)))

    def loss(a):  # the lower factor reads A's lower triangle, the upper one its upper triangle
        low = np.tril(a) + np.tril(a, -1).T
        up = np.triu(a) + np.triu(a, 1).T
        return np.sum(gl * np.linalg.cholesky(low)) + np.sum(gu * np.linalg.cholesky(up).T)

    a = wp.array(a0, dtype=wp.float64, requires_grad=True)
    l, u = (wp.zeros((3, 3), dtype=wp.float64, requires_grad=True) for _ in range(2))
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(cholesky_loss, dim=1, inputs=[a, l, u], block_dim=1)
    tape.backward(grads={l: wp.array(gl), u: wp.array(gu)})
    want = np.zeros((3, 3))
    for idx in np.ndindex(3, 3):
        plus, minus = a0.copy(), a0.copy()
        plus[idx] += 1e-6
        minus[idx] -= 1e-6
        want[idx] = (loss(plus) - loss(minus)) / 2e-6
    np.testing.assert_allclose(a.grad.numpy(), want, rtol=1e-5, atol=1e-7)


@wp.kernel
def aranges(out: wp.array(dtype=float), tenths: wp.array(dtype=float)):
    wp.tile_store(out, wp.tile_arange(3))  # dtype float by default, as Warp
    wp.tile_store(tenths, wp.tile_arange(0.0, 0.3, 0.1))  # counted in float32: 3 elements, not 4


def test_tile_arange_defaults_and_length():
    out, tenths = wp.full(4, -1.0, dtype=float), wp.full(4, -1.0, dtype=float)
    wp.launch_tiled(aranges, dim=1, inputs=[out, tenths], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), [0, 1, 2, -1])
    np.testing.assert_allclose(tenths.numpy(), [0, 0.1, 0.2, -1], rtol=1e-6)


@wp.kernel
def arange_zero_step(n: int):
    t = wp.tile_arange(0, 4, 0)


@wp.kernel
def arange_empty(n: int):
    t = wp.tile_arange(4, 0)


@wp.kernel
def arange_dynamic(n: int):
    t = wp.tile_arange(n)


@wp.kernel
def arange_four_arguments(n: int):
    t = wp.tile_arange(1, 2, 3, 4)


@wp.kernel
def arange_bool(n: int):
    t = wp.tile_arange(4, dtype=bool)


@wp.kernel
def arange_fraction(n: int):
    t = wp.tile_arange(0.5, 4, dtype=int)


@pytest.mark.parametrize("kernel, message", [
    (arange_zero_step, r"tile_arange\(\) step cannot be zero"),
    (arange_empty, r"tile_arange\(\) requires a non-empty range, but start=4.0, stop=0.0, step=1.0 produces no "
                   r"elements; zero-length tile dimensions are not supported\."),
    (arange_dynamic, r"tile_arange\(\) arguments must be compile time constants, but stop is not"),
    (arange_four_arguments, r"tile_arange\(\) accepts at most 3 positional arguments, got 4"),
    (arange_bool, r"tile_arange\(\) requires a numeric scalar dtype, but got bool"),
    (arange_fraction, r"tile_arange\(\) start=0.5 has a fractional part, which the integer output type int32 cannot "
                      r"represent"),
])
def test_tile_arange_errors(kernel, message):
    with pytest.raises(wp.CompileError, match=message):
        wp.launch_tiled(kernel, dim=1, inputs=[4], block_dim=1)


@wp.kernel
def gather_scatter(a: wp.array2d(dtype=float), rows: wp.array(dtype=int), out: wp.array2d(dtype=float),
                   total: wp.array2d(dtype=float)):
    idx = wp.tile_load(rows, shape=3)
    t = wp.tile_load_indexed(a, idx, shape=(3, 2), offset=(0, 1), axis=0)  # rows idx, columns 1..2
    wp.tile_store_indexed(out, idx, t * 2.0, axis=0)
    wp.tile_atomic_add_indexed(total, idx, t, axis=0)


def test_indexed_loads_stores_and_atomic_adds():
    a0 = np.arange(12, dtype=np.float32).reshape(4, 3)
    rows = np.array([2, -1, 0], np.int32)  # -1: a padding row (reads zero, writes nothing)
    out, total = wp.full((4, 2), -1.0, dtype=float), wp.zeros((4, 2), dtype=float)
    wp.launch_tiled(gather_scatter, dim=1, inputs=[wp.array(a0), wp.array(rows), out, total], block_dim=1)
    want = np.full((4, 2), -1.0, np.float32)
    want[2], want[0] = 2 * a0[2, 1:], 2 * a0[0, 1:]
    np.testing.assert_array_equal(out.numpy(), want)
    want_total = np.zeros((4, 2), np.float32)
    want_total[2], want_total[0] = a0[2, 1:], a0[0, 1:]
    np.testing.assert_array_equal(total.numpy(), want_total)


@wp.func
def weighted(x: float, y: wp.float64, w: wp.float64):
    return wp.float64(x) * w + y


@wp.kernel
def map_constants(a: wp.array(dtype=float), b: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.vec3),
                  out: wp.array(dtype=wp.float64)):
    ta = wp.tile_load(a, shape=4)
    wp.tile_store(v, wp.tile_map(wp.mul, ta, wp.vec3(1.0, 2.0, 3.0)))
    wp.tile_store(out, wp.tile_map(weighted, ta, wp.tile_load(b, shape=4), wp.float64(0.5)))


def test_tile_map_with_constant_operands():
    a0, b0 = np.arange(4, dtype=np.float32), np.arange(10, 14, dtype=np.float64)
    v, out = wp.zeros(4, dtype=wp.vec3), wp.zeros(4, dtype=wp.float64)
    wp.launch_tiled(map_constants, dim=1, inputs=[wp.array(a0), wp.array(b0), v, out], block_dim=1)
    np.testing.assert_array_equal(v.numpy(), a0[:, None] * np.array([1, 2, 3], np.float32))
    np.testing.assert_array_equal(out.numpy(), a0 * 0.5 + b0)


def test_tile_matmul_refuses_a_bfloat16_out():
    @wp.kernel
    def bf16_out(a: wp.array2d(dtype=wp.bfloat16)):
        t = wp.tile_load(a, shape=(2, 2))
        c = wp.tile_zeros(shape=(2, 2), dtype=wp.bfloat16)
        wp.tile_matmul(t, t, c)

    _compile_error(bf16_out, [wp.zeros((2, 2), dtype=wp.bfloat16)],
                   r"tile_matmul\(\) does not support a bfloat16 'out' tile\. Allowed 'out' dtypes are float16, "
                   r"float32, and float64\.")


@wp.kernel
def folded_shapes(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    t = wp.tile_load(a, shape=(TILE_N // 2, TILE_N))
    b = wp.tile_reshape(t, shape=(wp.static(TILE_N * 2), 1))
    wp.tile_store(out, wp.tile_reshape(b, shape=(-1, 2)))


def test_shapes_folded_from_constant_expressions_and_wp_static():
    a0 = np.arange(8, dtype=np.float32).reshape(2, 4)
    out = wp.zeros((4, 2), dtype=float)
    wp.launch_tiled(folded_shapes, dim=1, inputs=[wp.array(a0), out], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), a0.reshape(4, 2))


# -- register-blocked matmuls and the contiguous fast path of tile_load -------------------------------------
@wp.kernel
def gemm_32(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(32, 32), dtype=float)
    for k in range(A.shape[1] // 32):
        a = wp.tile_load(A, shape=(32, 32), offset=(i * 32, k * 32))
        b = wp.tile_load(B, shape=(32, 32), offset=(k * 32, j * 32))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * 32, j * 32))


@wp.kernel
def gemm_f64_long_k(A: wp.array2d(dtype=wp.float64), B: wp.array2d(dtype=wp.float64),
                    C: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(6, 128))
    b = wp.tile_load(B, shape=(128, 16))
    wp.tile_store(C, wp.tile_matmul(a, b))


def test_register_blocked_matmul_matches_numpy():
    """32 x 32 x 32 float32 tiles (outer products of two vector registers' columns) over a 96 x 64 by 64 x 96
    product; a float64 matmul with k = 128 (taken in steps of 64) and m = 6 (two rows a tile)."""
    a0, b0 = _rand((96, 64), 11), _rand((64, 96), 12)
    c = wp.zeros((96, 96), dtype=float)
    wp.launch_tiled(gemm_32, dim=(3, 3), inputs=[wp.array(a0), wp.array(b0), c], block_dim=BLOCK_DIM)
    want = a0.astype(np.float64) @ b0
    np.testing.assert_allclose(c.numpy(), want, rtol=0, atol=64 * 8 * np.finfo(np.float32).eps * np.abs(want).max())
    a1, b1 = _rand((6, 128), 13, np.float64), _rand((128, 16), 14, np.float64)
    c1 = wp.zeros((6, 16), dtype=wp.float64)
    wp.launch_tiled(gemm_f64_long_k, dim=1, inputs=[wp.array(a1), wp.array(b1), c1], block_dim=BLOCK_DIM)
    np.testing.assert_allclose(c1.numpy(), a1 @ b1, rtol=1e-13, atol=1e-13)


@wp.kernel
def small_matmul(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    wp.tile_store(C, wp.tile_matmul(wp.tile_load(A, shape=(3, 2)), wp.tile_load(B, shape=(2, 5))))


def test_each_product_is_fused_with_its_addition_in_increasing_k():
    """acc = fma(x, -x, fma(x, x, 0)) is the rounding error of x * x (-2**-24 for x = 1 + 2**-12), where a
    product rounded before its addition would give 0: Warp 1.19's CPU build (clang, fuse_fp) gives -2**-24."""
    x = np.float32(1.0 + 2.0 ** -12)
    a0, b0 = np.zeros((32, 32), np.float32), np.zeros((32, 32), np.float32)
    a0[0, :2] = [x, x]
    b0[0, :], b0[1, :] = x, -x
    c = wp.zeros((32, 32), dtype=float)
    wp.launch_tiled(gemm_32, dim=(1, 1), inputs=[wp.array(a0), wp.array(b0), c], block_dim=BLOCK_DIM)
    assert c.numpy()[0, 0] == np.float32(-2.0 ** -24)
    # a 3 x 2 by 2 x 5 matmul fills no vector register: loops, fused alike
    small = wp.zeros((3, 5), dtype=float)
    wp.launch_tiled(small_matmul, dim=1, inputs=[wp.array(a0[:3, :2].copy()), wp.array(b0[:2, :5].copy()), small],
                    block_dim=1)
    assert small.numpy()[0, 0] == np.float32(-2.0 ** -24)


@wp.kernel
def load_8x16(a: wp.array2d(dtype=float), out: wp.array3d(dtype=float), offsets: wp.array2d(dtype=int)):
    i = wp.tid()
    t = wp.tile_load(a, shape=(8, 16), offset=(offsets[i, 0], offsets[i, 1]))
    wp.tile_store(out[i], t)


@pytest.mark.parametrize("view", ["contiguous", "every_other_column", "transposed"])
def test_tile_loads_inside_at_the_edge_and_from_strided_views(view):
    """A tile wholly inside a contiguous array takes the fast branch, one at the edge or in an array whose rows
    are not contiguous the checked one: each gives numpy's elements, zero past the array's extent."""
    base = wp.array(np.arange(40 * 48, dtype=np.float32).reshape(40, 48))
    a = {"contiguous": base, "every_other_column": base[:, ::2], "transposed": base.transpose()}[view]
    shape = a.shape
    offsets = np.array([[0, 0], [3, 5], [shape[0] - 8, shape[1] - 16], [shape[0] - 5, shape[1] - 9]], np.int32)
    out = wp.full((4, 8, 16), -1.0, dtype=float)
    wp.launch_tiled(load_8x16, dim=4, inputs=[a, out, wp.array(offsets)], block_dim=BLOCK_DIM)
    ref = a.numpy()
    for t, (r, c) in enumerate(offsets):
        want = np.zeros((8, 16), np.float32)
        part = ref[r:r + 8, c:c + 16]
        want[:part.shape[0], :part.shape[1]] = part
        np.testing.assert_array_equal(out.numpy()[t], want)


@wp.kernel
def tile_made_in_one_branch(flag: int, a: wp.array(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=4)
    if flag == 0:
        s = t * 2.0
    elif flag == 1:
        s = t * 3.0
    wp.tile_store(out, s)


@pytest.mark.parametrize("flag, factor", [(0, 2.0), (1, 3.0), (2, 0.0)])
def test_a_tile_made_in_some_branches_is_zero_on_the_others(flag, factor):
    # Warp's tile variables start zeroed: no branch taken leaves `s` a tile of zeros (Warp 1.19 prints the same)
    out = wp.full(4, -7.0, dtype=float)
    wp.launch_tiled(tile_made_in_one_branch, dim=[1], inputs=[flag, wp.array(np.arange(4, dtype=np.float32)), out],
                    block_dim=1)
    np.testing.assert_array_equal(out.numpy(), factor * np.arange(4))
