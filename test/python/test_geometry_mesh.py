"""wp.Mesh and its kernel queries against brute force in numpy (every triangle tested, float64): closest and
furthest points, ray hits and crossing counts, AABB candidates, inside/outside of a closed sphere mesh by each
sign mode, winding numbers of an open mesh, barycentric evaluation, gradients against finite differences and
closed forms; grouped wp.Bvh and mesh roots; the errors Warp raises."""

import numpy as np
import pytest

import mlwarp as wp


# -- meshes -------------------------------------------------------------------------------------------------
def uv_sphere(radius=1.0, rings=12, segments=16, centre=(0.0, 0.0, 0.0)):
    """A closed sphere, faces counter-clockwise seen from outside (outward normals)."""
    pts = [(0.0, 0.0, radius)]
    for i in range(1, rings):
        th = np.pi * i / rings
        for j in range(segments):
            ph = 2 * np.pi * j / segments
            pts.append((radius * np.sin(th) * np.cos(ph), radius * np.sin(th) * np.sin(ph), radius * np.cos(th)))
    pts.append((0.0, 0.0, -radius))
    tris = []
    ring = lambda i, j: 1 + (i - 1) * segments + (j % segments)  # noqa: E731
    for j in range(segments):
        tris.append((0, ring(1, j), ring(1, j + 1)))
    for i in range(1, rings - 1):
        for j in range(segments):
            a, b, c, d = ring(i, j), ring(i, j + 1), ring(i + 1, j), ring(i + 1, j + 1)
            tris += [(a, c, d), (a, d, b)]
    last = len(pts) - 1
    for j in range(segments):
        tris.append((last, ring(rings - 1, j + 1), ring(rings - 1, j)))
    return np.array(pts, np.float32) + np.array(centre, np.float32), np.array(tris, np.int32)


def random_soup(n, seed):
    rng = np.random.default_rng(seed)
    centres = rng.random((n, 1, 3)) * 4.0
    pts = (centres + (rng.random((n, 3, 3)) - 0.5) * 0.8).reshape(-1, 3).astype(np.float32)
    return pts, np.arange(3 * n, dtype=np.int32).reshape(-1, 3)


def make_mesh(pts, tris, **kw):
    return wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32), **kw)


# -- numpy references (float64, every triangle) -------------------------------------------------------------
def ref_closest(pts, tris, x):
    """Distance from x to each triangle: the plane's foot when inside the triangle, else the nearest edge."""
    a, b, c = (pts[tris[:, k]].astype(np.float64) for k in range(3))
    n = np.cross(b - a, c - a)
    nn = (n * n).sum(1)
    h = ((x - a) * n).sum(1) / nn
    foot = x - h[:, None] * n
    # barycentric of the foot
    v0, v1, v2 = b - a, c - a, foot - a
    d00, d01, d11 = (v0 * v0).sum(1), (v0 * v1).sum(1), (v1 * v1).sum(1)
    d20, d21 = (v2 * v0).sum(1), (v2 * v1).sum(1)
    den = d00 * d11 - d01 * d01
    bv = (d11 * d20 - d01 * d21) / den
    bw = (d00 * d21 - d01 * d20) / den
    inside = (bv >= 0) & (bw >= 0) & (bv + bw <= 1)
    best = np.where(inside, np.linalg.norm(x - foot, axis=1), np.inf)
    for p, q in ((a, b), (b, c), (c, a)):
        d = q - p
        t = np.clip(((x - p) * d).sum(1) / (d * d).sum(1), 0.0, 1.0)
        best = np.minimum(best, np.linalg.norm(x - (p + t[:, None] * d), axis=1))
    return best


def ref_rays(pts, tris, start, d):
    """Möller-Trumbore: (t of each triangle's hit or inf, determinant sign)."""
    a, b, c = (pts[tris[:, k]].astype(np.float64) for k in range(3))
    e1, e2 = b - a, c - a
    pv = np.cross(d, e2)
    det = (e1 * pv).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / det
        tv = start - a
        u = (tv * pv).sum(1) * inv
        qv = np.cross(tv, e1)
        v = (d * qv).sum(1) * inv
        t = (e2 * qv).sum(1) * inv
    ok = (det != 0) & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0)
    return np.where(ok, t, np.inf), np.sign(det)  # > 0: the ray meets the front (d . n < 0)


def ref_solid_angle(pts, tris, x):
    a, b, c = (pts[tris[:, k]].astype(np.float64) - x for k in range(3))
    la, lb, lc = (np.linalg.norm(v, axis=1) for v in (a, b, c))
    num = (a * np.cross(b, c)).sum(1)
    den = la * lb * lc + (a * b).sum(1) * lc + (a * c).sum(1) * lb + (b * c).sum(1) * la
    return 2.0 * np.arctan2(num, den).sum() / (4 * np.pi)


# -- kernels ------------------------------------------------------------------------------------------------
@wp.kernel
def k_closest(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), max_dist: float, found: wp.array(dtype=int),
              dist: wp.array(dtype=float), faces: wp.array(dtype=int), signs: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    x = xs[i]
    face = int(-1)
    u = float(0.0)
    v = float(0.0)
    ok = wp.mesh_query_point_no_sign(mesh, x, max_dist, face, u, v)
    if ok:
        found[i] = 1
        faces[i] = face
        dist[i] = wp.length(wp.mesh_eval_position(mesh, face, u, v) - x)
    q = wp.mesh_query_point(mesh, x, max_dist)
    signs[i, 0] = q.sign
    q = wp.mesh_query_point_sign_normal(mesh, x, max_dist)
    signs[i, 1] = q.sign
    q = wp.mesh_query_point_sign_winding_number(mesh, x, max_dist)
    signs[i, 2] = q.sign
    q = wp.mesh_query_point_sign_parity(mesh, x, max_dist, 3, 0.1)
    signs[i, 3] = q.sign


@wp.kernel
def k_furthest(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), dist: wp.array(dtype=float)):
    i = wp.tid()
    q = wp.mesh_query_furthest_point_no_sign(mesh, xs[i], 0.0)
    if q.result:
        dist[i] = wp.length(wp.mesh_eval_position(mesh, q.face, q.u, q.v) - xs[i])


@wp.kernel
def k_ray(mesh: wp.uint64, start: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3), max_t: float,
          ts: wp.array(dtype=float), faces: wp.array(dtype=int), signs: wp.array(dtype=float),
          counts: wp.array(dtype=int), anyhit: wp.array(dtype=int), err: wp.array(dtype=float)):
    i = wp.tid()
    t = float(0.0)
    u = float(0.0)
    v = float(0.0)
    sign = float(0.0)
    n = wp.vec3()
    f = int(-1)
    if wp.mesh_query_ray(mesh, start[i], dirs[i], max_t, t, u, v, sign, n, f):
        ts[i] = t
        faces[i] = f
        signs[i] = sign
        err[i] = wp.length(wp.mesh_eval_position(mesh, f, u, v) - (start[i] + t * dirs[i]))
        err[i] = wp.max(err[i], wp.length(n - wp.mesh_eval_face_normal(mesh, f)))
    counts[i] = wp.mesh_query_ray_count_intersections(mesh, start[i], dirs[i])
    anyhit[i] = int(wp.mesh_query_ray_anyhit(mesh, start[i], dirs[i], max_t))


@wp.kernel
def k_aabb(mesh: wp.uint64, lower: wp.vec3, upper: wp.vec3, hits: wp.array(dtype=int)):
    q = wp.mesh_query_aabb(mesh, lower, upper)
    f = int(0)
    while wp.mesh_query_aabb_next(q, f):
        hits[f] += 1


def rand_dirs(n, rng):
    d = rng.normal(size=(n, 3))
    return (d / np.linalg.norm(d, axis=1, keepdims=True)).astype(np.float32)


# -- closest points and signs -------------------------------------------------------------------------------
@pytest.mark.parametrize("leaf_size", [1, 4])
def test_closest_point_is_the_nearest_of_every_triangle(leaf_size):
    pts, tris = random_soup(150, seed=1)
    mesh = make_mesh(pts, tris, bvh_leaf_size=leaf_size)
    rng = np.random.default_rng(2)
    xs = (rng.random((300, 3)) * 6.0 - 1.0).astype(np.float32)
    n = len(xs)
    found, dist, faces = wp.zeros(n, dtype=int), wp.zeros(n, dtype=float), wp.zeros(n, dtype=int)
    signs = wp.zeros((n, 4), dtype=float)
    wp.launch(k_closest, dim=n, inputs=[mesh.id, wp.array(xs, dtype=wp.vec3), 1.0e6, found, dist, faces, signs])
    ref = np.array([ref_closest(pts, tris, x.astype(np.float64)).min() for x in xs])
    assert found.numpy().all()
    np.testing.assert_allclose(dist.numpy(), ref, atol=2e-5)
    per_face = np.array([ref_closest(pts, tris, x.astype(np.float64))[f] for x, f in zip(xs, faces.numpy())])
    np.testing.assert_allclose(per_face, ref, atol=2e-5)  # the reported face is (one of) the nearest


def test_closest_point_respects_max_dist():
    pts, tris = random_soup(60, seed=3)
    mesh = make_mesh(pts, tris)
    xs = np.random.default_rng(4).random((200, 3)).astype(np.float32) * 8.0 - 2.0
    ref = np.array([ref_closest(pts, tris, x.astype(np.float64)).min() for x in xs])
    n = len(xs)
    found, dist, faces = wp.zeros(n, dtype=int), wp.zeros(n, dtype=float), wp.zeros(n, dtype=int)
    wp.launch(k_closest, dim=n, inputs=[mesh.id, wp.array(xs, dtype=wp.vec3), 0.5, found, dist, faces,
                                        wp.zeros((n, 4), dtype=float)])
    margin = np.abs(ref - 0.5) > 1e-4
    np.testing.assert_array_equal(found.numpy()[margin], (ref < 0.5)[margin].astype(int))


def test_every_sign_mode_tells_inside_from_outside_of_a_closed_sphere():
    pts, tris = uv_sphere(1.0)
    mesh = make_mesh(pts, tris, support_winding_number=True)
    rng = np.random.default_rng(5)
    dirs = rand_dirs(200, rng)
    radii = np.where(np.arange(200) % 2, rng.uniform(0.1, 0.8, 200), rng.uniform(1.2, 3.0, 200))
    xs = (dirs * radii[:, None]).astype(np.float32)
    n = len(xs)
    signs = wp.zeros((n, 4), dtype=float)
    wp.launch(k_closest, dim=n, inputs=[mesh.id, wp.array(xs, dtype=wp.vec3), 1.0e6, wp.zeros(n, dtype=int),
                                        wp.zeros(n, dtype=float), wp.zeros(n, dtype=int), signs])
    expected = np.where(radii < 1.0, -1.0, 1.0)
    for mode in range(4):
        np.testing.assert_array_equal(signs.numpy()[:, mode], expected, err_msg=f"sign mode {mode}")


@pytest.mark.parametrize("accuracy", [2.0, 100.0])
def test_winding_number_sign_of_an_open_hemisphere_follows_the_exact_solid_angle(accuracy):
    pts, tris = uv_sphere(1.0, rings=12, segments=16)
    keep = pts[tris].mean(axis=1)[:, 2] > -0.3  # open: the bottom cap removed
    tris = tris[keep]
    mesh = make_mesh(pts, tris, support_winding_number=True)

    @wp.kernel
    def k(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), accuracy: float, out: wp.array(dtype=float)):
        i = wp.tid()
        q = wp.mesh_query_point_sign_winding_number(mesh, xs[i], 1.0e6, accuracy, 0.5)
        out[i] = q.sign

    rng = np.random.default_rng(6)
    xs = (rng.random((400, 3)) * 4.0 - 2.0).astype(np.float32)
    w = np.array([ref_solid_angle(pts, tris, x.astype(np.float64)) for x in xs])
    clear = np.abs(w - 0.5) > 0.05
    out = wp.zeros(len(xs), dtype=float)
    wp.launch(k, dim=len(xs), inputs=[mesh.id, wp.array(xs, dtype=wp.vec3), accuracy, out])
    np.testing.assert_array_equal(out.numpy()[clear], np.where(w > 0.5, -1.0, 1.0)[clear])


def test_furthest_point_is_the_furthest_vertex():
    pts, tris = random_soup(80, seed=7)
    mesh = make_mesh(pts, tris)
    xs = np.random.default_rng(8).random((100, 3)).astype(np.float32) * 4.0
    out = wp.zeros(len(xs), dtype=float)
    wp.launch(k_furthest, dim=len(xs), inputs=[mesh.id, wp.array(xs, dtype=wp.vec3), out])
    ref = np.linalg.norm(pts[None].astype(np.float64) - xs[:, None], axis=2).max(axis=1)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5)


# -- rays ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("leaf_size", [1, 2, 4])
def test_rays_hit_the_first_of_every_triangle(leaf_size):
    pts, tris = random_soup(120, seed=9)
    mesh = make_mesh(pts, tris, bvh_leaf_size=leaf_size)
    rng = np.random.default_rng(10)
    n = 300
    starts = (rng.random((n, 3)) * 6.0 - 1.0).astype(np.float32)
    dirs = rand_dirs(n, rng)
    dirs[:20, 1:] = 0.0  # axis-parallel rays take the robust slab test
    dirs[:20, 0] = np.where(np.arange(20) % 2, 1.0, -1.0)
    ts, faces, signs = wp.zeros(n, dtype=float), wp.full(n, -1, dtype=int), wp.zeros(n, dtype=float)
    counts, anyhit, err = wp.zeros(n, dtype=int), wp.zeros(n, dtype=int), wp.zeros(n, dtype=float)
    wp.launch(k_ray, dim=n, inputs=[mesh.id, wp.array(starts, dtype=wp.vec3), wp.array(dirs, dtype=wp.vec3), 1.0e6,
                                    ts, faces, signs, counts, anyhit, err])
    ref_t = np.full(n, np.inf)
    ref_count = np.zeros(n, int)
    ref_sign = np.zeros(n)
    for i in range(n):
        t, s = ref_rays(pts, tris, starts[i].astype(np.float64), dirs[i].astype(np.float64))
        ref_t[i], ref_count[i] = t.min(), np.isfinite(t).sum()
        ref_sign[i] = s[np.argmin(t)]
    hit = np.isfinite(ref_t)
    np.testing.assert_array_equal(faces.numpy() >= 0, hit)
    np.testing.assert_allclose(ts.numpy()[hit], ref_t[hit], atol=1e-4)
    np.testing.assert_array_equal(np.sign(signs.numpy()[hit]), ref_sign[hit])
    np.testing.assert_array_equal(counts.numpy(), ref_count)
    np.testing.assert_array_equal(anyhit.numpy(), hit.astype(int))
    assert err.numpy().max() < 1e-4  # the hit point is start + t dir; the normal is the face's


def test_ray_max_t_and_anyhit_limit():
    pts, tris = uv_sphere(1.0)
    mesh = make_mesh(pts, tris)
    n = 3
    starts = np.array([[0.05, 0.03, -5], [0.05, 0.03, -5], [0, 0.013, 0.01]], np.float32)  # (off vertices and edges)
    dirs = np.array([[0, 0, 1], [0, 0, 1], [1, 0, 0]], np.float32)
    ts, faces = wp.zeros(n, dtype=float), wp.full(n, -1, dtype=int)
    counts, anyhit = wp.zeros(n, dtype=int), wp.zeros(n, dtype=int)
    for max_t, expect in ((3.9, [0, 0, 1]), (4.1, [1, 1, 1])):
        anyhit.zero_()
        wp.launch(k_ray, dim=n, inputs=[mesh.id, wp.array(starts, dtype=wp.vec3), wp.array(dirs, dtype=wp.vec3),
                                        max_t, ts, faces, wp.zeros(n, dtype=float), counts, anyhit,
                                        wp.zeros(n, dtype=float)])
        np.testing.assert_array_equal(anyhit.numpy(), expect)
    np.testing.assert_array_equal(counts.numpy(), [2, 2, 1])  # through the sphere; from inside, once
    np.testing.assert_allclose(ts.numpy(), [4.0, 4.0, 1.0], atol=2e-2)


def cast_against_brute_force(pts, tris, mesh, n, seed):
    """Rays from around the mesh at points of its triangles (three in four) or anywhere: wp.mesh_query_ray's t and
    hit/miss against every triangle."""
    rng = np.random.default_rng(seed)
    lo, hi = pts.min(0), pts.max(0)
    starts = lo + (hi - lo) * (rng.random((n, 3)) * 1.4 - 0.2)
    w = rng.dirichlet(np.ones(3), n)
    on = np.einsum("nk,nkd->nd", w, pts[tris[rng.integers(0, len(tris), n)]].astype(np.float64))
    dirs = np.where((np.arange(n) % 4 == 3)[:, None], rng.normal(size=(n, 3)), on - starts)
    dirs = (dirs / np.linalg.norm(dirs, axis=1, keepdims=True)).astype(np.float32)
    starts = starts.astype(np.float32)
    ts, faces = wp.zeros(n, dtype=float), wp.full(n, -1, dtype=int)
    counts, anyhit = wp.zeros(n, dtype=int), wp.zeros(n, dtype=int)
    wp.launch(k_ray, dim=n, inputs=[mesh.id, wp.array(starts, dtype=wp.vec3), wp.array(dirs, dtype=wp.vec3), 1.0e6,
                                    ts, faces, wp.zeros(n, dtype=float), counts, anyhit, wp.zeros(n, dtype=float)])
    ref_t = np.array([ref_rays(pts, tris, starts[i].astype(np.float64), dirs[i].astype(np.float64))[0].min()
                      for i in range(n)])
    hit = np.isfinite(ref_t)
    assert 0.5 < hit.mean() < 1.0
    np.testing.assert_array_equal(faces.numpy() >= 0, hit)
    np.testing.assert_array_equal(anyhit.numpy(), hit.astype(int))
    np.testing.assert_allclose(ts.numpy()[hit], ref_t[hit], atol=1e-4)


def _floats(address, shape):
    import ctypes

    return np.ctypeslib.as_array(ctypes.cast(int(address), ctypes.POINTER(ctypes.c_float)), shape=shape)


def wide_tree(mesh):
    """The mesh's 4-wide ray-cast tree (core/geometry.py MESH_RAY_WIDE, MESH_RAY_LEAVES): boxes (nodes, 6, 4),
    children (nodes, 4), leaf groups' corners (groups, 9, 4) and faces (groups, 4)."""
    from mlwarp.core import geometry as layout

    num = int(mesh._desc[layout.MESH_RAY_WIDE_NODES])
    if num == 0:
        return None, None, None, None
    packed = _floats(mesh._desc[layout.MESH_RAY_WIDE], (num, layout.RAY_WIDE_FLOATS))
    groups = int(mesh._desc[layout.MESH_RAY_LEAF_GROUPS])
    leaves = _floats(mesh._desc[layout.MESH_RAY_LEAVES], (groups, layout.RAY_LEAF_FLOATS))
    return (packed[:, :24].reshape(num, 6, 4), packed.view(np.int32)[:, 24:28], leaves[:, :36].reshape(groups, 9, 4),
            leaves.view(np.int32)[:, 36:40])


@pytest.mark.parametrize("leaf_size", [1, 4, 7])
def test_the_wide_tree_holds_every_leaf_once_in_its_binary_box(leaf_size):
    pts, tris = random_soup(3000, seed=21)
    mesh = make_mesh(pts, tris, bvh_leaf_size=leaf_size)
    boxes, children, corners, faces = wide_tree(mesh)
    tree = mesh._bvh._tree
    leaves = np.flatnonzero(tree["start"] >= 0)
    seen = []
    reached = np.zeros(len(children), int)
    reached[0] = 1
    used_groups = np.zeros(len(faces), int)
    for w in range(len(children)):
        for i in range(4):
            c = int(children[w, i])
            lower, upper = boxes[w, 0:3, i], boxes[w, 3:6, i]
            if c >= 0:
                assert c > w  # preorder: a child after its parent
                reached[c] += 1
            elif c != -1:
                group, count = divmod(-1 - c, 16)
                span = slice(group, group + (count + 3) // 4)
                used_groups[span] += 1
                lanes = faces[span].reshape(-1)  # the leaf's faces in order, then empty lanes (-1)
                assert np.all(lanes[:count] >= 0) and np.all(lanes[count:] == -1)
                seen.append(tuple(sorted(lanes[:count])))
                # each lane's corners: its face's vertices, in the mesh's order; empty lanes zeros
                lane_corners = corners[span].transpose(0, 2, 1).reshape(-1, 3, 3)
                np.testing.assert_array_equal(lane_corners[:count], pts[tris[lanes[:count]]])
                assert not lane_corners[count:].any()
            else:
                assert np.all(np.isposinf(lower)) and np.all(np.isposinf(upper))  # a missing child
    assert np.all(reached == 1)  # every wide node has one parent (the root none)
    assert np.all(used_groups == 1)  # every group belongs to one leaf
    primitives = tree["primitives"]
    want = [tuple(sorted(primitives[tree["start"][k]:tree["end"][k]])) for k in leaves]
    assert sorted(seen) == sorted(want)  # every binary leaf once, with its triangles
    # every used child's box is one of the binary tree's node boxes: the leaves' boxes exactly
    node_box = {tuple(np.concatenate([lo, up])) for lo, up in zip(mesh._bvh._node_lowers, mesh._bvh._node_uppers)}
    used = children != -1
    for w, i in zip(*np.nonzero(used)):
        assert tuple(np.concatenate([boxes[w, 0:3, i], boxes[w, 3:6, i]])) in node_box
    cast_against_brute_force(pts, tris, mesh, 200, seed=22)
    moved = (pts + np.random.default_rng(26).normal(scale=0.3, size=pts.shape)).astype(np.float32)
    mesh.points.assign(moved)
    mesh.refit()  # the wide tree keeps its shape: stale until a launch that casts rays repacks it
    assert wide_tree(mesh)[0] is None
    cast_against_brute_force(moved, tris, mesh, 200, seed=27)
    corners, faces = wide_tree(mesh)[2:]
    lane_corners = corners.transpose(0, 2, 1).reshape(-1, 3, 3)
    live = faces.reshape(-1) >= 0
    np.testing.assert_array_equal(lane_corners[live], moved[tris[faces.reshape(-1)[live]]])


@wp.func
def _first_hit_t(mesh: wp.uint64, start: wp.vec3, dir: wp.vec3):
    q = wp.mesh_query_ray(mesh, start, dir, 1.0e6)
    return wp.where(q.result, q.t, -1.0)


@wp.kernel
def k_ray_through_a_func(mesh: wp.uint64, start: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
                         ts: wp.array(dtype=float)):
    i = wp.tid()
    ts[i] = _first_hit_t(mesh, start[i], dirs[i])


@wp.kernel
def k_closest_face(mesh: wp.uint64, points: wp.array(dtype=wp.vec3), faces: wp.array(dtype=int)):
    i = wp.tid()
    faces[i] = wp.mesh_query_point_no_sign(mesh, points[i], 1.0e6).face


def test_kernels_that_cast_rays_name_the_wide_tree_as_a_launch_need():
    """A kernel whose code reaches the whole-tree ray traversal (through wp.mesh_query_ray, also inside a user
    function) records the need in its build (runtime/launch_needs.py); a point query's kernel records none."""
    from mlwarp.core import geometry as layout

    cpu = wp.get_device("cpu")
    for k in (k_ray, k_ray_through_a_func):
        assert k.compiled(cpu).meta["launch_needs"] == [layout.WIDE_RAYS_NEED]
        assert k.compiled(cpu).launch_needs == (layout.WIDE_RAYS_NEED,)
    assert "launch_needs" not in k_closest_face.compiled(cpu).meta
    assert k_closest_face.compiled(cpu).launch_needs == ()


def _moved_soup(seed):
    pts, tris = random_soup(2000, seed=seed)
    mesh = make_mesh(pts, tris)
    assert wide_tree(mesh)[0] is not None
    moved = (pts + np.random.default_rng(seed + 1).normal(scale=0.3, size=pts.shape)).astype(np.float32)
    mesh.points.assign(moved)
    mesh.refit()
    return mesh, moved, tris


def test_a_refit_leaves_the_wide_tree_to_the_first_launch_that_casts_rays():
    """After a CPU refit the 4-wide tree is stale (the descriptor shows none); point queries leave it so and
    answer over the refitted tree (against numpy); the next launch of a kernel that casts rays repacks it first,
    through a user function too, and its rays hit what numpy's do."""
    mesh, moved, tris = _moved_soup(seed=40)
    assert wide_tree(mesh)[0] is None
    queries = (np.random.default_rng(47).random((64, 3)) * 4.0).astype(np.float32)
    faces = wp.zeros(64, dtype=int)
    wp.launch(k_closest_face, dim=64, inputs=[mesh.id, wp.array(queries, dtype=wp.vec3), faces])
    for i in range(64):  # the face found is at numpy's least distance over every triangle
        d = ref_closest(moved, tris, queries[i].astype(np.float64))
        assert d[faces.numpy()[i]] == pytest.approx(d.min(), abs=1e-5)
    assert wide_tree(mesh)[0] is None
    starts = np.repeat(moved.mean(axis=0, keepdims=True) + [0.0, 0.0, 5.0], 32, axis=0).astype(np.float32)
    targets = moved[tris[:32]].mean(axis=1)
    dirs = (targets - starts) / np.linalg.norm(targets - starts, axis=1, keepdims=True)
    ts = wp.zeros(32, dtype=float)
    wp.launch(k_ray_through_a_func, dim=32, inputs=[mesh.id, wp.array(starts, dtype=wp.vec3),
                                                    wp.array(dirs.astype(np.float32), dtype=wp.vec3), ts])
    assert wide_tree(mesh)[0] is not None  # repacked before the launch
    ref_t = np.array([ref_rays(moved, tris, starts[i].astype(np.float64), dirs[i])[0].min() for i in range(32)])
    np.testing.assert_allclose(ts.numpy(), ref_t, atol=1e-4)
    mesh.refit()
    cast_against_brute_force(moved, tris, mesh, 100, seed=41)


def test_a_captured_ray_cast_repacks_a_tree_refit_after_the_capture():
    """A graph's replay runs a launch's needs too: a mesh refit between capture and replay is repacked before
    the replayed ray casts, which hit what numpy's do over the moved points."""
    pts, tris = random_soup(2000, seed=42)
    points = wp.array(pts, dtype=wp.vec3)
    mesh = wp.Mesh(points, wp.array(tris.reshape(-1), dtype=wp.int32))
    rng = np.random.default_rng(43)
    starts = (pts.min(0) - 1.0 + rng.random((64, 3)) * 0.1).astype(np.float32)
    targets = pts[tris[rng.integers(0, len(tris), 64)]].mean(axis=1)
    dirs = ((targets - starts) / np.linalg.norm(targets - starts, axis=1, keepdims=True)).astype(np.float32)
    ts = wp.zeros(64, dtype=float)
    inputs = [mesh.id, wp.array(starts, dtype=wp.vec3), wp.array(dirs, dtype=wp.vec3), ts]
    wp.launch(k_ray_through_a_func, dim=64, inputs=inputs)  # (compiled before the capture)
    with wp.ScopedCapture(device="cpu") as capture:
        wp.launch(k_ray_through_a_func, dim=64, inputs=inputs)
    moved = (pts + rng.normal(scale=0.3, size=pts.shape)).astype(np.float32)
    points.assign(moved)
    mesh.refit()
    assert wide_tree(mesh)[0] is None
    wp.capture_launch(capture.graph)
    assert wide_tree(mesh)[0] is not None
    ref_t = np.array([ref_rays(moved, tris, starts[i].astype(np.float64), dirs[i].astype(np.float64))[0].min()
                      for i in range(64)])
    hit = np.isfinite(ref_t)
    assert hit.mean() > 0.5
    np.testing.assert_allclose(ts.numpy()[hit], ref_t[hit], atol=1e-4)
    assert np.all(ts.numpy()[~hit] == -1.0)


def test_a_launch_that_skips_the_refresh_casts_over_the_binary_tree():
    """A kernel whose launch does not bring the wide tree up to date (one compiled before the need existed)
    reads a stale mesh's descriptor as one without a wide tree: its rays take the binary tree, right answers."""
    mesh, moved, tris = _moved_soup(seed=44)
    compiled = k_ray.compiled(wp.get_device("cpu"))
    needs = compiled.launch_needs
    compiled.launch_needs = ()
    try:
        cast_against_brute_force(moved, tris, mesh, 100, seed=45)
    finally:
        compiled.launch_needs = needs
    assert wide_tree(mesh)[0] is None


def test_a_stale_mesh_dropped_before_any_ray_cast_is_freed():
    """The list of stale meshes holds them weakly: a mesh refit and dropped before any ray cast is freed."""
    import gc
    import weakref

    mesh, _, _ = _moved_soup(seed=46)
    from mlwarp.core import geometry as layout
    from mlwarp.runtime import launch_needs

    ref = weakref.ref(mesh)
    del mesh
    gc.collect()
    assert ref() is None
    launch_needs.refresh((layout.WIDE_RAYS_NEED,))  # (what the next ray cast's launch runs: nothing left to do)


def test_rays_without_a_wide_tree_take_the_binary_one():
    pts, tris = random_soup(400, seed=23)
    mesh = make_mesh(pts, tris, bvh_leaf_size=32)  # leaves of more than 15 triangles: no wide tree
    assert wide_tree(mesh)[0] is None
    cast_against_brute_force(pts, tris, mesh, 200, seed=24)
    small = make_mesh(pts[:3], tris[:1])  # one triangle: the root is a leaf
    assert wide_tree(small)[0] is None
    cast_against_brute_force(pts[:3], tris[:1], small, 50, seed=25)


# -- AABB queries, element access ----------------------------------------------------------------------------
def test_aabb_query_yields_each_overlapping_triangle_once():
    pts, tris = random_soup(200, seed=11)
    mesh = make_mesh(pts, tris)
    corners = pts[tris]
    lo, hi = corners.min(axis=1), corners.max(axis=1)
    for box_lo, box_hi in (((1.0, 1.0, 1.0), (2.0, 2.5, 1.5)), ((-1.0, -1.0, -1.0), (9.0, 9.0, 9.0)),
                           ((20.0, 20.0, 20.0), (21.0, 21.0, 21.0))):
        hits = wp.zeros(len(tris), dtype=int)
        wp.launch(k_aabb, dim=1, inputs=[mesh.id, wp.vec3(*box_lo), wp.vec3(*box_hi), hits])
        ref = ~((lo > np.array(box_hi)).any(1) | (hi < np.array(box_lo)).any(1))
        np.testing.assert_array_equal(hits.numpy(), ref.astype(int))


@wp.kernel
def k_sphere(mesh: wp.uint64, centre: wp.vec3, radius: float, hits: wp.array(dtype=int, ndim=2)):
    q = wp.mesh_query_sphere(mesh, centre, radius)
    f = int(0)
    while wp.mesh_query_next(q, f):
        hits[0, f] += 1
    for face in wp.mesh_query_sphere(mesh, centre, radius):  # Warp's iteration form
        hits[1, face] += 1
    for face in wp.mesh_query_aabb(mesh, centre - wp.vec3(radius), centre + wp.vec3(radius)):
        hits[2, face] += 1


def test_sphere_query_yields_the_triangles_within_the_radius():
    pts, tris = random_soup(200, seed=20)
    mesh = make_mesh(pts, tris)
    corners = pts[tris]
    lo, hi = corners.min(axis=1), corners.max(axis=1)
    for centre, radius in (((2.0, 2.0, 2.0), 0.7), ((0.0, 0.0, 0.0), 0.05), ((1.0, 3.0, 2.0), 10.0)):
        hits = wp.zeros((3, len(tris)), dtype=int)
        wp.launch(k_sphere, dim=1, inputs=[mesh.id, wp.vec3(*centre), radius, hits])
        d = ref_closest(pts, tris, np.array(centre, np.float64))
        clear = np.abs(d - radius) > 1e-5
        np.testing.assert_array_equal(hits.numpy()[0][clear], (d <= radius)[clear].astype(int))
        np.testing.assert_array_equal(hits.numpy()[1], hits.numpy()[0])
        box = ~((lo > np.array(centre) + radius).any(1) | (hi < np.array(centre) - radius).any(1))
        np.testing.assert_array_equal(hits.numpy()[2], box.astype(int))


@wp.kernel
def k_eval(mesh: wp.uint64, bary: wp.array(dtype=wp.vec2), out: wp.array(dtype=wp.vec3, ndim=2),
           idx: wp.array(dtype=int)):
    f = wp.tid()
    m = wp.mesh_get(mesh)
    u = bary[f][0]
    v = bary[f][1]
    out[f, 0] = wp.mesh_eval_position(mesh, f, u, v)
    out[f, 1] = wp.mesh_eval_velocity(mesh, f, u, v)
    out[f, 2] = wp.mesh_eval_face_normal(mesh, f)
    out[f, 3] = wp.mesh_get_point(mesh, f * 3 + 1)
    out[f, 4] = wp.mesh_get_velocity(mesh, f * 3 + 2)
    out[f, 5] = m.points[m.indices[f * 3]] + m.velocities[m.indices[f * 3]]
    idx[f] = wp.mesh_get_index(mesh, f * 3 + 2)


def test_element_access_and_barycentric_evaluation():
    pts, tris = random_soup(10, seed=12)
    vel = np.random.default_rng(13).random(pts.shape).astype(np.float32)
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32),
                   velocities=wp.array(vel, dtype=wp.vec3))
    bary = np.random.default_rng(14).random((len(tris), 2)).astype(np.float32) * 0.5

    out = wp.zeros((len(tris), 6), dtype=wp.vec3)
    idx = wp.zeros(len(tris), dtype=int)
    wp.launch(k_eval, dim=len(tris), inputs=[mesh.id, wp.array(bary, dtype=wp.vec2), out, idx])
    p, q, r = (pts[tris[:, k]] for k in range(3))
    vp, vq, vr = (vel[tris[:, k]] for k in range(3))
    u, v = bary[:, :1], bary[:, 1:]
    n = np.cross(q - p, r - p)
    o = out.numpy()
    np.testing.assert_allclose(o[:, 0], p * u + q * v + r * (1 - u - v), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(o[:, 1], vp * u + vq * v + vr * (1 - u - v), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(o[:, 2], n / np.linalg.norm(n, axis=1, keepdims=True), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(o[:, 3], q)
    np.testing.assert_array_equal(o[:, 4], vr)
    np.testing.assert_array_equal(o[:, 5], p + vp)
    np.testing.assert_array_equal(idx.numpy(), tris[:, 2])
    assert mesh.points.shape == (len(pts),) and mesh.indices.size == tris.size and mesh.velocities is not None


def test_a_mesh_without_velocities_evaluates_zero_velocity():
    pts, tris = random_soup(2, seed=15)
    mesh = make_mesh(pts, tris)

    @wp.kernel
    def k(mesh: wp.uint64, out: wp.array(dtype=wp.vec3)):
        out[0] = wp.mesh_eval_velocity(mesh, 1, 0.2, 0.3)
        out[1] = wp.mesh_get_velocity(mesh, 2)

    out = wp.full(2, wp.vec3(1.0, 1.0, 1.0), dtype=wp.vec3)
    wp.launch(k, dim=1, inputs=[mesh.id, out])
    np.testing.assert_array_equal(out.numpy(), np.zeros((2, 3)))
    assert mesh.velocities is None


def test_refit_and_the_points_setter_follow_moved_points():
    pts, tris = uv_sphere(1.0)
    mesh = make_mesh(pts, tris)
    starts = wp.array(np.array([[0, 5, 0], [10, 5, 0]], np.float32), dtype=wp.vec3)
    dirs = wp.array(np.array([[0, -1, 0], [0, -1, 0]], np.float32), dtype=wp.vec3)

    def hits():
        anyhit = wp.zeros(2, dtype=int)
        wp.launch(k_ray, dim=2, inputs=[mesh.id, starts, dirs, 1.0e6, wp.zeros(2, dtype=float), wp.zeros(2, dtype=int),
                                        wp.zeros(2, dtype=float), wp.zeros(2, dtype=int), anyhit,
                                        wp.zeros(2, dtype=float)])
        return list(anyhit.numpy())

    assert hits() == [1, 0]
    mesh.points.assign(pts + np.array([10, 0, 0], np.float32))
    mesh.refit()
    assert hits() == [0, 1]
    mesh.points = wp.array(pts, dtype=wp.vec3)  # assigning new points refits, as Warp
    assert hits() == [1, 0]


# -- gradients ----------------------------------------------------------------------------------------------
@wp.kernel
def k_closest_loss(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), weights: wp.vec3, loss: wp.array(dtype=float)):
    i = wp.tid()
    sign = float(0.0)
    face = int(0)
    u = float(0.0)
    v = float(0.0)
    if wp.mesh_query_point(mesh, xs[i], 1.0e6, sign, face, u, v):
        wp.atomic_add(loss, 0, wp.dot(weights, wp.mesh_eval_position(mesh, face, u, v)))


def ref_closest_point(pts, tris, x):
    """The closest point itself (nearest triangle by ref_closest, then its foot/edge point)."""
    f = int(np.argmin(ref_closest(pts, tris, x)))
    a, b, c = (pts[tris[f, k]].astype(np.float64) for k in range(3))
    cands = []
    n = np.cross(b - a, c - a)
    foot = x - np.dot(x - a, n) / np.dot(n, n) * n
    m = np.array([b - a, c - a]).T
    bv, bw = np.linalg.lstsq(m, foot - a, rcond=None)[0]
    if bv >= 0 and bw >= 0 and bv + bw <= 1:
        cands.append(foot)
    for p, q in ((a, b), (b, c), (c, a)):
        t = np.clip(np.dot(x - p, q - p) / np.dot(q - p, q - p), 0, 1)
        cands.append(p + t * (q - p))
    return min(cands, key=lambda y: np.linalg.norm(y - x))


@wp.kernel
def k_closest_loss_sign_normal(mesh: wp.uint64, xs: wp.array(dtype=wp.vec3), weights: wp.vec3,
                               loss: wp.array(dtype=float)):
    i = wp.tid()
    q = wp.mesh_query_point_sign_normal(mesh, xs[i], 1.0e6)
    if q.result:  # (the sign's derivative is zero: it scales the point's)
        wp.atomic_add(loss, 0, -q.sign * wp.dot(weights, wp.mesh_eval_position(mesh, q.face, q.u, q.v)))


@pytest.mark.parametrize("kernel", ["k_closest_loss", "k_closest_loss_sign_normal"])
def test_closest_point_gradient_matches_finite_differences(kernel):
    """The closest point's gradient in the query point, through mesh_query_point (ray-cast sign) and
    mesh_query_point_sign_normal (points outside the sphere: sign +1)."""
    k_closest_loss_kernel = globals()[kernel]
    pts, tris = uv_sphere(1.0, rings=8, segments=10)
    mesh = make_mesh(pts, tris)
    rng = np.random.default_rng(16)
    xs = (rand_dirs(6, rng) * 1.5).astype(np.float32)
    weights = np.array([1.0, 2.0, 3.0])
    x = wp.array(xs, dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k_closest_loss_kernel, dim=len(xs), inputs=[mesh.id, x, wp.vec3(*weights), loss])
    tape.backward(loss)
    sign = -1.0 if kernel == "k_closest_loss_sign_normal" else 1.0  # (-sign: -1 outside)
    h = 1e-4
    fd = np.zeros_like(xs, dtype=np.float64)
    for i in range(len(xs)):
        for j in range(3):
            e = np.zeros(3)
            e[j] = h
            plus = ref_closest_point(pts, tris, xs[i] + e) @ weights
            minus = ref_closest_point(pts, tris, xs[i] - e) @ weights
            fd[i, j] = (plus - minus) / (2 * h)
    np.testing.assert_allclose(x.grad.numpy(), sign * fd, atol=2e-3)


@pytest.mark.parametrize("refit", [False, True])
def test_ray_distance_gradient_matches_finite_differences(refit):
    """`refit`: the sphere built smaller and refit to its points, its 4-wide tree then stale until the forward
    launch, whose adjoint's launch (a library of its own) brings it up to date too."""
    pts, tris = uv_sphere(1.0, rings=8, segments=10)
    if refit:
        points = wp.array(pts * 0.5, dtype=wp.vec3)
        mesh = wp.Mesh(points, wp.array(tris.reshape(-1), dtype=wp.int32))
        points.assign(pts)
        mesh.refit()
        assert wide_tree(mesh)[0] is None
    else:
        mesh = make_mesh(pts, tris)

    @wp.kernel
    def k(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3), d: wp.vec3, loss: wp.array(dtype=float)):
        i = wp.tid()
        q = wp.mesh_query_ray(mesh, starts[i], d, 1.0e6)
        if q.result:
            wp.atomic_add(loss, 0, q.t)

    d = np.array([0.1, -0.2, -1.0])
    d /= np.linalg.norm(d)
    starts = np.array([[0.1, 0.2, 3.0], [-0.3, 0.1, 2.5], [-0.2, 0.5, 3.0]], np.float32)  # (all hit the sphere)
    x = wp.array(starts, dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k, dim=len(starts), inputs=[mesh.id, x, wp.vec3(*d), loss])
    if refit:
        assert wide_tree(mesh)[0] is not None
        mesh.refit()  # (stale again: the adjoint's launch repacks it)
    tape.backward(loss)
    if refit:
        assert wide_tree(mesh)[0] is not None
    h = 1e-4
    fd = np.zeros((len(starts), 3))
    for i in range(len(starts)):
        for j in range(3):
            e = np.zeros(3)
            e[j] = h
            t_plus = ref_rays(pts, tris, starts[i] + e, d)[0].min()
            t_minus = ref_rays(pts, tris, starts[i] - e, d)[0].min()
            fd[i, j] = (t_plus - t_minus) / (2 * h)
    np.testing.assert_allclose(x.grad.numpy(), fd, atol=2e-3)


def test_eval_position_gradient_in_the_barycentric_coordinates():
    pts, tris = random_soup(3, seed=17)
    mesh = make_mesh(pts, tris)

    @wp.kernel
    def k(mesh: wp.uint64, uv: wp.array(dtype=float), weights: wp.vec3, loss: wp.array(dtype=float)):
        loss[0] = wp.dot(weights, wp.mesh_eval_position(mesh, 1, uv[0], uv[1]))

    uv = wp.array(np.array([0.2, 0.3], np.float32), requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    w = np.array([1.0, -2.0, 0.5], np.float32)
    tape = wp.Tape()
    with tape:
        wp.launch(k, dim=1, inputs=[mesh.id, uv, wp.vec3(*w), loss])
    tape.backward(loss)
    p, q, r = pts[tris[1]]
    np.testing.assert_allclose(uv.grad.numpy(), [(p - r) @ w, (q - r) @ w], rtol=1e-5)


# -- grouped trees ------------------------------------------------------------------------------------------
def test_grouped_bvh_roots_see_their_group_only():
    rng = np.random.default_rng(18)
    n = 120
    lowers = (rng.random((n, 3)) * 5).astype(np.float32)
    uppers = lowers + 0.5
    groups = rng.choice([3, 7, 42, 100], size=n).astype(np.int32)
    bvh = wp.Bvh(wp.array(lowers, dtype=wp.vec3), wp.array(uppers, dtype=wp.vec3),
                 groups=wp.array(groups, dtype=wp.int32), leaf_size=2)

    @wp.kernel
    def k(bvh: wp.uint64, gs: wp.array(dtype=int), hits: wp.array(dtype=int, ndim=2), roots: wp.array(dtype=int)):
        t = wp.tid()
        root = wp.bvh_get_group_root(bvh, gs[t])
        roots[t] = root
        if root >= 0:
            q = wp.bvh_query_aabb(bvh, wp.vec3(-1.0, -1.0, -1.0), wp.vec3(10.0, 10.0, 10.0), root)
            i = int(0)
            while wp.bvh_query_next(q, i):
                hits[t, i] += 1

    asked = np.array([3, 7, 42, 100, 5, -1], np.int32)
    hits = wp.zeros((len(asked), n), dtype=int)
    roots = wp.zeros(len(asked), dtype=int)
    wp.launch(k, dim=len(asked), inputs=[bvh.id, wp.array(asked, dtype=int), hits, roots])
    for t, g in enumerate(asked):
        np.testing.assert_array_equal(hits.numpy()[t], (groups == g).astype(int))
    assert (roots.numpy()[:4] >= 0).all() and list(roots.numpy()[4:]) == [-1, -1]


def test_mesh_group_roots_restrict_rays():
    a_pts, a_tris = uv_sphere(1.0, centre=(0.0, 0.0, 0.0))
    b_pts, b_tris = uv_sphere(1.0, centre=(0.0, 0.0, 3.0))
    pts = np.concatenate([a_pts, b_pts])
    tris = np.concatenate([a_tris, b_tris + len(a_pts)])
    groups = np.r_[np.full(len(a_tris), 1), np.full(len(b_tris), 2)].astype(np.int32)
    mesh = make_mesh(pts, tris, groups=wp.array(groups, dtype=wp.int32))

    @wp.kernel
    def k(mesh: wp.uint64, group: int, out: wp.array(dtype=float)):
        root = wp.mesh_get_group_root(mesh, group)
        q = wp.mesh_query_ray(mesh, wp.vec3(0.05, 0.03, 10.0), wp.vec3(0.0, 0.0, -1.0), 1.0e6, root)
        out[0] = wp.where(q.result, q.t, -1.0)
        out[1] = float(wp.mesh_query_ray_count_intersections(mesh, wp.vec3(0.05, 0.03, 10.0), wp.vec3(0.0, 0.0, -1.0),
                                                             root))

    out = wp.zeros(2, dtype=float)
    for group, t, count in ((1, 9.0, 2), (2, 6.0, 2), (5, -1.0, 4)):  # an absent group's root -1: the whole mesh
        wp.launch(k, dim=1, inputs=[mesh.id, group, out])
        expect_t = 6.0 if group == 5 else t
        np.testing.assert_allclose(out.numpy(), [expect_t, count], atol=2e-2)


# -- errors -------------------------------------------------------------------------------------------------
def _cube():
    return random_soup(2, seed=19)


@pytest.mark.parametrize("case, error, message", [
    ("points_dtype", RuntimeError, "Mesh points should be a contiguous array of type wp.vec3"),
    ("velocities_dtype", RuntimeError, "Mesh velocities should be a contiguous array of type wp.vec3"),
    ("indices_dtype", RuntimeError, "Mesh indices should be a contiguous array of type wp.int32"),
    ("indices_2d", RuntimeError, "Mesh indices should be a flattened 1d array of indices"),
    ("indices_count", RuntimeError, "Mesh indices should hold 3 point indices per triangle, got 5 indices"),
    ("indices_range", RuntimeError, "Mesh indices must lie in [0, 6) (the number of points), got 6"),
    ("groups_dtype", RuntimeError, "groups should be a contiguous array of type wp.int32"),
    ("groups_length", RuntimeError, "groups must have the same length as indices / 3"),
    ("leaf_size", ValueError, "bvh_leaf_size must be greater than or equal to 1, current value: 0"),
    ("constructor", ValueError, "Unknown BVH constructor 'cuqbl', expected one of: sah, median, lbvh, cubql"),
    ("cubql_groups", RuntimeError, "Grouped mesh queries are not supported with bvh_constructor='cubql'"),
    ("cubql_winding", RuntimeError, "support_winding_number=True is not supported with bvh_constructor='cubql'"),
])
def test_bad_meshes_raise_warps_errors(case, error, message):
    pts, tris = _cube()
    points = wp.array(pts, dtype=wp.vec3)
    indices = wp.array(tris.reshape(-1), dtype=wp.int32)
    kw = {}
    if case == "points_dtype":
        points = wp.array(pts, dtype=wp.vec3d)
    elif case == "velocities_dtype":
        kw["velocities"] = wp.zeros(len(pts), dtype=wp.vec3d)
    elif case == "indices_dtype":
        indices = wp.array(tris.reshape(-1), dtype=wp.int64)
    elif case == "indices_2d":
        indices = wp.array(tris, dtype=wp.int32)
    elif case == "indices_count":
        indices = wp.array(tris.reshape(-1)[:5], dtype=wp.int32)
    elif case == "indices_range":
        indices = wp.array(np.r_[tris.reshape(-1)[:5], 6].astype(np.int32), dtype=wp.int32)
    elif case == "groups_dtype":
        kw["groups"] = wp.zeros(2, dtype=wp.float32)
    elif case == "groups_length":
        kw["groups"] = wp.zeros(3, dtype=wp.int32)
    elif case == "leaf_size":
        kw["bvh_leaf_size"] = 0
    elif case == "constructor":
        kw["bvh_constructor"] = "cuqbl"
    elif case == "cubql_groups":
        kw.update(bvh_constructor="cubql", groups=wp.zeros(2, dtype=wp.int32))
    elif case == "cubql_winding":
        kw.update(bvh_constructor="cubql", support_winding_number=True)
    with pytest.raises(error) as e:
        wp.Mesh(points, indices, **kw)
    assert str(e.value) == message


def test_points_setter_refuses_another_shape():
    pts, tris = _cube()
    mesh = make_mesh(pts, tris)
    with pytest.raises(RuntimeError) as e:
        mesh.points = wp.zeros(3, dtype=wp.vec3)
    assert str(e.value) == ("The new points and the original points must have the same shape, the new points' shape "
                            "is (3,), while the old points' shape is (6,).")


def test_mesh_helpers_outside_kernels_and_cubql():
    assert wp.is_cubql_available() is False
    instance = wp.Mesh.__new__(wp.Mesh)  # never initialised: deleting it is harmless
    instance.__del__()
    assert instance.id is None


def test_grouped_bvh_errors():
    lo = wp.zeros(4, dtype=wp.vec3)
    with pytest.raises(RuntimeError) as e:
        wp.Bvh(lo, lo, groups=wp.zeros(4, dtype=wp.float32))
    assert str(e.value) == "groups should be a contiguous array of type wp.int32"
    with pytest.raises(RuntimeError) as e:
        wp.Bvh(lo, lo, groups=wp.zeros(3, dtype=wp.int32))
    assert str(e.value) == "groups must have the same length as lowers/uppers"
    with pytest.raises(RuntimeError) as e:
        wp.Bvh(lo, lo, groups=wp.zeros(4, dtype=wp.int32), constructor="cubql")
    assert str(e.value) == "Grouped BVHs are not supported with constructor='cubql'"
    with pytest.raises(ValueError) as e:
        wp.Bvh(lo, lo, constructor="octree")
    assert str(e.value) == "Unknown BVH constructor 'octree', expected one of: sah, median, lbvh, cubql"


@pytest.mark.skipif(__import__("shutil").which("ptxas") is None, reason="needs ptxas")
def test_queries_compile_for_cuda():
    """Every mesh query family (closest/furthest point in each sign mode, rays with counts and any-hit, AABB and
    sphere candidates, evaluation and element access, and a closest point's backward pass) is ordinary warp IR
    for the CUDA table: it lowers and ptxas assembles it for sm_90 (no GPU needed)."""
    from mlwarp.launching import cuda_compile

    for k in (k_closest, k_furthest, k_ray, k_aabb, k_sphere, k_eval, k_closest_loss):
        meta = cuda_compile.build(k, 90)
        assert meta["cubin"] == "kernel.cubin" and meta["adj_error"] is None, (k.key, meta.get("adj_error"))
