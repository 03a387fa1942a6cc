"""Warp's example_tile_mcgp.py (Monte Carlo walk on spheres inside a 16,384-triangle sphere mesh: per pixel, a 128-lane
tile_map of the walk, each step a mesh_query_point, then tile_sum), its sphere_walk kernel on a 16 x 16 pixel slice at
z = 0 (32,768 walks), launched as the example does; beside it the same walks as a plain kernel (one thread a walk)
and the mesh queries alone (8 mesh_query_point + mesh_eval_position a thread), to tell the tile path from the
queries. Times are CPU seconds of the process (its threads together: the machine is shared, and CPU time counts
the work, not the waiting); the pixels are checked against Warp's recorded mean and against the plain kernel's.

Issue 36: the tile kernel took 2x the plain kernel (each walk ran twice: the fused tile_map's leftover copy,
passes/fused_producers.py); then the mesh query's own cost, 1.7-1.9x Warp's with its vec3 math kept as LLVM
vectors (warp-cpu-keep-vectors now splits them; issues 32/36, bench/mesh_queries.py): tiled 1.53 -> 0.89 s,
plain 1.48 -> 0.92, queries 3.01 -> 1.71, Warp 0.91, 0.87-0.95, 1.52-1.60 (2026-12-06, two threads' CPU time).
"""

import importlib.util
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

HEIGHT = 16
EXAMPLE = "examples/tile/example_tile_mcgp.py"


def cpu_best(fn, wp, repeat=3):
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        wp.synchronize()
        best = min(best, time.process_time() - t)
    return best


def load_example(wp):
    """The example module from warp-lang's installed examples, its `import warp` bound to `wp`."""
    import warp_examples_path

    path = warp_examples_path.find(EXAMPLE)
    saved = sys.modules.get("warp")
    sys.modules["warp"] = wp
    try:
        spec = importlib.util.spec_from_file_location("example_tile_mcgp", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:  # (a `warp` left in sys.modules would make common.warp_python take this interpreter for Warp's)
        if saved is not None:
            sys.modules["warp"] = saved
        else:
            del sys.modules["warp"]
    return module


def measure(wp):
    import numpy as np

    ex = load_example(wp)
    T = ex.TILE_SIZE

    @wp.kernel
    def plain_walk(mesh_id: wp.uint64, seed: int, samples: wp.array2d(dtype=wp.vec3), out: wp.array3d(dtype=float)):
        i, j, k = wp.tid()
        out[i, j, k] = ex.walk((i * T + j) * T + k, mesh_id, seed, samples[i, j])

    @wp.kernel
    def queries(mesh_id: wp.uint64, samples: wp.array2d(dtype=wp.vec3), out: wp.array3d(dtype=float)):
        i, j, k = wp.tid()
        p = samples[i, j] + wp.vec3(0.0, 0.0, float(k) * 0.001)
        s = float(0.0)
        for _ in range(8):
            s += ex.update_radius(mesh_id, p)
        out[i, j, k] = s

    e = ex.Example(ex.SEED, height=HEIGHT, slices=1)
    walks = wp.zeros((HEIGHT, HEIGHT, T), dtype=float)

    def tiled():
        wp.launch_tiled(ex.sphere_walk, dim=[HEIGHT, HEIGHT], inputs=[e.mesh.id, ex.SEED, 0.0, e.grid],
                        outputs=[e.pixels], block_dim=T)

    def plain():
        wp.launch(plain_walk, dim=(HEIGHT, HEIGHT, T), inputs=[e.mesh.id, ex.SEED, e.grid, walks])

    def query():
        wp.launch(queries, dim=(HEIGHT, HEIGHT, T), inputs=[e.mesh.id, e.grid, walks])

    out = {"tiled": cpu_best(tiled, wp)}
    pixels = e.pixels.numpy()
    out["plain"] = cpu_best(plain, wp)
    walk_means = walks.numpy().mean(axis=-1)
    if not np.allclose(pixels, walk_means, atol=1e-5):
        raise SystemExit("FAILED: the tile kernel's pixels differ from the plain kernel's walk means")
    out["query"] = cpu_best(query, wp)
    out["pixel_mean"] = float(pixels.mean())
    return out


def main():
    if warp_mode():
        import warp as wp

        wp.config.quiet = True
        wp.init()
        return emit_warp(measure(wp))
    import mlwarp as wp

    m = measure(wp)
    w = run_warp(__file__) or {}
    if w and abs(m["pixel_mean"] - w["pixel_mean"]) > 1e-5:
        raise SystemExit(f"FAILED: pixel mean {m['pixel_mean']} vs Warp's {w['pixel_mean']}")
    rows = [("sphere_walk (tile_map of the walk + tile_sum), as the example launches it", m["tiled"], None, w.get("tiled")),
            ("the same walks, one thread each", m["plain"], None, w.get("plain")),
            ("8 mesh_query_point + mesh_eval_position a thread", m["query"], None, w.get("query"))]
    lines = print_table(f"example_tile_mcgp, a {HEIGHT} x {HEIGHT} slice (32,768 walks)", "CPU s", rows,
                        higher_is_better=False)
    save_json("tile_mcgp", {"table": lines, "data": {"mlwarp": m, "warp": w or None}})


if __name__ == "__main__":
    main()
