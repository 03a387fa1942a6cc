"""wp.tile_dot, wp.tile_axpy and wp.tile_diag_add (frontend/tile_algebra.py) on the CPU: values against numpy,
gradients against closed forms, Warp's argument errors; and the CUDA compile path (PTX for sm_90, no GPU needed)."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.launching import cuda_compile

N = 4


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@wp.kernel
def dot_scalar(a: wp.array2d[float], b: wp.array2d[float], out: wp.array[float]):
    wp.tile_store(out, wp.tile_dot(wp.tile_load(a, shape=(2, N)), wp.tile_load(b, shape=(2, N))))


@wp.kernel
def dot_vec(a: wp.array[wp.vec3], b: wp.array[wp.vec3], out: wp.array[float]):
    wp.tile_store(out, wp.tile_dot(wp.tile_load(a, shape=N), wp.tile_load(b, shape=N)))


@wp.kernel
def dot_mat(a: wp.array[wp.mat22d], b: wp.array[wp.mat22d], out: wp.array[wp.float64]):
    r = wp.tile_dot(wp.tile_load(a, shape=N), wp.tile_load(b, shape=N))
    out[0] = r[0]


def _tape_launch(kernel, inputs, out, seed):
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(kernel, dim=1, inputs=[*inputs, out], block_dim=1)
    out.grad = wp.array(np.full(out.shape, 1.5, dtype=out.numpy().dtype), dtype=out.dtype)
    tape.backward()


def test_dot_of_scalar_tiles_and_its_gradient():
    a0, b0 = _rand((2, N), 1), _rand((2, N), 2)
    a, b = wp.array(a0, requires_grad=True), wp.array(b0, requires_grad=True)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    _tape_launch(dot_scalar, [a, b], out, 0)
    np.testing.assert_allclose(out.numpy(), [np.sum(a0.astype(np.float64) * b0)], rtol=1e-5)
    np.testing.assert_allclose(a.grad.numpy(), 1.5 * b0, rtol=1e-6)  # d(sum a*b)/da = b
    np.testing.assert_allclose(b.grad.numpy(), 1.5 * a0, rtol=1e-6)


def test_dot_of_vector_tiles_contracts_each_pair():
    a0, b0 = _rand((N, 3), 3), _rand((N, 3), 4)
    a, b = wp.array(a0, dtype=wp.vec3, requires_grad=True), wp.array(b0, dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    _tape_launch(dot_vec, [a, b], out, 0)
    np.testing.assert_allclose(out.numpy(), [np.sum(a0.astype(np.float64) * b0)], rtol=1e-5)
    np.testing.assert_allclose(a.grad.numpy(), 1.5 * b0, rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), 1.5 * a0, rtol=1e-6)


def test_dot_of_matrix_tiles_is_the_frobenius_product():
    a0, b0 = _rand((N, 2, 2), 5).astype(np.float64), _rand((N, 2, 2), 6).astype(np.float64)
    a, b = wp.array(a0, dtype=wp.mat22d, requires_grad=True), wp.array(b0, dtype=wp.mat22d, requires_grad=True)
    out = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    _tape_launch(dot_mat, [a, b], out, 0)
    np.testing.assert_allclose(out.numpy(), [np.sum(a0 * b0)], rtol=1e-12)
    np.testing.assert_allclose(a.grad.numpy(), 1.5 * b0, rtol=1e-12)


@wp.kernel
def axpy(alpha: float, src: wp.array[float], dest: wp.array[float], out: wp.array[float]):
    s = wp.tile_load(src, shape=N)
    d = wp.tile_load(dest, shape=N)
    wp.tile_axpy(alpha, s, d)
    wp.tile_axpy(2.0, s, d)  # an untyped literal takes the tile's scalar type
    wp.tile_store(out, d)


@wp.kernel
def axpy_vec_loop(src: wp.array[wp.vec3], out: wp.array[wp.vec3]):
    s = wp.tile_load(src, shape=N)
    acc = wp.tile_zeros(shape=N, dtype=wp.vec3)
    for k in range(3):
        wp.tile_axpy(float(k + 1), s, acc)  # updated in place, carried by the loop
    wp.tile_store(out, acc)


def test_axpy_accumulates_in_place_with_gradients():
    s0, d0 = _rand(N, 7), _rand(N, 8)
    src, dest = wp.array(s0, requires_grad=True), wp.array(d0, requires_grad=True)
    out = wp.zeros(N, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(axpy, dim=1, inputs=[0.5, src, dest, out], block_dim=1)
    np.testing.assert_allclose(out.numpy(), d0 + 2.5 * s0, rtol=1e-6)
    out.grad = wp.array(np.arange(1, N + 1, dtype=np.float32))
    tape.backward()
    np.testing.assert_allclose(src.grad.numpy(), 2.5 * np.arange(1, N + 1), rtol=1e-6)
    np.testing.assert_allclose(dest.grad.numpy(), np.arange(1, N + 1), rtol=1e-6)


def test_axpy_of_vector_tiles_in_a_loop():
    s0 = _rand((N, 3), 9)
    out = wp.zeros(N, dtype=wp.vec3)
    wp.launch_tiled(axpy_vec_loop, dim=1, inputs=[wp.array(s0, dtype=wp.vec3), out], block_dim=1)
    np.testing.assert_allclose(out.numpy(), 6 * s0, rtol=1e-6)


@wp.kernel
def diag_add(a: wp.array2d[float], d: wp.array[float], out: wp.array2d[float]):
    wp.tile_store(out, wp.tile_diag_add(wp.tile_load(a, shape=(3, 3)), wp.tile_load(d, shape=3)))


@wp.kernel
def diag_add_vec(a: wp.array2d[wp.vec2], d: wp.array[wp.vec2], out: wp.array2d[wp.vec2]):
    wp.tile_store(out, wp.tile_diag_add(wp.tile_load(a, shape=(2, 2)), wp.tile_load(d, shape=2)))


def test_diag_add_of_warps_documentation_and_its_gradient():
    a0 = np.arange(9, dtype=np.float32).reshape(3, 3)
    a = wp.array(a0, requires_grad=True)
    d = wp.array([10.0, 20.0, 30.0], dtype=float, requires_grad=True)
    out = wp.zeros((3, 3), dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(diag_add, dim=1, inputs=[a, d, out], block_dim=8)
    # Warp's documented output
    np.testing.assert_array_equal(out.numpy(), [[10.0, 1.0, 2.0], [3.0, 24.0, 5.0], [6.0, 7.0, 38.0]])
    g = np.arange(9, dtype=np.float32).reshape(3, 3) + 1
    out.grad = wp.array(g)
    tape.backward()
    np.testing.assert_array_equal(a.grad.numpy(), g)  # out = a + diag(d)
    np.testing.assert_array_equal(d.grad.numpy(), np.diag(g))


def test_diag_add_keeps_off_diagonal_elements_when_d_is_infinite():
    out = wp.zeros((3, 3), dtype=float)
    wp.launch_tiled(diag_add, dim=1, inputs=[wp.array(np.ones((3, 3), np.float32)),
                                             wp.array([np.inf, 0.0, -np.inf], dtype=float), out], block_dim=1)
    want = np.ones((3, 3), np.float32)
    np.fill_diagonal(want, [np.inf, 1.0, -np.inf])
    np.testing.assert_array_equal(out.numpy(), want)


def test_diag_add_of_vector_tiles():
    a0, d0 = _rand((2, 2, 2), 10), _rand((2, 2), 11)
    out = wp.zeros((2, 2), dtype=wp.vec2)
    wp.launch_tiled(diag_add_vec, dim=1, inputs=[wp.array(a0, dtype=wp.vec2), wp.array(d0, dtype=wp.vec2), out],
                    block_dim=1)
    want = a0.copy()
    want[[0, 1], [0, 1]] += d0
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)


# -- errors: Warp's messages ----------------------------------------------------------------------------------
@wp.kernel
def dot_shapes(a: wp.array[float]):
    wp.tile_dot(wp.tile_load(a, shape=4), wp.tile_load(a, shape=2))


@wp.kernel
def dot_dtypes(a: wp.array[float], b: wp.array[wp.float64]):
    wp.tile_dot(wp.tile_load(a, shape=4), wp.tile_load(b, shape=4))


@wp.kernel
def axpy_alpha_type(a: wp.array[float], alpha: wp.float64):
    t = wp.tile_load(a, shape=4)
    wp.tile_axpy(alpha, t, t)


@wp.kernel
def axpy_into_a_view(a: wp.array[float]):
    t = wp.tile_load(a, shape=4)
    wp.tile_axpy(1.0, t, wp.tile_reshape(t, (4,)))  # Warp's reshape is a view: the update would write t


@wp.kernel
def diag_not_square(a: wp.array2d[float], d: wp.array[float]):
    wp.tile_diag_add(wp.tile_load(a, shape=(2, 3)), wp.tile_load(d, shape=2))


@wp.kernel
def diag_length(a: wp.array2d[float], d: wp.array[float]):
    wp.tile_diag_add(wp.tile_load(a, shape=(2, 2)), wp.tile_load(d, shape=3))


@pytest.mark.parametrize("kernel, args, message", [
    (dot_shapes, [np.zeros(4, np.float32)], r"tile_dot\(\) arguments must have the same shape, got \(4,\) and \(2,\)"),
    (dot_dtypes, [np.zeros(4, np.float32), np.zeros(4, np.float64)],
     "tile_dot\\(\\) arguments must have the same dtype, got float32 and float64"),
    (axpy_alpha_type, [np.zeros(4, np.float32), 1.0],
     "tile_axpy\\(\\) 'alpha' must match the tile's scalar type, got float64 for tile scalar type float32"),
    (axpy_into_a_view, [np.zeros(4, np.float32)], "'dest' is updated in place: it must be a tile variable"),
    (diag_not_square, [np.zeros((2, 3), np.float32), np.zeros(2, np.float32)],
     r"tile_diag_add\(\) 'a' argument must be square"),
    (diag_length, [np.zeros((2, 2), np.float32), np.zeros(3, np.float32)],
     r"'d' argument must have the same number of elements as the number of rows in 'a', got 3 elements in 'd' "
     r"and 2 rows in 'a'"),
], ids=["dot_shapes", "dot_dtypes", "axpy_alpha", "axpy_view", "diag_square", "diag_length"])
def test_errors_name_the_kernel_line(kernel, args, message):
    arrays = [wp.array(a, dtype=wp.float64 if a.dtype == np.float64 else float) if isinstance(a, np.ndarray) else
              wp.float64(a) for a in args]
    with pytest.raises(wp.CompileError, match=message) as e:
        wp.launch_tiled(kernel, dim=1, inputs=arrays, block_dim=1)
    assert "test_tile_algebra.py:" in str(e.value)


# -- the CUDA compile path -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kernel", [dot_vec, axpy, diag_add], ids=["dot", "axpy", "diag_add"])
def test_compiles_to_ptx_for_sm_90(kernel):
    ptx = cuda_compile.to_mlir(kernel, "ptx", 90)
    assert f".entry {kernel.key}_cuda(" in ptx
