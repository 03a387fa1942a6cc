"""wp.Mesh's data in kernels: the query result structs, the mesh descriptor read into a MeshData struct
(`wp.mesh_get`, core/geometry.py's MESH_* words), the per-point / per-face accessors, the grouped-tree
root lookups and the readers of the ray casts' packed layout. The queries themselves: mesh_point_queries.py,
mesh_ray_queries.py, mesh_aabb_queries.py (all re-exported by mesh_queries.py)."""

from __future__ import annotations

from mlwarp.arrays.array import array
from mlwarp.library.builtins import namespace as wp  # wp.dot, wp.cross, ...: the builtins, spelt as in user code
from mlwarp.core import geometry as layout
from mlwarp.kernels.func import func
from mlwarp.kernels.struct import struct
from mlwarp.types import bool_, float32, int32, int64, uint64
from mlwarp.core.vector import vec3, vec4

_MESH_WORDS = layout.MESH_WORDS
_BVH_WORDS = layout.BVH_WORDS
_RAY_NODE_FLOATS = layout.RAY_NODE_FLOATS
_RAY_TRI_FLOATS = layout.RAY_TRI_FLOATS
_RAY_TRI_SLIVER = layout.RAY_TRI_SLIVER
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


# -- traversals -------------------------------------------------------------------------------------------
@func
def _packed_corners(m: MeshData, pc: int32):
    """The corners p, q, r of the triangle at packed position pc (MESH_RAY_TRIS)."""
    return _xyz(m.ray_tris[3 * pc]), _xyz(m.ray_tris[3 * pc + 1]), _xyz(m.ray_tris[3 * pc + 2])


@func
def _packed_sliver(m: MeshData, pc: int32) -> bool:
    """Whether Warp's sliver test (mesh_primitives._is_sliver) rejects the triangle at packed position pc: the
    flag the packing stored (MESH_RAY_TRIS)."""
    return m.ray_faces[pc * _RAY_TRI_FLOATS + _RAY_TRI_SLIVER] != 0


@func
def _xyz(v: vec4) -> vec3:
    return vec3(v[0], v[1], v[2])

