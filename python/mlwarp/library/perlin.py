"""Warp's Perlin noise (warp/native/noise.h) in the kernel language: `noise`, `pnoise` (periodic) and
`curlnoise`, float32, on scalars and 2-4 component vectors, with Warp's hash of the lattice corners,
its random gradients (the PCG stream of mlwarp.random) and its quintic interpolation, operation for
operation, so that values match Warp's within float32 rounding (bit for bit where no contraction
to fused multiply-adds differs). The value and its analytic gradient are computed together: noise
differentiates as the gradient Warp's adjoint returns, curlnoise (built on the gradients) through them.
"""

from __future__ import annotations

from mlwarp.library.builtins import namespace as wp  # wp.floor, wp.normalize, ...: the builtins, spelt as in user code
from mlwarp.kernels.func import func
from mlwarp.library.random import _randf, rand_pcg
from mlwarp.types import float32, int32, uint32
from mlwarp.core.vector import vec2, vec3, vec4

_P1 = 73856093
_P2 = 19349663
_P3 = 53471161
_P4 = 10000019


@func
def _smootherstep(t: float32) -> float32:
    return t * t * t * (t * (t * float32(6.0) - float32(15.0)) + float32(10.0))


@func
def _smootherstep_gradient(t: float32) -> float32:
    return float32(30.0) * t * t * (t * (t - float32(2.0)) + float32(1.0))


@func
def _lerp(a0: float32, g0: float32, a1: float32, g1: float32, t: float32, e: float32):
    """Warp's interpolate (a1 - a0) S(t) + a0 and its gradient (g1 - g0) S(t) + (a1 - a0) S'(t) e + g0."""
    s = _smootherstep(t)
    return (a1 - a0) * s + a0, (g1 - g0) * s + (a1 - a0) * _smootherstep_gradient(t) * e + g0


@func
def _lerp(a0: float32, g0: vec2, a1: float32, g1: vec2, t: float32, e: vec2):  # noqa: F811
    s = _smootherstep(t)
    return (a1 - a0) * s + a0, (g1 - g0) * s + (a1 - a0) * _smootherstep_gradient(t) * e + g0


@func
def _lerp(a0: float32, g0: vec3, a1: float32, g1: vec3, t: float32, e: vec3):  # noqa: F811
    s = _smootherstep(t)
    return (a1 - a0) * s + a0, (g1 - g0) * s + (a1 - a0) * _smootherstep_gradient(t) * e + g0


@func
def _lerp(a0: float32, g0: vec4, a1: float32, g1: vec4, t: float32, e: vec4):  # noqa: F811
    s = _smootherstep(t)
    return (a1 - a0) * s + a0, (g1 - g0) * s + (a1 - a0) * _smootherstep_gradient(t) * e + g0


# -- the random gradient at a lattice corner (C precedence: ix * p1 ^ iy * p2 + state) -------------------
@func
def _corner1(state: uint32, ix: int32, dx: float32):
    s, u = _randf(uint32(ix) * uint32(_P1) + state)
    g = float32(2.0) * u + float32(-1.0)
    return dx * g, g


@func
def _corner2(state: uint32, ix: int32, iy: int32, dx: float32, dy: float32):
    s = (uint32(ix) * uint32(_P1)) ^ (uint32(iy) * uint32(_P2) + state)
    s, x = _randf(s)
    s, y = _randf(s)
    g = wp.normalize(vec2(x - float32(0.5), y - float32(0.5)))
    return dx * g[0] + dy * g[1], g


@func
def _corner3(state: uint32, ix: int32, iy: int32, iz: int32, dx: float32, dy: float32, dz: float32):
    s = (uint32(ix) * uint32(_P1)) ^ (uint32(iy) * uint32(_P2)) ^ (uint32(iz) * uint32(_P3) + state)
    s, x = _randf(s)
    s, y = _randf(s)
    s, z = _randf(s)
    g = wp.normalize(vec3(x - float32(0.5), y - float32(0.5), z - float32(0.5)))
    return dx * g[0] + dy * g[1] + dz * g[2], g


@func
def _corner4(state: uint32, ix: int32, iy: int32, iz: int32, it: int32, dx: float32, dy: float32, dz: float32,
             dt: float32):
    s = ((uint32(ix) * uint32(_P1)) ^ (uint32(iy) * uint32(_P2)) ^ (uint32(iz) * uint32(_P3))
         ^ (uint32(it) * uint32(_P4) + state))
    s, x = _randf(s)
    s, y = _randf(s)
    s, z = _randf(s)
    s, w = _randf(s)
    g = wp.normalize(vec4(x - float32(0.5), y - float32(0.5), z - float32(0.5), w - float32(0.5)))
    return dx * g[0] + dy * g[1] + dz * g[2] + dt * g[3], g


# -- value and gradient in a lattice cell: interpolated along x, then y, z, t, as Warp -------------------
@func
def _cell1(state: uint32, x0: int32, x1: int32, dx: float32):
    v0, g0 = _corner1(state, x0, dx)
    v1, g1 = _corner1(state, x1, dx - float32(1.0))
    return _lerp(v0, g0, v1, g1, dx, float32(1.0))


@func
def _cell2(state: uint32, x0: int32, y0: int32, x1: int32, y1: int32, dx: float32, dy: float32):
    ex = vec2(float32(1.0), float32(0.0))
    ey = vec2(float32(0.0), float32(1.0))
    one = float32(1.0)
    v00, g00 = _corner2(state, x0, y0, dx, dy)
    v10, g10 = _corner2(state, x1, y0, dx - one, dy)
    a0, h0 = _lerp(v00, g00, v10, g10, dx, ex)
    v01, g01 = _corner2(state, x0, y1, dx, dy - one)
    v11, g11 = _corner2(state, x1, y1, dx - one, dy - one)
    a1, h1 = _lerp(v01, g01, v11, g11, dx, ex)
    return _lerp(a0, h0, a1, h1, dy, ey)


@func
def _row3(state: uint32, x0: int32, x1: int32, iy: int32, iz: int32, dx: float32, dy: float32, dz: float32):
    v0, g0 = _corner3(state, x0, iy, iz, dx, dy, dz)
    v1, g1 = _corner3(state, x1, iy, iz, dx - float32(1.0), dy, dz)
    return _lerp(v0, g0, v1, g1, dx, vec3(float32(1.0), float32(0.0), float32(0.0)))


@func
def _plane3(state: uint32, x0: int32, y0: int32, x1: int32, y1: int32, iz: int32, dx: float32, dy: float32,
            dz: float32):
    a0, h0 = _row3(state, x0, x1, y0, iz, dx, dy, dz)
    a1, h1 = _row3(state, x0, x1, y1, iz, dx, dy - float32(1.0), dz)
    return _lerp(a0, h0, a1, h1, dy, vec3(float32(0.0), float32(1.0), float32(0.0)))


@func
def _cell3(state: uint32, x0: int32, y0: int32, z0: int32, x1: int32, y1: int32, z1: int32, dx: float32,
           dy: float32, dz: float32):
    a0, h0 = _plane3(state, x0, y0, x1, y1, z0, dx, dy, dz)
    a1, h1 = _plane3(state, x0, y0, x1, y1, z1, dx, dy, dz - float32(1.0))
    return _lerp(a0, h0, a1, h1, dz, vec3(float32(0.0), float32(0.0), float32(1.0)))


@func
def _row4(state: uint32, x0: int32, x1: int32, iy: int32, iz: int32, it: int32, dx: float32, dy: float32,
          dz: float32, dt: float32):
    v0, g0 = _corner4(state, x0, iy, iz, it, dx, dy, dz, dt)
    v1, g1 = _corner4(state, x1, iy, iz, it, dx - float32(1.0), dy, dz, dt)
    return _lerp(v0, g0, v1, g1, dx, vec4(float32(1.0), float32(0.0), float32(0.0), float32(0.0)))


@func
def _plane4(state: uint32, x0: int32, y0: int32, x1: int32, y1: int32, iz: int32, it: int32, dx: float32,
            dy: float32, dz: float32, dt: float32):
    a0, h0 = _row4(state, x0, x1, y0, iz, it, dx, dy, dz, dt)
    a1, h1 = _row4(state, x0, x1, y1, iz, it, dx, dy - float32(1.0), dz, dt)
    return _lerp(a0, h0, a1, h1, dy, vec4(float32(0.0), float32(1.0), float32(0.0), float32(0.0)))


@func
def _cube4(state: uint32, x0: int32, y0: int32, z0: int32, x1: int32, y1: int32, z1: int32, it: int32,
           dx: float32, dy: float32, dz: float32, dt: float32):
    a0, h0 = _plane4(state, x0, y0, x1, y1, z0, it, dx, dy, dz, dt)
    a1, h1 = _plane4(state, x0, y0, x1, y1, z1, it, dx, dy, dz - float32(1.0), dt)
    return _lerp(a0, h0, a1, h1, dz, vec4(float32(0.0), float32(0.0), float32(1.0), float32(0.0)))


@func
def _cell4(state: uint32, x0: int32, y0: int32, z0: int32, t0: int32, x1: int32, y1: int32, z1: int32, t1: int32,
           dx: float32, dy: float32, dz: float32, dt: float32):
    a0, h0 = _cube4(state, x0, y0, z0, x1, y1, z1, t0, dx, dy, dz, dt)
    a1, h1 = _cube4(state, x0, y0, z0, x1, y1, z1, t1, dx, dy, dz, dt - float32(1.0))
    return _lerp(a0, h0, a1, h1, dt, vec4(float32(0.0), float32(0.0), float32(0.0), float32(1.0)))


@func
def _split(x: float32):
    """(x - floor(x), int(floor(x)))."""
    f = wp.floor(x)
    return x - f, int32(f)


@func
def _noise_grad(state: uint32, x: float32):
    dx, x0 = _split(x)
    return _cell1(state, x0, x0 + 1, dx)


@func
def _noise_grad(state: uint32, p: vec2):  # noqa: F811
    dx, x0 = _split(p[0])
    dy, y0 = _split(p[1])
    return _cell2(state, x0, y0, x0 + 1, y0 + 1, dx, dy)


@func
def _noise_grad(state: uint32, p: vec3):  # noqa: F811
    dx, x0 = _split(p[0])
    dy, y0 = _split(p[1])
    dz, z0 = _split(p[2])
    return _cell3(state, x0, y0, z0, x0 + 1, y0 + 1, z0 + 1, dx, dy, dz)


@func
def _noise_grad(state: uint32, p: vec4):  # noqa: F811
    dx, x0 = _split(p[0])
    dy, y0 = _split(p[1])
    dz, z0 = _split(p[2])
    dt, t0 = _split(p[3])
    return _cell4(state, x0, y0, z0, t0, x0 + 1, y0 + 1, z0 + 1, t0 + 1, dx, dy, dz, dt)


# -- the public functions -------------------------------------------------------------------------------
@func
def noise(state: uint32, x: float32) -> float32:
    """Perlin noise of x, in [-1, 1]."""
    v, g = _noise_grad(state, x)
    return v


@func
def noise(state: uint32, xy: vec2) -> float32:  # noqa: F811
    v, g = _noise_grad(state, xy)
    return v


@func
def noise(state: uint32, xyz: vec3) -> float32:  # noqa: F811
    v, g = _noise_grad(state, xyz)
    return v


@func
def noise(state: uint32, xyzt: vec4) -> float32:  # noqa: F811
    v, g = _noise_grad(state, xyzt)
    return v


@func
def pnoise(state: uint32, x: float32, px: int32) -> float32:
    """Perlin noise of x, periodic with integer period px (lattice indices taken modulo px, as C's %)."""
    dx, x0 = _split(x)
    x0 = x0 % px
    v, g = _cell1(state, x0, (x0 + 1) % px, dx)
    return v


@func
def pnoise(state: uint32, xy: vec2, px: int32, py: int32) -> float32:  # noqa: F811
    dx, x0 = _split(xy[0])
    dy, y0 = _split(xy[1])
    x0 = x0 % px
    y0 = y0 % py
    v, g = _cell2(state, x0, y0, (x0 + 1) % px, (y0 + 1) % py, dx, dy)
    return v


@func
def pnoise(state: uint32, xyz: vec3, px: int32, py: int32, pz: int32) -> float32:  # noqa: F811
    dx, x0 = _split(xyz[0])
    dy, y0 = _split(xyz[1])
    dz, z0 = _split(xyz[2])
    x0 = x0 % px
    y0 = y0 % py
    z0 = z0 % pz
    v, g = _cell3(state, x0, y0, z0, (x0 + 1) % px, (y0 + 1) % py, (z0 + 1) % pz, dx, dy, dz)
    return v


@func
def pnoise(state: uint32, xyzt: vec4, px: int32, py: int32, pz: int32, pt: int32) -> float32:  # noqa: F811
    dx, x0 = _split(xyzt[0])
    dy, y0 = _split(xyzt[1])
    dz, z0 = _split(xyzt[2])
    dt, t0 = _split(xyzt[3])
    x0 = x0 % px
    y0 = y0 % py
    z0 = z0 % pz
    t0 = t0 % pt
    v, g = _cell4(state, x0, y0, z0, t0, (x0 + 1) % px, (y0 + 1) % py, (z0 + 1) % pz, (t0 + 1) % pt,
                  dx, dy, dz, dt)
    return v


@func
def _rand_init_u(seed: uint32, offset: uint32) -> uint32:
    """rand_init(seed, offset) on a uint32 seed."""
    return rand_pcg(seed + rand_pcg(offset))


@func
def curlnoise(state: uint32, xy: vec2, octaves: uint32 = uint32(1), lacunarity: float32 = 2.0,
              gain: float32 = 0.5) -> vec2:
    """A divergence-free 2-D field: the rotated gradient of fractal Perlin noise (octaves of frequency
    lacunarity^i and amplitude gain^i)."""
    curl = vec2(float32(0.0), float32(0.0))
    freq = float32(1.0)
    amplitude = float32(1.0)
    for _i in range(int32(octaves)):
        v, g = _noise_grad(state, freq * xy)
        curl += amplitude * g
        amplitude *= gain
        freq *= lacunarity
    return vec2(-curl[1], curl[0])


@func
def curlnoise(state: uint32, xyz: vec3, octaves: uint32 = uint32(1), lacunarity: float32 = 2.0,  # noqa: F811
              gain: float32 = 0.5) -> vec3:
    """The curl of three fractal Perlin noise fields (Warp's state sequence between them)."""
    c1 = vec3(float32(0.0), float32(0.0), float32(0.0))
    c2 = c1
    c3 = c1
    freq = float32(1.0)
    amplitude = float32(1.0)
    s = state
    for _i in range(int32(octaves)):
        pt = freq * xyz
        v1, g1 = _noise_grad(s, pt)
        s = _rand_init_u(s, uint32(10019689))
        v2, g2 = _noise_grad(s, pt)
        s = _rand_init_u(s, uint32(13112221))
        v3, g3 = _noise_grad(s, pt)
        c1 += amplitude * g1
        c2 += amplitude * g2
        c3 += amplitude * g3
        amplitude *= gain
        freq *= lacunarity
    return vec3(c3[1] - c2[2], c1[2] - c3[0], c2[0] - c1[1])


@func
def curlnoise(state: uint32, xyzt: vec4, octaves: uint32 = uint32(1), lacunarity: float32 = 2.0,  # noqa: F811
              gain: float32 = 0.5) -> vec3:
    c1 = vec4(float32(0.0), float32(0.0), float32(0.0), float32(0.0))
    c2 = c1
    c3 = c1
    freq = float32(1.0)
    amplitude = float32(1.0)
    s = state
    for _i in range(int32(octaves)):
        pt = freq * xyzt
        v1, g1 = _noise_grad(s, pt)
        s = _rand_init_u(s, uint32(10019689))
        v2, g2 = _noise_grad(s, pt)
        s = _rand_init_u(s, uint32(13112221))
        v3, g3 = _noise_grad(s, pt)
        c1 += amplitude * g1
        c2 += amplitude * g2
        c3 += amplitude * g3
        amplitude *= gain
        freq *= lacunarity
    return vec3(c3[1] - c2[2], c1[2] - c3[0], c2[0] - c1[1])


__all__ = ["noise", "pnoise", "curlnoise"]
