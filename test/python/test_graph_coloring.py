"""wp.utils graph coloring: graph_coloring_assign (MCS, GREEDY), graph_coloring_balance, graph_coloring_get_groups.

Every coloring is checked for validity (no edge inside a color) and the groups for being a partition. The
expected colors, ratios and message texts were recorded by running warp-lang 1.19.0 (CPU) on the same graphs;
the tests do not import warp-lang."""

import warnings

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.utils import (GraphColoringAlgorithm, graph_coloring_assign, graph_coloring_balance,
                          graph_coloring_get_groups)

MCS, GREEDY = GraphColoringAlgorithm.MCS, GraphColoringAlgorithm.GREEDY


def _grid_edges(n):
    """A triangulated n x n grid (right, down and diagonal edges)."""
    edges = []
    for i in range(n):
        for j in range(n):
            k = i * n + j
            if j + 1 < n:
                edges.append((k, k + 1))
            if i + 1 < n:
                edges.append((k, k + n))
            if i + 1 < n and j + 1 < n:
                edges.append((k, k + n + 1))
    return np.array(edges, np.int32)


# 14 nodes, random edges (duplicates and both directions of some edges included)
SMALL_EDGES = np.array([
    [0, 13], [0, 11], [11, 10], [1, 11], [13, 11], [9, 3], [7, 6], [12, 4], [5, 3], [6, 8], [6, 4], [7, 8], [2, 8],
    [9, 1], [8, 6], [13, 5], [4, 9], [12, 1], [1, 2], [4, 7], [7, 5], [12, 9], [2, 4], [11, 13], [6, 3], [11, 2],
    [1, 3], [5, 4]], np.int32)


def _cpu(a, dtype=wp.int32):
    return wp.array(np.asarray(a), dtype=dtype, device="cpu")


def _assert_valid(edges, colors, color_count):
    colors = np.asarray(colors)
    assert colors.min() >= 0 and colors.max() < color_count
    assert not np.any(colors[edges[:, 0]] == colors[edges[:, 1]])


def _ratio(colors, color_count):
    sizes = np.bincount(colors, minlength=color_count)
    return sizes.max() / sizes.min()


# (edges, node count, algorithm) -> (color count, colors) recorded from warp-lang 1.19.0
WARP_COLORINGS = [
    (np.array([[0, 1], [1, 2], [2, 3]], np.int32), 4, MCS, 2, [0, 1, 0, 1]),
    (np.array([[0, 1], [1, 2], [2, 3]], np.int32), 4, GREEDY, 2, [1, 0, 1, 0]),
    (_grid_edges(6), 36, MCS, 3,
     [0, 1, 2, 0, 1, 2, 1, 2, 0, 1, 2, 0, 2, 0, 1, 2, 0, 1, 0, 1, 2, 0, 1, 2, 1, 2, 0, 1, 2, 0, 2, 0, 1, 2, 0, 1]),
    (SMALL_EDGES, 14, MCS, 3, [0, 1, 0, 2, 1, 0, 0, 2, 1, 0, 0, 2, 2, 1]),
    (SMALL_EDGES, 14, GREEDY, 4, [1, 1, 2, 0, 0, 1, 1, 2, 0, 2, 1, 0, 3, 2]),
    # a star with a repeated edge, a separate edge and two isolated nodes: several components
    (np.array([[0, 1], [0, 2], [0, 3], [0, 1], [4, 5], [6, 7]], np.int32), 8, MCS, 2, [0, 1, 1, 1, 0, 1, 0, 1]),
]


@pytest.mark.parametrize("edges,node_count,algorithm,expected_count,expected_colors", WARP_COLORINGS)
def test_assign_matches_warp(edges, node_count, algorithm, expected_count, expected_colors):
    colors = wp.empty(node_count, dtype=wp.int32, device="cpu")
    count = graph_coloring_assign(_cpu(edges), colors, algorithm)
    assert count == expected_count
    assert colors.numpy().tolist() == expected_colors
    _assert_valid(edges, colors.numpy(), count)


@pytest.mark.parametrize("algorithm", [MCS, GREEDY])
def test_assign_valid_on_larger_graphs(algorithm):
    rng = np.random.default_rng(7)
    edges = rng.integers(0, 300, size=(1500, 2)).astype(np.int32)
    edges = edges[edges[:, 0] != edges[:, 1]]
    colors = wp.empty(300, dtype=wp.int32, device="cpu")
    count = graph_coloring_assign(_cpu(edges), colors, algorithm)
    _assert_valid(edges, colors.numpy(), count)
    assert np.unique(colors.numpy()).size == count  # every color up to the count is used
    grid = _grid_edges(20)
    colors = wp.empty(400, dtype=wp.int32, device="cpu")
    count = graph_coloring_assign(_cpu(grid), colors, algorithm)
    _assert_valid(grid, colors.numpy(), count)
    # a triangulated grid is 3-colorable and MCS (an optimal coloring on chordal-like meshes) finds 3
    assert count == 3 if algorithm == MCS else count <= 4


def test_self_loop_is_ignored():
    colors = wp.empty(3, dtype=wp.int32, device="cpu")
    count = graph_coloring_assign(_cpu([[0, 1], [2, 2]]), colors)
    assert count == 2 and colors.numpy().tolist() == [0, 1, 0]


def test_balance_matches_warp():
    path = np.array([[i, i + 1] for i in range(9)], np.int32)
    colors = _cpu([0, 1] * 5 + [0, 0, 2])  # sizes 7, 5, 1
    ratio = graph_coloring_balance(_cpu(path), colors, 3, 1.0)
    # warp-lang 1.19.0: 1.6666666269302368 (a float32 5/3), and these colors
    assert ratio == pytest.approx(np.float32(5) / np.float32(3), abs=0) and isinstance(ratio, float)
    assert colors.numpy().tolist() == [2, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 2, 2]
    _assert_valid(path, colors.numpy(), 3)
    assert _ratio(colors.numpy(), 3) == pytest.approx(ratio) and ratio < 7 / 1


def test_balance_improves_ratio_and_stays_valid():
    rng = np.random.default_rng(11)
    edges = rng.integers(0, 200, size=(500, 2)).astype(np.int32)
    edges = edges[edges[:, 0] != edges[:, 1]]
    colors = wp.empty(200, dtype=wp.int32, device="cpu")
    count = graph_coloring_assign(_cpu(edges), colors, GREEDY)
    before = _ratio(colors.numpy(), count)
    ratio = graph_coloring_balance(_cpu(edges), colors, count, 1.1)
    _assert_valid(edges, colors.numpy(), count)
    assert ratio == pytest.approx(_ratio(colors.numpy(), count), rel=1e-6)
    assert ratio <= before
    sizes = np.bincount(colors.numpy(), minlength=count)
    assert ratio <= 1.1 or sizes.max() - sizes.min() <= 2 or ratio < before


def test_balance_iteration_limit_warns():
    path = np.array([[i, i + 1] for i in range(9)], np.int32)
    colors = _cpu([0, 1] * 5 + [0, 0, 2])
    with pytest.warns(UserWarning, match=r"^Graph coloring stopped because it reached the 1-iteration limit "
                                         r"\(achieved ratio 3, target 1\)\.$"):
        ratio = graph_coloring_balance(_cpu(path), colors, 3, 1.0, max_iterations=1)
    assert ratio == 3.0  # warp-lang 1.19.0: one node moved, then the limit
    assert colors.numpy().tolist() == [2, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 2]


def test_balance_single_color_and_no_move():
    colors = _cpu([0, 0, 0])
    assert graph_coloring_balance(_cpu(np.zeros((0, 2), np.int32)), colors, 1, 1.0) == 1.0
    # a star: every leaf touches the center, nothing can move (warp-lang 1.19.0: 4.0, colors unchanged)
    star = np.array([[0, i] for i in range(1, 9)] + [[9, 10], [10, 11]], np.int32)
    colors = _cpu([0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert graph_coloring_balance(_cpu(star), colors, 3, 1.0) == 4.0
    assert colors.numpy().tolist() == [0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 2]


@pytest.mark.parametrize("return_wp_array", [False, True])
def test_get_groups_partition(return_wp_array):
    colors = _cpu([0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 2])
    groups = graph_coloring_get_groups(colors, 3, return_wp_array=return_wp_array)
    as_lists = [(g.numpy() if return_wp_array else g).tolist() for g in groups]
    assert as_lists == [[0, 10], [1, 2, 3, 4, 5, 6, 7, 8], [9, 11]]  # warp-lang 1.19.0's groups
    assert sorted(sum(as_lists, [])) == list(range(12))
    if return_wp_array:
        assert all(g.dtype == wp.int32 and g.device == "cpu" for g in groups)
    else:
        assert all(g.dtype == np.int32 for g in groups)
    assert graph_coloring_get_groups(colors, 0) == ()
    # a color with no nodes gives an empty group
    assert [g.tolist() for g in graph_coloring_get_groups(_cpu([1, 1]), 2, return_wp_array=False)] == [[], [0, 1]]


def test_errors():
    four = wp.empty(4, dtype=wp.int32, device="cpu")
    bad_edges = _cpu([[0, 1], [1, 9]])
    with pytest.raises(RuntimeError, match=r"^Graph coloring failed: Graph edge 1 has endpoints \(1, 9\), but valid "
                                           r"node indices are in the range \[0, 4\)\.$"):
        graph_coloring_assign(bad_edges, four)
    with pytest.raises(RuntimeError, match=r"^Graph coloring balance failed: Graph edge 1 has endpoints \(1, 9\)"):
        graph_coloring_balance(bad_edges, _cpu([0, 1, 0, 1]), 2, 1.0)
    path = _cpu([[0, 1], [1, 2]])
    with pytest.raises(RuntimeError, match=r"^Graph coloring balance failed: Node 2 has color 5, but valid colors "
                                           r"are in the range \[0, 3\)\.$"):
        graph_coloring_balance(path, _cpu([0, 1, 5]), 3, 1.0)
    with pytest.raises(RuntimeError, match=r"^Graph coloring failed: Unrecognized coloring algorithm number: 7!$"):
        graph_coloring_assign(path, wp.empty(3, dtype=wp.int32, device="cpu"), 7)
    with pytest.raises(RuntimeError, match=r"^edges array must have dtype int32, got int64$"):
        graph_coloring_assign(_cpu([[0, 1]], wp.int64), four)
    with pytest.raises(RuntimeError, match=r"^node_colors array must have dtype int32, got float32$"):
        graph_coloring_assign(path, wp.empty(3, dtype=wp.float32, device="cpu"))
    with pytest.raises(RuntimeError, match=r"^edges array must have shape \(edge_count, 2\), got shape \(1, 3\)$"):
        graph_coloring_assign(_cpu([[0, 1, 2]]), four)
    with pytest.raises(RuntimeError, match=r"^edges array must be 2-dimensional, got 1 dimensions$"):
        graph_coloring_assign(_cpu([0, 1]), four)
    with pytest.raises(RuntimeError, match=r"^node_colors array must be 1-dimensional, got 2 dimensions$"):
        graph_coloring_assign(path, wp.empty((2, 2), dtype=wp.int32, device="cpu"))
    with pytest.raises(RuntimeError, match=r"^Cannot color an empty graph$"):
        graph_coloring_assign(_cpu(np.zeros((0, 2), np.int32)), wp.empty(0, dtype=wp.int32, device="cpu"))
    colors = _cpu([0, 1, 0])
    with pytest.raises(TypeError, match=r"^max_iterations must be an integer or None, got bool$"):
        graph_coloring_balance(path, colors, 2, 1.0, max_iterations=True)
    with pytest.raises(TypeError, match=r"^max_iterations must be an integer or None, got float$"):
        graph_coloring_balance(path, colors, 2, 1.0, max_iterations=1.5)
    with pytest.raises(ValueError, match=r"^max_iterations must be non-negative, got -1$"):
        graph_coloring_balance(path, colors, 2, 1.0, max_iterations=-1)
    with pytest.raises(ValueError, match=r"^max_iterations must not exceed 2147483647, got 2147483648$"):
        graph_coloring_balance(path, colors, 2, 1.0, max_iterations=2**31)
    with pytest.raises(RuntimeError, match=r"^color_count must be non-negative$"):
        graph_coloring_get_groups(colors, -1)
    with pytest.raises(RuntimeError, match=r"^Node 1 has color 1, but valid colors are in the range \[0, 1\)\.$"):
        graph_coloring_get_groups(colors, 1)
