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
gives each child's centroid bounds and box, the next level's inputs), numpy keeps the level's node list; then
numpy numbers the nodes in depth-first preorder with skip indices, the right child first (Warp's traversal
pops it first), the layout of core/geometry.py (bvh.build_tree's output). The tree is the same whatever the thread count."""

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
    # per node of the level: its centroid bounds and box (the root's here, the others from their parent's split)
    bounds = [np.empty((1, 3), np.float32) for _ in range(4)]
    bk.host_launch(bk.item_bounds, 1, items[:2] + [n] + [bk.view(b, vec3) for b in bounds])
    # the launches' per-node inputs and outputs, for a level's m nodes in their first m (2m) rows: allocated and
    # wrapped once (a level has at most n / 2 inner nodes), the views' construction being most of a launch's cost
    seg_starts, seg_counts, n_lefts = (np.empty(n, np.int32) for _ in range(3))
    seg_bounds = [np.empty((n, 3), np.float32) for _ in range(4)]
    child = [np.empty((n, 3), np.float32) for _ in range(4)]
    split_args = items + [bk.view(seg_starts, int32), bk.view(seg_counts, int32),
                          *(bk.view(b, vec3) for b in seg_bounds), bk.view(n_lefts, int32),
                          *(bk.view(b, vec3) for b in child)]
    # nodes numbered level by level while building: children, and a leaf's range of `order`
    levels = []  # per level: (first node id, segment starts, counts, left child ids, right child ids)
    level_boxes = []  # per level: its nodes' boxes (lowers, uppers), which a refit would compute again
    seg_s, seg_c = np.array([0]), np.array([n])
    next_id = 1
    for level in range(MAX_DEPTH + 1):
        first = next_id - seg_s.size
        level_boxes.append((bounds[2], bounds[3]))
        inner = (seg_c > leaf_size) & (level < MAX_DEPTH)
        left_ids = np.full(seg_s.size, -1, np.int64)
        right_ids = np.full(seg_s.size, -1, np.int64)
        s, c = seg_s[inner], seg_c[inner]
        if s.size:
            # each node's SAH split and the partition of its items in `order`: one thread a node
            m = s.size
            seg_starts[:m], seg_counts[:m] = s, c
            for into, b in zip(seg_bounds, bounds):
                into[:m] = b[inner]
            bk.host_launch(bk.sah_split, m, split_args)
            n_left = n_lefts[:m].astype(np.int64)
            # (the boxes copied: they are the nodes' boxes, and the next level's launch overwrites `child`)
            bounds = [child[0][:2 * m], child[1][:2 * m], child[2][:2 * m].copy(), child[3][:2 * m].copy()]
            ids = next_id + 2 * np.arange(s.size)
            left_ids[inner], right_ids[inner] = ids, ids + 1
            next_id += 2 * s.size
        levels.append((first, seg_s, seg_c, left_ids, right_ids))
        if not s.size:
            break
        seg_s = np.stack([s, s + n_left], axis=1).reshape(-1)
        seg_c = np.stack([n_left, c - n_left], axis=1).reshape(-1)
    # subtree sizes bottom-up, then preorder numbers top-down
    num_nodes = next_id
    size = np.ones(num_nodes, np.int64)
    start = np.full(num_nodes, -1, np.int32)
    end = np.full(num_nodes, -1, np.int32)
    depth = np.zeros(num_nodes, np.int32)
    for level, (first, s, c, lids, _) in enumerate(levels):
        ids = first + np.arange(s.size)
        depth[ids] = level
        leaf = lids < 0
        start[ids[leaf]], end[ids[leaf]] = s[leaf], s[leaf] + c[leaf]
    for first, s, _, lids, rids in reversed(levels):
        ids = first + np.arange(s.size)
        inner = lids >= 0
        size[ids[inner]] = 1 + size[lids[inner]] + size[rids[inner]]
    pre = np.zeros(num_nodes, np.int64)
    for first, s, _, lids, rids in levels:
        ids = first + np.arange(s.size)
        inner = lids >= 0
        # the right child first: Warp's traversal pops it first, so a query meets the items in Warp's order
        pre[rids[inner]] = pre[ids[inner]] + 1
        pre[lids[inner]] = pre[ids[inner]] + 1 + size[rids[inner]]
    out = {k: np.zeros(num_nodes, np.int32) for k in ("skip", "start", "end", "depth")}
    out["skip"][pre] = pre + size
    out["start"][pre], out["end"][pre], out["depth"][pre] = start, end, depth
    out["primitives"] = order
    out["node_lowers"] = np.empty((num_nodes, 3), np.float32)
    out["node_uppers"] = np.empty((num_nodes, 3), np.float32)
    for (first, s, _, _, _), (lo, hi) in zip(levels, level_boxes):
        ids = pre[first + np.arange(s.size)]
        out["node_lowers"][ids], out["node_uppers"][ids] = lo, hi
    return out
