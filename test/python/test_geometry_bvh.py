"""wp.Bvh and its kernel queries against testing every box with numpy (Warp 1.19's tests per kind:
AABB overlap, slab test of a ray with 1 / dir, sphere-box distance, a capsule as a ray against boxes
inflated by the radius)."""

import numpy as np
import pytest

import mlwarp as wp

F32_MAX = float(np.finfo(np.float32).max)


def _boxes(n, seed):
    rng = np.random.default_rng(seed)
    lowers = (rng.random((n, 3)) * 5.0).astype(np.float32)
    uppers = (lowers + rng.random((n, 3)) * 2.0).astype(np.float32)
    return lowers, uppers


def ref_aabb(lowers, uppers, lo, hi):
    return ~((lowers > hi).any(1) | (uppers < lo).any(1))


def ref_ray(lowers, uppers, start, d, max_dist=F32_MAX):
    rcp = (np.float32(1.0) / d.astype(np.float32)).astype(np.float32)
    with np.errstate(invalid="ignore"):
        l1 = (lowers - start) * rcp
        l2 = (uppers - start) * rcp
    lmin = np.minimum(l1, l2).max(axis=1)
    lmax = np.maximum(l1, l2).min(axis=1)
    return (lmax >= 0) & (lmax >= lmin) & ~(lmin >= max_dist)


def ref_sphere(lowers, uppers, c, r):
    d = np.maximum(np.maximum(lowers - c, c - uppers), 0.0)
    return (d * d).sum(axis=1) <= np.float32(r) * np.float32(r)


def ref_capsule(lowers, uppers, start, d, r, max_dist):
    lo, hi = lowers - r, uppers + r
    hits = []
    for k in range(len(lowers)):
        tmin, tmax, ok = -F32_MAX, F32_MAX, True
        for j in range(3):
            if d[j] == 0.0:
                ok &= lo[k, j] <= start[j] <= hi[k, j]
            else:
                t1, t2 = (lo[k, j] - start[j]) / d[j], (hi[k, j] - start[j]) / d[j]
                tmin, tmax = max(min(t1, t2), tmin), min(max(t1, t2), tmax)
        hits.append(ok and tmax >= 0 and tmax >= tmin and not tmin > max_dist)
    return np.array(hits)


@wp.kernel
def q_aabb(bvh: wp.uint64, lower: wp.vec3, upper: wp.vec3, hits: wp.array(dtype=int)):
    query = wp.bvh_query_aabb(bvh, lower, upper)
    i = int(0)
    while wp.bvh_query_next(query, i):
        hits[i] += 1


@wp.kernel
def q_ray(bvh: wp.uint64, start: wp.vec3, d: wp.vec3, max_dist: float, hits: wp.array(dtype=int)):
    query = wp.bvh_query_ray(bvh, start, d)
    i = int(0)
    while wp.bvh_query_next(query, i, max_dist):
        hits[i] += 1


@wp.kernel
def q_sphere(bvh: wp.uint64, c: wp.vec3, r: float, hits: wp.array(dtype=int)):
    query = wp.bvh_query_sphere(bvh, c, r)
    i = int(0)
    while wp.bvh_query_next(query, i):
        hits[i] += 1


@wp.kernel
def q_capsule(bvh: wp.uint64, start: wp.vec3, d: wp.vec3, r: float, max_dist: float, hits: wp.array(dtype=int)):
    query = wp.bvh_query_capsule(bvh, start, d, r)
    i = int(0)
    while wp.bvh_query_next(query, i, max_dist):
        hits[i] += 1


def _run(kernel, n, inputs):
    hits = wp.zeros(n, dtype=int)
    wp.launch(kernel, dim=1, inputs=inputs + [hits])
    return hits.numpy()


@pytest.mark.parametrize("leaf_size", [1, 2, 4, 7])
def test_each_query_kind_hits_exactly_the_boxes_it_should(leaf_size):
    n = 300
    lowers, uppers = _boxes(n, leaf_size)
    bvh = wp.Bvh(wp.array(lowers, dtype=wp.vec3), wp.array(uppers, dtype=wp.vec3), leaf_size=leaf_size)
    lo, hi = np.array([2.0, 1.0, 2.5], np.float32), np.array([3.0, 4.0, 3.0], np.float32)
    np.testing.assert_array_equal(_run(q_aabb, n, [bvh.id, wp.vec3(*lo), wp.vec3(*hi)]), ref_aabb(lowers, uppers, lo, hi))
    start = np.array([-1.0, 0.5, 0.2], np.float32)
    d = (np.array([1.0, 0.4, 0.7]) / np.linalg.norm([1.0, 0.4, 0.7])).astype(np.float32)
    for max_dist in (F32_MAX, 3.0):
        np.testing.assert_array_equal(_run(q_ray, n, [bvh.id, wp.vec3(*start), wp.vec3(*d), max_dist]),
                                      ref_ray(lowers, uppers, start, d, max_dist))
    c = np.array([3.0, 3.0, 3.0], np.float32)
    np.testing.assert_array_equal(_run(q_sphere, n, [bvh.id, wp.vec3(*c), 1.5]), ref_sphere(lowers, uppers, c, 1.5))
    seg = np.array([4.0, 3.0, 2.0], np.float32)
    np.testing.assert_array_equal(_run(q_capsule, n, [bvh.id, wp.vec3(*start), wp.vec3(*seg), 0.3, 1.0]),
                                  ref_capsule(lowers, uppers, start, seg, np.float32(0.3), 1.0))
    axis = np.array([0.0, 0.0, 1.0], np.float32)  # parallel to two slabs: the robust test's case
    p = np.array([3.0, 3.0, -1.0], np.float32)
    np.testing.assert_array_equal(_run(q_capsule, n, [bvh.id, wp.vec3(*p), wp.vec3(*axis), 0.2, 10.0]),
                                  ref_capsule(lowers, uppers, p, axis, np.float32(0.2), 10.0))


def test_refit_and_rebuild_follow_the_arrays():
    n = 200
    lowers, uppers = _boxes(n, 10)
    lo_arr, hi_arr = wp.array(lowers, dtype=wp.vec3), wp.array(uppers, dtype=wp.vec3)
    bvh = wp.Bvh(lo_arr, hi_arr, leaf_size=3)
    lo, hi = np.full(3, 2.0, np.float32), np.full(3, 4.0, np.float32)
    for step in ("refit", "rebuild"):
        lowers, uppers = _boxes(n, 11 if step == "refit" else 12)
        wp.copy(lo_arr, wp.array(lowers, dtype=wp.vec3))
        wp.copy(hi_arr, wp.array(uppers, dtype=wp.vec3))
        getattr(bvh, step)()
        np.testing.assert_array_equal(_run(q_aabb, n, [bvh.id, wp.vec3(*lo), wp.vec3(*hi)]),
                                      ref_aabb(lowers, uppers, lo, hi))


def test_many_threads():
    @wp.kernel
    def per_point(bvh: wp.uint64, points: wp.array(dtype=wp.vec3), counts: wp.array(dtype=int),
                  closest: wp.array(dtype=int)):
        tid = wp.tid()
        p = points[tid]
        query = wp.bvh_query_aabb(bvh, p, p)
        i = int(0)
        n = int(0)
        best = int(-1)
        while wp.bvh_query_next(query, i):
            n += 1
            if best < 0 or i < best:
                best = i
        counts[tid] = n
        closest[tid] = best

    n, m = 400, 256
    lowers, uppers = _boxes(n, 13)
    bvh = wp.Bvh(wp.array(lowers, dtype=wp.vec3), wp.array(uppers, dtype=wp.vec3))
    pts = (np.random.default_rng(14).random((m, 3)) * 6.0).astype(np.float32)
    counts, closest = wp.zeros(m, dtype=int), wp.zeros(m, dtype=int)
    wp.launch(per_point, dim=m, inputs=[bvh.id, wp.array(pts, dtype=wp.vec3), counts, closest])
    inside = ((lowers[None] <= pts[:, None]) & (pts[:, None] <= uppers[None])).all(axis=2)
    np.testing.assert_array_equal(counts.numpy(), inside.sum(axis=1))
    np.testing.assert_array_equal(closest.numpy(), np.where(inside.any(1), inside.argmax(1), -1))


def test_empty_and_single_box_trees():
    empty = wp.Bvh(wp.zeros(0, dtype=wp.vec3), wp.zeros(0, dtype=wp.vec3))
    assert _run(q_aabb, 1, [empty.id, wp.vec3(-10.0), wp.vec3(10.0)]).sum() == 0
    one = wp.Bvh(wp.array([[0.0, 0.0, 0.0]], dtype=wp.vec3), wp.array([[1.0, 1.0, 1.0]], dtype=wp.vec3))
    assert list(_run(q_aabb, 1, [one.id, wp.vec3(0.5), wp.vec3(2.0)])) == [1]
    assert list(_run(q_aabb, 1, [one.id, wp.vec3(1.5), wp.vec3(2.0)])) == [0]


def test_bad_bvh_inputs():
    a = wp.zeros(3, dtype=wp.vec3)
    with pytest.raises(RuntimeError, match="^The same number of lower and upper bounds must be provided$"):
        wp.Bvh(a, wp.zeros(2, dtype=wp.vec3))
    with pytest.raises(RuntimeError, match="^lowers should be a contiguous array of type wp.vec3$"):
        wp.Bvh(wp.zeros(3, dtype=float), a)
    with pytest.raises(RuntimeError, match="^uppers should be a contiguous array of type wp.vec3$"):
        wp.Bvh(a, wp.zeros(3, dtype=wp.vec3d))
    with pytest.raises(ValueError, match="^leaf_size must be greater than or equal to 1, current value: 0$"):
        wp.Bvh(a, a, leaf_size=0)

    @wp.kernel
    def wrong_query(bvh: wp.uint64):
        query = wp.hash_grid_query(bvh, wp.vec3(0.0), 1.0)
        i = int(0)
        wp.bvh_query_next(query, i)

    with pytest.raises(wp.CompileError, match=r"bvh_query_next\(\): the query must be a BvhQuery, got HashGridQuery"):
        wp.launch(wrong_query, dim=1, inputs=[wp.Bvh(a, a).id])


def test_gradient_through_the_boxes_a_query_finds():
    @wp.kernel
    def weigh(bvh: wp.uint64, lowers: wp.array(dtype=wp.vec3), lo: wp.vec3, hi: wp.vec3, e: wp.array(dtype=float)):
        query = wp.bvh_query_aabb(bvh, lo, hi)
        i = int(0)
        while wp.bvh_query_next(query, i):
            wp.atomic_add(e, 0, lowers[i][0] * lowers[i][0])

    n = 120
    lowers, uppers = _boxes(n, 15)
    lo_arr = wp.array(lowers, dtype=wp.vec3, requires_grad=True)
    bvh = wp.Bvh(lo_arr, wp.array(uppers, dtype=wp.vec3), leaf_size=2)
    lo, hi = np.full(3, 2.0, np.float32), np.full(3, 3.5, np.float32)
    e = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(weigh, dim=1, inputs=[bvh.id, lo_arr, wp.vec3(*lo), wp.vec3(*hi), e])
    tape.backward(loss=e)
    hit = ref_aabb(lowers, uppers, lo, hi)
    expected = np.zeros((n, 3), np.float32)
    expected[:, 0] = 2.0 * lowers[:, 0] * hit
    np.testing.assert_allclose(lo_arr.grad.numpy(), expected, rtol=1e-6)


@pytest.mark.skipif(__import__("shutil").which("ptxas") is None, reason="needs ptxas")
def test_queries_compile_for_cuda():
    """The expansion is ordinary warp IR: the CUDA table lowers it and ptxas assembles it (no GPU needed)."""
    from mlwarp.launching import cuda_compile

    for k in (q_aabb, q_ray, q_sphere, q_capsule):
        meta = cuda_compile.build(k)
        assert meta["cubin"] == "kernel.cubin" and meta["adj_error"] is None


def test_for_loop_over_a_query():
    @wp.kernel
    def hits_of(bvh: wp.uint64, lo: wp.vec3, hi: wp.vec3, hits: wp.array(dtype=int)):
        for i in wp.bvh_query_aabb(bvh, lo, hi):
            hits[i] += 1

    lowers, uppers = _boxes(150, 16)
    bvh = wp.Bvh(wp.array(lowers, dtype=wp.vec3), wp.array(uppers, dtype=wp.vec3), leaf_size=4)
    lo, hi = np.full(3, 1.0, np.float32), np.full(3, 2.0, np.float32)
    np.testing.assert_array_equal(_run(hits_of, 150, [bvh.id, wp.vec3(*lo), wp.vec3(*hi)]),
                                  ref_aabb(lowers, uppers, lo, hi))
