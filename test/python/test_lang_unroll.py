"""warp-unroll-loops in the pipeline: range loops with compile-time bounds and at most
wp.config.max_unroll iterations are unrolled (also with a negative step), others stay loops; results
are the same either way."""

import numpy as np

import mlwarp as wp


@wp.kernel
def loops(x: wp.array(dtype=float), n: int, out: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    a = 0.0
    for k in range(4):  # unrolled
        a = a * 2.0 + x[k]
    b = 0.0
    for k in range(9, -1, -3):  # a constant negative step: 4 iterations, unrolled
        b = b + x[k] * float(k)
    c = 0.0
    for k in range(20):  # more than 16 iterations: stays a loop
        c = c + x[k % 10]
    d = 0.0
    for k in range(n):  # a runtime bound: stays a loop
        d = d + x[k]
    out[i, 0] = a
    out[i, 1] = b
    out[i, 2] = c
    out[i, 3] = d


def expected(x, n):
    f = np.float32
    a = f(0)
    for k in range(4):
        a = a * f(2) + x[k]
    b = f(0)
    for k in range(9, -1, -3):
        b = b + x[k] * f(k)
    c = f(0)
    for k in range(20):
        c = c + x[k % 10]
    d = f(0)
    for k in range(n):
        d = d + x[k]
    return [a, b, c, d]


def test_unrolled_and_kept_loops_compute_the_same():
    x = np.random.default_rng(5).standard_normal(10).astype(np.float32)
    out = wp.zeros((2, 4))
    wp.launch(loops, dim=2, inputs=[wp.array(x), 7, out])
    np.testing.assert_array_equal(out.numpy()[0], expected(x, 7))
    np.testing.assert_array_equal(out.numpy()[1], expected(x, 7))


def test_only_short_constant_loops_are_unrolled():
    before = loops.to_mlir("warp")
    after = loops.to_mlir("warp-opt")
    assert before.count("scf.for") == 4
    assert after.count("scf.for") == 2  # range(20) and range(n)


def test_max_unroll_follows_the_config():
    saved = wp.config.max_unroll
    try:
        wp.config.max_unroll = 0
        assert loops.to_mlir("warp-opt").count("scf.for") == 4
        wp.config.max_unroll = 32
        assert loops.to_mlir("warp-opt").count("scf.for") == 1  # only the runtime loop is left
    finally:
        wp.config.max_unroll = saved


def test_max_unroll_is_part_of_the_cache_key():
    device = wp.get_device("cpu")
    saved = wp.config.max_unroll
    try:
        key16 = loops.cache_key(device)
        wp.config.max_unroll = 4
        assert loops.cache_key(device) != key16
    finally:
        wp.config.max_unroll = saved
    assert loops.cache_key(device) == key16
