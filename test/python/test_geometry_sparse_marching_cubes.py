"""wp.geometry.lipschitz_octree, sparse_marching_cubes_from_cells and sparse_marching_cubes: the octree against
a numpy replay of its band rule and against every dense cell the surface crosses, the meshes against
brute-force crossings of the kept cells' edges (numpy, float64), closed-surface invariants (edges shared
twice, Euler characteristic), the area of a sphere and its radius derivative in closed form, gradients
against finite differences of a numpy forward, and Warp's messages for bad input."""

from collections import Counter

import numpy as np
import pytest

import mlwarp as wp

geometry = wp.geometry
CORNERS = np.array(wp.geometry.IsoSurfaceMarchingCubes.CUBE_CORNER_OFFSETS)
EDGES = wp.geometry.IsoSurfaceMarchingCubes.EDGE_TO_CORNERS
RANGES = wp.geometry.IsoSurfaceMarchingCubes.CASE_TO_TRI_RANGE


@wp.kernel
def sphere_values(points: wp.array(dtype=wp.vec3), radius: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.length(points[i]) - radius[0]


def sphere(radius=0.5, requires_grad=False, calls=None):
    r = wp.array([radius], dtype=float, requires_grad=requires_grad)

    def evaluate(points):
        if calls is not None:
            calls.append(points.shape[0])
        out = wp.empty(points.shape[0], dtype=float, requires_grad=requires_grad)
        wp.launch(sphere_values, dim=points.shape[0], inputs=[points, r], outputs=[out])
        return out

    evaluate.radius = r
    return evaluate


def torus_numpy(points):
    p = points.numpy().astype(np.float64)
    q = np.stack([np.hypot(p[:, 0], p[:, 2]) - 0.5, p[:, 1]], axis=1)
    return wp.array((np.linalg.norm(q, axis=1) - 0.2).astype(np.float32))


def octree_replay(f, origin, width, depth, threshold=0.0, lipschitz=1.0):
    """The band rule, in float64: a cell survives while |f(centre) - threshold| <= lipschitz * |w| sqrt(3) / 2."""
    cells = np.zeros((1, 3), dtype=np.int64)
    for level in range(depth + 1):
        w = width / 2**level
        centres = np.asarray(origin) + w * (cells + 0.5)
        cells = cells[np.abs(f(centres) - threshold) <= lipschitz * 0.5 * np.sqrt(3.0) * w + 1e-6]
        if level < depth:
            children = np.array([[c & 1, c >> 1 & 1, c >> 2 & 1] for c in range(8)])
            cells = (2 * cells[:, None, :] + children).reshape(-1, 3)
    return cells


def sphere_np(points):
    return np.linalg.norm(points, axis=-1) - 0.5


def crossings(cells, values, origin, width, threshold=0.0):
    """Brute force over the cells' edges: {(corner subscript, axis): crossing point} and the triangle count."""
    points, triangles = {}, 0
    for cell, v in zip(cells, values):
        case = sum(1 << c for c in range(8) if v[c] >= threshold)
        triangles += (RANGES[case + 1] - RANGES[case]) // 3
        for a, b in EDGES:
            if (v[a] >= threshold) != (v[b] >= threshold):
                lo, hi = (a, b) if CORNERS[a].sum() < CORNERS[b].sum() else (b, a)
                t = min(max((threshold - v[lo]) / (v[hi] - v[lo]), 0.0), 1.0)
                p0 = np.asarray(origin) + width * (cell + CORNERS[lo])
                p1 = np.asarray(origin) + width * (cell + CORNERS[hi])
                axis = int(np.flatnonzero(CORNERS[a] != CORNERS[b])[0])
                points[(tuple(cell + CORNERS[lo]), axis)] = p0 + t * (p1 - p0)
    return points, triangles


def corner_values(cells, origin, width, f=sphere_np):
    return f(np.asarray(origin) + width * (cells[:, None, :] + CORNERS[None])).astype(np.float32)


def mesh_stats(faces):
    counts = Counter(tuple(sorted((int(t[j]), int(t[(j + 1) % 3])))) for t in faces for j in range(3))
    return len(counts), set(counts.values())


def test_octree_matches_its_band_rule_and_brackets_every_crossed_cell():
    origin, width, depth = (-1.0, -1.0, -1.0), 2.0, 5
    cells, cell_width = geometry.lipschitz_octree(sphere(), origin, width, depth)
    assert cells.dtype == wp.vec3i and cell_width == width / 32
    got = {tuple(c) for c in cells.numpy()}
    assert got == {tuple(c) for c in octree_replay(sphere_np, origin, width, depth)}
    # every cell of the dense 32^3 grid with a sign change among its corners is kept
    n = np.arange(33)
    nodes = np.stack(np.meshgrid(n, n, n, indexing="ij"), axis=-1)
    inside = sphere_np(np.asarray(origin) + cell_width * nodes) < 0
    count = sum(inside[dx:dx + 32, dy:dy + 32, dz:dz + 32].astype(int) for dx, dy, dz in CORNERS)
    crossed = {tuple(c) for c in np.argwhere((count > 0) & (count < 8))}
    assert crossed and crossed <= got
    assert geometry.lipschitz_octree(sphere(), origin, width, 3, threshold=-10.0)[0].shape == (0,)


def test_from_cells_is_the_brute_force_surface_and_watertight():
    origin, width = (-1.0, -1.0, -1.0), 2.0 / 24
    grid = np.arange(24)
    cells = np.stack(np.meshgrid(grid, grid, grid, indexing="ij"), axis=-1).reshape(-1, 3)
    values = corner_values(cells, origin, width)
    keep = (values.min(axis=1) < 0) & (values.max(axis=1) >= 0)
    cells, values = cells[keep], values[keep]
    verts, faces = geometry.sparse_marching_cubes_from_cells(cells, values, origin=origin, cell_width=width)
    points, triangles = crossings(cells, values.astype(np.float64), origin, width)
    # vertices: one per crossed edge, in (corner, axis) order
    expected = np.array([points[k] for k in sorted(points, key=lambda k: (k[0], k[1]))])
    np.testing.assert_allclose(verts.numpy(), expected, atol=2e-6)
    tris = faces.numpy().reshape(-1, 3)
    assert len(tris) == triangles
    n_edges, shared = mesh_stats(tris)
    assert shared == {2} and len(expected) - n_edges + len(tris) == 2
    # the same cells and values as (N, 3) int32 and flat float32 device arrays, or shifted far past float32's
    # integers with a compensating origin: the same mesh
    same = geometry.sparse_marching_cubes_from_cells(wp.array(cells.astype(np.int32)),
                                                     wp.array(values.ravel()), origin=origin, cell_width=width)
    assert np.array_equal(same[0].numpy(), verts.numpy()) and np.array_equal(same[1].numpy(), faces.numpy())
    shift = 1 << 25
    moved = geometry.sparse_marching_cubes_from_cells(cells + shift, values, cell_width=width,
                                                      origin=tuple(np.asarray(origin) - shift * width))
    assert np.array_equal(moved[1].numpy(), faces.numpy())
    np.testing.assert_allclose(moved[0].numpy(), verts.numpy(), atol=1e-4)


@pytest.mark.parametrize("case", ["sphere", "torus"])
def test_sparse_marching_cubes_surfaces(case):
    n = 33
    if case == "sphere":
        calls = []
        verts, faces, stats = geometry.sparse_marching_cubes(sphere(calls=calls), n, n, n, lower=(-1, -1, -1),
                                                             upper=(1, 1, 1), return_stats=True)
        assert stats["field_evaluations"] == sum(calls) and stats["resolution"] == 32
        assert stats["culled_cells"] == 0 and stats["field_evaluations"] < n**3 // 4
        euler = 2
    else:
        verts, faces = geometry.sparse_marching_cubes(torus_numpy, n, n, n, lower=(-1, -1, -1), upper=(1, 1, 1))
        euler = 0
    v, tris = verts.numpy(), faces.numpy().reshape(-1, 3)
    n_edges, shared = mesh_stats(tris)
    assert shared == {2} and len(v) - n_edges + len(tris) == euler
    assert np.array_equal(np.unique(tris), np.arange(len(v)))
    if case == "sphere":
        assert np.abs(np.linalg.norm(v, axis=1) - 0.5).max() < 2.0 / 32
        area = 0.5 * np.linalg.norm(np.cross(v[tris[:, 1]] - v[tris[:, 0]], v[tris[:, 2]] - v[tris[:, 0]]),
                                    axis=1).sum()
        assert abs(area - np.pi) / np.pi < 0.02


def test_anisotropic_grid_is_padded_then_culled():
    # a sphere leaving the box: the octree's cells past the grid (its padding to 32^3) reach it, and go
    lower, upper, shape = (-1.0, -1.2, -0.9), (1.0, 1.3, 1.1), (11, 15, 21)
    verts, faces, stats = geometry.sparse_marching_cubes(sphere(1.1), *shape, lower=lower, upper=upper,
                                                         return_stats=True)
    assert stats["resolution"] == 32 and stats["requested_ncells"] == (10, 14, 20) and stats["culled_cells"] > 0
    # brute force: every dense cell with a crossing, sampled at the grid's nodes
    delta = (np.array(upper) - lower) / (np.array(shape) - 1)
    grid = np.stack(np.meshgrid(*[np.arange(s - 1) for s in shape], indexing="ij"), axis=-1).reshape(-1, 3)
    values = sphere_np(np.asarray(lower) + delta * (grid[:, None, :] + CORNERS[None])) - 0.6
    points, triangles = crossings(grid, values, lower, delta)
    assert faces.shape[0] == 3 * triangles and verts.shape[0] == len(points)
    expected = np.array([points[k] for k in sorted(points)])  # vertices in (corner subscript, axis) order
    np.testing.assert_allclose(verts.numpy(), expected, atol=1e-5)


@wp.kernel
def corner_values_kernel(cells: wp.array(dtype=wp.vec3i), width: float, radius: wp.array(dtype=float),
                         offsets: wp.array(dtype=wp.vec3i), out: wp.array2d(dtype=float)):
    i, c = wp.tid()
    s = cells[i] + offsets[c]
    p = wp.vec3(-1.0, -1.0, -1.0) + width * wp.vec3(float(s[0]), float(s[1]), float(s[2]))
    out[i, c] = wp.length(p) - radius[0]


@wp.kernel
def area_kernel(verts: wp.array(dtype=wp.vec3), faces: wp.array(dtype=int), area: wp.array(dtype=float)):
    t = wp.tid()
    a = verts[faces[3 * t]]
    wp.atomic_add(area, 0, 0.5 * wp.length(wp.cross(verts[faces[3 * t + 1]] - a, verts[faces[3 * t + 2]] - a)))


def test_area_derivative_through_the_octree_and_through_cells():
    r = 0.5
    # through sparse_marching_cubes: the field's values require grad
    evaluate = sphere(r, requires_grad=True)
    with wp.Tape() as tape:
        verts, faces = geometry.sparse_marching_cubes(evaluate, 33, 33, 33, lower=(-1, -1, -1), upper=(1, 1, 1))
        area = wp.zeros(1, dtype=float, requires_grad=True)
        wp.launch(area_kernel, dim=faces.shape[0] // 3, inputs=[verts, faces, area])
    tape.backward(area)
    assert abs(area.numpy()[0] - 4 * np.pi * r * r) / (4 * np.pi * r * r) < 0.01
    assert abs(evaluate.radius.grad.numpy()[0] - 8 * np.pi * r) / (8 * np.pi * r) < 0.02
    # through sparse_marching_cubes_from_cells over every cell of the grid, strided (N, 8) values
    grid = np.arange(32)
    cells = wp.array(np.stack(np.meshgrid(grid, grid, grid, indexing="ij"), axis=-1).reshape(-1, 3),
                     dtype=wp.vec3i)
    radius = wp.array([r], dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        values = wp.zeros((cells.shape[0], 8), dtype=float, requires_grad=True)
        wp.launch(corner_values_kernel, dim=(cells.shape[0], 8),
                  inputs=[cells, 2.0 / 32, radius, wp.array(CORNERS.astype(np.int32), dtype=wp.vec3i)],
                  outputs=[values])
        verts, faces = geometry.sparse_marching_cubes_from_cells(cells, values, origin=(-1.0, -1.0, -1.0),
                                                                 cell_width=2.0 / 32)
        area = wp.zeros(1, dtype=float, requires_grad=True)
        wp.launch(area_kernel, dim=faces.shape[0] // 3, inputs=[verts, faces, area])
    tape.backward(area)
    assert abs(radius.grad.numpy()[0] - 8 * np.pi * r) / (8 * np.pi * r) < 0.02


def test_gradient_matches_finite_differences_of_numpy():
    rng = np.random.default_rng(4)
    cells = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [5, 5, 5]])
    node = {tuple(s): rng.uniform(-1, 1) for c in cells for s in c + CORNERS}  # shared corners agree
    for key in node:
        if abs(node[key]) < 0.05:
            node[key] = 0.4
    values = np.array([[node[tuple(s)] for s in c + CORNERS] for c in cells], dtype=np.float32)
    weights = None
    field = wp.array(values, requires_grad=True)
    with wp.Tape() as tape:
        verts, _ = geometry.sparse_marching_cubes_from_cells(cells, field, cell_width=0.5)
        weights = rng.uniform(-1, 1, size=(verts.shape[0], 3)).astype(np.float32)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        wp.launch(weighted, dim=verts.shape[0], inputs=[verts, wp.array(weights, dtype=wp.vec3), loss])
    tape.backward(loss)
    grad = field.grad.numpy()

    def forward(v):
        points, _ = crossings(cells, v, (0.0, 0.0, 0.0), 0.5)
        return float(np.sum(np.array([points[k] for k in sorted(points)]) * weights))

    # the gradient of a shared corner goes to its first occurrence (cell order, then corner order)
    first = {}
    for i, c in enumerate(cells):
        for k, s in enumerate(c + CORNERS):
            first.setdefault(tuple(s), (i, k))
    eps = 1e-4
    for key, (i, k) in first.items():
        plus, minus = values.astype(np.float64), values.astype(np.float64)
        for j, c in enumerate(cells):
            for m, s in enumerate(c + CORNERS):
                if tuple(s) == key:
                    plus[j, m] += eps
                    minus[j, m] -= eps
        fd = (forward(plus) - forward(minus)) / (2 * eps)
        assert abs(grad[i, k] - fd) < 1e-3, (key, grad[i, k], fd)
    assert np.count_nonzero(grad) > 0


@wp.kernel
def weighted(verts: wp.array(dtype=wp.vec3), weights: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.dot(verts[i], weights[i]))


@wp.func
def single_point(p: wp.vec3) -> float:
    return wp.length(p)


def test_bad_input_is_refused_with_warps_messages():
    with pytest.raises(ValueError, match=r"^nx, ny, nz must each be at least 2, got \(1, 17, 17\)\.$"):
        geometry.sparse_marching_cubes(sphere(), 1, 17, 17)
    with pytest.raises(ValueError, match=r"^lipschitz_bound must be non-negative, got -1\.0\.$"):
        geometry.sparse_marching_cubes(sphere(), 17, 17, 17, lipschitz_bound=-1.0)
    with pytest.raises(ValueError, match=r"^max_depth must be non-negative, got -1\.$"):
        geometry.lipschitz_octree(sphere(), (0.0, 0.0, 0.0), 2.0, -1)
    with pytest.raises(ValueError, match=r"^root_width must be positive, got 0\.0\.$"):
        geometry.lipschitz_octree(sphere(), (0.0, 0.0, 0.0), 0.0, 3)
    with pytest.raises(TypeError, match=r"^`field` must be a callable mapping .* but got <class 'int'>\.$"):
        geometry.sparse_marching_cubes(42, 17, 17, 17)
    with pytest.raises(TypeError, match=r"^`field` must be a batched callable .* not a single-point @wp\.func"):
        geometry.lipschitz_octree(single_point, (0.0, 0.0, 0.0), 2.0, 3)
    with pytest.raises(TypeError, match=r"^The implicit function callable must return a warp\.array"):
        geometry.lipschitz_octree(lambda p: p.numpy()[:, 0], (0.0, 0.0, 0.0), 2.0, 3)
    with pytest.raises(ValueError, match=r"^The implicit function returned 2 values for 1 query points\.$"):
        geometry.lipschitz_octree(lambda p: wp.zeros(2, dtype=float), (0.0, 0.0, 0.0), 2.0, 3)
    with pytest.raises(TypeError, match=r"must return a warp\.array of float32 distance values, got .*float64"):
        geometry.lipschitz_octree(lambda p: wp.zeros(p.shape[0], dtype=wp.float64), (0.0, 0.0, 0.0), 2.0, 3)
    cells, values = np.zeros((1, 3), np.int32), np.zeros((1, 8), np.float32)
    for bad in (0.0, -1.0):
        with pytest.raises(ValueError, match=rf"^cell_width must be positive, got {bad}\.$"):
            geometry.sparse_marching_cubes_from_cells(cells, values, cell_width=bad)
    with pytest.raises(ValueError, match=r"^corner_values must have 0 entries for 0 cells, got 3\.$"):
        geometry.sparse_marching_cubes_from_cells(np.zeros((0, 3), np.int32), np.zeros(3, np.float32))
    with pytest.raises(ValueError, match=r"^corner_values must be float32, got .*float64"):
        geometry.sparse_marching_cubes_from_cells(cells, wp.zeros(8, dtype=wp.float64))
    verts, faces = geometry.sparse_marching_cubes_from_cells(np.zeros((0, 3), np.int32), np.zeros(0, np.float32))
    assert verts.shape == (0,) and faces.shape == (0,)
