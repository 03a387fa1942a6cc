"""Tiled GEMM: the kernel of Warp's documentation (tile_load -> tile_matmul -> tile_store, 32 x 32 x 32 tiles,
float32), C = A @ B for square 256, 512 and 1024 matrices, in GFLOP/s; numpy's matmul (its BLAS, all cores) as
the reference. The results are checked against numpy (float64) after every size is timed: numpy's matmul leaves
OpenBLAS's threads spinning on the other cores for a while, and launches timed then ran at half speed
(121-197 GFLOP/s instead of 250-270 on 2 cores).

Warp runs tile kernels on the CPU on one thread with block_dim 1; mlwarp lowers the tiles through linalg to
loops (each block's tile_matmul a loop nest), its blocks spread over all cores.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_of, emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

SIZES = (256, 512, 1024)
TILE = 32
TOLERANCE = 1e-3  # relative, against float64


def measure(wp, device_kw, sizes=SIZES):
    import numpy as np

    TILE_M = wp.constant(TILE)
    TILE_N = wp.constant(TILE)
    TILE_K = wp.constant(TILE)

    @wp.kernel
    def tile_gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
        i, j = wp.tid()
        sum = wp.tile_zeros(shape=(TILE_M, TILE_N), dtype=wp.float32)
        K = A.shape[1]
        count = int(K / TILE_K)
        for k in range(0, count):
            a = wp.tile_load(A, shape=(TILE_M, TILE_K), offset=(i * TILE_M, k * TILE_K))
            b = wp.tile_load(B, shape=(TILE_K, TILE_N), offset=(k * TILE_K, j * TILE_N))
            wp.tile_matmul(a, b, sum)
        wp.tile_store(C, sum, offset=(i * TILE_M, j * TILE_N))

    out, timed = {}, []
    for n in sizes:
        rng = np.random.default_rng(n)
        a0, b0 = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
        a, b = wp.array(a0, **device_kw), wp.array(b0, **device_kw)
        c = wp.zeros((n, n), dtype=float, **device_kw)

        def run():
            wp.launch_tiled(tile_gemm, dim=(n // TILE, n // TILE), inputs=[a, b, c], block_dim=64, **device_kw)

        run()
        seconds = best_of(run, repeat=7)
        timed.append((n, a0, b0, c, seconds))
    for n, a0, b0, c, seconds in timed:
        want = a0.astype(np.float64) @ b0
        err = float(np.max(np.abs(c.numpy() - want)) / np.max(np.abs(want)))
        if not err <= TOLERANCE:
            raise SystemExit(f"FAILED: tiled GEMM {n}: max relative error {err:.3g} > {TOLERANCE}")
        out[str(n)] = {"gflops": 2 * n ** 3 / seconds / 1e9, "rel_err": err}
    return out


def numpy_gflops(sizes=SIZES):
    import numpy as np

    out = {}
    for n in sizes:
        rng = np.random.default_rng(n)
        a0, b0 = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
        seconds = best_of(lambda: a0 @ b0, repeat=7)
        out[str(n)] = 2 * n ** 3 / seconds / 1e9
    return out


def main():
    sizes = tuple(int(a) for a in sys.argv[1:] if a != "--warp") or SIZES
    if warp_mode():
        import warp as wp

        wp.config.quiet = True
        wp.init()
        return emit_warp(measure(wp, {"device": "cpu"}, sizes))
    import mlwarp as wp

    m = measure(wp, {}, sizes)
    n = numpy_gflops(sizes)
    w = run_warp(__file__, *map(str, sizes)) or {}
    rows = [(f"{s}^2 float32, 32x32x32 tiles (the documentation's kernel)", m[str(s)]["gflops"], n[str(s)],
             w.get(str(s), {}).get("gflops")) for s in sizes]
    lines = print_table("Tiled GEMM", "GFLOP/s", rows, higher_is_better=True)
    share = ", ".join(f"{s}: {100 * m[str(s)]['gflops'] / n[str(s)]:.1f}%" for s in sizes)
    lines += ["", f"mlwarp as a share of numpy's BLAS (same cores): {share}; results within "
                  f"{max(v['rel_err'] for v in m.values()):.2g} (relative) of float64"]
    print(lines[-1])
    save_json("tile_gemm", {"table": lines, "data": {"mlwarp": m, "numpy": n, "warp": w or None}})


if __name__ == "__main__":
    main()
