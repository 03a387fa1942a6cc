"""wp.geometry.tri_tri_adjacency, wp.geometry.delaunay_edge_flip and wp.geometry.find_triangle_neighbor_edge_index:
adjacency against a brute-force search over every pair of triangles, flips against the empty-circumcircle
property checked for every triangle against every point (float64 numpy), hand-made meshes, and Warp's
messages for bad input."""

from collections import Counter

import numpy as np
import pytest

import mlwarp as wp

geometry = wp.geometry


def brute_force_adjacency(tris):
    n = len(tris)
    neighbours = -np.ones((n, 3), dtype=np.int64)
    edges = -np.ones((n, 3), dtype=np.int64)
    for t in range(n):
        for j in range(3):
            edge = {tris[t][(j + 1) % 3], tris[t][(j + 2) % 3]}
            for u in range(n):
                for k in range(3):
                    if u != t and {tris[u][(k + 1) % 3], tris[u][(k + 2) % 3]} == edge:
                        neighbours[t, j], edges[t, j] = u, k
    return neighbours, edges


def grid_mesh(nx, ny, jitter=0.0, seed=0, shear=0.0):
    xs, ys = np.meshgrid(np.arange(nx + 1), np.arange(ny + 1), indexing="ij")
    points = np.stack([xs.ravel(), ys.ravel()], axis=1).astype(np.float64)
    interior = (xs.ravel() > 0) & (xs.ravel() < nx) & (ys.ravel() > 0) & (ys.ravel() < ny)
    points[interior] += np.random.default_rng(seed).uniform(-jitter, jitter, size=(int(interior.sum()), 2))
    points[:, 0] += shear * points[:, 1]
    tris = []
    for i in range(nx):
        for j in range(ny):
            bl, br, tr, tl = i * (ny + 1) + j, (i + 1) * (ny + 1) + j, (i + 1) * (ny + 1) + j + 1, i * (ny + 1) + j + 1
            tris += [[bl, br, tr], [bl, tr, tl]]
    return points.astype(np.float32), np.array(tris, dtype=np.int32)


def areas(points, tris):
    p = points.astype(np.float64)
    a, b, c = p[tris[:, 0]], p[tris[:, 1]], p[tris[:, 2]]
    return 0.5 * ((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0]))


def points_inside_circumcircles(points, tris, tol=1e-9):
    """Brute force: (triangle, point) pairs with the point strictly inside the triangle's circumcircle."""
    p = points.astype(np.float64)
    bad = []
    for t, (a, b, c) in enumerate(tris):
        for d in range(len(p)):
            if d in (a, b, c):
                continue
            rows = [np.r_[p[v] - p[d], (p[v] - p[d]) @ (p[v] - p[d])] for v in (a, b, c)]
            if np.linalg.det(np.array(rows)) > tol:
                bad.append((t, d))
    return bad


def boundary(tris):
    counts = Counter(tuple(sorted((int(t[j]), int(t[(j + 1) % 3])))) for t in tris for j in range(3))
    return {e for e, n in counts.items() if n == 1}


def test_adjacency_matches_brute_force():
    points, tris = grid_mesh(4, 3, jitter=0.2, seed=1)
    tris = tris[np.random.default_rng(2).permutation(len(tris))]  # order and winding do not matter
    tris[::3] = tris[::3, ::-1]
    expected, expected_edges = brute_force_adjacency(tris.tolist())
    neighbours, edges = geometry.tri_tri_adjacency(wp.array(tris, dtype=wp.int32), vertex_count=len(points))
    assert neighbours.dtype == wp.int32 and neighbours.shape == (len(tris), 3)
    assert np.array_equal(neighbours.numpy(), expected) and np.array_equal(edges.numpy(), expected_edges)
    only = geometry.tri_tri_adjacency(wp.array(tris, dtype=wp.int32), return_neighbor_edge_indices=False)
    assert not isinstance(only, tuple) and np.array_equal(only.numpy(), expected)


def test_adjacency_of_two_triangles_by_hand():
    neighbours, edges = geometry.tri_tri_adjacency(wp.array([[0, 1, 2], [0, 2, 3]], dtype=wp.int32))
    # edge (0, 2) is opposite vertex 1 of the first (local edge 1) and vertex 3 of the second (local edge 2)
    assert neighbours.numpy().tolist() == [[-1, 1, -1], [-1, -1, 0]]
    assert edges.numpy().tolist() == [[-1, 2, -1], [-1, -1, 1]]
    empty = geometry.tri_tri_adjacency(wp.zeros((0, 3), dtype=wp.int32))
    assert empty[0].shape == (0, 3) and empty[1].shape == (0, 3)


@wp.kernel
def neighbour_edges(adjacency: wp.array2d(dtype=wp.int32), pairs: wp.array2d(dtype=wp.int32),
                    out: wp.array(dtype=wp.int32)):
    i = wp.tid()
    out[i] = wp.geometry.find_triangle_neighbor_edge_index(adjacency, pairs[i, 0], pairs[i, 1])


def test_find_triangle_neighbor_edge_index_in_a_kernel():
    points, tris = grid_mesh(3, 3, jitter=0.2, seed=3)
    expected, expected_edges = brute_force_adjacency(tris.tolist())
    pairs = [(int(expected[t, j]), t, int(expected_edges[t, j])) for t in range(len(tris)) for j in range(3)
             if expected[t, j] >= 0]
    pairs.append((0, len(tris) - 1, -1))  # not adjacent
    out = wp.zeros(len(pairs), dtype=wp.int32)
    wp.launch(neighbour_edges, dim=len(pairs),
              inputs=[wp.array(expected.astype(np.int32)), wp.array([p[:2] for p in pairs], dtype=wp.int32), out])
    assert out.numpy().tolist() == [p[2] for p in pairs]


def test_single_edge_flip_by_hand():
    points = np.array([[-3.0, 0.0], [3.0, 0.0], [0.0, 1.0], [0.0, -1.0]], dtype=np.float32)
    tris = wp.array([[0, 1, 2], [1, 0, 3]], dtype=wp.int32)
    flips = geometry.delaunay_edge_flip(wp.array(points, dtype=wp.vec2), tris)
    assert flips.dtype == wp.int32 and flips.shape == (1,) and flips.numpy()[0] == 1
    # edge (0, 1) becomes (2, 3): (c, a, d) = (2, 0, 3) and (c, d, b) = (2, 3, 1)
    assert tris.numpy().tolist() == [[2, 0, 3], [2, 3, 1]]
    # the same flip would be degenerate in a collinear reference configuration: rejected
    tris = wp.array([[0, 1, 2], [1, 0, 3]], dtype=wp.int32)
    reference = wp.array([[-3.0, 0.0], [3.0, 0.0], [0.0, 0.0], [0.0, 0.0]], dtype=wp.vec2)
    flips = geometry.delaunay_edge_flip(wp.array(points, dtype=wp.vec2), tris, ref_positions=reference)
    assert flips.numpy()[0] == 0 and tris.numpy().tolist() == [[0, 1, 2], [1, 0, 3]]
    # an area floor above the new triangles' areas (3 each) forbids it too
    flips = geometry.delaunay_edge_flip(wp.array(points, dtype=wp.vec2), tris, area_epsilon=3.5)
    assert flips.numpy()[0] == 0


@pytest.mark.parametrize("mesh", ["jittered", "sheared", "large"])
def test_flips_reach_the_delaunay_triangulation(mesh):
    if mesh == "jittered":
        points, tris = grid_mesh(6, 5, jitter=0.3, seed=1234)
    elif mesh == "sheared":
        points, tris = grid_mesh(12, 12, shear=0.1)
    else:
        points, tris = grid_mesh(30, 30, jitter=0.25, seed=99)
    before_area, before_boundary = areas(points, tris).sum(), boundary(tris)
    check = mesh != "large"  # the brute force is quadratic
    if check:
        assert points_inside_circumcircles(points, tris)
    indices = wp.array(tris, dtype=wp.int32)
    positions = wp.array(points, dtype=wp.vec2)
    flips = geometry.delaunay_edge_flip(positions, indices, max_passes=8 if mesh == "sheared" else 1000)
    out = indices.numpy()
    assert flips.numpy()[0] > 0
    assert (areas(points, out) > 0).all()
    assert np.isclose(areas(points, out).sum(), before_area, rtol=1e-6)
    assert boundary(out) == before_boundary and set(np.unique(out)) == set(np.unique(tris))
    if check:
        assert points_inside_circumcircles(points, out) == []  # the hull is convex: globally Delaunay
    assert geometry.delaunay_edge_flip(positions, indices).numpy()[0] == 0  # a fixed point


def test_delaunay_meshes_are_left_alone_and_empty_meshes_flip_nothing():
    points, tris = grid_mesh(4, 4)  # cocircular squares: no point strictly inside
    indices = wp.array(tris, dtype=wp.int32)
    assert geometry.delaunay_edge_flip(wp.array(points, dtype=wp.vec2), indices).numpy()[0] == 0
    assert np.array_equal(indices.numpy(), tris)
    flips = geometry.delaunay_edge_flip(wp.zeros(0, dtype=wp.vec2), wp.zeros((0, 3), dtype=wp.int32))
    assert flips.numpy().tolist() == [0]


def test_non_convex_star_keeps_its_boundary():
    rays = [(1.0 if i % 2 == 0 else 0.45) * np.array([np.cos(np.pi * i / 7), np.sin(np.pi * i / 7)])
            for i in range(14)]
    points = np.concatenate([np.zeros((1, 2)), rays]).astype(np.float32)
    tris = np.array([[0, 1 + i, 1 + (i + 1) % 14] for i in range(14)], dtype=np.int32)
    indices = wp.array(tris, dtype=wp.int32)
    flips = geometry.delaunay_edge_flip(wp.array(points, dtype=wp.vec2), indices)
    out = indices.numpy()
    assert flips.numpy()[0] > 0 and (areas(points, out) > 0).all() and boundary(out) == boundary(tris)
    assert np.isclose(areas(points, out).sum(), areas(points, tris).sum(), rtol=1e-6)


def test_bad_input_is_refused_with_warps_messages():
    points, tris = grid_mesh(3, 3, jitter=0.3, seed=5)
    positions, indices = wp.array(points, dtype=wp.vec2), wp.array(tris, dtype=wp.int32)
    with pytest.raises(ValueError, match=r"^max_passes must be at least 1$"):
        geometry.delaunay_edge_flip(positions, indices, max_passes=0)
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"^area_epsilon must be a finite, non-negative number$"):
            geometry.delaunay_edge_flip(positions, indices, area_epsilon=bad)
        with pytest.raises(ValueError, match=r"^ref_area_epsilon must be a finite, non-negative number$"):
            geometry.delaunay_edge_flip(positions, indices, ref_area_epsilon=bad)
    assert np.array_equal(indices.numpy(), tris)
    flat = wp.zeros(4, dtype=wp.int32)
    message = r"^indices must be a \(num_tris, 3\) array of triangle vertex indices$"
    with pytest.raises(ValueError, match=message):
        geometry.delaunay_edge_flip(positions, flat)
    with pytest.raises(ValueError, match=message):
        geometry.tri_tri_adjacency(flat)
    with pytest.raises(TypeError, match=r"^indices must be an array of int32 triangle vertex indices"):
        geometry.tri_tri_adjacency(wp.zeros((2, 3), dtype=wp.int64))
    with pytest.raises(TypeError, match=r"^positions must be an array of wp\.vec2"):
        geometry.delaunay_edge_flip(wp.array(points, dtype=float), indices)
    with pytest.raises(ValueError, match=r"^triangle vertex index 9 is out of range for vertex_count 4$"):
        geometry.tri_tri_adjacency(wp.array([[0, 1, 9]], dtype=wp.int32), vertex_count=4)
    with pytest.raises(ValueError, match=r"^edge \(0, 1\) is shared by 3 triangles: the mesh must be edge-manifold"):
        geometry.tri_tri_adjacency(wp.array([[0, 1, 2], [1, 0, 3], [0, 1, 4]], dtype=wp.int32))
