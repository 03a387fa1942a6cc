"""Mass-spring system (the architecture review's 4.1/4.4): 10,000 particles, 20,000 springs, two
kernel launches per step, in microseconds per step.

The particles start on a 100 x 100 grid (spacing 0.01, jittered); spring s < 10,000 joins particle
s to s + 1 and spring 10,000 + s joins s to s + 100 (indices mod 10,000, so the last ones wrap
around and there are exactly 20,000), each at rest at its grid length. Per step: a spring-force
kernel (Hooke + damping along the spring, f = (ke (len - rest) + kd dot(dv, dir)) dir, added into
one end and subtracted from the other with `wp.atomic_add`/`wp.atomic_sub` of a wp.vec3) and a
semi-implicit Euler kernel that also clears the forces. The counted row stores positions,
velocities and forces as `wp.array(dtype=wp.vec3)`, as users write it; the extra row is the same
system with one float array per component. numpy does the same math on (N, 3) arrays, with
np.bincount for the scattered adds.

After timing, each implementation runs CHECK_STEPS steps from the same start again and its state
is compared with numpy's (the script fails if they differ by more than the tolerance).

    python bench/mass_spring.py [steps]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_of, emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

GRID = 100
PARTICLES = GRID * GRID
SPRINGS = 2 * PARTICLES
STEPS = 1000  # per timed run
ARGS = [a for a in sys.argv[1:] if a != "--warp"]
if ARGS:
    STEPS = int(ARGS[0])
SPACING = 0.01
DT = 1.0e-3
KE = 1.0e4
KD = 10.0
MASS = 1.0
CHECK_STEPS = 100
POS_TOLERANCE = 1e-4  # absolute, positions are in [0, 1]
VEL_TOLERANCE = 1e-3  # relative to the largest velocity


def initial_state():
    """(positions (N, 3), spring ends a, b, rest lengths), float32 / int32."""
    import numpy as np

    i = np.arange(PARTICLES)
    grid = np.stack([(i % GRID) * SPACING, (i // GRID) * SPACING, np.zeros(PARTICLES)], axis=1)
    a = np.concatenate([i, i]).astype(np.int32)
    b = np.concatenate([(i + 1) % PARTICLES, (i + GRID) % PARTICLES]).astype(np.int32)
    rest = np.linalg.norm(grid[b] - grid[a], axis=1).astype(np.float32)
    rng = np.random.default_rng(0)
    pos = (grid + rng.uniform(-0.2, 0.2, grid.shape) * SPACING).astype(np.float32)
    return pos, a, b, rest


def numpy_stepper():
    """(step(), pos, vel): one numpy step of the same system, in place."""
    import numpy as np

    pos, a, b, rest = initial_state()
    vel = np.zeros_like(pos)
    ke, kd, dt, inv_m = np.float32(KE), np.float32(KD), np.float32(DT), np.float32(1.0 / MASS)

    def step():
        d = pos[b] - pos[a]
        length = np.sqrt((d * d).sum(axis=1))
        direction = d / length[:, None]
        dv = vel[b] - vel[a]
        fs = (ke * (length - rest) + kd * (dv * direction).sum(axis=1))[:, None] * direction
        force = np.stack([np.bincount(a, fs[:, c], PARTICLES) - np.bincount(b, fs[:, c], PARTICLES)
                          for c in range(3)], axis=1).astype(np.float32)
        vel[:] += force * inv_m * dt
        pos[:] += vel * dt

    return step, pos, vel


def numpy_timing():
    step, _, _ = numpy_stepper()

    def run():
        for _ in range(STEPS):
            step()

    return best_of(run, repeat=3) / STEPS * 1e6


def numpy_reference(steps):
    step, pos, vel = numpy_stepper()
    for _ in range(steps):
        step()
    return pos, vel


def measure(wp, device_kw):
    """us per step for the vec3 system and the float-per-component one, and the checks."""
    import numpy as np

    @wp.kernel
    def spring_forces(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), f: wp.array(dtype=wp.vec3),
                      a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.int32), rest: wp.array(dtype=float),
                      ke: float, kd: float):
        s = wp.tid()
        i = a[s]
        j = b[s]
        d = x[j] - x[i]
        length = wp.length(d)
        direction = d / length
        dv = v[j] - v[i]
        fs = (ke * (length - rest[s]) + kd * wp.dot(dv, direction)) * direction
        wp.atomic_add(f, i, fs)
        wp.atomic_sub(f, j, fs)

    @wp.kernel
    def integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), f: wp.array(dtype=wp.vec3),
                  inv_mass: float, dt: float):
        i = wp.tid()
        v1 = v[i] + f[i] * inv_mass * dt
        x[i] = x[i] + v1 * dt
        v[i] = v1
        f[i] = wp.vec3(0.0, 0.0, 0.0)

    @wp.kernel
    def spring_forces_components(px: wp.array(dtype=float), py: wp.array(dtype=float), pz: wp.array(dtype=float),
                                 vx: wp.array(dtype=float), vy: wp.array(dtype=float), vz: wp.array(dtype=float),
                                 fx: wp.array(dtype=float), fy: wp.array(dtype=float), fz: wp.array(dtype=float),
                                 a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.int32),
                                 rest: wp.array(dtype=float), ke: float, kd: float):
        s = wp.tid()
        i = a[s]
        j = b[s]
        dx = px[j] - px[i]
        dy = py[j] - py[i]
        dz = pz[j] - pz[i]
        length = wp.sqrt(dx * dx + dy * dy + dz * dz)
        ux = dx / length
        uy = dy / length
        uz = dz / length
        c = ke * (length - rest[s]) + kd * ((vx[j] - vx[i]) * ux + (vy[j] - vy[i]) * uy + (vz[j] - vz[i]) * uz)
        wp.atomic_add(fx, i, c * ux)
        wp.atomic_add(fy, i, c * uy)
        wp.atomic_add(fz, i, c * uz)
        wp.atomic_sub(fx, j, c * ux)
        wp.atomic_sub(fy, j, c * uy)
        wp.atomic_sub(fz, j, c * uz)

    @wp.kernel
    def integrate_components(px: wp.array(dtype=float), py: wp.array(dtype=float), pz: wp.array(dtype=float),
                             vx: wp.array(dtype=float), vy: wp.array(dtype=float), vz: wp.array(dtype=float),
                             fx: wp.array(dtype=float), fy: wp.array(dtype=float), fz: wp.array(dtype=float),
                             inv_mass: float, dt: float):
        i = wp.tid()
        wx = vx[i] + fx[i] * inv_mass * dt
        wy = vy[i] + fy[i] * inv_mass * dt
        wz = vz[i] + fz[i] * inv_mass * dt
        px[i] = px[i] + wx * dt
        py[i] = py[i] + wy * dt
        pz[i] = pz[i] + wz * dt
        vx[i] = wx
        vy[i] = wy
        vz[i] = wz
        fx[i] = 0.0
        fy[i] = 0.0
        fz[i] = 0.0

    pos0, a0, b0, rest0 = initial_state()
    a = wp.array(a0, dtype=wp.int32, **device_kw)
    b = wp.array(b0, dtype=wp.int32, **device_kw)
    rest = wp.array(rest0, dtype=float, **device_kw)

    def vec3_system():
        x = wp.array(pos0, dtype=wp.vec3, **device_kw)
        v = wp.zeros(PARTICLES, dtype=wp.vec3, **device_kw)
        f = wp.zeros(PARTICLES, dtype=wp.vec3, **device_kw)
        spring_args = [x, v, f, a, b, rest, KE, KD]
        step_args = [x, v, f, 1.0 / MASS, DT]

        def run(steps):
            for _ in range(steps):
                wp.launch(spring_forces, SPRINGS, inputs=spring_args, **device_kw)
                wp.launch(integrate, PARTICLES, inputs=step_args, **device_kw)

        return run, lambda: (x.numpy(), v.numpy())

    def component_system():
        p = [wp.array(np.ascontiguousarray(pos0[:, c]), dtype=float, **device_kw) for c in range(3)]
        v = [wp.zeros(PARTICLES, dtype=float, **device_kw) for _ in range(3)]
        f = [wp.zeros(PARTICLES, dtype=float, **device_kw) for _ in range(3)]
        spring_args = [*p, *v, *f, a, b, rest, KE, KD]
        step_args = [*p, *v, *f, 1.0 / MASS, DT]

        def run(steps):
            for _ in range(steps):
                wp.launch(spring_forces_components, SPRINGS, inputs=spring_args, **device_kw)
                wp.launch(integrate_components, PARTICLES, inputs=step_args, **device_kw)

        return run, lambda: (np.stack([c.numpy() for c in p], axis=1), np.stack([c.numpy() for c in v], axis=1))

    result = {}
    ref_pos, ref_vel = numpy_reference(CHECK_STEPS)
    for key, system in (("vec3", vec3_system), ("components", component_system)):
        run, _ = system()
        run(1)
        result[f"us_{key}"] = best_of(lambda: run(STEPS), repeat=3) / STEPS * 1e6
        run, state = system()  # the check, from the start
        run(CHECK_STEPS)
        x, v = state()
        result[f"pos_diff_{key}"] = float(np.abs(x - ref_pos).max())
        result[f"vel_diff_{key}"] = float(np.abs(v - ref_vel).max() / np.abs(ref_vel).max())
    result["max_speed"] = float(np.linalg.norm(ref_vel, axis=1).max())
    return result


def check(name, result):
    for key, what in (("vec3", "vec3 arrays"), ("components", "float arrays per component")):
        dp, dv = result[f"pos_diff_{key}"], result[f"vel_diff_{key}"]
        print(f"check: {name}, {what}, after {CHECK_STEPS} steps vs numpy: max abs position difference {dp:.3g} "
              f"(tolerance {POS_TOLERANCE:g}), max velocity difference / max |v| {dv:.3g} (tolerance "
              f"{VEL_TOLERANCE:g}; max speed {result['max_speed']:.3g})")
        if not (dp <= POS_TOLERANCE and dv <= VEL_TOLERANCE):
            raise SystemExit(f"FAILED: {name}'s mass-spring state ({what}) differs from numpy's")


def main():
    if warp_mode():
        import warp as wp

        wp.config.quiet = True
        wp.init()
        return emit_warp(measure(wp, {"device": "cpu"}))
    import mlwarp as wp

    m = measure(wp, {})
    check("mlwarp", m)
    n = numpy_timing()
    w = run_warp(__file__, *ARGS) or {}
    if w:
        check("Warp", w)
    lines = print_table(f"Mass-spring, {PARTICLES} particles, {SPRINGS} springs, {STEPS} steps",
                        "us per step", [
                            ("seeds' system (review 4.1/4.4): wp.vec3 arrays, vec3 atomics + integrate, 2 launches",
                             m["us_vec3"], n, w.get("us_vec3")),
                            ("extra: the same, float arrays per component", m["us_components"], n,
                             w.get("us_components")),
                        ], higher_is_better=False)
    lines += ["", f"State after {CHECK_STEPS} steps vs numpy (max abs position difference): mlwarp "
              f"{m['pos_diff_vec3']:.3g}" + (f", Warp {w['pos_diff_vec3']:.3g}" if w else "")]
    save_json("mass_spring", {"table": lines, "data": {"mlwarp": m, "numpy": n, "warp": w or None}})


if __name__ == "__main__":
    main()
