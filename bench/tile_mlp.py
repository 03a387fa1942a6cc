"""A tile MLP forward pass: y = W3 relu(W2 relu(W1 x + b1) + b2) for a batch of 16384 float32 samples of 64
features, 64 -> 64 -> 64 -> 16, each block taking 32 samples (the columns of a 64 x 32 tile of x) through
tile_load -> tile_matmul -> tile_broadcast of the bias -> tile_map(relu) -> ... -> tile_store, the weights
loaded as whole tiles. numpy computes the same forward (its BLAS matmuls on the whole batch, all cores) as the
reference and the result check; in GFLOP/s of the three matmuls.

Warp runs tile kernels on the CPU on one thread with block_dim 1; mlwarp spreads the blocks over all cores
and the float matmuls are register-blocked outer products (warp-cpu-vectorize-tile-matmul).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_of, emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

BATCH = 16384
FEATURES, HIDDEN, OUTPUTS = 64, 64, 16
COLUMNS = 32  # samples a block
TOLERANCE = 1e-4  # relative to the largest output, against float64
FLOPS = 2 * BATCH * (FEATURES * HIDDEN + HIDDEN * HIDDEN + HIDDEN * OUTPUTS)


def weights():
    import numpy as np

    rng = np.random.default_rng(7)
    return {"x": rng.standard_normal((FEATURES, BATCH), dtype=np.float32),
            "w1": rng.standard_normal((HIDDEN, FEATURES), dtype=np.float32) / 8,
            "b1": rng.standard_normal((HIDDEN, 1), dtype=np.float32) / 8,
            "w2": rng.standard_normal((HIDDEN, HIDDEN), dtype=np.float32) / 8,
            "b2": rng.standard_normal((HIDDEN, 1), dtype=np.float32) / 8,
            "w3": rng.standard_normal((OUTPUTS, HIDDEN), dtype=np.float32) / 8}


def reference(p, dtype):
    import numpy as np

    p = {k: v.astype(dtype) for k, v in p.items()}
    h = np.maximum(p["w1"] @ p["x"] + p["b1"], 0)
    h = np.maximum(p["w2"] @ h + p["b2"], 0)
    return p["w3"] @ h


def measure(wp, device_kw):
    import numpy as np

    IN, HID, OUT, COLS = wp.constant(FEATURES), wp.constant(HIDDEN), wp.constant(OUTPUTS), wp.constant(COLUMNS)

    @wp.func
    def relu(v: float):
        return wp.max(v, 0.0)

    @wp.kernel
    def mlp(x: wp.array2d(dtype=float), w1: wp.array2d(dtype=float), b1: wp.array2d(dtype=float),
            w2: wp.array2d(dtype=float), b2: wp.array2d(dtype=float), w3: wp.array2d(dtype=float),
            y: wp.array2d(dtype=float)):
        i = wp.tid()
        xt = wp.tile_load(x, shape=(IN, COLS), offset=(0, i * COLS))
        h = wp.tile_matmul(wp.tile_load(w1, shape=(HID, IN)), xt)
        h = wp.tile_map(relu, h + wp.tile_broadcast(wp.tile_load(b1, shape=(HID, 1)), shape=(HID, COLS)))
        h2 = wp.tile_matmul(wp.tile_load(w2, shape=(HID, HID)), h)
        h2 = wp.tile_map(relu, h2 + wp.tile_broadcast(wp.tile_load(b2, shape=(HID, 1)), shape=(HID, COLS)))
        wp.tile_store(y, wp.tile_matmul(wp.tile_load(w3, shape=(OUT, HID)), h2), offset=(0, i * COLS))

    p = weights()
    arrays = {k: wp.array(v, **device_kw) for k, v in p.items()}
    y = wp.zeros((OUTPUTS, BATCH), dtype=float, **device_kw)

    def run():
        wp.launch_tiled(mlp, dim=BATCH // COLUMNS, inputs=[arrays[k] for k in ("x", "w1", "b1", "w2", "b2", "w3")]
                        + [y], block_dim=64, **device_kw)

    run()
    seconds = best_of(run, repeat=9)
    # checked after the timing: numpy's matmul leaves OpenBLAS's threads spinning on the other cores for a while
    want = reference(p, np.float64)
    err = float(np.max(np.abs(y.numpy() - want)) / np.max(np.abs(want)))
    if not err <= TOLERANCE:
        raise SystemExit(f"FAILED: tile MLP: max relative error {err:.3g} > {TOLERANCE}")
    return {"gflops": FLOPS / seconds / 1e9, "rel_err": err}


def numpy_gflops():
    import numpy as np

    p = weights()
    return FLOPS / best_of(lambda: reference(p, np.float32), repeat=9) / 1e9


def main():
    if warp_mode():
        import warp as wp

        wp.config.quiet = True
        wp.init()
        return emit_warp(measure(wp, {"device": "cpu"}))
    import mlwarp as wp

    m = measure(wp, {})
    n = numpy_gflops()
    w = run_warp(__file__) or {}
    rows = [(f"{FEATURES} -> {HIDDEN} -> {HIDDEN} -> {OUTPUTS}, batch {BATCH} float32, {COLUMNS} samples a block",
             m["gflops"], n, w.get("gflops"))]
    lines = print_table("Tile MLP forward pass", "GFLOP/s of the matmuls", rows, higher_is_better=True)
    lines += ["", f"mlwarp at {100 * m['gflops'] / n:.0f}% of numpy's (BLAS matmuls on the whole batch, same cores); "
                  f"result within {m['rel_err']:.2g} (relative) of float64"]
    print(lines[-1])
    save_json("tile_mlp", {"table": lines, "data": {"mlwarp": m, "numpy": n, "warp": w or None}})


if __name__ == "__main__":
    main()
