"""The call forms of Warp 1.19's tile builtins (its overloads), on the CPU against numpy: tile_matmul's precision
argument and its (a, b, alpha, precision) form, tile_randi / tile_randf with a positional storage, tile_extract of
a vector's component or a matrix's row, and the in-place builtins on a temporary tile (Warp updates and drops it)."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.launching import cuda_compile


def _rand(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _errors(kernel, inputs, message):
    with pytest.raises(wp.CompileError, match=message) as e:
        wp.launch_tiled(kernel, dim=1, inputs=inputs, block_dim=1)
    assert "test_tile_builtin_forms.py:" in str(e.value)


# -- tile_matmul ------------------------------------------------------------------------------------------------
@wp.kernel
def matmul_forms(a: wp.array2d[float], b: wp.array2d[float], acc: wp.array2d[float], fresh: wp.array2d[float]):
    ta = wp.tile_load(a, shape=(3, 4))
    tb = wp.tile_load(b, shape=(4, 2))
    out = wp.tile_ones(shape=(3, 2), dtype=float)
    wp.tile_matmul(ta, tb, out, 2.0, 0.5, "tf32")  # out = 2 a @ b + 0.5 out
    wp.tile_store(acc, out)
    wp.tile_store(fresh, wp.tile_matmul(ta, tb, 3.0, "default"))  # the (a, b, alpha, precision) form


def test_matmul_forms_with_precision():
    a0, b0 = _rand((3, 4), 1), _rand((4, 2), 2)
    a, b = wp.array(a0, requires_grad=True), wp.array(b0, requires_grad=True)
    acc, fresh = wp.zeros((3, 2), requires_grad=True), wp.zeros((3, 2), requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(matmul_forms, dim=1, inputs=[a, b, acc, fresh], block_dim=1)
    product = a0.astype(np.float64) @ b0
    np.testing.assert_allclose(acc.numpy(), 2 * product + 0.5, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fresh.numpy(), 3 * product, rtol=1e-5, atol=1e-6)
    acc.grad, fresh.grad = wp.ones((3, 2)), wp.ones((3, 2))
    tape.backward()
    # d/da sum(5 a @ b) = 5 * 1 @ b^T
    np.testing.assert_allclose(a.grad.numpy(), 5 * np.ones((3, 2)) @ b0.T, rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), 5 * a0.T @ np.ones((3, 2)), rtol=1e-5)


def test_matmul_precision_errors():
    @wp.kernel
    def not_a_precision(a: wp.array2d[float]):
        t = wp.tile_load(a, shape=(2, 2))
        wp.tile_matmul(t, t, 1.0, "fast")

    @wp.kernel
    def tf32_of_doubles(a: wp.array2d[wp.float64]):
        t = wp.tile_load(a, shape=(2, 2))
        wp.tile_matmul(t, t, precision="tf32")

    @wp.kernel
    def tf32_into_doubles(a: wp.array2d[float]):
        t = wp.tile_load(a, shape=(2, 2))
        wp.tile_matmul(t, t, wp.tile_zeros(shape=(2, 2), dtype=wp.float64), precision="tf32")

    @wp.kernel
    def tf32_of_complex(a: wp.array2d[wp.vec2f]):
        t = wp.tile_load(a, shape=(2, 2))
        wp.tile_matmul(t, t, precision="tf32")  # Warp: the complex refusal comes first

    _errors(tf32_into_doubles, [wp.zeros((2, 2))],
            r"tile_matmul\(\) precision='tf32' requires float32 tiles for a, b, and out")
    _errors(tf32_of_complex, [wp.zeros((2, 2), dtype=wp.vec2f)], r"tile_matmul\(\) does not support complex tiles")
    _errors(not_a_precision, [wp.zeros((2, 2))],
            r"tile_matmul\(\) precision must be the string literal 'default' or 'tf32', got 'fast'")
    _errors(tf32_of_doubles, [wp.zeros((2, 2), dtype=wp.float64)],
            r"tile_matmul\(\) precision='tf32' requires float32 tiles for a, b, and out")


# -- random tiles with a positional storage ---------------------------------------------------------------------
def _pcg(x):
    b = (x * 747796405 + 2891336453) & 0xFFFFFFFF
    c = ((((b >> ((b >> 28) + 4)) ^ b) * 277803737) & 0xFFFFFFFF)
    return (c >> 22) ^ c


def _states(seed, offset, n):
    """Warp's rand_init(seed, offset), then the tile's sequence: rand_pcg(state), advanced once per element."""
    state = _pcg((seed + _pcg(offset)) & 0xFFFFFFFF)
    s, out = _pcg(state), []
    for _ in range(n):
        s = _pcg(s)
        out.append(s)
    return out


@wp.kernel
def random_storage(seed: int, x: wp.array[int], y: wp.array[float]):
    rng = wp.rand_init(seed, 3)
    wp.tile_store(x, wp.tile_randi(5, rng, "shared"))  # Warp's (shape, rng, storage) overload
    wp.tile_store(y, wp.tile_randf((5,), rng, "register"))


def test_random_tiles_with_a_positional_storage():
    x, y = wp.zeros(5, dtype=int), wp.zeros(5)
    wp.launch_tiled(random_storage, dim=1, inputs=[7, x, y], block_dim=1)
    s = np.array(_states(7, 3, 5), dtype=np.uint64)
    np.testing.assert_array_equal(x.numpy(), s.astype(np.uint32).view(np.int32))
    np.testing.assert_array_equal(y.numpy(), (s >> 8).astype(np.float32) * np.float32(1.0 / 16777216.0))


def test_random_tile_storage_error():
    @wp.kernel
    def bad_storage(a: wp.array[float]):
        wp.tile_randf(4, wp.rand_init(1), "global")

    _errors(bad_storage, [wp.zeros(1)], r"wp\.tile_randf\(\): storage must be 'register' or 'shared', got 'global'")


# -- tile_extract into the elements ----------------------------------------------------------------------------
@wp.kernel
def extract_components(m: wp.array[wp.mat33], v: wp.array2d[wp.vec3], out: wp.array[float], row: wp.array[wp.vec3]):
    tm = wp.tile_load(m, shape=2)
    tv = wp.tile_load(v, shape=(2, 2))
    out[0] = wp.tile_extract(tm, 1, 2, 0)  # element 1, its (2, 0) entry
    out[1] = wp.tile_extract(tv, 1, 0, 2)  # element (1, 0), its z
    out[2] = tv[1, 1, 1] * 2.0
    row[0] = wp.tile_extract(tm, 0, 1)  # element 0, its row 1


def test_extract_a_component_or_a_row_and_the_gradients():
    m0, v0 = _rand((2, 3, 3), 3), _rand((2, 2, 3), 4)
    m, v = wp.array(m0, dtype=wp.mat33, requires_grad=True), wp.array(v0, dtype=wp.vec3, requires_grad=True)
    out, row = wp.zeros(3, requires_grad=True), wp.zeros(1, dtype=wp.vec3, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(extract_components, dim=1, inputs=[m, v, out, row], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), [m0[1, 2, 0], v0[1, 0, 2], 2 * v0[1, 1, 1]])
    np.testing.assert_array_equal(row.numpy(), [m0[0, 1]])
    out.grad = wp.array([1.0, 2.0, 3.0], dtype=float)
    row.grad = wp.array([[4.0, 5.0, 6.0]], dtype=wp.vec3)
    tape.backward()
    gm, gv = np.zeros_like(m0), np.zeros_like(v0)
    gm[1, 2, 0], gm[0, 1] = 1.0, [4.0, 5.0, 6.0]
    gv[1, 0, 2], gv[1, 1, 1] = 2.0, 6.0
    np.testing.assert_array_equal(m.grad.numpy(), gm)
    np.testing.assert_array_equal(v.grad.numpy(), gv)


def test_extract_index_count_error():
    @wp.kernel
    def too_many(v: wp.array[wp.vec3]):
        wp.tile_extract(wp.tile_load(v, shape=2), 0, 1, 2)

    _errors(too_many, [wp.zeros(2, dtype=wp.vec3)], r"tile_extract: incorrect number of indices \(3\) for tile shape "
                                                    r"\(2,\)")


# -- in-place builtins on temporaries ----------------------------------------------------------------------------
@wp.kernel
def in_place_on_temporaries(a: wp.array2d[float], out: wp.array[float]):
    # each updates a tile nothing else reads (Warp compiles these: the update is dropped)
    wp.tile_sort(wp.tile_ones(shape=3, dtype=float), wp.tile_zeros(shape=3, dtype=float))
    wp.tile_assign(wp.tile_zeros(shape=(2, 2), dtype=float), wp.tile_load(a, shape=(2, 2)))
    wp.tile_scatter_add(wp.tile_zeros(shape=3, dtype=float), 1, 2.0, True)
    wp.tile_cholesky_inplace(wp.tile_load(a, shape=(2, 2)))
    t = wp.tile_load(a, shape=(2, 2))
    wp.tile_matmul(t, t, wp.tile_zeros(shape=(2, 2), dtype=float))
    wp.tile_store(out, wp.tile_sum(t))


def test_in_place_builtins_accept_a_temporary():
    a0 = np.array([[4.0, 1.0], [1.0, 3.0]], np.float32)
    out = wp.zeros(1)
    wp.launch_tiled(in_place_on_temporaries, dim=1, inputs=[wp.array(a0), out], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), [9.0])


def test_in_place_builtins_refuse_a_view():
    @wp.kernel
    def sort_a_view(a: wp.array2d[float]):
        t = wp.tile_load(a, shape=(2, 2))
        wp.tile_sort(wp.tile_reshape(t, 4), wp.tile_reshape(t, 4))

    _errors(sort_a_view, [wp.zeros((2, 2))], r"wp\.tile_sort\(\): 'keys' is sorted in place: it must be a variable")


# -- the CUDA compile path -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kernel", [matmul_forms, random_storage, extract_components, in_place_on_temporaries],
                         ids=["matmul", "random", "extract", "temporaries"])
def test_compiles_to_ptx_for_sm_90(kernel):
    assert f".entry {kernel.key}_cuda(" in cuda_compile.to_mlir(kernel, "ptx", 90)
