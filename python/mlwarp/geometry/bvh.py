"""`wp.Bvh`: a bounding volume hierarchy over user boxes (lowers[i], uppers[i]), queried in kernels.

Layout (core/geometry.py): nodes in depth-first preorder with skip indices, so a kernel traverses
with a node index instead of a stack. The preorder visits a node's right child (the items above its split)
before its left one: Warp's stack traversal pushes left then right and pops the right child first, so the
queries meet the items in Warp's order (within a leaf of several items, in this build's order).
constructor="sah" (the default on the CPU, as in Warp) is the surface-area heuristic build of bvh_sah.py;
constructor="median" splits each node's items at the median of their centroids along the longest axis of the
centroid bounds, all nodes of one level at a time (bvh_median.py: a selection per node, one thread a node);
leaves hold up to leaf_size items. refit() recomputes the node boxes in place with two kernels (refit.py:
subtrees one thread each, then the nodes above them on one thread).
The queries return the same set of items as Warp's (each item whose box passes the query's test; items of
a one-item leaf by its node's box, which is that item's box).

A grouped tree (groups=: one int32 group id per item) is Warp's layout: a top-level median split over the
sorted distinct group ids, each group's leaf expanded into its own subtree over that group's items, so a
query started at a group's root (wp.bvh_get_group_root) sees that group's items only.

A Bvh over boxes on a CUDA device is built, rebuilt and refit on the host from copies of the boxes, its node
arrays and descriptor then copied to device memory (device_mirror.py), so its id is a device address; its
descriptor's item words point at the user's device arrays. Warp builds CUDA trees on the GPU (LBVH by default;
mlwarp builds "sah" for None or "lbvh", "median" when asked): the queries find the same items."""

from __future__ import annotations

import operator
import warnings

import numpy as np

from mlwarp import runtime as _runtime_package
from mlwarp.core.vector import vec3
from mlwarp.core import types as wt
from mlwarp.types import int32
from mlwarp.geometry import build_kernels as bk
from mlwarp.geometry import refit
from mlwarp.core import geometry as layout
from mlwarp.runtime import capture as _capture
from mlwarp.kernels.struct import struct
from mlwarp.geometry.bvh_sah import build_sah_tree, resolve_constructor
from mlwarp.geometry.bvh_median import build_median_tree
from mlwarp.geometry.device_mirror import DeviceMirror
from mlwarp.core.intrinsics import KernelOnly

FLT_MAX = float(np.finfo(np.float32).max)
def _query_struct(name: str, layout_fields=layout.BVH_QUERY_FIELDS):
    py = {"ui64": wt.uint64, "i32": wt.int32, "f32": wt.int32}  # (a float's bits: core/geometry.py)
    fields = {f: py[t] for f, t in layout_fields}
    cls = type(name, (), {"__annotations__": fields, "__module__": __name__,
                          "__doc__": "The state of a BVH query (advanced by wp.bvh_query_next)."})
    return struct(cls)


BvhQuery = _query_struct("BvhQuery")
_KIND_TYPES = {kind: _query_struct(name) for kind, name in layout.BVH_QUERY_NAMES.items()}

bvh_query_aabb = KernelOnly("bvh_query_aabb", "bvh_query_aabb(id: uint64, lower: vec3, upper: vec3) -> BvhQuery")
bvh_query_ray = KernelOnly("bvh_query_ray", "bvh_query_ray(id: uint64, start: vec3, dir: vec3) -> BvhQuery")
bvh_query_sphere = KernelOnly("bvh_query_sphere", "bvh_query_sphere(id: uint64, center: vec3, radius: float32) -> "
                                                   "BvhQuery")
bvh_query_capsule = KernelOnly("bvh_query_capsule", "bvh_query_capsule(id: uint64, start: vec3, dir: vec3, "
                                                     "radius: float32) -> BvhQuery")
bvh_query_next = KernelOnly("bvh_query_next", "bvh_query_next(query: BvhQuery, index: int32, max_dist: float32 = "
                                               "FLT_MAX) -> bool: advances query, sets index to the next item")
bvh_query_aabb._wp_query_type_ = _KIND_TYPES[layout.BVH_AABB]
bvh_query_ray._wp_query_type_ = _KIND_TYPES[layout.BVH_RAY]
bvh_query_sphere._wp_query_type_ = _KIND_TYPES[layout.BVH_SPHERE]
bvh_query_capsule._wp_query_type_ = _KIND_TYPES[layout.BVH_CAPSULE]
bvh_query_next._wp_query_types_ = (BvhQuery, *_KIND_TYPES.values())
for _kind_type in _KIND_TYPES.values():
    _kind_type._wp_erased_query_ = BvhQuery  # a query of one kind converts to the erased parent (frontend/geometry.py)
for _query_type in (BvhQuery, *_KIND_TYPES.values()):
    _query_type._wp_iter_next_ = bvh_query_next  # `for index in query` (frontend/geometry.py)


def build_grouped_tree(lowers, uppers, groups, leaf_size, builder=None) -> dict:
    """A tree whose subtrees are the groups' (see the module docstring), with the groups' ids and roots."""
    order = np.argsort(groups, kind="stable")
    ids, firsts, counts = np.unique(groups[order], return_index=True, return_counts=True)
    subtrees = [(builder or build_median_tree)(lowers[order[f:f + c]], uppers[order[f:f + c]], leaf_size)
                for f, c in zip(firsts, counts)]
    parts = {k: [] for k in ("skip", "start", "end", "depth", "primitives")}
    roots = np.zeros(ids.size, np.int32)
    state = {"nodes": 0, "primitives": 0}

    def emit(first_group: int, end_group: int, depth: int):
        if end_group - first_group == 1:  # a group's subtree, its numbers moved to their place
            g, t, base, at = first_group, subtrees[first_group], state["nodes"], state["primitives"]
            roots[g] = base
            leaf = t["start"] >= 0
            parts["skip"].append(t["skip"] + base)
            parts["start"].append(np.where(leaf, t["start"] + at, -1).astype(np.int32))
            parts["end"].append(np.where(leaf, t["end"] + at, -1).astype(np.int32))
            parts["depth"].append(t["depth"] + depth)
            parts["primitives"].append(order[firsts[g] + t["primitives"]].astype(np.int32))
            state["nodes"] += t["skip"].size
            state["primitives"] += t["primitives"].size
            return
        state["nodes"] += 1
        skip = np.zeros(1, np.int32)
        for k, a in (("skip", skip), ("start", np.full(1, -1, np.int32)), ("end", np.full(1, -1, np.int32)),
                     ("depth", np.full(1, depth, np.int32))):
            parts[k].append(a)
        mid = (first_group + end_group) // 2
        emit(mid, end_group, depth + 1)  # (the right child first: preorder)
        emit(first_group, mid, depth + 1)
        skip[0] = state["nodes"]

    if ids.size:
        emit(0, ids.size, 0)
    tree = {k: (np.concatenate(v).astype(np.int32) if v else np.zeros(0, np.int32)) for k, v in parts.items()}
    # the items of a group lie contiguous in the primitive list, the groups in preorder
    tree["group_ids"], tree["group_roots"] = ids.astype(np.int32), roots
    tree["max_depth"] = max((int(t["depth"].max()) for t in subtrees if t["depth"].size), default=0)
    return tree


def _cpu_constructor(constructor: str) -> str:
    if constructor == "lbvh":
        warnings.warn("LBVH constructor is not available for a CPU tree. Falling back to SAH constructor.",
                      UserWarning, stacklevel=3)
        return "sah"
    return constructor


class Bvh:
    """Bounding Volume Hierarchy (BVH) for accelerated spatial queries (Warp's wp.Bvh)."""

    runtime = _runtime_package  # Warp's attribute: the runtime that owns the object (here the mlwarp.runtime package)

    def __new__(cls, *args, **kwargs):
        instance = super().__new__(cls)
        instance.id = None
        return instance

    def __init__(self, lowers, uppers, constructor=None, groups=None, leaf_size: int = 1):
        if len(lowers) != len(uppers):
            raise RuntimeError("The same number of lower and upper bounds must be provided")
        if lowers.device != uppers.device:
            raise RuntimeError("Lower and upper bounds must live on the same device")
        if not wt.types_equal(lowers.dtype, vec3) or not lowers.is_contiguous:
            raise RuntimeError("lowers should be a contiguous array of type wp.vec3")
        if not wt.types_equal(uppers.dtype, vec3) or not uppers.is_contiguous:
            raise RuntimeError("uppers should be a contiguous array of type wp.vec3")
        constructor = resolve_constructor(constructor)
        if constructor == "cubql" and groups is not None:
            raise RuntimeError("Grouped BVHs are not supported with constructor='cubql'")
        if groups is not None:
            if not wt.types_equal(groups.dtype, wt.int32) or not groups.is_contiguous:
                raise RuntimeError("groups should be a contiguous array of type wp.int32")
            if groups.device != lowers.device:
                raise RuntimeError("groups must live on the same device as lowers/uppers")
            if len(groups) != len(lowers):
                raise RuntimeError("groups must have the same length as lowers/uppers")
        leaf_size = operator.index(leaf_size)
        if leaf_size < 1:
            raise ValueError(f"leaf_size must be greater than or equal to 1, current value: {leaf_size}")
        self.device = lowers.device
        self.lowers, self.uppers, self.groups = lowers, uppers, groups
        self.leaf_size = leaf_size
        if constructor == "cubql":  # (Warp's error where its library is built without cuBQL)
            raise RuntimeError("Failed to create BVH: cuBQL support disabled (mlwarp has no cuBQL builder: "
                               "wp.is_cubql_available() is False)")
        self._desc = np.zeros(layout.BVH_WORDS, dtype=np.int64)
        self._root = np.zeros(1, np.int32)
        # a tree on a CUDA device: built on the host, its nodes and descriptor copied to the device (device_mirror.py)
        self._mirror = None if self.device.is_cpu else DeviceMirror(self.device, layout.BVH_WORDS)
        self._constructor = self._host_constructor(constructor)
        self._build()  # now, even in a graph capture: the Bvh exists from here on
        self.id = int(self._desc.ctypes.data) if self._mirror is None else self._mirror.id

    def __del__(self):
        pass  # the descriptor and node arrays go with the object (on a CUDA device: its DeviceMirror's memory)

    def _host_constructor(self, constructor: str) -> str:
        """The host builder for `constructor`. A CPU tree asked for "lbvh" warns and builds "sah", as Warp's CPU
        trees do. A CUDA tree is built on the host too (device_mirror.py): "lbvh", the CUDA default in Warp
        (constructor=None means "sah" here), builds "sah" silently: the queries find the same items."""
        if constructor == "lbvh" and self._mirror is not None:
            return "sah"
        return _cpu_constructor(constructor)

    def _boxes(self):
        # (.numpy() of a CUDA array copies it to the host: a device tree is built and refit from host copies)
        return (np.asarray(self.lowers.numpy(), np.float32).reshape(-1, 3),
                np.asarray(self.uppers.numpy(), np.float32).reshape(-1, 3))

    def rebuild(self, constructor=None):
        """Rebuild the tree from the current lowers and uppers (its node layout may change), with `constructor`
        ("sah", the default, or "median"; "lbvh" falls back to "sah" with a warning, as Warp's CPU trees); in a
        graph capture, at each replay."""
        constructor = resolve_constructor(constructor)
        if constructor == "cubql":
            raise ValueError("Cannot rebuild a non-cuBQL BVH with constructor='cubql'; create a new BVH instead")
        self._constructor = self._host_constructor(constructor)
        _capture.run_or_record(self.device, self._build)

    def _build(self):
        lo, hi = self._boxes()
        builder = build_sah_tree if self._constructor == "sah" else build_median_tree
        if self.groups is not None:
            groups = np.asarray(self.groups.numpy(), np.int32).reshape(-1)
            self._tree = build_grouped_tree(lo, hi, groups, self.leaf_size, builder)
        else:
            self._tree = builder(lo, hi, self.leaf_size)
            # Warp counts every item of an ungrouped tree as group 0
            self._tree["group_ids"] = np.zeros(1 if lo.shape[0] else 0, np.int32)
            self._tree["group_roots"] = np.zeros(1 if lo.shape[0] else 0, np.int32)
        # the SAH build's node boxes are the refit's (min / max over the same items: exact either way)
        t = self._tree
        if "node_lowers" in t:
            self._node_lowers, self._node_uppers = t.pop("node_lowers"), t.pop("node_uppers")
        else:
            num_nodes = t["skip"].size
            self._node_lowers, self._node_uppers = (np.zeros((num_nodes, 3), np.float32) for _ in range(2))
            self._refit_nodes(*(bk.view(np.ascontiguousarray(a, np.float32), vec3) for a in (lo, hi)))
        self._parents = _parents(t)
        # (a builder may record its own max_depth: Warp's grouped trees count it from each group's root)
        t.setdefault("max_depth", int(t["depth"].max()) if t["depth"].size else 0)
        self._publish()

    def refit(self):
        """Recompute the node boxes after the lowers or uppers arrays changed (same tree)."""
        _capture.run_or_record(self.device, self._refit)  # a graph capture: at each replay

    def _refit(self):
        """The node boxes recomputed in place (the tree and so the descriptor's addresses stay), from the user's
        arrays on the CPU, from host copies of them for a tree on a CUDA device."""
        lowers, uppers = self.lowers, self.uppers
        if self._mirror is not None or not all(
                a.device.is_cpu and wt.types_equal(a.dtype, vec3) and a.is_contiguous for a in (lowers, uppers)):
            lowers, uppers = (bk.view(a, vec3) for a in self._boxes())
        self._refit_nodes(lowers, uppers)
        self._publish()

    def _refit_nodes(self, lowers, uppers):
        """Node boxes over the item boxes `lowers`, `uppers` (CPU wp.vec3 arrays): refit.py's two passes."""
        refit.refit_bvh(self, self._tree, lowers, uppers, self._node_lowers, self._node_uppers)

    def _publish(self):
        """The descriptor's words for the current tree and node boxes; on a CUDA device copied there."""
        t = self._tree
        parents = self._parents
        keep = [self._node_lowers, self._node_uppers, t["skip"], t["start"], t["end"], t["primitives"], parents,
                self._root, t["group_ids"], t["group_roots"]]
        keep = [a if a.size else np.zeros(1, a.dtype) for a in keep]  # (a valid address even when empty)
        self._keep = keep
        d = self._desc
        d[layout.BVH_NUM_GROUPS] = t["group_ids"].size
        words = (layout.BVH_NODE_LOWERS, layout.BVH_NODE_UPPERS, layout.BVH_SKIP, layout.BVH_PRIM_START,
                 layout.BVH_PRIM_END, layout.BVH_PRIMITIVES, layout.BVH_NODE_PARENTS, layout.BVH_ROOT,
                 layout.BVH_GROUP_IDS, layout.BVH_GROUP_ROOTS)
        for word, a in zip(words, keep):
            d[word] = a.ctypes.data
        # the user's boxes, referenced (device addresses for a CUDA tree): kernels read the items' boxes there
        d[layout.BVH_ITEM_LOWERS] = self.lowers.ptr or 0
        d[layout.BVH_ITEM_UPPERS] = self.uppers.ptr or 0
        num_nodes = t["skip"].size
        d[layout.BVH_NUM_NODES] = num_nodes
        d[layout.BVH_NUM_ITEMS] = len(self.lowers)
        d[layout.BVH_MAX_DEPTH] = int(t["max_depth"]) | (num_nodes << 32)
        d[layout.BVH_CONSTRUCTOR] = {"sah": 0, "median": 1}[self._constructor]
        if self._mirror is not None:  # the same words on the device, the owned arrays' words at their device copies
            self._mirror.publish(d, dict(zip(words, keep)))


def _parents(tree: dict) -> np.ndarray:
    """Each node's parent in the preorder layout (an inner node n's children are n + 1 and skip[n + 1])."""
    parents = np.full(tree["skip"].size, -1, np.int32)
    inner = np.flatnonzero(tree["start"] < 0)
    parents[inner + 1] = inner
    parents[tree["skip"][inner + 1]] = inner
    return parents


for _f in (bvh_query_aabb, bvh_query_ray, bvh_query_sphere, bvh_query_capsule):
    _f._wp_next_ = bvh_query_next  # `for index in wp.bvh_query_aabb(...)` (frontend/geometry.py)
