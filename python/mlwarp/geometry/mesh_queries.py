"""wp.Mesh's kernel functions (Warp 1.19's mesh_* builtins, warp/native/mesh.h), written in the kernel language
as @wp.func over `array(ptr=..., shape=..., dtype=...)` views of the mesh descriptor
(core/geometry.py), so they compile for the CPU and CUDA like any user function, plus the grouped-tree
lookups wp.bvh_get_group_root / wp.mesh_get_group_root.

Traversals use the tree's stackless preorder (a node that passes its test continues at n + 1, anything else
at skip[n]); a query from a root visits that node's subtree [root, skip[root]). Ray casts use a stack over the
tree packed for them, 4-wide for a whole-tree cast (_wide_ray_traversal). Results are Warp's: the same
tests (its closest point on a triangle, sliver rejection, Woop's watertight ray-triangle test, its ray-box
slab tests), the same strict comparisons; where two triangles are exactly as close, which one is reported
follows this tree's order, not Warp's. Signs: `mesh_query_point` and `_sign_winding_number` on a mesh built
without winding support use Warp's three axis rays (inside when at least two first hits are back faces);
`_sign_parity` counts crossings along perturbed (1, 1, 1) rays; `_sign_normal` is Warp's angle-weighted
normal of the closest features; winding numbers sum the exact solid angles of near triangles and a dipole
term for each tree node farther than `accuracy` times its radius (Warp's far field also has the quadrupole
and octupole terms; both approximate the same sum, so inside/outside decisions agree away from the surface,
and a larger `accuracy` makes both exact)."""

from __future__ import annotations

from mlwarp.arrays.array import array, zeros
from mlwarp.library.builtins import namespace as wp  # wp.dot, wp.cross, ...: the builtins, spelt as in user code
from mlwarp.library.constants import INF
from mlwarp.core.refs import ref
from mlwarp.core import geometry as layout
from mlwarp.core.hints import prefetch
from mlwarp.kernels.func import func
from mlwarp.library.random import rand_init, randf
from mlwarp.kernels.struct import struct
from mlwarp.types import bool_, float32, float64, int32, int64, uint64
from mlwarp.core.vector import vec2, vec3, vec4, vec4d

FLT_MAX = 3.4028234663852886e38
_RAY_STACK = layout.RAY_STACK
PI = 3.14159265359
INV_4PI = 0.07957747154

_MESH_WORDS = layout.MESH_WORDS
_BVH_WORDS = layout.BVH_WORDS
_RAY_NODE_FLOATS = layout.RAY_NODE_FLOATS
_RAY_TRI_FLOATS = layout.RAY_TRI_FLOATS
_RAY_WIDE_FLOATS = layout.RAY_WIDE_FLOATS
_RAY_LEAF_FLOATS = layout.RAY_LEAF_FLOATS


@struct
class MeshQueryPoint:
    """Output for the mesh query point functions: `result` (a point was found), `sign` (< 0 inside),
    `face`, and the closest point's barycentric `u`, `v`."""

    result: bool_
    sign: float32
    face: int32
    u: float32
    v: float32


@struct
class MeshQueryRay:
    """Output for the mesh query ray functions: `result` (a hit), `sign` (> 0 when the ray hit the front of
    the face), `face`, the hit's distance `t` along the ray, its barycentric `u`, `v`, the face `normal`."""

    result: bool_
    sign: float32
    face: int32
    t: float32
    u: float32
    v: float32
    normal: vec3


@struct
class MeshQueryAABB:
    """The state of a mesh AABB or sphere query (advanced by wp.mesh_query_next / wp.mesh_query_aabb_next);
    `kind` 0: triangles whose boxes overlap [lower, upper], 1: triangles within sqrt(radius_sq) of the centre
    lower (= upper). Warp's MeshQuery, MeshQueryAABB and sphere query are this one type here."""

    mesh: uint64
    kind: int32
    radius_sq: float32
    lower: vec3
    upper: vec3
    node: int32
    stop: int32
    prim_cur: int32
    prim_end: int32
    face: int32


@struct
class MeshData:
    """What wp.mesh_get(id) gives: the mesh's arrays (`points`, `velocities`, `indices`) and its tree's."""

    points: array(dtype=vec3)
    velocities: array(dtype=vec3)
    indices: array(dtype=int32)
    num_points: int32
    num_tris: int32
    node_lowers: array(dtype=vec3)
    node_uppers: array(dtype=vec3)
    skip: array(dtype=int32)
    prim_start: array(dtype=int32)
    prim_end: array(dtype=int32)
    primitives: array(dtype=int32)
    tri_lowers: array(dtype=vec3)
    tri_uppers: array(dtype=vec3)
    num_nodes: int32
    average_edge_length: float32
    winding: int32
    bvh: uint64
    wn_normals: array(dtype=vec3)
    wn_centers: array(dtype=vec3)
    wn_radii: array(dtype=float32)
    ray_boxes: array(dtype=vec4)  # the packed ray-cast nodes (MESH_RAY_NODES): node n's lower at 2n, upper at 2n + 1
    ray_links: array(dtype=int32)  # the same memory: node n's links at 8n + 3 and 8n + 7
    ray_tris: array(dtype=vec4)  # the packed triangles (MESH_RAY_TRIS): position pc's corners at 3pc, 3pc + 1, 3pc + 2
    ray_faces: array(dtype=int32)  # the same memory: position pc's face at 12pc + 3
    ray_wide: array(dtype=vec4)  # the 4-wide tree (MESH_RAY_WIDE): node w's rows at 8w .. 8w + 5
    ray_wide_links: array(dtype=int32)  # the same memory: node w's children at 32w + 24 .. 32w + 27
    num_wide: int32  # 0: no 4-wide tree
    ray_leaves: array(dtype=vec4)  # the wide tree's leaf groups (MESH_RAY_LEAVES): group g's rows at 10g .. 10g + 8
    ray_leaf_faces: array(dtype=int32)  # the same memory: group g's triangles' faces at 40g + 36 .. 40g + 39


# -- descriptors --------------------------------------------------------------------------------------------
@func
def _word(id: uint64, count: int32, k: int32) -> int64:
    return array(ptr=id, shape=(count,), dtype=int64)[k]


@func
def _words_f32(id: uint64, count: int32, k: int32) -> float32:
    return array(ptr=id, shape=(count * 2,), dtype=float32)[k * 2]


@func
def _mesh_data(id: uint64) -> MeshData:
    """The mesh `id` as a struct: `points`, `velocities` (empty without velocities) and `indices` arrays. The
    queries read through it: their arrays have no adjoint, as Warp's mesh_* builtins pass none to the points."""
    m = MeshData()
    n = int32(_word(id, _MESH_WORDS, layout.MESH_NUM_POINTS))
    tris = int32(_word(id, _MESH_WORDS, layout.MESH_NUM_TRIS))
    m.num_points = n
    m.num_tris = tris
    m.points = array(ptr=_word(id, _MESH_WORDS, layout.MESH_POINTS), shape=(n,), dtype=vec3)
    vel = _word(id, _MESH_WORDS, layout.MESH_VELOCITIES)
    nv = int32(0)
    if vel != int64(0):
        nv = n
    m.velocities = array(ptr=vel, shape=(nv,), dtype=vec3)
    m.indices = array(ptr=_word(id, _MESH_WORDS, layout.MESH_INDICES), shape=(tris * 3,), dtype=int32)
    m.average_edge_length = _words_f32(id, _MESH_WORDS, layout.MESH_AVERAGE_EDGE_LENGTH)
    m.winding = int32(_word(id, _MESH_WORDS, layout.MESH_WINDING))
    bvh = uint64(_word(id, _MESH_WORDS, layout.MESH_BVH))
    m.bvh = bvh
    nodes = int32(_word(bvh, _BVH_WORDS, layout.BVH_NUM_NODES))
    m.num_nodes = nodes
    m.node_lowers = array(ptr=_word(bvh, _BVH_WORDS, layout.BVH_NODE_LOWERS), shape=(nodes,), dtype=vec3)
    m.node_uppers = array(ptr=_word(bvh, _BVH_WORDS, layout.BVH_NODE_UPPERS), shape=(nodes,), dtype=vec3)
    m.skip = array(ptr=_word(bvh, _BVH_WORDS, layout.BVH_SKIP), shape=(nodes,), dtype=int32)
    m.prim_start = array(ptr=_word(bvh, _BVH_WORDS, layout.BVH_PRIM_START), shape=(nodes,), dtype=int32)
    m.prim_end = array(ptr=_word(bvh, _BVH_WORDS, layout.BVH_PRIM_END), shape=(nodes,), dtype=int32)
    m.primitives = array(ptr=_word(bvh, _BVH_WORDS, layout.BVH_PRIMITIVES), shape=(tris,), dtype=int32)
    m.tri_lowers = array(ptr=_word(bvh, _BVH_WORDS, layout.BVH_ITEM_LOWERS), shape=(tris,), dtype=vec3)
    m.tri_uppers = array(ptr=_word(bvh, _BVH_WORDS, layout.BVH_ITEM_UPPERS), shape=(tris,), dtype=vec3)
    wn_nodes = int32(0)
    if m.winding != 0:
        wn_nodes = nodes
    m.wn_normals = array(ptr=_word(id, _MESH_WORDS, layout.MESH_WN_NORMALS), shape=(wn_nodes,), dtype=vec3)
    m.wn_centers = array(ptr=_word(id, _MESH_WORDS, layout.MESH_WN_CENTERS), shape=(wn_nodes,), dtype=vec3)
    m.wn_radii = array(ptr=_word(id, _MESH_WORDS, layout.MESH_WN_RADII), shape=(wn_nodes,), dtype=float32)
    packed = _word(id, _MESH_WORDS, layout.MESH_RAY_NODES)
    m.ray_boxes = array(ptr=packed, shape=(nodes * 2,), dtype=vec4)
    m.ray_links = array(ptr=packed, shape=(nodes * _RAY_NODE_FLOATS,), dtype=int32)
    tri_data = _word(id, _MESH_WORDS, layout.MESH_RAY_TRIS)
    m.ray_tris = array(ptr=tri_data, shape=(tris * 3,), dtype=vec4)
    m.ray_faces = array(ptr=tri_data, shape=(tris * _RAY_TRI_FLOATS,), dtype=int32)
    wide = int32(_word(id, _MESH_WORDS, layout.MESH_RAY_WIDE_NODES))
    m.num_wide = wide
    wide_data = _word(id, _MESH_WORDS, layout.MESH_RAY_WIDE)
    m.ray_wide = array(ptr=wide_data, shape=(wide * 8,), dtype=vec4)
    m.ray_wide_links = array(ptr=wide_data, shape=(wide * _RAY_WIDE_FLOATS,), dtype=int32)
    groups = int32(_word(id, _MESH_WORDS, layout.MESH_RAY_LEAF_GROUPS))
    leaf_data = _word(id, _MESH_WORDS, layout.MESH_RAY_LEAVES)
    m.ray_leaves = array(ptr=leaf_data, shape=(groups * 10,), dtype=vec4)
    m.ray_leaf_faces = array(ptr=leaf_data, shape=(groups * _RAY_LEAF_FLOATS,), dtype=int32)
    return m


@func
def mesh_get(id: uint64) -> MeshData:
    """The mesh `id` as a struct: `points`, `velocities` (empty without velocities) and `indices` arrays. As in
    Warp, whose Mesh holds the user's arrays with their grads, a read through `points` or `velocities` passes
    its adjoint to that array's .grad (none when it has no grad)."""
    m = _mesh_data(id)
    m.points = array(ptr=_word(id, _MESH_WORDS, layout.MESH_POINTS), shape=(m.num_points,), dtype=vec3,
                     grad=_word(id, _MESH_WORDS, layout.MESH_POINTS_GRAD))
    m.velocities = array(ptr=_word(id, _MESH_WORDS, layout.MESH_VELOCITIES), shape=(m.velocities.shape[0],),
                         dtype=vec3, grad=_word(id, _MESH_WORDS, layout.MESH_VELOCITIES_GRAD))
    return m


@func
def mesh_get_bvh(id: uint64) -> uint64:
    """The id of the mesh's tree over its triangles, for the wp.bvh_query_* functions."""
    return uint64(_word(id, _MESH_WORDS, layout.MESH_BVH))


@func
def bvh_get_group_root(id: uint64, group: int32) -> int32:
    """The root node of group `group`'s subtree of a grouped tree, -1 when no item has that group (an
    ungrouped tree's items are all group 0, its root node 0)."""
    count = int32(_word(id, _BVH_WORDS, layout.BVH_NUM_GROUPS))
    ids = array(ptr=_word(id, _BVH_WORDS, layout.BVH_GROUP_IDS), shape=(count,), dtype=int32)
    lo = int32(0)
    hi = count
    while lo < hi:  # the first id >= group
        mid = (lo + hi) // 2
        if ids[mid] < group:
            lo = mid + 1
        else:
            hi = mid
    root = int32(-1)
    if lo < count:
        if ids[lo] == group:
            roots = array(ptr=_word(id, _BVH_WORDS, layout.BVH_GROUP_ROOTS), shape=(count,), dtype=int32)
            root = roots[lo]
    return root


@func
def mesh_get_group_root(id: uint64, group: int32) -> int32:
    """bvh_get_group_root of the mesh's tree (groups= of wp.Mesh: one group id per triangle)."""
    return bvh_get_group_root(mesh_get_bvh(id), group)


@func
def _first_node(m: MeshData, root: int32) -> int32:
    first = root
    if root < 0:
        first = int32(0)
    return first


@func
def _stop_node(m: MeshData, root: int32) -> int32:
    """One past the last node of the subtree at `root` (-1: the whole tree); 0 for a mesh without nodes."""
    stop = int32(0)
    if m.num_nodes > 0:
        stop = m.skip[_first_node(m, root)]
    return stop


# -- element access -----------------------------------------------------------------------------------------
@func
def mesh_get_point(id: uint64, index: int32) -> vec3:
    """The point of face-vertex `index` (points[indices[index]]), as Warp."""
    m = _mesh_data(id)
    return m.points[m.indices[index]]


@func
def mesh_get_velocity(id: uint64, index: int32) -> vec3:
    """The velocity of face-vertex `index` (velocities[indices[index]]); zero for a mesh without velocities."""
    m = _mesh_data(id)
    result = vec3(0.0, 0.0, 0.0)
    if m.velocities.shape[0] > 0:
        result = m.velocities[m.indices[index]]
    return result


@func
def mesh_get_index(id: uint64, face_vertex_index: int32) -> int32:
    """The point index of face-vertex `face_vertex_index` (indices[face_vertex_index])."""
    m = _mesh_data(id)
    return m.indices[face_vertex_index]


@func
def mesh_eval_position(id: uint64, face: int32, bary_u: float32, bary_v: float32) -> vec3:
    """The point with barycentric (u, v, 1 - u - v) on triangle `face`."""
    m = _mesh_data(id)
    p = m.points[m.indices[face * 3 + 0]]
    q = m.points[m.indices[face * 3 + 1]]
    r = m.points[m.indices[face * 3 + 2]]
    return p * bary_u + q * bary_v + r * (1.0 - bary_u - bary_v)


@func
def mesh_eval_velocity(id: uint64, face: int32, bary_u: float32, bary_v: float32) -> vec3:
    """The velocity interpolated with barycentric (u, v, 1 - u - v) on triangle `face` (zero without
    velocities)."""
    m = _mesh_data(id)
    result = vec3(0.0, 0.0, 0.0)
    if m.velocities.shape[0] > 0:
        p = m.velocities[m.indices[face * 3 + 0]]
        q = m.velocities[m.indices[face * 3 + 1]]
        r = m.velocities[m.indices[face * 3 + 2]]
        result = p * bary_u + q * bary_v + r * (1.0 - bary_u - bary_v)
    return result


@func
def mesh_eval_face_normal(id: uint64, face: int32) -> vec3:
    """The unit normal of triangle `face` (counter-clockwise winding: normalize((q - p) x (r - p)))."""
    m = _mesh_data(id)
    p = m.points[m.indices[face * 3 + 0]]
    q = m.points[m.indices[face * 3 + 1]]
    r = m.points[m.indices[face * 3 + 2]]
    return wp.normalize(wp.cross(q - p, r - p))


# -- geometric kernels ------------------------------------------------------------------------------------
@func
def _closest_point_to_triangle(a: vec3, b: vec3, c: vec3, p: vec3) -> vec2:
    """Barycentric weights (of a, of b) of the point of triangle abc closest to p (Ericson's regions)."""
    ab = b - a
    ac = c - a
    ap = p - a
    d1 = wp.dot(ab, ap)
    d2 = wp.dot(ac, ap)
    result = vec2(0.0, 0.0)
    found = bool(False)
    if d1 <= 0.0 and d2 <= 0.0:
        result = vec2(1.0, 0.0)
        found = True
    bp = p - b
    d3 = wp.dot(ab, bp)
    d4 = wp.dot(ac, bp)
    if not found and d3 >= 0.0 and d4 <= d3:
        result = vec2(0.0, 1.0)
        found = True
    vc = d1 * d4 - d3 * d2
    if not found and vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        result = vec2(1.0 - v, v)
        found = True
    cp = p - c
    d5 = wp.dot(ab, cp)
    d6 = wp.dot(ac, cp)
    if not found and d6 >= 0.0 and d5 <= d6:
        result = vec2(0.0, 0.0)
        found = True
    vb = d5 * d2 - d1 * d6
    if not found and vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        result = vec2(1.0 - w, 0.0)
        found = True
    va = d3 * d6 - d5 * d4
    if not found and va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        result = vec2(0.0, 1.0 - w)
        found = True
    if not found:
        denom = 1.0 / (va + vb + vc)
        v = vb * denom
        w = vc * denom
        result = vec2(1.0 - v - w, v)
    return result


@func
def _furthest_point_to_triangle(a: vec3, b: vec3, c: vec3, p: vec3) -> vec2:
    """Barycentric weights (of a, of b) of the triangle's vertex furthest from p (Warp's tie order)."""
    dist_a = wp.length_sq(p - a)
    dist_b = wp.length_sq(p - b)
    dist_c = wp.length_sq(p - c)
    result = vec2(0.0, 0.0)
    if dist_a > dist_b and dist_a > dist_c:
        result = vec2(1.0, 0.0)
    elif dist_b > dist_c:
        result = vec2(0.0, 1.0)
    return result


@func
def _distance_to_aabb_sq(p: vec3, lower: vec3, upper: vec3) -> float32:
    d = wp.min(upper, wp.max(lower, p)) - p
    return wp.dot(d, d)


@func
def _furthest_distance_to_aabb_sq(p: vec3, lower: vec3, upper: vec3) -> float32:
    d = wp.max(wp.abs(p - lower), wp.abs(p - upper))
    return wp.dot(d, d)


@func
def _is_sliver(p: vec3, q: vec3, r: vec3) -> bool:
    """Warp's sliver test: |(q - p) x (r - p)| / (sum of squared edge lengths) < 1e-6."""
    e0 = q - p
    e1 = r - p
    e2 = r - q
    return wp.length(wp.cross(e0, e1)) / (wp.dot(e0, e0) + wp.dot(e1, e1) + wp.dot(e2, e2)) < 1.0e-6


@func
def _diff_product(a: float32, b: float32, c: float32, d: float32) -> float32:
    """a b - c d, rounded once from float64 (the products are exact there)."""
    return float32(float64(a) * float64(b) - float64(c) * float64(d))


@func
def _pick(v: vec3, k: int32) -> float32:
    """v[k] for a run-time k in 0..2, by selects (one value per SIMD lane, no indexed memory access)."""
    return wp.where(k == 0, v[0], wp.where(k == 1, v[1], v[2]))


@func
def _ray_shear(dir: vec3):
    """The part of Woop's test that depends on the ray only: (kx, ky, kz, sx, sy, sz), kz the axis of the
    direction's largest component (the winding kept by swapping kx and ky when it is negative), sx, sy, sz the
    shear to that axis. A traversal computes it once (three divisions a triangle otherwise)."""
    kz = int32(0)
    ad = wp.abs(dir)
    if ad[1] > ad[0]:
        kz = 1
    if ad[2] > _pick(ad, kz):
        kz = 2
    kx = kz + 1
    if kx == 3:
        kx = 0
    ky = kx + 1
    if ky == 3:
        ky = 0
    dz = _pick(dir, kz)
    if dz < 0.0:
        tmp = kx
        kx = ky
        ky = tmp
    sx = _pick(dir, kx) / dz
    sy = _pick(dir, ky) / dz
    sz = 1.0 / dz
    return kx, ky, kz, sx, sy, sz


@func
def _ray_triangle(start: vec3, dir: vec3, a: vec3, b: vec3, c: vec3):
    """Woop, Benthin and Wald's watertight ray-triangle test, as Warp's intersect_ray_tri_woop: (hit, t, u,
    v, sign); sign is the determinant (> 0 for a ray hitting the front face, counter-clockwise seen from the
    ray's start)."""
    kx, ky, kz, sx, sy, sz = _ray_shear(dir)
    return _sheared_ray_triangle(start, kx, ky, kz, sx, sy, sz, a, b, c)


@func
def _sheared_ray_triangle(start: vec3, kx: int32, ky: int32, kz: int32, sx: float32, sy: float32, sz: float32,
                          a: vec3, b: vec3, c: vec3):
    """_ray_triangle with the ray's shear (_ray_shear) given."""
    va = a - start
    vb = b - start
    vc = c - start
    az = _pick(va, kz)
    bz = _pick(vb, kz)
    cz = _pick(vc, kz)
    ax = _pick(va, kx) - sx * az
    ay = _pick(va, ky) - sy * az
    bx = _pick(vb, kx) - sx * bz
    by = _pick(vb, ky) - sy * bz
    cx = _pick(vc, kx) - sx * cz
    cy = _pick(vc, ky) - sy * cz
    uu = _diff_product(cx, by, cy, bx)
    vv = _diff_product(ax, cy, ay, cx)
    ww = _diff_product(bx, ay, by, ax)
    hit = bool(True)
    if (uu < 0.0 or vv < 0.0 or ww < 0.0) and (uu > 0.0 or vv > 0.0 or ww > 0.0):
        hit = False
    det = uu + vv + ww
    if det == 0.0:
        hit = False
    t = float32(0.0)
    u = float32(0.0)
    v = float32(0.0)
    if hit:
        tt = uu * (sz * az) + vv * (sz * bz) + ww * (sz * cz)
        if (tt < 0.0 and det > 0.0) or (tt > 0.0 and det < 0.0):  # T with det's sign < 0: behind the start
            hit = False
        else:
            rcp = 1.0 / det
            u = uu * rcp
            v = vv * rcp
            t = tt * rcp
    return hit, t, u, v, det


@func
def _ray_box(start: vec3, dir: vec3, rcp_dir: vec3, robust: bool, lower: vec3, upper: vec3):
    """Warp's slab test: (hit, t_entry); the robust form (any direction with a zero component) treats a zero
    component's slab as a containment test instead of dividing by zero."""
    lmin = float32(-FLT_MAX)
    lmax = float32(FLT_MAX)
    inside = bool(True)
    for i in range(3):
        if robust and dir[i] == 0.0:
            if start[i] < lower[i] or start[i] > upper[i]:
                inside = False
        else:
            l1 = (lower[i] - start[i]) * rcp_dir[i]
            l2 = (upper[i] - start[i]) * rcp_dir[i]
            if robust or i > 0:
                lmin = wp.max(wp.min(l1, l2), lmin)
                lmax = wp.min(wp.max(l1, l2), lmax)
            else:
                lmin = wp.min(l1, l2)
                lmax = wp.max(l1, l2)
    hit = inside and lmax >= 0.0 and lmax >= lmin
    return hit, lmin


@func
def _safe_rcp(dir: vec3) -> vec3:
    """1 / dir with a zero component taken as 1e-20, as Warp's mesh_query_ray_safe_dir."""
    d = dir
    for i in range(3):
        if d[i] == 0.0:
            d[i] = 1.0e-20
    return vec3(1.0 / d[0], 1.0 / d[1], 1.0 / d[2])


@func
def _robust_solid_angle(a: vec3, b: vec3, c: vec3, p: vec3) -> float32:
    """The signed solid angle of triangle abc seen from p (van Oosterom and Strackee's formula)."""
    qa = a - p
    qb = b - p
    qc = c - p
    la = wp.length(qa)
    lb = wp.length(qb)
    lc = wp.length(qc)
    result = float32(0.0)
    if la != 0.0 and lb != 0.0 and lc != 0.0:
        qa = qa / la
        qb = qb / lb
        qc = qc / lc
        numerator = wp.dot(qa, wp.cross(qb - qa, qc - qa))
        if numerator != 0.0:
            denominator = 1.0 + wp.dot(qa, qb) + wp.dot(qa, qc) + wp.dot(qb, qc)
            result = 2.0 * wp.atan2(numerator, denominator)
    return result


# -- traversals -------------------------------------------------------------------------------------------
@func
def _packed_corners(m: MeshData, pc: int32):
    """The corners p, q, r of the triangle at packed position pc (MESH_RAY_TRIS)."""
    return _xyz(m.ray_tris[3 * pc]), _xyz(m.ray_tris[3 * pc + 1]), _xyz(m.ray_tris[3 * pc + 2])


@func
def _child_distances_sq(m: MeshData, point: vec3, n: int32):
    """(left, right, d_left, d_right): inner node n's children in the ray-packed tree and the squared distances
    from `point` to their boxes."""
    left = n + 1
    right = m.ray_links[n * _RAY_NODE_FLOATS + 3]
    d_left = _distance_to_aabb_sq(point, _xyz(m.ray_boxes[2 * left]), _xyz(m.ray_boxes[2 * left + 1]))
    d_right = _distance_to_aabb_sq(point, _xyz(m.ray_boxes[2 * right]), _xyz(m.ray_boxes[2 * right + 1]))
    return left, right, d_left, d_right


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

    Nearer child first, over the tree packed for ray casts (a node's box and links in one line, a leaf's
    corners side by side), as Warp's stack traversal: the first leaves reached hold near triangles, so the
    bound shrinks at once and prunes the rest (the stackless preorder entered every left child first: on a
    100k-triangle terrain ten times Warp's time). A popped node is tested again against the bound found
    meanwhile. Equally close triangles: the first found stays. The traversal gives the triangle (its packed
    position); its closest point is then computed again from the same corners, which is all the adjoint
    differentiates, as in _ray_traversal."""
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
                    p, q, r = _packed_corners(m, pc)
                    if not _is_sliver(p, q, r):
                        uv = _closest_point_to_triangle(p, q, r, point)
                        w = 1.0 - uv[0] - uv[1]
                        c = uv[0] * p + uv[1] * q + w * r
                        d = wp.length_sq(c - point)
                        if d < min_dist_sq:
                            min_dist_sq = d
                            closest = pc
                            found = True
            else:
                left, right, d_left, d_right = _child_distances_sq(m, point, n)
                near = left
                far = right
                d_far = d_right
                if d_right < d_left:
                    near = right
                    far = left
                    d_far = d_left
                if d_far <= min_dist_sq:
                    nodes[depth] = far
                    depth += 1
                nodes[depth] = near  # (tested again when popped)
                depth += 1
    face, p, q, r, u, v, w = _packed_closest_point(m, found, closest, point)
    return found, face, u, v


@func
def _furthest(m: MeshData, point: vec3, min_dist: float32):
    """(found, face, u, v) of the furthest point of a non-sliver triangle strictly beyond min_dist."""
    max_dist_sq = min_dist * min_dist
    face = int32(0)
    best_v = float32(0.0)
    best_w = float32(0.0)
    n = int32(0)
    stop = _stop_node(m, -1)
    while n < stop:
        if _furthest_distance_to_aabb_sq(point, m.node_lowers[n], m.node_uppers[n]) < max_dist_sq:
            n = m.skip[n]
        elif m.prim_start[n] >= 0:
            for pc in range(m.prim_start[n], m.prim_end[n]):
                f = m.primitives[pc]
                p = m.points[m.indices[f * 3 + 0]]
                q = m.points[m.indices[f * 3 + 1]]
                r = m.points[m.indices[f * 3 + 2]]
                if not _is_sliver(p, q, r):
                    uv = _furthest_point_to_triangle(p, q, r, point)
                    w = 1.0 - uv[0] - uv[1]
                    c = uv[0] * p + uv[1] * q + w * r
                    d = wp.length_sq(c - point)
                    if d > max_dist_sq:
                        max_dist_sq = d
                        best_v = uv[1]
                        best_w = w
                        face = f
            n = m.skip[n]
        else:
            n = n + 1
    found = max_dist_sq > min_dist * min_dist
    return found, face, 1.0 - best_v - best_w, best_v


@func
def _closest_hit_sign(m: MeshData, start: vec3, dir: vec3):
    """(hit, sign) of the first triangle along an axis ray (robust box tests), for the inside test."""
    rcp = vec3(1.0 / dir[0], 1.0 / dir[1], 1.0 / dir[2])
    min_t = float32(FLT_MAX)
    sign = float32(0.0)
    hit = bool(False)
    n = int32(0)
    stop = _stop_node(m, -1)
    while n < stop:
        box_hit, t_box = _ray_box(start, dir, rcp, True, m.node_lowers[n], m.node_uppers[n])
        if not (box_hit and t_box < min_t):
            n = m.skip[n]
        elif m.prim_start[n] >= 0:
            for pc in range(m.prim_start[n], m.prim_end[n]):
                f = m.primitives[pc]
                tri_hit, t, u, v, s = _ray_triangle(start, dir, m.points[m.indices[f * 3 + 0]],
                                                    m.points[m.indices[f * 3 + 1]], m.points[m.indices[f * 3 + 2]])
                if tri_hit and t >= 0.0 and t < min_t:
                    min_t = t
                    sign = s
                    hit = True
            n = m.skip[n]
        else:
            n = n + 1
    return hit, sign


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
def _count_crossings(m: MeshData, start: vec3, dir: vec3, root: int32) -> int32:
    """Hits at t >= 0 of every triangle whose box the ray enters (robust box tests), as Warp."""
    rcp = vec3(1.0 / dir[0], 1.0 / dir[1], 1.0 / dir[2])
    count = int32(0)
    n = _first_node(m, root)
    stop = _stop_node(m, root)
    while n < stop:
        box_hit, t_box = _ray_box(start, dir, rcp, True, m.node_lowers[n], m.node_uppers[n])
        if not box_hit:
            n = m.skip[n]
        elif m.prim_start[n] >= 0:
            for pc in range(m.prim_start[n], m.prim_end[n]):
                f = m.primitives[pc]
                tri_hit, t, u, v, s = _ray_triangle(start, dir, m.points[m.indices[f * 3 + 0]],
                                                    m.points[m.indices[f * 3 + 1]], m.points[m.indices[f * 3 + 2]])
                if tri_hit and t >= 0.0:
                    count += 1
            n = m.skip[n]
        else:
            n = n + 1
    return count


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
    (the right one on a tie), a child pushed when nearer than the bound and a popped node tested again, over
    the tree packed for ray casts (the same boxes; a leaf's corners side by side). The traversal gives the
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
                    p, q, r = _packed_corners(m, pc)
                    e0 = q - p
                    e1 = r - p
                    e2 = r - q
                    nrm = wp.cross(e0, e1)
                    e0_sq = wp.dot(e0, e0)
                    e1_sq = wp.dot(e1, e1)
                    e2_sq = wp.dot(e2, e2)
                    if wp.length(nrm) / (e0_sq + e1_sq + e2_sq) >= 1.0e-6:
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
                left, right, d_left, d_right = _child_distances_sq(m, point, n)
                far = left
                near = right
                d_far = d_left
                d_near = d_right
                if d_left < d_right:
                    far = right
                    near = left
                    d_far = d_right
                    d_near = d_left
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


@func
def _xyz(v: vec4) -> vec3:
    return vec3(v[0], v[1], v[2])


@func
def _prefetch_below(m: MeshData, n: int32):
    """Fetches what a ray entering node n reads next: a leaf's triangles (three cache lines: four of them), an
    inner node's right child (its left child is the next node, in the same or the next line). Without it each
    level's loads wait for the level above: on a tree larger than the caches, the traversal is that chain."""
    first = m.ray_links[n * _RAY_NODE_FLOATS + 3]
    if m.ray_links[n * _RAY_NODE_FLOATS + 7] >= 0:
        prefetch(m.ray_tris[3 * first])
        prefetch(m.ray_tris[3 * first + 4])
        prefetch(m.ray_tris[3 * first + 8])
    else:
        prefetch(m.ray_boxes[2 * first])


@func
def _leaf_ray_hits(m: MeshData, start: vec3, kx: int32, ky: int32, kz: int32, sx: float32, sy: float32,
                   sz: float32, first: int32, end: int32, min_t: float32, closest: int32, hit: bool):
    """A leaf's triangles (packed positions first .. end - 1) against the sheared ray: (min_t, closest, hit)
    updated by any hit at 0 <= t < min_t (the first of equally near ones kept)."""
    for pc in range(first, end):
        p, q, r = _packed_corners(m, pc)
        tri_hit, t, u, v, s = _sheared_ray_triangle(start, kx, ky, kz, sx, sy, sz, p, q, r)
        if tri_hit and t < min_t and t >= 0.0:
            min_t = t
            closest = pc
            hit = True
    return min_t, closest, hit


@func
def _pick4(x: vec4, y: vec4, z: vec4, k: int32) -> vec4:
    """_pick for four triangles' coordinates at once: x, y or z for k 0, 1 or 2."""
    return wp.where(k == 0, x, wp.where(k == 1, y, z))


@func
def _diff_products4(a: vec4, b: vec4, c: vec4, d: vec4) -> vec4:
    """_diff_product of four lanes."""
    return vec4(wp.cw_mul(vec4d(a), vec4d(b)) - wp.cw_mul(vec4d(c), vec4d(d)))


@func
def _leaf_group_hits(m: MeshData, start: vec3, kx: int32, ky: int32, kz: int32, sx: float32, sy: float32,
                     sz: float32, group: int32, count: int32, min_t: float32, closest: int32, hit: bool):
    """_leaf_ray_hits over a wide leaf's groups of four triangles (MESH_RAY_LEAVES), each group's four tests
    as vector arithmetic: _sheared_ray_triangle's operations on each lane, so the same hits and distances; the
    lanes taken in order, so the first of equally near triangles is kept as in the one-by-one loop. `closest`
    is the lane, 4 group + i."""
    ox = vec4(start[0])
    oy = vec4(start[1])
    oz = vec4(start[2])
    for g in range(group, group + (count + 3) // 4):
        row = 10 * g
        ax = m.ray_leaves[row] - ox
        ay = m.ray_leaves[row + 1] - oy
        az = m.ray_leaves[row + 2] - oz
        bx = m.ray_leaves[row + 3] - ox
        by = m.ray_leaves[row + 4] - oy
        bz = m.ray_leaves[row + 5] - oz
        cx = m.ray_leaves[row + 6] - ox
        cy = m.ray_leaves[row + 7] - oy
        cz = m.ray_leaves[row + 8] - oz
        a_z = _pick4(ax, ay, az, kz)
        b_z = _pick4(bx, by, bz, kz)
        c_z = _pick4(cx, cy, cz, kz)
        a_x = _pick4(ax, ay, az, kx) - sx * a_z
        a_y = _pick4(ax, ay, az, ky) - sy * a_z
        b_x = _pick4(bx, by, bz, kx) - sx * b_z
        b_y = _pick4(bx, by, bz, ky) - sy * b_z
        c_x = _pick4(cx, cy, cz, kx) - sx * c_z
        c_y = _pick4(cx, cy, cz, ky) - sy * c_z
        uu = _diff_products4(c_x, b_y, c_y, b_x)
        vv = _diff_products4(a_x, c_y, a_y, c_x)
        ww = _diff_products4(b_x, a_y, b_y, a_x)
        lowest = wp.min(wp.min(uu, vv), ww)
        highest = wp.max(wp.max(uu, vv), ww)
        det = uu + vv + ww
        tt = wp.cw_mul(uu, sz * a_z) + wp.cw_mul(vv, sz * b_z) + wp.cw_mul(ww, sz * c_z)
        t = wp.cw_mul(tt, wp.cw_div(vec4(1.0), det))
        for i in range(4):
            found = (not (lowest[i] < 0.0 and highest[i] > 0.0)) and det[i] != 0.0
            found = found and not ((tt[i] < 0.0 and det[i] > 0.0) or (tt[i] > 0.0 and det[i] < 0.0))
            face = m.ray_leaf_faces[_RAY_LEAF_FLOATS * g + 36 + i]
            if found and face >= 0 and t[i] < min_t and t[i] >= 0.0:
                min_t = t[i]
                closest = 4 * g + i
                hit = True
    return min_t, closest, hit


@func
def _prefetch_wide(m: MeshData, code: int32):
    """Fetches what entering a child of the 4-wide tree reads first: a node's two cache lines, or a leaf's
    first group of four triangles (160 bytes, three lines)."""
    if code >= 0:
        prefetch(m.ray_wide[8 * code])
        prefetch(m.ray_wide[8 * code + 4])
    else:
        group = (-1 - code) // 16
        prefetch(m.ray_leaves[10 * group])
        prefetch(m.ray_leaves[10 * group + 4])
        prefetch(m.ray_leaves[10 * group + 8])


@func
def _ray(m: MeshData, start: vec3, dir: vec3, max_t: float32, root: int32, any_hit: bool):
    """(hit, t, u, v, sign, normal, face): the closest hit at 0 <= t < max_t (with any_hit, the first found).
    A direction with a zero component takes the robust slab tests; the traversal is inlined once for each
    case with `robust` a constant, so the common one has no per-axis branch on it in its box tests."""
    if dir[0] == 0.0 or dir[1] == 0.0 or dir[2] == 0.0:
        return _ray_traversal(m, start, dir, max_t, root, any_hit, True)
    if root < 0 and m.num_wide > 0:
        return _wide_ray_traversal(m, start, dir, max_t, any_hit)
    return _ray_traversal(m, start, dir, max_t, root, any_hit, False)


@func
def _wide_ray_traversal(m: MeshData, start: vec3, dir: vec3, max_t: float32, any_hit: bool):
    """_ray over the whole 4-wide tree (MESH_RAY_WIDE), for a direction without a zero component.

    A node's four boxes are Warp's slab test at once, on vectors of the four children (the same operations
    on each as _ray_box, so the same bits); the children hit nearer than the closest hit so far are pushed
    farthest first, so the nearest is popped next, and a popped entry is dropped when a hit found meanwhile
    is nearer than its entry distance. Leaves test their triangles as the binary traversal does."""
    rcp = _safe_rcp(dir)
    kx, ky, kz, sx, sy, sz = _ray_shear(dir)
    ox = vec4(start[0])
    oy = vec4(start[1])
    oz = vec4(start[2])
    # the row of each axis's near planes: the lower ones for a positive direction component, else the upper
    # ones (so min(l1, l2) of _ray_box is the near plane's distance, no comparison a box)
    near_x = wp.where(rcp[0] > 0.0, 0, 3)
    near_y = wp.where(rcp[1] > 0.0, 1, 4)
    near_z = wp.where(rcp[2] > 0.0, 2, 5)
    min_t = max_t
    closest = int32(0)
    hit = bool(False)
    codes = zeros(shape=_RAY_STACK, dtype=int32)
    entries = zeros(shape=_RAY_STACK, dtype=float32)  # the root's entry 0: no hit has t < max_t <= 0
    depth = int32(1)
    while depth > 0:
        depth -= 1
        code = codes[depth]
        if entries[depth] < min_t:
            if code >= 0:
                row = code * 8
                lmin = (m.ray_wide[row + near_x] - ox) * rcp[0]
                lmax = (m.ray_wide[row + 3 - near_x] - ox) * rcp[0]
                lmin = wp.max((m.ray_wide[row + near_y] - oy) * rcp[1], lmin)
                lmax = wp.min((m.ray_wide[row + 5 - near_y] - oy) * rcp[1], lmax)
                lmin = wp.max((m.ray_wide[row + near_z] - oz) * rcp[2], lmin)
                lmax = wp.min((m.ray_wide[row + 7 - near_z] - oz) * rcp[2], lmax)
                # the four entry distances side by side on the stack (a miss: +inf), stored as one vector
                pushed = depth
                for i in range(4):
                    entry = lmin[i]
                    if not (lmax[i] >= 0.0 and lmax[i] >= entry and entry < min_t):
                        entry = float32(INF)
                    entries[pushed + i] = entry
                    codes[pushed + i] = m.ray_wide_links[code * _RAY_WIDE_FLOATS + 24 + i]
                for i in range(4):  # then the hits kept in place, farthest first: the nearest on top
                    entry = entries[pushed + i]
                    child = codes[pushed + i]
                    if entry < float32(INF):
                        j = depth
                        while j > pushed and entries[j - 1] < entry:
                            codes[j] = codes[j - 1]
                            entries[j] = entries[j - 1]
                            j -= 1
                        codes[j] = child
                        entries[j] = entry
                        depth += 1
                        _prefetch_wide(m, child)
            else:
                min_t, closest, hit = _leaf_group_hits(m, start, kx, ky, kz, sx, sy, sz, (-1 - code) // 16,
                                                       (-1 - code) % 16, min_t, closest, hit)
                if any_hit and hit:
                    depth = 0
    return _closest_lane_hit(m, start, dir, max_t, hit, closest)


@func
def _ray_traversal(m: MeshData, start: vec3, dir: vec3, max_t: float32, root: int32, any_hit: bool, robust: bool):
    """_ray's traversal (`robust`: the direction has a zero component).

    Near child first, as Warp's traversal: at an inner node n both children (n + 1 and the packed node's right
    child) are tested, the nearer one entered and the farther one pushed; a popped node's box is tested again
    against the hit found meanwhile, so a hit found early prunes every box entered beyond it (t_entry >= min_t).
    The traversal gives the triangle; its hit is then computed again from the same packed corners (the same
    test, so the same t, u, v), which is all the adjoint differentiates: the traversal itself (an int stack in
    the thread's memory) has no adjoint and is not rerun backwards."""
    rcp = _safe_rcp(dir)
    kx, ky, kz, sx, sy, sz = _ray_shear(dir)
    min_t = max_t
    closest = int32(0)  # the packed position of the closest hit's triangle
    hit = bool(False)
    nodes = zeros(shape=_RAY_STACK, dtype=int32)
    depth = int32(0)
    n = _first_node(m, root)
    if n < _stop_node(m, root):
        root_hit, root_t = _ray_box(start, dir, rcp, robust, _xyz(m.ray_boxes[2 * n]), _xyz(m.ray_boxes[2 * n + 1]))
        if root_hit and root_t < min_t:
            nodes[0] = n
            depth = 1
    while depth > 0:
        depth -= 1
        n = nodes[depth]
        again, entry = _ray_box(start, dir, rcp, robust, _xyz(m.ray_boxes[2 * n]), _xyz(m.ray_boxes[2 * n + 1]))
        if entry < min_t:
            descending = bool(True)
            while descending:
                end = m.ray_links[n * _RAY_NODE_FLOATS + 7]
                if end >= 0:  # a leaf
                    min_t, closest, hit = _leaf_ray_hits(m, start, kx, ky, kz, sx, sy, sz,
                                                         m.ray_links[n * _RAY_NODE_FLOATS + 3], end, min_t,
                                                         closest, hit)
                    descending = False
                    if any_hit and hit:
                        depth = 0
                else:
                    left = n + 1
                    right = m.ray_links[n * _RAY_NODE_FLOATS + 3]
                    left_hit, left_t = _ray_box(start, dir, rcp, robust, _xyz(m.ray_boxes[2 * left]),
                                                _xyz(m.ray_boxes[2 * left + 1]))
                    right_hit, right_t = _ray_box(start, dir, rcp, robust, _xyz(m.ray_boxes[2 * right]),
                                                  _xyz(m.ray_boxes[2 * right + 1]))
                    left_hit = left_hit and left_t < min_t
                    right_hit = right_hit and right_t < min_t
                    if left_hit:
                        _prefetch_below(m, left)
                    if right_hit:
                        _prefetch_below(m, right)
                    if left_hit and right_hit:
                        if right_t < left_t:
                            nodes[depth] = left
                            n = right
                        else:
                            nodes[depth] = right
                            n = left
                        depth += 1
                    elif left_hit:
                        n = left
                    elif right_hit:
                        n = right
                    else:
                        descending = False
    return _closest_ray_hit(m, start, dir, max_t, hit, closest)


@func
def _closest_ray_hit(m: MeshData, start: vec3, dir: vec3, max_t: float32, hit: bool, closest: int32):
    """_ray's result from the packed position of the closest hit's triangle (when `hit`)."""
    face = int32(0)
    p = vec3(0.0)
    q = vec3(0.0)
    r = vec3(0.0)
    if hit:  # the corners the traversal tested, still in cache (the points through the indices are two misses)
        face = m.ray_faces[closest * _RAY_TRI_FLOATS + 3]
        p, q, r = _packed_corners(m, closest)
    return _ray_hit(start, dir, max_t, hit, p, q, r, face)


@func
def _closest_lane_hit(m: MeshData, start: vec3, dir: vec3, max_t: float32, hit: bool, lane: int32):
    """_ray's result from the closest hit's lane 4 group + i of the wide tree's leaf groups (when `hit`): its
    corners and face read from the group the traversal tested, still in cache."""
    face = int32(0)
    p = vec3(0.0)
    q = vec3(0.0)
    r = vec3(0.0)
    if hit:
        row = 10 * (lane // 4)
        i = lane % 4
        face = m.ray_leaf_faces[_RAY_LEAF_FLOATS * (lane // 4) + 36 + i]
        p = vec3(m.ray_leaves[row][i], m.ray_leaves[row + 1][i], m.ray_leaves[row + 2][i])
        q = vec3(m.ray_leaves[row + 3][i], m.ray_leaves[row + 4][i], m.ray_leaves[row + 5][i])
        r = vec3(m.ray_leaves[row + 6][i], m.ray_leaves[row + 7][i], m.ray_leaves[row + 8][i])
    return _ray_hit(start, dir, max_t, hit, p, q, r, face)


@func
def _ray_hit(start: vec3, dir: vec3, max_t: float32, hit: bool, p: vec3, q: vec3, r: vec3, face: int32):
    """_ray's result, the closest hit's triangle p, q, r (of mesh face `face`) tested again when `hit`: the
    traversal's test, so the same t, u, v; the adjoint differentiates only this."""
    t_hit = max_t
    best_u = float32(0.0)
    best_v = float32(0.0)
    best_sign = float32(1.0)
    best_normal = vec3(0.0, 0.0, 0.0)
    if hit:
        again_hit, t_hit, best_u, best_v, best_sign = _ray_triangle(start, dir, p, q, r)
        best_normal = wp.normalize(wp.cross(q - p, r - p))
    return hit, t_hit, best_u, best_v, best_sign, best_normal, face


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


@func
def _ray_result(id: uint64, start: vec3, dir: vec3, max_t: float32, root: int32) -> MeshQueryRay:
    hit, tt, u, v, s, nrm, f = _ray(_mesh_data(id), start, dir, max_t, root, False)
    result = MeshQueryRay()
    result.result = hit
    if hit:
        result.t = tt
        result.u = u
        result.v = v
        result.sign = s
        result.normal = nrm
        result.face = f
    return result


@func
def mesh_query_ray(id: uint64, start: vec3, dir: vec3, max_t: float32, t: ref[float32], bary_u: ref[float32],
                   bary_v: ref[float32], sign: ref[float32], normal: ref[vec3], face: ref[int32],
                   root: int32 = -1) -> bool:
    """The closest hit of the ray start + t dir, 0 <= t < max_t (in units of |dir|), from node `root` (-1: the
    whole tree; a group's root from wp.mesh_get_group_root)."""
    q = _ray_result(id, start, dir, max_t, root)
    if q.result:
        t = q.t
        bary_u = q.u
        bary_v = q.v
        sign = q.sign
        normal = q.normal
        face = q.face
    return q.result


@func
def mesh_query_ray(id: uint64, start: vec3, dir: vec3, max_t: float32, root: int32 = -1) -> MeshQueryRay:  # noqa: F811
    return _ray_result(id, start, dir, max_t, root)


@func
def mesh_query_ray_anyhit(id: uint64, start: vec3, dir: vec3, max_t: float32, root: int32 = -1) -> bool:
    """Whether the ray hits any triangle at 0 <= t < max_t."""
    hit, tt, u, v, s, nrm, f = _ray(_mesh_data(id), start, dir, max_t, root, True)
    return hit


@func
def mesh_query_ray_count_intersections(id: uint64, start: vec3, dir: vec3, root: int32 = -1) -> int32:
    """The number of triangles the ray hits at t >= 0."""
    return _count_crossings(_mesh_data(id), start, dir, root)


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
def _boxes_overlap(a_lower: vec3, a_upper: vec3, b_lower: vec3, b_upper: vec3) -> bool:
    return not (a_lower[0] > b_upper[0] or a_lower[1] > b_upper[1] or a_lower[2] > b_upper[2] or
                a_upper[0] < b_lower[0] or a_upper[1] < b_lower[1] or a_upper[2] < b_lower[2])


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


__all__ = ["MeshQueryPoint", "MeshQueryRay", "MeshQueryAABB", "mesh_get", "mesh_get_bvh", "mesh_get_group_root",
           "bvh_get_group_root", "mesh_get_point", "mesh_get_velocity", "mesh_get_index", "mesh_eval_position",
           "mesh_eval_velocity", "mesh_eval_face_normal", "mesh_query_point", "mesh_query_point_no_sign",
           "mesh_query_point_sign_normal", "mesh_query_point_sign_winding_number", "mesh_query_point_sign_parity",
           "mesh_query_furthest_point_no_sign", "mesh_query_ray", "mesh_query_ray_anyhit",
           "mesh_query_ray_count_intersections", "mesh_query_aabb", "mesh_query_aabb_next", "mesh_query_sphere",
           "mesh_query_next", "MeshQuery"]
