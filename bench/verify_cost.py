"""What the warp verifier (compiler/verify.py) costs a compile that runs it (debug builds, MLWARP_VERIFY_IR=1: the
tests): the time in its checks after the frontend and each stage, against the whole first launch (compile in
this process, then launch), for a scalar kernel, a composite-heavy one and a tiled GEMM. mlwarp only (Warp has no
such verifier); a release build runs none of it. Each kernel twice: the second compile finds MLIR's and the
bindings' one-time costs paid.

    .venv/bin/python bench/verify_cost.py
"""

import os
import tempfile
import time

os.environ["MLWARP_CACHE_DIR"] = tempfile.mkdtemp(prefix="mlwarp-verify-cost-")
os.environ["MLWARP_COMPILE_IN_PROCESS"] = "1"
os.environ["MLWARP_VERIFY_IR"] = "1"

import mlwarp as wp  # noqa: E402
from mlwarp.compiler import build  # noqa: E402

TILE = 16
spent = []
_check = build.check_module


def _timed_check(module, after):
    t = time.perf_counter()
    still = _check(module, after)
    spent.append((after, (time.perf_counter() - t) * 1e3))
    return still


build.check_module = _timed_check


def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


def rigid(q: wp.array(dtype=wp.transform), v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33),
          out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    t = q[i]
    p = wp.transform_point(t, v[i])
    r = wp.quat_rotate(wp.transform_get_rotation(t), p)
    w = m[i] * r + wp.cross(p, r)
    for k in range(3):
        w = w + wp.normalize(w) * wp.sin(float(k)) * wp.length(p)
    out[i] = w


def gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    s = wp.tile_zeros(shape=(TILE, TILE), dtype=float)
    for k in range(2):
        a = wp.tile_load(A, shape=(TILE, TILE), offset=(i * TILE, k * TILE))
        b = wp.tile_load(B, shape=(TILE, TILE), offset=(k * TILE, j * TILE))
        wp.tile_matmul(a, b, s)
    wp.tile_store(C, s, offset=(i * TILE, j * TILE))


def main():
    cases = [(saxpy, 64, lambda: [wp.zeros(64, dtype=float), wp.zeros(64, dtype=float), 2.0], False),
             (rigid, 8, lambda: [wp.zeros(8, dtype=wp.transform), wp.zeros(8, dtype=wp.vec3),
                                 wp.zeros(8, dtype=wp.mat33), wp.zeros(8, dtype=wp.vec3)], False),
             (gemm, (2, 2), lambda: [wp.zeros((32, 32), dtype=float) for _ in range(3)], True)]
    for round_ in ("first", "again"):
        for func, dim, inputs, tiled in cases:
            kernel = wp.Kernel(func, key=f"{func.__name__}_{round_}")
            spent.clear()
            t = time.perf_counter()
            if tiled:
                wp.launch_tiled(kernel, dim=dim, inputs=inputs(), block_dim=1, device="cpu")
            else:
                wp.launch(kernel, dim=dim, inputs=inputs(), device="cpu")
            total = (time.perf_counter() - t) * 1e3
            checks = sum(ms for _, ms in spent)
            print(f"{func.__name__:>6} ({round_}): first launch {total:7.1f} ms, verifier {checks:6.2f} ms "
                  f"({100 * checks / total:4.1f}%): " + ", ".join(f"{a}={ms:.2f}" for a, ms in spent))


if __name__ == "__main__":
    main()
