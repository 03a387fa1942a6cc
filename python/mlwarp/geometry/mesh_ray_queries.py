"""Ray casts against a wp.Mesh (wp.mesh_query_ray, _anyhit, _count_intersections) and the first-hit sign of a
point query: a stack traversal of the tree packed for rays, 4-wide for a whole-tree cast
(_wide_ray_traversal), the nearer child first; Woop's watertight triangle test (mesh_primitives.py)."""

from __future__ import annotations

from mlwarp.arrays.array import zeros
from mlwarp.library.builtins import namespace as wp  # wp.dot, wp.cross, ...: the builtins, spelt as in user code
from mlwarp.library.constants import INF
from mlwarp.core import geometry as layout
from mlwarp.core.hints import prefetch
from mlwarp.core.refs import ref, takes_temporaries
from mlwarp.kernels.func import func
from mlwarp.types import float32, int32, uint64
from mlwarp.core.vector import vec3, vec4
from mlwarp.geometry.mesh_data import (
    MeshData, MeshQueryRay, _first_node, _mesh_data, _packed_corners, _stop_node, _xyz,
)
from mlwarp.geometry.mesh_primitives import (
    FLT_MAX, _diff_products4, _pick4, _ray_box, _ray_shear, _ray_triangle, _safe_rcp, _sheared_ray_triangle,
)

_RAY_STACK = layout.RAY_STACK
_RAY_NODE_FLOATS = layout.RAY_NODE_FLOATS
_RAY_TRI_FLOATS = layout.RAY_TRI_FLOATS
_RAY_WIDE_FLOATS = layout.RAY_WIDE_FLOATS
_RAY_LEAF_FLOATS = layout.RAY_LEAF_FLOATS


@func
def _closest_hit_sign(m: MeshData, start: vec3, dir: vec3):
    """(hit, sign) of the first triangle along an axis ray (robust box tests), for the inside test.

    Warp's mesh_query_ray_closest_sign: depth first over the tree packed for ray casts, an inner node's first
    child in this preorder (Warp's right one) entered, its second pushed, a node entered when the ray meets its
    box before the nearest hit found so far; the triangles tested in the same order, so of equally near hits
    the same one gives the sign."""
    rcp = vec3(1.0 / dir[0], 1.0 / dir[1], 1.0 / dir[2])
    kx, ky, kz, sx, sy, sz = _ray_shear(dir)
    min_t = float32(FLT_MAX)
    sign = float32(0.0)
    hit = bool(False)
    nodes = zeros(shape=_RAY_STACK, dtype=int32)
    depth = int32(0)
    n = int32(0)
    searching = m.num_nodes > 0
    while searching:
        box_hit, t_box = _ray_box(start, dir, rcp, True, _xyz(m.ray_boxes[2 * n]), _xyz(m.ray_boxes[2 * n + 1]))
        next_node = int32(-1)
        if box_hit and t_box < min_t:
            end = m.ray_links[n * _RAY_NODE_FLOATS + 7]
            if end >= 0:
                for pc in range(m.ray_links[n * _RAY_NODE_FLOATS + 3], end):
                    p, q, r = _packed_corners(m, pc)
                    tri_hit, t, u, v, s = _sheared_ray_triangle(start, kx, ky, kz, sx, sy, sz, p, q, r)
                    if tri_hit and t >= 0.0 and t < min_t:
                        min_t = t
                        sign = s
                        hit = True
            else:
                nodes[depth] = m.ray_links[n * _RAY_NODE_FLOATS + 3]
                depth += 1
                next_node = n + 1
        if next_node < 0 and depth > 0:
            depth -= 1
            next_node = nodes[depth]
        n = next_node
        searching = n >= 0
    return hit, sign


@func
def _count_crossings(m: MeshData, start: vec3, dir: vec3, root: int32) -> int32:
    """Hits at t >= 0 of every triangle whose box the ray enters (robust box tests), as Warp: depth first over
    the subtree at `root` of the tree packed for ray casts (_closest_hit_sign's walk without its bound)."""
    rcp = vec3(1.0 / dir[0], 1.0 / dir[1], 1.0 / dir[2])
    kx, ky, kz, sx, sy, sz = _ray_shear(dir)
    count = int32(0)
    nodes = zeros(shape=_RAY_STACK, dtype=int32)
    depth = int32(0)
    n = _first_node(m, root)
    searching = n < _stop_node(m, root)
    while searching:
        box_hit, t_box = _ray_box(start, dir, rcp, True, _xyz(m.ray_boxes[2 * n]), _xyz(m.ray_boxes[2 * n + 1]))
        next_node = int32(-1)
        if box_hit:
            end = m.ray_links[n * _RAY_NODE_FLOATS + 7]
            if end >= 0:
                for pc in range(m.ray_links[n * _RAY_NODE_FLOATS + 3], end):
                    p, q, r = _packed_corners(m, pc)
                    tri_hit, t, u, v, s = _sheared_ray_triangle(start, kx, ky, kz, sx, sy, sz, p, q, r)
                    if tri_hit and t >= 0.0:
                        count += 1
            else:
                nodes[depth] = m.ray_links[n * _RAY_NODE_FLOATS + 3]
                depth += 1
                next_node = n + 1
        if next_node < 0 and depth > 0:
            depth -= 1
            next_node = nodes[depth]
        n = next_node
        searching = n >= 0
    return count


@func
def _prefetch_below(m: MeshData, n: int32):
    """Fetches what a ray entering node n reads next: a leaf's triangles (three cache lines: four of them), an
    inner node's second child (its first is the next node, in the same or the next line). Without it each
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


# a launch of a kernel that calls it repacks a refit mesh's 4-wide tree first (Mesh._repack_wide)
_wide_ray_traversal.launch_needs = (layout.WIDE_RAYS_NEED,)


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


takes_temporaries(mesh_query_ray)  # Warp's builtin: its out-parameters may be temporaries
