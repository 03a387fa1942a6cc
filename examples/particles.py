"""Particles with Warp's composite types: vec3 state, a @wp.struct, quaternion rotation.

1. The seeds' particle system: 65536 particles fall under gravity and bounce on
   the ground (vec3 arrays, a vec3 argument by value), 1000 frames.
2. The seeds' `Particle` struct: an array of structs updated in place.
3. Rotating every particle's position about an axis with wp.quat_rotate.
Each result is checked against numpy; compile and run times are printed.
"""

import time

import numpy as np

import mlwarp as wp

N = 65536
FRAMES = 1000


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


@wp.struct
class Particle:
    pos: wp.vec3
    vel: wp.vec3
    mass: wp.float32
    is_active: wp.bool


@wp.kernel
def update_particle(p: wp.array(dtype=Particle), dt: wp.float32):
    tid = wp.tid()
    if p[tid].is_active:
        p[tid].pos = p[tid].pos + p[tid].vel * dt


@wp.kernel
def rotate(points: wp.array(dtype=wp.vec3), axis: wp.vec3, angle: float, out: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    q = wp.quat_from_axis_angle(wp.normalize(axis), angle)
    out[tid] = wp.quat_rotate(q, points[tid])


def timed(label, fn):
    t0 = time.perf_counter()
    fn()
    print(f"  {label}: {(time.perf_counter() - t0) * 1e3:.1f} ms")


def main():
    rng = np.random.default_rng(0)
    start = rng.random((N, 3)).astype(np.float32)
    pos, vel = wp.array(start, dtype=wp.vec3), wp.zeros(N, dtype=wp.vec3)
    gravity, dt, restitution = wp.vec3(0.0, -9.8, 0.0), 1.0 / 60.0, 0.6
    print(f"1. particle system: {N} particles, {FRAMES} frames")
    timed("first launch (compile)", lambda: wp.launch(step, N, [pos, vel, gravity, dt, restitution]))
    timed(f"{FRAMES - 1} more frames", lambda: [wp.launch(step, N, [pos, vel, gravity, dt, restitution])
                                                for _ in range(FRAMES - 1)])
    p, v = start.copy(), np.zeros_like(start)
    g, dt32, r32 = np.array([0.0, -9.8, 0.0], np.float32), np.float32(dt), np.float32(restitution)
    for _ in range(FRAMES):
        v = v + g * dt32
        p = p + v * dt32
        below = p[:, 1] < 0
        p[below, 1] = 0.0
        v[below, 1] = -v[below, 1] * r32
    assert np.array_equal(pos.numpy(), p) and np.array_equal(vel.numpy(), v)
    print(f"  matches numpy exactly; {int((pos.numpy()[:, 1] == 0).sum())} particles on the ground")

    print("2. Particle struct update")
    particles = wp.zeros(N, dtype=Particle)
    view = particles.numpy()  # a numpy structured array over the same bytes
    view["pos"], view["vel"], view["mass"] = start, rng.normal(size=(N, 3)), 1.0
    view["is_active"] = rng.random(N) < 0.5
    expected = np.where(view["is_active"][:, None], view["pos"] + view["vel"] * np.float32(0.1), view["pos"])
    timed("launch (compile + run)", lambda: wp.launch(update_particle, N, [particles, 0.1]))
    assert np.array_equal(particles.numpy()["pos"], expected)
    print(f"  matches numpy exactly; {int(view['is_active'].sum())} active particles moved")

    print("3. quaternion rotation")
    out = wp.zeros(N, dtype=wp.vec3)
    timed("launch (compile + run)", lambda: wp.launch(rotate, N, [pos, wp.vec3(0.0, 0.0, 2.0), np.pi / 2, out]))
    x, y, z = pos.numpy().T
    assert np.allclose(out.numpy(), np.stack([-y, x, z], 1), atol=1e-5)
    print("  90 degrees about z: (x, y, z) -> (-y, x, z), matches numpy")


if __name__ == "__main__":
    main()
