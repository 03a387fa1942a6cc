"""Mesh queries one at a time (issues 32/36): the per-query CPU cost of each of Warp's mesh query builtins,
mlwarp and Warp (CPU) side by side in one run, on one thread.

A closed latitude-longitude sphere of 16,128 triangles (the size of example_tile_mcgp's mesh, bench/tile_mcgp.py),
20,000 query points uniform in [-1.5, 1.5]^3 (a third inside), one query a thread: mesh_query_point (its sign
from three axis rays), _no_sign, _sign_normal, _sign_winding_number (a mesh built with winding support),
_sign_parity (one ray), mesh_query_furthest_point_no_sign, mesh_query_ray and _count_intersections towards a
point above the centre, and a 0.1-wide mesh_query_aabb box walked with mesh_query_aabb_next. Each row: the
median of 5 warm launches, CPU time of the process (time.process_time: the machine is shared, CPU time counts
the work, not the waiting) over the query count, in microseconds; mlwarp on one thread (Warp's CPU launches are
single-threaded).

Checks: 256 closest-point distances against numpy's brute force (every triangle, float64); with warp-lang, every
point query's (sign, face, u, v) and every AABB walk's (count, face sum) equal to Warp's bit for bit (the same
tree, visited in Warp's order: ties at shared edges and vertices give Warp's face), ray distances within 1e-6.
"""

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

N = 20000
RINGS = 64  # 2 * 128 * (64 - 1) = 16,128 triangles
REPEAT = 5
CHECKED = 256
EXACT = ("point", "no_sign", "sign_normal", "winding", "parity", "furthest", "count", "aabb")
ROWS = [("point", "mesh_query_point (three-ray sign)"), ("no_sign", "mesh_query_point_no_sign"),
        ("sign_normal", "mesh_query_point_sign_normal"), ("winding", "mesh_query_point_sign_winding_number"),
        ("parity", "mesh_query_point_sign_parity (1 ray)"), ("furthest", "mesh_query_furthest_point_no_sign"),
        ("ray", "mesh_query_ray"), ("count", "mesh_query_ray_count_intersections"),
        ("aabb", "mesh_query_aabb + _next, 0.1 box")]


def sphere():
    """A closed unit sphere: a pole vertex, RINGS - 1 rings of 2 * RINGS vertices, the other pole."""
    import numpy as np

    m = 2 * RINGS
    th = np.linspace(0.0, np.pi, RINGS + 1)[1:-1]
    ph = np.linspace(0.0, 2.0 * np.pi, m, endpoint=False)
    ring = np.stack([np.outer(np.sin(th), np.cos(ph)), np.outer(np.sin(th), np.sin(ph)),
                     np.outer(np.cos(th), np.ones(m))], -1).reshape(-1, 3)
    pts = np.concatenate([[[0.0, 0.0, 1.0]], ring, [[0.0, 0.0, -1.0]]]).astype(np.float32)
    j = np.arange(m)
    tris = [np.stack([np.zeros(m, int), 1 + j, 1 + (j + 1) % m], -1)]
    for i in range(RINGS - 2):
        a, b = 1 + i * m + j, 1 + i * m + (j + 1) % m
        tris.append(np.stack([a, a + m, b + m], -1))
        tris.append(np.stack([a, b + m, b], -1))
    base, last = 1 + (RINGS - 2) * m, len(pts) - 1
    tris.append(np.stack([base + j, np.full(m, last), base + (j + 1) % m], -1))
    return pts, np.concatenate(tris).astype(np.int32)


def queries():
    import numpy as np

    return np.random.default_rng(1).uniform(-1.5, 1.5, (N, 3)).astype(np.float32)


def kernels(wp):
    @wp.kernel
    def point(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec4)):
        i = wp.tid()
        q = wp.mesh_query_point(mesh, xs[i], 1.0e6)
        out[i] = wp.vec4(q.sign, float(q.face), q.u, q.v)

    @wp.kernel
    def no_sign(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec4)):
        i = wp.tid()
        q = wp.mesh_query_point_no_sign(mesh, xs[i], 1.0e6)
        out[i] = wp.vec4(q.sign, float(q.face), q.u, q.v)

    @wp.kernel
    def sign_normal(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec4)):
        i = wp.tid()
        q = wp.mesh_query_point_sign_normal(mesh, xs[i], 1.0e6)
        out[i] = wp.vec4(q.sign, float(q.face), q.u, q.v)

    @wp.kernel
    def winding(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec4)):
        i = wp.tid()
        q = wp.mesh_query_point_sign_winding_number(mesh, xs[i], 1.0e6)
        out[i] = wp.vec4(q.sign, float(q.face), q.u, q.v)

    @wp.kernel
    def parity(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec4)):
        i = wp.tid()
        q = wp.mesh_query_point_sign_parity(mesh, xs[i], 1.0e6)
        out[i] = wp.vec4(q.sign, float(q.face), q.u, q.v)

    @wp.kernel
    def furthest(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec4)):
        i = wp.tid()
        q = wp.mesh_query_furthest_point_no_sign(mesh, xs[i], 0.0)
        out[i] = wp.vec4(q.sign, float(q.face), q.u, q.v)

    @wp.kernel
    def ray(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec4)):
        i = wp.tid()
        q = wp.mesh_query_ray(mesh, xs[i], wp.normalize(wp.vec3(0.3, 0.2, 1.0) - xs[i]), 1.0e6)
        out[i] = wp.vec4(q.sign, float(q.face), q.u, q.t)

    @wp.kernel
    def count(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec4)):
        i = wp.tid()
        n = wp.mesh_query_ray_count_intersections(mesh, xs[i], wp.normalize(wp.vec3(0.3, 0.2, 1.0) - xs[i]))
        out[i] = wp.vec4(float(n), 0.0, 0.0, 0.0)

    @wp.kernel
    def aabb(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec4)):
        i = wp.tid()
        h = wp.vec3(0.05)
        query = wp.mesh_query_aabb(mesh, xs[i] - h, xs[i] + h)
        f = int(0)
        n = int(0)
        total = int(0)
        while wp.mesh_query_aabb_next(query, f):
            n += 1
            total += f
        out[i] = wp.vec4(float(n), float(total), 0.0, 0.0)

    return {"point": point, "no_sign": no_sign, "sign_normal": sign_normal, "winding": winding, "parity": parity,
            "furthest": furthest, "ray": ray, "count": count, "aabb": aabb}


def measure(wp, out_dir):
    import numpy as np

    pts, tris = sphere()
    points, indices = wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32)
    plain = wp.Mesh(points=points, indices=indices)
    with_winding = wp.Mesh(points=points, indices=indices, support_winding_number=True)
    xs = wp.array(queries(), dtype=wp.vec3)
    out = wp.zeros(N, dtype=wp.vec4)
    results = {}
    for name, k in kernels(wp).items():
        mesh = with_winding if name == "winding" else plain
        wp.launch(k, dim=N, inputs=[mesh.id, xs, out])
        wp.synchronize()
        times = []
        for _ in range(REPEAT):
            t = time.process_time()
            wp.launch(k, dim=N, inputs=[mesh.id, xs, out])
            wp.synchronize()
            times.append((time.process_time() - t) / N * 1e6)
        results[name] = float(np.median(times))
        np.save(os.path.join(out_dir, f"{name}.npy"), out.numpy())
    return results


def closest_distances(pts, tris, xs):
    """Distance from each point to the nearest triangle, every triangle tested (float64)."""
    import numpy as np

    a, b, c = (pts[tris[:, k]].astype(np.float64) for k in range(3))
    out = []
    for x in xs.astype(np.float64):
        n = np.cross(b - a, c - a)
        h = ((x - a) * n).sum(1) / (n * n).sum(1)
        foot = x - h[:, None] * n
        v0, v1, v2 = b - a, c - a, foot - a
        d00, d01, d11 = (v0 * v0).sum(1), (v0 * v1).sum(1), (v1 * v1).sum(1)
        d20, d21 = (v2 * v0).sum(1), (v2 * v1).sum(1)
        den = d00 * d11 - d01 * d01
        bv, bw = (d11 * d20 - d01 * d21) / den, (d00 * d21 - d01 * d20) / den
        best = np.where((bv >= 0) & (bw >= 0) & (bv + bw <= 1), np.linalg.norm(x - foot, axis=1), np.inf)
        for p, q in ((a, b), (b, c), (c, a)):
            d = q - p
            t = np.clip(((x - p) * d).sum(1) / (d * d).sum(1), 0.0, 1.0)
            best = np.minimum(best, np.linalg.norm(x - (p + t[:, None] * d), axis=1))
        out.append(best.min())
    return np.array(out)


def check(out_dir, warp_dir):
    import numpy as np

    pts, tris = sphere()
    xs = queries()[:CHECKED]
    got = np.load(os.path.join(out_dir, "no_sign.npy"))[:CHECKED]
    f = got[:, 1].astype(int)
    u, v = got[:, 2:3].astype(np.float64), got[:, 3:4].astype(np.float64)
    p = u * pts[tris[f, 0]] + v * pts[tris[f, 1]] + (1.0 - u - v) * pts[tris[f, 2]]
    if not np.allclose(np.linalg.norm(p - xs, axis=1), closest_distances(pts, tris, xs), atol=1e-5):
        raise SystemExit("FAILED: closest-point distances differ from numpy's brute force")
    if warp_dir is None:
        return
    for name, _ in ROWS:
        mine, warps = np.load(os.path.join(out_dir, f"{name}.npy")), np.load(os.path.join(warp_dir, f"{name}.npy"))
        same = np.array_equal(mine, warps) if name in EXACT else np.allclose(mine, warps, atol=1e-6)
        if not same:
            raise SystemExit(f"FAILED: {name}: {int((mine != warps).any(1).sum())} queries differ from Warp's")


def main():
    if warp_mode():
        import warp as wp

        wp.config.quiet = True
        wp.init()
        return emit_warp(measure(wp, sys.argv[sys.argv.index("--warp") + 1]))
    import mlwarp as wp

    wp.config.cpu_threads = 1
    out_dir, warp_dir = tempfile.mkdtemp(prefix="mlwarp-bench-"), tempfile.mkdtemp(prefix="warp-bench-")
    m = measure(wp, out_dir)
    w = run_warp(__file__, warp_dir) or {}
    check(out_dir, warp_dir if w else None)
    rows = [(label, m[name], None, w.get(name)) for name, label in ROWS]
    lines = print_table(f"mesh queries, a {len(sphere()[1]):,}-triangle sphere, {N:,} points, one thread",
                        "CPU us a query", rows, higher_is_better=False)
    save_json("mesh_queries", {"table": lines, "data": {"mlwarp": m, "warp": w or None}})


if __name__ == "__main__":
    main()
