"""Particles: 65536 particles x 1000 frames of a gravity + ground-bounce integrator (one kernel
launch per frame, float arrays per component), in ns per particle-step."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_of, emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

N = 65536
FRAMES = 1000
DT = 1.0 / 60.0
G = 9.8


def initial_state():
    import numpy as np

    rng = np.random.default_rng(0)
    pos = rng.uniform(0.0, 10.0, (3, N)).astype(np.float32)
    vel = rng.uniform(-1.0, 1.0, (3, N)).astype(np.float32)
    return pos, vel


def measure(wp, device_kw):
    @wp.kernel
    def step(px: wp.array(dtype=float), py: wp.array(dtype=float), pz: wp.array(dtype=float),
             vx: wp.array(dtype=float), vy: wp.array(dtype=float), vz: wp.array(dtype=float), dt: float, g: float):
        i = wp.tid()
        v = vy[i] - g * dt
        y = py[i] + v * dt
        if y < 0.0:
            y = -y
            v = -0.9 * v
        px[i] = px[i] + vx[i] * dt
        py[i] = y
        pz[i] = pz[i] + vz[i] * dt
        vy[i] = v

    pos, vel = initial_state()
    arrays = [wp.array(a, dtype=float, **device_kw) for a in (*pos, *vel)]
    args = [*arrays, DT, G]
    wp.launch(step, N, inputs=args, **device_kw)

    def run():
        for _ in range(FRAMES):
            wp.launch(step, N, inputs=args, **device_kw)

    return best_of(run, repeat=3) / (N * FRAMES) * 1e9, arrays[1].numpy()


def numpy_version():
    import numpy as np

    pos, vel = initial_state()
    px, py, pz = pos
    vx, vy, vz = vel
    dt, g = np.float32(DT), np.float32(G)

    def run():
        for _ in range(FRAMES):
            vy[:] -= g * dt
            py[:] += vy * dt
            below = py < 0
            py[below] = -py[below]
            vy[below] *= np.float32(-0.9)
            px[:] += vx * dt
            pz[:] += vz * dt

    return best_of(run, repeat=3) / (N * FRAMES) * 1e9


def main():
    if warp_mode():
        import warp as wp

        wp.config.quiet = True
        wp.init()
        ns, _ = measure(wp, {"device": "cpu"})
        return emit_warp({"ns": ns})
    import mlwarp as wp

    m, _ = measure(wp, {})
    n = numpy_version()
    w = (run_warp(__file__) or {}).get("ns")
    lines = print_table(f"Particles, {N} x {FRAMES} frames", "ns per particle-step",
                        [("gravity + bounce, 1 launch per frame", m, n, w)], higher_is_better=False)
    save_json("particles", {"table": lines, "data": {"mlwarp": m, "numpy": n, "warp": w}})


if __name__ == "__main__":
    main()
