"""Box and sphere queries against a wp.Mesh (wp.mesh_query_aabb, wp.mesh_query_sphere, advanced by
wp.mesh_query_next / wp.mesh_query_aabb_next): the tree's stackless preorder (a node that passes continues at
n + 1, anything else at skip[n]), a sphere query's triangles tested by their closest point."""

from __future__ import annotations

from mlwarp.library.builtins import namespace as wp  # wp.dot, wp.cross, ...: the builtins, spelt as in user code
from mlwarp.core.refs import ref, takes_temporaries
from mlwarp.kernels.func import func
from mlwarp.types import float32, int32, uint64
from mlwarp.core.vector import vec3
from mlwarp.geometry.mesh_data import MeshData, MeshQueryAABB, _mesh_data, _stop_node
from mlwarp.geometry.mesh_primitives import _boxes_overlap, _closest_point_to_triangle, _distance_to_aabb_sq


@func
def _query_start(id: uint64, kind: int32, lower: vec3, upper: vec3, radius: float32) -> MeshQueryAABB:
    m = _mesh_data(id)
    q = MeshQueryAABB()
    q.mesh = id
    q.kind = kind
    r = wp.max(radius, 0.0)
    q.radius_sq = r * r
    q.lower = lower
    q.upper = upper
    q.node = 0
    q.stop = _stop_node(m, -1)
    q.prim_cur = 0
    q.prim_end = 0
    q.face = -1
    return q


@func
def mesh_query_aabb(id: uint64, low: vec3, high: vec3) -> MeshQueryAABB:
    """A query for the triangles whose boxes overlap [low, high] (advance with wp.mesh_query_next)."""
    return _query_start(id, 0, low, high, 0.0)


@func
def mesh_query_sphere(id: uint64, center: vec3, radius: float32) -> MeshQueryAABB:
    """A query for the triangles within `radius` of `center` (the exact closest point of each triangle whose
    box is near enough; advance with wp.mesh_query_next)."""
    return _query_start(id, 1, center, center, radius)


@func
def _near_triangle(m: MeshData, f: int32, center: vec3, radius_sq: float32) -> bool:
    """Warp's sphere test of triangle f: its box first, then its closest point (a zero-area triangle: its
    longest edge's)."""
    near = _distance_to_aabb_sq(center, m.tri_lowers[f], m.tri_uppers[f]) <= radius_sq
    if near:
        a = m.points[m.indices[f * 3 + 0]]
        b = m.points[m.indices[f * 3 + 1]]
        c = m.points[m.indices[f * 3 + 2]]
        ab = b - a
        ac = c - a
        n = wp.cross(ab, ac)
        cp = vec3(0.0, 0.0, 0.0)
        if wp.dot(n, n) == 0.0:
            bc = c - b
            lab = wp.dot(ab, ab)
            lac = wp.dot(ac, ac)
            lbc = wp.dot(bc, bc)
            p = b
            q = c
            length_sq = lbc
            if lab >= lac and lab >= lbc:
                p = a
                q = b
                length_sq = lab
            elif lac >= lbc:
                p = a
                q = c
                length_sq = lac
            t = float32(0.0)
            if length_sq > 0.0:
                t = wp.clamp(wp.dot(center - p, q - p) / length_sq, 0.0, 1.0)
            cp = p + t * (q - p)
        else:
            uv = _closest_point_to_triangle(a, b, c, center)
            cp = a * uv[0] + b * uv[1] + c * (1.0 - uv[0] - uv[1])
        d = cp - center
        near = wp.dot(d, d) <= radius_sq
    return near


@func
def mesh_query_next(query: ref[MeshQueryAABB], index: ref[int32]) -> bool:
    """Advances `query` to its next triangle, written to `index`; False when none is left (`index` keeps its
    value)."""
    m = _mesh_data(query.mesh)
    sphere = query.kind == 1
    found = bool(False)
    while not found and (query.prim_cur < query.prim_end or query.node < query.stop):
        if query.prim_cur < query.prim_end:
            f = m.primitives[query.prim_cur]
            query.prim_cur += 1
            hit = bool(False)
            if sphere:
                hit = _near_triangle(m, f, query.lower, query.radius_sq)
            else:
                hit = _boxes_overlap(query.lower, query.upper, m.tri_lowers[f], m.tri_uppers[f])
            if hit:
                found = True
                query.face = f
        else:
            n = query.node
            near = bool(False)
            if sphere:
                near = _distance_to_aabb_sq(query.lower, m.node_lowers[n], m.node_uppers[n]) <= query.radius_sq
            else:
                near = _boxes_overlap(query.lower, query.upper, m.node_lowers[n], m.node_uppers[n])
            if not near:
                query.node = m.skip[n]
            elif m.prim_start[n] >= 0:
                query.prim_cur = m.prim_start[n]
                query.prim_end = m.prim_end[n]
                query.node = m.skip[n]
            else:
                query.node = n + 1
    if found:
        index = query.face
    return found


@func
def mesh_query_aabb_next(query: ref[MeshQueryAABB], index: ref[int32]) -> bool:
    """wp.mesh_query_next under its older name."""
    return mesh_query_next(query, index)



MeshQuery = MeshQueryAABB
# `for face in wp.mesh_query_aabb(...)` / `wp.mesh_query_sphere(...)`: the loop advances with mesh_query_next
# (compiler/frontend/geometry.py)
mesh_query_aabb._wp_next_ = mesh_query_next
mesh_query_sphere._wp_next_ = mesh_query_next
MeshQueryAABB._wp_iter_next_ = mesh_query_next  # `for face in query` (the same)


# Warp's builtins: their out-parameters and query states may be temporaries
for _f in (mesh_query_next, mesh_query_aabb_next):
    takes_temporaries(_f)
