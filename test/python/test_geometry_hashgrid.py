"""wp.HashGrid and its kernel queries against brute-force numpy references (Warp 1.19's semantics: a query
yields every point in the cells its box overlaps, x fastest, then y, then z, build order within a cell)."""

import numpy as np
import pytest

import mlwarp as wp


def cells_of(p, inv, dims):
    c = np.floor((p * np.float32(inv)).astype(np.float32)).astype(np.int64)
    c = np.mod(c, dims)
    return c[:, 2] * dims[0] * dims[1] + c[:, 1] * dims[0] + c[:, 0]


def reference_candidates(points, q, r, radius, dims):
    """The candidate sequence of one query, by walking its cell range over every point."""
    inv = np.float32(1.0) / np.float32(radius)
    cell = cells_of(points, inv, dims)
    lo = np.floor(((q - np.float32(r)) * inv).astype(np.float32)).astype(np.int64)
    hi = np.floor(((q + np.float32(r)) * inv).astype(np.float32)).astype(np.int64)
    hi = np.where(hi - lo >= dims, lo + dims - 1, hi)
    out = []
    for z in range(lo[2], hi[2] + 1):
        for y in range(lo[1], hi[1] + 1):
            for x in range(lo[0], hi[0] + 1):
                c = (z % dims[2]) * dims[0] * dims[1] + (y % dims[1]) * dims[0] + (x % dims[0])
                out += list(np.flatnonzero(cell == c))
    return out


@wp.kernel
def candidates(grid: wp.uint64, queries: wp.array(dtype=wp.vec3), r: float, out: wp.array2d(dtype=int),
               counts: wp.array(dtype=int)):
    tid = wp.tid()
    query = wp.hash_grid_query(grid, queries[tid], r)
    index = int(0)
    n = int(0)
    while wp.hash_grid_query_next(query, index):
        if n < out.shape[1]:
            out[tid, n] = index
        n += 1
    counts[tid] = n


@wp.kernel
def neighbours(grid: wp.uint64, points: wp.array(dtype=wp.vec3), r: float, counts: wp.array(dtype=int),
               sums: wp.array(dtype=int)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    p = points[i]
    query = wp.hash_grid_query(grid, p, r)
    index = int(0)
    n = int(0)
    s = int(0)
    while wp.hash_grid_query_next(query, index):
        if wp.length(points[index] - p) <= r:
            n += 1
            s += index
    counts[i] = n
    sums[i] = s


def _points(n, seed=0, scale=4.0):
    rng = np.random.default_rng(seed)
    return (rng.random((n, 3)) * scale - scale / 2).astype(np.float32)


def test_neighbours_match_all_pairs_distances():
    pts = _points(500)
    r = 0.4
    grid = wp.HashGrid(16, 16, 16)
    points = wp.array(pts, dtype=wp.vec3)
    grid.build(points, r)
    counts = wp.zeros(500, dtype=int)
    sums = wp.zeros(500, dtype=int)
    wp.launch(neighbours, dim=500, inputs=[grid.id, points, r, counts, sums])
    d = np.linalg.norm(pts[:, None, :] - pts[None, :, :], axis=2)
    close = d <= np.float32(r)
    np.testing.assert_array_equal(counts.numpy(), close.sum(axis=1))
    np.testing.assert_array_equal(sums.numpy(), (close * np.arange(500)[None, :]).sum(axis=1))


@pytest.mark.parametrize("dims,radius,r", [((8, 8, 8), 0.5, 0.5), ((3, 5, 2), 0.3, 0.7), ((4, 4, 4), 1.0, 0.2)])
def test_candidates_in_warp_order(dims, radius, r):
    pts = _points(300, seed=1)
    qs = _points(40, seed=2, scale=5.0)
    grid = wp.HashGrid(*dims)
    grid.build(wp.array(pts, dtype=wp.vec3), radius)
    out = wp.full((40, 300), -1, dtype=int)
    counts = wp.zeros(40, dtype=int)
    wp.launch(candidates, dim=40, inputs=[grid.id, wp.array(qs, dtype=wp.vec3), r, out, counts])
    for k in range(40):
        ref = reference_candidates(pts, qs[k], r, radius, np.array(dims))
        assert counts.numpy()[k] == len(ref)
        np.testing.assert_array_equal(out.numpy()[k, :len(ref)], ref)


@pytest.mark.parametrize("r", [0.3, 0.5, 1.3, 3.0, 9.0])
def test_candidates_in_warp_order_inside_and_across_the_grid_edges(r):
    # points in the grid's box [0, 4)^3: queries whose x range is inside the grid walk whole rows of cells as
    # one range of the sorted ids, the others (x below 0 or past dim_x - 1: periodic wrap; r = 3, 9: more
    # cells than the grid has, capped at dim_x) cell by cell; (3, 2, 2) with r = 3: x_start 0, x_end capped to
    # dim_x - 1, a whole row. Both walks give Warp's sequence, empty cells included
    rng = np.random.default_rng(5)
    pts = (rng.random((400, 3)) * 4.0).astype(np.float32)
    pts[:40] = pts[40:80]  # (repeated points: several ids per cell, build order within it)
    edges = [[0.0, 0.0, 0.0], [3.99, 3.99, 3.99], [2.0, -0.2, 4.3], [3.0, 2.0, 2.0]]
    qs = np.concatenate([(rng.random((60, 3)) * 5.0 - 0.5), edges])
    qs = qs.astype(np.float32)
    dims = (8, 7, 6)
    grid = wp.HashGrid(*dims)
    grid.build(wp.array(pts, dtype=wp.vec3), 0.5)
    out = wp.full((len(qs), 400 * 8), -1, dtype=int)
    counts = wp.zeros(len(qs), dtype=int)
    wp.launch(candidates, dim=len(qs), inputs=[grid.id, wp.array(qs, dtype=wp.vec3), r, out, counts])
    for k in range(len(qs)):
        ref = reference_candidates(pts, qs[k], r, 0.5, np.array(dims))
        assert counts.numpy()[k] == len(ref)
        np.testing.assert_array_equal(out.numpy()[k, :len(ref)], ref)


def test_queries_of_other_points_than_the_grid_was_built_from():
    # the grid prefetches from the points it was built from; a kernel reading another array reads only that
    pts = _points(300, seed=6)
    grid = wp.HashGrid(16, 16, 16)
    built = wp.array(pts, dtype=wp.vec3)
    grid.build(built, 0.4)
    other = wp.array(pts + np.float32(0.01), dtype=wp.vec3)
    del built
    counts = wp.zeros(300, dtype=int)
    sums = wp.zeros(300, dtype=int)
    wp.launch(neighbours, dim=300, inputs=[grid.id, other, 0.4, counts, sums])
    q = pts + np.float32(0.01)
    ids = grid._point_ids[:300]
    want = np.zeros(300, int)
    for t in range(300):
        i = ids[t]
        cand = reference_candidates(pts, q[i], 0.4, 0.4, np.array([16, 16, 16]))
        want[i] = sum(np.linalg.norm(q[c] - q[i]) <= np.float32(0.4) for c in cand)
    np.testing.assert_array_equal(counts.numpy(), want)


def test_point_id_is_cell_order():
    pts = _points(200, seed=3)
    grid = wp.HashGrid(5, 6, 7)
    grid.build(wp.array(pts, dtype=wp.vec3), 0.25)

    @wp.kernel
    def ids(grid: wp.uint64, out: wp.array(dtype=int)):
        tid = wp.tid()
        out[tid] = wp.hash_grid_point_id(grid, tid)

    out = wp.zeros(200, dtype=int)
    wp.launch(ids, dim=200, inputs=[grid.id, out])
    cell = cells_of(pts, np.float32(1.0) / np.float32(0.25), np.array([5, 6, 7]))
    np.testing.assert_array_equal(out.numpy(), np.argsort(cell, kind="stable"))


def test_unbuilt_and_empty_grids_find_nothing():
    qs = wp.array(_points(4), dtype=wp.vec3)
    out = wp.zeros((4, 1), dtype=int)
    counts = wp.full(4, -1, dtype=int)
    grid = wp.HashGrid(4, 4, 4)  # never built: Warp's point_cells is null
    wp.launch(candidates, dim=4, inputs=[grid.id, qs, 1.0, out, counts])
    np.testing.assert_array_equal(counts.numpy(), 0)

    @wp.kernel
    def first_id(grid: wp.uint64, out: wp.array(dtype=int)):
        out[0] = wp.hash_grid_point_id(grid, 0)

    ids = wp.zeros(1, dtype=int)
    wp.launch(first_id, dim=1, inputs=[grid.id, ids])
    assert ids.numpy()[0] == -1
    grid.build(wp.zeros(0, dtype=wp.vec3), 0.5)  # no points
    wp.launch(candidates, dim=4, inputs=[grid.id, qs, 1.0, out, counts])
    np.testing.assert_array_equal(counts.numpy(), 0)


def test_rebuild_and_reserve():
    grid = wp.HashGrid(8, 8, 8)
    grid.reserve(10)
    assert grid.reserved
    for seed, n in ((4, 50), (5, 400), (6, 20)):  # grows, then shrinks
        pts = _points(n, seed=seed)
        grid.build(wp.array(pts, dtype=wp.vec3), 0.5)
        counts = wp.zeros(n, dtype=int)
        sums = wp.zeros(n, dtype=int)
        wp.launch(neighbours, dim=n, inputs=[grid.id, wp.array(pts, dtype=wp.vec3), 0.5, counts, sums])
        d = np.linalg.norm(pts[:, None, :] - pts[None, :, :], axis=2)
        np.testing.assert_array_equal(counts.numpy(), (d <= np.float32(0.5)).sum(axis=1))


def test_query_state_through_a_func():
    @wp.func
    def count_all(query: wp.HashGridQuery) -> int:
        index = int(0)
        n = int(0)
        while wp.hash_grid_query_next(query, index):
            n += 1
        return n

    @wp.kernel
    def k(grid: wp.uint64, qs: wp.array(dtype=wp.vec3), out: wp.array(dtype=int)):
        tid = wp.tid()
        out[tid] = count_all(wp.hash_grid_query(grid, qs[tid], 0.3))

    pts = _points(100, seed=7)
    grid = wp.HashGrid(6, 6, 6)
    grid.build(wp.array(pts, dtype=wp.vec3), 0.3)
    qs = _points(10, seed=8)
    out = wp.zeros(10, dtype=int)
    wp.launch(k, dim=10, inputs=[grid.id, wp.array(qs, dtype=wp.vec3), out])
    ref = [len(reference_candidates(pts, q, 0.3, 0.3, np.array([6, 6, 6]))) for q in qs]
    np.testing.assert_array_equal(out.numpy(), ref)


def test_bad_grid_inputs():
    with pytest.raises(RuntimeError, match="^Hash grid dimensions must be positive$"):
        wp.HashGrid(0, 4, 4)
    with pytest.raises(TypeError, match="^HashGrid dimensions must be integers$"):
        wp.HashGrid(1.5, 4, 4)
    with pytest.raises(RuntimeError, match=r"^Hash grid cell count exceeds supported limit: "
                                           r"2048 \* 2048 \* 2048 = 8589934592 > 2147483647$"):
        wp.HashGrid(2048, 2048, 2048)
    grid = wp.HashGrid(4, 4, 4)
    pts = wp.array(_points(3), dtype=wp.vec3)
    with pytest.raises(ValueError, match="^Hash grid cell width must be positive, got -1.0$"):
        grid.build(pts, -1.0)
    with pytest.raises(ValueError, match="^Hash grid cell width must be positive, got 0.0$"):
        grid.build(pts, 0.0)
    with pytest.raises(TypeError, match="^Hash grid points should have type vec3f"):
        grid.build(wp.zeros(3, dtype=float), 1.0)
    with pytest.raises(RuntimeError, match=r"^wp.hash_grid_query\(\) can only be called inside a kernel"):
        wp.hash_grid_query(grid.id, wp.vec3(), 1.0)


def test_bad_kernel_calls():
    @wp.kernel
    def not_a_variable(grid: wp.uint64, out: wp.array(dtype=int)):
        query = wp.hash_grid_query(grid, wp.vec3(0.0), 1.0)
        wp.hash_grid_query_next(query, out[0])

    with pytest.raises(wp.CompileError, match=r"hash_grid_query_next\(query, index\): index must be a variable "
                                              r"\(the call writes the next index into it\)"):
        wp.launch(not_a_variable, dim=1, inputs=[wp.HashGrid(2, 2, 2).id, wp.zeros(1, dtype=int)])

    @wp.kernel
    def wrong_index(grid: wp.uint64):
        query = wp.hash_grid_query(grid, wp.vec3(0.0), 1.0)
        index = float(0.0)
        wp.hash_grid_query_next(query, index)

    with pytest.raises(wp.CompileError, match=r"hash_grid_query_next\(\): index must be an int32 variable, got "
                                              r"float32"):
        wp.launch(wrong_index, dim=1, inputs=[wp.HashGrid(2, 2, 2).id])

    @wp.kernel
    def wrong_point(grid: wp.uint64):
        query = wp.hash_grid_query(grid, 1.0, 1.0)

    with pytest.raises(wp.CompileError, match=r"hash_grid_query\(\): point must be a vec3 of float16, float32 or "
                                              r"float64 \(vec3h, vec3f, vec3d\), got float32"):
        wp.launch(wrong_point, dim=1, inputs=[wp.HashGrid(2, 2, 2).id])


def test_gradient_through_a_neighbour_sum():
    """sum over neighbours j of |p_i - p_j|^2 within the query: d/dp_i = sum 2 (p_i - p_j) (twice over the
    symmetric pairs), the queries themselves carry no derivative."""

    @wp.kernel
    def energy(grid: wp.uint64, points: wp.array(dtype=wp.vec3), r: float, e: wp.array(dtype=float)):
        tid = wp.tid()
        p = points[tid]
        query = wp.hash_grid_query(grid, p, r)
        index = int(0)
        while wp.hash_grid_query_next(query, index):
            d = points[index] - p
            if wp.length(d) <= r:
                wp.atomic_add(e, 0, wp.dot(d, d))

    pts = _points(60, seed=9, scale=1.5)
    grid = wp.HashGrid(8, 8, 8)
    points = wp.array(pts, dtype=wp.vec3, requires_grad=True)
    grid.build(points, 0.5)
    e = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(energy, dim=60, inputs=[grid.id, points, 0.5, e])
    tape.backward(loss=e)
    diff = pts[:, None, :] - pts[None, :, :]
    close = (np.linalg.norm(diff, axis=2) <= np.float32(0.5))[..., None]
    np.testing.assert_allclose(points.grad.numpy(), 4.0 * (diff * close).sum(axis=1), rtol=1e-4, atol=1e-4)
    assert e.numpy()[0] == pytest.approx(float(((diff ** 2).sum(axis=2) * close[..., 0]).sum()), rel=1e-4)


@pytest.mark.skipif(__import__("shutil").which("ptxas") is None, reason="needs ptxas")
def test_queries_compile_for_cuda():
    """The expansion is ordinary warp IR: the CUDA table lowers it and ptxas assembles it (no GPU needed)."""
    from mlwarp.launching import cuda_compile

    for k in (candidates, neighbours):
        meta = cuda_compile.build(k)
        assert meta["cubin"] == "kernel.cubin" and meta["adj_error"] is None


def test_for_loop_over_a_query():
    """`for index in wp.hash_grid_query(...)`: Warp's iteration form, the same candidates as the while form."""

    @wp.func
    def count_close(query: wp.HashGridQuery[wp.float32], points: wp.array(dtype=wp.vec3), p: wp.vec3, r: float):
        n = int(0)
        while wp.hash_grid_query_next(query, n):  # (any int variable works as the index)
            pass
        return n

    @wp.kernel
    def k(grid: wp.uint64, points: wp.array(dtype=wp.vec3), r: float, counts: wp.array(dtype=int),
          last: wp.array(dtype=int)):
        tid = wp.tid()
        p = points[tid]
        n = int(0)
        for index in wp.hash_grid_query(grid, p, r):
            if wp.length(points[index] - p) <= r:
                n += 1
        counts[tid] = n
        last[tid] = count_close(wp.hash_grid_query(grid, p, r), points, p, r)

    pts = _points(300, seed=11)
    grid = wp.HashGrid(10, 10, 10)
    points = wp.array(pts, dtype=wp.vec3)
    grid.build(points, 0.4)
    counts, last = wp.zeros(300, dtype=int), wp.zeros(300, dtype=int)
    wp.launch(k, dim=300, inputs=[grid.id, points, 0.4, counts, last])
    d = np.linalg.norm(pts[:, None, :] - pts[None, :, :], axis=2)
    np.testing.assert_array_equal(counts.numpy(), (d <= np.float32(0.4)).sum(axis=1))
    for t in range(0, 300, 37):  # the last candidate of each query
        ref = reference_candidates(pts, pts[t], 0.4, 0.4, np.array([10, 10, 10]))
        assert last.numpy()[t] == ref[-1]
