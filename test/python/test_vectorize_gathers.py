"""Gather loops run 8 threads a step, each thread's vecN loaded whole and transposed (warp-cpu-vectorize-gathers):
the gather stretch of a scattering kernel (warp-cpu-interchange-loops). Each case is compared with numpy doing the
same float32 operations in the same order and adding in thread order (launches on one thread): the same bits,
whatever the launch size (the vector loop's remainder), for vec2, vec3, vec4, quat and scalar gathers, negative
indices (Warp's wrap) included."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.config import config


@wp.kernel
def springs(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), a: wp.array(dtype=wp.int32),
            b: wp.array(dtype=wp.int32), rest: wp.array(dtype=float), ke: float, kd: float,
            f: wp.array(dtype=wp.vec3)):
    s = wp.tid()
    i = a[s]
    j = b[s]
    d = x[j] - x[i]
    length = wp.length(d)
    direction = d / length
    dv = v[j] - v[i]
    fs = (ke * (length - rest[s]) + kd * wp.dot(dv, direction)) * direction
    wp.atomic_add(f, i, fs)
    wp.atomic_sub(f, j, fs)


@wp.kernel(enable_backward=False)
def springs_forward_only(x: wp.array(dtype=wp.vec3), a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.int32),
                         f: wp.array(dtype=wp.vec3)):
    s = wp.tid()
    d = x[b[s]] - x[a[s]]
    wp.atomic_add(f, a[s], d * wp.length(d))


@wp.kernel
def mixed_gathers(p2: wp.array(dtype=wp.vec2), p4: wp.array(dtype=wp.vec4), q: wp.array(dtype=wp.quat),
                  w: wp.array(dtype=float), idx: wp.array(dtype=int), out: wp.array(dtype=float)):
    t = wp.tid()
    k = idx[t]
    u = p2[k]
    r = p4[k]
    rot = q[k]
    value = u[0] * r[3] - u[1] * r[1] + rot[2] * w[k] + rot[3] / (r[0] + 2.0)
    wp.atomic_add(out, k, value)


@wp.kernel
def cloth_springs(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), pairs: wp.array(dtype=int),
                  rest: wp.array(dtype=float), f: wp.array(dtype=wp.vec3)):
    # (Warp's benchmark_cloth eval_springs: both ends of spring t at pairs[2 t] and pairs[2 t + 1])
    tid = wp.tid()
    i = pairs[tid * 2 + 0]
    j = pairs[tid * 2 + 1]
    xij = x[i] - x[j]
    vij = v[i] - v[j]
    l = wp.length(xij)  # noqa: E741
    l_inv = 1.0 / l
    dir = xij * l_inv
    fs = dir * (100.0 * (l - rest[tid * 2 + 1]) + 0.5 * wp.dot(dir, vij))  # (every other float: a gather)
    wp.atomic_sub(f, i, fs)
    wp.atomic_add(f, j, fs)


def _springs_numpy(x, v, a, b, rest, ke, kd, f0):
    """The kernel's float32 operations in its order, summed in thread order."""
    f = f0.copy()
    ke, kd = np.float32(ke), np.float32(kd)
    for s in range(len(a)):
        i, j = a[s], b[s]
        d = x[j] - x[i]
        length = np.sqrt((d[0] * d[0] + d[1] * d[1]) + d[2] * d[2])
        direction = d / length
        dv = v[j] - v[i]
        dot = (dv[0] * direction[0] + dv[1] * direction[1]) + dv[2] * direction[2]
        fs = (ke * (length - rest[s]) + kd * dot) * direction
        f[i] += fs
        f[j] -= fs
    return f


@pytest.mark.parametrize("count", [1, 7, 8, 9, 17, 257, 1000])
def test_springs_give_the_bits_of_thread_order(one_thread, count):
    rng = np.random.default_rng(count)
    n = 64
    x = rng.normal(size=(n, 3)).astype(np.float32)
    v = rng.normal(size=(n, 3)).astype(np.float32)
    a = rng.integers(0, n, count).astype(np.int32)
    b = ((a + 1 + rng.integers(0, n - 1, count)) % n).astype(np.int32)
    a[::5] -= n  # negative indices: Warp's wrap, x[-1] is the last element
    rest = rng.random(count).astype(np.float32)
    f = wp.zeros(n, dtype=wp.vec3)
    wp.launch(springs, count, inputs=[wp.array(x, dtype=wp.vec3), wp.array(v, dtype=wp.vec3),
                                      wp.array(a, dtype=wp.int32), wp.array(b, dtype=wp.int32),
                                      wp.array(rest, dtype=float), 100.0, 0.5, f])
    expected = _springs_numpy(x, v, a % n, b, rest, 100.0, 0.5, np.zeros((n, 3), np.float32))
    np.testing.assert_array_equal(f.numpy(), expected)


@pytest.mark.parametrize("count", [3, 16, 50, 1001])
def test_index_pairs_two_apart(one_thread, count):
    rng = np.random.default_rng(count + 7)
    n = 80
    x = rng.normal(size=(n, 3)).astype(np.float32)
    v = rng.normal(size=(n, 3)).astype(np.float32)
    pairs = rng.integers(0, n, (count, 2))
    pairs[:, 1] = (pairs[:, 0] + 1 + rng.integers(0, n - 1, count)) % n
    rest = rng.random(2 * count).astype(np.float32)
    f = wp.zeros(n, dtype=wp.vec3)
    wp.launch(cloth_springs, count, inputs=[wp.array(x, dtype=wp.vec3), wp.array(v, dtype=wp.vec3),
                                            wp.array(pairs.reshape(-1), dtype=int), wp.array(rest, dtype=float), f])
    expected = np.zeros((n, 3), np.float32)
    for t in range(count):
        i, j = pairs[t]
        xij, vij = x[i] - x[j], v[i] - v[j]
        length = np.sqrt((xij[0] * xij[0] + xij[1] * xij[1]) + xij[2] * xij[2])
        direction = xij * (np.float32(1.0) / length)
        dot = (direction[0] * vij[0] + direction[1] * vij[1]) + direction[2] * vij[2]
        fs = direction * (np.float32(100.0) * (length - rest[2 * t + 1]) + np.float32(0.5) * dot)
        expected[i] -= fs
        expected[j] += fs
    np.testing.assert_array_equal(f.numpy(), expected)


def test_springs_on_two_threads_within_rounding():
    rng = np.random.default_rng(1)
    n, count = 500, 20_000
    x = rng.normal(size=(n, 3)).astype(np.float32)
    v = rng.normal(size=(n, 3)).astype(np.float32)
    a = rng.integers(0, n, count).astype(np.int32)
    b = ((a + 1 + rng.integers(0, n - 1, count)) % n).astype(np.int32)
    rest = rng.random(count).astype(np.float32)
    saved = config.cpu_threads
    config.cpu_threads = 2
    try:
        f = wp.zeros(n, dtype=wp.vec3)
        wp.launch(springs, count, inputs=[wp.array(x, dtype=wp.vec3), wp.array(v, dtype=wp.vec3),
                                          wp.array(a, dtype=wp.int32), wp.array(b, dtype=wp.int32),
                                          wp.array(rest, dtype=float), 100.0, 0.5, f])
    finally:
        config.cpu_threads = saved
    expected = _springs_numpy(x, v, a, b, rest, 100.0, 0.5, np.zeros((n, 3), np.float32))
    np.testing.assert_allclose(f.numpy(), expected, rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("count", [5, 16, 33, 1003])
def test_vec2_vec4_quat_and_scalar_gathers(one_thread, count):
    rng = np.random.default_rng(count + 1)
    n = 40
    p2 = rng.normal(size=(n, 2)).astype(np.float32)
    p4 = rng.normal(size=(n, 4)).astype(np.float32)
    q = rng.normal(size=(n, 4)).astype(np.float32)
    w = rng.normal(size=n).astype(np.float32)
    idx = rng.integers(0, n, count)
    out = wp.zeros(n, dtype=float)
    wp.launch(mixed_gathers, count, inputs=[wp.array(p2, dtype=wp.vec2), wp.array(p4, dtype=wp.vec4),
                                            wp.array(q, dtype=wp.quat), wp.array(w, dtype=float),
                                            wp.array(idx, dtype=int), out])
    expected = np.zeros(n, np.float32)
    for k in idx:
        u, r, rot = p2[k], p4[k], q[k]
        expected[k] += (u[0] * r[3] - u[1] * r[1] + rot[2] * w[k]) + rot[3] / (r[0] + np.float32(2.0))
    np.testing.assert_array_equal(out.numpy(), expected)


def test_the_gather_loop_is_vectorised_with_transposed_loads():
    lowered = springs_forward_only.to_mlir("lowered")
    assert "warp.cpu_keep_vectors" in lowered
    assert "llvm.intr.masked.load" in lowered and "vector<8xf32>" in lowered
