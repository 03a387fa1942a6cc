"""wp.tile_reduce with a @wp.func operator, in Warp's order: with one lane the row-major fold f(...f(t0, t1)...),
with Warp's CPU lanes each lane's fold of its elements (l, l + block_dim, ...) then the lanes' partials in lane
order; along an axis of a 2-d tile the first row (column) folded with each next. References are numpy loops over
the same order (the operator below is not associative, so another order gives other values)."""

import numpy as np
import pytest

import mlwarp as wp


@wp.func
def drift(a: float, b: float):
    return a - 0.5 * b


@wp.func
def product(a: float, b: float):
    return a * b


@wp.kernel
def reductions(values: wp.array2d(dtype=float), whole: wp.array(dtype=float), rows: wp.array(dtype=float),
               cols: wp.array(dtype=float)):
    t = wp.tile_load(values, shape=(4, 8))
    wp.tile_store(whole, wp.tile_reduce(drift, t))
    wp.tile_store(rows, wp.tile_reduce(drift, t, axis=1))
    wp.tile_store(cols, wp.tile_reduce(drift, t, axis=0))


def _fold(xs):
    acc = np.float32(xs[0])
    for x in xs[1:]:
        acc = np.float32(acc - np.float32(0.5) * np.float32(x))
    return acc


VALUES = np.random.default_rng(3).uniform(-1.0, 1.0, (4, 8)).astype(np.float32)


def _run(block_dim):
    whole, rows, cols = wp.zeros(1, dtype=float), wp.zeros(4, dtype=float), wp.zeros(8, dtype=float)
    wp.launch_tiled(reductions, dim=[1], inputs=[wp.array(VALUES), whole, rows, cols], block_dim=block_dim)
    return whole.numpy()[0], rows.numpy(), cols.numpy()


def test_one_lane_folds_in_row_major_order():
    whole, rows, cols = _run(1)
    assert whole == _fold(VALUES.ravel())
    np.testing.assert_array_equal(rows, [_fold(r) for r in VALUES])
    np.testing.assert_array_equal(cols, [_fold(c) for c in VALUES.T])


@pytest.mark.parametrize("lanes", [4, 7, 64])
def test_lanes_fold_their_elements_then_the_partials_in_lane_order(lanes):
    wp.config.enable_cpu_blocks = True
    try:
        whole, rows, cols = _run(lanes)
    finally:
        wp.config.enable_cpu_blocks = False
    flat = VALUES.ravel()
    partials = [_fold(flat[l::lanes]) for l in range(min(lanes, flat.size))]
    assert whole == _fold(partials)
    np.testing.assert_array_equal(rows, [_fold(r) for r in VALUES])
    np.testing.assert_array_equal(cols, [_fold(c) for c in VALUES.T])


@wp.kernel
def product_of_all(values: wp.array(dtype=float), out: wp.array(dtype=float)):
    wp.tile_store(out, wp.tile_reduce(product, wp.tile_load(values, shape=6)))


def test_gradient_of_a_product_fold():
    v = np.random.default_rng(4).uniform(0.5, 1.5, 6).astype(np.float32)
    x, out = wp.array(v, requires_grad=True), wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(product_of_all, dim=[1], inputs=[x, out], block_dim=1)
    np.testing.assert_allclose(out.numpy()[0], np.prod(v.astype(np.float64)), rtol=1e-6)
    tape.backward(grads={out: wp.ones(1, dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), np.prod(v.astype(np.float64)) / v, rtol=1e-5)


def test_errors():
    @wp.func
    def to_int(a: float, b: float):
        return int(a + b)

    @wp.kernel
    def wrong_type(values: wp.array(dtype=float), out: wp.array(dtype=float)):
        wp.tile_store(out, wp.tile_reduce(to_int, wp.tile_load(values, shape=4)))

    @wp.kernel
    def three_d(values: wp.array3d(dtype=float), out: wp.array2d(dtype=float)):
        wp.tile_store(out, wp.tile_reduce(drift, wp.tile_load(values, shape=(2, 2, 2)), axis=2))

    @wp.kernel
    def not_an_operator(values: wp.array(dtype=float), out: wp.array(dtype=float)):
        wp.tile_store(out, wp.tile_reduce(wp.sin, wp.tile_load(values, shape=4)))

    out = wp.zeros(4, dtype=float)
    # Warp's message
    with pytest.raises(wp.errors.CompileTypeError, match=r"tile_reduce\(\) operator to_int must return the tile "
                                                         r"element type float32, got int32"):
        wp.launch_tiled(wrong_type, dim=[1], inputs=[wp.zeros(4, dtype=float), out], block_dim=1)
    with pytest.raises(wp.errors.CompileTypeError, match=r"wp\.tile_reduce\(\) with a @wp\.func along an axis takes "
                                                         r"a 1-d or 2-d tile here"):
        wp.launch_tiled(three_d, dim=[1], inputs=[wp.zeros((2, 2, 2), dtype=float), wp.zeros((2, 2), dtype=float)],
                        block_dim=1)
    with pytest.raises(wp.errors.CompileError, match=r"wp\.tile_reduce\(\): the operator must be a @wp\.func or one "
                                                     r"of wp\.add, wp\.mul, wp\.max, wp\.min, got 'sin'"):
        wp.launch_tiled(not_an_operator, dim=[1], inputs=[wp.zeros(4, dtype=float), out], block_dim=1)
