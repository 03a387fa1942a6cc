"""wp.geometry.IsoSurfaceMarchingCubes (and wp.MarchingCubes), wp.geometry.IsoSurfaceNets: the generated case
tables against the cube's geometry, the extracted meshes against brute-force numpy (every grid edge tested for a
crossing, interpolated by hand), closed-surface invariants (edges shared twice, Euler characteristic, enclosed
volume), gradients against finite differences of a numpy forward, and Warp's error messages."""

import warnings
from collections import Counter

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.geometry.isosurface import case_loops

MC = wp.geometry.IsoSurfaceMarchingCubes
SN = wp.geometry.IsoSurfaceNets

CORNERS = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]
EDGES = [(0, 1), (1, 2), (3, 2), (0, 3), (4, 5), (5, 6), (7, 6), (4, 7), (0, 4), (1, 5), (2, 6), (3, 7)]


def sphere_field(shape, center, radius):
    idx = np.indices(shape).astype(np.float64)
    return (np.sqrt(sum((idx[d] - center[d]) ** 2 for d in range(3))) - radius).astype(np.float32)


def crossing_points(field, threshold, clamp=True):
    """Brute force: every grid edge (node, axis) whose ends lie on both sides, in (node, axis) order, and the
    linear crossing on it in index coordinates."""
    out = {}
    nx, ny, nz = field.shape
    for i, j, k in np.ndindex(nx, ny, nz):
        for axis in range(3):
            o = [i, j, k]
            o[axis] += 1
            if o[axis] >= field.shape[axis]:
                continue
            a, b = float(field[i, j, k]), float(field[tuple(o)])
            if (a >= threshold) != (b >= threshold):
                t = (threshold - a) / (b - a)
                if clamp:
                    t = min(max(t, 0.0), 1.0)
                p = np.array([i, j, k], dtype=np.float64)
                p[axis] += t
                out[(i, j, k, axis)] = p
    return out


def signed_volume(verts, tris):
    p0, p1, p2 = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    return float(np.einsum("ij,ij->i", p0, np.cross(p1, p2)).sum() / 6.0)


def edge_counts(faces):
    counts = Counter()
    for face in faces:
        for n in range(len(face)):
            a, b = int(face[n]), int(face[(n + 1) % len(face)])
            counts[(min(a, b), max(a, b))] += 1
    return counts


# -- the marching-cubes tables -------------------------------------------------------------------
def test_tables_have_the_standard_shape():
    assert MC.CUBE_CORNER_OFFSETS == tuple(CORNERS) and MC.EDGE_TO_CORNERS == tuple(EDGES)
    ranges, local = MC.CASE_TO_TRI_RANGE, MC.TRI_LOCAL_INDICES
    assert isinstance(ranges, tuple) and isinstance(local, tuple)
    assert len(ranges) == 257 and len(local) == 2460 == ranges[-1]  # 820 triangles, as Lorensen/Bourke's table
    assert ranges[0] == ranges[1] == 0 and ranges[255] == ranges[256]
    assert all(ranges[c] <= ranges[c + 1] and (ranges[c + 1] - ranges[c]) % 3 == 0 for c in range(256))
    assert wp.array(MC.CUBE_CORNER_OFFSETS, dtype=wp.vec3ub).numpy()[1].tolist() == [1, 0, 0]


@pytest.mark.parametrize("case", range(256))
def test_each_case_is_an_outward_surface_through_its_crossed_edges(case):
    inside = [case >> c & 1 for c in range(8)]
    crossed = {e for e, (a, b) in enumerate(EDGES) if inside[a] != inside[b]}
    ranges, local = MC.CASE_TO_TRI_RANGE, MC.TRI_LOCAL_INDICES
    tris = np.array(local[ranges[case]:ranges[case + 1]]).reshape(-1, 3)
    assert set(tris.ravel().tolist()) == crossed
    # a surface with its boundary on the cube's faces: an edge inside the cube is in two triangles, opposite
    # ways; one in one triangle joins two points of one face
    directed = Counter((int(t[n]), int(t[(n + 1) % 3])) for t in tris for n in range(3))
    corner = np.array(CORNERS, dtype=np.float64)
    mid = np.array([(corner[a] + corner[b]) / 2 for a, b in EDGES])
    for (a, b), n in directed.items():
        assert n == 1
        if (b, a) not in directed:
            on_face = [(d, v) for d in range(3) for v in (0.0, 1.0) if mid[a][d] == v == mid[b][d]]
            assert on_face, (case, a, b)
    # each triangle's normal points towards the corners at or above the threshold: the trilinear field at the
    # triangle's centroid moved along the normal grows (checked where the field's slope there is clear)
    values = np.array(inside, dtype=np.float64) - 0.5

    def trilinear(p):
        return sum(values[c] * np.prod([p[d] if corner[c][d] else 1 - p[d] for d in range(3)]) for c in range(8))

    for t in tris:
        p0, p1, p2 = mid[t]
        normal = np.cross(p1 - p0, p2 - p0)
        centre = (p0 + p1 + p2) / 3
        step = 0.05 * normal / np.linalg.norm(normal)
        slope = trilinear(centre + step) - trilinear(centre - step)
        assert slope > -1e-12, (case, t)


def test_each_case_row_fills_the_loops_the_face_rule_derives():
    # the classic table's rows (Warp's) and case_loops (surface nets') describe one surface: the boundary
    # half-edges of a row's triangles are exactly its case's loops, with their winding
    ranges, local = MC.CASE_TO_TRI_RANGE, MC.TRI_LOCAL_INDICES
    for case in range(256):
        tris = local[ranges[case]:ranges[case + 1]]
        half_edges = {(tris[k + n], tris[k + (n + 1) % 3]) for k in range(0, len(tris), 3) for n in range(3)}
        boundary = {(a, b) for a, b in half_edges if (b, a) not in half_edges}
        loops = {(loop[n], loop[(n + 1) % len(loop)]) for loop in case_loops(case) for n in range(len(loop))}
        assert boundary == loops, case


def test_marching_cubes_triangles_are_warps():
    # values recorded from warp-lang 1.19.0 (CPU): IsoSurfaceMarchingCubes.extract of this field at 0.5; the
    # triangulation of each case's loops is the classic table's, so the index array is Warp's
    field = (np.arange(27).reshape(3, 3, 3) * 7 % 11 - 5).astype(np.float32)
    verts, faces = MC.extract(wp.array(field), threshold=0.5)
    assert len(verts) == 26
    assert faces.numpy().tolist() == [
        3, 5, 1, 3, 1, 2, 5, 16, 1, 0, 1, 12, 16, 12, 1, 7, 3, 4, 7, 5, 3, 17, 8, 14, 5, 6, 9, 5, 9, 16, 16, 9,
        19, 8, 21, 10, 8, 17, 21, 5, 7, 6, 11, 16, 15, 12, 16, 11, 13, 17, 14, 13, 22, 17, 22, 24, 17, 19, 15, 16,
        19, 18, 15, 25, 20, 23, 23, 20, 21, 23, 21, 24, 24, 21, 17]


def test_single_corner_cases_by_hand():
    # corner 0 alone at or above the threshold: one triangle on edges 0, 3, 8 whose normal points to corner 0
    ranges, local = MC.CASE_TO_TRI_RANGE, MC.TRI_LOCAL_INDICES
    tri = local[ranges[1]:ranges[2]]
    assert sorted(tri) == [0, 3, 8]
    mid = {0: np.array([0.5, 0, 0]), 3: np.array([0, 0.5, 0]), 8: np.array([0, 0, 0.5])}
    normal = np.cross(mid[tri[1]] - mid[tri[0]], mid[tri[2]] - mid[tri[0]])
    assert np.allclose(normal / np.linalg.norm(normal), -np.ones(3) / np.sqrt(3))


# -- marching cubes extraction ----------------------------------------------------------------------------
def test_marching_cubes_vertices_are_the_brute_force_crossings():
    rng = np.random.default_rng(1)
    field = rng.uniform(-1, 1, size=(5, 6, 4)).astype(np.float32)
    lower, upper = (-1.0, 0.5, 2.0), (3.0, 5.5, 8.0)
    verts, faces = MC.extract(wp.array(field), threshold=0.1, lower=lower, upper=upper)
    ref = crossing_points(field, 0.1)
    delta = (np.array(upper) - lower) / (np.array(field.shape) - 1)
    expected = np.array([np.array(lower) + p * delta for p in ref.values()])  # (node, axis) order
    np.testing.assert_allclose(verts.numpy(), expected, rtol=1e-5, atol=1e-5)
    tris = faces.numpy().reshape(-1, 3)
    assert faces.dtype == wp.int32 and tris.min() >= 0 and tris.max() < len(expected)
    assert np.array_equal(np.unique(tris), np.arange(len(expected)))


def test_marching_cubes_triangles_by_brute_force_per_cell():
    # every cell's triangles are its case's triangles, on its own crossed edges, in cell order
    rng = np.random.default_rng(2)
    field = rng.uniform(-1, 1, size=(4, 5, 3)).astype(np.float32)
    verts, faces = MC.extract(wp.array(field), threshold=0.0)
    ref = crossing_points(field, 0.0)
    vertex_of = {key: n for n, key in enumerate(ref)}
    ranges, local = MC.CASE_TO_TRI_RANGE, MC.TRI_LOCAL_INDICES
    expected = []
    for i, j, k in np.ndindex(*(n - 1 for n in field.shape)):
        case = sum(1 << c for c, off in enumerate(CORNERS) if field[i + off[0], j + off[1], k + off[2]] >= 0.0)
        for e in local[ranges[case]:ranges[case + 1]]:
            a, b = EDGES[e]
            node = tuple(min(CORNERS[a][d], CORNERS[b][d]) + (i, j, k)[d] for d in range(3))
            axis = next(d for d in range(3) if CORNERS[a][d] != CORNERS[b][d])
            expected.append(vertex_of[node + (axis,)])
    assert faces.numpy().tolist() == expected


def test_marching_cubes_sphere_is_closed_outward_and_accurate():
    n, radius = 40, 12.0
    field = sphere_field((n, n, n), (n / 2, n / 2, n / 2), radius)
    iso = MC(nx=n, ny=n, nz=n)
    assert iso.verts is None and iso.indices is None
    iso.surface(field=wp.array(field), threshold=0.0)
    verts, tris = iso.verts.numpy(), iso.indices.numpy().reshape(-1, 3)
    assert iso.verts.dtype == wp.vec3 and iso.indices.dtype == wp.int32
    counts = edge_counts(tris)
    assert set(counts.values()) == {2}
    assert len(verts) - len(counts) + len(tris) == 2  # a sphere's Euler characteristic
    assert np.abs(np.linalg.norm(verts - n / 2, axis=1) - radius).max() < 0.1
    volume = signed_volume(verts.astype(np.float64), tris)
    assert volume > 0 and abs(volume - 4 / 3 * np.pi * radius**3) / (4 / 3 * np.pi * radius**3) < 0.02


def test_marching_cubes_empty_and_smallest_fields():
    field = wp.array(sphere_field((8, 8, 8), (4, 4, 4), 2.0))
    verts, faces = MC.extract(field, threshold=1000.0)
    assert verts.shape == (0,) and faces.shape == (0,)
    verts, faces = MC.extract(wp.zeros((2, 2, 2), dtype=wp.float32), threshold=0.0)
    assert verts.shape == (0,) and faces.shape == (0,)
    one = np.ones((2, 2, 2), np.float32)
    one[1, 1, 1] = -1.0  # corner 6 below: the other seven at or above, one triangle
    verts, faces = MC.extract(wp.array(one), threshold=0.0)
    np.testing.assert_allclose(sorted(verts.numpy().tolist()), [[0.5, 1, 1], [1, 0.5, 1], [1, 1, 0.5]])
    assert faces.shape == (3,)


def tape_gradient(extract, field_np, weights_seed=0, **kwargs):
    field = wp.array(field_np, requires_grad=True)
    tape = wp.Tape()
    with tape:
        verts, _ = extract(field, **kwargs)
        weights = np.random.default_rng(weights_seed).uniform(-1, 1, size=(verts.shape[0], 3)).astype(np.float32)
        loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
        wp.launch(weighted_sum, dim=verts.shape[0], inputs=[verts, wp.array(weights, dtype=wp.vec3), loss])
    tape.backward(loss)
    return field.grad.numpy(), weights


@wp.kernel
def weighted_sum(verts: wp.array(dtype=wp.vec3), weights: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.dot(verts[i], weights[i]))


def test_marching_cubes_gradient_matches_finite_differences_of_numpy():
    rng = np.random.default_rng(3)
    field = rng.uniform(-1, 1, size=(4, 4, 4)).astype(np.float32)
    field[np.abs(field) < 0.05] = 0.5  # no node near the threshold: the perturbation keeps the topology
    grad, weights = tape_gradient(MC.extract, field, threshold=0.0)

    def loss(f):
        points = np.array(list(crossing_points(f, 0.0).values()))
        return float(np.sum(points * weights))

    eps = 1e-4
    fd = np.zeros(field.shape)
    f64 = field.astype(np.float64)
    for node in np.ndindex(*field.shape):
        plus, minus = f64.copy(), f64.copy()
        plus[node] += eps
        minus[node] -= eps
        fd[node] = (loss(plus) - loss(minus)) / (2 * eps)
    np.testing.assert_allclose(grad, fd, rtol=1e-3, atol=1e-3)
    assert np.abs(fd).max() > 0.1


@wp.kernel
def sphere_on_unit_box(field: wp.array3d(dtype=float), radius: wp.array(dtype=float)):
    i, j, k = wp.tid()
    n = float(field.shape[0] - 1)
    p = wp.vec3(2.0 * float(i) / n - 1.0, 2.0 * float(j) / n - 1.0, 2.0 * float(k) / n - 1.0)
    field[i, j, k] = wp.length(p) - radius[0]


@wp.kernel
def triangle_area(verts: wp.array(dtype=wp.vec3), faces: wp.array(dtype=int), area: wp.array(dtype=float)):
    t = wp.tid()
    a = verts[faces[3 * t]]
    b = verts[faces[3 * t + 1]]
    c = verts[faces[3 * t + 2]]
    wp.atomic_add(area, 0, 0.5 * wp.length(wp.cross(b - a, c - a)))


@pytest.mark.parametrize("extractor", [MC, SN], ids=["marching_cubes", "surface_nets"])
def test_area_and_its_radius_derivative_of_a_sphere(extractor):
    # closed forms: area 4 pi r^2, d area / d r = 8 pi r, through a field kernel, the extraction and an area
    n, r = 48, 0.5
    radius = wp.array([r], dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        field = wp.zeros((n, n, n), dtype=float, requires_grad=True)
        wp.launch(sphere_on_unit_box, dim=field.shape, inputs=[field, radius])
        verts, faces = extractor.extract(field, threshold=0.0, lower=(-1.0, -1.0, -1.0), upper=(1.0, 1.0, 1.0))
        assert verts.requires_grad
        area = wp.zeros(1, dtype=float, requires_grad=True)
        wp.launch(triangle_area, dim=faces.shape[0] // 3, inputs=[verts, faces, area])
    tape.backward(area)
    tolerance = 0.01 if extractor is MC else 0.05
    assert abs(area.numpy()[0] - 4 * np.pi * r**2) / (4 * np.pi * r**2) < tolerance
    assert abs(radius.grad.numpy()[0] - 8 * np.pi * r) / (8 * np.pi * r) < tolerance


def test_marching_cubes_errors_are_warps():
    with pytest.raises(ValueError, match=r"^Expected a 3D array for 'field', but got an array with shape \(8,\)\.$"):
        MC.extract(wp.zeros(8, dtype=wp.float32))
    for shape in ((1, 8, 8), (8, 8, 1), (0, 8, 8)):
        with pytest.raises(ValueError, match=r"^Expected 'field' to have at least 2 nodes on each axis, but got an "
                                             r"array with shape \(" + ", ".join(map(str, shape)) + r"\)\.$"):
            MC.extract(wp.zeros(shape, dtype=wp.float32))
        with pytest.raises(ValueError, match="at least 2 nodes on each axis"):
            MC(*shape).surface(wp.zeros(shape, dtype=wp.float32), 0.0)
    with pytest.raises(TypeError, match=r"^Expected a dtype of wp\.float32 for 'field', but got .*float64"):
        MC.extract(wp.zeros((4, 4, 4), dtype=wp.float64))
    with pytest.raises(ValueError, match=r"^Field shape \(4, 4, 4\) does not match context grid dimensions "
                                         r"\(8, 8, 8\)\.$"):
        MC(8, 8, 8).surface(wp.zeros((4, 4, 4), dtype=wp.float32), 0.0)
    with pytest.raises(TypeError, match=r"^Cannot specify both `lower` and `domain_bounds_lower_corner`\.$"):
        MC(8, 8, 8, lower=(0.0, 0.0, 0.0), domain_bounds_lower_corner=(1.0, 1.0, 1.0))
    with pytest.raises(TypeError, match=r"^Cannot specify both `upper` and `domain_bounds_upper_corner`\.$"):
        MC(8, 8, 8, upper=(1.0, 1.0, 1.0), domain_bounds_upper_corner=(2.0, 2.0, 2.0))
    with pytest.raises(TypeError):
        wp.geometry.IsoSurfaceBase(8, 8, 8)


def test_deprecated_names_warn_and_forward():
    with pytest.warns(DeprecationWarning, match=r"wp\.MarchingCubes is deprecated .* Use "
                                                r"wp\.geometry\.IsoSurfaceMarchingCubes instead"):
        alias = wp.MarchingCubes
    assert alias is MC and isinstance(MC(4, 4, 4), wp.geometry.IsoSurfaceBase)
    assert not hasattr(wp, "IsoSurfaceMarchingCubes")  # as in Warp: wp.geometry's names only
    with pytest.warns(DeprecationWarning) as record:
        iso = MC(8, 8, 8, domain_bounds_lower_corner=(-1.0, -2.0, -3.0), domain_bounds_upper_corner=(1.0, 2.0, 3.0))
    assert [str(w.message).split(" is deprecated")[0] for w in record] == [
        "IsoSurfaceMarchingCubes() argument `domain_bounds_lower_corner`",
        "IsoSurfaceMarchingCubes() argument `domain_bounds_upper_corner`"]
    assert all(w.filename == __file__ for w in record)  # reported at the caller's line
    assert wp.config.verbose_warnings is False  # Warp's switch for that; Python's warnings always name it
    assert iso.lower == (-1.0, -2.0, -3.0) and iso.upper == (1.0, 2.0, 3.0)
    with pytest.warns(DeprecationWarning, match=r"IsoSurfaceMarchingCubes\.domain_bounds_upper_corner is deprecated"):
        assert iso.domain_bounds_upper_corner == (1.0, 2.0, 3.0)
    field = wp.array(sphere_field((12, 12, 12), (6, 6, 6), 3.0))
    verts, faces = MC.extract(field)
    with pytest.warns(DeprecationWarning, match=r"extract_surface_marching_cubes\(\) is deprecated"):
        old_verts, old_faces = MC.extract_surface_marching_cubes(field, 0.0)
    assert np.array_equal(verts.numpy(), old_verts.numpy()) and np.array_equal(faces.numpy(), old_faces.numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MC(8, 8, 8, lower=(0.0, 0.0, 0.0))  # the new names do not warn


# -- surface nets -------------------------------------------------------------------------------------------
def surface_nets_one_sheet(field, threshold, lower, delta):
    """Brute-force surface nets where every cell holds at most one sheet: a vertex per cell with a crossed
    interior edge (four cells around it) at the mean of its edges' crossings, in cell order."""
    points = crossing_points(field, threshold, clamp=False)
    shape = field.shape
    verts, used = [], []
    for cell in np.ndindex(*(n - 1 for n in shape)):
        mine = []
        interior = False
        for a, b in EDGES:
            node = tuple(cell[d] + min(CORNERS[a][d], CORNERS[b][d]) for d in range(3))
            axis = next(d for d in range(3) if CORNERS[a][d] != CORNERS[b][d])
            if node + (axis,) in points:
                mine.append(points[node + (axis,)])
                interior |= all(0 < node[d] < shape[d] - 1 for d in range(3) if d != axis)
        if mine and interior:
            verts.append(np.array(lower) + np.mean(mine, axis=0) * delta)
            used.append(cell)
    return np.array(verts), used


def test_surface_nets_vertices_by_brute_force_on_a_sphere():
    shape = (20, 16, 24)
    field = sphere_field(shape, (10, 8, 12), 6.5)
    lower, upper = (-1.0, 0.0, 2.0), (9.0, 30.0, 25.0)
    delta = (np.array(upper) - lower) / (np.array(shape) - 1)
    expected, _ = surface_nets_one_sheet(field, 0.0, lower, delta)
    iso = SN(*shape, lower=lower, upper=upper)
    iso.surface(wp.array(field), 0.0)
    np.testing.assert_allclose(iso.verts.numpy(), expected, rtol=1e-5, atol=1e-4)


def test_surface_nets_sphere_is_a_closed_outward_quad_mesh():
    n, radius = 40, 12.0
    field = wp.array(sphere_field((n, n, n), (n / 2, n / 2, n / 2), radius))
    verts, quads = SN.extract(field, threshold=0.0, topology="quad")
    verts, quads = verts.numpy(), quads.numpy().reshape(-1, 4)
    counts = edge_counts(quads)
    assert set(counts.values()) == {2}
    assert len(verts) - len(counts) + len(quads) == 2
    tri_verts, tris = SN.extract(field, threshold=0.0)
    assert np.array_equal(tri_verts.numpy(), verts)
    tris = tris.numpy().reshape(-1, 6)
    assert np.array_equal(tris[:, :3], quads[:, [0, 1, 2]]) and np.array_equal(tris[:, 3:], quads[:, [0, 2, 3]])
    volume = signed_volume(verts.astype(np.float64), tris.reshape(-1, 3))
    assert volume > 0 and abs(volume - 4 / 3 * np.pi * radius**3) / (4 / 3 * np.pi * radius**3) < 0.03


def test_surface_nets_two_sheets_in_one_cell():
    # nodes (1,1,1) and (2,2,2) below: the cell between them has two sheets, so two vertices; 15 mixed cells
    field = np.ones((4, 4, 4), np.float32)
    field[1, 1, 1] = field[2, 2, 2] = -1.0
    verts, quads = SN.extract(wp.array(field), topology="quad")
    assert verts.shape == (16,)
    quads = quads.numpy().reshape(-1, 4)
    assert set(edge_counts(quads).values()) == {2}
    parent = list(range(16))

    def root(a):
        while parent[a] != a:
            a = parent[a]
        return a

    for q in quads:
        for v in q[1:]:
            parent[root(int(v))] = root(int(q[0]))
    assert len({root(v) for v in range(16)}) == 2  # two closed surfaces


def test_surface_nets_boundary_sheets_are_dropped():
    one = np.ones((2, 2, 2), np.float32)
    one[0, 0, 0] = -1.0  # every crossed edge on the boundary: nothing to stitch
    for topology in ("triangle", "quad"):
        verts, faces = SN.extract(wp.array(one), topology=topology)
        assert verts.shape == (0,) and faces.shape == (0,)
    field = np.ones((3, 3, 2), np.float32)
    field[0, 0, 0] = field[1, 1, 1] = -1.0  # cell (0,0,0): a boundary sheet (dropped) and one around (1,1,1)
    verts, faces = SN.extract(wp.array(field), topology="quad")
    assert faces.shape == (4,) and verts.shape == (4,)
    # the one quad is around the interior edge (1,1,0)-(1,1,1), rising towards (1,1,0): winds around -z
    v = verts.numpy()[faces.numpy()]
    normal = np.cross(v[1] - v[0], v[2] - v[0]) + np.cross(v[2] - v[0], v[3] - v[0])
    assert normal[2] < 0 and abs(normal[0]) < 1e-6 and abs(normal[1]) < 1e-6
    # the quad starts at cell (1,1,0), whose sheet is around its corner node (1,1,1): midpoints of its 3 edges
    assert np.allclose(v[0], np.mean([[1.5, 1, 1], [1, 1.5, 1], [1, 1, 0.5]], axis=0), atol=1e-6)


def test_surface_nets_gradient_matches_finite_differences_of_numpy():
    field = sphere_field((7, 7, 7), (3.1, 2.9, 3.2), 2.3)
    field[np.abs(field) < 0.05] = 0.3
    lower, delta = (0.0, 0.0, 0.0), np.ones(3)
    grad, weights = tape_gradient(SN.extract, field, threshold=0.0)

    def loss(f):
        verts, _ = surface_nets_one_sheet(f, 0.0, lower, delta)
        return float(np.sum(verts * weights))

    eps = 1e-4
    f64 = field.astype(np.float64)
    fd = np.zeros(field.shape)
    for node in np.ndindex(*field.shape):
        plus, minus = f64.copy(), f64.copy()
        plus[node] += eps
        minus[node] -= eps
        fd[node] = (loss(plus) - loss(minus)) / (2 * eps)
    np.testing.assert_allclose(grad, fd, rtol=1e-3, atol=1e-3)
    assert np.abs(fd).max() > 0.1


def test_surface_nets_random_fields_stay_manifold():
    rng = np.random.default_rng(7)
    for _ in range(3):
        field = np.sign(rng.uniform(-1, 1, size=(10, 10, 10))).astype(np.float32)
        verts, quads = SN.extract(wp.array(field), topology="quad")
        quads = quads.numpy().reshape(-1, 4)
        assert max(edge_counts(quads).values()) <= 2
        assert np.array_equal(np.unique(quads), np.arange(verts.shape[0]))


def test_surface_nets_errors_are_warps():
    with pytest.raises(ValueError, match=r"^Expected 'topology' to be one of \('triangle', 'quad'\), but got "
                                         r"'triangles'\.$"):
        SN.extract(wp.zeros((4, 4, 4), dtype=wp.float32), topology="triangles")
    with pytest.raises(ValueError, match=r"but got 'quads'\.$"):
        SN(8, 8, 8, topology="quads")
    with pytest.raises(ValueError, match="at least 2 nodes on each axis"):
        SN.extract(wp.zeros((8, 1, 8), dtype=wp.float32))
    with pytest.raises(TypeError, match="Expected a dtype of wp.float32"):
        SN.extract(wp.zeros((8, 8, 8), dtype=wp.float64))
    with pytest.raises(ValueError, match=r"does not match context grid dimensions \(8, 8, 8\)"):
        SN(8, 8, 8).surface(wp.zeros((4, 4, 4), dtype=wp.float32), 0.0)
