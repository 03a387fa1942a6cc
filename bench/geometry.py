"""Geometry structures (issue 17): a mesh's BVH build and 1M ray casts against it, and hash-grid neighbour
queries for 1M particles, mlwarp and Warp (CPU) side by side in one run.

- Mesh: a 224 x 224 terrain heightfield (100,352 triangles); `wp.Mesh(points, indices)` is the build; 1M rays
  from random points above the terrain in random downward directions, each thread a `wp.mesh_query_ray` that
  stores the hit distance (the seeds' style: vec3 arrays in, one query a thread). 512 of the rays are checked
  against a brute-force numpy ray/triangle test (every triangle) before timing.
- Hash grid: 1M random points in a 100^3 box, a 128^3 grid, radius 1; `build`, then each thread counts its
  neighbours within the radius with the `while wp.hash_grid_query_next(...)` form; the mean count is checked
  against numpy's count of pairs within the radius on 200 of the points (every point tested).
numpy has no such structures: its column is empty.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_of, emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

GRID = 224  # terrain cells a side: 2 * 224^2 = 100,352 triangles
RAYS = 1_000_000
POINTS = 1_000_000
RADIUS = 1.0
CHECKED_RAYS = 512
CHECKED_POINTS = 200


def terrain():
    import numpy as np

    x, y = np.meshgrid(np.linspace(0.0, 10.0, GRID + 1), np.linspace(0.0, 10.0, GRID + 1), indexing="ij")
    z = 0.5 * np.sin(1.3 * x) * np.cos(0.7 * y) + 0.1 * np.sin(5.0 * x + 3.0 * y)
    points = np.stack([x, y, z], -1).reshape(-1, 3).astype(np.float32)
    i, j = np.meshgrid(np.arange(GRID), np.arange(GRID), indexing="ij")
    a = (i * (GRID + 1) + j).reshape(-1)
    b, c, d = a + GRID + 1, a + 1, a + GRID + 2
    tris = np.concatenate([np.stack([a, b, c], -1), np.stack([c, b, d], -1)]).astype(np.int32)
    return points, tris


def rays():
    import numpy as np

    rng = np.random.default_rng(7)
    starts = np.concatenate([rng.uniform(0.5, 9.5, (RAYS, 2)), np.full((RAYS, 1), 2.0)], 1).astype(np.float32)
    dirs = np.concatenate([rng.uniform(-0.5, 0.5, (RAYS, 2)), -np.ones((RAYS, 1))], 1)
    dirs = (dirs / np.linalg.norm(dirs, axis=1, keepdims=True)).astype(np.float32)
    return starts, dirs


def brute_force_hits(points, tris, starts, dirs):
    """The nearest hit distance of each ray over every triangle (Moeller-Trumbore in float64), inf for a miss."""
    import numpy as np

    p = points.astype(np.float64)
    v0, e1, e2 = p[tris[:, 0]], p[tris[:, 1]] - p[tris[:, 0]], p[tris[:, 2]] - p[tris[:, 0]]
    out = np.full(len(starts), np.inf)
    for r, (o, d) in enumerate(zip(starts.astype(np.float64), dirs.astype(np.float64))):
        h = np.cross(d, e2)
        det = np.einsum("ij,ij->i", e1, h)
        s = o - v0
        u = np.einsum("ij,ij->i", s, h) / det
        q = np.cross(s, e1)
        v = (q @ d) / det
        t = np.einsum("ij,ij->i", e2, q) / det
        hit = (np.abs(det) > 1e-12) & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0)
        if hit.any():
            out[r] = t[hit].min()
    return out


def measure(wp, device_kw):
    import numpy as np

    @wp.kernel
    def cast(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
             hits: wp.array(dtype=float)):
        tid = wp.tid()
        q = wp.mesh_query_ray(mesh, starts[tid], dirs[tid], 1.0e6)
        if q.result:
            hits[tid] = q.t
        else:
            hits[tid] = -1.0

    @wp.kernel
    def count(grid: wp.uint64, points: wp.array(dtype=wp.vec3), r: float, out: wp.array(dtype=int)):
        tid = wp.tid()
        i = wp.hash_grid_point_id(grid, tid)
        p = points[i]
        n = int(0)
        query = wp.hash_grid_query(grid, p, r)
        index = int(0)
        while wp.hash_grid_query_next(query, index):
            if wp.length(points[index] - p) <= r:
                n += 1
        out[i] = n

    out = {}
    pts, tris = terrain()
    points, indices = wp.array(pts, dtype=wp.vec3, **device_kw), wp.array(tris.reshape(-1), dtype=wp.int32, **device_kw)
    meshes = []
    out["mesh_build_ms"] = best_of(lambda: meshes.append(wp.Mesh(points=points, indices=indices)), repeat=3) * 1e3
    mesh = meshes[-1]
    s0, d0 = rays()
    starts, dirs = wp.array(s0, dtype=wp.vec3, **device_kw), wp.array(d0, dtype=wp.vec3, **device_kw)
    hits = wp.zeros(RAYS, dtype=float, **device_kw)

    def run_rays():
        wp.launch(cast, dim=RAYS, inputs=[mesh.id, starts, dirs, hits], **device_kw)
        wp.synchronize()

    run_rays()
    want = brute_force_hits(pts, tris, s0[:CHECKED_RAYS], d0[:CHECKED_RAYS])
    got = hits.numpy()[:CHECKED_RAYS].astype(np.float64)
    if not (np.all((want == np.inf) == (got < 0)) and np.allclose(got[got >= 0], want[want < np.inf], atol=1e-4)):
        raise SystemExit("FAILED: mesh_query_ray distances differ from the brute-force numpy test")
    out["rays_ms"] = best_of(run_rays, repeat=5) * 1e3
    out["hit_fraction"] = float((hits.numpy() >= 0).mean())

    rng = np.random.default_rng(0)
    p0 = (rng.random((POINTS, 3)) * 100.0).astype(np.float32)
    particles = wp.array(p0, dtype=wp.vec3, **device_kw)
    grid = wp.HashGrid(128, 128, 128, **device_kw)
    out["grid_build_ms"] = best_of(lambda: grid.build(particles, RADIUS), repeat=3) * 1e3
    counts = wp.zeros(POINTS, dtype=int, **device_kw)

    def run_grid():
        wp.launch(count, dim=POINTS, inputs=[grid.id, particles, RADIUS, counts], **device_kw)
        wp.synchronize()

    run_grid()
    sample = p0[:CHECKED_POINTS].astype(np.float64)
    want_counts = [int((np.linalg.norm(p0 - s, axis=1) <= RADIUS).sum()) for s in sample]
    got_counts = counts.numpy()[:CHECKED_POINTS]
    if np.abs(got_counts - np.array(want_counts)).max() > 0:  # float32 vs float64 at the radius: none here
        raise SystemExit("FAILED: hash-grid neighbour counts differ from numpy's all-pairs count")
    out["grid_query_ms"] = best_of(run_grid, repeat=5) * 1e3
    out["mean_neighbours"] = float(counts.numpy().mean())
    return out


def main():
    if warp_mode():
        import warp as wp

        wp.config.quiet = True
        wp.init()
        return emit_warp(measure(wp, {"device": "cpu"}))
    import mlwarp as wp

    m = measure(wp, {})
    w = run_warp(__file__) or {}
    rows = [
        (f"wp.Mesh build, {2 * GRID * GRID:,} triangles (ms)", m["mesh_build_ms"], None, w.get("mesh_build_ms")),
        (f"mesh_query_ray, {RAYS:,} rays (ms)", m["rays_ms"], None, w.get("rays_ms")),
        (f"HashGrid.build, {POINTS:,} points (ms)", m["grid_build_ms"], None, w.get("grid_build_ms")),
        (f"hash-grid neighbour counts, {POINTS:,} queries (ms)", m["grid_query_ms"], None, w.get("grid_query_ms")),
    ]
    lines = print_table("Geometry", "ms", rows, higher_is_better=False)
    lines += ["", f"rays: {100 * m['hit_fraction']:.1f}% hit, distances checked on {CHECKED_RAYS} rays against "
                  f"brute-force numpy; neighbours: mean {m['mean_neighbours']:.4f}"
                  + (f" (Warp {w['mean_neighbours']:.4f})" if w else "") + f", counts checked on {CHECKED_POINTS} "
                  "points against numpy's all-pairs distances"]
    print(lines[-1])
    save_json("geometry", {"table": lines, "data": {"mlwarp": m, "warp": w or None}})


if __name__ == "__main__":
    main()
