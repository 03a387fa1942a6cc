"""Block-wide mesh AABB queries (wp.tile_mesh_query_aabb, wp.tile_mesh_query_aabb_next, wp.tile_query_valid of a
wp.MeshQueryAABBTiled, and the deprecated wp.mesh_query_aabb_tiled / mesh_query_aabb_next_tiled), with Warp's CPU
semantics (native/tile_mesh.h): one face a call at element 0 of the tile, -1 at the other elements and once the
faces are used up; valid until a call finds none. Faces are checked against testing each triangle's box with
numpy."""

import numpy as np
import pytest

import mlwarp as wp


def _mesh(n_tris, seed):
    rng = np.random.default_rng(seed)
    points = (rng.random((n_tris * 3, 3)) * 10.0).astype(np.float32)
    points[1::3] = points[0::3] + rng.random((n_tris, 3)).astype(np.float32) * 1.5  # (small triangles)
    points[2::3] = points[0::3] + rng.random((n_tris, 3)).astype(np.float32) * 1.5
    indices = np.arange(n_tris * 3, dtype=np.int32)
    return points, indices


def ref_faces(points, indices, lo, hi):
    tri = points[indices.reshape(-1, 3)]
    lower, upper = tri.min(axis=1), tri.max(axis=1)
    return ~((lower > hi).any(1) | (upper < lo).any(1))


@wp.kernel
def tile_faces(mesh: wp.uint64, lower: wp.vec3, upper: wp.vec3, hits: wp.array(dtype=int),
               seen: wp.array(dtype=int), calls: wp.array(dtype=int)):
    query = wp.tile_mesh_query_aabb(mesh, lower, upper)
    while wp.tile_query_valid(query):
        face = wp.untile(wp.tile_mesh_query_aabb_next(query))
        seen[calls[0]] = face
        calls[0] += 1
        if face >= 0:
            wp.atomic_add(hits, face, 1)


@pytest.mark.parametrize("block_dim", [1, 16])
@pytest.mark.parametrize("leaf_size", [1, 4])
def test_each_overlapping_face_once_then_minus_one(block_dim, leaf_size):
    points, indices = _mesh(150, seed=1)
    mesh = wp.Mesh(wp.array(points, dtype=wp.vec3), wp.array(indices, dtype=wp.int32), bvh_leaf_size=leaf_size)
    lo, hi = np.float32([2.0, 2.0, 2.0]), np.float32([6.0, 7.0, 6.0])
    hits, seen, calls = wp.zeros(150, dtype=int), wp.full(152, -7, dtype=int), wp.zeros(1, dtype=int)
    wp.launch_tiled(tile_faces, dim=1, inputs=[mesh.id, wp.vec3(*lo), wp.vec3(*hi), hits, seen, calls],
                    block_dim=block_dim)
    expected = ref_faces(points, indices, lo, hi)
    assert 0 < expected.sum() < 150
    np.testing.assert_array_equal(hits.numpy(), expected.astype(np.int32))
    n = int(expected.sum())
    assert calls.numpy()[0] == n + 1  # (the last call finds nothing: its tile holds -1, the query turns invalid)
    order = seen.numpy()
    assert sorted(order[:n].tolist()) == np.flatnonzero(expected).tolist() and order[n] == -1
    assert (order[n + 1:] == -7).all()


@wp.kernel
def tile_faces_by_lane(mesh: wp.uint64, lower: wp.vec3, upper: wp.vec3, hits: wp.array(dtype=int),
                       per_lane: wp.array(dtype=int)):
    _, lane = wp.tid()
    query = wp.tile_mesh_query_aabb(mesh, lower, upper)
    while wp.tile_query_valid(query):
        face = wp.untile(wp.tile_mesh_query_aabb_next(query))
        per_lane[lane] += 1
        if face >= 0:
            wp.atomic_add(hits, face, 1)
            per_lane[lane] += 1000


def test_cpu_lanes_give_each_face_to_lane_zero(monkeypatch):
    """Warp's CPU lanes (enable_cpu_blocks): every lane advances its own copy of the query, and each call's tile
    has the face at element 0 only, so lane 0 untiles every face once and the other lanes -1."""
    monkeypatch.setattr(wp.config, "enable_cpu_blocks", True)
    points, indices = _mesh(80, seed=2)
    mesh = wp.Mesh(wp.array(points, dtype=wp.vec3), wp.array(indices, dtype=wp.int32))
    lo, hi = np.float32([0.0, 0.0, 0.0]), np.float32([5.0, 5.0, 5.0])
    hits, per_lane = wp.zeros(80, dtype=int), wp.zeros(8, dtype=int)
    wp.launch_tiled(tile_faces_by_lane, dim=1, inputs=[mesh.id, wp.vec3(*lo), wp.vec3(*hi), hits, per_lane],
                    block_dim=8)
    expected = ref_faces(points, indices, lo, hi)
    np.testing.assert_array_equal(hits.numpy(), expected.astype(np.int32))
    calls = int(expected.sum()) + 1
    np.testing.assert_array_equal(per_lane.numpy(), [calls + 1000 * int(expected.sum())] + [calls] * 7)


@wp.kernel
def tile_faces_per_block(mesh: wp.uint64, lowers: wp.array(dtype=wp.vec3), uppers: wp.array(dtype=wp.vec3),
                         counts: wp.array(dtype=int)):
    block = wp.tid()
    query = wp.tile_mesh_query_aabb(mesh, lowers[block], uppers[block])
    while wp.tile_query_valid(query):
        if wp.untile(wp.tile_mesh_query_aabb_next(query)) >= 0:
            counts[block] += 1


def test_many_blocks_each_with_its_own_box():
    points, indices = _mesh(120, seed=3)
    mesh = wp.Mesh(wp.array(points, dtype=wp.vec3), wp.array(indices, dtype=wp.int32))
    rng = np.random.default_rng(4)
    lows = (rng.random((20, 3)) * 8.0).astype(np.float32)
    highs = (lows + rng.random((20, 3)) * 4.0).astype(np.float32)
    counts = wp.zeros(20, dtype=int)
    wp.launch_tiled(tile_faces_per_block, dim=20, inputs=[mesh.id, wp.array(lows, dtype=wp.vec3),
                                                          wp.array(highs, dtype=wp.vec3), counts], block_dim=4)
    np.testing.assert_array_equal(counts.numpy(), [ref_faces(points, indices, lo, hi).sum()
                                                   for lo, hi in zip(lows, highs)])


@wp.kernel
def deprecated_faces(mesh: wp.uint64, lower: wp.vec3, upper: wp.vec3, hits: wp.array(dtype=int)):
    query = wp.mesh_query_aabb_tiled(mesh, lower, upper)
    while wp.tile_query_valid(query):
        face = wp.untile(wp.mesh_query_aabb_next_tiled(query))
        if face >= 0:
            hits[face] += 1


def test_deprecated_names_warn_and_match_brute_force(tmp_path, monkeypatch):
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))  # (the warning comes from compiling)
    points, indices = _mesh(60, seed=5)
    mesh = wp.Mesh(wp.array(points, dtype=wp.vec3), wp.array(indices, dtype=wp.int32))
    lo, hi = np.float32([1.0, 1.0, 1.0]), np.float32([6.0, 6.0, 6.0])
    hits = wp.zeros(60, dtype=int)
    with pytest.warns(DeprecationWarning) as issued:
        wp.launch_tiled(deprecated_faces, dim=1, inputs=[mesh.id, wp.vec3(*lo), wp.vec3(*hi), hits], block_dim=4)
    assert {str(w.message) for w in issued} == {
        f"wp.{old}() is deprecated in Warp 1.18 and is targeted for removal in Warp 1.22. Use wp.{new}() instead."
        for old, new in (("mesh_query_aabb_tiled", "tile_mesh_query_aabb"),
                         ("mesh_query_aabb_next_tiled", "tile_mesh_query_aabb_next"))}
    np.testing.assert_array_equal(hits.numpy(), ref_faces(points, indices, lo, hi).astype(np.int32))


def test_a_box_missing_every_face_runs_one_call():
    points, indices = _mesh(30, seed=6)
    mesh = wp.Mesh(wp.array(points, dtype=wp.vec3), wp.array(indices, dtype=wp.int32))
    hits, seen, calls = wp.zeros(30, dtype=int), wp.full(3, -7, dtype=int), wp.zeros(1, dtype=int)
    wp.launch_tiled(tile_faces, dim=1, inputs=[mesh.id, wp.vec3(50.0), wp.vec3(60.0), hits, seen, calls],
                    block_dim=2)
    assert calls.numpy()[0] == 1 and seen.numpy().tolist() == [-1, -7, -7] and hits.numpy().sum() == 0


def test_refusals():
    with pytest.raises(RuntimeError, match=r"^wp\.tile_mesh_query_aabb\(\) can only be called inside a kernel or "
                                           r"wp\.func$"):
        wp.tile_mesh_query_aabb(0, wp.vec3(), wp.vec3())
    mesh = wp.Mesh(wp.array(np.eye(3, dtype=np.float32), dtype=wp.vec3), wp.array([0, 1, 2], dtype=wp.int32))

    @wp.kernel
    def next_of_an_expression(mesh: wp.uint64):
        wp.tile_mesh_query_aabb_next(wp.tile_mesh_query_aabb(mesh, wp.vec3(0.0), wp.vec3(1.0)))

    with pytest.raises(wp.CompileError, match=r"tile_mesh_query_aabb_next\(query\): the query must be a local "
                                              r"variable \(the call advances it\)"):
        wp.launch_tiled(next_of_an_expression, dim=1, inputs=[mesh.id], block_dim=1)

    @wp.kernel
    def next_of_a_bvh_query(mesh: wp.uint64):
        q = wp.tile_bvh_query_aabb(mesh, wp.vec3(0.0), wp.vec3(1.0))
        wp.tile_mesh_query_aabb_next(q)

    with pytest.raises(wp.CompileTypeError, match=r"tile_mesh_query_aabb_next\(\): the query must be a "
                                                  r"MeshQueryAABBTiled, got BvhQueryTiled"):
        wp.launch_tiled(next_of_a_bvh_query, dim=1, inputs=[mesh.id], block_dim=1)

    @wp.kernel
    def wrong_box(mesh: wp.uint64):
        wp.tile_mesh_query_aabb(mesh, 1.0, wp.vec3(1.0))

    with pytest.raises(wp.CompileTypeError, match=r"tile_mesh_query_aabb\(\): low must be a vec3, got float32"):
        wp.launch_tiled(wrong_box, dim=1, inputs=[mesh.id], block_dim=1)

    @wp.kernel
    def two_arguments(mesh: wp.uint64):
        wp.tile_mesh_query_aabb(mesh, wp.vec3(1.0))

    with pytest.raises(wp.CompileError, match=r"tile_mesh_query_aabb\(\) takes the arguments \(id, low, high\) by "
                                              r"position, got 2"):
        wp.launch_tiled(two_arguments, dim=1, inputs=[mesh.id], block_dim=1)
