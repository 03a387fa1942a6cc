"""wp.noise / wp.pnoise / wp.curlnoise (python/mlwarp/library/perlin.py) against a float32 numpy transcription of Warp's
Perlin noise (its corner hash, PCG gradients and quintic interpolation), the periodicity of pnoise, the zero
at lattice points, the divergence-free curl, and the derivative of noise against central differences."""

import numpy as np

import mlwarp as wp

F = np.float32


def _pcg(state):
    """Warp's PCG step, wrapping in uint32."""
    with np.errstate(over="ignore"):
        return _pcg_wrapping(state)


def _pcg_wrapping(state):
    b = (state * np.uint32(747796405) + np.uint32(2891336453)).astype(np.uint32)
    c = (((b >> ((b >> np.uint32(28)) + np.uint32(4))) ^ b) * np.uint32(277803737)).astype(np.uint32)
    return (c >> np.uint32(22)) ^ c


def _randf(state):
    s = _pcg(state)
    return s, (s >> np.uint32(8)).astype(F) * F(1.0 / 16777216.0)


def _smoother(t):
    return t * t * t * (t * (t * F(6.0) - F(15.0)) + F(10.0))


def _np_noise2(state, x, y):
    """Warp's 2-D Perlin noise, elementwise over float32 arrays x, y."""
    fx, fy = np.floor(x), np.floor(y)
    dx, dy = x - fx, y - fy
    x0, y0 = fx.astype(np.int32), fy.astype(np.int32)

    def corner(ix, iy, ddx, ddy):
        with np.errstate(over="ignore"):
            s = (ix.astype(np.uint32) * np.uint32(73856093)) ^ (iy.astype(np.uint32) * np.uint32(19349663)
                                                                  + np.uint32(state))
        s, gx = _randf(s)
        s, gy = _randf(s)
        gx, gy = gx - F(0.5), gy - F(0.5)
        n = np.sqrt(gx * gx + gy * gy)
        return ddx * (gx / n) + ddy * (gy / n)

    with np.errstate(over="ignore"):
        v00 = corner(x0, y0, dx, dy)
        v10 = corner(x0 + 1, y0, dx - F(1.0), dy)
        v01 = corner(x0, y0 + 1, dx, dy - F(1.0))
        v11 = corner(x0 + 1, y0 + 1, dx - F(1.0), dy - F(1.0))
    sx, sy = _smoother(dx), _smoother(dy)
    a0 = (v10 - v00) * sx + v00
    a1 = (v11 - v01) * sx + v01
    return (a1 - a0) * sy + a0


@wp.kernel
def _sample(seed: int, p: wp.array(dtype=wp.vec2), h: float, out: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    st = wp.rand_init(seed)
    q = p[i]
    out[i, 0] = wp.noise(st, q)
    out[i, 1] = wp.pnoise(st, q, 4, 3)
    out[i, 2] = wp.pnoise(st, q + wp.vec2(8.0, 6.0), 4, 3)
    out[i, 3] = wp.noise(st, q[0])
    out[i, 4] = wp.noise(st, wp.vec3(q[0], q[1], 0.25))
    out[i, 5] = wp.noise(st, wp.vec4(q[0], q[1], 0.25, -0.5))
    c = wp.curlnoise(st, q, wp.uint32(2), 2.0, 0.5)
    out[i, 6] = c[0]
    out[i, 7] = c[1]
    # the divergence of the curl by central differences
    cx = wp.curlnoise(st, q + wp.vec2(h, 0.0), wp.uint32(2), 2.0, 0.5) - wp.curlnoise(st, q - wp.vec2(h, 0.0), wp.uint32(2), 2.0, 0.5)
    cy = wp.curlnoise(st, q + wp.vec2(0.0, h), wp.uint32(2), 2.0, 0.5) - wp.curlnoise(st, q - wp.vec2(0.0, h), wp.uint32(2), 2.0, 0.5)
    out[i, 8] = (cx[0] + cy[1]) / (2.0 * h)


def _run(points, seed=7, h=1e-3):
    out = wp.zeros((len(points), 9), dtype=float)
    wp.launch(_sample, dim=len(points), inputs=[seed, wp.array(points.astype(F), dtype=wp.vec2), h, out])
    return out.numpy()


def test_noise_matches_warps_algorithm_transcribed_in_numpy():
    rng = np.random.default_rng(2)
    p = (rng.standard_normal((512, 2)) * 4).astype(F)
    out = _run(p)
    state = _pcg(np.uint32(7))
    np.testing.assert_allclose(out[:, 0], _np_noise2(state, p[:, 0], p[:, 1]), atol=2e-6)
    assert np.all(np.abs(out[:, [0, 1, 3, 4, 5]]) <= 1.0)
    # pnoise: periodic with periods (4, 3) where the lattice indices are non-negative (C's % keeps the sign)
    pos = np.all(p >= 0.0, axis=1)
    assert pos.sum() > 50
    np.testing.assert_allclose(out[pos, 1], out[pos, 2], atol=1e-5)
    assert np.all(np.abs(out[:, 8]) < 1e-1 * (1 + np.abs(out[:, 6:8]).max()))  # curl is divergence-free


def test_noise_vanishes_at_lattice_points():
    grid = np.stack(np.meshgrid(np.arange(-3, 4), np.arange(-2, 3)), -1).reshape(-1, 2).astype(F)
    out = _run(grid)
    np.testing.assert_array_equal(out[:, [0, 1, 3]], 0.0)


@wp.kernel
def _noise_sum(p: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.noise(wp.rand_init(3), p[i])


def test_noise_gradient_matches_central_differences():
    rng = np.random.default_rng(4)
    p = (rng.uniform(-3, 3, (64, 3))).astype(F)
    pa = wp.array(p, dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(64, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_noise_sum, dim=64, inputs=[pa, out])
    tape.backward(grads={out: wp.ones(64, dtype=float)})
    grad = pa.grad.numpy()
    h = 1e-2
    fd = np.zeros_like(p)
    for j in range(3):
        e = np.zeros(3, dtype=F)
        e[j] = h
        vals = []
        for q in (p + e, p - e):
            o = wp.zeros(64, dtype=float)
            wp.launch(_noise_sum, dim=64, inputs=[wp.array(q, dtype=wp.vec3), o])
            vals.append(o.numpy())
        fd[:, j] = (vals[0] - vals[1]) / (2 * h)
    np.testing.assert_allclose(grad, fd, atol=2e-2)
