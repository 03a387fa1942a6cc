"""wp.HashGrid of float16 / float32 / float64 points, grouped grids (build(..., groups=...) and
wp.hash_grid_query(id, point, max_dist, group)) and 2-D point arrays, against brute-force numpy references of
Warp 1.19's semantics (native/hashgrid.h): cells from floor(p * inv) in the grid's precision (each operation
rounded to it), candidates cell by cell (x fastest, then y, then z), within a cell by group id as uint32, then
index; a grouped query visits only its group's points, and only on a grid built with groups.
(The same candidate sequences were checked equal to warp-lang 1.19's for all three precisions and grouped
queries with INT_MIN / INT_MAX group ids.)"""

from typing import Any

import numpy as np
import pytest

import mlwarp as wp

PRECISIONS = [(wp.float16, wp.vec3h, np.float16), (wp.float32, wp.vec3, np.float32),
              (wp.float64, wp.vec3d, np.float64)]
INT32_MIN, INT32_MAX = np.iinfo(np.int32).min, np.iinfo(np.int32).max


def reference_candidates(points, q, r, radius, dims, npdt, groups=None, group=None):
    """One query's candidates by walking its cells over every point, in the grid's precision `npdt`."""
    inv = npdt(1.0) / npdt(radius)
    p = points.astype(npdt)
    c = np.floor((p * inv).astype(np.float64)).astype(np.int64) % dims
    cell = c[:, 2] * dims[0] * dims[1] + c[:, 1] * dims[0] + c[:, 0]
    q, r = q.astype(npdt), npdt(r)
    lo = np.floor(((q - r) * inv).astype(np.float64)).astype(np.int64)
    hi = np.floor(((q + r) * inv).astype(np.float64)).astype(np.int64)
    hi = np.where(hi - lo >= dims, lo + dims - 1, hi)
    out = []
    for z in range(lo[2], hi[2] + 1):
        for y in range(lo[1], hi[1] + 1):
            for x in range(lo[0], hi[0] + 1):
                k = (z % dims[2]) * dims[0] * dims[1] + (y % dims[1]) * dims[0] + (x % dims[0])
                members = np.flatnonzero(cell == k)
                if groups is not None:  # a grouped build: by uint32 group id, then index
                    members = members[np.argsort(groups[members].view(np.uint32), kind="stable")]
                    if group is not None:
                        members = members[groups[members] == group]
                out += list(members)
    return out


K = 96


@wp.kernel
def candidates(grid: wp.uint64, qs: wp.array(dtype=Any), r: Any, out: wp.array2d(dtype=int),
               counts: wp.array(dtype=int)):
    tid = wp.tid()
    n = int(0)
    for index in wp.hash_grid_query(grid, qs[tid], r):
        if n < out.shape[1]:
            out[tid, n] = index
        n += 1
    counts[tid] = n


@wp.kernel
def group_candidates(grid: wp.uint64, qs: wp.array(dtype=wp.vec3), r: float, gs: wp.array(dtype=int),
                     out: wp.array2d(dtype=int), counts: wp.array(dtype=int)):
    tid = wp.tid()
    query = wp.hash_grid_query(grid, qs[tid], r, gs[tid])
    index = int(0)
    n = int(0)
    while wp.hash_grid_query_next(query, index):
        if n < out.shape[1]:
            out[tid, n] = index
        n += 1
    counts[tid] = n


def _run(kernel, grid, qs, r, *extra):
    out = wp.full((len(qs), K), -1, dtype=int)
    counts = wp.zeros(len(qs), dtype=int)
    wp.launch(kernel, dim=len(qs), inputs=[grid.id, qs, r, *extra, out, counts])
    return out.numpy(), counts.numpy()


def _check(out, counts, refs):
    for t, ref in enumerate(refs):
        assert counts[t] == len(ref), t
        np.testing.assert_array_equal(out[t, :min(len(ref), K)], ref[:K])


def _points(n, seed, scale=6.0):
    return np.random.default_rng(seed).random((n, 3)) * scale - scale / 2


@pytest.mark.parametrize("dtype,vec,npdt", PRECISIONS, ids=["float16", "float32", "float64"])
def test_candidates_of_each_precision(dtype, vec, npdt):
    pts, qs = _points(300, 1), _points(30, 2, scale=8.0)  # (queries past the grid's first period: wrapping cells)
    dims = np.array([7, 5, 6])
    grid = wp.HashGrid(*dims, dtype=dtype)
    assert grid.dtype is dtype
    grid.build(wp.array(pts.astype(npdt), dtype=vec), 0.37)
    out, counts = _run(candidates, grid, wp.array(qs.astype(npdt), dtype=vec), dtype(0.45))
    _check(out, counts, [reference_candidates(pts.astype(npdt), q, 0.45, 0.37, dims, npdt) for q in qs])


@pytest.mark.parametrize("dtype,vec,npdt", PRECISIONS, ids=["float16", "float32", "float64"])
def test_neighbour_counts_of_each_precision_through_a_typed_func(dtype, vec, npdt):
    """Warp's test_hash_grid pattern: a @wp.func taking wp.HashGridQuery[dtype], the closest point within r."""

    @wp.func
    def closest(query: wp.HashGridQuery[dtype], center: vec, points: wp.array(dtype=vec), r: dtype):
        best = int(-1)
        best_sq = r * r
        index = int(0)
        while wp.hash_grid_query_next(query, index):
            d = points[index] - center
            if wp.dot(d, d) <= best_sq:
                best = index
                best_sq = wp.dot(d, d)
        return best

    @wp.kernel
    def k(grid: wp.uint64, points: wp.array(dtype=vec), qs: wp.array(dtype=vec), r: dtype,
          best: wp.array(dtype=int)):
        tid = wp.tid()
        best[tid] = closest(wp.hash_grid_query(grid, qs[tid], r), qs[tid], points, r)

    pts, qs = _points(200, 3, scale=3.0), _points(25, 4, scale=3.0)
    grid = wp.HashGrid(8, 8, 8, dtype=dtype)
    points = wp.array(pts.astype(npdt), dtype=vec)
    grid.build(points, 0.5)
    best = wp.zeros(25, dtype=int)
    wp.launch(k, dim=25, inputs=[grid.id, points, wp.array(qs.astype(npdt), dtype=vec), dtype(0.5), best])
    dims = np.array([8, 8, 8])
    for t, q in enumerate(qs.astype(npdt)):  # the candidates' last one at the least squared distance (<=)
        ref, best_sq = -1, npdt(0.5) * npdt(0.5)
        for i in reference_candidates(pts.astype(npdt), q, 0.5, 0.5, dims, npdt):
            d = pts.astype(npdt)[i] - q
            d2 = npdt(npdt(npdt(d[0] * d[0]) + npdt(d[1] * d[1])) + npdt(d[2] * d[2]))
            if d2 <= best_sq:
                ref, best_sq = i, d2
        assert best.numpy()[t] == ref, t


def test_grouped_queries():
    pts, qs = _points(300, 5), _points(30, 6, scale=8.0)
    rng = np.random.default_rng(7)
    groups = rng.integers(-2, 3, 300).astype(np.int32)
    groups[:5], groups[5:10] = INT32_MIN, INT32_MAX  # every int32 is a group (none stands for "all")
    qg = rng.integers(-2, 3, 30).astype(np.int32)
    qg[0], qg[1], qg[2] = INT32_MIN, INT32_MAX, 99  # (99: no such group, no candidates)
    dims = np.array([7, 5, 6])
    grid = wp.HashGrid(*dims)
    grid.build(wp.array(pts.astype(np.float32), dtype=wp.vec3), 0.37, groups=wp.array(groups, dtype=int))
    qarr = wp.array(qs.astype(np.float32), dtype=wp.vec3)
    out, counts = _run(group_candidates, grid, qarr, 0.45, wp.array(qg, dtype=int))
    _check(out, counts, [reference_candidates(pts, q, 0.45, 0.37, dims, np.float32, groups, g) for q, g in zip(qs, qg)])
    assert counts[2] == 0 and counts[0] > 0 and counts[1] > 0
    # a query without a group visits every group's points (each cell by uint32 group id, then index)
    out, counts = _run(candidates, grid, qarr, wp.float32(0.45))
    _check(out, counts, [reference_candidates(pts, q, 0.45, 0.37, dims, np.float32, groups) for q in qs])
    # rebuilt without groups: a group argument no longer narrows (Warp's has_groups)
    grid.build(wp.array(pts.astype(np.float32), dtype=wp.vec3), 0.37)
    assert grid.groups is None
    out, counts = _run(group_candidates, grid, qarr, 0.45, wp.array(qg, dtype=int))
    _check(out, counts, [reference_candidates(pts, q, 0.45, 0.37, dims, np.float32) for q in qs])


def test_grouped_neighbour_counts_after_groups_change():
    @wp.kernel
    def count(grid: wp.uint64, r: float, points: wp.array(dtype=wp.vec3), groups: wp.array(dtype=int),
              counts: wp.array(dtype=int)):
        tid = wp.tid()
        p = points[tid]
        n = int(0)
        for index in wp.hash_grid_query(grid, p, r, groups[tid]):
            if wp.length(p - points[index]) <= r:
                n += 1
        counts[tid] = n

    pts = _points(400, 8, scale=3.0).astype(np.float32)
    points = wp.array(pts, dtype=wp.vec3)
    grid = wp.HashGrid(16, 16, 16)
    close = np.linalg.norm(pts[:, None] - pts[None], axis=2) <= np.float32(0.3)
    for seed in (0, 1):  # the groups array edited in place, then the grid rebuilt
        g = np.random.default_rng(seed).integers(0, 4, 400).astype(np.int32)
        groups = wp.array(g, dtype=int) if seed == 0 else groups
        if seed:
            groups.assign(g)
        grid.build(points, 0.3, groups=groups)
        counts = wp.zeros(400, dtype=int)
        wp.launch(count, dim=400, inputs=[grid.id, 0.3, points, groups, counts])
        np.testing.assert_array_equal(counts.numpy(), (close & (g[:, None] == g[None])).sum(axis=1))


def test_two_dimensional_points_and_groups_are_read_flattened():
    pts = _points(120, 9)
    dims = np.array([6, 6, 6])
    groups = np.random.default_rng(10).integers(0, 3, 120).astype(np.int32)
    grid = wp.HashGrid(*dims)
    grid.build(wp.array(pts.astype(np.float32).reshape(30, 4, 3), dtype=wp.vec3), 0.5,
               groups=wp.array(groups.reshape(30, 4), dtype=int))
    qs = _points(12, 11)
    out, counts = _run(group_candidates, grid, wp.array(qs.astype(np.float32), dtype=wp.vec3), 0.5,
                       wp.array(np.ones(12, np.int32), dtype=int))
    _check(out, counts, [reference_candidates(pts, q, 0.5, 0.5, dims, np.float32, groups, 1) for q in qs])
    # a strided 2-D view (not contiguous): its elements in row-major order
    big = wp.array(np.concatenate([pts, pts]).astype(np.float32).reshape(20, 12, 3), dtype=wp.vec3)
    grid.build(big[:, ::2], 0.5)
    order = pts.astype(np.float32).reshape(-1, 3)
    view = np.concatenate([order, order]).reshape(20, 12, 3)[:, ::2].reshape(-1, 3)
    out, counts = _run(candidates, grid, wp.array(qs.astype(np.float32), dtype=wp.vec3), wp.float32(0.5))
    _check(out, counts, [reference_candidates(view, q, 0.5, 0.5, dims, np.float32) for q in qs])


def test_reserve_with_groups_then_build():
    grid = wp.HashGrid(4, 4, 4)
    grid.reserve(50, with_groups=True)
    assert grid.reserved
    pts = _points(50, 12, scale=2.0)
    groups = (np.arange(50) % 2).astype(np.int32)
    grid.build(wp.array(pts.astype(np.float32), dtype=wp.vec3), 0.5, groups=wp.array(groups, dtype=int))
    qs = _points(5, 13, scale=2.0)
    out, counts = _run(group_candidates, grid, wp.array(qs.astype(np.float32), dtype=wp.vec3), 0.6,
                       wp.zeros(5, dtype=int))
    _check(out, counts, [reference_candidates(pts, q, 0.6, 0.5, np.array([4, 4, 4]), np.float32, groups, 0)
                         for q in qs])


def test_query_state_given_as_a_call():
    """hash_grid_query_next(hash_grid_query(...), index): the query a temporary, as Warp's reference to it."""

    @wp.kernel
    def first(grid: wp.uint64, qs: wp.array(dtype=wp.vec3), out: wp.array(dtype=int)):
        tid = wp.tid()
        index = int(-1)
        wp.hash_grid_query_next(wp.hash_grid_query(grid, qs[tid], 0.4), index)
        out[tid] = index

    pts, qs = _points(100, 14, scale=2.0), _points(8, 15, scale=2.0)
    grid = wp.HashGrid(5, 5, 5)
    grid.build(wp.array(pts.astype(np.float32), dtype=wp.vec3), 0.4)
    out = wp.zeros(8, dtype=int)
    wp.launch(first, dim=8, inputs=[grid.id, wp.array(qs.astype(np.float32), dtype=wp.vec3), out])
    refs = [reference_candidates(pts, q, 0.4, 0.4, np.array([5, 5, 5]), np.float32) for q in qs]
    np.testing.assert_array_equal(out.numpy(), [r[0] if r else -1 for r in refs])


def test_bad_precision_and_group_inputs():
    with pytest.raises(TypeError, match="^Unsupported dtype <class 'mlwarp.*int32'> for HashGrid. Supported types: "
                                        "float16, float32, float64$"):
        wp.HashGrid(2, 2, 2, dtype=wp.int32)
    with pytest.raises(TypeError, match="^Unsupported dtype .* for HashGridQuery. Supported types: float16, float32, "
                                        "float64$"):
        wp.HashGridQuery[wp.int32]
    assert wp.HashGridQuery[float] is wp.HashGridQuery
    grid = wp.HashGrid(2, 2, 2, dtype=wp.float64)
    pts = wp.zeros(4, dtype=wp.vec3)
    with pytest.raises(TypeError, match="^Hash grid points should have type vec3d, got "):
        grid.build(pts, 1.0)
    grid = wp.HashGrid(2, 2, 2)
    with pytest.raises(RuntimeError, match="^groups should be an array of type wp.int32$"):
        grid.build(pts, 1.0, groups=wp.zeros(4, dtype=wp.int64))
    with pytest.raises(RuntimeError, match="^groups must have the same length as points$"):
        grid.build(pts, 1.0, groups=wp.zeros(3, dtype=int))


def test_bad_precision_calls_in_kernels():
    @wp.kernel
    def int_point(grid: wp.uint64):
        wp.hash_grid_query(grid, wp.vec3i(0, 0, 0), 1.0)

    with pytest.raises(wp.CompileError, match=r"hash_grid_query\(\): point must be a vec3 of float16, float32 or "
                                              r"float64 \(vec3h, vec3f, vec3d\), got vec3i"):
        wp.launch(int_point, dim=1, inputs=[wp.HashGrid(2, 2, 2).id])

    @wp.kernel
    def mixed(grid: wp.uint64, r: wp.float64):
        wp.hash_grid_query(grid, wp.vec3(0.0), r)

    with pytest.raises(wp.CompileError, match=r"hash_grid_query\(\): max_dist must be a float32, got float64"):
        wp.launch(mixed, dim=1, inputs=[wp.HashGrid(2, 2, 2).id, 1.0])

    @wp.kernel
    def float_group(grid: wp.uint64):
        wp.hash_grid_query(grid, wp.vec3(0.0), 1.0, 0.5)

    with pytest.raises(wp.CompileError, match=r"hash_grid_query\(\): group must be an int32, got float32"):
        wp.launch(float_group, dim=1, inputs=[wp.HashGrid(2, 2, 2).id])

    @wp.kernel
    def wrong_func_type(grid: wp.uint64, out: wp.array(dtype=int)):
        q = wp.hash_grid_query(grid, wp.vec3d(0.0), wp.float64(1.0))
        out[0] = int(takes_float32_query(q))

    with pytest.raises(wp.CompileTypeError, match=r"Couldn't find function overload for 'takes_float32_query' that "
                                                  r"matched inputs with types: \[HashGridQueryD\]"):
        wp.launch(wrong_func_type, dim=1, inputs=[wp.HashGrid(2, 2, 2).id, wp.zeros(1, dtype=int)])


@wp.func
def takes_float32_query(q: wp.HashGridQuery) -> bool:
    index = int(0)
    return wp.hash_grid_query_next(q, index)
