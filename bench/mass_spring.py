"""Mass-spring system: 10k particles, 20k springs, 2 kernels per step (spring forces accumulated
with atomic adds, then a symplectic Euler step), in microseconds per step."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_of, emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

PARTICLES = 10_000
SPRINGS = 20_000
STEPS = 200
DT = 1.0e-3
STIFFNESS = 100.0
MASS = 1.0


def initial_state():
    import numpy as np

    rng = np.random.default_rng(0)
    pos = rng.uniform(0.0, 1.0, (3, PARTICLES)).astype(np.float32)
    a = rng.integers(0, PARTICLES, SPRINGS).astype(np.int32)
    b = ((a + rng.integers(1, PARTICLES, SPRINGS)) % PARTICLES).astype(np.int32)
    rest = (np.linalg.norm(pos[:, a] - pos[:, b], axis=0) * 0.9).astype(np.float32)
    return pos, a, b, rest


def measure(wp, device_kw):
    @wp.kernel
    def spring_forces(px: wp.array(dtype=float), py: wp.array(dtype=float), pz: wp.array(dtype=float),
                      fx: wp.array(dtype=float), fy: wp.array(dtype=float), fz: wp.array(dtype=float),
                      a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.int32), rest: wp.array(dtype=float),
                      k: float):
        s = wp.tid()
        i = a[s]
        j = b[s]
        dx = px[j] - px[i]
        dy = py[j] - py[i]
        dz = pz[j] - pz[i]
        length = wp.sqrt(dx * dx + dy * dy + dz * dz)
        f = k * (length - rest[s]) / wp.max(length, 1.0e-6)
        wp.atomic_add(fx, i, f * dx)
        wp.atomic_add(fy, i, f * dy)
        wp.atomic_add(fz, i, f * dz)
        wp.atomic_sub(fx, j, f * dx)
        wp.atomic_sub(fy, j, f * dy)
        wp.atomic_sub(fz, j, f * dz)

    @wp.kernel
    def integrate(px: wp.array(dtype=float), py: wp.array(dtype=float), pz: wp.array(dtype=float),
                  vx: wp.array(dtype=float), vy: wp.array(dtype=float), vz: wp.array(dtype=float),
                  fx: wp.array(dtype=float), fy: wp.array(dtype=float), fz: wp.array(dtype=float),
                  dt: float, inv_mass: float):
        i = wp.tid()
        vx[i] = vx[i] + fx[i] * inv_mass * dt
        vy[i] = vy[i] + fy[i] * inv_mass * dt
        vz[i] = vz[i] + fz[i] * inv_mass * dt
        px[i] = px[i] + vx[i] * dt
        py[i] = py[i] + vy[i] * dt
        pz[i] = pz[i] + vz[i] * dt
        fx[i] = 0.0
        fy[i] = 0.0
        fz[i] = 0.0

    pos, a, b, rest = initial_state()
    p = [wp.array(c, dtype=float, **device_kw) for c in pos]
    v = [wp.zeros(PARTICLES, dtype=float, **device_kw) for _ in range(3)]
    f = [wp.zeros(PARTICLES, dtype=float, **device_kw) for _ in range(3)]
    spring_args = [*p, *f, wp.array(a, dtype=wp.int32, **device_kw), wp.array(b, dtype=wp.int32, **device_kw),
                   wp.array(rest, dtype=float, **device_kw), STIFFNESS]
    step_args = [*p, *v, *f, DT, 1.0 / MASS]

    def run():
        for _ in range(STEPS):
            wp.launch(spring_forces, SPRINGS, inputs=spring_args, **device_kw)
            wp.launch(integrate, PARTICLES, inputs=step_args, **device_kw)

    run()
    return best_of(run, repeat=5) / STEPS * 1e6


def numpy_version():
    import numpy as np

    pos, a, b, rest = initial_state()
    vel = np.zeros_like(pos)
    k, dt, inv_m = np.float32(STIFFNESS), np.float32(DT), np.float32(1.0 / MASS)

    def run():
        for _ in range(STEPS):
            d = pos[:, b] - pos[:, a]
            length = np.sqrt((d * d).sum(axis=0))
            fs = d * (k * (length - rest) / np.maximum(length, np.float32(1e-6)))
            force = np.stack([np.bincount(a, fs[c], PARTICLES) - np.bincount(b, fs[c], PARTICLES)
                              for c in range(3)]).astype(np.float32)
            vel[:] += force * inv_m * dt
            pos[:] += vel * dt

    return best_of(run, repeat=5) / STEPS * 1e6


def main():
    if warp_mode():
        import warp as wp

        wp.config.quiet = True
        wp.init()
        return emit_warp({"us": measure(wp, {"device": "cpu"})})
    import mlwarp as wp

    m = measure(wp, {})
    n = numpy_version()
    w = (run_warp(__file__) or {}).get("us")
    lines = print_table(f"Mass-spring, {PARTICLES} particles, {SPRINGS} springs", "us per step",
                        [("2 kernels per step (atomics + integrate)", m, n, w)], higher_is_better=False)
    save_json("mass_spring", {"table": lines, "data": {"mlwarp": m, "numpy": n, "warp": w}})


if __name__ == "__main__":
    main()
