"""`wp.Mesh`: a triangle mesh (the user's points, indices and optional velocities) with a BVH over its
triangles, queried in kernels through its uint64 id (python/mlwarp/geometry/mesh_queries.py).

The id is the address of an int64 descriptor (words in core/geometry.py) holding the addresses of the
user's arrays (kept referenced, not copied, as in Warp: a kernel sees in-place point edits at once, the tree
after refit()), of their .grad arrays (for wp.mesh_get's gradients), and of the descriptor of a wp.Bvh over the
triangles' boxes, which this object owns. Builds
and refits run as kernels (build_kernels.py): per-triangle boxes and edge lengths one thread a triangle, the
tree by bvh_sah.py, the ray casts' packed triangles one thread a triangle.

A mesh over arrays on a CUDA device is built and refit on the host from copies of its points and indices (read
at each build and refit, so refit() sees points edited on the device); the tree, the ray casts' packed arrays and
the descriptor are then copied to device memory (device_mirror.py), and the id is the device descriptor's
address. Its descriptor points at the user's device arrays, referenced as on the CPU. Warp builds CUDA meshes on
the GPU; the queries give the same answers."""

from __future__ import annotations

import operator
import weakref

import numpy as np

from mlwarp import runtime as _runtime_package
from mlwarp.runtime import launch_needs
from mlwarp.core import types as wt
from mlwarp.arrays.array import array, empty
from mlwarp.types import float32, int32
from mlwarp.geometry import build_kernels as bk
from mlwarp.geometry import refit
from mlwarp.core import geometry as layout
from mlwarp.core.vector import vec3
from mlwarp.geometry.bvh import Bvh
from mlwarp.geometry.bvh_sah import resolve_constructor
from mlwarp.geometry.device_mirror import DeviceMirror
from mlwarp.kernels.subscript_annotations import ArrayAnnotation, ArrayMember


# CPU meshes whose 4-wide tree a refit left stale (id() -> weak reference: a mesh dropped meanwhile is never
# repacked): the next launch of a kernel that casts rays over a whole tree (WIDE_RAYS_NEED) repacks them
_STALE_WIDE: dict = {}


def _refresh_wide_rays() -> None:
    """Repacks every stale 4-wide tree (runtime/launch_needs.py: before each launch of a kernel that casts rays)."""
    while _STALE_WIDE:
        try:
            _, ref = _STALE_WIDE.popitem()
        except KeyError:  # (another thread took the last one)
            return
        mesh = ref()
        if mesh is not None and mesh._wide_stale:
            mesh._repack_wide()


launch_needs.register(layout.WIDE_RAYS_NEED, _refresh_wide_rays)


def _average_edge_length(edges: np.ndarray) -> float:
    """The mean of the triangles' three edge lengths from their per-triangle sums (build_kernels.triangle_boxes):
    numpy's float32 pairwise sum (within a few float32 ulps of the exact one; Warp's running float32 sum drifts
    by ~n ulps), half the time of a float64 one, which a refit of 100k triangles would spend 34 us on."""
    return float(edges.sum(dtype=np.float32)) / (edges.size * 3)


def _grad_address(a) -> int:
    """The address of `a`'s gradient array, 0 when there is none (the kernels' adjoints then skip it)."""
    grad = getattr(a, "grad", None) if a is not None else None
    return (grad.ptr or 0) if grad is not None else 0


class Mesh:
    """Triangle mesh for collision detection, ray casting, and spatial queries (Warp's wp.Mesh)."""

    runtime = _runtime_package  # Warp's attribute: the runtime that owns the object (here the mlwarp.runtime package)
    # Warp's class table of what `wp.mesh_get(id)` shows a kernel: the arrays by name and type
    vars = {"points": ArrayMember("points", ArrayAnnotation(vec3)),
            "velocities": ArrayMember("velocities", ArrayAnnotation(vec3)),
            "indices": ArrayMember("indices", ArrayAnnotation(int32))}

    def __new__(cls, *args, **kwargs):
        instance = super().__new__(cls)
        instance.id = None
        return instance

    def __init__(self, points, indices, velocities=None, support_winding_number: bool = False,
                 bvh_constructor=None, bvh_leaf_size: int | None = None, groups=None):
        if points.device != indices.device:
            raise RuntimeError("Mesh points and indices must live on the same device")
        if not wt.types_equal(points.dtype, vec3) or not points.is_contiguous:
            raise RuntimeError("Mesh points should be a contiguous array of type wp.vec3")
        if velocities is not None and (not wt.types_equal(velocities.dtype, vec3) or not velocities.is_contiguous):
            raise RuntimeError("Mesh velocities should be a contiguous array of type wp.vec3")
        if not wt.types_equal(indices.dtype, wt.int32) or not indices.is_contiguous:
            raise RuntimeError("Mesh indices should be a contiguous array of type wp.int32")
        if indices.ndim > 1:
            raise RuntimeError("Mesh indices should be a flattened 1d array of indices")
        if groups is not None:
            if not wt.types_equal(groups.dtype, wt.int32) or not groups.is_contiguous:
                raise RuntimeError("groups should be a contiguous array of type wp.int32")
            if groups.device != points.device:
                raise RuntimeError("groups must live on the same device as points")
            if len(groups) != len(indices) // 3:
                raise RuntimeError("groups must have the same length as indices / 3")
        constructor = resolve_constructor(bvh_constructor)
        if constructor == "cubql":
            if groups is not None:
                raise RuntimeError("Grouped mesh queries are not supported with bvh_constructor='cubql'")
            if support_winding_number:
                raise RuntimeError("support_winding_number=True is not supported with bvh_constructor='cubql'")
            raise RuntimeError("Failed to create mesh: cuBQL is not available (wp.is_cubql_available() is False)")
        if bvh_leaf_size is None:
            bvh_leaf_size = 4
        bvh_leaf_size = operator.index(bvh_leaf_size)
        if bvh_leaf_size < 1:
            raise ValueError(f"bvh_leaf_size must be greater than or equal to 1, current value: {bvh_leaf_size}")
        if indices.size % 3:
            raise RuntimeError(f"Mesh indices should hold 3 point indices per triangle, got {indices.size} indices")
        self.device = points.device
        tri = np.asarray(indices.numpy()).reshape(-1, 3)  # (int32: a view of the user's indices on the CPU)
        if tri.size and (tri.min() < 0 or tri.max() >= len(points)):
            bad = tri[(tri < 0) | (tri >= len(points))][0]
            raise RuntimeError(f"Mesh indices must lie in [0, {len(points)}) (the number of points), got {bad}")
        self._points = points
        self._velocities = velocities
        self.indices = indices
        self.groups = groups
        self.support_winding_number = bool(support_winding_number)
        self.bvh_constructor = constructor
        self.bvh_leaf_size = bvh_leaf_size
        self._tri = tri
        self._desc = np.zeros(layout.MESH_WORDS, dtype=np.int64)
        self._wide_stale = False  # refit() on the CPU: the 4-wide tree waits for a launch that casts rays
        # the triangles' boxes are computed on the host (build_kernels.triangle_boxes), on a CUDA device too
        self._tri_lowers = empty(tri.shape[0], dtype=vec3, device="cpu")
        self._tri_uppers = empty(tri.shape[0], dtype=vec3, device="cpu")
        inputs = self._host_inputs()  # (on a CUDA device a host copy: read once for the boxes and the packing)
        if constructor == "sah" and groups is None:  # the default build's kernels, compiled side by side
            bk.compile_ahead(bk.triangle_boxes, bk.item_bounds, bk.sah_split, bk.sah_preorder, bk.pack_ray_nodes,
                             bk.pack_wide_nodes, bk.wide_collapse, bk.pack_leaf_groups, bk.pack_triangles)
        average = self._boxes(*inputs)
        self._mirror = None if self.device.is_cpu else DeviceMirror(self.device, layout.MESH_WORDS)
        if self._mirror is None:
            tree_lowers, tree_uppers = self._tri_lowers, self._tri_uppers
        else:  # the tree's item boxes on the device, where its queries read them (the tree builds from copies)
            tree_lowers, tree_uppers = (array(a, dtype=vec3, device=self.device)
                                        for a in (self._tri_lowers, self._tri_uppers))
        self._bvh = Bvh(tree_lowers, tree_uppers, constructor=constructor, groups=groups, leaf_size=bvh_leaf_size)
        self._publish(average, inputs)
        self.id = int(self._desc.ctypes.data) if self._mirror is None else self._mirror.id

    def _host_inputs(self):
        """(points, indices) for the host build kernels: the user's arrays on the CPU (points made contiguous
        vec3 where they are not), host copies of them (read now) for a mesh on a CUDA device."""
        points, indices = self._points, self.indices
        if not self.device.is_cpu:
            return (array(np.asarray(points.numpy(), np.float32).reshape(-1, 3), dtype=vec3, device="cpu"),
                    array(indices.numpy(), dtype=int32, device="cpu"))
        if not (wt.types_equal(points.dtype, vec3) and points.is_contiguous):
            points = array(np.asarray(points.numpy(), np.float32).reshape(-1, 3), dtype=vec3, device=self.device)
        return points, indices

    def _boxes(self, points, indices) -> float:
        """Per-triangle bounds into the tree's item arrays (one thread a triangle: build_kernels.triangle_boxes)
        from the current points; returns the average edge length."""
        n = self._tri.shape[0]
        if not n:
            return 0.0
        edges = np.empty(n, np.float32)
        bk.host_launch(bk.triangle_boxes, n, [points, indices, self._tri_lowers, self._tri_uppers,
                                              bk.view(edges, float32)])
        return _average_edge_length(edges)

    def _winding_far_field(self, corners: np.ndarray):
        """Per tree node: area-vector sum, area-weighted centre, bounding radius (core/geometry.py). A subtree's
        triangles are a contiguous run of the tree's primitive list, so each sum is a difference of prefix
        sums over that list."""
        tree = self._bvh._tree
        nodes = tree["skip"].size
        normals = np.zeros((max(nodes, 1), 3), np.float32)
        centres = np.zeros((max(nodes, 1), 3), np.float32)
        radii = np.zeros(max(nodes, 1), np.float32)
        if nodes:
            c = corners[tree["primitives"]].astype(np.float64)
            area_vec = 0.5 * np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 0])
            area = np.linalg.norm(area_vec, axis=1)
            weighted = area[:, None] * c.mean(axis=1)
            prefix = lambda a: np.concatenate([np.zeros((1,) + a.shape[1:]), np.cumsum(a, axis=0)])  # noqa: E731
            pn, pa, pw, pm = prefix(area_vec), prefix(area), prefix(weighted), prefix(c.mean(axis=1))
            first, last = self._node_ranges(tree)
            count = (last - first)[:, None]
            total = (pa[last] - pa[first])[:, None]
            mean = (pm[last] - pm[first]) / np.maximum(count, 1)
            centre = np.where(total > 0, (pw[last] - pw[first]) / np.where(total > 0, total, 1), mean)
            lo, hi = self._bvh._node_lowers.astype(np.float64), self._bvh._node_uppers.astype(np.float64)
            far = np.maximum(np.abs(centre - lo), np.abs(centre - hi))
            normals[:] = pn[last] - pn[first]
            centres[:] = centre
            radii[:] = np.linalg.norm(far, axis=1) * (1.0 + 1e-6)
        self._wn = (normals, centres, radii)

    @staticmethod
    def _node_ranges(tree):
        """[first, last) positions in the primitive list of each node's subtree (children before parents)."""
        start, end, skip, depth = tree["start"], tree["end"], tree["skip"], tree["depth"]
        first = np.where(start >= 0, start, 0).astype(np.int64)
        last = np.where(start >= 0, end, 0).astype(np.int64)
        inner = np.flatnonzero(start < 0)
        for d in range(int(depth[inner].max()) if inner.size else -1, -1, -1):
            nodes = inner[depth[inner] == d]
            left, right = nodes + 1, skip[nodes + 1]
            first[nodes] = np.minimum(first[left], first[right])
            last[nodes] = np.maximum(last[left], last[right])
        return first, last

    def _publish(self, average: float | None = None, inputs=None):
        """The ray casts' packing (from `inputs`, _host_inputs() when not given) and the descriptor for the current
        arrays and tree."""
        self._ray_nodes = self._packed_nodes()
        self._ray_tris = self._packed_triangles(*(inputs or self._host_inputs()))
        self._ray_wide, self._ray_leaves = self._wide_buffers()
        if self._ray_wide is not None:
            self._repack_wide()
        self._describe(average)

    def _describe(self, average: float | None = None):
        """The descriptor's words for the current arrays, tree and packing; on a CUDA device copied there."""
        d = self._desc
        d[layout.MESH_POINTS] = self._points.ptr or 0
        d[layout.MESH_VELOCITIES] = (self._velocities.ptr or 0) if self._velocities is not None else 0
        d[layout.MESH_POINTS_GRAD] = _grad_address(self._points)
        d[layout.MESH_VELOCITIES_GRAD] = _grad_address(self._velocities)
        d[layout.MESH_INDICES] = self.indices.ptr or 0
        d[layout.MESH_NUM_POINTS] = len(self._points)
        d[layout.MESH_NUM_TRIS] = self._tri.shape[0]
        d[layout.MESH_BVH] = self._bvh.id
        d[layout.MESH_WINDING] = int(self.support_winding_number)
        if self.support_winding_number:
            self._winding_far_field(np.asarray(self._points.numpy(), np.float32).reshape(-1, 3)[self._tri])
            d[layout.MESH_WN_NORMALS:layout.MESH_WN_RADII + 1] = [a.ctypes.data for a in self._wn]
        d[layout.MESH_RAY_NODES] = self._ray_nodes.ctypes.data
        d[layout.MESH_RAY_TRIS] = self._ray_tris.ctypes.data
        d[layout.MESH_RAY_WIDE] = self._ray_wide.ctypes.data if self._ray_wide is not None else 0
        d[layout.MESH_RAY_WIDE_NODES] = len(self._ray_wide) if self._ray_wide is not None and not self._wide_stale \
            else 0  # (a stale wide tree: the binary one until _repack_wide)
        d[layout.MESH_RAY_LEAVES] = self._ray_leaves.ctypes.data if self._ray_leaves is not None else 0
        d[layout.MESH_RAY_LEAF_GROUPS] = len(self._ray_leaves) if self._ray_leaves is not None else 0
        if average is None:
            average = self._average
        self._average = average
        f = d.view(np.float32)
        f[2 * layout.MESH_AVERAGE_EDGE_LENGTH] = average
        f[2 * layout.MESH_AVERAGE_EDGE_LENGTH + 1] = 0.0
        if self._mirror is not None:  # the user's arrays and the tree are device addresses already; copy the rest
            owned = {layout.MESH_RAY_NODES: self._ray_nodes, layout.MESH_RAY_TRIS: self._ray_tris}
            if self._ray_wide is not None:
                owned[layout.MESH_RAY_WIDE] = self._ray_wide
                owned[layout.MESH_RAY_LEAVES] = self._ray_leaves
            if self.support_winding_number:
                owned.update(zip((layout.MESH_WN_NORMALS, layout.MESH_WN_CENTERS, layout.MESH_WN_RADII), self._wn))
            self._mirror.publish(d, owned)

    def _packing(self, name: str, shape: tuple, align: int = 4) -> np.ndarray:
        """A zeroed float32 array of `shape` (its start `align`-byte aligned) for one of the ray casts' packed
        structures; on a refit the one the build made: the packers write every word a query reads, the same
        tree has the same shapes, and repacking into memory already touched spares the page faults of several
        fresh megabytes (the descriptor's addresses stay too)."""
        old = self.__dict__.setdefault("_packings", {}).get(name)
        if old is not None and old.shape == shape:
            return old
        size = int(np.prod(shape))
        raw = np.zeros(size + align // 4, np.float32)
        offset = (-raw.ctypes.data % align) // 4
        self._packings[name] = packed = raw[offset:offset + size].reshape(shape)
        return packed

    def _packed_nodes(self) -> np.ndarray:
        """The tree in the ray casts' packed layout (core/geometry.py MESH_RAY_NODES), from the Bvh's arrays."""
        bvh = self._bvh
        t = bvh._tree
        num_nodes = t["skip"].size
        packed = self._packing("nodes", (max(num_nodes, 1), layout.RAY_NODE_FLOATS))
        if num_nodes:
            bk.host_launch(bk.pack_ray_nodes, num_nodes, [
                *self._node_box_views(), *self._tree_views(t, ("skip", "start", "end")),
                bk.view(packed, float32), bk.view(packed.view(np.int32), int32)])
        return packed

    def _node_box_views(self):
        """The Bvh's node boxes as wp.vec3 views (they change with each refit)."""
        return bk.view(self._bvh._node_lowers, vec3), bk.view(self._bvh._node_uppers, vec3)

    def _tree_views(self, t, names):
        """wp.int32 views of the tree's node arrays `names`, made once per tree."""
        if getattr(self, "_views_of", None) is not t:
            self._views_of, self._views = t, {}
        views = self._views
        for k in names:
            if k not in views:
                views[k] = bk.view(np.ascontiguousarray(t[k], np.int32), int32)
        return [views[k] for k in names]

    def _wide_buffers(self) -> tuple:
        """The buffers of the tree as a 4-wide one and of its leaf groups (core/geometry.py MESH_RAY_WIDE,
        MESH_RAY_LEAVES; _repack_wide fills them), (None, None) where it cannot be packed so. A refit keeps the
        wide tree's shape (_wide_links) and its buffers."""
        t = self._bvh._tree
        if t["skip"].size == 0:
            return None, None
        if getattr(self, "_wide_of", None) is not t:
            self._wide_of, self._wide = t, self._wide_links(t)
        if self._wide is None:
            return None, None
        slots, _, positions, _ = self._wide
        # 128-byte aligned: a node is two whole cache lines; a group's first row at a cache line's start
        return (self._packing("wide", (len(slots), layout.RAY_WIDE_FLOATS), align=128),
                self._packing("leaves", (len(positions), layout.RAY_LEAF_FLOATS), align=64))

    def _wide_links(self, t):
        """(children as binary nodes, leaf children's codes), both (wide nodes, 4), the leaves' groups of four
        as (groups, 4) MESH_RAY_TRIS positions, and each binary node's wide index (a wp.array) of the 4-wide
        tree over the binary tree `t` (build_kernels.wide_collapse); None where it cannot be packed so.

        A wide node starts with its binary node's two children and twice replaces the child of largest surface
        area that is an inner node by that child's two children (the usual collapse of a binary tree into a
        4-wide one); its inner children are wide nodes too. Every leaf is a child of exactly one wide node."""
        skip = t["skip"]
        num_nodes = skip.size
        if t["start"][0] >= 0:
            return None
        wide_index = np.full(num_nodes, -1, np.int32)
        wide_node = np.empty(num_nodes, np.int32)
        slots = np.empty((num_nodes, 4), np.int32)
        codes = np.empty((num_nodes, 4), np.int32)
        positions = np.empty((max(t["primitives"].size, 1), 4), np.int32)  # (a group holds an item at least)
        stats = np.zeros(4, np.int32)
        index_view = bk.view(wide_index, int32)
        bk.host_launch(bk.wide_collapse, 1, [
            *self._node_box_views(), *self._tree_views(t, ("skip", "start", "end")), num_nodes, index_view,
            bk.view(np.zeros(num_nodes, np.int32), int32), bk.view(wide_node, int32), bk.view(slots, int32),
            bk.view(codes, int32), bk.view(positions, int32), bk.view(stats, int32)])
        wide, groups, levels, largest = (int(v) for v in stats)
        if largest > 15:  # a leaf's code: 16 group + count
            return None
        # each level pushes at most 3 more entries than it pops, and writes 4 before keeping the hits
        if 3 * levels + 4 > layout.RAY_STACK or 16 * (groups + 16) >= 2**31:
            return None
        return slots[:wide], codes[:wide], positions[:groups], index_view

    def _packed_triangles(self, points, indices) -> np.ndarray:
        """The triangles' vertices in the tree's primitive order (core/geometry.py MESH_RAY_TRIS)."""
        faces = self._bvh._tree["primitives"]
        packed = self._packing("triangles", (max(faces.size, 1), layout.RAY_TRI_FLOATS))
        if faces.size:
            bk.host_launch(bk.pack_triangles, faces.size, [points, indices, *self._tree_views(self._bvh._tree, (
                "primitives",)), bk.view(packed, float32), bk.view(packed.view(np.int32), int32)])
        return packed

    def __del__(self):
        pass  # the descriptor, boxes and tree go with the object

    def refit(self):
        """Refit the BVH to the points (call it after changing the points in place)."""
        if not self.id:
            raise RuntimeError("Failed to refit mesh: the mesh was never created")
        average = self._refit_in_place(*self._host_inputs())
        if self._mirror is not None:  # the tree's item boxes and nodes live on the device: update them
            self._bvh.lowers.assign(self._tri_lowers)
            self._bvh.uppers.assign(self._tri_uppers)
            self._bvh._publish()
            if self._ray_wide is not None:  # (copied to the device below: no launch here refreshes it)
                self._repack_wide()
        elif self._ray_wide is not None:
            # the 4-wide tree only whole-tree ray casts read: repacked by the next launch that casts rays
            # (_refresh_wide_rays), a simulation refitting every frame for point queries never pays for it
            self._wide_stale = True
            _STALE_WIDE[id(self)] = weakref.ref(self)
        # (on the CPU the tree's descriptor names the node arrays the refit rewrote in place: its words stand)
        self._describe(average)

    def _repack_wide(self):
        """The 4-wide tree's boxes and leaf groups (build_kernels.pack_wide_nodes, pack_leaf_groups) from the node
        boxes and packed triangles, into _wide_buffers (a refit's: the same tree, the same buffers), and its
        descriptor word."""
        args = self.__dict__.get("_repack_args")
        if args is None or args[0] is not self._bvh._tree or args[1] is not self._ray_wide:
            # the packers' arrays, made once per tree (_refit_arrays: a view's construction is most of a launch)
            slots, codes, positions, wide_index = self._wide
            wide, leaves, tris = self._ray_wide, self._ray_leaves, self._ray_tris
            args = self._repack_args = (self._bvh._tree, wide, [
                *self._node_box_views(), *self._tree_views(self._bvh._tree, ("start",)), wide_index,
                bk.view(slots, int32), bk.view(codes, int32), bk.view(wide, float32),
                bk.view(wide.view(np.int32), int32)], [
                bk.view(tris, float32), bk.view(tris.view(np.int32), int32), bk.view(positions, int32),
                bk.view(leaves, float32), bk.view(leaves.view(np.int32), int32)])
        bk.host_launch(bk.pack_wide_nodes, len(args[1]), args[2])
        bk.host_launch(bk.pack_leaf_groups, len(self._ray_leaves), args[3])
        self._wide_stale = False
        self._desc[layout.MESH_RAY_WIDE_NODES] = len(self._ray_wide)

    def _refit_in_place(self, points, indices) -> float:
        """The triangles' boxes, the tree's node boxes and the ray casts' packed words that follow the points, in
        place (refit.py); returns the average edge length."""
        n = self._tri.shape[0]
        if not n:
            return 0.0
        args = self.__dict__.get("_refit_args")
        if args is None or args[0] is not self._bvh._tree or args[1] is not self._ray_tris:
            args = self._refit_args = (self._bvh._tree, self._ray_tris, *self._refit_arrays())
        refit.refit_mesh(self, self._bvh._tree, [points, indices, *args[2]], [points, indices, *args[3]], args[4])
        return _average_edge_length(self._refit_edges)

    def _refit_arrays(self) -> tuple:
        """The refit kernels' arrays (refit.refit_mesh's, after points and indices for the face and position
        kernels), wp.arrays over this mesh's memory made once per tree: the views' construction is most of a
        launch's cost."""
        self._refit_edges = np.empty(self._tri.shape[0], np.float32)
        face_arrays = [self._tri_lowers, self._tri_uppers, bk.view(self._refit_edges, float32)]
        position_arrays = [bk.view(self._ray_tris, float32), bk.view(self._ray_tris.view(np.int32), int32)]
        node_arrays = [self._tri_lowers, self._tri_uppers, *self._node_box_views(), bk.view(self._ray_nodes, float32)]
        return face_arrays, position_arrays, node_arrays

    @property
    def points(self):
        """The mesh's vertex positions (wp.vec3). Edit in place then refit(), or assign a new array of the same
        shape (which refits)."""
        return self._points

    @points.setter
    def points(self, points_new):
        if points_new.device != self._points.device:
            raise RuntimeError(
                "The new points and the original points must live on the same device, the "
                f"new points are on {points_new.device} while the old points are on {self._points.device}.")
        if points_new.ndim != 1 or points_new.shape[0] != self._points.shape[0]:
            raise RuntimeError(
                "The new points and the original points must have the same shape, the "
                f"new points' shape is {points_new.shape}, while the old points' shape is {self._points.shape}.")
        self._points = points_new
        self.refit()

    @property
    def velocities(self):
        """The mesh's vertex velocities (wp.vec3), or None; assignable, no refit needed."""
        return self._velocities

    @velocities.setter
    def velocities(self, velocities_new):
        if self._velocities is not None and velocities_new.device != self._velocities.device:
            raise RuntimeError(
                "The new points and the original points must live on the same device, the "
                f"new points are on {velocities_new.device} while the old points are on {self._velocities.device}.")
        if self._velocities is not None and (velocities_new.ndim != 1 or
                                             velocities_new.shape[0] != self._velocities.shape[0]):
            raise RuntimeError(
                "The new points and the original points must have the same shape, the "
                f"new points' shape is {velocities_new.shape}, while the old points' shape is "
                f"{self._velocities.shape}.")
        self._velocities = velocities_new
        self._describe()
