"""Tiled reduction: the sum of 1e7 float32 through tiles (each block tile_load-s 4096 values, tile_sum-s them and
tile_atomic_add-s the sum into the total), in GB/s of input read; numpy's sum (its pairwise SIMD loop, one thread)
beside it, and the machine's memory bandwidth as the reference: stream_sum.c, a C/OpenMP sum in any order on all
cores, over an array 4x the last-level cache (STREAM's rule: a 40 MB array is partly cache-resident on a 32 MB L3,
and wholly on a 480 MB one), with the same C sum over the same 1e7 floats beside it. The result is checked
against float64.

Warp runs each block's tile ops on one thread with block_dim 1; mlwarp spreads the blocks over all cores.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_of, c_stream, emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

N = 10_000_000
TILE = 4096
TOLERANCE = 1e-4  # relative, against float64: float32 sums of 4096 values, then 2442 atomic adds


def data():
    import numpy as np

    return np.random.default_rng(0).random(N, dtype=np.float32)


def measure(wp, device_kw):
    import numpy as np

    TILE_SIZE = wp.constant(TILE)

    @wp.kernel
    def tile_total(x: wp.array(dtype=float), total: wp.array(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(x, shape=TILE_SIZE, offset=i * TILE_SIZE)
        wp.tile_atomic_add(total, wp.tile_sum(t))

    x0 = data()
    x = wp.array(x0, dtype=float, **device_kw)
    total = wp.zeros(1, dtype=float, **device_kw)
    blocks = (N + TILE - 1) // TILE

    def run():
        total.zero_()
        wp.launch_tiled(tile_total, dim=blocks, inputs=[x, total], block_dim=64, **device_kw)

    run()
    want = float(np.sum(x0, dtype=np.float64))
    err = abs(float(total.numpy()[0]) - want) / want
    if not err <= TOLERANCE:
        raise SystemExit(f"FAILED: tiled reduction: relative error {err:.3g} > {TOLERANCE}")
    seconds = best_of(run, repeat=30)
    return {"gbs": N * 4 / seconds / 1e9, "rel_err": err}


def last_level_cache_bytes() -> int:
    """The largest CPU cache's size (Linux sysfs: the highest level cpu0 has), for sizing a memory-bandwidth
    measurement past it; 64 MB where it cannot be read."""
    import glob

    found = {}
    for folder in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
        try:
            with open(os.path.join(folder, "level")) as f:
                level = int(f.read())
            with open(os.path.join(folder, "size")) as f:
                text = f.read().strip()
        except (OSError, ValueError):
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        found[level] = int(text.rstrip("KMG")) * scale
    return found[max(found)] if found else 64 << 20


def numpy_gbs():
    import numpy as np

    x0 = data()
    return N * 4 / best_of(lambda: np.sum(x0), repeat=30) / 1e9


def main():
    if warp_mode():
        import warp as wp

        wp.config.quiet = True
        wp.init()
        return emit_warp(measure(wp, {"device": "cpu"}))
    import mlwarp as wp

    m = measure(wp, {})
    n = numpy_gbs()
    w = run_warp(__file__) or {}
    lines = print_table(f"Tiled reduction, sum of {N:.0e} float32 ({TILE}-element tiles)", "GB/s of input",
                        [("tile_load -> tile_sum -> tile_atomic_add", m["gbs"], n, w.get("gbs"))],
                        higher_is_better=True)
    c_sum = c_stream("stream_sum.c")
    same_size = c_sum(N) if c_sum else None
    dram_n = max(N, 4 * last_level_cache_bytes() // 4)
    bandwidth = c_sum(dram_n) if c_sum else None
    share = (f"{100 * m['gbs'] / bandwidth:.0f}% of the machine's memory bandwidth (stream_sum.c, a C/OpenMP "
             f"order-free sum, over {dram_n:.2g} floats, 4x the last-level cache as STREAM's rule asks: "
             f"{bandwidth:.1f} GB/s) and {100 * m['gbs'] / same_size:.0f}% of that C sum over the same {N:.0e} floats "
             f"({same_size:.1f} GB/s: the caches hold part of them), " if bandwidth else "")
    lines += ["", f"mlwarp reads at {share}{100 * m['gbs'] / n:.0f}% of numpy's sum (one thread, its SIMD loop); "
                  f"result within {m['rel_err']:.2g} (relative) of float64"]
    print(lines[-1])
    save_json("tile_reduce", {"table": lines, "data": {"mlwarp": m, "numpy": n, "warp": w or None,
                                                      "c_openmp_sum": bandwidth, "c_openmp_sum_floats": dram_n,
                                                      "c_openmp_sum_same_size": same_size}})


if __name__ == "__main__":
    main()
