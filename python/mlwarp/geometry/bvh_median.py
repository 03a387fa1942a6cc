"""wp.Bvh's constructor="median" on the CPU: each node's items split at the median of their centroids along the
longest axis of the centroid bounds (the first of equal extents), the left child taking the count // 2 items
first in the order (centroid, item index) on that axis (NaN last, as numpy sorts); leaves hold up to leaf_size
items, in that order of their parent's axis. Warp's median build (native/bvh.cpp) picks the axis from the
node's box and lets std::nth_element order the items of a side; this tree is fixed by the order above alone,
whatever the thread count or selection algorithm (the queries find the same items either way).

The build runs level by level as bvh_sah.py's: every inner node of a level is one thread of `median_split`,
which finds its centroid bounds, selects its median in place (Hoare's quickselect, median-of-three pivots)
instead of sorting, and sorts a child that is a leaf. A centroid is kept as lower + upper in float64 (exact,
and ordered as the centroid, so ties are real ties, broken by item index), moved with its item, so every pass
reads sequentially. The tree's shape follows from the counts alone (a node of c items has children of c // 2
and c - c // 2), so a thread numbers its children in depth-first preorder itself (the right child first, as
Warp's traversal pops it first: core/geometry.py's layout) from the size of the right child's subtree, and
writes the node arrays there; the node boxes are the refit's (bvh.refit_tree)."""

from __future__ import annotations

import numpy as np

from mlwarp.arrays.array import array
from mlwarp.library.builtins import namespace as wp
from mlwarp.kernels.func import func
from mlwarp.kernels.kernel import kernel
from mlwarp.types import float64, int32
from mlwarp.core.vector import vec3, vec3d
from mlwarp.geometry import build_kernels as bk

INF = float("inf")


@func
def _before(key_a: float64, item_a: int32, key_b: float64, item_b: int32):
    """Whether (key_a, item_a) comes before (key_b, item_b): by key, NaN after every number (a total order, or
    the selection's scans could run past their sentinels), ties by item index."""
    result = False
    if key_a < key_b:
        result = True
    elif key_a == key_b:
        result = item_a < item_b
    elif key_b != key_b:
        result = key_a == key_a or item_a < item_b
    return result


@func
def _swap(cent: array(dtype=vec3d), order: array(dtype=int32), a: int32, b: int32):
    p = cent[a]
    cent[a] = cent[b]
    cent[b] = p
    o = order[a]
    order[a] = order[b]
    order[b] = o


@func
def _order_pair(cent: array(dtype=vec3d), order: array(dtype=int32), axis: int32, a: int32, b: int32):
    """Positions a < b in order."""
    if _before(cent[b][axis], order[b], cent[a][axis], order[a]):
        _swap(cent, order, a, b)


@func
def _select(cent: array(dtype=vec3d), order: array(dtype=int32), axis: int32, first: int32, end: int32,
            nth: int32):
    """Quickselect (Numerical Recipes' `select`) by (cent[k][axis], order[k]): afterwards position nth of
    [first, end) holds the item it would hold sorted, the ones before it come before it. Keys are distinct (item
    indices are), so the pivot's scans stop at the sentinels the median of three leaves at both ends."""
    lo = first
    hi = end - 1
    while hi > lo + 1:
        _swap(cent, order, (lo + hi) // 2, lo + 1)
        _order_pair(cent, order, axis, lo, hi)
        _order_pair(cent, order, axis, lo + 1, hi)
        _order_pair(cent, order, axis, lo, lo + 1)
        pivot = cent[lo + 1]
        pivot_key = pivot[axis]
        pivot_item = order[lo + 1]
        i = lo + 1
        j = hi
        while True:
            i += 1
            while _before(cent[i][axis], order[i], pivot_key, pivot_item):
                i += 1
            j -= 1
            while _before(pivot_key, pivot_item, cent[j][axis], order[j]):
                j -= 1
            if j < i:
                break
            _swap(cent, order, i, j)
        cent[lo + 1] = cent[j]
        order[lo + 1] = order[j]
        cent[j] = pivot
        order[j] = pivot_item
        if j >= nth:
            hi = j - 1
        if j <= nth:
            lo = i
    if hi == lo + 1:
        _order_pair(cent, order, axis, lo, hi)


@func
def _sort(cent: array(dtype=vec3d), order: array(dtype=int32), axis: int32, first: int32, end: int32):
    """Insertion sort of [first, end) (a leaf's few items)."""
    for a in range(first + 1, end):
        p = cent[a]
        item = order[a]
        b = a
        while b > first and _before(p[axis], item, cent[b - 1][axis], order[b - 1]):
            cent[b] = cent[b - 1]
            order[b] = order[b - 1]
            b -= 1
        cent[b] = p
        order[b] = item


@func
def _tree_size(count: int32, leaf_size: int32):
    """Nodes of the median tree over `count` items: 2 leaves - 1. The counts of one depth are two consecutive
    values v, v + 1 (halving keeps them so), counted here with their multiplicities: O(log count)."""
    v = count
    num_v = int32(1)
    num_w = int32(0)  # of v + 1
    leaves = int32(0)
    while num_v + num_w > 0:
        m = v // 2  # the halves of v and of v + 1 are m and m + 1
        num_m = int32(0)
        num_m1 = int32(0)
        if v <= leaf_size:
            leaves += num_v
        elif v % 2 == 0:
            num_m += 2 * num_v
        else:
            num_m += num_v
            num_m1 += num_v
        if v + 1 <= leaf_size:
            leaves += num_w
        elif v % 2 == 1:
            num_m1 += 2 * num_w
        else:
            num_m += num_w
            num_m1 += num_w
        v = m
        num_v = num_m
        num_w = num_m1
    return 2 * leaves - 1


@func
def _child(node: int32, first: int32, count: int32, leaf_size: int32, level: int32, node_start: array(dtype=int32),
           node_count: array(dtype=int32), skip: array(dtype=int32), start: array(dtype=int32),
           end: array(dtype=int32), depth: array(dtype=int32)):
    """A child's item range; a leaf's node arrays (an inner node writes its own when the next level splits it)."""
    node_start[node] = first
    node_count[node] = count
    if count <= leaf_size:
        skip[node] = node + 1
        start[node] = first
        end[node] = first + count
        depth[node] = level


@kernel(enable_backward=False)
def centroid_sums(lowers: array(dtype=vec3), uppers: array(dtype=vec3), cent: array(dtype=vec3d)):
    i = wp.tid()
    lo = lowers[i]
    hi = uppers[i]
    cent[i] = vec3d(float64(lo[0]) + float64(hi[0]), float64(lo[1]) + float64(hi[1]),
                    float64(lo[2]) + float64(hi[2]))


@kernel(enable_backward=False)
def median_split(cent: array(dtype=vec3d), order: array(dtype=int32), leaf_size: int32, level: int32,
                 level_nodes: array(dtype=int32), next_nodes: array(dtype=int32), node_start: array(dtype=int32),
                 node_count: array(dtype=int32), skip: array(dtype=int32), start: array(dtype=int32),
                 end: array(dtype=int32), depth: array(dtype=int32)):
    # Thread `seg` splits node level_nodes[seg] (a preorder number; its item range written by its parent's split)
    # and lists its children in next_nodes[2 seg], [2 seg + 1]. Ranges of a level are disjoint, so the threads'
    # writes to cent and order never meet
    seg = wp.tid()
    node = level_nodes[seg]
    s = node_start[node]
    c = node_count[node]
    inf = float64(INF)
    c_lo = vec3d(inf, inf, inf)
    c_hi = vec3d(-inf, -inf, -inf)
    for k in range(s, s + c):
        p = cent[k]
        c_lo = wp.min(c_lo, p)
        c_hi = wp.max(c_hi, p)
    ext = c_hi - c_lo
    axis = int32(0)
    if ext[1] > ext[0]:
        axis = int32(1)
    if ext[2] > ext[axis]:
        axis = int32(2)
    half = c // 2
    _select(cent, order, axis, s, s + c, s + half)
    if half <= leaf_size:
        _sort(cent, order, axis, s, s + half)
    if c - half <= leaf_size:
        _sort(cent, order, axis, s + half, s + c)
    right = node + 1
    left = right + _tree_size(c - half, leaf_size)
    skip[node] = left + _tree_size(half, leaf_size)
    start[node] = -1
    end[node] = -1
    depth[node] = level
    _child(right, s + half, c - half, leaf_size, level + 1, node_start, node_count, skip, start, end, depth)
    _child(left, s, half, leaf_size, level + 1, node_start, node_count, skip, start, end, depth)
    next_nodes[2 * seg] = right
    next_nodes[2 * seg + 1] = left


def build_median_tree(lowers: np.ndarray, uppers: np.ndarray, leaf_size: int) -> dict:
    """The preorder node arrays (skip, start, end, depth, primitives) of the median tree over the boxes."""
    n = lowers.shape[0]
    order = np.arange(n, dtype=np.int32)
    if n <= leaf_size:  # (no items, or one leaf)
        one = np.ones(min(n, 1), np.int32)
        return {"skip": one, "start": one * 0, "end": one * n, "depth": one * 0, "primitives": order}
    cent = np.empty((n, 3), np.float64)
    bk.host_launch(centroid_sums, n, [bk.view(np.ascontiguousarray(lowers, np.float32), vec3),
                                      bk.view(np.ascontiguousarray(uppers, np.float32), vec3), bk.view(cent, vec3d)])
    cap = 2 * n - 1  # (a tree over n items has at most 2n - 1 nodes)
    node_start, node_count = np.empty(cap, np.int32), np.empty(cap, np.int32)
    tree = {k: np.empty(cap, np.int32) for k in ("skip", "start", "end", "depth")}
    level_nodes = np.zeros(n // 2, np.int32)  # a level has at most n / 2 inner nodes; the root is node 0
    next_nodes = np.empty(2 * (n // 2), np.int32)
    node_start[0], node_count[0] = 0, n
    # wrapped once (a view's construction is most of a launch's cost)
    views = [bk.view(a, int32) for a in (level_nodes, next_nodes, node_start, node_count, tree["skip"],
                                          tree["start"], tree["end"], tree["depth"])]
    items = [bk.view(cent, vec3d), bk.view(order, int32), leaf_size]
    m, level = 1, 0
    while m:  # (halving: about log2(n / leaf_size) levels)
        bk.host_launch(median_split, m, items + [level] + views, uneven=True)
        children = next_nodes[:2 * m]
        inner = children[node_count[children] > leaf_size]
        m, level = inner.size, level + 1
        level_nodes[:m] = inner
    num_nodes = int(tree["skip"][0])  # (the root's subtree)
    out = {k: a[:num_nodes] for k, a in tree.items()}
    out["primitives"] = order
    return out
