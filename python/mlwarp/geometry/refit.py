"""Refits of wp.Bvh and wp.Mesh (issue 36: "builds as fast as queries"): the node boxes, and for a mesh every
word of the ray casts' packed structures that follows the points, recomputed in place.

A refit keeps the tree, so it keeps the preorder layout (core/geometry.py): the subtree of node r is the
contiguous range [r, skip[r]) and, walked in reverse, meets every node's children before the node. The plan
(RefitPlan, made once per tree) cuts the tree into subtrees of at most about 1/64 of its nodes: one thread a
subtree walks its range in reverse (a leaf: its items' bounds; an inner node: its children's), the subtrees in
parallel; then one thread walks the few nodes above the cut in reverse preorder. Warp's refit is one thread
walking all nodes bottom-up. The arithmetic is the build's (min then max of the same values in the same
order), so a node's box is the one a build over the same tree finds.

A mesh refit is three launches: its faces in face order (the build's own triangle_boxes: each triangle's box,
the tree's item box, and its edge lengths), its tree positions in the tree's order (mesh_refit_positions: the
packed corners and sliver flag, MESH_RAY_TRIS), then the node walk above (mesh_refit_walk, both passes: node
boxes, a leaf's from its triangles' boxes through the tree's primitives as wp.Bvh's refit, and their packed copy,
MESH_RAY_NODES). The random accesses (a face's corners through its indices, a position's face) are reads in flat
launches, whose threads' loads overlap; the large arrays are written in order (on these machines scattered writes
into megabytes of packed arrays, or the corners read in a loop over a leaf's triangles, cost 2-4x). The words
that name nodes and faces do not change with the points and stay as the build wrote them (build_kernels.py's
pack_* kernels); the others are the same arithmetic as those kernels', so a refit writes what a build over the
same tree writes.

The 4-wide tree's boxes and leaf groups (MESH_RAY_WIDE, MESH_RAY_LEAVES), which only whole-tree ray casts read,
are not refit here: Mesh.refit marks them stale and the first launch of a kernel that casts rays repacks them
(the build's pack_wide_nodes and pack_leaf_groups; mesh.py)."""

from __future__ import annotations

import numpy as np

from mlwarp.arrays.array import array
from mlwarp.library.builtins import namespace as wp
from mlwarp.kernels.func import func
from mlwarp.kernels.kernel import kernel
from mlwarp.types import float32, int32
from mlwarp.core.vector import vec3
from mlwarp.geometry import build_kernels as bk
from mlwarp.geometry.mesh_primitives import _is_sliver

INF = float("inf")
SUBTREES = 64  # subtrees a plan aims at: many per core, so that uneven ones share out


class RefitPlan:
    """The cut of one tree into subtrees (`roots`) and the nodes above them (`top`, in reverse preorder), with
    wp.int32 views of the tree's node arrays the refit kernels read."""

    def __init__(self, tree: dict):
        skip = np.ascontiguousarray(tree["skip"], np.int32)
        num_nodes = skip.size
        self.tree = tree
        self.num_nodes = num_nodes
        size = skip - np.arange(num_nodes, dtype=np.int32)
        target = max(num_nodes // SUBTREES, 64)
        above = size > target
        inner = np.flatnonzero(np.asarray(tree["start"]) < 0)
        # a subtree root: a node not above the cut whose parent is (or the root itself)
        parent_above = np.zeros(num_nodes, bool)
        if num_nodes:
            parent_above[0] = True
            big_inner = inner[above[inner]]
            parent_above[big_inner + 1] = True
            parent_above[skip[big_inner + 1]] = True
        roots = np.flatnonzero(parent_above & ~above).astype(np.int32)
        top = np.flatnonzero(above)[::-1].astype(np.int32)
        self._arrays = {"roots": roots, "top": top, "skip": skip}
        for k in ("start", "end", "primitives"):
            self._arrays[k] = np.ascontiguousarray(tree[k], np.int32)
        self.views = {k: bk.view(a if a.size else np.zeros(1, np.int32), int32) for k, a in self._arrays.items()}
        self.num_roots = roots.size
        self.num_top = top.size

    def launch(self, walk_kernel, arrays: list):
        """Both passes of a refit with one node-walk kernel: one thread a subtree (count 0), then the nodes above
        the cut on one thread (count = their number)."""
        v = self.views
        if not self.num_nodes:
            return
        tree_views = [v["skip"], v["start"], v["end"], v["primitives"]]
        bk.host_launch(walk_kernel, self.num_roots, [v["roots"], v["top"], 0, *tree_views, *arrays], uneven=True)
        if self.num_top:
            bk.host_launch(walk_kernel, 1, [v["roots"], v["top"], self.num_top, *tree_views, *arrays])


def plan_for(owner, tree: dict) -> RefitPlan:
    """`owner`'s plan for `tree`, made again only when its tree changed (a rebuild)."""
    plan = getattr(owner, "_refit_plan", None)
    if plan is None or plan.tree is not tree:
        plan = owner._refit_plan = RefitPlan(tree)
    return plan


# -- wp.Bvh: node boxes over the user's boxes ----------------------------------------------------------------
@func
def _union_of_children(n: int32, skip: array(dtype=int32), node_lo: array(dtype=vec3), node_hi: array(dtype=vec3)):
    """Inner node n's box: the bounds of its children's (n + 1 and skip[n + 1] in preorder), both done."""
    left = n + 1
    right = skip[left]
    node_lo[n] = wp.min(node_lo[left], node_lo[right])
    node_hi[n] = wp.max(node_hi[left], node_hi[right])


@func
def _bvh_node(n: int32, skip: array(dtype=int32), start: array(dtype=int32), end: array(dtype=int32),
              prims: array(dtype=int32), lowers: array(dtype=vec3), uppers: array(dtype=vec3),
              node_lo: array(dtype=vec3), node_hi: array(dtype=vec3)):
    """Node n's box: a leaf's the bounds of its items' boxes (from +-inf, in its order), an inner node's the
    bounds of its children's."""
    s = start[n]
    if s >= 0:
        inf = float32(INF)
        lo = vec3(inf, inf, inf)
        hi = vec3(-inf, -inf, -inf)
        for k in range(s, end[n]):
            i = prims[k]
            lo = wp.min(lo, lowers[i])
            hi = wp.max(hi, uppers[i])
        node_lo[n] = lo
        node_hi[n] = hi
    else:
        _union_of_children(n, skip, node_lo, node_hi)


@func
def _walk_end(roots: array(dtype=int32), count: int32, skip: array(dtype=int32)):
    """A subtree walk's end in preorder (its root's skip: count 0), else 0 (the walk of the `count` listed nodes)."""
    last = int32(0)
    if count == 0:
        last = skip[roots[wp.tid()]]
    return last


@func
def _walk_node(j: int32, last: int32, top: array(dtype=int32), count: int32):
    """The j-th node of a walk: its subtree's in reverse preorder (count 0: a node after its children), else the
    j-th of the `count` nodes above the cut (`top`, already in reverse preorder)."""
    n = last - 1 - j
    if count != 0:
        n = top[j]
    return n


@kernel(enable_backward=False)
def bvh_refit_walk(roots: array(dtype=int32), top: array(dtype=int32), count: int32, skip: array(dtype=int32),
                   start: array(dtype=int32), end: array(dtype=int32), prims: array(dtype=int32),
                   lowers: array(dtype=vec3), uppers: array(dtype=vec3), node_lo: array(dtype=vec3),
                   node_hi: array(dtype=vec3)):
    """Node boxes of one walk (RefitPlan.launch): both passes are this kernel, so it compiles once."""
    last = _walk_end(roots, count, skip)
    for j in range(wp.where(count == 0, last - roots[wp.tid()], count)):
        _bvh_node(_walk_node(j, last, top, count), skip, start, end, prims, lowers, uppers, node_lo, node_hi)


def refit_bvh(owner, tree: dict, lowers, uppers, node_lo: np.ndarray, node_hi: np.ndarray):
    """Node boxes of `tree` over the boxes `lowers`, `uppers` (CPU wp.vec3 arrays) into node_lo, node_hi
    ((num_nodes, 3) float32, in place)."""
    views = getattr(owner, "_node_views", None)
    if views is None or views[0] is not node_lo or views[1] is not node_hi:
        views = owner._node_views = (node_lo, node_hi, bk.view(node_lo, vec3), bk.view(node_hi, vec3))
    plan_for(owner, tree).launch(bvh_refit_walk, [lowers, uppers, views[2], views[3]])


# -- wp.Mesh: triangle boxes, node boxes and the ray casts' packed words --------------------------------------
@func
def _sliver_flag(p: vec3, q: vec3, r: vec3):
    """1 where Warp's sliver test (mesh_primitives._is_sliver: |c| / s < 1e-6, c = (q - p) x (r - p), s the sum of
    the squared edge lengths) holds, else 0; without its square root and division where |c|^2 >= (2e-6 s)^2 says
    the ratio is at least ~2e-6, far from the threshold whatever the rounding (s within [1e-12, 1e15], so the
    squares neither underflow nor overflow; a NaN fails every comparison and takes the full test)."""
    e0 = q - p
    e1 = r - p
    e2 = r - q
    c = wp.cross(e0, e1)
    s = wp.dot(e0, e0) + wp.dot(e1, e1) + wp.dot(e2, e2)
    bound = float32(2.0e-6) * s
    flag = int32(0)
    if not (s >= float32(1.0e-12) and s <= float32(1.0e15) and wp.dot(c, c) >= bound * bound):
        flag = wp.where(_is_sliver(p, q, r), 1, 0)
    return flag


@kernel(enable_backward=False)
def mesh_refit_positions(prims: array(dtype=int32), points: array(dtype=vec3), indices: array(dtype=int32),
                         tris: array(dtype=float32, ndim=2), tri_ints: array(dtype=int32, ndim=2)):
    """Tree position k: its triangle's packed corners and sliver flag (pack_triangles). One thread a position,
    in the tree's order: the writes sequential, the random reads (the corners) independent of each other, which
    a loop over a leaf's triangles (an unpredictable trip count) would serialise. The sliver flag is computed
    here, from the corners in registers, not passed from the face launch through an array of its own (one array
    written and read back at random less)."""
    k = wp.tid()
    f = prims[k]
    p = points[indices[3 * f]]
    q = points[indices[3 * f + 1]]
    r = points[indices[3 * f + 2]]
    for c in range(3):
        tris[k, c] = p[c]
        tris[k, 4 + c] = q[c]
        tris[k, 8 + c] = r[c]
    tri_ints[k, bk._RAY_TRI_SLIVER] = _sliver_flag(p, q, r)


@func
def _mesh_node(n: int32, skip: array(dtype=int32), start: array(dtype=int32), end: array(dtype=int32),
               prims: array(dtype=int32), tri_lowers: array(dtype=vec3), tri_uppers: array(dtype=vec3),
               node_lo: array(dtype=vec3), node_hi: array(dtype=vec3), ray_nodes: array(dtype=float32, ndim=2)):
    """Node n of a mesh's tree, its children done: its box (_bvh_node over the triangles' boxes, which the face
    launch wrote), then its packed box (pack_ray_nodes)."""
    _bvh_node(n, skip, start, end, prims, tri_lowers, tri_uppers, node_lo, node_hi)
    lo = node_lo[n]
    hi = node_hi[n]
    for j in range(3):
        ray_nodes[n, j] = lo[j]
        ray_nodes[n, 4 + j] = hi[j]


@kernel(enable_backward=False)
def mesh_refit_walk(roots: array(dtype=int32), top: array(dtype=int32), count: int32, skip: array(dtype=int32),
                    start: array(dtype=int32), end: array(dtype=int32), prims: array(dtype=int32),
                    tri_lowers: array(dtype=vec3), tri_uppers: array(dtype=vec3), node_lo: array(dtype=vec3),
                    node_hi: array(dtype=vec3), ray_nodes: array(dtype=float32, ndim=2)):
    """The mesh's node words of one walk (RefitPlan.launch): both passes are this kernel, so it compiles once."""
    last = _walk_end(roots, count, skip)
    for j in range(wp.where(count == 0, last - roots[wp.tid()], count)):
        _mesh_node(_walk_node(j, last, top, count), skip, start, end, prims, tri_lowers, tri_uppers, node_lo, node_hi,
                   ray_nodes)


def refit_mesh(owner, tree: dict, face_arrays: list, position_arrays: list, node_arrays: list):
    """The mesh refit: its faces (the build's triangle_boxes, its arrays), its tree positions
    (mesh_refit_positions' arrays after `prims`), then its nodes' two passes over `tree` (mesh_refit_walk's arrays
    after `prims`)."""
    if getattr(owner, "_refit_plan", None) is None:  # its first refit
        bk.compile_ahead(bk.triangle_boxes, mesh_refit_positions, mesh_refit_walk)
    plan = plan_for(owner, tree)
    num_faces = face_arrays[2].shape[0]
    if num_faces:
        bk.host_launch(bk.triangle_boxes, num_faces, face_arrays)
        bk.host_launch(mesh_refit_positions, tree["primitives"].size, [plan.views["primitives"], *position_arrays])
    plan.launch(mesh_refit_walk, node_arrays)
