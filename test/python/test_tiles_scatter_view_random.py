"""tile_scatter_add / tile_scatter_masked, tile_view and tile_randi / tile_randf on the CPU (one lane per block),
each against numpy or hand-computed values, their gradients, and the errors for what is refused."""

import numpy as np
import pytest

import mlwarp as wp


def _compile_error(kernel, args, match):
    with pytest.raises(wp.CompileError, match=match):
        wp.launch_tiled(kernel, dim=1, inputs=args, block_dim=1)


# -- scatter ----------------------------------------------------------------------------------------------
@wp.kernel
def histogram(data: wp.array[float], bins_out: wp.array[float]):
    bins = wp.tile_zeros(shape=4, dtype=float, storage="shared")
    for n in range(data.shape[0]):
        b = int(data[n] / 2.0)
        wp.tile_scatter_add(bins, b, 1.0, b < 4)  # b = 4 and 5 are invalid indices, never touched
    wp.tile_store(bins_out, bins)


def test_scatter_add_histogram():
    data = np.array([0.5, 2.0, 3.0, 4.0, 4.5, 5.5, 6.0, 7.0, 9.0, 11.0], np.float32)
    out = wp.zeros(4, dtype=float)
    wp.launch_tiled(histogram, dim=1, inputs=[wp.array(data)], outputs=[out], block_dim=8)
    want = np.bincount((data[data < 8] / 2).astype(int), minlength=4).astype(np.float32)
    np.testing.assert_array_equal(out.numpy(), want)


@wp.kernel
def scatter_2d(values: wp.array[float], rows: wp.array[int], cols: wp.array[int], out: wp.array2d[float],
               masked: wp.array2d[float]):
    t = wp.tile_full(shape=(2, 3), value=1.0, dtype=float)
    m = wp.tile_full(shape=(2, 3), value=1.0, dtype=float)
    for n in range(values.shape[0]):
        wp.tile_scatter_add(t, rows[n], cols[n], values[n] * values[n], True, False)
        wp.tile_scatter_masked(m, rows[n], cols[n], values[n] * values[n], n != 1)
    wp.tile_store(out, t * 2.0)
    wp.tile_store(masked, m * 3.0)


def test_scatter_2d_and_gradients():
    v = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    rows, cols = np.array([0, 1, 0, 1], np.int32), np.array([2, 0, 2, 1], np.int32)
    values = wp.array(v, requires_grad=True)
    out, masked = wp.zeros((2, 3), requires_grad=True), wp.zeros((2, 3), requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(scatter_2d, dim=1, inputs=[values, wp.array(rows), wp.array(cols), out, masked], block_dim=1)
    want = np.ones((2, 3), np.float32)
    np.add.at(want, (rows, cols), v * v)
    np.testing.assert_allclose(out.numpy(), 2 * want)
    want_m = np.ones((2, 3), np.float32)
    for n in (0, 2, 3):  # the later write to (0, 2) wins
        want_m[rows[n], cols[n]] = v[n] ** 2
    np.testing.assert_allclose(masked.numpy(), 3 * want_m)
    g_out = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
    g_masked = np.full((2, 3), 0.5, np.float32)
    out.grad, masked.grad = wp.array(g_out), wp.array(g_masked)
    tape.backward()
    # d out / d v[n] = 2 * 2 v[n]; the masked write's adjoint reaches only the last write to each element
    want_g = 2 * 2 * v * g_out[rows, cols]
    for n in (2, 3):  # value 0's write to (0, 2) was overwritten by value 2's; value 1 was not written
        want_g[n] += 3 * 2 * v[n] * g_masked[rows[n], cols[n]]
    np.testing.assert_allclose(values.grad.numpy(), want_g, rtol=1e-6)


def test_scatter_errors():
    @wp.kernel
    def too_few_indices(a: wp.array[float]):
        t = wp.tile_zeros(shape=(2, 2), dtype=float)
        wp.tile_scatter_add(t, 0, 1.0, True)

    _compile_error(too_few_indices, [wp.zeros(1)],
                   r"tile_scatter_add: incorrect number of indices \(1\) for tile shape \(2, 2\)")

    @wp.kernel
    def wrong_value(a: wp.array[float]):
        t = wp.tile_zeros(shape=4, dtype=float)
        wp.tile_scatter_masked(t, 0, 1, True)

    _compile_error(wrong_value, [wp.zeros(1)],
                   r"tile_scatter_masked\(\) 'value' type must match tile dtype, got int32 and tile dtype float32")

    @wp.kernel
    def runtime_atomic(a: wp.array[float], flag: bool):
        t = wp.tile_zeros(shape=4, dtype=float)
        wp.tile_scatter_add(t, 0, 1.0, True, flag)

    with pytest.raises(wp.CompileError, match=r"tile_scatter_add\(\) 'atomic' must be a compile-time constant "
                                              r"\(True or False\), not a runtime variable"):
        wp.launch_tiled(runtime_atomic, dim=1, inputs=[wp.zeros(1), True], block_dim=1)


# -- views ------------------------------------------------------------------------------------------------
@wp.kernel
def views(a: wp.array2d[float], i: int, sub: wp.array2d[float], row: wp.array[float]):
    t = wp.tile_load(a, shape=(4, 6))
    v = wp.tile_view(t, offset=(1, 2), shape=(2, 3))
    r = wp.tile_view(t, offset=(i,))
    wp.tile_store(sub, v * v)
    wp.tile_store(row, r * 3.0)


def test_view_forms_and_gradient():
    A = np.arange(24, dtype=np.float32).reshape(4, 6) / 4
    a = wp.array(A, requires_grad=True)
    sub, row = wp.zeros((2, 3), requires_grad=True), wp.zeros(6, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(views, dim=1, inputs=[a, 2, sub, row], block_dim=8)
    np.testing.assert_allclose(sub.numpy(), A[1:3, 2:5] ** 2)
    np.testing.assert_allclose(row.numpy(), 3 * A[2])
    sub.grad, row.grad = wp.full((2, 3), 2.0), wp.ones(6)
    tape.backward()
    want = np.zeros_like(A)
    want[1:3, 2:5] = 2 * 2 * A[1:3, 2:5]
    want[2] += 3
    np.testing.assert_allclose(a.grad.numpy(), want)


@wp.kernel
def view_of_vectors(a: wp.array[wp.vec3], out: wp.array[wp.vec3]):
    t = wp.tile_load(a, shape=6)
    wp.tile_store(out, wp.tile_view(t, offset=(3,), shape=(2,)))


def test_view_of_vectors():
    A = np.arange(18, dtype=np.float32).reshape(6, 3)
    out = wp.zeros(2, dtype=wp.vec3)
    wp.launch_tiled(view_of_vectors, dim=1, inputs=[wp.array(A, dtype=wp.vec3), out], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), A[3:5])


def test_matmul_of_a_view():
    @wp.kernel
    def left_half(a: wp.array2d[float], b: wp.array2d[float], c: wp.array2d[float]):
        full = wp.tile_load(a, shape=(4, 8))
        out = wp.tile_zeros(shape=(4, 2), dtype=float)
        wp.tile_matmul(wp.tile_view(full, offset=(0, 4), shape=(4, 4)), wp.tile_load(b, shape=(4, 2)), out)
        wp.tile_store(c, out)

    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32)
    c = wp.zeros((4, 2))
    wp.launch_tiled(left_half, dim=1, inputs=[wp.array(A), wp.array(B), c], block_dim=1)
    np.testing.assert_allclose(c.numpy(), A[:, 4:] @ B, rtol=1e-5, atol=1e-6)


def test_view_errors():
    @wp.kernel
    def outside(a: wp.array[float]):
        t = wp.tile_zeros(shape=(4, 4), dtype=float)
        v = wp.tile_view(t, offset=(3, 0), shape=(2, 4))

    _compile_error(outside, [wp.zeros(1)], r"tile_view\(\): the view of shape \(2, 4\) at offset 3 of dimension 0 "
                                           r"lies outside the tile's extent 4")

    @wp.kernel
    def wrong_rank(a: wp.array[float]):
        t = wp.tile_zeros(shape=(4, 4), dtype=float)
        v = wp.tile_view(t, offset=(0, 0), shape=(2,))

    _compile_error(wrong_rank, [wp.zeros(1)], r"tile_view\(\) if shape is specified it must have same number of "
                                              r"dimensions as source tile, expected 2, got 1")

    @wp.kernel
    def everything(a: wp.array[float]):
        t = wp.tile_zeros(shape=(4, 4), dtype=float)
        v = wp.tile_view(t, offset=(1, 1))

    _compile_error(everything, [wp.zeros(1)], r"wp\.tile_view\(\): an offset of 2 indices leaves nothing of a tile "
                                              r"of shape \(4, 4\): use t\[i, \.\.\.\] for one element")


# -- random tiles -----------------------------------------------------------------------------------------
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
def random_tiles(seed: int, x: wp.array2d[int], y: wp.array2d[float], xr: wp.array2d[int], yr: wp.array2d[float]):
    i, j = wp.tid()
    rng = wp.rand_init(seed, i * 2 + j)
    wp.tile_store(x, wp.tile_randi(shape=(2, 3), rng=rng), offset=(i * 2, j * 3))
    wp.tile_store(y, wp.tile_randf(shape=(2, 3), rng=rng), offset=(i * 2, j * 3))
    wp.tile_store(xr, wp.tile_randi(shape=(2, 3), rng=rng, min=-5, max=7), offset=(i * 2, j * 3))
    wp.tile_store(yr, wp.tile_randf(shape=(2, 3), rng=rng, min=-2.0, max=3.0), offset=(i * 2, j * 3))


def test_random_tiles_follow_warps_sequence():
    x, xr = wp.zeros((4, 6), dtype=int), wp.zeros((4, 6), dtype=int)
    y, yr = wp.zeros((4, 6)), wp.zeros((4, 6))
    wp.launch_tiled(random_tiles, dim=[2, 2], inputs=[42, x, y, xr, yr], block_dim=1)
    for i in range(2):
        for j in range(2):
            s = np.array(_states(42, i * 2 + j, 6), dtype=np.uint64).reshape(2, 3)
            block = (slice(i * 2, i * 2 + 2), slice(j * 3, j * 3 + 3))
            np.testing.assert_array_equal(x.numpy()[block], s.astype(np.uint32).view(np.int32))
            u = (s >> 8).astype(np.float32) * np.float32(1.0 / 16777216.0)
            np.testing.assert_array_equal(y.numpy()[block], u)
            np.testing.assert_array_equal(xr.numpy()[block], (s % 12).astype(np.int32) - 5)
            np.testing.assert_allclose(yr.numpy()[block], np.float32(5.0) * u - np.float32(2.0), rtol=1e-6)
    assert -5 <= xr.numpy().min() and xr.numpy().max() < 7


def test_random_tile_errors():
    @wp.kernel
    def half_range(a: wp.array[float]):
        rng = wp.rand_init(1)
        t = wp.tile_randf(shape=4, rng=rng, min=1.0)

    _compile_error(half_range, [wp.zeros(1)], r"wp\.tile_randf\(\): pass both 'min' and 'max' or neither")

    @wp.kernel
    def not_a_state(a: wp.array[float]):
        t = wp.tile_randi(shape=4, rng=3)

    _compile_error(not_a_state, [wp.zeros(1)], r"wp\.tile_randi\(\): 'rng' must be a uint32 generator state "
                                               r"\(wp\.rand_init\), got int32")


# -- gradients of max, min and products ----------------------------------------------------------------------
@wp.kernel
def extremes(a: wp.array2d[float], mx: wp.array[float], mn: wp.array[float], pr: wp.array[float],
             mx0: wp.array[float], mn1: wp.array[float], pr1: wp.array[float]):
    t = wp.tile_load(a, shape=(3, 4))
    wp.tile_store(mx, wp.tile_max(t))
    wp.tile_store(mn, wp.tile_reduce(wp.min, t))
    wp.tile_store(pr, wp.tile_reduce(wp.mul, t))
    wp.tile_store(mx0, wp.tile_max(t, axis=0))
    wp.tile_store(mn1, wp.tile_min(t, axis=1))
    wp.tile_store(pr1, wp.tile_reduce(wp.mul, t, axis=1))


def test_max_min_and_product_gradients():
    # ties: the first extreme in row-major order (tile_argmax's) takes the adjoint; a zero in a product
    A = np.array([[1.0, 5.0, 2.0, 5.0], [0.5, -3.0, 2.0, 1.0], [2.0, 0.0, 4.0, -3.0]], np.float32)
    a = wp.array(A, requires_grad=True)
    outs = [wp.zeros(n, requires_grad=True) for n in (1, 1, 1, 4, 3, 3)]
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(extremes, dim=1, inputs=[a, *outs], block_dim=1)
    for o, want in zip(outs, [[A.max()], [A.min()], [A.prod()], A.max(0), A.min(1), A.prod(1)]):
        np.testing.assert_allclose(o.numpy(), want, rtol=1e-6)
    scales = [1.0, 10.0, 100.0, 1000.0, 1e4, 1e5]
    for o, g in zip(outs, scales):
        o.grad = wp.full(o.shape, g)
    tape.backward()
    want = np.zeros_like(A)
    want[0, 1] += 1.0  # the first 5
    want[1, 1] += 10.0  # the first -3
    others = np.array([[np.prod(np.delete(A.ravel(), k)) for k in range(12)]]).reshape(3, 4)
    want += 100.0 * others
    for j, i in enumerate([2, 0, 2, 0]):  # each column's first maximum
        want[i, j] += 1000.0
    for i, j in enumerate([0, 1, 3]):
        want[i, j] += 1e4
    for i in range(3):
        for j in range(4):
            want[i, j] += 1e5 * np.prod(np.delete(A[i], j))
    np.testing.assert_allclose(a.grad.numpy(), want, rtol=1e-6)


# -- printing --------------------------------------------------------------------------------------------
@wp.kernel(enable_backward=False)
def print_tiles(x: wp.array[wp.int32], v: wp.array[wp.vec2]):
    wp.print(wp.tile_load(x, shape=(5,)))
    print(wp.tile_full(shape=(2, 3), value=-0.1234567, dtype=float))
    print(wp.tile_full(shape=(2, 2, 2), value=wp.float64(1.5), dtype=wp.float64))
    print("v:", wp.tile_load(v, shape=2), 7)


def test_tiles_print_with_warps_format(capfd):
    capfd.readouterr()
    x = wp.array([1, 2, 3, 4, -5], dtype=wp.int32)
    v = wp.array([[1.0, 2.0], [3.5, 4.0]], dtype=wp.vec2)
    wp.launch_tiled(print_tiles, dim=1, inputs=[x, v], block_dim=1)
    assert capfd.readouterr().out.split("\n") == [
        "[1 2 3 4 -5] = tile(shape=(5), storage=register)",
        "[[-0.123457 -0.123457 -0.123457]", " [-0.123457 -0.123457 -0.123457]] = tile(shape=(2,3), storage=register)",
        "[[[1.5 1.5]", "  [1.5 1.5]]", "", " [[1.5 1.5]", "  [1.5 1.5]]] = tile(shape=(2,2,2), storage=register)",
        "v: [1 2 3.5 4] = tile(shape=(2), storage=register) 7", ""]


# -- sorting ----------------------------------------------------------------------------------------------
def _sort_kernel(n, key_dtype, value_dtype):
    @wp.kernel(module="unique")
    def sort_pairs(k: wp.array[key_dtype], v: wp.array[value_dtype]):
        keys = wp.tile_load(k, shape=n)
        values = wp.tile_load(v, shape=n)
        wp.tile_sort(keys, values)
        wp.tile_store(k, keys)
        wp.tile_store(v, values)

    return sort_pairs


@pytest.mark.parametrize("n", [1, 2, 7, 64, 100])
def test_sort_float_keys_int_values(n):
    rng = np.random.default_rng(n)
    keys = rng.integers(-20, 20, size=n).astype(np.float32) / 4  # duplicates, negatives
    k, v = wp.array(keys), wp.array(np.arange(n, dtype=np.int32))
    wp.launch_tiled(_sort_kernel(n, float, int), dim=1, inputs=[k, v], block_dim=1)
    order = np.argsort(keys, kind="stable")  # equal keys keep their order here
    np.testing.assert_array_equal(k.numpy(), keys[order])
    np.testing.assert_array_equal(v.numpy(), order)


def test_sort_int64_keys_vector_values():
    rng = np.random.default_rng(5)
    keys = rng.integers(-2**40, 2**40, size=9, dtype=np.int64)
    values = rng.standard_normal((9, 3)).astype(np.float32)
    k, v = wp.array(keys), wp.array(values, dtype=wp.vec3)
    wp.launch_tiled(_sort_kernel(9, wp.int64, wp.vec3), dim=1, inputs=[k, v], block_dim=1)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(k.numpy(), keys[order])
    np.testing.assert_array_equal(v.numpy(), values[order])


@wp.kernel
def sort_2d(k: wp.array2d[int], v: wp.array2d[float]):
    keys = wp.tile_load(k, shape=(3, 5))
    values = wp.tile_load(v, shape=(3, 5))
    wp.tile_sort(keys, values)
    wp.tile_store(k, keys)
    wp.tile_store(v, values)


def test_sort_2d_tiles_as_their_row_major_sequence():
    keys = np.array([[9, 3, 7, 1, 5], [2, 8, 0, 6, 4], [14, 10, 12, 11, 13]], np.int32)
    values = keys.astype(np.float32) * 10
    k, v = wp.array(keys), wp.array(values)
    wp.launch_tiled(sort_2d, dim=1, inputs=[k, v], block_dim=1)
    np.testing.assert_array_equal(k.numpy(), np.arange(15).reshape(3, 5))
    np.testing.assert_array_equal(v.numpy(), np.arange(15).reshape(3, 5) * 10.0)


def test_sort_errors():
    @wp.kernel
    def double_keys(a: wp.array[float]):
        keys = wp.tile_zeros(shape=4, dtype=wp.float64)
        values = wp.tile_zeros(shape=4, dtype=int)
        wp.tile_sort(keys, values)

    _compile_error(double_keys, [wp.zeros(1)], r"First tile_sort\(\) argument must be a tile of type float32, int32, "
                                               r"uint32, int64, or uint64, got float64")

    @wp.kernel
    def mismatched(a: wp.array[float]):
        keys = wp.tile_zeros(shape=(2, 4), dtype=float)
        values = wp.tile_zeros(shape=(2, 3), dtype=int)
        wp.tile_sort(keys, values)

    _compile_error(mismatched, [wp.zeros(1)], r"tile_sort\(\) shapes do not match on dimension 1, got \(2, 4\) and "
                                              r"\(2, 3\)")

    @wp.kernel
    def not_a_variable(a: wp.array[float]):
        values = wp.tile_zeros(shape=4, dtype=int)
        keys = wp.tile_zeros(shape=(2, 2), dtype=float)
        wp.tile_sort(wp.tile_reshape(keys, 4), values)  # Warp's reshape is a view of keys (a temporary is accepted)

    _compile_error(not_a_variable, [wp.zeros(1)], r"wp\.tile_sort\(\): 'keys' is sorted in place: it must be a "
                                                  r"variable")


# -- wp.static() of tile locals ------------------------------------------------------------------------------
@wp.kernel
def static_lengths(a: wp.array2d[float], out: wp.array[int]):
    x = wp.tile_load(a, shape=(3, 5))
    out[0] = wp.static(len(x))
    out[1] = wp.static(x.shape[1])
    out[2] = wp.static(x.ndim * 10)


def test_static_sees_tile_shapes():
    out = wp.zeros(3, dtype=int)
    wp.launch_tiled(static_lengths, dim=1, inputs=[wp.zeros((3, 5)), out], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), [3, 5, 20])


def test_static_of_a_constant_local_is_its_value():
    # Warp's rule: wp.static() sees the locals holding a constant (checked under warp-lang 1.19)
    @wp.kernel
    def scalar_local(out: wp.array[int]):
        n = 3
        out[0] = wp.static(n)

    out = wp.zeros(1, dtype=int)
    wp.launch(scalar_local, dim=1, inputs=[out])
    assert out.numpy()[0] == 3


# -- tiles passed to @wp.func by reference ---------------------------------------------------------------------
@wp.func
def add_in_place(t: wp.tile[float, 2, 3], x: wp.tile[float, 2, 3]):
    t += x * 2.0


@wp.func
def set_corner(t: wp.tile[float, 2, 3], value: float):
    t[1, 2] = value


@wp.func
def product_into(a: wp.tile[float, 2, 2], b: wp.tile[float, 2, 3], out: wp.tile[float, 2, 3]):
    wp.tile_matmul(a, b, out)


@wp.func
def rebinds(t: wp.tile[float, 2, 3]) -> float:
    t = t * 100.0  # a new tile: the caller's is left alone
    t += wp.tile_ones(shape=(2, 3), dtype=float)
    return t[0, 0]


@wp.kernel
def by_reference(a: wp.array2d[float], x: wp.array2d[float], m: wp.array2d[float], out: wp.array2d[float],
                 first: wp.array[float]):
    t = wp.tile_load(a, shape=(2, 3))
    add_in_place(t, wp.tile_load(x, shape=(2, 3)))
    set_corner(t, 7.0)
    product_into(wp.tile_load(m, shape=(2, 2)), t, t)
    first[0] = rebinds(t)
    wp.tile_store(out, t)


def test_tiles_are_passed_by_reference():
    A = np.arange(6, dtype=np.float32).reshape(2, 3)
    X = np.ones((2, 3), np.float32) / 2
    M = np.array([[1.0, 2.0], [0.0, -1.0]], np.float32)
    a, x, m = wp.array(A, requires_grad=True), wp.array(X, requires_grad=True), wp.array(M)
    out, first = wp.zeros((2, 3), requires_grad=True), wp.zeros(1)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(by_reference, dim=1, inputs=[a, x, m, out, first], block_dim=1)
    t = A + 2 * X
    t[1, 2] = 7.0
    t = t + M @ t
    np.testing.assert_allclose(out.numpy(), t, rtol=1e-6)
    np.testing.assert_allclose(first.numpy(), [t[0, 0] * 100 + 1], rtol=1e-6)
    out.grad = wp.ones((2, 3))
    tape.backward()
    # out = (I + M) t1, t1 = (a + 2x) with element (1, 2) replaced: d out / d t1 = (I + M)^T 1
    g = (np.eye(2, dtype=np.float32) + M).T @ np.ones((2, 3), np.float32)
    g[1, 2] = 0.0
    np.testing.assert_allclose(a.grad.numpy(), g, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 2 * g, rtol=1e-6)


# -- tile_assign ----------------------------------------------------------------------------------------------
@wp.kernel
def assign_tiles(a: wp.array[float], k: int, out: wp.array[float], grid: wp.array2d[float]):
    dst = wp.tile_full(shape=6, value=-1.0, dtype=float)
    src = wp.tile_load(a, shape=3)
    wp.tile_assign(dst, src * src, offset=(k,))
    wp.tile_store(out, dst)
    g = wp.tile_zeros(shape=(3, 4), dtype=float)
    wp.tile_assign(g, wp.tile_reshape(wp.tile_arange(1, 4, dtype=int), shape=(1, 3)))  # as floats, at the origin
    wp.tile_assign(g, 2, 3, 9)
    wp.tile_store(grid, g)


def test_tile_assign_and_gradient():
    A = np.array([1.0, 2.0, 3.0], np.float32)
    a = wp.array(A, requires_grad=True)
    out, grid = wp.zeros(6, requires_grad=True), wp.zeros((3, 4))
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(assign_tiles, dim=1, inputs=[a, 2, out, grid], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), [-1, -1, 1, 4, 9, -1])
    want = np.zeros((3, 4), np.float32)
    want[0, :3] = [1, 2, 3]
    want[2, 3] = 9
    np.testing.assert_array_equal(grid.numpy(), want)
    out.grad = wp.array(np.arange(6, dtype=np.float32))
    tape.backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * A * np.arange(2, 5))


def test_tile_assign_errors():
    @wp.kernel
    def too_big(a: wp.array[float]):
        dst = wp.tile_zeros(shape=(2, 2), dtype=float)
        wp.tile_assign(dst, wp.tile_zeros(shape=(3, 2), dtype=float))

    _compile_error(too_big, [wp.zeros(1)], r"tile_assign\(\) source tile of shape \(3, 2\) does not fit within "
                                           r"destination tile of shape \(2, 2\)")

    @wp.kernel
    def rank(a: wp.array[float]):
        dst = wp.tile_zeros(shape=(2, 2), dtype=float)
        wp.tile_assign(dst, wp.tile_zeros(shape=2, dtype=float))

    _compile_error(rank, [wp.zeros(1)], r"tile_assign\(\) destination and source tiles must have the same rank, got 2 "
                                        r"and 1")

    @wp.kernel
    def outside(a: wp.array[float]):
        dst = wp.tile_zeros(shape=4, dtype=float)
        wp.tile_assign(dst, wp.tile_zeros(shape=2, dtype=float), offset=(3,))

    _compile_error(outside, [wp.zeros(1)], r"tile_assign\(\): a source of shape \(2,\) at offset 3 of dimension 0 lies "
                                           r"outside the destination's extent 4")


def test_tile_atomic_add_refuses_narrow_types():
    @wp.kernel
    def bytes_(src: wp.array[wp.int8], dst: wp.array[wp.int8]):
        wp.tile_atomic_add(dst, wp.tile_load(src, shape=4))

    _compile_error(bytes_, [wp.zeros(4, dtype=wp.int8), wp.zeros(4, dtype=wp.int8)],
                   r"tile_atomic_add\(\) only supports tiles with \[u\]int32, \[u\]int64, float16, bfloat16, float32, "
                   r"or float64 as the underlying scalar type, but got int8")

    @wp.kernel
    def bools(src: wp.array[wp.bool], dst: wp.array[wp.bool], idx: wp.array[int]):
        wp.tile_atomic_add_indexed(dst, wp.tile_load(idx, shape=4), wp.tile_load(src, shape=4))

    _compile_error(bools, [wp.zeros(4, dtype=wp.bool), wp.zeros(4, dtype=wp.bool), wp.zeros(4, dtype=int)],
                   r"tile_atomic_add_indexed\(\) only supports tiles with \[u\]int32, \[u\]int64, float16, bfloat16, "
                   r"float32, or float64 as the underlying scalar type, but got bool")


def test_matmul_refuses_complex_tiles():
    @wp.kernel
    def complex_product(a: wp.array2d[wp.vec2f], c: wp.array2d[wp.vec2f]):
        t = wp.tile_load(a, shape=(2, 2))
        wp.tile_store(c, wp.tile_matmul(t, t))

    _compile_error(complex_product, [wp.zeros((2, 2), dtype=wp.vec2f), wp.zeros((2, 2), dtype=wp.vec2f)],
                   r"tile_matmul\(\) does not support complex tiles \(vec2h, vec2f, vec2d\)\. Complex matrix "
                   r"multiplication is not implemented; use real float tiles \(float16, bfloat16, float32, or "
                   r"float64\)\.")


def _bf16_product(backward):
    @wp.kernel(module="unique", enable_backward=backward)
    def bf16_product(a: wp.array2d[wp.bfloat16], b: wp.array2d[float], c: wp.array2d[float]):
        out = wp.tile_zeros(shape=(2, 2), dtype=float)
        wp.tile_matmul(wp.tile_load(a, shape=(2, 2)), wp.tile_load(b, shape=(2, 2)), out)
        wp.tile_store(c, out)

    return bf16_product


def test_matmul_of_bfloat16_operands_needs_backward_off():
    a = wp.array(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), dtype=wp.bfloat16)
    b, c = wp.array(np.eye(2, dtype=np.float32) * 2), wp.zeros((2, 2))
    with pytest.raises(wp.CompileError, match=r"tile_matmul\(\) does not support bfloat16 'a' or 'b' tiles when the "
                                              r"backward pass is enabled\. Allowed accumulator dtypes are float16, "
                                              r"float32, and float64"):
        wp.launch_tiled(_bf16_product(True), dim=1, inputs=[a, b, c], block_dim=1)
    wp.launch_tiled(_bf16_product(False), dim=1, inputs=[a, b, c], block_dim=1)
    np.testing.assert_array_equal(c.numpy(), [[2.0, 4.0], [6.0, 8.0]])


def test_bfloat16_matmul_with_the_modules_backward_off():
    import importlib.util
    import os
    import sys
    import tempfile
    import textwrap

    source = textwrap.dedent('''
        import mlwarp as wp
        wp.set_module_options({"enable_backward": False})

        @wp.kernel
        def bf16_product(a: wp.array2d[wp.bfloat16], b: wp.array2d[float], c: wp.array2d[float]):
            out = wp.tile_zeros(shape=(2, 2), dtype=float)
            wp.tile_matmul(wp.tile_load(a, shape=(2, 2)), wp.tile_load(b, shape=(2, 2)), out)
            wp.tile_store(c, out)
    ''')
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bf16_module_off.py")
        with open(path, "w") as f:
            f.write(source)
        spec = importlib.util.spec_from_file_location("bf16_module_off", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["bf16_module_off"] = module
        try:
            spec.loader.exec_module(module)
            a = wp.array(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), dtype=wp.bfloat16)
            c = wp.zeros((2, 2))
            wp.launch_tiled(module.bf16_product, dim=1, inputs=[a, wp.array(np.eye(2, dtype=np.float32)), c],
                            block_dim=1)
        finally:
            del sys.modules["bf16_module_off"]
    np.testing.assert_array_equal(c.numpy(), [[1.0, 2.0], [3.0, 4.0]])
