"""Launch overhead: a kernel with 4 arrays + 2 scalars over 16 threads (the work itself is
negligible), in microseconds per launch: `wp.launch` and a recorded `Launch` replayed with
`launch()` (`wp.launch(..., record_cmd=True)`). numpy column: one small ufunc call, for scale."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_of, emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

N = 16
TIMING = dict(repeat=9, number=5000)


def measure(wp, device_kw):
    @wp.kernel
    def four_arrays_two_scalars(a: wp.array(dtype=float), b: wp.array(dtype=float), c: wp.array(dtype=float),
                                d: wp.array(dtype=float), s: float, k: int):
        i = wp.tid()
        d[i] = a[i] * s + b[i] + c[i] + float(k)

    arrays = [wp.zeros(N, dtype=float, **device_kw) for _ in range(4)]
    inputs = [*arrays, 1.5, 3]
    wp.launch(four_arrays_two_scalars, N, inputs=inputs, **device_kw)
    launch = best_of(lambda: wp.launch(four_arrays_two_scalars, N, inputs=inputs, **device_kw), **TIMING)
    cmd = wp.launch(four_arrays_two_scalars, N, inputs=inputs, record_cmd=True, **device_kw)
    replay = best_of(cmd.launch, **TIMING)
    return {"launch": launch * 1e6, "replay": replay * 1e6}


def main():
    if warp_mode():
        import warp as wp

        wp.config.quiet = True
        wp.init()
        return emit_warp(measure(wp, {"device": "cpu"}))
    import numpy as np

    import mlwarp as wp

    m = measure(wp, {})
    x = np.zeros(N, np.float32)
    ufunc = best_of(lambda: np.add(x, x, out=x), **TIMING) * 1e6
    w = run_warp(__file__) or {}
    rows = [("wp.launch, 4 arrays + 2 scalars", m["launch"], ufunc, w.get("launch")),
            ("recorded Launch.launch()", m["replay"], ufunc, w.get("replay"))]
    lines = print_table("Launch overhead", "us per launch", rows, higher_is_better=False)
    save_json("launch_overhead", {"table": lines, "data": {"mlwarp": m, "numpy_ufunc": ufunc, "warp": w}})


if __name__ == "__main__":
    main()
