"""Particles: 65536 particles x 1000 frames, one kernel launch per frame, in ns per particle-step.

The counted row is the architecture review's 5.2 kernel as users write it: `pos` and `vel` are
`wp.array(dtype=wp.vec3)`, gravity + ground clamp with restitution. The extra row is the earlier
float-array-per-component kernel (a reflecting bounce, restitution 0.9), kept for comparison.
numpy runs the same math on (N, 3) float32 arrays (and on per-component arrays for the extra row).

After timing, each implementation runs CHECK_FRAMES frames of the vec3 kernel from the seed's start
again and its state is compared with numpy's from the same start (the script fails if they differ
by more than TOLERANCE); Warp's check runs in its own process against the same numpy code.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_of, emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

N = 65536
FRAMES = 1000  # `particles.py [frames]` runs fewer (while developing)
ARGS = [a for a in sys.argv[1:] if a != "--warp"]
if ARGS:
    FRAMES = int(ARGS[0])
DT = 1.0 / 60.0
GRAVITY = (0.0, -9.8, 0.0)
RESTITUTION = 0.6
CHECK_FRAMES = 60  # about two bounces from the seed's start
TOLERANCE = 1e-3
# the float-per-component kernel (the earlier benchmark)
G = 9.8


def seed_start():
    """The seed's start: positions uniform in [0, 1)^3, velocities zero (float32, (N, 3))."""
    import numpy as np

    rng = np.random.default_rng(0)
    return rng.random((N, 3), dtype=np.float32), np.zeros((N, 3), dtype=np.float32)


def numpy_step_vec3(pos, vel, gravity, dt, restitution, tmp):
    """One frame of the 5.2 kernel on (N, 3) arrays, in place, in the kernel's operation order. Written
    for speed: `vel += gravity * dt` broadcasts a 3-vector over rows, which numpy runs 4x slower than
    the three column adds; masked copies instead of boolean indexing (-(v r) == v (-r) exactly)."""
    import numpy as np

    gdt = gravity * dt
    for c in range(3):                     # v = vel + gravity * dt
        vel[:, c] += gdt[c]
    np.multiply(vel, dt, out=tmp)          # v * dt
    pos += tmp                             # p = pos + v * dt
    y, vy = pos[:, 1], vel[:, 1]
    below = y < 0.0                        # if p[1] < 0: p[1] = 0, v[1] = -v[1] * restitution
    np.copyto(y, np.float32(0.0), where=below)
    np.multiply(vy, -restitution, out=vy, where=below)


def numpy_reference(frames):
    """numpy's state after `frames` frames from the seed's start."""
    import numpy as np

    pos, vel = seed_start()
    gravity, dt, r = np.array(GRAVITY, dtype=np.float32), np.float32(DT), np.float32(RESTITUTION)
    tmp = np.empty_like(pos)
    for _ in range(frames):
        numpy_step_vec3(pos, vel, gravity, dt, r, tmp)
    return pos, vel


def numpy_vec3_timing():
    import numpy as np

    pos, vel = seed_start()
    gravity, dt, r = np.array(GRAVITY, dtype=np.float32), np.float32(DT), np.float32(RESTITUTION)
    tmp = np.empty_like(pos)

    def run():
        for _ in range(FRAMES):
            numpy_step_vec3(pos, vel, gravity, dt, r, tmp)

    return best_of(run, repeat=3) / (N * FRAMES) * 1e9


def measure(wp, device_kw):
    """ns per particle-step for the vec3 kernel and the float-per-component kernel, and the check."""
    import numpy as np

    # the architecture review's 5.2 kernel, as written there
    @wp.kernel
    def step(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), gravity: wp.vec3, dt: wp.float32,
             restitution: wp.float32):
        tid = wp.tid()
        v = vel[tid] + gravity * dt
        p = pos[tid] + v * dt
        if p[1] < 0.0:
            p = wp.vec3(p[0], 0.0, p[2])
            v = wp.vec3(v[0], -v[1] * restitution, v[2])
        pos[tid] = p
        vel[tid] = v

    # the earlier benchmark's kernel: one float array per component
    @wp.kernel
    def step_components(px: wp.array(dtype=float), py: wp.array(dtype=float), pz: wp.array(dtype=float),
                        vx: wp.array(dtype=float), vy: wp.array(dtype=float), vz: wp.array(dtype=float),
                        dt: float, g: float):
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

    gravity = wp.vec3(*GRAVITY)

    def vec3_state():
        p0, v0 = seed_start()
        return wp.array(p0, dtype=wp.vec3, **device_kw), wp.array(v0, dtype=wp.vec3, **device_kw)

    pos, vel = vec3_state()
    args = [pos, vel, gravity, DT, RESTITUTION]
    wp.launch(step, N, inputs=args, **device_kw)

    def run_vec3():
        for _ in range(FRAMES):
            wp.launch(step, N, inputs=args, **device_kw)

    ns_vec3 = best_of(run_vec3, repeat=5) / (N * FRAMES) * 1e9

    rng = np.random.default_rng(0)
    comps = [wp.array(a, dtype=float, **device_kw) for a in (*rng.uniform(0.0, 10.0, (3, N)).astype(np.float32),
                                                          *rng.uniform(-1.0, 1.0, (3, N)).astype(np.float32))]
    cargs = [*comps, DT, G]
    wp.launch(step_components, N, inputs=cargs, **device_kw)

    def run_components():
        for _ in range(FRAMES):
            wp.launch(step_components, N, inputs=cargs, **device_kw)

    ns_components = best_of(run_components, repeat=5) / (N * FRAMES) * 1e9

    # the check: CHECK_FRAMES frames from the seed's start, against numpy's
    pos, vel = vec3_state()
    for _ in range(CHECK_FRAMES):
        wp.launch(step, N, inputs=[pos, vel, gravity, DT, RESTITUTION], **device_kw)
    ref_pos, ref_vel = numpy_reference(CHECK_FRAMES)
    diff = max(float(np.abs(pos.numpy() - ref_pos).max()), float(np.abs(vel.numpy() - ref_vel).max()))
    bounced = int((ref_vel[:, 1] > 0.0).sum())  # moving up: bounced off the ground at least once
    return {"ns": ns_vec3, "ns_components": ns_components, "max_abs_diff": diff, "bounced": bounced}


def numpy_components_timing():
    import numpy as np

    rng = np.random.default_rng(0)
    px, py, pz = rng.uniform(0.0, 10.0, (3, N)).astype(np.float32)
    vx, vy, vz = rng.uniform(-1.0, 1.0, (3, N)).astype(np.float32)
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


def check(name, result):
    diff = result["max_abs_diff"]
    print(f"check: {name} after {CHECK_FRAMES} frames from the seed's start vs numpy: "
          f"max abs difference {diff:.3g} (positions and velocities; tolerance {TOLERANCE:g}; "
          f"{result['bounced']} of {N} particles moving up after a bounce)")
    if not diff <= TOLERANCE:
        raise SystemExit(f"FAILED: {name}'s particle state differs from numpy's by {diff:.3g} > {TOLERANCE:g}")


def main():
    if warp_mode():
        import warp as wp

        wp.config.quiet = True
        wp.init()
        return emit_warp(measure(wp, {"device": "cpu"}))
    import mlwarp as wp

    m = measure(wp, {})
    check("mlwarp", m)
    n_vec3 = numpy_vec3_timing()
    n_components = numpy_components_timing()
    w = run_warp(__file__, *ARGS) or {}
    if w:
        check("Warp", w)
    lines = print_table(f"Particles, {N} x {FRAMES} frames", "ns per particle-step", [
        ("seeds' kernel (review 5.2): wp.vec3 arrays, gravity + ground clamp", m["ns"], n_vec3, w.get("ns")),
        ("extra: float arrays per component (earlier kernel, reflecting bounce)", m["ns_components"], n_components,
         w.get("ns_components")),
    ], higher_is_better=False)
    lines += ["", f"State after {CHECK_FRAMES} frames vs numpy (max abs difference): mlwarp {m['max_abs_diff']:.3g}"
              + (f", Warp {w['max_abs_diff']:.3g}" if w else "")]
    save_json("particles", {"table": lines, "data": {"mlwarp": m, "numpy": {"ns": n_vec3, "ns_components": n_components},
                                                     "warp": w or None}})


if __name__ == "__main__":
    main()
