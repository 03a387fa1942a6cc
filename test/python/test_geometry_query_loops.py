"""Every iterable geometry query in a `for` loop, both Warp's forms: over the query call
(`for i in wp.hash_grid_query(...)`) and over a query variable (`q = wp.mesh_query_aabb(...); for f in q:`, which
advances that variable, as Warp's loop over the variable itself), with `break` / `continue`. Each loop's
candidates are checked against numpy brute force (the hash grid's sequence in Warp's cell order; the BVH and mesh
queries' sets: their order is the tree's, unspecified in Warp's documentation)."""

import numpy as np
import pytest

import mlwarp as wp

K = 64
rng = np.random.default_rng(21)
POINTS = (rng.random((200, 3)) * 4.0).astype(np.float32)
LOWERS = (rng.random((120, 3)) * 6.0).astype(np.float32)
UPPERS = LOWERS + (rng.random((120, 3)) * 1.5).astype(np.float32)
TRI_POINTS = (rng.random((90, 3)) * 5.0).astype(np.float32)
QUERIES = (rng.random((16, 3)) * 5.0).astype(np.float32)


def hash_grid_candidates(q, r, radius, dims):
    inv = np.float32(1.0) / np.float32(radius)
    c = np.floor(POINTS * inv).astype(np.int64) % dims
    cell = c[:, 2] * dims[0] * dims[1] + c[:, 1] * dims[0] + c[:, 0]
    lo = np.floor((q - np.float32(r)) * inv).astype(np.int64)
    hi = np.floor((q + np.float32(r)) * inv).astype(np.int64)
    out = []
    for z in range(lo[2], hi[2] + 1):
        for y in range(lo[1], hi[1] + 1):
            for x in range(lo[0], hi[0] + 1):
                out += list(np.flatnonzero(cell == (z % dims[2]) * dims[0] * dims[1] + (y % dims[1]) * dims[0]
                                           + (x % dims[0])))
    return out


def box_overlaps(lowers, uppers, lo, hi):
    return set(np.flatnonzero(~((lowers > hi).any(1) | (uppers < lo).any(1))).tolist())


def tri_boxes():
    tri = TRI_POINTS.reshape(-1, 3, 3)
    return tri.min(axis=1), tri.max(axis=1)


@wp.kernel
def loops(grid: wp.uint64, bvh: wp.uint64, mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), out: wp.array3d(dtype=int),
          exhausted: wp.array(dtype=int)):
    t = wp.tid()
    p = qs[t]
    n = int(0)
    for i in wp.hash_grid_query(grid, p, 0.6):
        out[0, t, n] = i
        n += 1
    n = 0
    q = wp.hash_grid_query(grid, p, 0.6)
    for i in q:
        out[1, t, n] = i
        n += 1
    j = int(0)
    if not wp.hash_grid_query_next(q, j):  # the loop advanced the variable itself
        exhausted[t] = 1
    n = 0
    for i in wp.bvh_query_aabb(bvh, p - wp.vec3(1.0), p + wp.vec3(1.0)):
        out[2, t, n] = i
        n += 1
    n = 0
    qb = wp.bvh_query_sphere(bvh, p, 1.2)
    for i in qb:
        out[3, t, n] = i
        n += 1
    n = 0
    for f in wp.mesh_query_aabb(mesh, p - wp.vec3(1.0), p + wp.vec3(1.0)):
        out[4, t, n] = f
        n += 1
    n = 0
    qm = wp.mesh_query_aabb(mesh, p - wp.vec3(0.5), p + wp.vec3(1.5))
    for f in qm:
        out[5, t, n] = f
        n += 1
    n = 0
    for i in wp.hash_grid_query(grid, p, 0.6):  # every candidate not a multiple of 3, at most 5
        if i % 3 == 0:
            continue
        out[6, t, n] = i
        n += 1
        if n == 5:
            break


def test_every_query_loop_form():
    grid = wp.HashGrid(8, 8, 8)
    grid.build(wp.array(POINTS, dtype=wp.vec3), 0.6)
    bvh = wp.Bvh(wp.array(LOWERS, dtype=wp.vec3), wp.array(UPPERS, dtype=wp.vec3))
    mesh = wp.Mesh(wp.array(TRI_POINTS, dtype=wp.vec3), wp.array(np.arange(90, dtype=np.int32), dtype=wp.int32))
    out, exhausted = wp.full((7, 16, K), -1, dtype=int), wp.zeros(16, dtype=int)
    wp.launch(loops, dim=16, inputs=[grid.id, bvh.id, mesh.id, wp.array(QUERIES, dtype=wp.vec3), out, exhausted])
    out = out.numpy()
    tlo, thi = tri_boxes()
    for t, p in enumerate(QUERIES):
        seq = hash_grid_candidates(p, 0.6, 0.6, np.array([8, 8, 8]))
        assert 0 < len(seq) < K
        for form in (0, 1):
            np.testing.assert_array_equal(out[form, t, :len(seq) + 1], seq + [-1])
        assert set(out[2, t][out[2, t] >= 0]) == box_overlaps(LOWERS, UPPERS, p - 1, p + 1)
        d = np.maximum(np.maximum(LOWERS - p, p - UPPERS), 0.0)
        assert set(out[3, t][out[3, t] >= 0]) == set(np.flatnonzero((d * d).sum(1) <= np.float32(1.44)).tolist())
        assert set(out[4, t][out[4, t] >= 0]) == box_overlaps(tlo, thi, p - 1, p + 1)
        assert set(out[5, t][out[5, t] >= 0]) == box_overlaps(tlo, thi, p - 0.5, p + 1.5)
        picked = [i for i in seq if i % 3 != 0][:5]
        np.testing.assert_array_equal(out[6, t, :len(picked) + 1], picked + [-1])
    # (each loop's candidates once: no repeats)
    for form in range(2, 6):
        for t in range(16):
            found = out[form, t][out[form, t] >= 0]
            assert len(set(found)) == len(found)
    np.testing.assert_array_equal(exhausted.numpy(), np.ones(16))


def test_loop_over_a_query_parameter_of_a_func():
    @wp.func
    def count(query: wp.HashGridQuery[wp.float64]) -> int:
        n = int(0)
        for i in query:
            n += 1
        return n

    @wp.kernel
    def k(grid: wp.uint64, qs: wp.array(dtype=wp.vec3d), out: wp.array(dtype=int)):
        t = wp.tid()
        out[t] = count(wp.hash_grid_query(grid, qs[t], wp.float64(0.6)))

    grid = wp.HashGrid(8, 8, 8, dtype=wp.float64)
    grid.build(wp.array(POINTS.astype(np.float64), dtype=wp.vec3d), 0.6)
    out = wp.zeros(16, dtype=int)
    wp.launch(k, dim=16, inputs=[grid.id, wp.array(QUERIES.astype(np.float64), dtype=wp.vec3d), out])
    inv = 1.0 / 0.6
    pts = POINTS.astype(np.float64)
    c = np.floor(pts * inv).astype(np.int64) % 8
    cell = c[:, 2] * 64 + c[:, 1] * 8 + c[:, 0]
    for t, q in enumerate(QUERIES.astype(np.float64)):
        lo, hi = np.floor((q - 0.6) * inv).astype(int), np.floor((q + 0.6) * inv).astype(int)
        cells = {(z % 8) * 64 + (y % 8) * 8 + x % 8 for z in range(lo[2], hi[2] + 1)
                 for y in range(lo[1], hi[1] + 1) for x in range(lo[0], hi[0] + 1)}
        assert out.numpy()[t] == sum(int((cell == k).sum()) for k in cells)


mesh_query_next = None  # (a global of the next function's name: the loops still call Warp's)


def test_a_global_of_the_next_functions_name_does_not_change_the_loop():
    @wp.kernel
    def k(mesh: wp.uint64, out: wp.array(dtype=int)):
        q = wp.mesh_query_aabb(mesh, wp.vec3(-1.0), wp.vec3(2.0))
        for f in q:
            out[f] += 1

    mesh = wp.Mesh(wp.array(np.eye(3, dtype=np.float32), dtype=wp.vec3), wp.array([0, 1, 2], dtype=wp.int32))
    out = wp.zeros(1, dtype=int)
    wp.launch(k, dim=1, inputs=[mesh.id, out])
    assert out.numpy()[0] == 1


def test_a_loop_over_a_variable_that_is_not_a_query_is_refused():
    @wp.kernel
    def k(out: wp.array(dtype=int)):
        v = wp.vec3(1.0)
        for x in v:
            out[0] = int(x)

    with pytest.raises(wp.UnsupportedSyntaxError, match=r"unsupported: for-loops iterate over range\(\.\.\.\), "
                                                        r"reversed\(range\(\.\.\.\)\) or a geometry query"):
        wp.launch(k, dim=1, inputs=[wp.zeros(1, dtype=int)])


@wp.kernel
def next_of_a_temporary(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), found: wp.array(dtype=int),
                        face: wp.array(dtype=int), point_face: wp.array(dtype=int)):
    t = wp.tid()
    p = qs[t]
    index = int(-1)
    # Warp's builtins take a temporary query (its C++ reference binds to it): each call starts a fresh query, so
    # the first candidate comes back; the advanced temporary is dropped
    if wp.mesh_query_aabb_next(wp.mesh_query_aabb(mesh, p - wp.vec3(0.5), p + wp.vec3(0.5)), index):
        found[t] = 1
    face[t] = index
    f = int(-1)
    u = float(0.0)
    v = float(0.0)
    if wp.mesh_query_point_no_sign(mesh, p, 100.0, f, u, v):
        point_face[t] = f
    f = int(-1)
    if wp.mesh_query_next(wp.mesh_query_sphere(mesh, p, 0.25), f):
        found[t] += 2


def _point_triangle_distance(p, a, b, c):
    """Distance from p to triangle abc: to its plane when the projection lies inside, else to the nearest edge."""
    n = np.cross(b - a, c - a)
    q = p - np.dot(p - a, n) / np.dot(n, n) * n
    inside = all(np.dot(np.cross(e1 - e0, q - e0), n) >= 0 for e0, e1 in ((a, b), (b, c), (c, a)))
    if inside:
        return float(np.linalg.norm(p - q))

    def segment(e0, e1):
        s = np.clip(np.dot(p - e0, e1 - e0) / np.dot(e1 - e0, e1 - e0), 0.0, 1.0)
        return float(np.linalg.norm(p - (e0 + s * (e1 - e0))))
    return min(segment(a, b), segment(b, c), segment(c, a))


def test_next_of_a_temporary_query_gives_its_first_candidate():
    tri = TRI_POINTS.reshape(-1, 3, 3)
    mesh = wp.Mesh(wp.array(TRI_POINTS, dtype=wp.vec3), wp.array(np.arange(90, dtype=np.int32), dtype=wp.int32))
    qs = np.concatenate([QUERIES, [[50.0, 50.0, 50.0]]]).astype(np.float32)  # the last one far from every box
    found, face, point_face = (wp.full(len(qs), -1, dtype=int) for _ in range(3))
    found.zero_()
    wp.launch(next_of_a_temporary, len(qs), [mesh.id, wp.array(qs, dtype=wp.vec3), found, face, point_face])
    lo, hi = tri_boxes()
    for t, p in enumerate(qs):
        hits = box_overlaps(lo, hi, p - 0.5, p + 0.5)
        assert bool(found.numpy()[t] & 1) == bool(hits)
        assert (face.numpy()[t] in hits) if hits else face.numpy()[t] == -1
        dist = [_point_triangle_distance(p.astype(np.float64), *c.astype(np.float64)) for c in tri]
        assert dist[point_face.numpy()[t]] <= min(dist) + 1e-4
    assert found.numpy()[-1] == 0
