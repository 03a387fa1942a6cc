"""wp.Texture1D/2D/3D and wp.texture_sample (python/mlwarp/arrays/texture.py, texture_funcs.py): Warp 1.19's CPU sampling
against a numpy reference sampler (below), plus values recorded from warp-lang 1.19.0 on the CPU (marked
`recorded`), the construction errors (one test per message) and the sm_90 build of the sampling kernels."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp

CPU = "cpu"
MODES = ("WRAP", "CLAMP", "MIRROR", "BORDER")


# -- the numpy reference: Warp's CPU sampler ---------------------------------------------------------------------

def _address(i, n, mode):
    if mode == "WRAP":
        return i % n
    if mode == "CLAMP":
        return min(max(i, 0), n - 1)
    if mode == "MIRROR":
        m = i % (2 * n)
        return m if m < n else 2 * n - 1 - m
    return i if 0 <= i < n else -1


def _normalize(values: np.ndarray) -> np.ndarray:
    scale = {np.uint8: 255.0, np.uint16: 65535.0, np.int8: 127.0, np.int16: 32767.0}.get(values.dtype.type)
    v = values.astype(np.float64)
    return v if scale is None else np.maximum(v / scale, -1.0)


def ref_sample(data: np.ndarray, ndim: int, coords, filter_mode="LINEAR", modes=("CLAMP",) * 3, normalized=True):
    """`data` in Warp's layout ((W,), (H, W), (D, H, W), with a trailing channel axis when channels > 1)."""
    spatial = data.shape[:ndim]
    vals = _normalize(data).reshape(*spatial, -1)
    sizes = list(reversed(spatial))  # (W[, H[, D]])
    xs = [c * n if normalized else c for c, n in zip(coords, sizes)]

    def texel(idx):  # idx per axis (x first)
        if any(i < 0 for i in idx):
            return np.zeros(vals.shape[-1])
        return vals[tuple(reversed(idx))]

    if filter_mode == "CLOSEST":
        return texel([_address(int(np.floor(x)), n, m) for x, n, m in zip(xs, sizes, modes)])
    base = [int(np.floor(x - 0.5)) for x in xs]
    frac = [(x - 0.5) - b for x, b in zip(xs, base)]
    out = np.zeros(vals.shape[-1])
    for corner in range(1 << ndim):
        weight, idx = 1.0, []
        for a in range(ndim):
            bit = (corner >> a) & 1
            weight *= frac[a] if bit else 1.0 - frac[a]
            idx.append(_address(base[a] + bit, sizes[a], modes[a]))
        out += weight * texel(idx)
    return out


def _pad(v, n):
    out = np.zeros(n)
    out[: min(n, len(v))] = v[:n]
    return out


# -- kernels ---------------------------------------------------------------------------------------------------------

@wp.kernel
def sample_1d(t: wp.Texture1D, us: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.texture_sample(t, us[i], dtype=float)


@wp.kernel
def sample_2d_v4(t: wp.Texture2D, uv: wp.array(dtype=wp.vec2f), out: wp.array(dtype=wp.vec4f)):
    i = wp.tid()
    out[i] = wp.texture_sample(t, uv[i], dtype=wp.vec4f)


@wp.kernel
def sample_2d_uv_v2(t: wp.Texture2D, uv: wp.array(dtype=wp.vec2f), out: wp.array(dtype=wp.vec2f)):
    i = wp.tid()
    out[i] = wp.texture_sample(t, uv[i][0], uv[i][1], dtype=wp.vec2f)


@wp.kernel
def sample_2d_f(t: wp.Texture2D, uv: wp.array(dtype=wp.vec2f), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.texture_sample(t, uv[i], dtype=float, lod=0.0)


@wp.kernel
def sample_3d_v4(t: wp.Texture3D, uvw: wp.array(dtype=wp.vec3f), out: wp.array(dtype=wp.vec4f)):
    i = wp.tid()
    out[i] = wp.texture_sample(t, uvw[i], dtype=wp.vec4f)


@wp.kernel
def sample_3d_split(t: wp.Texture3D, uvw: wp.array(dtype=wp.vec3f), out: wp.array(dtype=float)):
    i = wp.tid()
    p = uvw[i]
    out[i] = wp.texture_sample(t, p[0], p[1], p[2], dtype=float)


@wp.kernel
def sizes_3d(t: wp.Texture3D, out: wp.array(dtype=int)):
    out[0] = t.width
    out[1] = t.height
    out[2] = t.depth


@wp.func
def _through_func(t: wp.Texture2D, uv: wp.vec2f) -> float:
    return wp.texture_sample(t, uv, dtype=float) + float(t.width * 100 + t.height)


@wp.kernel
def sample_via_func(t: wp.Texture2D, uv: wp.array(dtype=wp.vec2f), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = _through_func(t, uv[i])


@wp.kernel
def grad_2d(t: wp.Texture2D, uv: wp.array(dtype=wp.vec2f), out: wp.array(dtype=float)):
    i = wp.tid()
    v = wp.texture_sample(t, uv[i], dtype=wp.vec2f)
    out[i] = v[0] + 10.0 * v[1]


@wp.kernel
def grad_1d(t: wp.Texture1D, us: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.texture_sample(t, us[i], dtype=float)


KERNELS = [sample_1d, sample_2d_v4, sample_2d_uv_v2, sample_2d_f, sample_3d_v4, sample_3d_split, sizes_3d,
           sample_via_func, grad_2d, grad_1d]

U_1D = np.array([-1.3, -0.6, -0.25, 0.0, 0.1, 0.25, 0.5, 0.6, 0.75, 0.9, 1.0, 1.1, 1.5, 2.2, 3.7, 4.0, 4.2, 5.1, 7.9],
                np.float32)


def _run_1d(tex, us):
    out = wp.zeros(len(us), dtype=float, device=CPU)
    wp.launch(sample_1d, len(us), inputs=[tex, wp.array(np.asarray(us, np.float32), device=CPU), out], device=CPU)
    return out.numpy()


# -- sampling ----------------------------------------------------------------------------------------------------------

# recorded: warp-lang 1.19.0, CPU, Texture1D([1, 2, 4, 8]) at texel-space coordinates U_1D
RECORDED_1D = {
    ("CLOSEST", "WRAP"): [4, 8, 8, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 4, 8, 1, 1, 2, 8],
    ("CLOSEST", "CLAMP"): [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 4, 8, 8, 8, 8, 8],
    ("CLOSEST", "MIRROR"): [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 4, 8, 8, 8, 4, 1],
    ("CLOSEST", "BORDER"): [0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 4, 8, 0, 0, 0, 0],
    ("LINEAR", "WRAP"): [4.8, 7.6, 6.25, 4.5, 3.8, 2.75, 1.0, 1.1, 1.25, 1.4, 1.5, 1.6, 2.0, 3.4, 6.6, 4.5, 3.1, 1.6,
                         5.2],
    ("LINEAR", "CLAMP"): [1, 1, 1, 1, 1, 1, 1, 1.1, 1.25, 1.4, 1.5, 1.6, 2.0, 3.4, 8, 8, 8, 8, 8],
    ("LINEAR", "MIRROR"): [1.8, 1.1, 1, 1, 1, 1, 1, 1.1, 1.25, 1.4, 1.5, 1.6, 2.0, 3.4, 8, 8, 8, 5.6, 1.0],
    ("LINEAR", "BORDER"): [0, 0, 0.25, 0.5, 0.6, 0.75, 1.0, 1.1, 1.25, 1.4, 1.5, 1.6, 2.0, 3.4, 6.4, 4.0, 2.4, 0, 0],
}


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("key", sorted(RECORDED_1D))
def test_1d_filter_and_address_modes_match_warp(key, normalized):
    filt, mode = key
    data = np.array([1, 2, 4, 8], np.float32)
    tex = wp.Texture1D(data, filter_mode=getattr(wp.TextureFilterMode, filt),
                       address_mode=getattr(wp.TextureAddressMode, mode), normalized_coords=normalized, device=CPU)
    us = U_1D / np.float32(4.0) if normalized else U_1D
    got = _run_1d(tex, us)
    np.testing.assert_allclose(got, RECORDED_1D[key], rtol=1e-5, atol=1e-5)
    ref = [ref_sample(data, 1, [u], filt, (mode,), normalized)[0] for u in us.astype(np.float64)]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_2d_bilinear_wrap_matches_recorded_warp_values():
    # recorded: warp-lang 1.19.0, CPU, Texture2D(rng(0).random((5, 7)), address_mode=WRAP)
    rng = np.random.default_rng(0)
    d = rng.random((5, 7)).astype(np.float32)
    p = (rng.random((6, 2)).astype(np.float32) * 3 - 1).astype(np.float32)
    tex = wp.Texture2D(d, address_mode=wp.TextureAddressMode.WRAP, device=CPU)
    out = wp.zeros(6, dtype=float, device=CPU)
    wp.launch(sample_2d_f, 6, inputs=[tex, wp.array(p, dtype=wp.vec2f, device=CPU), out], device=CPU)
    recorded = [0.03999692, 0.3642277, 0.1721287, 0.67923176, 0.55873835, 0.4871094]
    np.testing.assert_allclose(out.numpy(), recorded, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("filt", ["CLOSEST", "LINEAR"])
@pytest.mark.parametrize("channels", [1, 2, 4])
def test_2d_channels_and_per_axis_modes_against_reference(channels, filt):
    rng = np.random.default_rng(channels)
    shape = (5, 6) if channels == 1 else (5, 6, channels)
    d = rng.random(shape).astype(np.float32)
    modes = ("MIRROR", "BORDER")
    tex = wp.Texture2D(d, filter_mode=getattr(wp.TextureFilterMode, filt), address_mode_u=wp.TextureAddressMode.MIRROR,
                       address_mode_v=wp.TextureAddressMode.BORDER, device=CPU)
    assert (tex.width, tex.height, tex.num_channels) == (6, 5, channels)
    p = (rng.random((40, 2)) * 3 - 1).astype(np.float32)
    uv = wp.array(p, dtype=wp.vec2f, device=CPU)
    o4 = wp.zeros(40, dtype=wp.vec4f, device=CPU)
    o2 = wp.zeros(40, dtype=wp.vec2f, device=CPU)
    wp.launch(sample_2d_v4, 40, inputs=[tex, uv, o4], device=CPU)
    wp.launch(sample_2d_uv_v2, 40, inputs=[tex, uv, o2], device=CPU)
    ref = np.array([ref_sample(d, 2, q.astype(np.float64), filt, modes) for q in p])
    np.testing.assert_allclose(o4.numpy(), [_pad(r, 4) for r in ref], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(o2.numpy(), [_pad(r, 2) for r in ref], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("filt", ["CLOSEST", "LINEAR"])
def test_3d_against_reference_unnormalized(filt):
    rng = np.random.default_rng(3)
    d = rng.random((3, 4, 5, 4)).astype(np.float32)
    tex = wp.Texture3D(d, filter_mode=getattr(wp.TextureFilterMode, filt), normalized_coords=False,
                       address_mode=(wp.TextureAddressMode.WRAP, wp.TextureAddressMode.CLAMP,
                                     wp.TextureAddressMode.MIRROR), device=CPU)
    assert (tex.width, tex.height, tex.depth, tex.address_mode_w) == (5, 4, 3, wp.TextureAddressMode.MIRROR)
    p = (rng.random((30, 3)) * 8 - 2).astype(np.float32)
    uvw = wp.array(p, dtype=wp.vec3f, device=CPU)
    o4 = wp.zeros(30, dtype=wp.vec4f, device=CPU)
    o1 = wp.zeros(30, dtype=float, device=CPU)
    wp.launch(sample_3d_v4, 30, inputs=[tex, uvw, o4], device=CPU)
    wp.launch(sample_3d_split, 30, inputs=[tex, uvw, o1], device=CPU)
    ref = np.array([ref_sample(d, 3, q.astype(np.float64), filt, ("WRAP", "CLAMP", "MIRROR"), False) for q in p])
    np.testing.assert_allclose(o4.numpy(), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(o1.numpy(), ref[:, 0], rtol=1e-5, atol=1e-5)
    sizes = wp.zeros(3, dtype=int, device=CPU)
    wp.launch(sizes_3d, 1, inputs=[tex, sizes], device=CPU)
    assert sizes.numpy().tolist() == [5, 4, 3]


@pytest.mark.parametrize("np_dtype, expected", [
    # recorded: warp-lang 1.19.0, CPU, CLOSEST samples of [min, 1, 100, max]
    (np.uint8, [0.0, 0.003921568859368563, 0.3921568691730499, 1.0]),
    (np.int8, [-1.0, 0.007874015718698502, 0.787401556968689, 1.0]),
    (np.uint16, [0.0, 1.5259021893143654e-05, 0.0015259021893143654, 1.0]),
    (np.int16, [-1.0, 3.0518509447574615e-05, 0.0030518509447574615, 1.0]),
    (np.float16, [-2.5, 1.0, 100.0, 3.25]),
])
def test_integer_textures_read_normalized(np_dtype, expected):
    info = np.iinfo(np_dtype) if np_dtype != np.float16 else None
    vals = np.array([[info.min if info else -2.5, 1, 100, info.max if info else 3.25]], dtype=np_dtype)
    tex = wp.Texture2D(vals, filter_mode=wp.TextureFilterMode.CLOSEST, device=CPU)
    uv = wp.array(np.array([[0.1, 0.5], [0.3, 0.5], [0.6, 0.5], [0.9, 0.5]], np.float32), dtype=wp.vec2f, device=CPU)
    out = wp.zeros(4, dtype=float, device=CPU)
    wp.launch(sample_2d_f, 4, inputs=[tex, uv, out], device=CPU)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_uint8_linear_blends_normalized_values():
    vals = np.array([0, 255, 51], np.uint8)
    tex = wp.Texture1D(vals, device=CPU)
    np.testing.assert_allclose(_run_1d(tex, [1.0 / 3.0, 0.5, 2.0 / 3.0]), [0.5, 1.0, 0.6], rtol=1e-5)


@pytest.mark.parametrize("np_dtype", [np.int32, np.uint32])
def test_32bit_integer_textures_default_to_closest_and_convert(np_dtype):
    vals = np.array([[7, 1, 100, 16777217]], dtype=np_dtype)
    tex = wp.Texture2D(vals, device=CPU)
    assert tex.filter_mode == wp.TextureFilterMode.CLOSEST and tex.mip_filter_mode == wp.TextureFilterMode.CLOSEST
    uv = wp.array(np.array([[0.1, 0.5], [0.3, 0.5], [0.6, 0.5], [0.9, 0.5]], np.float32), dtype=wp.vec2f, device=CPU)
    out = wp.zeros(4, dtype=float, device=CPU)
    wp.launch(sample_2d_f, 4, inputs=[tex, uv, out], device=CPU)
    assert out.numpy().tolist() == [7.0, 1.0, 100.0, 16777216.0]  # recorded: warp-lang 1.19.0


def test_vector_dtype_arrays_and_func_parameters():
    d = np.arange(24, dtype=np.float32).reshape(3, 4, 2)
    tex = wp.Texture2D(wp.array(d, dtype=wp.vec2f, device=CPU), device=CPU)
    assert (tex.width, tex.height, tex.num_channels, tex.dtype) == (4, 3, 2, wp.float32)
    uv = wp.array(np.array([[0.3, 0.7]], np.float32), dtype=wp.vec2f, device=CPU)
    out = wp.zeros(1, dtype=float, device=CPU)
    wp.launch(sample_via_func, 1, inputs=[tex, uv, out], device=CPU)
    assert out.numpy()[0] == pytest.approx(14.2 + 403.0, rel=1e-6)  # 14.2: recorded from warp-lang 1.19.0


# -- gradients (recorded: warp-lang 1.19.0) ------------------------------------------------------------------------

@pytest.mark.parametrize("filt, norm, mode, grads", [
    ("CLOSEST", True, "WRAP", [0.0, 0.0, 0.0, 0.0]),
    ("LINEAR", True, "WRAP", [4.0, 8.0, -28.0, -28.0]),
    ("LINEAR", True, "BORDER", [4.0, 8.0, -32.0, 4.0]),
    ("LINEAR", False, "WRAP", [1.0, 2.0, -7.0, -7.0]),
    ("LINEAR", False, "BORDER", [1.0, 2.0, -8.0, 1.0]),
])
def test_coordinate_gradients_match_warp(filt, norm, mode, grads):
    data = np.array([1, 2, 4, 8], np.float32)
    tex = wp.Texture1D(data, filter_mode=getattr(wp.TextureFilterMode, filt),
                       address_mode=getattr(wp.TextureAddressMode, mode), normalized_coords=norm, device=CPU)
    u = np.array([0.3, 0.6, 0.95, -0.1], np.float32) * (1 if norm else 4)
    us = wp.array(u, device=CPU, requires_grad=True)
    out = wp.zeros(4, device=CPU, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(grad_1d, 4, inputs=[tex, us, out], device=CPU)
    out.grad = wp.ones(4, device=CPU)
    tape.backward()
    np.testing.assert_allclose(us.grad.numpy(), grads, rtol=1e-5, atol=1e-5)


def test_2d_gradients_match_warp():
    d2 = (np.arange(24, dtype=np.float32).reshape(3, 4, 2) ** 1.5).astype(np.float32)
    tex = wp.Texture2D(d2, address_mode=wp.TextureAddressMode.WRAP, device=CPU)
    uv = wp.array(np.array([[0.3, 0.7], [0.05, 0.9]], np.float32), dtype=wp.vec2f, device=CPU, requires_grad=True)
    out = wp.zeros(2, device=CPU, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(grad_2d, 2, inputs=[tex, uv, out], device=CPU)
    out.grad = wp.ones(2, device=CPU)
    tape.backward()
    np.testing.assert_allclose(out.numpy(), [663.72314453125, 731.2491455078125], rtol=1e-5)
    np.testing.assert_allclose(uv.grad.numpy(), [[501.2313232421875, 1492.0948486328125],
                                                 [-1564.0875244140625, -2491.046630859375]], rtol=1e-5)


# -- the Python object ------------------------------------------------------------------------------------------------

def test_properties_defaults_and_copies():
    d = np.arange(12, dtype=np.float32).reshape(3, 4)
    tex = wp.Texture2D(d, device=CPU)
    assert tex.ndim == 2 and tex.depth == 1 and tex.normalized_coords is True and tex.num_mip_levels == 1
    assert tex.filter_mode == wp.TextureFilterMode.LINEAR and not tex.is_mipmapped
    assert tex.address_mode_u == tex.address_mode_v == tex.address_mode_w == wp.TextureAddressMode.CLAMP
    assert isinstance(tex.id, int) and tex.id != 0
    out = np.zeros((3, 4), np.float32)
    tex.copy_to(out)
    np.testing.assert_array_equal(out, d)
    empty = wp.Texture2D(width=4, height=3, num_channels=1, dtype=wp.float32, device=CPU)
    empty.copy_from(tex)
    dst = wp.zeros((3, 4), dtype=float, device=CPU)
    empty.copy_to(dst)
    np.testing.assert_array_equal(dst.numpy(), d)
    tex.copy_from(d * 2)
    tex.copy_to(empty)
    empty.copy_to(out)
    np.testing.assert_array_equal(out, d * 2)
    assert int(wp.TextureResourceFlags.SURFACE_LDST) == 4
    assert issubclass(wp.Texture3D, wp.Texture)


def _raises(exc, message, fn, *args, **kwargs):
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    assert str(info.value) == message


F = np.zeros((2, 3), np.float32)


def test_error_dimensionality():
    _raises(ValueError, "Texture dimensionality must be 1, 2, or 3, got 4", wp.Texture, 4, F)


def test_error_filter_mode():
    _raises(ValueError, "Invalid texture filter mode: 7", wp.Texture2D, F, filter_mode=7)


def test_error_mip_filter_mode():
    _raises(ValueError, "Invalid texture mip filter mode: 5", wp.Texture2D, F, mip_filter_mode=5)


def test_error_address_mode():
    _raises(ValueError, "Invalid texture address mode for axis 1: 9", wp.Texture2D, F, address_mode_v=9)


def test_error_data_type():
    _raises(ValueError, "Data must be a Warp array or NumPy array", wp.Texture2D, [[1.0, 2.0]])


def test_error_bad_dtype():
    with pytest.raises(ValueError, match=r"^Unsupported texture dtype: .*float64.*\. Supported: uint8, uint16, "
                                         r"uint32, int8, int16, int32, float16, float32$"):
        wp.Texture2D(np.zeros((2, 2), np.float64), device=CPU)


def test_error_bad_channel_count():
    _raises(ValueError, "Texture num_channels must be 1, 2, or 4", wp.Texture2D, np.zeros((2, 2, 3), np.float32))


def test_error_data_ndim():
    _raises(ValueError, "2D texture data must be 2D or 3D array", wp.Texture2D, np.zeros(4, np.float32))


def test_error_vector_data_ndim():
    _raises(ValueError, "1D texture data with vector dtype must be a 1D wp.array", wp.Texture1D,
            wp.zeros((2, 2), dtype=wp.vec2f, device=CPU))


def test_error_width_mismatch():
    _raises(ValueError, "Specified texture width does not match data width", wp.Texture2D, F, width=5)


def test_error_height_mismatch():
    _raises(ValueError, "Specified texture height does not match data height", wp.Texture2D, F, height=5)


def test_error_depth_mismatch():
    _raises(ValueError, "Specified texture depth does not match data depth", wp.Texture3D,
            np.zeros((2, 2, 2), np.float32), depth=3)


def test_error_channels_mismatch():
    _raises(ValueError, "Specified texture channels do not match data channels (expected 4, got 1)", wp.Texture2D,
            F, num_channels=4)


def test_error_dtype_mismatch():
    _raises(ValueError, "Specified texture dtype does not match data dtype", wp.Texture2D, F, dtype=wp.uint8)


def test_error_width_positive():
    _raises(ValueError, "Texture width must be a positive integer", wp.Texture1D, num_channels=1, dtype=float)


def test_error_height_positive():
    _raises(ValueError, "Texture height must be a positive integer", wp.Texture2D, width=2, num_channels=1,
            dtype=float)


def test_error_depth_positive():
    _raises(ValueError, "Texture depth must be a positive integer", wp.Texture3D, width=2, height=2,
            num_channels=1, dtype=float)


def test_error_integer32_linear():
    _raises(ValueError, "32-bit integer textures require filter_mode=TextureFilterMode.CLOSEST", wp.Texture2D,
            np.zeros((2, 2), np.int32), filter_mode=wp.TextureFilterMode.LINEAR)


def test_error_mip_levels_negative():
    _raises(ValueError, "num_mip_levels must be >= 0", wp.Texture2D, F, num_mip_levels=-1)


def test_error_mip_levels_too_many():
    _raises(ValueError, "num_mip_levels (3) exceeds the maximum for base dimensions (3, 2) (2)", wp.Texture2D, F,
            num_mip_levels=3)


def test_mipmaps_are_not_implemented():
    with pytest.raises(NotImplementedError, match="num_mip_levels"):
        wp.Texture2D(F, num_mip_levels=2)


def test_error_copy_shape():
    tex = wp.Texture2D(F, device=CPU)
    _raises(ValueError, "Incompatible array shape for copy: texture shape=(2, 3), source shape=(3, 2)",
            tex.copy_from, np.zeros((3, 2), np.float32))


def test_error_copy_dtype():
    tex = wp.Texture2D(F, device=CPU)
    _raises(ValueError, "Incompatible array data type for copy: texture dtype=float32, source dtype=uint8, texture "
                        "channels=1, source channels=1", tex.copy_from, np.zeros((2, 3), np.uint8))


def test_error_cuda_handles_on_cpu():
    tex = wp.Texture2D(F, device=CPU)
    _raises(RuntimeError, "cuda_array is only supported for CUDA textures.", getattr, tex, "cuda_array")
    _raises(RuntimeError, "cuda_surface is only supported for CUDA textures.", getattr, tex, "cuda_surface")


def test_error_sample_dtype():
    @wp.kernel
    def bad(t: wp.Texture2D, out: wp.array(dtype=wp.vec3f)):
        out[0] = wp.texture_sample(t, wp.vec2f(0.5, 0.5), dtype=wp.vec3f)

    tex = wp.Texture2D(F, device=CPU)
    with pytest.raises(Exception, match=r"unsupported texture type `vec3f`\. Supported: float, vec2f, vec4f"):
        wp.launch(bad, 1, inputs=[tex, wp.zeros(1, dtype=wp.vec3f, device=CPU)], device=CPU)


def test_error_sample_python_scope():
    _raises(RuntimeError, "wp.texture_sample() can only be called inside Warp kernels and functions",
            wp.texture_sample, None, 0.5, dtype=float)


def test_error_texture_kind_argument():
    tex = wp.Texture1D(np.zeros(4, np.float32), device=CPU)
    with pytest.raises(Exception, match="Texture2D"):
        wp.launch(sample_2d_f, 1, inputs=[tex, wp.zeros(1, dtype=wp.vec2f, device=CPU),
                                          wp.zeros(1, dtype=float, device=CPU)], device=CPU)


# -- CUDA ---------------------------------------------------------------------------------------------------------------

def test_sampling_kernels_build_for_sm_90():
    from mlwarp.launching import cuda_compile

    if cuda_compile.compiler_available() is False:
        pytest.skip("the MLIR compiler is not installed")
    from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path

    if ptxas_path() is None:
        pytest.skip("ptxas is not installed")
    for k in KERNELS:
        meta = cuda_compile.build(k, 90)
        assert meta["arch"] == 90


@pytest.mark.skipif(wp.get_cuda_device_count() == 0, reason="no CUDA device")
def test_cuda_sampling_matches_cpu():
    rng = np.random.default_rng(5)
    d = rng.random((4, 5, 2)).astype(np.float32)
    p = (rng.random((32, 2)) * 3 - 1).astype(np.float32)
    results = []
    for device in (CPU, "cuda:0"):
        tex = wp.Texture2D(d, address_mode=wp.TextureAddressMode.MIRROR, device=device)
        out = wp.zeros(32, dtype=wp.vec4f, device=device)
        wp.launch(sample_2d_v4, 32, inputs=[tex, wp.array(p, dtype=wp.vec2f, device=device), out], device=device)
        results.append(out.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6, atol=1e-6)


@wp.kernel
def sample_each_texture(textures: wp.array(dtype=wp.Texture2D), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.texture_sample(textures[i], wp.vec2(0.25, 0.25), dtype=float)


def test_an_array_of_textures_in_a_kernel():
    # wp.array(textures, dtype=wp.Texture2D) and `textures[i]` in a kernel (values checked under warp-lang 1.19)
    closest = wp.TextureFilterMode.CLOSEST
    t1 = wp.Texture2D(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), filter_mode=closest)
    t2 = wp.Texture2D(np.array([[10.0, 20.0], [30.0, 40.0]], np.float32), filter_mode=closest)
    out = wp.zeros(2)
    wp.launch(sample_each_texture, dim=2, inputs=[wp.array([t1, t2], dtype=wp.Texture2D), out])
    np.testing.assert_array_equal(out.numpy(), [1.0, 10.0])
