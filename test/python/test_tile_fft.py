"""wp.tile_fft / wp.tile_ifft against numpy.fft: the radix-2 FFT (power-of-two lengths, issue 36) and the DFT sum
(other lengths), float32 and float64, tiles of two and three dimensions, and their gradients."""

import numpy as np
import pytest

import mlwarp as wp


def transform_kernel(shape, vec):
    """A kernel loading one tile of `shape`, storing its tile_fft and then the tile_ifft of that."""
    array_t = wp.array(dtype=vec, ndim=len(shape))

    @wp.kernel(module="unique")
    def transform(x: array_t, fwd: array_t, back: array_t):
        t = wp.tile_load(x, shape=shape)
        wp.tile_fft(t)
        wp.tile_store(fwd, t)
        wp.tile_ifft(t)
        wp.tile_store(back, t)

    return transform


def as_complex(a):
    return a[..., 0] + 1j * a[..., 1]


@pytest.mark.parametrize("shape, vec, tol", [
    ((1, 2), wp.vec2d, 1e-12),
    ((4, 16), wp.vec2d, 1e-12),
    ((2, 3, 8), wp.vec2d, 1e-12),  # two leading dimensions
    ((3, 256), wp.vec2f, 2e-5),
    ((2, 512), wp.vec2d, 1e-11),
    ((2, 6), wp.vec2d, 1e-12),  # not a power of two: the DFT sum
    ((1, 12), wp.vec2f, 2e-6),
])
def test_fft_and_ifft_match_numpy(shape, vec, tol):
    rng = np.random.default_rng(sum(shape))
    real = np.float32 if vec is wp.vec2f else np.float64
    z = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex128)
    x = wp.array(np.stack([z.real, z.imag], axis=-1).astype(real), dtype=vec)
    fwd, back = wp.zeros(shape, dtype=vec), wp.zeros(shape, dtype=vec)
    wp.launch_tiled(transform_kernel(shape, vec), dim=1, inputs=[x, fwd, back], block_dim=8)
    n = shape[-1]
    zx = as_complex(x.numpy().astype(np.float64))  # the input as the kernel saw it (float32 rounded)
    want = np.fft.fft(zx, axis=-1)
    scale = np.abs(want).max()
    np.testing.assert_allclose(as_complex(fwd.numpy()), want, rtol=0, atol=tol * scale)
    # Warp's inverse is unnormalised: numpy's ifft times N, here of the forward transform, so N times the input
    np.testing.assert_allclose(as_complex(back.numpy()), n * zx, rtol=0, atol=tol * n * np.abs(zx).max() * 4)


def test_fft_of_an_impulse_and_of_a_constant_row():
    """Closed forms: the transform of a unit impulse at 0 is all ones; of a constant row, N at frequency 0."""
    shape = (2, 32)
    x0 = np.zeros(shape + (2,))
    x0[0, 0, 0] = 1.0
    x0[1, :, 0] = 1.0
    x = wp.array(x0, dtype=wp.vec2d)
    fwd, back = wp.zeros(shape, dtype=wp.vec2d), wp.zeros(shape, dtype=wp.vec2d)
    wp.launch_tiled(transform_kernel(shape, wp.vec2d), dim=1, inputs=[x, fwd, back], block_dim=4)
    got = as_complex(fwd.numpy())
    np.testing.assert_allclose(got[0], np.ones(32), atol=1e-15)
    want = np.zeros(32)
    want[0] = 32
    np.testing.assert_allclose(got[1], want, atol=1e-13)


def gradient_kernel(shape, inverse):
    @wp.kernel(module="unique")
    def transform(x: wp.array2d(dtype=wp.vec2d), y: wp.array2d(dtype=wp.vec2d)):
        t = wp.tile_load(x, shape=shape)
        if wp.static(inverse):
            wp.tile_ifft(t)
        else:
            wp.tile_fft(t)
        wp.tile_store(y, t)

    return transform


@pytest.mark.parametrize("inverse", [False, True])
def test_fft_gradient_is_the_transform_of_the_other_sign(inverse):
    """y = F x (F unnormalised, of sign -+), so dL/dx = conj(F)^T g = the transform of the other sign of g (Warp's
    rule); checked with numpy's fft: ifft(g) * N for the forward, fft(g) for the inverse."""
    shape = (3, 64)
    rng = np.random.default_rng(26 + inverse)
    x = wp.array(rng.standard_normal(shape + (2,)), dtype=wp.vec2d, requires_grad=True)
    y = wp.zeros(shape, dtype=wp.vec2d, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(gradient_kernel(shape, inverse), dim=1, inputs=[x, y], block_dim=4)
    g = rng.standard_normal(shape + (2,))
    tape.backward(grads={y: wp.array(g, dtype=wp.vec2d)})
    gz = as_complex(g)
    want = np.fft.fft(gz, axis=-1) if inverse else np.fft.ifft(gz, axis=-1) * shape[-1]
    np.testing.assert_allclose(as_complex(x.grad.numpy()), want, rtol=0, atol=1e-11)
