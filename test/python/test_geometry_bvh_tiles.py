"""The rest of wp.Bvh: block-wide queries (wp.tile_bvh_query_aabb / _ray, tile_bvh_query_next, tile_query_valid
and their deprecated names), queries of one kind used as the erased wp.BvhQuery, and the constructors ("sah",
"median", "lbvh", "cubql"). Every query is checked against testing each box with numpy; the SAH tree against a
scalar, recursive transcription of Warp's documented split rule."""

import numpy as np
import pytest

import mlwarp as wp

F32_MAX = float(np.finfo(np.float32).max)


def _boxes(n, seed, spread=5.0, size=5.0):
    rng = np.random.default_rng(seed)
    lowers = (rng.random((n, 3)) * spread).astype(np.float32)
    uppers = (lowers + rng.random((n, 3)) * size).astype(np.float32)
    return lowers, uppers


def _bvh(lowers, uppers, **kwargs):
    return wp.Bvh(wp.array(lowers, dtype=wp.vec3), wp.array(uppers, dtype=wp.vec3), **kwargs)


def ref_aabb(lowers, uppers, lo, hi):
    return ~((lowers > hi).any(1) | (uppers < lo).any(1))


def ref_ray(lowers, uppers, start, d, max_dist=F32_MAX):
    with np.errstate(divide="ignore", invalid="ignore"):
        rcp = (np.float32(1.0) / d.astype(np.float32)).astype(np.float32)
        l1 = (lowers - start) * rcp
        l2 = (uppers - start) * rcp
    lmin = np.minimum(l1, l2).max(axis=1)
    lmax = np.maximum(l1, l2).min(axis=1)
    return (lmax >= 0) & (lmax >= lmin) & ~(lmin >= max_dist)


def ref_sphere(lowers, uppers, c, r):
    d = np.maximum(np.maximum(lowers - c, c - uppers), 0.0)
    return (d * d).sum(axis=1) <= np.float32(r) * np.float32(r)


def ref_capsule(lowers, uppers, start, d, r, max_dist):
    lo, hi = lowers - np.float32(r), uppers + np.float32(r)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (lo - start) / d, (hi - start) / d
    tmin = np.minimum(t1, t2).max(axis=1)
    tmax = np.maximum(t1, t2).min(axis=1)
    return (tmax >= 0) & (tmax >= tmin) & ~(tmin > max_dist)


# -- block-wide queries -----------------------------------------------------------------------------------
@wp.kernel
def tile_aabb(bvh: wp.uint64, lower: wp.vec3, upper: wp.vec3, hits: wp.array(dtype=int), seen: wp.array(dtype=int),
              calls: wp.array(dtype=int)):
    query = wp.tile_bvh_query_aabb(bvh, lower, upper)
    while wp.tile_query_valid(query):
        result = wp.tile_bvh_query_next(query)
        index = wp.untile(result)
        seen[calls[0]] = index
        calls[0] += 1
        if index >= 0:
            wp.atomic_add(hits, index, 1)


@wp.kernel
def tile_ray(bvh: wp.uint64, start: wp.vec3, direction: wp.vec3, hits: wp.array(dtype=int)):
    query = wp.tile_bvh_query_ray(bvh, start, direction)
    while wp.tile_query_valid(query):
        index = wp.untile(wp.tile_bvh_query_next(query))
        if index >= 0:
            wp.atomic_add(hits, index, 1)


@wp.kernel
def tile_aabb_per_block(bvh: wp.uint64, lowers: wp.array(dtype=wp.vec3), uppers: wp.array(dtype=wp.vec3),
                        counts: wp.array(dtype=int)):
    block = wp.tid()
    query = wp.tile_bvh_query_aabb(bvh, lowers[block], uppers[block])
    while wp.tile_query_valid(query):
        index = wp.untile(wp.tile_bvh_query_next(query))
        if index >= 0:
            counts[block] += 1


@pytest.mark.parametrize("block_dim", [1, 64])
@pytest.mark.parametrize("leaf_size", [1, 3])
def test_tile_aabb_query_reports_each_overlap_once_then_minus_one(block_dim, leaf_size):
    lowers, uppers = _boxes(200, seed=1)
    bvh = _bvh(lowers, uppers, leaf_size=leaf_size)
    lo, hi = np.float32([2.0, 2.0, 2.0]), np.float32([8.0, 8.0, 8.0])
    hits, seen, calls = wp.zeros(200, dtype=int), wp.full(202, -7, dtype=int), wp.zeros(1, dtype=int)
    wp.launch_tiled(tile_aabb, dim=1, inputs=[bvh.id, wp.vec3(*lo), wp.vec3(*hi), hits, seen, calls],
                    block_dim=block_dim)
    expected = ref_aabb(lowers, uppers, lo, hi)
    assert 0 < expected.sum() < 200
    np.testing.assert_array_equal(hits.numpy(), expected.astype(np.int32))
    # Warp's CPU semantics: one item per call, valid until a call finds nothing (that call's tile holds -1)
    n = int(expected.sum())
    assert calls.numpy()[0] == n + 1
    order = seen.numpy()
    assert sorted(order[:n].tolist()) == np.flatnonzero(expected).tolist() and order[n] == -1
    assert (order[n + 1:] == -7).all()


@pytest.fixture
def cpu_blocks():
    saved = wp.config.enable_cpu_blocks
    wp.config.enable_cpu_blocks = True
    yield
    wp.config.enable_cpu_blocks = saved


@wp.kernel
def tile_ray_by_lane(bvh: wp.uint64, start: wp.vec3, direction: wp.vec3, hits: wp.array(dtype=int),
                     per_lane: wp.array(dtype=int)):
    _, lane = wp.tid()
    query = wp.tile_bvh_query_ray(bvh, start, direction)
    while wp.tile_query_valid(query):
        index = wp.untile(wp.tile_bvh_query_next(query))
        per_lane[lane] += 1  # each lane's calls, + 1000 for each item it takes
        if index >= 0:
            wp.atomic_add(hits, index, 1)
            per_lane[lane] += 1000


def test_tile_queries_with_cpu_lanes_give_each_item_to_lane_zero(cpu_blocks):
    """With Warp's CPU lanes (enable_cpu_blocks, block_dim > 1) the block runs one query: each
    tile_bvh_query_next's tile holds the item at element 0 and -1 at the others (Warp's CPU tile_bvh.h), so
    lane 0 untiles every item once and the other lanes -1."""
    lowers, uppers = _boxes(150, seed=2)
    bvh = _bvh(lowers, uppers, leaf_size=3)
    start, direction = np.float32([-1.0, 3.0, 3.0]), np.float32([2.0, 0.5, -0.25])
    hits, per_lane = wp.zeros(150, dtype=int), wp.zeros(64, dtype=int)
    wp.launch_tiled(tile_ray_by_lane, dim=1, inputs=[bvh.id, wp.vec3(*start), wp.vec3(*direction), hits, per_lane],
                    block_dim=64)
    expected = ref_ray(lowers, uppers, start, direction)
    assert 0 < expected.sum() < 150
    np.testing.assert_array_equal(hits.numpy(), expected.astype(np.int32))
    # lane 0 takes every item; every lane sees each call (items + the last, empty one)
    calls = int(expected.sum()) + 1
    np.testing.assert_array_equal(per_lane.numpy(), [calls + 1000 * int(expected.sum())] + [calls] * 63)


@wp.kernel
def tile_count_per_lane(bvh: wp.uint64, lower: wp.vec3, upper: wp.vec3, counts: wp.array(dtype=int)):
    query = wp.tile_bvh_query_aabb(bvh, lower, upper)
    n = int(0)
    while wp.tile_query_valid(query):
        if wp.untile(wp.tile_bvh_query_next(query)) >= 0:
            n += 1
    counts[0] = n


def test_tile_query_loop_carrying_a_lane_value_is_refused(cpu_blocks):
    lowers, uppers = _boxes(20, seed=6)
    bvh = _bvh(lowers, uppers)
    with pytest.raises(Exception) as e:
        wp.launch_tiled(tile_count_per_lane, dim=1, inputs=[bvh.id, wp.vec3(0.0), wp.vec3(9.0), wp.zeros(1, dtype=int)],
                        block_dim=8)
    assert "kernel 'tile_count_per_lane' at " in str(e.value)
    assert ("a tile operation inside a while loop whose condition or carried values differ between lanes is not "
            "supported with Warp's CPU lanes (wp.config.enable_cpu_blocks, block_dim=8)") in str(e.value)


def test_tile_ray_query_matches_brute_force_for_unnormalised_and_axis_directions():
    lowers, uppers = _boxes(150, seed=3)
    bvh = _bvh(lowers, uppers, leaf_size=2)
    for start, direction in (([2.5, 0.5, -4.0], [0.0, 0.0, 8.0]), ([-1.0, 3.0, 3.0], [2.0, 0.5, -0.25]),
                             ([3.0, 3.0, 3.0], [-1.0, 0.0, 0.0])):
        start, direction = np.float32(start), np.float32(direction)
        hits = wp.zeros(150, dtype=int)
        wp.launch_tiled(tile_ray, dim=1, inputs=[bvh.id, wp.vec3(*start), wp.vec3(*direction), hits], block_dim=8)
        np.testing.assert_array_equal(hits.numpy(), ref_ray(lowers, uppers, start, direction).astype(np.int32))


@pytest.mark.parametrize("lanes", [False, True])
def test_tile_queries_in_many_blocks_count_each_blocks_overlaps(lanes, monkeypatch):
    """40 blocks of 32, each its own query (one lane a block, or Warp's CPU lanes: enable_cpu_blocks)."""
    monkeypatch.setattr(wp.config, "enable_cpu_blocks", lanes)
    lowers, uppers = _boxes(300, seed=4, size=1.0)
    queries_lo, queries_hi = _boxes(40, seed=5, size=2.0)
    bvh = _bvh(lowers, uppers)
    counts = wp.zeros(40, dtype=int)
    wp.launch_tiled(tile_aabb_per_block, dim=40, inputs=[bvh.id, wp.array(queries_lo, dtype=wp.vec3),
                                                         wp.array(queries_hi, dtype=wp.vec3), counts], block_dim=32)
    expected = [ref_aabb(lowers, uppers, queries_lo[k], queries_hi[k]).sum() for k in range(40)]
    np.testing.assert_array_equal(counts.numpy(), expected)


def test_tile_query_of_a_box_missing_everything_runs_one_call():
    lowers, uppers = _boxes(20, seed=6)
    bvh = _bvh(lowers, uppers)
    hits, seen, calls = wp.zeros(20, dtype=int), wp.full(3, -7, dtype=int), wp.zeros(1, dtype=int)
    far = wp.vec3(100.0, 100.0, 100.0)
    wp.launch_tiled(tile_aabb, dim=1, inputs=[bvh.id, far, far, hits, seen, calls], block_dim=4)
    assert calls.numpy()[0] == 1 and seen.numpy().tolist() == [-1, -7, -7] and hits.numpy().sum() == 0


@wp.kernel
def tile_deprecated(bvh: wp.uint64, lower: wp.vec3, upper: wp.vec3, start: wp.vec3, direction: wp.vec3,
                    box_hits: wp.array(dtype=int), ray_hits: wp.array(dtype=int)):
    query = wp.bvh_query_aabb_tiled(bvh, lower, upper)
    while wp.tile_query_valid(query):
        index = wp.untile(wp.bvh_query_next_tiled(query))
        if index >= 0:
            box_hits[index] += 1
    ray = wp.bvh_query_ray_tiled(bvh, start, direction)
    while wp.tile_query_valid(ray):
        index = wp.untile(wp.bvh_query_next_tiled(ray))
        if index >= 0:
            ray_hits[index] += 1


def test_deprecated_tiled_names_warn_and_match_brute_force(tmp_path, monkeypatch):
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))  # (the warning comes from compiling)
    lowers, uppers = _boxes(100, seed=7)
    bvh = _bvh(lowers, uppers)
    lo, hi = np.float32([1.0, 1.0, 1.0]), np.float32([4.0, 6.0, 4.0])
    start, direction = np.float32([0.0, 1.0, 0.0]), np.float32([1.0, 0.2, 0.7])
    box_hits, ray_hits = wp.zeros(100, dtype=int), wp.zeros(100, dtype=int)
    with pytest.warns(DeprecationWarning) as issued:
        wp.launch_tiled(tile_deprecated, dim=1, inputs=[bvh.id, wp.vec3(*lo), wp.vec3(*hi), wp.vec3(*start),
                                                        wp.vec3(*direction), box_hits, ray_hits], block_dim=16)
    assert {str(w.message) for w in issued} == {
        f"wp.{old}() is deprecated in Warp 1.18 and is targeted for removal in Warp 1.22. Use wp.{new}() instead."
        for old, new in (("bvh_query_aabb_tiled", "tile_bvh_query_aabb"), ("bvh_query_ray_tiled", "tile_bvh_query_ray"),
                         ("bvh_query_next_tiled", "tile_bvh_query_next"))}
    np.testing.assert_array_equal(box_hits.numpy(), ref_aabb(lowers, uppers, lo, hi).astype(np.int32))
    np.testing.assert_array_equal(ray_hits.numpy(), ref_ray(lowers, uppers, start, direction).astype(np.int32))


def test_tile_query_builtins_refuse_python_scope_and_wrong_arguments():
    with pytest.raises(RuntimeError, match=r"^wp\.tile_bvh_query_aabb\(\) can only be called inside a kernel or "
                                           r"wp\.func$"):
        wp.tile_bvh_query_aabb(0, wp.vec3(), wp.vec3())

    @wp.kernel
    def next_of_an_expression(bvh: wp.uint64):
        wp.tile_bvh_query_next(wp.tile_bvh_query_aabb(bvh, wp.vec3(), wp.vec3()))

    with pytest.raises(wp.CompileError, match=r"tile_bvh_query_next\(query\): the query must be a local variable "
                                              r"\(the call advances it\)"):
        wp.launch_tiled(next_of_an_expression, dim=1, inputs=[0], block_dim=1)

    @wp.kernel
    def valid_of_an_ordinary_query(bvh: wp.uint64):
        query = wp.bvh_query_aabb(bvh, wp.vec3(), wp.vec3())
        wp.tile_query_valid(query)

    with pytest.raises(wp.CompileTypeError, match=r"tile_query_valid\(\): the query must be a BvhQueryTiled, got "
                                                  r"BvhQueryAabb"):
        wp.launch_tiled(valid_of_an_ordinary_query, dim=1, inputs=[0], block_dim=1)

    @wp.kernel
    def tiled_with_a_root(bvh: wp.uint64):
        wp.tile_bvh_query_aabb(bvh, wp.vec3(), wp.vec3(), 0)

    with pytest.raises(wp.CompileError, match=r"tile_bvh_query_aabb\(\) takes the arguments \(id, lower, upper\) by "
                                              r"position, got 4"):
        wp.launch_tiled(tiled_with_a_root, dim=1, inputs=[0], block_dim=1)


# -- a query of one kind as the erased wp.BvhQuery -----------------------------------------------------------
@wp.func
def mark_hits(query: wp.BvhQuery, max_dist: float, hits: wp.array(dtype=int)):
    index = int(0)
    while wp.bvh_query_next(query, index, max_dist):
        hits[index] += 1


@wp.kernel
def each_kind_through_erased_param(bvh: wp.uint64, kind: int, a: wp.vec3, b: wp.vec3, radius: float,
                                   hits: wp.array(dtype=int)):
    if kind == 0:
        mark_hits(wp.bvh_query_aabb(bvh, a, b), F32_MAX, hits)
    elif kind == 1:
        query = wp.bvh_query_ray(bvh, a, b)
        mark_hits(query, F32_MAX, hits)
    elif kind == 2:
        mark_hits(wp.bvh_query_sphere(bvh, a, radius), F32_MAX, hits)
    else:
        mark_hits(wp.bvh_query_capsule(bvh, a, b, radius), 1.0, hits)


@wp.kernel
def kind_chosen_at_run_time(bvh: wp.uint64, use_first: bool, a: wp.vec3, b: wp.vec3, c: wp.vec3, radius: float,
                            capsules: bool, hits: wp.array(dtype=int)):
    if capsules:
        if use_first:
            query = wp.bvh_query_capsule(bvh, a, b - a, radius)
        else:
            query = wp.bvh_query_sphere(bvh, c, radius)
    elif use_first:
        query = wp.bvh_query_ray(bvh, a, b)
    else:
        query = wp.bvh_query_aabb(bvh, a, c)
    index = int(0)
    while wp.bvh_query_next(query, index, 1.0 if capsules else F32_MAX):
        hits[index] += 1


def test_queries_of_each_kind_pass_to_an_erased_parameter():
    lowers, uppers = _boxes(120, seed=8)
    bvh = _bvh(lowers, uppers, leaf_size=2)
    a, b = np.float32([0.5, 0.5, 0.5]), np.float32([0.6, 0.7, 0.4])
    lo, hi = np.float32([2.0, 2.0, 2.0]), np.float32([5.0, 5.0, 5.0])
    cases = {0: (lo, hi, 0.0, ref_aabb(lowers, uppers, lo, hi)),
             1: (a, b, 0.0, ref_ray(lowers, uppers, a, b)),
             2: (lo, hi, 1.5, ref_sphere(lowers, uppers, lo, 1.5)),
             3: (a, b * np.float32(5), 0.75, ref_capsule(lowers, uppers, a, b * np.float32(5), 0.75, 1.0))}
    for kind, (x, y, radius, expected) in cases.items():
        hits = wp.zeros(120, dtype=int)
        wp.launch(each_kind_through_erased_param, 1, [bvh.id, kind, wp.vec3(*x), wp.vec3(*y), radius, hits])
        assert 0 < expected.sum() < 120, kind
        np.testing.assert_array_equal(hits.numpy(), expected.astype(np.int32), err_msg=str(kind))


def test_query_kind_chosen_at_run_time_keeps_each_kinds_test():
    lowers, uppers = _boxes(120, seed=9)
    bvh = _bvh(lowers, uppers)
    a, b, c = np.float32([0.0, 0.0, 0.0]), np.float32([6.0, 5.0, 7.0]), np.float32([4.0, 4.0, 4.0])
    expected = {(True, False): ref_ray(lowers, uppers, a, b), (False, False): ref_aabb(lowers, uppers, a, c),
                (True, True): ref_capsule(lowers, uppers, a, b - a, 0.5, 1.0),
                (False, True): ref_sphere(lowers, uppers, c, 0.5)}
    for (use_first, capsules), want in expected.items():
        hits = wp.zeros(120, dtype=int)
        wp.launch(kind_chosen_at_run_time, 1, [bvh.id, use_first, wp.vec3(*a), wp.vec3(*b), wp.vec3(*c), 0.5,
                                               capsules, hits])
        assert 0 < want.sum() < 120
        np.testing.assert_array_equal(hits.numpy(), want.astype(np.int32), err_msg=str((use_first, capsules)))


def test_a_query_and_another_type_in_two_branches_is_still_an_error():
    @wp.kernel
    def query_or_int(bvh: wp.uint64, flag: bool):
        if flag:
            q = wp.bvh_query_ray(bvh, wp.vec3(), wp.vec3(1.0, 0.0, 0.0))
        else:
            q = wp.hash_grid_query(bvh, wp.vec3(), 1.0)
        index = int(0)
        wp.bvh_query_next(q, index)

    with pytest.raises(wp.CompileTypeError, match=r"variable 'q' has type BvhQueryRay in one branch and HashGridQuery "
                                                  r"in the other"):
        wp.launch(query_or_int, 1, [0, True])


# -- constructors -----------------------------------------------------------------------------------------
@wp.kernel
def all_kinds(bvh: wp.uint64, lo: wp.vec3, hi: wp.vec3, start: wp.vec3, direction: wp.vec3, radius: float,
              hits: wp.array2d(dtype=int)):
    q0 = wp.bvh_query_aabb(bvh, lo, hi)
    i = int(0)
    while wp.bvh_query_next(q0, i):
        hits[0, i] += 1
    q1 = wp.bvh_query_ray(bvh, start, direction)
    while wp.bvh_query_next(q1, i):
        hits[1, i] += 1
    q2 = wp.bvh_query_sphere(bvh, hi, radius)
    while wp.bvh_query_next(q2, i):
        hits[2, i] += 1
    q3 = wp.bvh_query_capsule(bvh, start, direction, radius)
    while wp.bvh_query_next(q3, i, 1.0):
        hits[3, i] += 1


def _check_all_kinds(bvh, lowers, uppers):
    lo, hi = np.float32([1.0, 1.5, 1.0]), np.float32([3.0, 3.0, 2.5])
    start, direction = np.float32([-1.0, 0.2, 0.4]), np.float32([6.0, 3.0, 2.0])
    hits = wp.zeros((4, len(lowers)), dtype=int)
    wp.launch(all_kinds, 1, [bvh.id, wp.vec3(*lo), wp.vec3(*hi), wp.vec3(*start), wp.vec3(*direction), 0.8, hits])
    expected = np.stack([ref_aabb(lowers, uppers, lo, hi), ref_ray(lowers, uppers, start, direction),
                         ref_sphere(lowers, uppers, hi, 0.8), ref_capsule(lowers, uppers, start, direction, 0.8, 1.0)])
    np.testing.assert_array_equal(hits.numpy(), expected.astype(np.int32))


@pytest.mark.parametrize("constructor", [None, "sah", "median", "SAH", "Median"])
@pytest.mark.parametrize("leaf_size", [1, 2, 4])
def test_every_constructor_finds_brute_forces_items(constructor, leaf_size):
    lowers, uppers = _boxes(300, seed=10, size=1.0)
    bvh = _bvh(lowers, uppers, constructor=constructor, leaf_size=leaf_size)
    _check_all_kinds(bvh, lowers, uppers)


def test_rebuild_switches_constructor_and_lbvh_falls_back_to_sah_with_warp_warning():
    lowers, uppers = _boxes(200, seed=11, size=1.0)
    la, ua = wp.array(lowers, dtype=wp.vec3), wp.array(uppers, dtype=wp.vec3)
    with pytest.warns(UserWarning, match=r"^LBVH constructor is not available for a CPU tree\. Falling back to SAH "
                                         r"constructor\.$"):
        bvh = wp.Bvh(la, ua, constructor="lbvh")
    _check_all_kinds(bvh, lowers, uppers)
    lowers, uppers = _boxes(200, seed=12, size=1.0)
    la.assign(lowers)
    ua.assign(uppers)
    bvh.rebuild("median")
    _check_all_kinds(bvh, lowers, uppers)
    lowers, uppers = _boxes(200, seed=13, size=1.0)
    la.assign(lowers)
    ua.assign(uppers)
    bvh.rebuild()
    _check_all_kinds(bvh, lowers, uppers)


def test_constructor_errors_are_warps():
    lowers, uppers = _boxes(3, seed=14)
    la, ua = wp.array(lowers, dtype=wp.vec3), wp.array(uppers, dtype=wp.vec3)
    with pytest.raises(ValueError, match=r"^Unknown BVH constructor 'octree', expected one of: sah, median, lbvh, "
                                         r"cubql$"):
        wp.Bvh(la, ua, constructor="octree")
    groups = wp.array(np.zeros(3, np.int32), dtype=int)
    with pytest.raises(RuntimeError, match=r"^Grouped BVHs are not supported with constructor='cubql'$"):
        wp.Bvh(la, ua, constructor="cubql", groups=groups)
    assert wp.is_cubql_available() is False
    with pytest.raises(RuntimeError, match=r"^Failed to create BVH: cuBQL support disabled \(mlwarp has no cuBQL "
                                           r"builder: wp\.is_cubql_available\(\) is False\)$"):
        wp.Bvh(la, ua, constructor="cubql")
    bvh = wp.Bvh(la, ua)
    with pytest.raises(ValueError, match=r"^Cannot rebuild a non-cuBQL BVH with constructor='cubql'; create a new BVH "
                                         r"instead$"):
        bvh.rebuild("cubql")
    with pytest.raises(ValueError, match=r"^Unknown BVH constructor 'fast', expected one of"):
        bvh.rebuild("fast")


# -- the SAH tree itself --------------------------------------------------------------------------------------
def _reference_sah_leaves(lowers, uppers, leaf_size):
    """Warp's top-down SAH build (bvh.cpp's build_recursive / partition_sah_indices, as documented there), one
    node at a time with scalar float32 arithmetic and its std::partition; the leaves' item lists in depth-first
    order, the right child first, each with its depth."""
    f = np.float32
    leaves = []

    def area(lo, hi):
        e = [f(hi[k] - lo[k]) for k in range(3)]
        return f(2.0) * f(f(e[0] * e[1]) + f(e[0] * e[2]) + f(e[1] * e[2]))

    def build(items, depth):
        if len(items) <= leaf_size or depth >= 31:
            leaves.append((depth, list(items)))
            return
        centres = [f(0.5) * (lowers[i] + uppers[i]) for i in items]
        cmin = [min(c[k] for c in centres) for k in range(3)]
        cmax = [max(c[k] for c in centres) for k in range(3)]
        edges = [f(cmax[k] - cmin[k]) for k in range(3)]
        axis = max(range(3), key=lambda k: (edges[k], -k))
        start, end = cmin[axis], cmax[axis]
        if end <= start:
            split_point = start
        else:
            boxes = [None] * 16
            counts = [0] * 16
            for i, c in zip(items, centres):
                b = min(max(int(f(f(16.0) * f(c[axis] - start)) / f(end - start)), 0), 15)
                lo, hi = lowers[i], uppers[i]
                boxes[b] = (lo, hi) if boxes[b] is None else (np.minimum(boxes[b][0], lo), np.maximum(boxes[b][1], hi))
                counts[b] += 1
            node_lo = np.min([lowers[i] for i in items], axis=0)
            node_hi = np.max([uppers[i] for i in items], axis=0)
            inv = f(1.0) / area(node_lo, node_hi)
            best, best_cost = 0, F32_MAX
            for split in range(15):
                left = [bx for bx in boxes[:split + 1] if bx is not None]
                right = [bx for bx in boxes[split + 1:] if bx is not None]
                la = area(np.min([b[0] for b in left], axis=0), np.max([b[1] for b in left], axis=0))
                ra = area(np.min([b[0] for b in right], axis=0), np.max([b[1] for b in right], axis=0))
                cost = f(la * inv) * f(sum(counts[:split + 1])) + f(ra * inv) * f(sum(counts[split + 1:]))
                if cost < best_cost:
                    best, best_cost = split, cost
            split_point = f(start + f(f(best + 1) * f(end - start)) / f(16.0))
        # libstdc++'s std::partition (bidirectional form): the first item not below from the front swaps with
        # the last one below from the back
        items, below = list(items), [c[axis] < split_point for c in centres]
        first, last = 0, len(items)
        while True:
            while first != last and below[first]:
                first += 1
            if first == last:
                break
            last -= 1
            while first != last and not below[last]:
                last -= 1
            if first == last:
                break
            items[first], items[last] = items[last], items[first]
            below[first], below[last] = below[last], below[first]
            first += 1
        n_left = first if 0 < first < len(items) else len(items) // 2
        build(items[n_left:], depth + 1)  # the right child first: the order of Warp's stack traversal
        build(items[:n_left], depth + 1)

    build(list(range(len(lowers))), 0)
    return leaves


def _leaves_of(bvh):
    """Test-only view of the built tree (its node arrays in preorder): each leaf's depth and items."""
    tree = bvh._tree
    return [(int(tree["depth"][k]), tree["primitives"][tree["start"][k]:tree["end"][k]].tolist())
            for k in range(tree["skip"].size) if tree["start"][k] >= 0]


@pytest.mark.parametrize("leaf_size", [1, 2, 5])
def test_sah_tree_is_warps_split_rule(leaf_size):
    rng = np.random.default_rng(15)
    centres = np.concatenate([rng.normal(0.0, 0.3, (40, 3)), rng.normal(4.0, 1.0, (40, 3))]).astype(np.float32)
    half = (rng.random((80, 3)) * 0.4).astype(np.float32)
    lowers, uppers = centres - half, centres + half
    bvh = _bvh(lowers, uppers, constructor="sah", leaf_size=leaf_size)
    assert _leaves_of(bvh) == _reference_sah_leaves(lowers, uppers, leaf_size)


def test_sah_tree_of_skewed_boxes_stops_at_depth_31_and_queries_find_all():
    count = 300
    x = np.exp(np.linspace(-70.0, 0.0, count)).astype(np.float32)
    lowers, uppers = np.zeros((count, 3), np.float32), np.ones((count, 3), np.float32)
    lowers[:, 0], uppers[:, 0] = x, x * np.float32(1.001)
    bvh = _bvh(lowers, uppers, constructor="sah")
    leaves = _leaves_of(bvh)
    assert max(d for d, _ in leaves) == 31 and any(len(items) > 1 for d, items in leaves if d == 31)
    assert _leaves_of(bvh) == _reference_sah_leaves(lowers, uppers, 1)
    _check_all_kinds(bvh, lowers, uppers)
    hits = wp.zeros((4, count), dtype=int)
    wp.launch(all_kinds, 1, [bvh.id, wp.vec3(-2.0, -1.0, -1.0), wp.vec3(2.0, 2.0, 2.0), wp.vec3(), wp.vec3(), 0.0,
                             hits])
    assert (hits.numpy()[0] == 1).all()


def test_sah_tree_of_identical_and_single_boxes():
    for n in (1, 2, 17):
        lowers, uppers = np.zeros((n, 3), np.float32), np.ones((n, 3), np.float32)
        bvh = _bvh(lowers, uppers, constructor="sah")
        assert _leaves_of(bvh) == _reference_sah_leaves(lowers, uppers, 1)
        _check_all_kinds(bvh, lowers, uppers)


def test_descriptor_header_has_warps_host_fields():
    """bvh.id points at words laid out where Warp's host BVH struct keeps parents, primitive indices, max_depth,
    max_nodes, num_nodes, root, item bounds and num_items (core/geometry.py)."""
    import ctypes

    lowers, uppers = _boxes(90, seed=16, size=1.0)
    la, ua = wp.array(lowers, dtype=wp.vec3), wp.array(uppers, dtype=wp.vec3)
    bvh = wp.Bvh(la, ua, leaf_size=2)
    words = np.ctypeslib.as_array(ctypes.cast(bvh.id, ctypes.POINTER(ctypes.c_int64)), shape=(14,))
    halves = words.view(np.int32)
    max_depth, max_nodes, num_nodes, num_items = halves[10], halves[11], halves[12], halves[22]
    leaves = _leaves_of(bvh)
    assert num_items == 90 and words[8] == la.ptr and words[9] == ua.ptr and words[3] == 0
    assert num_nodes == max_nodes == 2 * len(leaves) - 1
    parents = np.ctypeslib.as_array(ctypes.cast(int(words[2]), ctypes.POINTER(ctypes.c_int32)), shape=(num_nodes,))
    root = ctypes.cast(int(words[7]), ctypes.POINTER(ctypes.c_int32))[0]
    assert root == 0 and parents[root] == -1 and (parents[1:] >= 0).all() and (parents[1:] < np.arange(1, num_nodes)).all()
    depths = np.zeros(num_nodes, int)
    for n in range(1, num_nodes):  # (preorder: a parent comes first)
        depths[n] = depths[parents[n]] + 1
    assert (np.bincount(parents[1:], minlength=num_nodes) <= 2).all()
    assert max_depth == depths.max() == max(d for d, _ in leaves)
    primitives = np.ctypeslib.as_array(ctypes.cast(int(words[4]), ctypes.POINTER(ctypes.c_int32)), shape=(90,))
    assert sorted(primitives.tolist()) == list(range(90))


@wp.kernel
def weighted_tile_hits(bvh: wp.uint64, lower: wp.vec3, upper: wp.vec3, weights: wp.array(dtype=float),
                       total: wp.array(dtype=float)):
    query = wp.tile_bvh_query_aabb(bvh, lower, upper)
    while wp.tile_query_valid(query):
        index = wp.untile(wp.tile_bvh_query_next(query))
        if index >= 0:
            wp.atomic_add(total, 0, weights[index] * weights[index])


def test_gradients_flow_through_a_kernel_with_a_tile_query():
    lowers, uppers = _boxes(60, seed=17)
    bvh = _bvh(lowers, uppers)
    lo, hi = np.float32([1.0, 1.0, 1.0]), np.float32([3.0, 3.0, 3.0])
    w = np.linspace(0.5, 2.0, 60).astype(np.float32)
    weights = wp.array(w, dtype=float, requires_grad=True)
    total = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(weighted_tile_hits, dim=1, inputs=[bvh.id, wp.vec3(*lo), wp.vec3(*hi), weights, total],
                        block_dim=16)
    tape.backward(grads={total: wp.ones(1, dtype=float)})
    hit = ref_aabb(lowers, uppers, lo, hi)
    np.testing.assert_allclose(total.numpy()[0], (w[hit] ** 2).sum(), rtol=1e-5)
    np.testing.assert_allclose(weights.grad.numpy(), 2.0 * w * hit, rtol=1e-6)


@pytest.mark.skipif(__import__("shutil").which("ptxas") is None, reason="needs ptxas")
def test_tile_and_erased_queries_compile_for_cuda():
    """Like the other queries, these are ordinary warp IR for the CUDA table (ptxas assembles it; no GPU needed)."""
    from mlwarp.launching import cuda_compile

    for k in (tile_aabb, tile_ray, each_kind_through_erased_param, kind_chosen_at_run_time):
        meta = cuda_compile.build(k)
        assert meta["cubin"] == "kernel.cubin" and meta["adj_error"] is None


@wp.func
def drain(query: wp.BvhQueryTiled, hits: wp.array(dtype=int)) -> int:
    calls = int(0)
    while wp.tile_query_valid(query):
        index = wp.untile(wp.tile_bvh_query_next(query))
        calls += 1
        if index >= 0:
            hits[index] += 1
    return calls


@wp.kernel
def drain_in_a_func(bvh: wp.uint64, lower: wp.vec3, upper: wp.vec3, hits: wp.array(dtype=int),
                    calls: wp.array(dtype=int)):
    calls[0] = drain(wp.tile_bvh_query_aabb(bvh, lower, upper), hits)


def test_a_block_query_passes_to_a_func_annotated_bvh_query_tiled():
    lowers, uppers = _boxes(80, seed=18)
    bvh = _bvh(lowers, uppers, constructor="median")
    lo, hi = np.float32([0.0, 0.0, 0.0]), np.float32([2.0, 3.0, 2.0])
    hits, calls = wp.zeros(80, dtype=int), wp.zeros(1, dtype=int)
    wp.launch_tiled(drain_in_a_func, dim=1, inputs=[bvh.id, wp.vec3(*lo), wp.vec3(*hi), hits, calls], block_dim=8)
    expected = ref_aabb(lowers, uppers, lo, hi)
    np.testing.assert_array_equal(hits.numpy(), expected.astype(np.int32))
    assert calls.numpy()[0] == expected.sum() + 1
