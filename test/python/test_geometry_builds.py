"""The structures' builds as kernels (python/mlwarp/geometry/build_kernels.py) against brute-force numpy references:
the trees are valid (every item in exactly one leaf, each node's box the bounds of its subtree's items, skip
links and depths consistent), the SAH tree is Warp's build (recursive, in numpy) split for split, refits follow
moved boxes, wp.Mesh's per-triangle arrays are numpy's, HashGrid.build's arrays are the stable sort by cell, and
every build is the same whatever the thread count."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.geometry import bvh_sah

F32 = np.float32


def _boxes(rng, n, kind):
    centres = rng.normal(0.0, 1.0, (n, 3)).astype(F32) * F32(5.0)
    if kind == "flat":  # every centre in one plane, and a duplicate run
        centres[:, 2] = 0.0
        centres[: n // 4] = centres[0]
    elif kind == "grid":  # many ties on each axis
        centres = np.round(centres).astype(F32)
    elif kind == "clusters":
        centres[: n // 2] *= F32(0.01)
    half = rng.random((n, 3)).astype(F32) * F32(0.5)
    return centres - half, centres + half


def _check_tree(tree, lowers, uppers, node_lo, node_hi, leaf_size, max_depth=31):
    skip, start, end, depth, prims = (tree[k] for k in ("skip", "start", "end", "depth", "primitives"))
    n, nodes = lowers.shape[0], skip.size
    assert sorted(prims.tolist()) == list(range(n))  # a permutation of the items
    leaves = np.flatnonzero(start >= 0)
    covered = np.zeros(n, np.int64)
    for k in leaves:  # each position of the primitive list in exactly one leaf
        assert 0 <= start[k] < end[k] <= n
        covered[start[k]:end[k]] += 1
        assert end[k] - start[k] <= leaf_size or depth[k] == max_depth
        items = prims[start[k]:end[k]]
        np.testing.assert_array_equal(node_lo[k], lowers[items].min(axis=0))
        np.testing.assert_array_equal(node_hi[k], uppers[items].max(axis=0))
    assert (covered == 1).all()
    assert skip[0] == nodes and depth[0] == 0 and depth.max() <= max_depth
    for k in np.flatnonzero(start < 0):  # an inner node: two children, its box their union
        left, right = k + 1, skip[k + 1]
        assert skip[right] == skip[k] and depth[left] == depth[right] == depth[k] + 1
        np.testing.assert_array_equal(node_lo[k], np.minimum(node_lo[left], node_lo[right]))
        np.testing.assert_array_equal(node_hi[k], np.maximum(node_hi[left], node_hi[right]))
    for k in leaves:
        assert skip[k] == k + 1


def _bvh(lowers, uppers, **kw):
    return wp.Bvh(wp.array(lowers, dtype=wp.vec3), wp.array(uppers, dtype=wp.vec3), **kw)


@pytest.mark.parametrize("constructor", ["sah", "median"])
@pytest.mark.parametrize("kind", ["random", "flat", "grid", "clusters"])
@pytest.mark.parametrize("leaf_size", [1, 4])
def test_trees_are_valid(constructor, kind, leaf_size):
    rng = np.random.default_rng(hash((constructor, kind, leaf_size)) % 2**32)
    lowers, uppers = _boxes(rng, 1500, kind)
    bvh = _bvh(lowers, uppers, constructor=constructor, leaf_size=leaf_size)
    _check_tree(bvh._tree, lowers, uppers, bvh._node_lowers, bvh._node_uppers, leaf_size)


def _std_partition(items, below):
    """libstdc++'s std::partition (bidirectional form, which Warp's SAH build calls) of `items` by the flags
    `below`, written from its source: the first item not below from the front swaps with the last one below."""
    items, below = list(items), list(below)
    first, last = 0, len(items)
    while True:
        while first != last and below[first]:
            first += 1
        if first == last:
            return np.array(items)
        last -= 1
        while first != last and not below[last]:
            last -= 1
        if first == last:
            return np.array(items)
        items[first], items[last] = items[last], items[first]
        below[first], below[last] = below[last], below[first]
        first += 1


def _numpy_sah_tree(lowers, uppers, leaf_size):
    """Warp's SAH build (native/bvh.cpp) in numpy: per node, 16 buckets along its centroids' longest axis, the
    cheapest split, std::partition of its items by it (the middle when a side would be empty); returns each
    leaf's (depth, items) in depth-first order, the right child first (the order of Warp's traversal)."""
    n = lowers.shape[0]
    centres = F32(0.5) * (lowers + uppers)
    leaves = []

    def area(lo, hi):
        e = (hi - lo).astype(F32)
        return F32(2.0) * (e[..., 0] * e[..., 1] + e[..., 0] * e[..., 2] + e[..., 1] * e[..., 2])

    def build(items, depth):
        if items.size <= leaf_size or depth >= 31:
            leaves.append((depth, items.tolist()))
            return
        pts = centres[items]
        cmin, cmax = pts.min(axis=0), pts.max(axis=0)
        axis = int(np.argmax(cmax - cmin))
        start, end = cmin[axis], cmax[axis]
        key = pts[:, axis]
        if not end > start:
            split = start
        else:
            with np.errstate(invalid="ignore", over="ignore"):
                scaled = F32(16.0) * (key - start) / (end - start)
            bucket = np.clip(np.nan_to_num(scaled, nan=0.0), 0, 15).astype(np.int64)
            lo = np.full((16, 3), np.inf, F32)
            hi = np.full((16, 3), -np.inf, F32)
            for b in range(16):
                sel = items[bucket == b]
                if sel.size:
                    lo[b], hi[b] = lowers[sel].min(axis=0), uppers[sel].max(axis=0)
            counts = np.bincount(bucket, minlength=16)
            left = area(np.minimum.accumulate(lo), np.maximum.accumulate(hi))[:-1]
            right = area(np.minimum.accumulate(lo[::-1]), np.maximum.accumulate(hi[::-1]))[::-1][1:]
            inv = F32(1.0) / area(lowers[items].min(axis=0), uppers[items].max(axis=0))
            cl = np.cumsum(counts)[:-1]
            with np.errstate(invalid="ignore", over="ignore"):
                cost = (left * inv) * cl.astype(F32) + (right * inv) * (items.size - cl).astype(F32)
            best = int(np.argmin(np.where(np.isnan(cost), np.inf, cost)))
            split = start + F32(best + 1) * (end - start) / F32(16.0)
        items = _std_partition(items, list(key < split))
        n_left = int((key < split).sum())
        if n_left in (0, items.size):
            n_left = items.size // 2
        build(items[n_left:], depth + 1)  # the right child first: Warp's traversal order
        build(items[:n_left], depth + 1)

    build(np.arange(n), 0)
    return leaves


@pytest.mark.parametrize("kind", ["random", "flat", "grid", "clusters"])
@pytest.mark.parametrize("leaf_size", [1, 3])
def test_sah_levels_split_as_the_numpy_builder(kind, leaf_size):
    rng = np.random.default_rng(len(kind) * 10 + leaf_size)
    lowers, uppers = _boxes(rng, 700, kind)
    tree = bvh_sah.build_sah_tree(lowers, uppers, leaf_size)
    leaves = [(int(tree["depth"][k]), tree["primitives"][tree["start"][k]:tree["end"][k]].tolist())
              for k in range(tree["skip"].size) if tree["start"][k] >= 0]
    assert leaves == _numpy_sah_tree(lowers, uppers, leaf_size)


def _numpy_median_tree(lowers, uppers, leaf_size):
    """The median tree recursively in numpy: per node, its items sorted by (centroid, item index) along the
    longest axis of their centroids' bounds (the first of equal extents; centroids in float64, exact), the first
    count // 2 on the left; a leaf keeps its parent's order. Returns each leaf's (depth, items) in depth-first
    order, the right child first."""
    centres = (lowers.astype(np.float64) + uppers) * 0.5
    leaves = []

    def build(items, depth):
        if items.size <= leaf_size:
            leaves.append((depth, items.tolist()))
            return
        pts = centres[items]
        axis = int(np.argmax(pts.max(axis=0) - pts.min(axis=0)))
        items = items[np.lexsort((items, pts[:, axis]))]
        half = items.size // 2
        build(items[half:], depth + 1)
        build(items[:half], depth + 1)

    build(np.arange(lowers.shape[0]), 0)
    return leaves


@pytest.mark.parametrize("kind", ["random", "flat", "grid", "clusters"])
@pytest.mark.parametrize("leaf_size", [1, 3, 8])
@pytest.mark.parametrize("n", [1, 2, 7, 700])
def test_median_levels_split_as_the_numpy_builder(kind, leaf_size, n):
    rng = np.random.default_rng(len(kind) * 10 + leaf_size + n)
    lowers, uppers = _boxes(rng, n, kind)
    bvh = _bvh(lowers, uppers, constructor="median", leaf_size=leaf_size)
    tree = bvh._tree
    leaves = [(int(tree["depth"][k]), tree["primitives"][tree["start"][k]:tree["end"][k]].tolist())
              for k in range(tree["skip"].size) if tree["start"][k] >= 0]
    assert leaves == _numpy_median_tree(lowers, uppers, leaf_size)
    _check_tree(tree, lowers, uppers, bvh._node_lowers, bvh._node_uppers, leaf_size)


def test_median_order_puts_nan_centroids_last():
    """numpy's sort order, NaN after every number and ties by item index, so the build's selection stays in its
    range on boxes with NaN or infinite bounds. One leaf an item, every split along x (the only axis with an
    extent): the leaves, last first in preorder (the right child comes first), are the items sorted by x."""
    rng = np.random.default_rng(12)
    lowers, uppers = _boxes(rng, 300, "grid")
    lowers[::7, 0], uppers[::11, 0] = np.nan, np.inf
    lowers[::13, 0] = -np.inf
    lowers[:, 1:], uppers[:, 1:] = 0.0, 0.0  # axis 0 the only one with an extent
    tree = _bvh(lowers, uppers, constructor="median")._tree
    with np.errstate(invalid="ignore"):
        key = lowers[:, 0].astype(np.float64) + uppers[:, 0]
    leaves = [int(tree["primitives"][tree["start"][k]]) for k in range(tree["skip"].size) if tree["start"][k] >= 0]
    assert leaves[::-1] == np.lexsort((np.arange(300), key)).tolist()


def test_sah_tree_quality_on_a_terrain():
    """The SAH cost of the terrain's tree (sum over nodes of area / root area, leaves times their item count)
    is below the median tree's: the build keeps SAH quality."""
    g = 40
    x, y = np.meshgrid(np.linspace(0, 10, g + 1), np.linspace(0, 10, g + 1), indexing="ij")
    z = 0.5 * np.sin(1.3 * x) * np.cos(0.7 * y)
    pts = np.stack([x, y, z], -1).reshape(-1, 3).astype(F32)
    i, j = np.meshgrid(np.arange(g), np.arange(g), indexing="ij")
    a = (i * (g + 1) + j).reshape(-1)
    tris = np.concatenate([np.stack([a, a + g + 1, a + 1], -1), np.stack([a + 1, a + g + 1, a + g + 2], -1)])
    corners = pts[tris]
    lowers, uppers = corners.min(axis=1), corners.max(axis=1)

    def cost(bvh):
        t = bvh._tree
        e = bvh._node_uppers - bvh._node_lowers
        area = 2.0 * (e[:, 0] * e[:, 1] + e[:, 0] * e[:, 2] + e[:, 1] * e[:, 2])
        weight = np.where(t["start"] >= 0, t["end"] - t["start"], 1.0)
        return float((area * weight).sum() / area[0])

    sah, median = _bvh(lowers, uppers, constructor="sah", leaf_size=4), _bvh(lowers, uppers, constructor="median",
                                                                           leaf_size=4)
    _check_tree(sah._tree, lowers, uppers, sah._node_lowers, sah._node_uppers, 4)
    assert cost(sah) < cost(median)


def test_refit_follows_moved_boxes():
    rng = np.random.default_rng(4)
    lowers, uppers = _boxes(rng, 2000, "random")
    lo_arr, hi_arr = wp.array(lowers, dtype=wp.vec3), wp.array(uppers, dtype=wp.vec3)
    bvh = wp.Bvh(lo_arr, hi_arr, leaf_size=2)
    shift = rng.normal(0.0, 2.0, (2000, 3)).astype(F32)
    lo_arr.assign(lowers + shift)
    hi_arr.assign(uppers + shift)
    bvh.refit()
    _check_tree(bvh._tree, lowers + shift, uppers + shift, bvh._node_lowers, bvh._node_uppers, 2)


def test_grouped_tree_boxes_are_their_subtrees_bounds():
    rng = np.random.default_rng(5)
    lowers, uppers = _boxes(rng, 600, "random")
    groups = rng.integers(0, 7, 600).astype(np.int32)
    bvh = _bvh(lowers, uppers, groups=wp.array(groups, dtype=wp.int32))
    t = bvh._tree
    for k in range(t["skip"].size):  # a node's box: the bounds of the items of its subtree's leaves
        leaves = [m for m in range(k, t["skip"][k]) if t["start"][m] >= 0]
        items = np.concatenate([t["primitives"][t["start"][m]:t["end"][m]] for m in leaves])
        np.testing.assert_array_equal(bvh._node_lowers[k], lowers[items].min(axis=0))
        np.testing.assert_array_equal(bvh._node_uppers[k], uppers[items].max(axis=0))
    for g, root in zip(t["group_ids"], t["group_roots"]):
        items = [int(i) for m in range(root, t["skip"][root]) if t["start"][m] >= 0
                 for i in t["primitives"][t["start"][m]:t["end"][m]]]
        assert sorted(items) == np.flatnonzero(groups == g).tolist()


def _terrain_mesh(g=30, seed=6):
    rng = np.random.default_rng(seed)
    x, y = np.meshgrid(np.linspace(0, 5, g + 1), np.linspace(0, 5, g + 1), indexing="ij")
    z = rng.normal(0.0, 0.2, x.shape)
    pts = np.stack([x, y, z], -1).reshape(-1, 3).astype(F32)
    i, j = np.meshgrid(np.arange(g), np.arange(g), indexing="ij")
    a = (i * (g + 1) + j).reshape(-1)
    tris = np.concatenate([np.stack([a, a + g + 1, a + 1], -1), np.stack([a + 1, a + g + 1, a + g + 2], -1)])
    return pts, tris.astype(np.int32)


def _check_mesh(mesh, pts, tris):
    corners = pts[tris]
    np.testing.assert_array_equal(mesh._tri_lowers.numpy(), corners.min(axis=1))
    np.testing.assert_array_equal(mesh._tri_uppers.numpy(), corners.max(axis=1))
    edges = sum(np.linalg.norm(corners[:, a] - corners[:, b], axis=1) for a, b in ((0, 1), (0, 2), (2, 1)))
    average = mesh._desc.view(F32)[2 * 6]  # MESH_AVERAGE_EDGE_LENGTH
    assert average == pytest.approx(edges.astype(np.float64).mean() / 3, rel=1e-5)
    faces = mesh._bvh._tree["primitives"]
    packed = mesh._ray_tris[:faces.size]
    for k in range(3):
        np.testing.assert_array_equal(packed[:, 4 * k:4 * k + 3], corners[faces, k])
    np.testing.assert_array_equal(packed.view(np.int32)[:, 3], faces)
    bvh = mesh._bvh
    _check_tree(bvh._tree, corners.min(axis=1), corners.max(axis=1), bvh._node_lowers, bvh._node_uppers, 4)


def test_mesh_build_and_refit_arrays_are_numpys():
    pts, tris = _terrain_mesh()
    points = wp.array(pts, dtype=wp.vec3)
    mesh = wp.Mesh(points, wp.array(tris.reshape(-1), dtype=wp.int32))
    _check_mesh(mesh, pts, tris)
    moved = pts + np.random.default_rng(7).normal(0.0, 0.3, pts.shape).astype(F32)
    points.assign(moved)
    mesh.refit()
    _check_mesh(mesh, moved, tris)


def _stable_cell_sort(p, radius, dims):
    """HashGrid.build's arrays by numpy: each point's cell (saturated floor, Python's modulo), the points sorted
    stably by cell, each cell's [start, end) (0, 0 when empty)."""
    inv = F32(1.0) / F32(radius)
    with np.errstate(over="ignore", invalid="ignore"):
        f = np.floor((p * inv).astype(F32)).astype(np.float64)
    f = np.clip(np.nan_to_num(f, nan=0.0, posinf=2**31 - 2.0, neginf=-2.0**31), -2.0**31, 2**31 - 2.0)
    c = np.mod(f.astype(np.int64), np.array(dims))
    cells = c[:, 2] * dims[0] * dims[1] + c[:, 1] * dims[0] + c[:, 0]
    ids = np.argsort(cells, kind="stable")
    counts = np.bincount(cells, minlength=dims[0] * dims[1] * dims[2])
    ends = np.cumsum(counts)
    return ids, ends - counts, ends  # (an empty cell: the empty range where it would start)


@pytest.mark.parametrize("dims,radius,scale", [((8, 8, 8), 1.0, 3.0), ((13, 1, 5), 0.37, 20.0),
                                               ((64, 64, 64), 2.0, 1000.0)])
def test_hash_grid_build_is_the_stable_sort_by_cell(dims, radius, scale):
    rng = np.random.default_rng(8)
    p = (rng.normal(0.0, 1.0, (5000, 3)) * scale).astype(F32)
    p[:3] = [[np.nan, 1.0, -1.0], [np.inf, -np.inf, 0.0], [3e38, -3e38, 2.5e9]]
    grid = wp.HashGrid(*dims)
    grid.build(wp.array(p, dtype=wp.vec3), radius)
    ids, starts, ends = _stable_cell_sort(p, radius, dims)
    np.testing.assert_array_equal(grid._point_ids[:p.shape[0]], ids)
    np.testing.assert_array_equal(grid._cell_starts, starts)
    np.testing.assert_array_equal(grid._cell_ends, ends)
    # a second, smaller build reuses the arrays: nothing of the first remains
    grid.build(wp.array(p[:100], dtype=wp.vec3), radius)
    ids, starts, ends = _stable_cell_sort(p[:100], radius, dims)
    np.testing.assert_array_equal(grid._point_ids[:100], ids)
    np.testing.assert_array_equal(grid._cell_starts, starts)
    np.testing.assert_array_equal(grid._cell_ends, ends)


@pytest.fixture
def thread_count():
    saved = wp.config.cpu_threads
    yield lambda n: setattr(wp.config, "cpu_threads", n)
    wp.config.cpu_threads = saved


def test_builds_do_not_depend_on_the_thread_count(thread_count):
    rng = np.random.default_rng(9)
    lowers, uppers = _boxes(rng, 30000, "clusters")  # levels of > 4096 nodes: parallel launches
    pts, tris = _terrain_mesh(g=60)
    p = (rng.random((200000, 3)) * 50.0).astype(F32)
    built = []
    for n in (1, 2, 3):
        thread_count(n)
        bvh = _bvh(lowers, uppers)
        median = _bvh(lowers, uppers, constructor="median", leaf_size=2)
        mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32))
        grid = wp.HashGrid(32, 32, 32)
        grid.build(wp.array(p, dtype=wp.vec3), 1.0)
        built.append([bvh._tree["primitives"], bvh._tree["skip"], bvh._node_lowers, bvh._node_uppers,
                      median._tree["primitives"], median._tree["skip"], median._node_lowers,
                      mesh._bvh._tree["primitives"], mesh._ray_nodes, mesh._ray_tris,
                      grid._point_ids.copy(), grid._cell_starts.copy(), grid._cell_ends.copy()])
    for other in built[1:]:
        for a, b in zip(built[0], other):
            np.testing.assert_array_equal(a, b)


def test_structures_made_inside_a_capture_are_built_at_once():
    """The builders' kernels run when the builder does: a Mesh or Bvh made while a graph records is complete at
    once (Warp builds at construction too), and its build's launches are not in the graph."""
    pts, tris = _terrain_mesh(g=8)
    rng = np.random.default_rng(10)
    lowers, uppers = _boxes(rng, 200, "random")
    with wp.ScopedCapture(device="cpu") as capture:
        mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32))
        bvh = _bvh(lowers, uppers)
    _check_mesh(mesh, pts, tris)
    _check_tree(bvh._tree, lowers, uppers, bvh._node_lowers, bvh._node_uppers, 1)
    node_lowers = bvh._node_lowers.copy()
    wp.capture_launch(capture.graph)  # nothing of the builds was recorded: the trees stay as they are
    np.testing.assert_array_equal(bvh._node_lowers, node_lowers)


# Candidates in the order warp-lang 1.19.0 (CPU) returned them for the same data (recorded with its
# bvh_query_aabb / mesh_query_aabb loops): the SAH tree, each leaf's item order and the right-child-first
# traversal are Warp's, so the sequence is too, not only the set
WARP_BVH_AABB_ORDER = {
    1: [197, 140, 230, 130, 252, 237, 83, 11, 35, 170, 50, 264, 232, 61, 149, 62, 145, 286, 71, 119, 33, 267, 182,
        191, 177, 30, 263, 67, 215, 45, 126, 218, 280, 131, 5, 169, 106, 23, 243, 200, 1, 245],
    4: [197, 140, 230, 130, 252, 237, 83, 35, 11, 264, 170, 50, 232, 61, 149, 62, 71, 286, 145, 182, 33, 267, 119,
        191, 177, 30, 215, 263, 67, 126, 45, 218, 280, 131, 106, 23, 5, 169, 243, 200, 1, 245],
}
WARP_MESH_AABB_ORDER = [234, 90, 78, 222, 88, 89, 233, 232, 77, 76, 221, 220, 75, 219, 87, 231, 230, 86, 218, 74,
                        66, 210, 198, 42, 54, 186, 30, 174, 65, 209, 208, 64, 63, 207, 185, 197, 53, 41, 196, 195,
                        51, 52, 40, 184, 183, 39, 206, 62, 194, 50, 38, 182, 29, 28, 172, 173, 171, 27, 170, 26]


@wp.kernel
def _bvh_aabb_order(bvh: wp.uint64, lo: wp.vec3, hi: wp.vec3, out: wp.array(dtype=int), n: wp.array(dtype=int)):
    query = wp.bvh_query_aabb(bvh, lo, hi)
    i = int(0)
    while wp.bvh_query_next(query, i):
        out[wp.atomic_add(n, 0, 1)] = i


@wp.kernel
def _mesh_aabb_order(mesh: wp.uint64, lo: wp.vec3, hi: wp.vec3, out: wp.array(dtype=int), n: wp.array(dtype=int)):
    query = wp.mesh_query_aabb(mesh, lo, hi)
    i = int(0)
    while wp.mesh_query_next(query, i):
        out[wp.atomic_add(n, 0, 1)] = i


def _candidates(kernel, args):
    out, n = wp.zeros(1000, dtype=int), wp.zeros(1, dtype=int)
    wp.launch(kernel, 1, args + [out, n])
    return out.numpy()[: n.numpy()[0]].tolist()


@pytest.mark.parametrize("leaf_size", [1, 4])
def test_bvh_query_order_is_warps(leaf_size):
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(300, 3)).astype(F32) * F32(3.0)
    half = rng.random((300, 3)).astype(F32) * F32(0.5)
    bvh = _bvh(centres - half, centres + half, leaf_size=leaf_size)
    got = _candidates(_bvh_aabb_order, [bvh.id, wp.vec3(-2.0, -2.0, -2.0), wp.vec3(2.0, 2.0, 2.0)])
    assert got == WARP_BVH_AABB_ORDER[leaf_size]


def test_mesh_query_order_is_warps():
    g = 12
    x, y = np.meshgrid(np.linspace(0, 1, g + 1), np.linspace(0, 1, g + 1), indexing="ij")
    pts = np.stack([x, y, 0.1 * np.sin(5 * x) * np.cos(3 * y)], -1).reshape(-1, 3).astype(F32)
    i, j = np.meshgrid(np.arange(g), np.arange(g), indexing="ij")
    a = (i * (g + 1) + j).reshape(-1)
    b, c, d = a + g + 1, a + 1, a + g + 2
    tris = np.concatenate([np.stack([a, b, c], -1), np.stack([c, b, d], -1)]).astype(np.int32)
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32), bvh_leaf_size=4)
    got = _candidates(_mesh_aabb_order, [mesh.id, wp.vec3(0.2, 0.2, -1.0), wp.vec3(0.6, 0.5, 1.0)])
    assert got == WARP_MESH_AABB_ORDER


@wp.kernel
def _one_ray(mesh: wp.uint64, t: wp.array(dtype=float)):
    t[0] = wp.mesh_query_ray(mesh, wp.vec3(0.0, 0.0, 10.0), wp.vec3(0.0, 0.0, -1.0), 100.0).t


def test_mesh_refit_repacks_every_ray_cast_structure_from_the_moved_points():
    """After a refit (refit.py: in place, the tree kept) every word of the ray casts' packed structures that
    follows the points is numpy's over the moved points: the binary nodes' boxes (their links the tree's), the
    triangles' sliver flags (Warp's test in float32), and, once a launch that casts rays repacked it, each 4-wide
    node's children's boxes (the bounds of the corners below them)."""
    from mlwarp.core import geometry as layout

    pts, tris = _terrain_mesh(g=24, seed=8)
    points = wp.array(pts, dtype=wp.vec3)
    mesh = wp.Mesh(points, wp.array(tris.reshape(-1), dtype=wp.int32))
    moved = pts + np.random.default_rng(9).normal(0.0, 0.3, pts.shape).astype(F32)
    moved[tris[::7, 1]] = moved[tris[::7, 0]]  # coincident corners: slivers (|cross| = 0) after the move
    points.assign(moved)
    mesh.refit()
    _check_mesh(mesh, moved, tris)
    tree, bvh = mesh._bvh._tree, mesh._bvh
    num_nodes = tree["skip"].size
    nodes = _floats(mesh._desc[layout.MESH_RAY_NODES], (num_nodes, layout.RAY_NODE_FLOATS))
    np.testing.assert_array_equal(nodes[:, 0:3], bvh._node_lowers)
    np.testing.assert_array_equal(nodes[:, 4:7], bvh._node_uppers)
    leaf = tree["start"] >= 0
    inner = np.flatnonzero(~leaf)
    links = nodes.view(np.int32)
    np.testing.assert_array_equal(links[leaf, 3], tree["start"][leaf])
    np.testing.assert_array_equal(links[leaf, 7], tree["end"][leaf])
    np.testing.assert_array_equal(links[inner, 3], tree["skip"][inner + 1])
    assert (links[inner, 7] == -1).all()
    # the sliver flags: |(q - p) x (r - p)| / (sum of squared edges) < 1e-6, no triangle near the threshold
    c = moved[tris[tree["primitives"]]]
    e0, e1, e2 = c[:, 1] - c[:, 0], c[:, 2] - c[:, 0], c[:, 2] - c[:, 1]
    ratio = np.linalg.norm(np.cross(e0, e1), axis=1) / ((e0 * e0).sum(1) + (e1 * e1).sum(1) + (e2 * e2).sum(1))
    assert not np.any(np.abs(ratio - 1e-6) < 1e-8)
    slivers = mesh._ray_tris.view(np.int32)[:tree["primitives"].size, layout.RAY_TRI_SLIVER]
    np.testing.assert_array_equal(slivers, (ratio < 1e-6).astype(np.int32))
    assert 0 < slivers.sum() < slivers.size
    # the 4-wide tree: stale until a launch that casts rays (mesh.py), then a child's box is the bounds of the
    # corners of the triangles below it
    assert int(mesh._desc[layout.MESH_RAY_WIDE_NODES]) == 0
    wp.launch(_one_ray, dim=1, inputs=[mesh.id, wp.zeros(1, dtype=float)])
    num = int(mesh._desc[layout.MESH_RAY_WIDE_NODES])
    assert num > 0
    wide = _floats(mesh._desc[layout.MESH_RAY_WIDE], (num, layout.RAY_WIDE_FLOATS))
    boxes, children = wide[:, :24].reshape(num, 6, 4), wide.view(np.int32)[:, 24:28]
    groups = int(mesh._desc[layout.MESH_RAY_LEAF_GROUPS])
    faces = _floats(mesh._desc[layout.MESH_RAY_LEAVES], (groups, layout.RAY_LEAF_FLOATS)).view(np.int32)[:, 36:40]
    below = [None] * num  # (lower, upper) of all corners below wide node w
    for w in range(num - 1, -1, -1):  # (a child's wide index is larger than its parent's)
        lo, hi = np.full(3, np.inf, F32), np.full(3, -np.inf, F32)
        for i in range(4):
            code = int(children[w, i])
            if code == -1:
                want = (np.full(3, np.inf, F32), np.full(3, np.inf, F32))
            elif code >= 0:
                want = below[code]
            else:
                group, count = divmod(-1 - code, 16)
                corners = moved[tris[faces[group:group + (count + 3) // 4].reshape(-1)[:count]]].reshape(-1, 3)
                want = (corners.min(axis=0), corners.max(axis=0))
            np.testing.assert_array_equal(boxes[w, 0:3, i], want[0])
            np.testing.assert_array_equal(boxes[w, 3:6, i], want[1])
            if code != -1:
                lo, hi = np.minimum(lo, want[0]), np.maximum(hi, want[1])
        below[w] = (lo, hi)


def _floats(address, shape):
    """A float32 numpy view of `shape` at a structure's packed array's address (owned by the structure)."""
    import ctypes

    return np.ctypeslib.as_array(ctypes.cast(int(address), ctypes.POINTER(ctypes.c_float)), shape=shape)


@pytest.mark.parametrize("scale", [1.0, 3e-7, 1e7])
def test_mesh_sliver_flags_near_the_threshold_match_warps_test(scale):
    """Thin triangles whose ratio |(q - p) x (r - p)| / (sum of squared edges) lies on both sides of Warp's 1e-6
    and around the refit's shortcut (refit._sliver_flag decides without the division from a ratio of ~2e-6 up),
    at sizes where the sums leave its range (3e-7: sums ~1e-13; 1e7: ~1e14 inside): the flags after the build
    and after a refit (the heights handed round) are Warp's test in float32 numpy."""
    ratios = np.array([0.3, 0.8, 0.95, 1.05, 1.3, 1.8, 1.95, 2.05, 2.5, 10.0, 1e4]) * 1e-6
    # p, q on the x axis, r above their midpoint at height h: |cross| = 2h, sum = 4 + 2 (1 + h^2) ~ 6
    h = (ratios * 6.0 / 2.0).astype(F32)
    count = ratios.size
    pts = np.zeros((3 * count, 3), F32)
    pts[0::3, 0], pts[1::3, 0], pts[2::3, 1] = -1.0, 1.0, h
    pts[:, 2] = np.arange(count).repeat(3) * 3.0  # apart, so the tree has several leaves
    pts *= F32(scale)
    tris = np.arange(3 * count, dtype=np.int32).reshape(-1, 3)

    def flags(corners):
        e0, e1, e2 = corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0], corners[:, 2] - corners[:, 1]
        ratio = np.linalg.norm(np.cross(e0, e1), axis=1) / ((e0 * e0).sum(1) + (e1 * e1).sum(1) + (e2 * e2).sum(1))
        return (ratio < F32(1e-6)).astype(np.int32)

    from mlwarp.core import geometry as layout

    points = wp.array(pts, dtype=wp.vec3)
    mesh = wp.Mesh(points, wp.array(tris.reshape(-1), dtype=wp.int32))
    for step in ("build", "refit"):
        if step == "refit":
            pts[2::3, 1] = pts[2::3, 1][::-1]  # the same ratios, the triangles' flags swapped around
            points.assign(pts)
            mesh.refit()
        faces = mesh._bvh._tree["primitives"]
        got = mesh._ray_tris.view(np.int32)[:faces.size, layout.RAY_TRI_SLIVER]
        want = flags(pts[tris[faces]])
        np.testing.assert_array_equal(got, want)
        assert 0 < want.sum() < want.size
