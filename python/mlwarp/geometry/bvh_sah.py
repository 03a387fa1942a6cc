"""wp.Bvh's constructors on the CPU: Warp's names and errors for `constructor=`, and the surface-area-heuristic
("sah", Warp's CPU default) top-down build.

Warp's SAH build (native/bvh.cpp, 1.19), which this one follows split for split: a node's items are binned into
16 buckets along the longest axis of their centroids' bounds; the split after the bucket minimising
area(left) * count(left) + area(right) * count(right) (relative to the node's area) puts the items whose centroid
lies below it on the left; when that leaves a side empty (or the centroids coincide) the node splits its items in
the middle of their current order. A node becomes a leaf when it holds at most leaf_size items or lies at depth 31
(BVH_QUERY_STACK_SIZE - 1: Warp's stack-based traversal needs a free slot per level; the remaining items share
that leaf). The partition is Warp's too: in place, libstdc++'s std::partition (the first item not below the
split from the front swaps with the last one below it from the back), so the tree, each leaf's item order and
the order a query meets the items in are Warp's.

The build runs level by level: every node of a level is one thread of the build_kernels.sah_split kernel (its
buckets, cost and partition; the items' boxes move with them, so the reads are sequential; the partition also
writes each child's item range, centroid bounds and box, the next level's inputs, into the node arrays, numbered
level by level), numpy only lists a level's inner nodes; then one thread (build_kernels.sah_preorder) numbers
the nodes in depth-first preorder with skip indices, the right child first (Warp's traversal pops it first),
the layout of core/geometry.py (bvh_median.build_median_tree's too). The tree is the same whatever the thread count."""

from __future__ import annotations

import numpy as np

from mlwarp.types import int32
from mlwarp.core.vector import vec3
from mlwarp.geometry import build_kernels as bk

CONSTRUCTORS = ("sah", "median", "lbvh", "cubql")  # Warp's BvhConstructor names
SAH_BUCKETS = 16
MAX_DEPTH = 31  # BVH_QUERY_STACK_SIZE - 1


def is_cubql_available() -> bool:
    """Whether the cuBQL BVH builder is available: mlwarp has no cuBQL library, so never."""
    return False


def resolve_constructor(constructor, default: str = "sah") -> str:
    """`constructor=` as one of CONSTRUCTORS: None is the CPU's default; a name as Warp's BvhConstructor.from_str
    reads it (any case); an enum member by its name."""
    if constructor is None:
        return default
    name = getattr(constructor, "name", constructor)
    if isinstance(name, str) and name.lower() in CONSTRUCTORS:
        return name.lower()
    raise ValueError(f"Unknown BVH constructor '{name}', expected one of: {', '.join(CONSTRUCTORS)}")


def build_sah_tree(lowers: np.ndarray, uppers: np.ndarray, leaf_size: int) -> dict:
    """The preorder node arrays (skip, start, end, depth, primitives) of Warp's SAH tree over the boxes, and
    its node boxes (node_lowers, node_uppers: the build finds them on the way)."""
    n = lowers.shape[0]
    if n == 0:
        empty = np.zeros(0, np.int32)
        return {"skip": empty, "start": empty.copy(), "end": empty.copy(), "depth": empty.copy(),
                "primitives": empty.copy()}
    lowers = np.ascontiguousarray(lowers, np.float32)
    uppers = np.ascontiguousarray(uppers, np.float32)
    order = np.arange(n, dtype=np.int32)
    # the items' boxes in `order`'s order (they move with their items)
    items = [bk.view(lowers.copy(), vec3), bk.view(uppers.copy(), vec3), bk.view(order, int32)]
    # the nodes, numbered level by level (a tree over n items has at most 2n - 1): item range, centroid bounds
    # and box (the root's here, the others from their parent's split), left child (-1: a leaf; the right child
    # is the next node). Allocated and wrapped once: the views' construction is most of a launch's cost
    cap = 2 * n - 1
    node_start, node_count = np.empty(cap, np.int32), np.empty(cap, np.int32)
    node_left = np.full(cap, -1, np.int32)
    node_boxes = [np.empty((cap, 3), np.float32) for _ in range(4)]  # centroid min, max; box lower, upper
    level_nodes = np.empty(max(n // 2, 1), np.int32)  # a level has at most n / 2 inner nodes
    node_start[0], node_count[0] = 0, n
    box_views = [bk.view(b, vec3) for b in node_boxes]
    bk.host_launch(bk.item_bounds, 1, items[:2] + [n] + box_views)
    tree_views = [bk.view(node_start, int32), bk.view(node_count, int32), *box_views, bk.view(node_left, int32)]
    level_view = bk.view(level_nodes, int32)
    first, count, next_id = 0, 1, 1  # the level's nodes: [first, first + count)
    for level in range(MAX_DEPTH):  # (nodes at depth MAX_DEPTH are leaves)
        inner = np.flatnonzero(node_count[first:first + count] > leaf_size)
        m = inner.size
        if not m:
            break
        level_nodes[:m] = inner + first
        # each node's SAH split and the partition of its items in `order`: one thread a node
        bk.host_launch(bk.sah_split, m, items + [level_view, next_id] + tree_views, uneven=True)
        first, count, next_id = next_id, 2 * m, next_id + 2 * m
    num_nodes = next_id
    out = {k: np.empty(num_nodes, np.int32) for k in ("skip", "start", "end", "depth")}
    out["primitives"] = order
    out["node_lowers"] = np.empty((num_nodes, 3), np.float32)
    out["node_uppers"] = np.empty((num_nodes, 3), np.float32)
    scratch = [bk.view(np.empty(num_nodes, np.int32), int32) for _ in range(3)]  # size, preorder number, depth
    bk.host_launch(bk.sah_preorder, 1, [tree_views[6], *tree_views[:2], box_views[2], box_views[3], num_nodes,
                                        *scratch, *(bk.view(out[k], int32) for k in ("skip", "start", "end", "depth")),
                                        bk.view(out["node_lowers"], vec3), bk.view(out["node_uppers"], vec3)])
    return out
