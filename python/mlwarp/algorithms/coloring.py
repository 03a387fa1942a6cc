"""`wp.utils.graph_coloring_assign/balance/get_groups`: colors for the nodes of an undirected graph such that no
edge joins two nodes of one color (nodes of one color can then be solved in parallel, as in Warp's VBD cloth).

Warp runs these in its native library (warp/native/coloring.cpp); here they are the same algorithms on the
host, step for step, so the colors are Warp's:

- MCS (maximum cardinality search, Pereira & Palsberg 2005): nodes are ordered by repeatedly taking the node
  with the most already-ordered neighbours (weight buckets; the first node of the top bucket, the bucket's last
  node moved into its place, as Warp's), a new connected component starting at its lowest-index node; then
  greedy coloring in that order.
- GREEDY (Fratarcangeli & Pellacini 2015): greedy coloring by decreasing degree. Warp sorts with `std::sort`,
  which leaves the order of equal-degree nodes to the C++ library; here ties keep node order (a stable sort),
  which is what libstdc++'s insertion sort gives for the small graphs (up to 16 nodes) it sorts that way.
- Balancing moves one node at a time from the largest color group (or, when none of it can move, the first
  other group with a movable node) into the smallest, until the max/min size ratio reaches the target, the
  largest and smallest differ by 2 nodes or fewer, no node can move, the iteration limit is reached, or the
  ratio got worse (then the last move is undone).

The argument checks and their messages are Warp's (warp/_src/coloring.py and coloring.cpp).
"""

from __future__ import annotations

import enum
import operator

import numpy as np

from mlwarp.core import types as _t
from mlwarp.arrays.array import array
from mlwarp.launching.logger import get_logger

__all__ = ["GraphColoringAlgorithm", "graph_coloring_assign", "graph_coloring_balance", "graph_coloring_get_groups"]

_INT32_MAX = int(np.iinfo(np.int32).max)


class GraphColoringAlgorithm(enum.IntEnum):
    """Graph coloring algorithm selection (Warp's values)."""

    MCS = 0
    """Maximum Cardinality Search based coloring algorithm."""

    GREEDY = 1
    """Degree-ordered greedy coloring algorithm."""


def _check_graph_arrays(edges, node_colors) -> None:
    if not edges.device.is_cpu:
        raise RuntimeError("edges array must be on the CPU")
    if not node_colors.device.is_cpu:
        raise RuntimeError("node_colors array must be on the CPU")
    if edges.dtype != _t.int32:
        raise RuntimeError(f"edges array must have dtype int32, got {_t.type_repr(edges.dtype)}")
    if node_colors.dtype != _t.int32:
        raise RuntimeError(f"node_colors array must have dtype int32, got {_t.type_repr(node_colors.dtype)}")
    if edges.ndim != 2:
        raise RuntimeError(f"edges array must be 2-dimensional, got {edges.ndim} dimensions")
    if edges.shape[1] != 2:
        raise RuntimeError(f"edges array must have shape (edge_count, 2), got shape {edges.shape}")
    if node_colors.ndim != 1:
        raise RuntimeError(f"node_colors array must be 1-dimensional, got {node_colors.ndim} dimensions")


class _Graph:
    """Adjacency lists in edge order (each edge listed at both ends, duplicates kept, as Warp's Graph)."""

    def __init__(self, node_count: int, edges: np.ndarray, failure: str):
        bad = np.flatnonzero(((edges < 0) | (edges >= node_count)).any(axis=1)) if len(edges) else ()
        if len(bad):
            e0, e1 = (int(v) for v in edges[bad[0]])
            raise RuntimeError(f"{failure}: Graph edge {int(bad[0])} has endpoints ({e0}, {e1}), but valid node "
                               f"indices are in the range [0, {node_count}).")
        self.neighbors = [[] for _ in range(node_count)]
        for e0, e1 in edges.tolist():
            if e0 == e1:
                continue  # no coloring can satisfy a self-loop (Warp's native code reads outside its lists)
            self.neighbors[e0].append(e1)
            self.neighbors[e1].append(e0)
        self.colors = [-1] * node_count


def _ordered_greedy(order, graph: _Graph) -> int:
    """Each node in `order` takes the lowest color none of its colored neighbours has."""
    colors, neighbors = graph.colors, graph.neighbors
    color_count = 0
    for node in order:
        used = {colors[n] for n in neighbors[node]}
        color = 0
        while color in used:
            color += 1
        colors[node] = color
        color_count = max(color_count, color + 1)
    return color_count


class _WeightBuckets:
    """Nodes by weight (count of already-ordered neighbours), each bucket a list with O(1) removal by swapping in
    its last node: the layout decides which node of equal weight comes next, so it is Warp's exactly."""

    def __init__(self, node_count: int):
        self.weight = [0] * node_count  # -1 once ordered
        self.slot = [-1] * node_count
        self.buckets = [[]]
        self.max_weight = 0

    def add(self, weight: int, node: int) -> None:
        while weight >= len(self.buckets):
            self.buckets.append([])
        self.slot[node] = len(self.buckets[weight])
        self.weight[node] = weight
        self.buckets[weight].append(node)
        self.max_weight = max(self.max_weight, weight)

    def pop_max(self) -> int:
        bucket = self.buckets[self.max_weight]
        node = bucket[0]
        self.slot[node] = -1
        if len(bucket) > 1:
            self.slot[bucket[-1]] = 0
            bucket[0] = bucket[-1]
        bucket.pop()
        self.weight[node] = -1
        if not bucket:
            self.max_weight = next((w for w in range(self.max_weight - 1, -1, -1) if self.buckets[w]), 0)
        return node

    def increase(self, node: int) -> None:
        weight = self.weight[node]
        bucket, slot = self.buckets[weight], self.slot[node]
        self.slot[bucket[-1]] = slot
        bucket[slot] = bucket[-1]
        bucket.pop()
        self.add(weight + 1, node)

    def empty(self) -> bool:
        return self.max_weight <= 0 and not self.buckets[0]


def _mcs(graph: _Graph) -> int:
    node_count = len(graph.colors)
    buckets = _WeightBuckets(node_count)
    buckets.add(0, 0)
    order = []
    next_unvisited = 0  # nodes before it are ordered (a new component starts at the first weight-0 node)
    for _ in range(node_count):
        if buckets.empty():
            while buckets.weight[next_unvisited] < 0:
                next_unvisited += 1
            buckets.add(0, next_unvisited)
        node = buckets.pop_max()
        order.append(node)
        for neighbor in graph.neighbors[node]:
            weight = buckets.weight[neighbor]
            if weight == 0:  # weight-0 nodes are in no bucket
                buckets.add(1, neighbor)
            elif weight > 0:
                buckets.increase(neighbor)
    return _ordered_greedy(order, graph)


def _degree_ordered_greedy(graph: _Graph) -> int:
    degrees = [len(n) for n in graph.neighbors]
    order = sorted(range(len(degrees)), key=lambda node: -degrees[node])
    return _ordered_greedy(order, graph)


def graph_coloring_assign(edges: array, node_colors: array,
                          algorithm: GraphColoringAlgorithm = GraphColoringAlgorithm.MCS) -> int:
    """Colors the nodes of the undirected graph `edges` ((edge_count, 2) int32, CPU) into `node_colors`
    ((node_count,) int32, CPU; its length is the node count) so that no edge joins two nodes of one color.
    Returns the number of colors."""
    _check_graph_arrays(edges, node_colors)
    node_count = node_colors.shape[0]
    if node_count == 0:
        raise RuntimeError("Cannot color an empty graph")
    graph = _Graph(node_count, edges.numpy(), "Graph coloring failed")
    if algorithm == GraphColoringAlgorithm.MCS:
        color_count = _mcs(graph)
    elif algorithm == GraphColoringAlgorithm.GREEDY:
        color_count = _degree_ordered_greedy(graph)
    else:
        raise RuntimeError(f"Graph coloring failed: Unrecognized coloring algorithm number: {int(algorithm)}!")
    node_colors.numpy()[:] = graph.colors
    return color_count


def _group_ratio(groups) -> tuple[np.float32, int, int]:
    """(largest/smallest group size as Warp's float, largest group, smallest group): the first of equal sizes."""
    sizes = [len(g) for g in groups]
    biggest = sizes.index(max(sizes))
    smallest = sizes.index(min(sizes))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.float32(sizes[biggest]) / np.float32(sizes[smallest]), biggest, smallest


def _movable(graph: _Graph, group, target_color: int) -> int:
    """Index in `group` of its first node with no neighbour of `target_color`; -1 if none."""
    colors = graph.colors
    return next((i for i, node in enumerate(group)
                 if all(colors[n] != target_color for n in graph.neighbors[node])), -1)


def _balance(graph: _Graph, groups, target_ratio: float, max_iterations: int) -> tuple[np.float32, bool]:
    """Warp's balance_color_groups: (the ratio reached, whether the iteration limit stopped it)."""
    ratio = np.float32(-1.0)
    last_node = last_color = -1
    iteration = 0
    while True:
        previous = ratio
        ratio, biggest, smallest = _group_ratio(groups)
        if 0.0 < previous < ratio:
            # ratios only fall until the first rise, so undoing the last move restores the best coloring
            graph.colors[last_node] = last_color
            return previous, False
        if len(groups[biggest]) - len(groups[smallest]) <= 2 or ratio <= np.float32(target_ratio):
            return ratio, False
        source, index = biggest, _movable(graph, groups[biggest], smallest)
        if index == -1:
            for color, group in enumerate(groups):
                if color not in (biggest, smallest):
                    index = _movable(graph, group, smallest)
                    if index != -1:
                        source = color
                        break
        if index == -1:
            return ratio, False
        if iteration == max_iterations:
            return ratio, True
        group = groups[source]
        node = group[index]
        last_node, last_color = node, source
        graph.colors[node] = smallest
        group[index] = group[-1]
        group.pop()
        groups[smallest].append(node)
        iteration += 1


def graph_coloring_balance(edges: array, node_colors: array, color_count: int, target_max_min_ratio: float, *,
                           max_iterations: int | None = None) -> float:
    """Recolors nodes of a valid coloring (in place) so that the color groups' largest/smallest size ratio falls
    towards `target_max_min_ratio`, keeping the coloring valid. Returns the ratio reached (higher than the
    target when the graph allows no further move or `max_iterations` recolorings were made, with a warning)."""
    _check_graph_arrays(edges, node_colors)
    node_count = node_colors.shape[0]
    if max_iterations is None:
        max_iterations = node_count
    elif isinstance(max_iterations, (bool, np.bool_)):
        raise TypeError(f"max_iterations must be an integer or None, got {type(max_iterations).__name__}")
    else:
        try:
            max_iterations = operator.index(max_iterations)
        except TypeError:
            raise TypeError(f"max_iterations must be an integer or None, got {type(max_iterations).__name__}") \
                from None
        if max_iterations < 0:
            raise ValueError(f"max_iterations must be non-negative, got {max_iterations}")
        if max_iterations > _INT32_MAX:
            raise ValueError(f"max_iterations must not exceed {_INT32_MAX}, got {max_iterations}")

    graph = _Graph(node_count, edges.numpy(), "Graph coloring balance failed")
    colors = node_colors.numpy()
    if color_count <= 1:
        return 1.0
    graph.colors = colors.tolist()
    groups = [[] for _ in range(color_count)]
    for node, color in enumerate(graph.colors):
        if not 0 <= color < color_count:
            raise RuntimeError(f"Graph coloring balance failed: Node {node} has color {color}, but valid colors "
                               f"are in the range [0, {color_count}).")
        groups[color].append(node)
    ratio, limit_reached = _balance(graph, groups, target_max_min_ratio, max_iterations)
    colors[:] = graph.colors
    if limit_reached:
        get_logger().warning(
            f"Graph coloring stopped because it reached the {max_iterations}-iteration limit "
            f"(achieved ratio {float(ratio):g}, target {target_max_min_ratio:g}).", UserWarning, stacklevel=2)
    return float(ratio)


def graph_coloring_get_groups(node_colors: array, color_count: int, return_wp_array: bool = True,
                              device="cpu") -> tuple:
    """The node ids of each color, in increasing order: a tuple of `color_count` int32 arrays (on `device`), or
    numpy arrays with return_wp_array=False."""
    if color_count < 0:
        raise RuntimeError("color_count must be non-negative")
    if color_count == 0:
        return ()
    if not node_colors.device.is_cpu:
        raise RuntimeError("node_colors array must be on the CPU")
    if node_colors.dtype != _t.int32:
        raise RuntimeError(f"node_colors array must have dtype int32, got {_t.type_repr(node_colors.dtype)}")
    if node_colors.ndim != 1:
        raise RuntimeError(f"node_colors array must be 1-dimensional, got {node_colors.ndim} dimensions")
    colors = node_colors.numpy()
    bad = np.flatnonzero((colors < 0) | (colors >= color_count))
    if len(bad):
        # Warp's kernel would write outside its group arrays
        raise RuntimeError(f"Node {int(bad[0])} has color {int(colors[bad[0]])}, but valid colors are in the "
                           f"range [0, {color_count}).")
    order = np.argsort(colors, kind="stable").astype(np.int32)
    ends = np.cumsum(np.bincount(colors, minlength=color_count))
    groups = np.split(order, ends[:-1])
    if return_wp_array:
        return tuple(array(g, dtype=_t.int32, device=device) for g in groups)
    return tuple(groups)
