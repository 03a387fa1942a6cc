"""`wp.texture_sample` (Warp 1.19's CPU sampler, warp/native/texture.h semantics) written in the kernel language as
@wp.func over the texture struct of texture.py: a kernel reads the texels at `tex.data` through
`wp.array(ptr=..., dtype=...)` views, as the volume functions read NanoVDB bytes.

- Texel space: `x = u * width` with normalized coordinates, else `x = u`; texel `i` covers `[i, i + 1)`.
- CLOSEST reads texel `floor(x)`; LINEAR blends texels `floor(x - 0.5)` and `floor(x - 0.5) + 1` with weight
  `t = (x - 0.5) - floor(x - 0.5)` per axis (bilinear: along u, then v; trilinear: then w).
- Each integer texel index goes through its axis's address mode: WRAP `i mod n`, CLAMP to `[0, n - 1]`, MIRROR
  with period `2n` (`i` and `2n - 1 - i`), BORDER reads 0 outside.
- Texel values: float32 and float16 as they are; uint8/uint16 divided by 255/65535; int8/int16 by 127/32767,
  clamped to -1; int32/uint32 converted. `dtype=float` reads channel 0, `vec2f` channels 0-1, `vec4f` 0-3; a
  channel the texture does not have reads 0.
- Gradients: warp-autodiff differentiates the weights (the texels are constants), Warp's adjoint: d/du of the
  LINEAR blend (times the size with normalized coordinates), 0 for CLOSEST; nothing reaches the texel data.

`wp.texture_sample(tex, coords..., dtype=T, lod=...)` picks the function of `T` at compile time
(frontend/dtype_dispatch.py); the overloads of that function choose the texture kind and coordinate form."""

# no `from __future__ import annotations`: the functions annotate with the texture structs

from mlwarp.arrays.array import array
from mlwarp.library.builtins import namespace as wp
from mlwarp.core import types as wt
from mlwarp.kernels.func import func
from mlwarp.arrays.texture import struct_type
from mlwarp.types import float16, float32, int8, int16, int32, int64, uint8, uint16, uint32, uint64
from mlwarp.core.vector import vec2f, vec3f, vec4f

T1 = struct_type(1)
T2 = struct_type(2)
T3 = struct_type(3)


@func
def _value(data: uint64, code: int32, index: int64) -> float32:
    """Element `index` of the texel storage (channels innermost) as Warp returns it."""
    if code == 2:
        return array(ptr=data + uint64(index * int64(4)), shape=(1,), dtype=float32)[0]
    if code == 0:
        return float32(array(ptr=data + uint64(index), shape=(1,), dtype=uint8)[0]) / float32(255.0)
    if code == 1:
        return float32(array(ptr=data + uint64(index * int64(2)), shape=(1,), dtype=uint16)[0]) / float32(65535.0)
    if code == 3:
        s8 = float32(array(ptr=data + uint64(index), shape=(1,), dtype=int8)[0]) / float32(127.0)
        return wp.max(s8, float32(-1.0))
    if code == 4:
        s16 = float32(array(ptr=data + uint64(index * int64(2)), shape=(1,), dtype=int16)[0]) / float32(32767.0)
        return wp.max(s16, float32(-1.0))
    if code == 5:
        return float32(array(ptr=data + uint64(index * int64(2)), shape=(1,), dtype=float16)[0])
    if code == 6:
        return float32(array(ptr=data + uint64(index * int64(4)), shape=(1,), dtype=uint32)[0])
    return float32(array(ptr=data + uint64(index * int64(4)), shape=(1,), dtype=int32)[0])


@func
def _address(i: int32, n: int32, mode: int32) -> int32:
    """Texel index `i` on an axis of `n` texels under address `mode`; -1 for BORDER outside."""
    if mode == 0:  # WRAP
        r = i % n
        if r < 0:
            r = r + n
        return r
    if mode == 2:  # MIRROR
        p = n * 2
        m = i % p
        if m < 0:
            m = m + p
        if m >= n:
            m = p - 1 - m
        return m
    if mode == 3:  # BORDER
        if i < 0 or i >= n:
            return -1
        return i
    return wp.clamp(i, 0, n - 1)  # CLAMP


@func
def _texel(data: uint64, code: int32, nc: int32, ix: int32, iy: int32, iz: int32, w: int32, h: int32) -> vec4f:
    """Texel (ix, iy, iz)'s channels (0 beyond the texture's channels; all 0 for a BORDER index -1)."""
    if ix < 0 or iy < 0 or iz < 0:
        return vec4f(0.0)
    base = ((int64(iz) * int64(h) + int64(iy)) * int64(w) + int64(ix)) * int64(nc)
    c0 = _value(data, code, base)
    c1 = float32(0.0)
    c2 = float32(0.0)
    c3 = float32(0.0)
    if nc > 1:
        c1 = _value(data, code, base + int64(1))
    if nc > 2:
        c2 = _value(data, code, base + int64(2))
        c3 = _value(data, code, base + int64(3))
    return vec4f(c0, c1, c2, c3)


@func
def _texel_space(u: float32, n: int32, normalized: int32) -> float32:
    if normalized != 0:
        return u * float32(n)
    return u


@func
def _sample1(tex: T1, u: float32) -> vec4f:
    x = _texel_space(u, tex.width, tex.normalized_coords)
    if tex.filter_mode == 0:
        i = _address(int32(wp.floor(x)), tex.width, tex.address_mode_u)
        return _texel(tex.data, tex.dtype_code, tex.num_channels, i, 0, 0, tex.width, 1)
    xs = x - float32(0.5)
    fx = wp.floor(xs)
    t = xs - fx
    i0 = int32(fx)
    a = _texel(tex.data, tex.dtype_code, tex.num_channels, _address(i0, tex.width, tex.address_mode_u), 0, 0,
               tex.width, 1)
    b = _texel(tex.data, tex.dtype_code, tex.num_channels, _address(i0 + 1, tex.width, tex.address_mode_u), 0, 0,
               tex.width, 1)
    return a * (float32(1.0) - t) + b * t


@func
def _sample2(tex: T2, u: float32, v: float32) -> vec4f:
    x = _texel_space(u, tex.width, tex.normalized_coords)
    y = _texel_space(v, tex.height, tex.normalized_coords)
    d = tex.data
    code = tex.dtype_code
    nc = tex.num_channels
    if tex.filter_mode == 0:
        i = _address(int32(wp.floor(x)), tex.width, tex.address_mode_u)
        j = _address(int32(wp.floor(y)), tex.height, tex.address_mode_v)
        return _texel(d, code, nc, i, j, 0, tex.width, tex.height)
    xs = x - float32(0.5)
    ys = y - float32(0.5)
    fx = wp.floor(xs)
    fy = wp.floor(ys)
    tx = xs - fx
    ty = ys - fy
    i0 = _address(int32(fx), tex.width, tex.address_mode_u)
    i1 = _address(int32(fx) + 1, tex.width, tex.address_mode_u)
    j0 = _address(int32(fy), tex.height, tex.address_mode_v)
    j1 = _address(int32(fy) + 1, tex.height, tex.address_mode_v)
    w = tex.width
    h = tex.height
    r0 = _texel(d, code, nc, i0, j0, 0, w, h) * (float32(1.0) - tx) + _texel(d, code, nc, i1, j0, 0, w, h) * tx
    r1 = _texel(d, code, nc, i0, j1, 0, w, h) * (float32(1.0) - tx) + _texel(d, code, nc, i1, j1, 0, w, h) * tx
    return r0 * (float32(1.0) - ty) + r1 * ty


@func
def _sample3(tex: T3, u: float32, v: float32, s: float32) -> vec4f:
    x = _texel_space(u, tex.width, tex.normalized_coords)
    y = _texel_space(v, tex.height, tex.normalized_coords)
    z = _texel_space(s, tex.depth, tex.normalized_coords)
    d = tex.data
    code = tex.dtype_code
    nc = tex.num_channels
    w = tex.width
    h = tex.height
    if tex.filter_mode == 0:
        i = _address(int32(wp.floor(x)), w, tex.address_mode_u)
        j = _address(int32(wp.floor(y)), h, tex.address_mode_v)
        k = _address(int32(wp.floor(z)), tex.depth, tex.address_mode_w)
        return _texel(d, code, nc, i, j, k, w, h)
    xs = x - float32(0.5)
    ys = y - float32(0.5)
    zs = z - float32(0.5)
    fx = wp.floor(xs)
    fy = wp.floor(ys)
    fz = wp.floor(zs)
    tx = xs - fx
    ty = ys - fy
    tz = zs - fz
    i0 = _address(int32(fx), w, tex.address_mode_u)
    i1 = _address(int32(fx) + 1, w, tex.address_mode_u)
    j0 = _address(int32(fy), h, tex.address_mode_v)
    j1 = _address(int32(fy) + 1, h, tex.address_mode_v)
    k0 = _address(int32(fz), tex.depth, tex.address_mode_w)
    k1 = _address(int32(fz) + 1, tex.depth, tex.address_mode_w)
    sx = float32(1.0) - tx
    r00 = _texel(d, code, nc, i0, j0, k0, w, h) * sx + _texel(d, code, nc, i1, j0, k0, w, h) * tx
    r10 = _texel(d, code, nc, i0, j1, k0, w, h) * sx + _texel(d, code, nc, i1, j1, k0, w, h) * tx
    r01 = _texel(d, code, nc, i0, j0, k1, w, h) * sx + _texel(d, code, nc, i1, j0, k1, w, h) * tx
    r11 = _texel(d, code, nc, i0, j1, k1, w, h) * sx + _texel(d, code, nc, i1, j1, k1, w, h) * tx
    sy = float32(1.0) - ty
    p0 = r00 * sy + r10 * ty
    p1 = r01 * sy + r11 * ty
    return p0 * (float32(1.0) - tz) + p1 * tz


# -- the per-dtype functions: overloads by texture kind and coordinate form (lod: one mip level, ignored) ----------


def _make(pick, ret):
    """The overloads of texture_sample for the return type `ret`; `pick(v4)` narrows the four channels."""

    @func
    def sample(tex: T1, u: float32) -> ret:
        return pick(_sample1(tex, u))

    @func
    def sample(tex: T1, u: float32, lod: float32) -> ret:  # noqa: F811
        return pick(_sample1(tex, u))

    @func
    def sample(tex: T2, uv: vec2f) -> ret:  # noqa: F811
        return pick(_sample2(tex, uv[0], uv[1]))

    @func
    def sample(tex: T2, uv: vec2f, lod: float32) -> ret:  # noqa: F811
        return pick(_sample2(tex, uv[0], uv[1]))

    @func
    def sample(tex: T2, u: float32, v: float32) -> ret:  # noqa: F811
        return pick(_sample2(tex, u, v))

    @func
    def sample(tex: T2, u: float32, v: float32, lod: float32) -> ret:  # noqa: F811
        return pick(_sample2(tex, u, v))

    @func
    def sample(tex: T3, uvw: vec3f) -> ret:  # noqa: F811
        return pick(_sample3(tex, uvw[0], uvw[1], uvw[2]))

    @func
    def sample(tex: T3, uvw: vec3f, lod: float32) -> ret:  # noqa: F811
        return pick(_sample3(tex, uvw[0], uvw[1], uvw[2]))

    @func
    def sample(tex: T3, u: float32, v: float32, w: float32) -> ret:  # noqa: F811
        return pick(_sample3(tex, u, v, w))

    @func
    def sample(tex: T3, u: float32, v: float32, w: float32, lod: float32) -> ret:  # noqa: F811
        return pick(_sample3(tex, u, v, w))

    return sample


@func
def _pick1(c: vec4f) -> float32:
    return c[0]


@func
def _pick2(c: vec4f) -> vec2f:
    return vec2f(c[0], c[1])


@func
def _pick4(c: vec4f) -> vec4f:
    return c


_BY_TYPE = {float32: _make(_pick1, float32), vec2f: _make(_pick2, vec2f), vec4f: _make(_pick4, vec4f)}


class _TextureSample:
    """`wp.texture_sample(tex, coords..., dtype=T[, lod])`: T is float, wp.vec2f or wp.vec4f."""

    __name__ = "texture_sample"
    __qualname__ = "texture_sample"
    __doc__ = ("Sample a texture (wp.Texture1D: u; wp.Texture2D: uv or u, v; wp.Texture3D: uvw or u, v, w) with "
               "its filter and address modes; dtype=float, wp.vec2f or wp.vec4f selects the channels read.")

    def _wp_dtype_dispatch_(self, dtype):
        for t, fn in _BY_TYPE.items():
            if t is dtype or wt.types_equal(t, dtype):
                return fn
        raise TypeError(f"unsupported texture type `{wt.type_repr(dtype)}`. Supported: float, vec2f, vec4f")

    def __call__(self, *args, **kwargs):
        raise RuntimeError("wp.texture_sample() can only be called inside Warp kernels and functions")


texture_sample = _TextureSample()

__all__ = ["texture_sample"]
