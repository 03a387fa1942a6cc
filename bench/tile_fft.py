"""Tile FFT (issue 36): the row transforms of Warp's example_fft_poisson_navier_stokes_2d, a 512 x 512 vec2f grid,
one (1, 512) row tile a block (tile_load -> tile_fft -> tile_store, then the same with tile_ifft), in ms per
forward + inverse pass over the grid, also at 64 x 64; numpy.fft (complex64) beside it. Results checked against
numpy.fft.fft / ifft (Warp's inverse is unnormalised: numpy's ifft times N).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_of, emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

SIZES = (64, 512)
TOLERANCE = 1e-4  # relative to the largest magnitude: float32 FFTs of N <= 512 random values


def data(n):
    import numpy as np

    rng = np.random.default_rng(n)
    return rng.standard_normal((n, n, 2)).astype(np.float32)


def measure(wp, device_kw):
    import numpy as np

    out = {}
    for n in SIZES:
        N = wp.constant(n)

        @wp.kernel(module="unique")
        def rows_fft(x: wp.array2d(dtype=wp.vec2f), y: wp.array2d(dtype=wp.vec2f)):
            i = wp.tid()
            t = wp.tile_load(x, shape=(1, N), offset=(i, 0))
            wp.tile_fft(t)
            wp.tile_store(y, t, offset=(i, 0))

        @wp.kernel(module="unique")
        def rows_ifft(x: wp.array2d(dtype=wp.vec2f), y: wp.array2d(dtype=wp.vec2f)):
            i = wp.tid()
            t = wp.tile_load(x, shape=(1, N), offset=(i, 0))
            wp.tile_ifft(t)
            wp.tile_store(y, t, offset=(i, 0))

        x0 = data(n)
        x = wp.array(x0, dtype=wp.vec2f, **device_kw)
        f = wp.zeros((n, n), dtype=wp.vec2f, **device_kw)
        b = wp.zeros((n, n), dtype=wp.vec2f, **device_kw)

        def run():
            wp.launch_tiled(rows_fft, dim=n, inputs=[x, f], block_dim=n // 2, **device_kw)
            wp.launch_tiled(rows_ifft, dim=n, inputs=[f, b], block_dim=n // 2, **device_kw)

        run()
        z = x0[..., 0] + 1j * x0[..., 1]
        for got, want in ((f.numpy(), np.fft.fft(z, axis=1)), (b.numpy(), z * n)):
            err = np.abs(got[..., 0] + 1j * got[..., 1] - want).max() / np.abs(want).max()
            if not err <= TOLERANCE:
                raise SystemExit(f"FAILED: tile FFT {n}: relative error {err:.3g} > {TOLERANCE}")
        out[str(n)] = best_of(run, repeat=7) * 1e3
    return out


def numpy_ms(n):
    import numpy as np

    x0 = data(n)
    z = (x0[..., 0] + 1j * x0[..., 1]).astype(np.complex64)
    return best_of(lambda: np.fft.ifft(np.fft.fft(z, axis=1), axis=1), repeat=7) * 1e3


def main():
    if warp_mode():
        import warp as wp

        wp.config.quiet = True
        wp.init()
        return emit_warp(measure(wp, {"device": "cpu"}))
    import mlwarp as wp

    m = measure(wp, {})
    w = run_warp(__file__) or {}
    rows = [(f"{n} x {n}, (1, {n}) row tiles: tile_fft + tile_ifft", m[str(n)], numpy_ms(n), w.get(str(n)))
            for n in SIZES]
    lines = print_table("Tile FFT of every row, forward and inverse", "ms", rows, higher_is_better=False)
    save_json("tile_fft", {"table": lines, "data": {"mlwarp": m, "warp": w or None}})


if __name__ == "__main__":
    main()
