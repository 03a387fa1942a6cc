"""The spine issue's three "done when" kernels: saxpy, a 2-D 5-point stencil and a branchy loop kernel
must match numpy exactly (same float32 operations in the same order)."""

import numpy as np

import mlwarp as wp


@wp.kernel
def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


def test_saxpy_matches_numpy_exactly():
    rng = np.random.default_rng(10)
    n = 1_000_003  # not a multiple of the vector width or of the thread count
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    a = np.float32(1.7)
    wy = wp.array(y)
    wp.launch(saxpy, dim=n, inputs=[wp.array(x), wy, float(a)])
    np.testing.assert_array_equal(wy.numpy(), a * x + y)  # no fused multiply-add: numpy rounds twice


@wp.kernel
def stencil(u: wp.array(dtype=float, ndim=2), out: wp.array(dtype=float, ndim=2), alpha: float):
    i, j = wp.tid()
    ni = u.shape[0]
    nj = u.shape[1]
    if i == 0 or j == 0 or i == ni - 1 or j == nj - 1:
        out[i, j] = u[i, j]  # the boundary is kept
    else:
        lap = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
        out[i, j] = u[i, j] + alpha * lap


def numpy_stencil(u, alpha):
    out = u.copy()
    c = u[1:-1, 1:-1]
    lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - np.float32(4.0) * c
    out[1:-1, 1:-1] = c + np.float32(alpha) * lap
    return out


def test_5_point_stencil_matches_numpy_exactly():
    rng = np.random.default_rng(11)
    u = rng.standard_normal((131, 257)).astype(np.float32)
    a, b = wp.array(u), wp.zeros(u.shape)
    expect = u
    for _ in range(5):  # a few steps, swapping buffers
        wp.launch(stencil, dim=u.shape, inputs=[a, b, 0.2])
        expect = numpy_stencil(expect, 0.2)
        a, b = b, a
    np.testing.assert_array_equal(a.numpy(), expect)


@wp.kernel
def branchy(x: wp.array(dtype=float), n: int, out: wp.array(dtype=float), steps: wp.array(dtype=int)):
    i = wp.tid()
    v = x[i]
    acc = 0.0
    k = 0
    for it in range(n):
        if v > 1.0:
            v = v * 0.5
        elif v < -1.0:
            v = -v - 0.25
            continue
        else:
            v = v * v + 0.3
        if v > 0.9 and v < 0.95:
            break
        acc = acc + v
        k += 1
    out[i] = acc
    steps[i] = k


def numpy_branchy(x, n):
    """The same loop, vectorised over the threads with numpy float32 operations and masks."""
    v = x.copy()
    acc = np.zeros_like(x)
    k = np.zeros(x.shape, np.int32)
    live = np.ones(x.shape, bool)
    f = np.float32
    for _ in range(n):
        big, small = live & (v > f(1.0)), live & (v < f(-1.0))
        mid = live & ~big & ~small
        v = np.where(big, v * f(0.5), v)
        v = np.where(small, -v - f(0.25), v)
        v = np.where(mid, v * v + f(0.3), v)
        cont = ~small
        stop = live & cont & (v > f(0.9)) & (v < f(0.95))
        add = live & cont & ~stop
        acc = np.where(add, acc + v, acc)
        k = k + add
        live = live & ~stop
    return acc, k


def test_branchy_loop_kernel_matches_numpy_exactly():
    rng = np.random.default_rng(12)
    x = rng.uniform(-4, 4, 10_000).astype(np.float32)
    out, steps = wp.zeros(x.size), wp.zeros(x.size, dtype=int)
    wp.launch(branchy, dim=x.size, inputs=[wp.array(x), 40, out, steps])
    acc, k = numpy_branchy(x, 40)
    np.testing.assert_array_equal(steps.numpy(), k)
    np.testing.assert_array_equal(out.numpy(), acc)
    assert k.min() < k.max() == 40 and (k < 40).sum() > 1000  # both exits (break and the bound) were taken
