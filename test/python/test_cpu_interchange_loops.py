"""Kernels with their own loop of thread-invariant bounds (warp-cpu-interchange-loops runs the loop's body for
a block of threads at a time): each against a numpy implementation of the same per-thread computation, with
launch sizes that leave a partial block, 2-d launches, divergent branches and array accesses inside the loop,
atomics, and launches large enough to run on several threads."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp


def interchanged(kernel) -> bool:
    """The pass rewrote every thread loop of the kernel (it marks the loops it leaves alone)."""
    return "warp.thread_loop" not in kernel.to_mlir("lowered")


@wp.kernel(enable_backward=False)
def relax(x: wp.array(dtype=float), a: float, n: int, y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    w = v * 2.0
    for _ in range(n):
        v = v + a * wp.sin(v)
    y[i] = v + w


@pytest.mark.parametrize("threads", [1, 255, 256, 257, 1000, 70000])  # 70000: several runtime threads
def test_a_carried_scalar_with_values_kept_across_the_loop(threads):
    x0 = np.linspace(-3.0, 3.0, threads).astype(np.float32)
    y = wp.zeros(threads, dtype=float)
    wp.launch(relax, threads, inputs=[wp.array(x0), 0.05, 40, y])
    v = x0.astype(np.float64)
    for _ in range(40):
        v = v + 0.05 * np.sin(v)
    np.testing.assert_allclose(y.numpy(), v + 2.0 * x0, rtol=2e-5, atol=2e-5)
    assert interchanged(relax)


@wp.kernel(enable_backward=False)
def bounce(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), substeps: int, dt: float):
    i = wp.tid()
    p = pos[i]
    v = vel[i]
    for _ in range(substeps):
        v = v + wp.vec3(0.0, -9.8, 0.0) * dt
        p = p + v * dt
        if p[1] < 0.0:  # divergent across the block's threads
            p = wp.vec3(p[0], -p[1], p[2])
            v = wp.vec3(v[0], -0.5 * v[1], v[2])
    pos[i] = p
    vel[i] = v


def test_vec3_state_and_a_divergent_branch_in_the_loop():
    rng = np.random.default_rng(3)
    p0 = rng.uniform(0.0, 2.0, (1500, 3)).astype(np.float32)
    v0 = rng.uniform(-1.0, 1.0, (1500, 3)).astype(np.float32)
    pos, vel = wp.array(p0, dtype=wp.vec3), wp.array(v0, dtype=wp.vec3)
    wp.launch(bounce, 1500, inputs=[pos, vel, 100, 0.01])
    # float32 numpy in the kernel's order of operations (a float64 reference would flip the branch where
    # p[1] passes within rounding of 0)
    p, v = p0.copy(), v0.copy()
    dt = np.float32(0.01)
    gravity_dt = np.array([0.0, -9.8, 0.0], dtype=np.float32) * dt
    for _ in range(100):
        v = v + gravity_dt
        p = p + v * dt
        below = p[:, 1] < 0.0
        p[below, 1] = -p[below, 1]
        v[below, 1] = np.float32(-0.5) * v[below, 1]
    np.testing.assert_allclose(pos.numpy(), p, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(vel.numpy(), v, rtol=1e-6, atol=1e-6)
    assert interchanged(bounce)


@wp.kernel(enable_backward=False)
def convolve(x: wp.array(dtype=float), taps: wp.array(dtype=float), n: int, y: wp.array2d(dtype=float)):
    i = wp.tid()
    acc = float(0.0)
    for k in range(n):
        acc += taps[k] * x[(i + k) % x.shape[0]]
        y[i, k] = acc  # a store per iteration, at the thread's row
    wp.atomic_add(y, 0, n, acc)  # an atomic into one element from every thread


def test_array_reads_and_stores_inside_the_loop_and_an_atomic_after_it():
    rng = np.random.default_rng(4)
    x0 = rng.standard_normal(600).astype(np.float32)
    t0 = rng.standard_normal(9).astype(np.float32)
    y = wp.zeros((600, 10), dtype=float)
    wp.launch(convolve, 600, inputs=[wp.array(x0), wp.array(t0), 9, y])
    want = np.zeros((600, 10))
    for i in range(600):
        acc = 0.0
        for k in range(9):
            acc += float(t0[k]) * float(x0[(i + k) % 600])
            want[i, k] = acc
    total = want[:, 8].sum()
    got = y.numpy()
    np.testing.assert_allclose(got[:, :9], want[:, :9], atol=1e-4)
    np.testing.assert_allclose(got[1:, 9], 0.0)
    np.testing.assert_allclose(got[0, 9], total, rtol=1e-4, atol=1e-3)
    assert interchanged(convolve)


@wp.kernel(enable_backward=False)
def grid_iterate(z0: wp.array2d(dtype=wp.vec2), n: int, escaped: wp.array2d(dtype=int)):
    i, j = wp.tid()
    z = z0[i, j]
    c = z
    count = int(0)
    for _ in range(n):
        z = wp.vec2(z[0] * z[0] - z[1] * z[1], 2.0 * z[0] * z[1]) + c
        if wp.length_sq(z) > 4.0:
            z = wp.vec2(2.0, 0.0)  # pinned: the count stops growing
        else:
            count += 1
    escaped[i, j] = count


def test_a_2d_launch_row_by_row():
    xs, ys = np.meshgrid(np.linspace(-2.0, 0.5, 300), np.linspace(-1.1, 1.1, 7), indexing="ij")
    z0 = np.stack([xs, ys], axis=-1).astype(np.float32)
    out = wp.zeros((300, 7), dtype=int)
    wp.launch(grid_iterate, (300, 7), inputs=[wp.array(z0, dtype=wp.vec2), 30, out])
    want = np.zeros((300, 7), dtype=np.int64)
    for a in range(300):
        for b in range(7):
            z = c = complex(float(z0[a, b, 0]), float(z0[a, b, 1]))
            for _ in range(30):
                z = z * z + c
                if abs(z) ** 2 > 4.0:
                    z = 2.0
                else:
                    want[a, b] += 1
    # float32 against complex128: points on the set's boundary may escape one step apart
    assert np.mean(out.numpy() == want) > 0.99
    assert out.numpy()[150, 3] == want[150, 3]
    assert interchanged(grid_iterate)


@wp.kernel(enable_backward=False)
def nested_uniform(x: wp.array(dtype=float), n: int, m: int, y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    for _ in range(n):
        u = v
        for _ in range(m):
            u = u * 0.99 + wp.cos(u) * 0.01
        v = v + u * 0.001
    y[i] = v


def test_a_loop_in_a_loop():
    x0 = np.linspace(-1.0, 1.0, 777).astype(np.float32)
    y = wp.zeros(777, dtype=float)
    wp.launch(nested_uniform, 777, inputs=[wp.array(x0), 20, 15, y])
    v = x0.astype(np.float64)
    for _ in range(20):
        u = v.copy()
        for _ in range(15):
            u = u * 0.99 + np.cos(u) * 0.01
        v = v + u * 0.001
    np.testing.assert_allclose(y.numpy(), v, rtol=1e-5, atol=1e-6)
    assert interchanged(nested_uniform)


@wp.kernel
def damped(x: wp.array(dtype=wp.float64), n: int, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    v = x[i]
    for _ in range(n):
        v = v + wp.float64(1.0e-3) * wp.sin(v)
    y[i] = v


@pytest.mark.parametrize("n", [40, 3000])  # 3000 f64 states: 24 KB a thread, blocks of 8 threads
def test_the_adjoint_of_a_loop_runs_in_blocks_with_its_tape(n):
    # closed form: dv_n/dv_0 = prod_k (1 + 1e-3 cos v_k)
    x0 = np.linspace(-3.0, 3.0, 701)
    x = wp.array(x0, dtype=wp.float64, requires_grad=True)
    y = wp.zeros(701, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(damped, 701, inputs=[x, n, y])
    tape.backward(grads={y: wp.ones(701, dtype=wp.float64)})
    v, d = x0.copy(), np.ones(701)
    for _ in range(n):
        d *= 1.0 + 1.0e-3 * np.cos(v)
        v = v + 1.0e-3 * np.sin(v)
    np.testing.assert_allclose(y.numpy(), v, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), d, rtol=1e-10)
    assert "warp.thread_loop" not in damped.to_mlir("lowered").split("func.func @damped_adj_cpu")[1]


@wp.kernel(enable_backward=False)
def two_loops(x: wp.array(dtype=wp.vec3), n: int, y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    v = x[i]
    for _ in range(n):  # the second loop starts from the first one's result
        v = v * 0.9 + wp.vec3(0.1, 0.0, 0.0)
    w = wp.length(v)
    for _ in range(n):
        v = v + wp.vec3(0.0, w, 0.0) * 0.01
    y[i] = v


def test_consecutive_loops_the_second_starting_from_the_first():
    rng = np.random.default_rng(5)
    x0 = rng.uniform(-1.0, 1.0, (300, 3)).astype(np.float32)
    y = wp.zeros(300, dtype=wp.vec3)
    wp.launch(two_loops, 300, inputs=[wp.array(x0, dtype=wp.vec3), 12, y])
    v = x0.astype(np.float64)
    for _ in range(12):
        v = v * 0.9 + np.array([0.1, 0.0, 0.0])
    w = np.linalg.norm(v, axis=1)
    for _ in range(12):
        v = v + np.stack([np.zeros(300), w, np.zeros(300)], axis=1) * 0.01
    np.testing.assert_allclose(y.numpy(), v, rtol=1e-5, atol=1e-6)
    assert interchanged(two_loops)


@wp.kernel(enable_backward=False)
def springs(x: wp.array(dtype=wp.vec3), a: wp.array(dtype=int), b: wp.array(dtype=int), rest: wp.array(dtype=float),
            f: wp.array(dtype=wp.vec3)):
    s = wp.tid()
    i = a[s]
    j = b[s]
    d = x[j] - x[i]
    length = wp.length(d)
    fs = (length - rest[s]) / length * d
    wp.atomic_add(f, i, fs)
    wp.atomic_sub(f, j, fs)


@pytest.mark.parametrize("threads", [1, 0])  # one thread (the serial copy) and the automatic count
def test_a_scatter_runs_after_the_gathers_and_arithmetic_of_its_block(threads, monkeypatch):
    monkeypatch.setattr(wp.config, "cpu_threads", threads)
    rng = np.random.default_rng(6)
    n, m = 500, 9000
    x0 = rng.uniform(0.0, 1.0, (n, 3)).astype(np.float32)
    a0 = rng.integers(0, n, m)
    b0 = (a0 + rng.integers(1, n, m)) % n
    r0 = rng.uniform(0.1, 0.5, m).astype(np.float32)
    f = wp.zeros(n, dtype=wp.vec3)
    wp.launch(springs, m, inputs=[wp.array(x0, dtype=wp.vec3), wp.array(a0, dtype=int), wp.array(b0, dtype=int),
                                  wp.array(r0), f])
    x64 = x0.astype(np.float64)
    d = x64[b0] - x64[a0]
    length = np.linalg.norm(d, axis=1)
    fs = ((length - r0) / length)[:, None] * d
    want = np.zeros((n, 3))
    np.add.at(want, a0, fs)
    np.add.at(want, b0, -fs)
    np.testing.assert_allclose(f.numpy(), want, rtol=1e-4, atol=1e-4)
    assert interchanged(springs)


@wp.kernel(enable_backward=False)
def reads_what_it_scatters(f: wp.array(dtype=float), a: wp.array(dtype=int)):
    s = wp.tid()
    v = f[s] * 0.5
    wp.atomic_add(f, a[s], v)


def test_a_scatter_into_an_array_read_before_it_is_left_alone():
    f = wp.array(np.arange(8, dtype=np.float32))
    wp.launch(reads_what_it_scatters, 4, inputs=[f, wp.array([7, 6, 5, 4], dtype=int)], )
    # threads 0..3 read f[0..3] (never written) and add half of it into f[7..4]
    np.testing.assert_array_equal(f.numpy(), [0, 1, 2, 3, 4 + 1.5, 5 + 1.0, 6 + 0.5, 7 + 0.0])
    assert not interchanged(reads_what_it_scatters)


@wp.kernel(enable_backward=False)
def row_sums(x: wp.array(dtype=float), n: int, out: wp.array(dtype=float)):
    i = wp.tid()
    s = float(0.0)
    for j in range(n):
        s += x[i * n + j]
    out[i] = s


@pytest.mark.parametrize("rows", [1, 15, 16, 17, 300, 5000])  # 5000: several runtime threads
def test_each_thread_summing_its_own_row_runs_in_blocks_of_sixteen(rows):
    """Each thread walks its own row (addresses a row apart from thread to thread): blocks of 16 threads, each
    thread's sum still in its own order, so exactly numpy's sequential cumsum of the row."""
    n = 1000
    x0 = np.random.default_rng(rows).standard_normal(rows * n).astype(np.float32)
    out = wp.zeros(rows, dtype=float)
    wp.launch(row_sums, rows, inputs=[wp.array(x0), n, out])
    want = np.cumsum(x0.reshape(rows, n), axis=1, dtype=np.float32)[:, -1]
    np.testing.assert_array_equal(out.numpy(), want)
    lowered = row_sums.to_mlir("lowered")
    assert interchanged(row_sums) and "arith.constant 16 : i64" in lowered
