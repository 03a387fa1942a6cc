"""wp.intersect_tri_tri (python/mlwarp/library/intersect.py): Moeller's triangle-triangle test, float32 (vec3) and float64
(vec3d), in kernels and in Python scope.

Random non-coplanar pairs are checked against an independent numpy reference, the separating-axis theorem on
the 11 candidate axes (the two normals and the nine edge-edge cross products), in float64, only where the
verdict is clear by a margin (a separating gap, or an overlap on every axis, of more than 1e-3 after
normalising the axis): touching and grazing pairs are left to the second set. Coplanar, touching,
near-coplanar (inside and outside Warp's 1e-6 snap of plane distances) and degenerate pairs are checked
against values recorded from warp-lang 1.19.0 (its C++ intersect_tri_tri on the CPU, both precisions and both
argument orders); these pin Warp's own conventions (touching counts as intersecting, except where Moeller's
coplanar edge tests miss collinear overlaps; a point triangle is tested one way only), which no geometric
reference decides."""

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def _tri_tri(p: wp.array2d(dtype=wp.vec3), out: wp.array2d(dtype=int)):
    i = wp.tid()
    out[i, 0] = wp.intersect_tri_tri(p[i, 0], p[i, 1], p[i, 2], p[i, 3], p[i, 4], p[i, 5])
    out[i, 1] = wp.intersect_tri_tri(wp.vec3d(p[i, 0]), wp.vec3d(p[i, 1]), wp.vec3d(p[i, 2]), wp.vec3d(p[i, 3]),
                                     wp.vec3d(p[i, 4]), wp.vec3d(p[i, 5]))
    out[i, 2] = wp.intersect_tri_tri(p[i, 3], p[i, 4], p[i, 5], p[i, 0], p[i, 1], p[i, 2])
    out[i, 3] = wp.intersect_tri_tri(wp.vec3d(p[i, 3]), wp.vec3d(p[i, 4]), wp.vec3d(p[i, 5]), wp.vec3d(p[i, 0]),
                                     wp.vec3d(p[i, 1]), wp.vec3d(p[i, 2]))


@wp.kernel
def _tri_tri_f64(p: wp.array2d(dtype=wp.vec3d), out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = wp.intersect_tri_tri(p[i, 0], p[i, 1], p[i, 2], p[i, 3], p[i, 4], p[i, 5])


def _kernel(pts):
    """(n, 4): float32, float64, and both again with the triangles swapped."""
    out = wp.zeros((len(pts), 4), dtype=int)
    wp.launch(_tri_tri, len(pts), [wp.array(np.asarray(pts, dtype=np.float32), dtype=wp.vec3), out])
    return out.numpy()


def _sat_gap(pts):
    """The largest separating gap over the 11 axes of two non-coplanar triangles (float64, axes normalised;
    axes of near-parallel edges left out): > 0 separated, < 0 overlapping on every axis."""
    a, b = pts[:, :3], pts[:, 3:]
    ea = np.roll(a, -1, axis=1) - a
    eb = np.roll(b, -1, axis=1) - b
    axes = [np.cross(ea[:, 0], ea[:, 1]), np.cross(eb[:, 0], eb[:, 1])]
    axes += [np.cross(ea[:, i], eb[:, j]) for i in range(3) for j in range(3)]
    gap = np.full(len(pts), -np.inf)
    for ax in axes:
        norm = np.linalg.norm(ax, axis=1)
        ok = norm > 1.0e-6
        ax = ax / np.where(ok, norm, 1.0)[:, None]
        pa = np.einsum("nij,nj->ni", a, ax)
        pb = np.einsum("nij,nj->ni", b, ax)
        g = np.maximum(pb.min(1) - pa.max(1), pa.min(1) - pb.max(1))
        gap = np.where(ok, np.maximum(gap, g), gap)
    return gap


def _random_pairs(seed, n):
    rng = np.random.default_rng(seed)
    general = rng.uniform(-1.0, 1.0, (n, 6, 3))
    a = rng.uniform(-1.0, 1.0, (n, 3, 3))
    near = np.concatenate([a, a + rng.normal(0.0, 0.3, (n, 3, 3))], axis=1)  # mostly intersecting
    return np.concatenate([general, near]).astype(np.float32)


def test_random_pairs_against_separating_axes():
    pts = _random_pairs(7, 1500)
    gap = _sat_gap(pts.astype(np.float64))
    clear = np.abs(gap) > 1.0e-3
    assert clear.sum() > 2800
    expected = (gap < 0.0).astype(np.int64)[clear]
    assert 500 < expected.sum() < len(expected) - 500  # both verdicts well represented
    got = _kernel(pts)[clear]
    for col in range(4):
        np.testing.assert_array_equal(got[:, col], expected)


def test_float64_arguments_from_float64_arrays():
    rng = np.random.default_rng(3)
    pts = rng.uniform(-1.0, 1.0, (2000, 6, 3))
    pts[1000:, 3:] = pts[1000:, :3] + rng.normal(0.0, 0.2, (1000, 3, 3))
    gap = _sat_gap(pts)
    clear = np.abs(gap) > 1.0e-6  # float64 throughout: a much smaller margin
    out = wp.zeros(len(pts), dtype=int)
    wp.launch(_tri_tri_f64, len(pts), [wp.array(pts, dtype=wp.vec3d), out])
    np.testing.assert_array_equal(out.numpy()[clear], (gap < 0.0)[clear])
    assert clear.sum() > 1990


_CASES = [
 # coplanar (z = 0)
 [[0,0,0],[1,0,0],[0,1,0],[0.2,0.2,0],[1.2,0.2,0],[0.2,1.2,0]],   # overlapping
 [[0,0,0],[1,0,0],[0,1,0],[2,2,0],[3,2,0],[2,3,0]],               # disjoint
 [[0,0,0],[4,0,0],[0,4,0],[1,1,0],[2,1,0],[1,2,0]],               # second inside first
 [[1,1,0],[2,1,0],[1,2,0],[0,0,0],[4,0,0],[0,4,0]],               # first inside second
 [[0,0,0],[1,0,0],[0,1,0],[1,0,0],[2,0,0],[1,1,0]],               # shared vertex
 [[0,0,0],[1,0,0],[0,1,0],[1,0,0],[0,1,0],[1,1,0]],               # shared edge, opposite sides
 [[0,0,0],[2,0,0],[0,2,0],[0.5,0,0],[1.5,0,0],[1,-1,0]],          # collinear overlapping edges, outside
 [[0,0,0],[1,0,0],[0,1,0],[0,0,0],[1,0,0],[0,1,0]],               # identical
 [[0,0,0],[1,0,0],[0,1,0],[0.5,0.5,0],[1,1,0],[2,0.5,0]],         # vertex on the other's edge
 # coplanar in x = 0 and in a tilted plane
 [[0,0,0],[0,1,0],[0,0,1],[0,0.2,0.2],[0,1.2,0.2],[0,0.2,1.2]],
 [[0,0,0],[1,1,0],[0,0,1],[0.5,0.5,0.25],[2,2,0.25],[2,2,2]],
 # 3D touching
 [[0,0,0],[1,0,0],[0,1,0],[0.2,0.2,0],[0.3,0.2,1],[0.2,0.3,1]],   # vertex on face
 [[0,0,0],[1,0,0],[0,1,0],[0.2,0.2,0],[0.6,0.2,0],[0.3,0.3,1]],   # edge in face
 [[0,0,0],[1,0,0],[0,1,0],[1,0,0],[1,0,1],[2,0,1]],               # shared vertex, out of plane
 [[0,0,0],[1,0,0],[0,1,0],[1,0,0],[0,1,0],[0,0,1]],               # shared edge, out of plane
 [[0,0,0],[1,0,0],[0,1,0],[1,1,0],[1,1,1],[2,1,1]],               # vertex touching the plane outside
 # near-coplanar: within the 1e-6 snap and beyond it
 [[0,0,0],[1,0,0],[0,1,0],[0.2,0.2,3e-7],[1.2,0.2,3e-7],[0.2,1.2,3e-7]],
 [[0,0,0],[1,0,0],[0,1,0],[0.2,0.2,3e-5],[1.2,0.2,3e-5],[0.2,1.2,3e-5]],
 [[0,0,0],[1,0,0],[0,1,0],[0.2,0.2,-3e-7],[0.4,0.2,5e-7],[0.2,0.4,1]],
 # small triangles: all distances below the snap, decided as coplanar
 [[0,0,0],[1e-3,0,0],[0,1e-3,0],[2e-4,2e-4,5e-4],[8e-4,2e-4,-5e-4],[2e-4,8e-4,1e-4]],
 [[0,0,0],[1e-3,0,0],[0,1e-3,0],[2e-3,2e-3,5e-4],[3e-3,2e-3,-5e-4],[2e-3,3e-3,1e-4]],
 # degenerate: segment and point triangles
 [[0,0,0],[1,0,0],[0,1,0],[0.2,0.2,-1],[0.2,0.2,1],[0.2,0.2,0.5]],  # segment through the face
 [[0,0,0],[1,0,0],[0,1,0],[2,2,-1],[2,2,1],[2,2,0.5]],              # segment beside it
 [[0,0,0],[1,0,0],[0,1,0],[0.2,0.2,0],[0.2,0.2,0],[0.2,0.2,0]],     # point in the face
 [[0,0,0],[1,0,0],[2,0,0],[0.5,-1,-1],[0.5,1,-1],[0.5,0,1]],        # collinear first triangle
 [[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0]],                 # all points equal
 # large coordinates (distances far above the snap)
 [[1e3,0,0],[1e3+1,0,0],[1e3,1,0],[1e3+0.2,0.2,-1],[1e3+0.2,0.2,1],[1e3+0.5,0.3,1]],
]

# warp-lang 1.19.0 on the CPU, for _CASES: float32, float64, float32 swapped, float64 swapped
_WARP_1_19 = [[1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1]]


def test_coplanar_touching_degenerate_cases_as_warp():
    np.testing.assert_array_equal(_kernel(np.array(_CASES)), np.array(_WARP_1_19))


def test_python_scope_matches_kernels():
    cases = np.array(_CASES, dtype=np.float32)
    pts = np.concatenate([cases, _random_pairs(11, 60)])
    got = _kernel(pts)
    for i, p in enumerate(pts):
        v = [wp.vec3(*q) for q in p]
        d = [wp.vec3d(*(float(x) for x in q)) for q in p]
        py = [wp.intersect_tri_tri(*v), wp.intersect_tri_tri(*d), wp.intersect_tri_tri(*v[3:], *v[:3]),
              wp.intersect_tri_tri(*d[3:], *d[:3])]
        assert py == got[i].tolist(), i
        assert all(type(r) is int for r in py)


def test_overloads_refuse_other_argument_types():
    with pytest.raises(RuntimeError, match="no overload found"):
        wp.intersect_tri_tri(wp.vec3(0.0), wp.vec3(0.0), wp.vec3(0.0), wp.vec3d(0.0), wp.vec3d(0.0), wp.vec3d(0.0))
