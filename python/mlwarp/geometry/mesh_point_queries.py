"""Closest / furthest point queries against a wp.Mesh (wp.mesh_query_point and its _no_sign, _sign_normal,
_sign_parity, _sign_winding_number forms, wp.mesh_query_furthest_point_no_sign) and the inside/outside signs
they report: Warp's three axis rays (mesh_ray_queries.py), parity of perturbed rays, the angle-weighted normal of
the closest features, or the winding number (exact near field, a dipole per far tree node)."""

from __future__ import annotations

from mlwarp.arrays.array import zeros
from mlwarp.library.builtins import namespace as wp  # wp.dot, wp.cross, ...: the builtins, spelt as in user code
from mlwarp.core import geometry as layout
from mlwarp.core.refs import ref, takes_temporaries
from mlwarp.kernels.func import func
from mlwarp.library.random import rand_init, randf
from mlwarp.types import bool_, float32, int32, uint64
from mlwarp.core.vector import vec3
from mlwarp.geometry.mesh_data import (
    MeshData, MeshQueryPoint, _mesh_data, _packed_corners, _packed_sliver, _stop_node, _xyz,
)
from mlwarp.geometry.mesh_primitives import (
    _closest_point_to_triangle, _distance_to_aabb_sq, _furthest_distance_to_aabb_sq, _furthest_point_to_triangle,
    _is_sliver, _robust_solid_angle,
)
from mlwarp.geometry.mesh_ray_queries import _closest_hit_sign, _count_crossings

_RAY_STACK = layout.RAY_STACK
_RAY_NODE_FLOATS = layout.RAY_NODE_FLOATS
_RAY_TRI_FLOATS = layout.RAY_TRI_FLOATS
_RAY_TRI_FACE = layout.RAY_TRI_FACE
PI = 3.14159265359
INV_4PI = 0.07957747154


@func
def _child_distances_sq(m: MeshData, point: vec3, n: int32):
    """(first, second, d_first, d_second): inner node n's children in the ray-packed tree's preorder (the first,
    n + 1, is Warp's right child: its traversal pops that one first) and the squared distances from `point` to
    their boxes."""
    first = n + 1
    second = m.ray_links[n * _RAY_NODE_FLOATS + 3]
    d_first = _distance_to_aabb_sq(point, _xyz(m.ray_boxes[2 * first]), _xyz(m.ray_boxes[2 * first + 1]))
    d_second = _distance_to_aabb_sq(point, _xyz(m.ray_boxes[2 * second]), _xyz(m.ray_boxes[2 * second + 1]))
    return first, second, d_first, d_second


@func
def _packed_closest_point(m: MeshData, found: bool, closest: int32, point: vec3):
    """(face, p, q, r, u, v, w) of a closest-point traversal's result (when `found`): the triangle at packed
    position `closest`, its closest point to `point` computed again from its corners (the traversal's test, so
    the same u, v; the adjoint differentiates only this)."""
    face = int32(0)
    u = float32(1.0)
    v = float32(0.0)
    w = float32(0.0)
    p = vec3(0.0)
    q = vec3(0.0)
    r = vec3(0.0)
    if found:
        face = m.ray_faces[closest * _RAY_TRI_FLOATS + 3]
        p, q, r = _packed_corners(m, closest)
        uv = _closest_point_to_triangle(p, q, r, point)
        w = 1.0 - uv[0] - uv[1]
        v = uv[1]
        u = 1.0 - v - w
    return face, p, q, r, u, v, w


@func
def _closest(m: MeshData, point: vec3, max_dist: float32):
    """(found, face, u, v) of the closest non-sliver triangle strictly within max_dist.

    Warp's stack traversal (mesh_query_point_no_sign), over the tree packed for ray casts (a node's box and
    links in one line, a leaf's corners side by side, its sliver flag stored): the nearer child popped first
    (Warp's right one, the first in this preorder, when both are as near: a point inside both boxes), a child
    pushed when strictly nearer than the bound, a popped node tested again against the bound found meanwhile.
    The first leaves reached hold near triangles, so the bound shrinks at once and prunes the rest. Equally
    close triangles: the first found stays; the order is Warp's, and so is the face. The traversal gives the
    triangle (its packed position); its closest point is then computed again from the same corners, which is
    all the adjoint differentiates, as in _ray_traversal."""
    min_dist_sq = max_dist * max_dist
    found = bool(False)
    closest = int32(0)
    nodes = zeros(shape=_RAY_STACK, dtype=int32)
    depth = int32(0)
    if m.num_nodes > 0:
        depth = 1
    while depth > 0:
        depth -= 1
        n = nodes[depth]
        if _distance_to_aabb_sq(point, _xyz(m.ray_boxes[2 * n]), _xyz(m.ray_boxes[2 * n + 1])) <= min_dist_sq:
            end = m.ray_links[n * _RAY_NODE_FLOATS + 7]
            if end >= 0:
                for pc in range(m.ray_links[n * _RAY_NODE_FLOATS + 3], end):
                    if not _packed_sliver(m, pc):
                        p, q, r = _packed_corners(m, pc)
                        uv = _closest_point_to_triangle(p, q, r, point)
                        w = 1.0 - uv[0] - uv[1]
                        c = uv[0] * p + uv[1] * q + w * r
                        d = wp.length_sq(c - point)
                        if d < min_dist_sq:
                            min_dist_sq = d
                            closest = pc
                            found = True
            else:
                first, second, d_first, d_second = _child_distances_sq(m, point, n)
                far = second
                near = first
                d_far = d_second
                d_near = d_first
                if d_second < d_first:
                    far = first
                    near = second
                    d_far = d_first
                    d_near = d_second
                if d_far < min_dist_sq:
                    nodes[depth] = far
                    depth += 1
                if d_near < min_dist_sq:
                    nodes[depth] = near
                    depth += 1
    face, p, q, r, u, v, w = _packed_closest_point(m, found, closest, point)
    return found, face, u, v


@func
def _furthest(m: MeshData, point: vec3, min_dist: float32):
    """(found, face, u, v) of the furthest point of a non-sliver triangle strictly beyond min_dist.

    Warp's stack traversal (mesh_query_furthest_point_no_sign) over the tree packed for ray casts: the farther
    child popped first (Warp's right one, the first in this preorder, when both are as far), a child pushed
    when its box reaches strictly beyond the bound, a popped node tested again against the bound found
    meanwhile. Equally far triangles (the faces of the furthest vertex): the first found stays, Warp's. The
    traversal gives the triangle (its packed position); its furthest point is computed again from the same
    corners afterwards, which is all the adjoint differentiates, as in _closest."""
    max_dist_sq = min_dist * min_dist
    furthest = int32(0)
    nodes = zeros(shape=_RAY_STACK, dtype=int32)
    depth = int32(0)
    if m.num_nodes > 0:
        depth = 1
    while depth > 0:
        depth -= 1
        n = nodes[depth]
        if _furthest_distance_to_aabb_sq(point, _xyz(m.ray_boxes[2 * n]), _xyz(m.ray_boxes[2 * n + 1])) >= max_dist_sq:
            end = m.ray_links[n * _RAY_NODE_FLOATS + 7]
            if end >= 0:
                for pc in range(m.ray_links[n * _RAY_NODE_FLOATS + 3], end):
                    if not _packed_sliver(m, pc):
                        p, q, r = _packed_corners(m, pc)
                        uv = _furthest_point_to_triangle(p, q, r, point)
                        w = 1.0 - uv[0] - uv[1]
                        c = uv[0] * p + uv[1] * q + w * r
                        d = wp.length_sq(c - point)
                        if d > max_dist_sq:
                            max_dist_sq = d
                            furthest = pc
            else:
                first = n + 1
                second = m.ray_links[n * _RAY_NODE_FLOATS + 3]
                d_first = _furthest_distance_to_aabb_sq(point, _xyz(m.ray_boxes[2 * first]),
                                                        _xyz(m.ray_boxes[2 * first + 1]))
                d_second = _furthest_distance_to_aabb_sq(point, _xyz(m.ray_boxes[2 * second]),
                                                         _xyz(m.ray_boxes[2 * second + 1]))
                far = first
                near = second
                d_far = d_first
                d_near = d_second
                if d_second > d_first:
                    far = second
                    near = first
                    d_far = d_second
                    d_near = d_first
                if d_near > max_dist_sq:
                    nodes[depth] = near
                    depth += 1
                if d_far > max_dist_sq:
                    nodes[depth] = far
                    depth += 1
    found = max_dist_sq > min_dist * min_dist
    face = int32(0)
    v = float32(0.0)
    w = float32(0.0)
    if found:
        face = m.ray_faces[furthest * _RAY_TRI_FLOATS + _RAY_TRI_FACE]
        p, q, r = _packed_corners(m, furthest)
        uv = _furthest_point_to_triangle(p, q, r, point)
        v = uv[1]
        w = 1.0 - uv[0] - uv[1]
    return found, face, 1.0 - v - w, v


@func
def _inside_ray_tracing(m: MeshData, point: vec3) -> float32:
    """-1 when at least two of the +x, +y, +z rays first hit a back face, else 1 (Warp's vote)."""
    vote = int32(0)
    for i in range(3):
        d = vec3(0.0, 0.0, 0.0)
        d[i] = 1.0
        hit, s = _closest_hit_sign(m, point, d)
        if hit and s < 0.0:
            vote += 1
    result = float32(1.0)
    if vote >= 2:
        result = -1.0
    return result


@func
def _inside_parity(m: MeshData, point: vec3, n_sample: int32, perturbation_scale: float32) -> float32:
    """-1 when at least half of n_sample rays along (1, 1, 1) perturbed by Warp's seeded stream (rand_init(42))
    cross the surface an odd number of times, else 1."""
    vote = int32(0)
    state = rand_init(42)
    for i in range(n_sample):
        d = vec3(0.0, 0.0, 0.0)
        searching = bool(True)
        while searching:
            d = vec3(1.0, 1.0, 1.0) + vec3(randf(state, -perturbation_scale, perturbation_scale),
                                           randf(state, -perturbation_scale, perturbation_scale),
                                           randf(state, -perturbation_scale, perturbation_scale))
            searching = wp.length_sq(d) < 1.0e-8
        if _count_crossings(m, point, d, -1) % 2 == 1:
            vote += 1
    result = float32(1.0)
    if vote * 2 >= n_sample:
        result = -1.0
    return result


@func
def _winding_number(m: MeshData, point: vec3, accuracy: float32) -> float32:
    """The generalized winding number: the triangles' solid angles summed, over 4 pi; a node whose bounding
    ball (radius r about its area-weighted centre c) is farther than accuracy * r contributes its dipole
    term N . (c - x) / |c - x|^3 instead of its triangles' exact angles."""
    total = float32(0.0)
    n = int32(0)
    stop = _stop_node(m, -1)
    while n < stop:
        if m.prim_start[n] >= 0:
            for pc in range(m.prim_start[n], m.prim_end[n]):
                f = m.primitives[pc]
                total += _robust_solid_angle(m.points[m.indices[f * 3 + 0]], m.points[m.indices[f * 3 + 1]],
                                             m.points[m.indices[f * 3 + 2]], point)
            n = m.skip[n]
        else:
            d = m.wn_centers[n] - point
            dist_sq = wp.dot(d, d)
            reach = m.wn_radii[n] * accuracy
            if dist_sq > reach * reach:
                total += wp.dot(m.wn_normals[n], d) / (dist_sq * wp.sqrt(dist_sq))
                n = m.skip[n]
            else:
                n = n + 1
    return total * INV_4PI


@func
def _closest_sign_normal(m: MeshData, point: vec3, max_dist: float32, epsilon: float32):
    """(found, face, u, v, sign) as Warp's mesh_query_point_sign_normal: the closest triangle, its sign from
    the angle-weighted normals of every triangle within epsilon * average edge length of the closest
    distance (vertex: the corner's angle, edge: pi, face: 2 pi).

    Warp's traversal order, which decides what the normal sum holds: a stack, the nearer child popped first
    (Warp's right one, the first in this preorder, on a tie), a child pushed when nearer than the bound and a
    popped node tested again, over the tree packed for ray casts (the same boxes; a leaf's corners side by
    side, its sliver flag stored). The traversal gives the
    face (its packed position); its closest point is computed again from the same corners afterwards, which is
    all the adjoint differentiates (the loop's floats reach comparisons only), as in _closest."""
    min_dist = max_dist
    closest = int32(0)
    normal_sum = vec3(0.0, 0.0, 0.0)
    eps = m.average_edge_length * epsilon
    eps_sq = eps * eps
    nodes = zeros(shape=_RAY_STACK, dtype=int32)
    depth = int32(0)
    if m.num_nodes > 0:
        depth = 1
    while depth > 0:
        depth -= 1
        n = nodes[depth]
        bound = min_dist + eps
        if _distance_to_aabb_sq(point, _xyz(m.ray_boxes[2 * n]), _xyz(m.ray_boxes[2 * n + 1])) <= bound * bound:
            end = m.ray_links[n * _RAY_NODE_FLOATS + 7]
            if end >= 0:
                for pc in range(m.ray_links[n * _RAY_NODE_FLOATS + 3], end):
                    if not _packed_sliver(m, pc):
                        p, q, r = _packed_corners(m, pc)
                        e0 = q - p
                        e1 = r - p
                        e2 = r - q
                        nrm = wp.cross(e0, e1)
                        e0_sq = wp.dot(e0, e0)
                        e1_sq = wp.dot(e1, e1)
                        e2_sq = wp.dot(e2, e2)
                        uv = _closest_point_to_triangle(p, q, r, point)
                        w = 1.0 - uv[0] - uv[1]
                        c = uv[0] * p + uv[1] * q + w * r
                        dist = wp.sqrt(wp.length_sq(c - point))
                        if dist < min_dist + eps:
                            weight = float32(0.0)
                            cp = c - p
                            cq = c - q
                            cr = c - r
                            if wp.length_sq(cp) < eps_sq:
                                weight = wp.acos(wp.dot(wp.normalize(e0), wp.normalize(e1)))
                            elif wp.length_sq(cq) < eps_sq:
                                weight = wp.acos(wp.dot(wp.normalize(e2), wp.normalize(-e0)))
                            elif wp.length_sq(cr) < eps_sq:
                                weight = wp.acos(wp.dot(wp.normalize(-e1), wp.normalize(-e2)))
                            else:
                                e0cp = wp.dot(e0, cp)
                                e2cq = wp.dot(e2, cq)
                                e1cp = wp.dot(e1, cp)
                                if (wp.length_sq(cp) * e0_sq - e0cp * e0cp < eps_sq * e0_sq) or \
                                        (wp.length_sq(cq) * e2_sq - e2cq * e2cq < eps_sq * e2_sq) or \
                                        (wp.length_sq(cp) * e1_sq - e1cp * e1cp < eps_sq * e1_sq):
                                    weight = PI
                                else:
                                    weight = 2.0 * PI
                            if dist > min_dist - eps:  # as close as the closest: both count
                                normal_sum += weight * wp.normalize(nrm)
                                if dist < min_dist:
                                    min_dist = dist
                                    closest = pc
                            else:
                                min_dist = dist
                                closest = pc
                                normal_sum = weight * wp.normalize(nrm)
            else:
                first, second, d_first, d_second = _child_distances_sq(m, point, n)
                far = second
                near = first
                d_far = d_second
                d_near = d_first
                if d_second < d_first:
                    far = first
                    near = second
                    d_far = d_first
                    d_near = d_second
                bound = min_dist + eps
                if d_far < bound * bound:
                    nodes[depth] = far
                    depth += 1
                if d_near < bound * bound:
                    nodes[depth] = near
                    depth += 1
    found = min_dist < max_dist
    face, p, q, r, u, v, w = _packed_closest_point(m, found, closest, point)
    # (out of that function's branch, whose adjoint reaches what it reads: the sign's test has no derivative)
    side = wp.dot(normal_sum, point - (p * u + q * v + r * w))
    sign = wp.where(found and side <= 0.0, -1.0, 1.0)
    return found, face, u, v, sign


# -- the public queries: Warp's out-parameter forms and their struct forms -------------------------------
# Each query is one private function returning the struct; the struct form returns it, the out-parameter form
# copies it out (_copy_point / _copy_ray: the outputs written only when something was found, as Warp's).
@func
def _point_result(found: bool_, f: int32, u: float32, v: float32) -> MeshQueryPoint:
    """A point query's result: the face and (u, v) when found; the sign 0 until the query sets it."""
    result = MeshQueryPoint()
    result.result = found
    if found:
        result.face = f
        result.u = u
        result.v = v
    return result


@func
def _copy_point(q: MeshQueryPoint, inside: ref[float32], face: ref[int32], bary_u: ref[float32],
                bary_v: ref[float32]) -> bool:
    if q.result:
        face = q.face
        bary_u = q.u
        bary_v = q.v
        inside = q.sign
    return q.result


@func
def _point_no_sign(id: uint64, point: vec3, max_dist: float32) -> MeshQueryPoint:
    found, f, u, v = _closest(_mesh_data(id), point, max_dist)
    return _point_result(found, f, u, v)


@func
def _point_ray_sign(id: uint64, point: vec3, max_dist: float32) -> MeshQueryPoint:
    m = _mesh_data(id)
    found, f, u, v = _closest(m, point, max_dist)
    result = _point_result(found, f, u, v)
    if found:
        result.sign = _inside_ray_tracing(m, point)
    return result


@func
def _point_sign_parity(id: uint64, point: vec3, max_dist: float32, n_sample: int32,
                       perturbation_scale: float32) -> MeshQueryPoint:
    m = _mesh_data(id)
    found, f, u, v = _closest(m, point, max_dist)
    result = _point_result(found, f, u, v)
    if found:
        result.sign = _inside_parity(m, point, n_sample, perturbation_scale)
    return result


@func
def _point_sign_normal(id: uint64, point: vec3, max_dist: float32, epsilon: float32) -> MeshQueryPoint:
    found, f, u, v, s = _closest_sign_normal(_mesh_data(id), point, max_dist, epsilon)
    result = _point_result(found, f, u, v)
    if found:
        result.sign = s
    return result


@func
def _winding_sign(m: MeshData, point: vec3, accuracy: float32, threshold: float32) -> float32:
    result = float32(1.0)
    if m.winding == 0:
        result = _inside_ray_tracing(m, point)
    elif _winding_number(m, point, accuracy) > threshold:
        result = -1.0
    return result


@func
def _point_sign_winding_number(id: uint64, point: vec3, max_dist: float32, accuracy: float32,
                               threshold: float32) -> MeshQueryPoint:
    m = _mesh_data(id)
    found, f, u, v = _closest(m, point, max_dist)
    result = _point_result(found, f, u, v)
    if found:
        result.sign = _winding_sign(m, point, accuracy, threshold)
    return result


@func
def _furthest_no_sign(id: uint64, point: vec3, min_dist: float32) -> MeshQueryPoint:
    found, f, u, v = _furthest(_mesh_data(id), point, min_dist)
    return _point_result(found, f, u, v)


@func
def mesh_query_point_no_sign(id: uint64, point: vec3, max_dist: float32, face: ref[int32], bary_u: ref[float32],
                             bary_v: ref[float32]) -> bool:
    """The closest point of the mesh within max_dist: its face and barycentric (u, v); no sign."""
    sign = float32(0.0)
    return _copy_point(_point_no_sign(id, point, max_dist), sign, face, bary_u, bary_v)


@func
def mesh_query_point_no_sign(id: uint64, point: vec3, max_dist: float32) -> MeshQueryPoint:  # noqa: F811
    return _point_no_sign(id, point, max_dist)


@func
def mesh_query_point(id: uint64, point: vec3, max_dist: float32, inside: ref[float32], face: ref[int32],
                     bary_u: ref[float32], bary_v: ref[float32]) -> bool:
    """The closest point within max_dist and its sign (< 0 inside, from Warp's three axis rays)."""
    return _copy_point(_point_ray_sign(id, point, max_dist), inside, face, bary_u, bary_v)


@func
def mesh_query_point(id: uint64, point: vec3, max_dist: float32) -> MeshQueryPoint:  # noqa: F811
    return _point_ray_sign(id, point, max_dist)


@func
def mesh_query_point_sign_parity(id: uint64, point: vec3, max_dist: float32, inside: ref[float32],
                                 face: ref[int32], bary_u: ref[float32], bary_v: ref[float32],
                                 n_sample: int32 = 1, perturbation_scale: float32 = 0.1) -> bool:
    """The closest point within max_dist; its sign by the parity of ray crossings (n_sample rays)."""
    q = _point_sign_parity(id, point, max_dist, n_sample, perturbation_scale)
    return _copy_point(q, inside, face, bary_u, bary_v)


@func
def mesh_query_point_sign_parity(id: uint64, point: vec3, max_dist: float32, n_sample: int32 = 1,  # noqa: F811
                                 perturbation_scale: float32 = 0.1) -> MeshQueryPoint:
    return _point_sign_parity(id, point, max_dist, n_sample, perturbation_scale)


@func
def mesh_query_point_sign_normal(id: uint64, point: vec3, max_dist: float32, inside: ref[float32],
                                 face: ref[int32], bary_u: ref[float32], bary_v: ref[float32],
                                 epsilon: float32 = 1.0e-3) -> bool:
    """The closest point within max_dist; its sign from the angle-weighted normals of the closest features."""
    return _copy_point(_point_sign_normal(id, point, max_dist, epsilon), inside, face, bary_u, bary_v)


@func
def mesh_query_point_sign_normal(id: uint64, point: vec3, max_dist: float32,  # noqa: F811
                                 epsilon: float32 = 1.0e-3) -> MeshQueryPoint:
    return _point_sign_normal(id, point, max_dist, epsilon)


@func
def mesh_query_point_sign_winding_number(id: uint64, point: vec3, max_dist: float32, inside: ref[float32],
                                         face: ref[int32], bary_u: ref[float32], bary_v: ref[float32],
                                         accuracy: float32 = 2.0, threshold: float32 = 0.5) -> bool:
    """The closest point within max_dist; inside (-1) when the winding number exceeds threshold (a mesh built
    without support_winding_number: the three-ray vote of mesh_query_point)."""
    q = _point_sign_winding_number(id, point, max_dist, accuracy, threshold)
    return _copy_point(q, inside, face, bary_u, bary_v)


@func
def mesh_query_point_sign_winding_number(id: uint64, point: vec3, max_dist: float32,  # noqa: F811
                                         accuracy: float32 = 2.0, threshold: float32 = 0.5) -> MeshQueryPoint:
    return _point_sign_winding_number(id, point, max_dist, accuracy, threshold)


@func
def mesh_query_furthest_point_no_sign(id: uint64, point: vec3, min_dist: float32, face: ref[int32],
                                      bary_u: ref[float32], bary_v: ref[float32]) -> bool:
    """The furthest point of the mesh strictly beyond min_dist: its face and barycentric (u, v)."""
    sign = float32(0.0)
    return _copy_point(_furthest_no_sign(id, point, min_dist), sign, face, bary_u, bary_v)


@func
def mesh_query_furthest_point_no_sign(id: uint64, point: vec3, min_dist: float32) -> MeshQueryPoint:  # noqa: F811
    return _furthest_no_sign(id, point, min_dist)


# Warp's builtins: their out-parameters and query states may be temporaries
for _f in (mesh_query_point_no_sign, mesh_query_point, mesh_query_point_sign_parity, mesh_query_point_sign_normal,
           mesh_query_point_sign_winding_number, mesh_query_furthest_point_no_sign):
    takes_temporaries(_f)
