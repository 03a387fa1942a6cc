"""Geometry queries on one device, checked against brute force in numpy: shared by the fake-driver tests
(test_geometry_cuda_fake.py), which add what only the fake can see (descriptor addresses, freed memory), and the
tests that run on every real device (test_geometry_cuda_exec.py: the CPU always, a GPU when there is one).

Each check builds its structure from arrays on `device`, launches the query kernels there and compares with
numpy (float64, every triangle, every box, all pairs of points); it returns the structure."""

from __future__ import annotations

import numpy as np

import mlwarp as wp


# -- kernels ----------------------------------------------------------------------------------------------
@wp.kernel
def closest_points(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), max_dist: float, dist: wp.array(dtype=float),
                   faces: wp.array(dtype=int)):
    i = wp.tid()
    q = wp.mesh_query_point_no_sign(mesh, xs[i], max_dist)
    if q.result:
        faces[i] = q.face
        dist[i] = wp.length(wp.mesh_eval_position(mesh, q.face, q.u, q.v) - xs[i])


@wp.kernel
def first_hits(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
               ts: wp.array(dtype=float), faces: wp.array(dtype=int)):
    i = wp.tid()
    q = wp.mesh_query_ray(mesh, starts[i], dirs[i], 1.0e6)
    if q.result:
        ts[i] = q.t
        faces[i] = q.face


@wp.kernel
def mesh_box_hits(mesh: wp.uint64, lower: wp.vec3, upper: wp.vec3, hits: wp.array(dtype=int)):
    q = wp.mesh_query_aabb(mesh, lower, upper)
    f = int(0)
    while wp.mesh_query_aabb_next(q, f):
        hits[f] += 1


@wp.kernel
def bvh_box_hits(bvh: wp.uint64, lowers: wp.array(dtype=wp.vec3), uppers: wp.array(dtype=wp.vec3),
                 hits: wp.array2d(dtype=int)):
    i = wp.tid()
    for item in wp.bvh_query_aabb(bvh, lowers[i], uppers[i]):
        hits[i, item] += 1


@wp.kernel
def bvh_ray_hits(bvh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
                 hits: wp.array2d(dtype=int)):
    i = wp.tid()
    for item in wp.bvh_query_ray(bvh, starts[i], dirs[i]):
        hits[i, item] += 1


@wp.kernel
def neighbour_counts(grid: wp.uint64, points: wp.array(dtype=wp.vec3), radius: float, counts: wp.array(dtype=int)):
    i = wp.tid()
    p = points[i]
    n = int(0)
    for j in wp.hash_grid_query(grid, p, radius):
        if wp.length(points[j] - p) <= radius:
            n += 1
    counts[i] = n


@wp.kernel
def translate(points: wp.array(dtype=wp.vec3), shift: wp.vec3):
    i = wp.tid()
    points[i] = points[i] + shift


@wp.kernel
def volume_store_ramp(volume: wp.uint64, ijk: wp.array2d(dtype=wp.int32)):
    t = wp.tid()
    i, j, k = ijk[t, 0], ijk[t, 1], ijk[t, 2]
    wp.volume_store_f(volume, i, j, k, float(i) + 10.0 * float(j) + 100.0 * float(k))


@wp.kernel
def volume_reads(volume: wp.uint64, ijk: wp.array2d(dtype=wp.int32), uvw: wp.array(dtype=wp.vec3),
                 looked: wp.array(dtype=float), sampled: wp.array(dtype=float)):
    t = wp.tid()
    looked[t] = wp.volume_lookup_f(volume, ijk[t, 0], ijk[t, 1], ijk[t, 2])
    sampled[t] = wp.volume_sample_f(volume, uvw[t], wp.Volume.LINEAR)


@wp.kernel
def group_box_hits(bvh: wp.uint64, asked: wp.array(dtype=int), lower: wp.vec3, upper: wp.vec3,
                   hits: wp.array2d(dtype=int)):
    t = wp.tid()
    root = wp.bvh_get_group_root(bvh, asked[t])
    if root >= 0:
        for item in wp.bvh_query_aabb(bvh, lower, upper, root):
            hits[t, item] += 1


@wp.kernel
def grouped_neighbour_counts_f64(grid: wp.uint64, points: wp.array(dtype=wp.vec3d), groups: wp.array(dtype=int),
                                 radius: wp.float64, counts: wp.array(dtype=int)):
    tid = wp.tid()
    p = points[tid]
    n = int(0)
    for index in wp.hash_grid_query(grid, p, radius, groups[tid]):
        if wp.length(points[index] - p) <= radius:
            n += 1
    counts[tid] = n


KERNELS = [closest_points, first_hits, mesh_box_hits, bvh_box_hits, bvh_ray_hits, neighbour_counts, translate,
           volume_store_ramp, volume_reads, group_box_hits, grouped_neighbour_counts_f64]


# -- data and numpy references (float64, every primitive) ------------------------------------------------------
def triangle_soup(n, seed):
    rng = np.random.default_rng(seed)
    centres = rng.random((n, 1, 3)) * 4.0
    pts = (centres + (rng.random((n, 3, 3)) - 0.5) * 0.8).reshape(-1, 3).astype(np.float32)
    return pts, np.arange(3 * n, dtype=np.int32).reshape(-1, 3)


def ref_closest_distance(pts, tris, x):
    """Distance from x to each triangle: to the plane's foot when it lies inside the triangle, else to the
    nearest edge."""
    a, b, c = (pts[tris[:, k]].astype(np.float64) for k in range(3))
    n = np.cross(b - a, c - a)
    foot = x - (((x - a) * n).sum(1) / (n * n).sum(1))[:, None] * n
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
    return best


def ref_ray_t(pts, tris, start, d):
    """Möller-Trumbore against every triangle: the hit distance of each, inf where the ray misses it."""
    a, b, c = (pts[tris[:, k]].astype(np.float64) for k in range(3))
    e1, e2 = b - a, c - a
    pv = np.cross(d, e2)
    det = (e1 * pv).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tv = start - a
        u = (tv * pv).sum(1) / det
        qv = np.cross(tv, e1)
        v = (d * qv).sum(1) / det
        t = (e2 * qv).sum(1) / det
    return np.where((det != 0) & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0), t, np.inf)


def ref_box_overlap(lowers, uppers, lo, hi):
    return ~((lowers > hi).any(1) | (uppers < lo).any(1))


def ref_ray_boxes(lowers, uppers, start, d):
    """Slab test of the ray start + t d, t >= 0, against every box (Warp's, with 1 / d in float32)."""
    rcp = (np.float32(1.0) / d.astype(np.float32)).astype(np.float32)
    with np.errstate(invalid="ignore"):
        l1, l2 = (lowers - start) * rcp, (uppers - start) * rcp
    lmin, lmax = np.minimum(l1, l2).max(axis=1), np.maximum(l1, l2).min(axis=1)
    return (lmax >= 0) & (lmax >= lmin)


def unit_dirs(n, rng):
    d = rng.normal(size=(n, 3))
    return (d / np.linalg.norm(d, axis=1, keepdims=True)).astype(np.float32)


def device_mesh(pts, tris, device, **kw):
    return wp.Mesh(wp.array(pts, dtype=wp.vec3, device=device),
                   wp.array(tris.reshape(-1), dtype=wp.int32, device=device), **kw)


# -- checks (device: "cpu", "cuda:0", ...) ---------------------------------------------------------------------
def check_mesh_queries(device):
    """Closest points, first ray hits and box candidates of a triangle soup."""
    pts, tris = triangle_soup(300, 2)
    mesh = device_mesh(pts, tris, device, bvh_leaf_size=2)
    rng = np.random.default_rng(3)
    xs = (rng.random((64, 3)) * 5.0 - 0.5).astype(np.float32)
    dist = wp.full(64, -1.0, dtype=float, device=device)
    faces = wp.full(64, -1, dtype=int, device=device)
    wp.launch(closest_points, dim=64, inputs=[mesh.id, wp.array(xs, dtype=wp.vec3, device=device), 1.0e6, dist,
                                              faces], device=device)
    expected = np.array([ref_closest_distance(pts, tris, x).min() for x in xs])
    np.testing.assert_allclose(dist.numpy(), expected, rtol=1e-4, atol=1e-5)
    own = np.array([ref_closest_distance(pts, tris[f:f + 1], x)[0] for f, x in zip(faces.numpy(), xs)])
    np.testing.assert_allclose(own, expected, rtol=1e-4, atol=1e-5)  # the face found is a nearest one

    starts = np.full((64, 3), 2.0, np.float32) + (rng.random((64, 3)) - 0.5).astype(np.float32)
    dirs = unit_dirs(64, rng)
    ts = wp.full(64, -1.0, dtype=float, device=device)
    wp.launch(first_hits, dim=64, inputs=[mesh.id, wp.array(starts, dtype=wp.vec3, device=device),
                                          wp.array(dirs, dtype=wp.vec3, device=device), ts, faces], device=device)
    ref_t = np.array([ref_ray_t(pts, tris, s, d).min() for s, d in zip(starts, dirs)])
    hit = np.isfinite(ref_t)
    assert hit.sum() > 10 and (~hit).sum() > 0  # the rays hit and miss
    np.testing.assert_array_equal(ts.numpy() >= 0.0, hit)
    np.testing.assert_allclose(ts.numpy()[hit], ref_t[hit], rtol=1e-4, atol=1e-5)

    lo, hi = np.array([1.0, 1.0, 1.0], np.float32), np.array([2.5, 3.0, 2.0], np.float32)
    hits = wp.zeros(300, dtype=int, device=device)
    wp.launch(mesh_box_hits, dim=1, inputs=[mesh.id, wp.vec3(*lo), wp.vec3(*hi), hits], device=device)
    corners = pts[tris]
    np.testing.assert_array_equal(hits.numpy(), ref_box_overlap(corners.min(axis=1), corners.max(axis=1), lo, hi))
    return mesh


def check_mesh_refit(device):
    """refit() after the points moved in place (by a kernel on the device), then the points setter."""
    pts, tris = triangle_soup(30, 4)
    mesh = device_mesh(pts, tris, device)
    shift = np.array([10.0, -3.0, 0.5], np.float32)
    wp.launch(translate, dim=len(pts), inputs=[mesh.points, wp.vec3(*shift)], device=device)  # edited in place
    mesh.refit()
    moved = pts + shift
    xs = (np.random.default_rng(5).random((32, 3)) * 4.0 + shift).astype(np.float32)
    dist = wp.full(32, -1.0, dtype=float, device=device)
    faces = wp.zeros(32, dtype=int, device=device)
    wp.launch(closest_points, dim=32, inputs=[mesh.id, wp.array(xs, dtype=wp.vec3, device=device), 1.0e6, dist,
                                              faces], device=device)
    np.testing.assert_allclose(dist.numpy(), [ref_closest_distance(moved, tris, x).min() for x in xs],
                               rtol=1e-4, atol=1e-5)
    # a box around the moved triangles finds them all; one around their old place finds none
    hits = wp.zeros(30, dtype=int, device=device)
    wp.launch(mesh_box_hits, dim=1, inputs=[mesh.id, wp.vec3(*(moved.min(0) - 0.1)), wp.vec3(*(moved.max(0) + 0.1)),
                                            hits], device=device)
    np.testing.assert_array_equal(hits.numpy(), np.ones(30))
    hits.zero_()
    wp.launch(mesh_box_hits, dim=1, inputs=[mesh.id, wp.vec3(*pts.min(0)), wp.vec3(*pts.max(0)), hits], device=device)
    np.testing.assert_array_equal(hits.numpy(), np.zeros(30))
    # the points setter: a new array of the same shape, then a refit
    mesh.points = wp.array(pts, dtype=wp.vec3, device=device)
    wp.launch(mesh_box_hits, dim=1, inputs=[mesh.id, wp.vec3(*pts.min(0)), wp.vec3(*pts.max(0)), hits], device=device)
    np.testing.assert_array_equal(hits.numpy(), np.ones(30))
    return mesh


def random_boxes(n, seed):
    rng = np.random.default_rng(seed)
    lowers = (rng.random((n, 3)) * 5.0).astype(np.float32)
    return lowers, (lowers + rng.random((n, 3)) * 1.5).astype(np.float32)


def check_bvh_queries(device, constructor=None):
    """Box and ray queries yield each box they meet once, and no other."""
    lowers, uppers = random_boxes(120, 6)
    bvh = wp.Bvh(wp.array(lowers, dtype=wp.vec3, device=device), wp.array(uppers, dtype=wp.vec3, device=device),
                 constructor=constructor, leaf_size=3)
    rng = np.random.default_rng(7)
    q_lo = (rng.random((16, 3)) * 5.0).astype(np.float32)
    q_hi = (q_lo + rng.random((16, 3)) * 1.0).astype(np.float32)
    hits = wp.zeros((16, 120), dtype=int, device=device)
    wp.launch(bvh_box_hits, dim=16, inputs=[bvh.id, wp.array(q_lo, dtype=wp.vec3, device=device),
                                            wp.array(q_hi, dtype=wp.vec3, device=device), hits], device=device)
    expected = np.array([ref_box_overlap(lowers, uppers, lo, hi) for lo, hi in zip(q_lo, q_hi)])
    assert expected.sum() > 16
    np.testing.assert_array_equal(hits.numpy(), expected)

    starts = (rng.random((16, 3)) * 5.0).astype(np.float32)
    dirs = unit_dirs(16, rng)
    hits.zero_()
    wp.launch(bvh_ray_hits, dim=16, inputs=[bvh.id, wp.array(starts, dtype=wp.vec3, device=device),
                                            wp.array(dirs, dtype=wp.vec3, device=device), hits], device=device)
    np.testing.assert_array_equal(hits.numpy(), [ref_ray_boxes(lowers, uppers, s, d) for s, d in zip(starts, dirs)])
    return bvh


def check_bvh_refit_and_rebuild(device):
    """refit() and then rebuild() after the boxes moved in place (by a kernel on the device); the id stays."""
    lowers, uppers = random_boxes(80, 8)
    lo_dev, hi_dev = (wp.array(a, dtype=wp.vec3, device=device) for a in (lowers, uppers))
    bvh = wp.Bvh(lo_dev, hi_dev, leaf_size=2)
    bvh_id = bvh.id
    moved_by = np.zeros(3, np.float32)
    for update, shift in ((bvh.refit, np.array([0.0, 20.0, 0.0], np.float32)),
                          (bvh.rebuild, np.array([0.0, 0.0, -40.0], np.float32))):
        for a in (lo_dev, hi_dev):
            wp.launch(translate, dim=80, inputs=[a, wp.vec3(*shift)], device=device)
        moved_by = moved_by + shift
        update()
        assert bvh.id == bvh_id  # the descriptor stays where kernels find it
        hits = wp.zeros((2, 80), dtype=int, device=device)
        q_lo = np.stack([lowers.min(0) + moved_by, lowers.min(0)])  # around the moved boxes, around the old place
        q_hi = np.stack([uppers.max(0) + moved_by, uppers.max(0)])
        wp.launch(bvh_box_hits, dim=2, inputs=[bvh.id, wp.array(q_lo, dtype=wp.vec3, device=device),
                                               wp.array(q_hi, dtype=wp.vec3, device=device), hits], device=device)
        np.testing.assert_array_equal(hits.numpy(), [np.ones(80), np.zeros(80)])
    return bvh


def check_grouped_f64_hash_grid(device):
    """A float64 grid built with groups: each point's neighbours of its own group, against all pairs."""
    rng = np.random.default_rng(10)
    pts = rng.random((250, 3)) * 3.0
    g = rng.integers(-1, 3, 250).astype(np.int32)
    points = wp.array(pts, dtype=wp.vec3d, device=device)
    groups = wp.array(g, dtype=int, device=device)
    grid = wp.HashGrid(12, 12, 12, device=device, dtype=wp.float64)
    grid.build(points, 0.4, groups=groups)
    counts = wp.zeros(250, dtype=int, device=device)
    wp.launch(grouped_neighbour_counts_f64, dim=250, inputs=[grid.id, points, groups, 0.4, counts], device=device)
    close = np.linalg.norm(pts[:, None] - pts[None], axis=2) <= 0.4
    np.testing.assert_array_equal(counts.numpy(), (close & (g[:, None] == g[None])).sum(axis=1))
    return grid


def check_hash_grid_neighbours(device):
    """Neighbour counts within the radius by a hash-grid query loop, against all pairs of points; then a
    rebuild with more points (the grid grows)."""
    rng = np.random.default_rng(9)
    pts = (rng.random((300, 3)) * 4.0).astype(np.float32)
    points = wp.array(pts, dtype=wp.vec3, device=device)
    grid = wp.HashGrid(16, 16, 16, device=device)
    assert grid.device == device
    radius = 0.5
    grid.build(points, radius)
    counts = wp.zeros(300, dtype=int, device=device)
    wp.launch(neighbour_counts, dim=300, inputs=[grid.id, points, radius, counts], device=device)
    d = np.linalg.norm(pts[:, None, :].astype(np.float64) - pts[None, :, :], axis=2)
    expected = (d <= radius).sum(axis=1)
    assert expected.max() > 1
    np.testing.assert_array_equal(counts.numpy(), expected)
    more_pts = np.concatenate([pts, pts[:100] + np.float32(0.05)])
    more = wp.array(more_pts, dtype=wp.vec3, device=device)
    grid.build(more, radius)
    counts = wp.zeros(400, dtype=int, device=device)
    wp.launch(neighbour_counts, dim=400, inputs=[grid.id, more, radius, counts], device=device)
    p = more_pts.astype(np.float64)
    np.testing.assert_array_equal(counts.numpy(), (np.linalg.norm(p[:, None] - p[None], axis=2) <= radius).sum(1))
    return grid


RAMP = np.array([1.0, 10.0, 100.0])  # the value i + 10 j + 100 k stored at voxel (i, j, k)
CUBE_TILES = np.array([[x, y, z] for x in (0, 8) for y in (0, 8) for z in (0, 8)], np.int32)  # voxels [0, 16)^3


def check_volume(device):
    """A float volume of eight tiles allocated on `device`, every voxel set by a kernel to a linear ramp; lookups
    find it (the background outside the tiles) and trilinear samples inside reproduce it exactly."""
    volume = wp.Volume.allocate_by_tiles(wp.array(CUBE_TILES, dtype=wp.int32, device=device), voxel_size=0.5,
                                         bg_value=-1.0, device=device)
    assert volume.device == device
    voxels = np.stack(np.meshgrid(*[np.arange(16)] * 3, indexing="ij"), axis=-1).reshape(-1, 3).astype(np.int32)
    wp.launch(volume_store_ramp, dim=len(voxels), inputs=[volume.id, wp.array(voxels, dtype=wp.int32, device=device)],
              device=device)
    rng = np.random.default_rng(13)
    ijk = np.concatenate([rng.integers(0, 16, (30, 3)), [[20, 0, 0], [-1, 3, 3], [3, 16, 3]]]).astype(np.int32)
    uvw = (rng.random((33, 3)) * 15.0).astype(np.float32)  # (inside: all eight neighbours of each are active)
    looked = wp.zeros(33, dtype=float, device=device)
    sampled = wp.zeros(33, dtype=float, device=device)
    wp.launch(volume_reads, dim=33, inputs=[volume.id, wp.array(ijk, dtype=wp.int32, device=device),
                                            wp.array(uvw, dtype=wp.vec3, device=device), looked, sampled],
              device=device)
    inside = ((ijk >= 0) & (ijk < 16)).all(axis=1)
    np.testing.assert_array_equal(looked.numpy(), np.where(inside, ijk @ RAMP, -1.0))
    np.testing.assert_allclose(sampled.numpy(), uvw.astype(np.float64) @ RAMP, rtol=1e-5, atol=1e-3)
    return volume


def check_grouped_mesh(device):
    """A mesh built with groups on `device`: a query from a group's root (wp.mesh_get_bvh, wp.bvh_get_group_root)
    yields that group's triangles only; an absent group has no root."""
    pts, tris = triangle_soup(90, 14)
    groups = np.random.default_rng(15).choice([2, 5, 11], size=90).astype(np.int32)
    mesh = device_mesh(pts, tris, device, groups=wp.array(groups, dtype=wp.int32, device=device))
    asked = np.array([2, 5, 11, 4], np.int32)
    hits = wp.zeros((4, 90), dtype=int, device=device)
    lo, hi = np.array([0.5, 0.5, 0.5], np.float32), np.array([3.0, 3.5, 3.0], np.float32)
    wp.launch(group_box_hits, dim=4, inputs=[mesh._bvh.id, wp.array(asked, dtype=int, device=device), wp.vec3(*lo),
                                             wp.vec3(*hi), hits], device=device)
    corners = pts[tris]
    overlap = ref_box_overlap(corners.min(axis=1), corners.max(axis=1), lo, hi)
    for t, g in enumerate(asked):
        np.testing.assert_array_equal(hits.numpy()[t], overlap & (groups == g))
    assert hits.numpy()[:3].sum() == overlap.sum() > 10
    return mesh
