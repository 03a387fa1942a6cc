"""The geometric tests the mesh queries share, on single triangles and boxes (Warp 1.19's warp/native/mesh.h
and intersect.h): closest / furthest point on a triangle, point-box distances, sliver rejection, Woop's
watertight ray-triangle test (scalar and four triangles at once), the ray-box slab test and the solid angle."""

from __future__ import annotations

from mlwarp.library.builtins import namespace as wp  # wp.dot, wp.cross, ...: the builtins, spelt as in user code
from mlwarp.kernels.func import func
from mlwarp.types import float32, float64, int32
from mlwarp.core.vector import vec2, vec3, vec4, vec4d

FLT_MAX = 3.4028234663852886e38


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
        v = 1.0 - w
        result = vec2(1.0 - v - w, v)  # Warp's u, which rounding may leave off 0
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


@func
def _pick4(x: vec4, y: vec4, z: vec4, k: int32) -> vec4:
    """_pick for four triangles' coordinates at once: x, y or z for k 0, 1 or 2."""
    return wp.where(k == 0, x, wp.where(k == 1, y, z))


@func
def _diff_products4(a: vec4, b: vec4, c: vec4, d: vec4) -> vec4:
    """_diff_product of four lanes."""
    return vec4(wp.cw_mul(vec4d(a), vec4d(b)) - wp.cw_mul(vec4d(c), vec4d(d)))


@func
def _boxes_overlap(a_lower: vec3, a_upper: vec3, b_lower: vec3, b_upper: vec3) -> bool:
    return not (a_lower[0] > b_upper[0] or a_lower[1] > b_upper[1] or a_lower[2] > b_upper[2] or
                a_upper[0] < b_lower[0] or a_upper[1] < b_lower[1] or a_upper[2] < b_lower[2])

