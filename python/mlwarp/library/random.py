"""Warp's random numbers, written in the kernel language with Warp's algorithms (native/rand.h), so
the same seed and offset give Warp's stream.

The generator is a PCG hash of a uint32 state (Jarzynski and Olano, JCGT 2020). In Warp the sampling
functions take the state by reference; here each is a @wp.func returning (new state, value), and
`StatefulFunction` makes the frontend rebind the caller's state variable, so that

    state = wp.rand_init(seed, tid)
    a = wp.randf(state)
    b = wp.randf(state)      # the next number of the stream

reads as in Warp.
"""

from __future__ import annotations

from mlwarp.arrays.array import array
from mlwarp.library.array_search import lower_bound
from mlwarp.library.builtins import namespace as wp  # wp.sin, wp.length, ...: the builtins, spelt as in user code
from mlwarp.kernels.func import func
from mlwarp.types import float32, int32, uint32
from mlwarp.core.vector import vec2, vec3

RANDN_EPSILON = float32(5.96e-8)
PI_F = float32(3.14159265358979323846)


class StatefulFunction:
    """A function whose first argument is a uint32 state variable that the call advances: the frontend
    calls `impls[arity]` (a @wp.func returning (new state, value)) and assigns the new state back."""

    def __init__(self, name: str, impls: dict, doc: str):
        self.__name__ = name
        self.__doc__ = doc
        self._wp_stateful_ = impls

    def __call__(self, *args):
        raise RuntimeError(f"wp.{self.__name__}() can only be called inside a kernel or wp.func")


@func
def rand_pcg(state: uint32) -> uint32:
    b = state * uint32(747796405) + uint32(2891336453)
    c = ((b >> ((b >> uint32(28)) + uint32(4))) ^ b) * uint32(277803737)
    return (c >> uint32(22)) ^ c


@func
def rand_init(seed: int32) -> uint32:
    """A generator state from a seed."""
    return rand_pcg(uint32(seed))


@func
def rand_init(seed: int32, offset: int32) -> uint32:  # noqa: F811  (an overload, as in Warp)
    """A generator state from a seed and an offset (e.g. the thread index)."""
    return rand_pcg(uint32(seed) + rand_pcg(uint32(offset)))


@func
def _randu(state: uint32):
    s = rand_pcg(state)
    return s, s


@func
def _randu_range(state: uint32, lo: uint32, hi: uint32):
    s = rand_pcg(state)
    return s, s % (hi - lo) + lo


@func
def _randi(state: uint32):
    s = rand_pcg(state)
    return s, int32(s)


@func
def _randi_range(state: uint32, lo: int32, hi: int32):
    s = rand_pcg(state)  # C: uint32 % int is an unsigned remainder
    return s, int32(s % uint32(hi - lo)) + lo


@func
def _randf(state: uint32):
    s = rand_pcg(state)
    return s, float32(s >> uint32(8)) * (float32(1.0) / float32(16777216.0))


@func
def _randf_range(state: uint32, lo: float32, hi: float32):
    s, u = _randf(state)
    return s, (hi - lo) * u + lo


@func
def _randn(state: uint32):
    s, u1 = _randf(state)
    s, u2 = _randf(s)
    return s, wp.sqrt(float32(-2.0) * wp.log(u1 + RANDN_EPSILON)) * wp.cos(float32(2.0) * PI_F * u2)


@func
def _sample_triangle(state: uint32):
    s, u1 = _randf(state)
    s, u2 = _randf(s)
    r = wp.sqrt(u1)
    return s, vec2(float32(1.0) - r, u2 * r)


@func
def _sample_unit_ring(state: uint32):
    s, theta = _randf_range(state, float32(0.0), float32(2.0) * PI_F)
    return s, vec2(wp.cos(theta), wp.sin(theta))


@func
def _sample_unit_disk(state: uint32):
    s, u = _randf(state)
    s, theta = _randf_range(s, float32(0.0), float32(2.0) * PI_F)
    r = wp.sqrt(u)
    return s, vec2(r * wp.cos(theta), r * wp.sin(theta))


@func
def _sample_sphere(state: uint32, hemisphere: bool, surface: bool):
    s, u = _randf(state)
    phi = wp.acos(float32(1.0) - u) if hemisphere else wp.acos(float32(1.0) - float32(2.0) * u)
    s, theta = _randf_range(s, float32(0.0), float32(2.0) * PI_F)
    r = float32(1.0)
    if not surface:
        s, v = _randf(s)
        r = wp.pow(v, float32(1.0) / float32(3.0))
    return s, vec3(r * wp.cos(theta) * wp.sin(phi), r * wp.sin(theta) * wp.sin(phi), r * wp.cos(phi))


@func
def _sample_unit_sphere_surface(state: uint32):
    return _sample_sphere(state, False, True)


@func
def _sample_unit_sphere(state: uint32):
    return _sample_sphere(state, False, False)


@func
def _sample_unit_hemisphere_surface(state: uint32):
    return _sample_sphere(state, True, True)


@func
def _sample_unit_hemisphere(state: uint32):
    return _sample_sphere(state, True, False)


@func
def _sample_unit_square(state: uint32):
    s, x = _randf(state)
    s, y = _randf(s)
    return s, vec2(x - float32(0.5), y - float32(0.5))


@func
def _sample_unit_cube(state: uint32):
    s, x = _randf(state)
    s, y = _randf(s)
    s, z = _randf(s)
    return s, vec3(x - float32(0.5), y - float32(0.5), z - float32(0.5))


@func
def _loggam(x: float32) -> float32:
    """log(Gamma(x)) as rand.h's random_loggam (SPECFUN, Zhang and Jin)."""
    if x == float32(1.0) or x == float32(2.0):
        return float32(0.0)
    n = uint32(0)
    if x < float32(7.0):
        n = uint32(float32(7.0) - x)
    x0 = x + float32(n)
    x2 = (float32(1.0) / x0) * (float32(1.0) / x0)
    gl0 = float32(-1.39243221690590e+00)
    gl0 = gl0 * x2 + float32(1.796443723688307e-01)
    gl0 = gl0 * x2 + float32(-2.955065359477124e-02)
    gl0 = gl0 * x2 + float32(6.410256410256410e-03)
    gl0 = gl0 * x2 + float32(-1.917526917526918e-03)
    gl0 = gl0 * x2 + float32(8.417508417508418e-04)
    gl0 = gl0 * x2 + float32(-5.952380952380952e-04)
    gl0 = gl0 * x2 + float32(7.936507936507937e-04)
    gl0 = gl0 * x2 + float32(-2.777777777777778e-03)
    gl0 = gl0 * x2 + float32(8.333333333333333e-02)
    gl = gl0 / x0 + float32(0.5) * float32(1.8378770664093453) + (x0 - float32(0.5)) * wp.log(x0) - x0
    if x < float32(7.0):
        k = uint32(1)
        while k <= n:
            gl = gl - wp.log(x0 - float32(1.0))
            x0 = x0 - float32(1.0)
            k = k + uint32(1)
    return gl


@func
def _poisson_mult(state: uint32, lam: float32):
    """Knuth's multiplication method, for lam < 10."""
    enlam = wp.exp(-lam)
    x = uint32(0)
    prod = float32(1.0)
    s = state
    while True:
        s, u = _randf(s)
        prod = prod * u
        if prod > enlam:
            x = x + uint32(1)
        else:
            return s, x
    return s, x


@func
def _poisson_ptrs(state: uint32, lam: float32):
    """Hoermann's transformed rejection (PTRS), for lam >= 10."""
    slam = wp.sqrt(lam)
    loglam = wp.log(lam)
    b = float32(0.931) + float32(2.53) * slam
    a = float32(-0.059) + float32(0.02483) * b
    invalpha = float32(1.1239) + float32(1.1328) / (b - float32(3.4))
    vr = float32(0.9277) - float32(3.6224) / (b - float32(2.0))
    s = state
    while True:
        s, u = _randf(s)
        u = u - float32(0.5)
        s, v = _randf(s)
        us = float32(0.5) - wp.abs(u)
        k = wp.floor((float32(2.0) * a / us + b) * u + lam + float32(0.43))
        if us >= float32(0.07) and v <= vr:
            return s, uint32(k)
        if k < float32(0.0) or (us < float32(0.013) and v > us):
            continue
        if wp.log(v) + wp.log(invalpha) - wp.log(a / (us * us) + b) <= -lam + k * loglam - _loggam(k + float32(1.0)):
            return s, uint32(k)
    return s, uint32(0)


@func
def _poisson(state: uint32, lam: float32):
    if lam >= float32(10.0):
        return _poisson_ptrs(state, lam)
    if lam == float32(0.0):
        return state, uint32(0)
    return _poisson_mult(state, lam)


@func
def _sample_cdf(state: uint32, cdf: array(dtype=float32)):
    """Inverse-transform sampling: the first index of the sorted `cdf` whose value is >= a uniform u."""
    s, u = _randf(state)
    return s, lower_bound(cdf, u)


randu = StatefulFunction("randu", {1: _randu, 3: _randu_range}, "randu(state[, min, max]) -> uint32")
randi = StatefulFunction("randi", {1: _randi, 3: _randi_range}, "randi(state[, min, max]) -> int32")
randf = StatefulFunction("randf", {1: _randf, 3: _randf_range}, "randf(state[, min, max]) -> float32 in [0, 1)")
randn = StatefulFunction("randn", {1: _randn}, "randn(state) -> a standard normal float32 (Box-Muller)")
sample_triangle = StatefulFunction("sample_triangle", {1: _sample_triangle}, "barycentric (u, v) on a triangle")
sample_unit_ring = StatefulFunction("sample_unit_ring", {1: _sample_unit_ring}, "a point on the unit circle")
sample_unit_disk = StatefulFunction("sample_unit_disk", {1: _sample_unit_disk}, "a point in the unit disk")
sample_unit_sphere_surface = StatefulFunction("sample_unit_sphere_surface", {1: _sample_unit_sphere_surface},
                                              "a point on the unit sphere")
sample_unit_sphere = StatefulFunction("sample_unit_sphere", {1: _sample_unit_sphere}, "a point in the unit ball")
sample_unit_hemisphere_surface = StatefulFunction("sample_unit_hemisphere_surface",
                                                  {1: _sample_unit_hemisphere_surface},
                                                  "a point on the unit hemisphere (z >= 0)")
sample_unit_hemisphere = StatefulFunction("sample_unit_hemisphere", {1: _sample_unit_hemisphere},
                                          "a point in the unit half ball (z >= 0)")
sample_unit_square = StatefulFunction("sample_unit_square", {1: _sample_unit_square},
                                      "a point in the square [-0.5, 0.5]^2")
sample_unit_cube = StatefulFunction("sample_unit_cube", {1: _sample_unit_cube}, "a point in the cube [-0.5, 0.5]^3")
poisson = StatefulFunction("poisson", {2: _poisson}, "poisson(state, lam) -> uint32, a Poisson-distributed count")
sample_cdf = StatefulFunction("sample_cdf", {2: _sample_cdf},
                              "sample_cdf(state, cdf) -> int32, an index drawn from the discrete distribution whose "
                              "normalised cumulative sums are `cdf`")

__all__ = ["rand_init", "randu", "randi", "randf", "randn", "sample_triangle", "sample_unit_ring", "sample_unit_disk",
           "sample_unit_sphere_surface", "sample_unit_sphere", "sample_unit_hemisphere_surface",
           "sample_unit_hemisphere", "sample_unit_square", "sample_unit_cube", "poisson", "sample_cdf"]
