"""wp.Mesh, wp.Bvh and wp.HashGrid on a CUDA device, against the fake driver (cuda_fake_driver.py: "device memory"
is host memory the fake tracks, a launch runs the CPU build of the same kernel on the launch struct a GPU would
get; the CUDA build of each kernel is still made and assembled by ptxas, as cuLaunchKernel needs its image).

The structures are built from device arrays, their descriptors live in device memory and hold device addresses
(every address word lies inside a fake device allocation), the query kernels launched on the device find what
brute force in numpy finds (every triangle, every box, all pairs of points), refit() follows points edited on
the device, the device memory goes with the object, and bad input raises Warp's errors."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.core import geometry as layout
from mlwarp.runtime import device as device_registry
from mlwarp.runtime.cuda import devices as cuda_devices
from mlwarp.runtime.cuda import driver as drv

from cuda_fake_driver import FakeDriver

F32_MAX = float(np.finfo(np.float32).max)


# -- kernels (launched on the fake device) -------------------------------------------------------------------
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


KERNELS = [closest_points, first_hits, mesh_box_hits, bvh_box_hits, bvh_ray_hits, neighbour_counts, translate]


@pytest.fixture
def fake(monkeypatch):
    """Two fake sm_90 GPUs in place of the driver, each kernel's CPU build under its CUDA entry name; mlwarp's
    CUDA state is reset before and after."""
    fake = FakeDriver(arches=(90, 90))
    monkeypatch.setattr(drv, "_driver", fake)
    monkeypatch.setattr(drv, "_init_error", None)
    monkeypatch.setattr(cuda_devices, "_devices", None)
    monkeypatch.setattr(device_registry, "_default", None)
    saved = dict(device_registry._devices)
    cpu = wp.get_device("cpu")
    for k in KERNELS:
        fake.cpu_entries[f"{k.key}_cuda"] = k.compiled(cpu)
    yield fake
    for k in KERNELS:
        for alias in [a for a in k._compiled if a.startswith("cuda")]:
            del k._compiled[alias]
    device_registry._devices.clear()
    device_registry._devices.update(saved)


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


def device_mesh(pts, tris, device="cuda:0", **kw):
    return wp.Mesh(wp.array(pts, dtype=wp.vec3, device=device),
                   wp.array(tris.reshape(-1), dtype=wp.int32, device=device), **kw)


def assert_addresses_on_device(fake, words, address_words):
    """Each listed descriptor word is a nonzero address inside a fake device allocation (not host memory)."""
    for w in address_words:
        address = int(words[w])
        assert address, f"descriptor word {w} is null"
        assert any(base <= address < base + len(buf) for base, (buf, _) in fake.buffers.items()), \
            f"descriptor word {w} ({address:#x}) is not a device address"


# -- wp.Mesh -------------------------------------------------------------------------------------------------
def test_mesh_descriptor_lives_on_the_device_and_points_at_the_users_arrays(fake):
    pts, tris = triangle_soup(40, 1)
    mesh = device_mesh(pts, tris, support_winding_number=True)
    assert mesh.device == "cuda:0" and mesh.points.device == "cuda:0"
    words = mesh._mirror.read_descriptor()
    assert mesh.id == mesh._mirror.id
    assert_addresses_on_device(fake, [mesh.id], [0])  # the id itself is a device address
    # the user's device arrays, referenced (not copied), as on the CPU
    assert words[layout.MESH_POINTS] == mesh.points.ptr and words[layout.MESH_INDICES] == mesh.indices.ptr
    assert words[layout.MESH_BVH] == mesh._bvh.id
    assert (words[layout.MESH_NUM_POINTS], words[layout.MESH_NUM_TRIS]) == (120, 40)
    assert_addresses_on_device(fake, words, [layout.MESH_POINTS, layout.MESH_INDICES, layout.MESH_BVH,
                                             layout.MESH_WN_NORMALS, layout.MESH_WN_CENTERS, layout.MESH_WN_RADII,
                                             layout.MESH_RAY_NODES, layout.MESH_RAY_TRIS])
    tree = mesh._bvh._mirror.read_descriptor()
    assert_addresses_on_device(fake, tree, [layout.BVH_NODE_LOWERS, layout.BVH_NODE_UPPERS, layout.BVH_SKIP,
                                            layout.BVH_PRIM_START, layout.BVH_PRIM_END, layout.BVH_PRIMITIVES,
                                            layout.BVH_ITEM_LOWERS, layout.BVH_ITEM_UPPERS])
    # the edge-length average (a float32 in its word's low half): the mean of every triangle's three edges
    corners = pts[tris].astype(np.float64)
    edges = np.linalg.norm(corners - np.roll(corners, 1, axis=1), axis=2)
    np.testing.assert_allclose(words.view(np.float32)[2 * layout.MESH_AVERAGE_EDGE_LENGTH], edges.mean(), rtol=1e-5)


def test_mesh_point_ray_and_box_queries_on_the_device_match_brute_force(fake):
    pts, tris = triangle_soup(300, 2)
    mesh = device_mesh(pts, tris, bvh_leaf_size=2)
    rng = np.random.default_rng(3)
    xs = (rng.random((64, 3)) * 5.0 - 0.5).astype(np.float32)
    dist = wp.full(64, -1.0, dtype=float, device="cuda:0")
    faces = wp.full(64, -1, dtype=int, device="cuda:0")
    wp.launch(closest_points, dim=64, inputs=[mesh.id, wp.array(xs, dtype=wp.vec3, device="cuda:0"), 1.0e6, dist,
                                              faces], device="cuda:0")
    expected = np.array([ref_closest_distance(pts, tris, x).min() for x in xs])
    np.testing.assert_allclose(dist.numpy(), expected, rtol=1e-4, atol=1e-5)
    own = np.array([ref_closest_distance(pts, tris[f:f + 1], x)[0] for f, x in zip(faces.numpy(), xs)])
    np.testing.assert_allclose(own, expected, rtol=1e-4, atol=1e-5)  # the face found is a nearest one

    starts = np.full((64, 3), 2.0, np.float32) + (rng.random((64, 3)) - 0.5).astype(np.float32)
    dirs = unit_dirs(64, rng)
    ts = wp.full(64, -1.0, dtype=float, device="cuda:0")
    wp.launch(first_hits, dim=64, inputs=[mesh.id, wp.array(starts, dtype=wp.vec3, device="cuda:0"),
                                          wp.array(dirs, dtype=wp.vec3, device="cuda:0"), ts, faces],
              device="cuda:0")
    ref_t = np.array([ref_ray_t(pts, tris, s, d).min() for s, d in zip(starts, dirs)])
    hit = np.isfinite(ref_t)
    assert hit.sum() > 10 and (~hit).sum() > 0  # the rays hit and miss
    np.testing.assert_array_equal(ts.numpy() >= 0.0, hit)
    np.testing.assert_allclose(ts.numpy()[hit], ref_t[hit], rtol=1e-4, atol=1e-5)

    lo, hi = np.array([1.0, 1.0, 1.0], np.float32), np.array([2.5, 3.0, 2.0], np.float32)
    hits = wp.zeros(300, dtype=int, device="cuda:0")
    wp.launch(mesh_box_hits, dim=1, inputs=[mesh.id, wp.vec3(*lo), wp.vec3(*hi), hits], device="cuda:0")
    corners = pts[tris]
    np.testing.assert_array_equal(hits.numpy(), ref_box_overlap(corners.min(axis=1), corners.max(axis=1), lo, hi))


def test_mesh_refit_follows_points_moved_on_the_device(fake):
    pts, tris = triangle_soup(30, 4)
    mesh = device_mesh(pts, tris)
    shift = np.array([10.0, -3.0, 0.5], np.float32)
    wp.launch(translate, dim=len(pts), inputs=[mesh.points, wp.vec3(*shift)], device="cuda:0")  # edited in place
    mesh.refit()
    moved = pts + shift
    xs = (np.random.default_rng(5).random((32, 3)) * 4.0 + shift).astype(np.float32)
    dist = wp.full(32, -1.0, dtype=float, device="cuda:0")
    faces = wp.zeros(32, dtype=int, device="cuda:0")
    wp.launch(closest_points, dim=32, inputs=[mesh.id, wp.array(xs, dtype=wp.vec3, device="cuda:0"), 1.0e6, dist,
                                              faces], device="cuda:0")
    np.testing.assert_allclose(dist.numpy(), [ref_closest_distance(moved, tris, x).min() for x in xs],
                               rtol=1e-4, atol=1e-5)
    # a box around the moved triangles finds them all; one around their old place finds none
    hits = wp.zeros(30, dtype=int, device="cuda:0")
    wp.launch(mesh_box_hits, dim=1, inputs=[mesh.id, wp.vec3(*(moved.min(0) - 0.1)), wp.vec3(*(moved.max(0) + 0.1)),
                                            hits], device="cuda:0")
    np.testing.assert_array_equal(hits.numpy(), np.ones(30))
    hits.zero_()
    wp.launch(mesh_box_hits, dim=1, inputs=[mesh.id, wp.vec3(*pts.min(0)), wp.vec3(*pts.max(0)), hits],
              device="cuda:0")
    np.testing.assert_array_equal(hits.numpy(), np.zeros(30))
    # the points setter: a new device array of the same shape, then a refit
    mesh.points = wp.array(pts, dtype=wp.vec3, device="cuda:0")
    assert mesh._mirror.read_descriptor()[layout.MESH_POINTS] == mesh.points.ptr
    wp.launch(mesh_box_hits, dim=1, inputs=[mesh.id, wp.vec3(*pts.min(0)), wp.vec3(*pts.max(0)), hits],
              device="cuda:0")
    np.testing.assert_array_equal(hits.numpy(), np.ones(30))


# -- wp.Bvh --------------------------------------------------------------------------------------------------
def random_boxes(n, seed):
    rng = np.random.default_rng(seed)
    lowers = (rng.random((n, 3)) * 5.0).astype(np.float32)
    return lowers, (lowers + rng.random((n, 3)) * 1.5).astype(np.float32)


@pytest.mark.parametrize("constructor", [None, "sah", "median", "lbvh"])
def test_bvh_box_and_ray_queries_on_the_device_match_every_box(fake, constructor):
    lowers, uppers = random_boxes(120, 6)
    bvh = wp.Bvh(wp.array(lowers, dtype=wp.vec3, device="cuda:0"), wp.array(uppers, dtype=wp.vec3, device="cuda:0"),
                 constructor=constructor, leaf_size=3)
    words = bvh._mirror.read_descriptor()
    assert words[layout.BVH_ITEM_LOWERS] == bvh.lowers.ptr and words[layout.BVH_ITEM_UPPERS] == bvh.uppers.ptr
    assert words[layout.BVH_NUM_ITEMS] == 120
    rng = np.random.default_rng(7)
    q_lo = (rng.random((16, 3)) * 5.0).astype(np.float32)
    q_hi = (q_lo + rng.random((16, 3)) * 1.0).astype(np.float32)
    hits = wp.zeros((16, 120), dtype=int, device="cuda:0")
    wp.launch(bvh_box_hits, dim=16, inputs=[bvh.id, wp.array(q_lo, dtype=wp.vec3, device="cuda:0"),
                                            wp.array(q_hi, dtype=wp.vec3, device="cuda:0"), hits], device="cuda:0")
    expected = np.array([ref_box_overlap(lowers, uppers, lo, hi) for lo, hi in zip(q_lo, q_hi)])
    assert expected.sum() > 16
    np.testing.assert_array_equal(hits.numpy(), expected)  # each overlapping box once, no other

    starts = (rng.random((16, 3)) * 5.0).astype(np.float32)
    dirs = unit_dirs(16, rng)
    hits.zero_()
    wp.launch(bvh_ray_hits, dim=16, inputs=[bvh.id, wp.array(starts, dtype=wp.vec3, device="cuda:0"),
                                            wp.array(dirs, dtype=wp.vec3, device="cuda:0"), hits], device="cuda:0")
    np.testing.assert_array_equal(hits.numpy(), [ref_ray_boxes(lowers, uppers, s, d) for s, d in zip(starts, dirs)])


def test_bvh_refit_and_rebuild_follow_boxes_moved_on_the_device(fake):
    lowers, uppers = random_boxes(80, 8)
    lo_dev, hi_dev = (wp.array(a, dtype=wp.vec3, device="cuda:0") for a in (lowers, uppers))
    bvh = wp.Bvh(lo_dev, hi_dev, leaf_size=2)
    bvh_id = bvh.id
    shift = np.array([0.0, 20.0, 0.0], np.float32)
    q_lo, q_hi = lowers.min(0) + shift, uppers.max(0) + shift  # around the moved boxes only
    for update in (bvh.refit, bvh.rebuild):
        for a in (lo_dev, hi_dev):
            wp.launch(translate, dim=80, inputs=[a, wp.vec3(*shift)], device="cuda:0")
        update()
        assert bvh.id == bvh_id  # the descriptor stays where kernels (and captured ids) find it
        hits = wp.zeros((1, 80), dtype=int, device="cuda:0")
        wp.launch(bvh_box_hits, dim=1, inputs=[bvh.id, wp.array(q_lo[None], dtype=wp.vec3, device="cuda:0"),
                                               wp.array(q_hi[None], dtype=wp.vec3, device="cuda:0"), hits],
                  device="cuda:0")
        np.testing.assert_array_equal(hits.numpy()[0], np.ones(80))
        shift = shift * 2.0  # (the second round moves the boxes on by twice as much)
        q_lo, q_hi = q_lo + shift, q_hi + shift


# -- wp.HashGrid ---------------------------------------------------------------------------------------------
def test_hash_grid_on_the_device_counts_the_neighbours_of_all_pairs(fake):
    rng = np.random.default_rng(9)
    pts = (rng.random((300, 3)) * 4.0).astype(np.float32)
    points = wp.array(pts, dtype=wp.vec3, device="cuda:0")
    grid = wp.HashGrid(16, 16, 16, device="cuda:0")
    assert grid.device == "cuda:0"
    assert_addresses_on_device(fake, [grid.id], [0])
    radius = 0.5
    grid.build(points, radius)
    words = grid._mirror.read_descriptor()
    assert_addresses_on_device(fake, words, [layout.HG_POINT_IDS, layout.HG_CELL_STARTS, layout.HG_CELL_ENDS])
    assert words[layout.HG_NUM_POINTS] == 300
    counts = wp.zeros(300, dtype=int, device="cuda:0")
    wp.launch(neighbour_counts, dim=300, inputs=[grid.id, points, radius, counts], device="cuda:0")
    d = np.linalg.norm(pts[:, None, :].astype(np.float64) - pts[None, :, :], axis=2)
    expected = (d <= radius).sum(axis=1)
    assert expected.max() > 1
    np.testing.assert_array_equal(counts.numpy(), expected)
    # a rebuild after the points moved on the device (more points than before: the grid grows)
    more = wp.array(np.concatenate([pts, pts[:100] + 0.05]), dtype=wp.vec3, device="cuda:0")
    grid.build(more, radius)
    counts = wp.zeros(400, dtype=int, device="cuda:0")
    wp.launch(neighbour_counts, dim=400, inputs=[grid.id, more, radius, counts], device="cuda:0")
    p = more.numpy().astype(np.float64)
    np.testing.assert_array_equal(counts.numpy(), (np.linalg.norm(p[:, None] - p[None], axis=2) <= radius).sum(1))


# -- lifetime and bad input ----------------------------------------------------------------------------------
def test_device_memory_goes_with_the_structures(fake):
    pts, tris = triangle_soup(20, 10)
    points = wp.array(pts, dtype=wp.vec3, device="cuda:0")
    indices = wp.array(tris.reshape(-1), dtype=wp.int32, device="cuda:0")
    before = set(fake.buffers)
    mesh = wp.Mesh(points, indices, support_winding_number=True)
    bvh = wp.Bvh(points, points)
    grid = wp.HashGrid(4, 4, 4, device="cuda:0")
    grid.build(points, 0.3)
    mesh.refit()
    bvh.rebuild()
    assert len(set(fake.buffers) - before) > 10
    del mesh, bvh, grid
    gc.collect()
    assert set(fake.buffers) == before  # every device allocation of the three is freed, the user's arrays kept
    np.testing.assert_array_equal(points.numpy(), pts)


def test_structures_on_the_second_device(fake):
    pts, tris = triangle_soup(10, 11)
    mesh = device_mesh(pts, tris, device="cuda:1")
    assert mesh.device == "cuda:1"
    owners = {dev for base, (buf, dev) in fake.buffers.items() if base <= mesh.id < base + len(buf)}
    assert owners == {1}  # the descriptor is allocated on the mesh's device


def test_bad_device_combinations_raise_warps_errors(fake):
    pts, tris = triangle_soup(4, 12)
    on = {d: (wp.array(pts, dtype=wp.vec3, device=d), wp.array(tris.reshape(-1), dtype=wp.int32, device=d))
          for d in ("cpu", "cuda:0", "cuda:1")}
    with pytest.raises(RuntimeError, match=r"^Mesh points and indices must live on the same device$"):
        wp.Mesh(on["cuda:0"][0], on["cpu"][1])
    with pytest.raises(RuntimeError, match=r"^Mesh points and indices must live on the same device$"):
        wp.Mesh(on["cuda:0"][0], on["cuda:1"][1])
    groups_cpu = wp.zeros(4, dtype=wp.int32, device="cpu")
    with pytest.raises(RuntimeError, match=r"^groups must live on the same device as points$"):
        wp.Mesh(*on["cuda:0"], groups=groups_cpu)
    with pytest.raises(RuntimeError, match=r"^Lower and upper bounds must live on the same device$"):
        wp.Bvh(on["cuda:0"][0], on["cpu"][0])
    with pytest.raises(RuntimeError, match=r"^groups must live on the same device as lowers/uppers$"):
        wp.Bvh(on["cuda:0"][0], on["cuda:0"][0], groups=wp.zeros(12, dtype=wp.int32, device="cpu"))
    grid = wp.HashGrid(4, 4, 4, device="cuda:0")
    with pytest.raises(RuntimeError, match=r"^points must live on the same device as this HashGrid$"):
        grid.build(on["cpu"][0], 0.5)
    with pytest.raises(RuntimeError, match=r"^points must live on the same device as this HashGrid$"):
        grid.build(on["cuda:1"][0], 0.5)
    mesh = wp.Mesh(*on["cuda:0"])
    with pytest.raises(RuntimeError, match=r"^The new points and the original points must live on the same device, "
                                           r"the new points are on cpu while the old points are on cuda:0\.$"):
        mesh.points = on["cpu"][0]
    with pytest.raises(RuntimeError, match=r"^Mesh indices must lie in \[0, 12\) \(the number of points\), got 12$"):
        wp.Mesh(on["cuda:0"][0], wp.array(np.full(3, 12, np.int32), dtype=wp.int32, device="cuda:0"))
