"""Geometric queries that Warp 1.19 has as builtins (warp/native/intersect.h), written here in the kernel
language as @wp.func: `closest_point_edge_edge` (with Warp's analytic adjoint, a @wp.func_grad) and
`intersect_tri_tri` (Moeller's triangle-triangle test without divisions, float32 and float64 overloads,
with Warp's coplanarity snap of plane distances below 1e-6)."""

from __future__ import annotations

from typing import Any

from mlwarp.library.builtins import namespace as wp  # wp.dot, wp.clamp, ...: the builtins, spelt as in user code
from mlwarp.kernels.func import func
from mlwarp.kernels.func_grad import adjoint, func_grad
from mlwarp.types import float32, float64, int32
from mlwarp.core.vector import vec3, vec3d

# denom / (a e) = sin^2 of the angle between the edges; below this the adjoint does not differentiate
# through s = num / denom (1 / denom would turn float32 noise into unbounded gradients), as in Warp.
_PARALLEL_TOL = 1.0e-6


@func
def _diff_product(a: float, b: float, c: float, d: float) -> float:
    """a b - c d, rounded once from float64 (the products are exact there): no cancellation error."""
    return float32(float64(a) * float64(b) - float64(c) * float64(d))


@func
def closest_point_edge_edge(p1: vec3, q1: vec3, p2: vec3, q2: vec3, epsilon: float) -> vec3:
    """(s, t, d): the closest points p1 + s (q1 - p1) and p2 + t (q2 - p2) of the segments [p1, q1] and
    [p2, q2] (s, t in [0, 1]) and their distance d. A segment whose squared length is <= epsilon is a point
    (its weight is 0); parallel segments take s = 0 and let t correct."""
    d1 = q1 - p1
    d2 = q2 - p2
    r = p1 - p2
    a = wp.dot(d1, d1)
    e = wp.dot(d2, d2)
    f = wp.dot(d2, r)
    s = float(0.0)
    t = float(0.0)
    if a <= epsilon:
        if e > epsilon:
            t = wp.clamp(f / e, 0.0, 1.0)
    elif e <= epsilon:
        s = wp.clamp(-wp.dot(d1, r) / a, 0.0, 1.0)
    else:
        c = wp.dot(d1, r)
        b = wp.dot(d1, d2)
        denom = _diff_product(a, e, b, b)
        s_init = float(0.0)
        if denom > 0.0:
            s_init = wp.clamp(_diff_product(b, f, c, e) / denom, 0.0, 1.0)
        t_init = (b * s_init + f) / e
        if t_init < 0.0:
            s = wp.clamp(-c / a, 0.0, 1.0)
        elif t_init > 1.0:
            s = wp.clamp((b - c) / a, 0.0, 1.0)
            t = 1.0
        else:
            s = s_init
            t = t_init
    return vec3(s, t, wp.length((p2 + t * d2) - (p1 + s * d1)))


@func
def _adj_clamp01(x: float, adj: float) -> float:
    """The adjoint clamp(x, 0, 1) passes on to x: adj inside [0, 1], 0 outside."""
    if x < 0.0 or x > 1.0:
        return 0.0
    return adj


@func_grad(closest_point_edge_edge)
def _adj_closest_point_edge_edge(p1: vec3, q1: vec3, p2: vec3, q2: vec3, epsilon: float, adj_ret: vec3):
    # the forward again, keeping the branch and the unclamped weights
    d1 = q1 - p1
    d2 = q2 - p2
    r = p1 - p2
    a = wp.dot(d1, d1)
    e = wp.dot(d2, d2)
    f = wp.dot(d2, r)
    s = float(0.0)
    t = float(0.0)
    c = float(0.0)
    b = float(0.0)
    denom = float(0.0)
    s_uc = float(0.0)
    t_uc = float(0.0)
    branch = int32(0)  # 0: both points, 1: edge 1 a point, 2: edge 2 a point / t = 0, 3: t = 1, 4: general, 5: damped
    if a <= epsilon:
        if e > epsilon:
            branch = 1
            t_uc = f / e
            t = wp.clamp(t_uc, 0.0, 1.0)
    elif e <= epsilon:
        branch = 2
        c = wp.dot(d1, r)
        s_uc = -c / a
        s = wp.clamp(s_uc, 0.0, 1.0)
    else:
        c = wp.dot(d1, r)
        b = wp.dot(d1, d2)
        denom = _diff_product(a, e, b, b)
        s_init = float(0.0)
        if denom > 0.0:
            s_uc = _diff_product(b, f, c, e) / denom
            s_init = wp.clamp(s_uc, 0.0, 1.0)
        t_init = (b * s_init + f) / e
        if t_init < 0.0:
            branch = 2
            s_uc = -c / a
            s = wp.clamp(s_uc, 0.0, 1.0)
        elif t_init > 1.0:
            branch = 3
            s_uc = (b - c) / a
            s = wp.clamp(s_uc, 0.0, 1.0)
            t = 1.0
        else:
            branch = 5
            if denom > _PARALLEL_TOL * a * e:
                branch = 4
            s = s_init
            t = t_init
    diff = (p2 + t * d2) - (p1 + s * d1)
    dist = wp.length(diff)

    # dist = |diff|, diff = (p2 + t d2) - (p1 + s d1)
    adj_diff = vec3(0.0, 0.0, 0.0)
    if dist > 0.0:
        adj_diff = (adj_ret[2] / dist) * diff
    adj_d1 = -s * adj_diff
    adj_d2 = t * adj_diff
    adj_r = vec3(0.0, 0.0, 0.0)
    adj_p1 = -adj_diff
    adj_p2 = adj_diff
    adj_s = -wp.dot(d1, adj_diff) + adj_ret[0]
    adj_t = wp.dot(d2, adj_diff) + adj_ret[1]

    # through the branch's formulas for s and t
    adj_a = float(0.0)
    adj_e = float(0.0)
    adj_b = float(0.0)
    adj_c = float(0.0)
    adj_f = float(0.0)
    if branch == 1:
        adj_t_uc = _adj_clamp01(t_uc, adj_t)
        adj_f += adj_t_uc / e
        adj_e -= adj_t_uc * t_uc / e
    elif branch == 2 or branch == 3:
        adj_s_uc = _adj_clamp01(s_uc, adj_s)
        if branch == 3:
            adj_b += adj_s_uc / a
        adj_c -= adj_s_uc / a
        adj_a -= adj_s_uc * s_uc / a
    elif branch == 4:
        adj_b += adj_t * s / e
        adj_s += adj_t * b / e
        adj_f += adj_t / e
        adj_e -= adj_t * t / e
        adj_s_uc = _adj_clamp01(s_uc, adj_s)
        adj_num = adj_s_uc / denom
        adj_denom = -adj_s_uc * s_uc / denom
        adj_b += adj_num * f
        adj_f += adj_num * b
        adj_c -= adj_num * e
        adj_e -= adj_num * c
        adj_a += adj_denom * e
        adj_e += adj_denom * a
        adj_b -= 2.0 * adj_denom * b
    elif branch == 5:
        # s held constant in t = (b s + f) / e
        adj_b += adj_t * s / e
        adj_f += adj_t / e
        adj_e -= adj_t * t / e

    # through the dot products and d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2
    adj_d1 += 2.0 * adj_a * d1 + adj_b * d2 + adj_c * r
    adj_d2 += 2.0 * adj_e * d2 + adj_b * d1 + adj_f * r
    adj_r += adj_c * d1 + adj_f * d2
    adjoint[p1] += adj_p1 - adj_d1 + adj_r
    adjoint[q1] += adj_d1
    adjoint[p2] += adj_p2 - adj_d2 - adj_r
    adjoint[q2] += adj_d2


# -- intersect_tri_tri ------------------------------------------------------------------------------------
# Moeller's "A Fast Triangle-Triangle Intersection Test" (JGT 1997, the 1999 variant without divisions), as
# Warp runs it (warp/native/intersect_tri.h): each triangle's vertices are first placed against the other's
# plane; signed distances below 1e-6 in magnitude (compared in float64, whatever the precision) count as 0
# (on the plane); when all three distances of the first triangle to the second's plane are 0 the pair is
# coplanar and is decided in 2D, on the axis plane where the first triangle's normal is largest, by edge-edge
# tests and one vertex-in-triangle test each way. Otherwise both triangles are cut by the line where the
# planes meet, and the two intervals along that line (projected onto its largest axis) are compared. The
# arithmetic is written operation for operation as in Warp, in the precision of the arguments. Generic over
# the scalar type: the public overloads below take vec3 (float32) and vec3d (float64).


@func
def _tt_snap(d: Any):
    """A signed distance to a plane, 0 where |d| < 1e-6 (Warp's coplanarity robustness test)."""
    if float64(wp.abs(d)) < float64(1.0e-6):
        return type(d)(0.0)
    return d


@func
def _tt_edge_edge(ax: Any, ay: Any, v0x: Any, v0y: Any, u0x: Any, u0y: Any, u1x: Any, u1y: Any) -> int:
    """1 where the 2D segment v0 + s (ax, ay) crosses the segment [u0, u1] (Antonio's test, ends included)."""
    bx = u0x - u1x
    by = u0y - u1y
    cx = v0x - u0x
    cy = v0y - u0y
    f = ay * bx - ax * by
    d = by * cx - bx * cy
    zero = type(f)(0.0)
    if (f > zero and d >= zero and d <= f) or (f < zero and d <= zero and d >= f):
        e = ax * cy - ay * cx
        if f > zero:
            if e >= zero and e <= f:
                return 1
        else:
            if e <= zero and e >= f:
                return 1
    return 0


@func
def _tt_edge_against_edges(v0: Any, v1: Any, u0: Any, u1: Any, u2: Any, i0: int, i1: int) -> int:
    """1 where the edge [v0, v1] crosses an edge of the triangle (u0, u1, u2), in the (i0, i1) plane."""
    ax = v1[i0] - v0[i0]
    ay = v1[i1] - v0[i1]
    if _tt_edge_edge(ax, ay, v0[i0], v0[i1], u0[i0], u0[i1], u1[i0], u1[i1]) == 1:
        return 1
    if _tt_edge_edge(ax, ay, v0[i0], v0[i1], u1[i0], u1[i1], u2[i0], u2[i1]) == 1:
        return 1
    if _tt_edge_edge(ax, ay, v0[i0], v0[i1], u2[i0], u2[i1], u0[i0], u0[i1]) == 1:
        return 1
    return 0


@func
def _tt_point_in_tri(v0: Any, u0: Any, u1: Any, u2: Any, i0: int, i1: int) -> int:
    """1 where v0 is strictly on the same side of the three edge lines of (u0, u1, u2), in the (i0, i1) plane."""
    a = u1[i1] - u0[i1]
    b = -(u1[i0] - u0[i0])
    c = -a * u0[i0] - b * u0[i1]
    d0 = a * v0[i0] + b * v0[i1] + c
    a = u2[i1] - u1[i1]
    b = -(u2[i0] - u1[i0])
    c = -a * u1[i0] - b * u1[i1]
    d1 = a * v0[i0] + b * v0[i1] + c
    a = u0[i1] - u2[i1]
    b = -(u0[i0] - u2[i0])
    c = -a * u2[i0] - b * u2[i1]
    d2 = a * v0[i0] + b * v0[i1] + c
    zero = type(a)(0.0)
    if d0 * d1 > zero:
        if d0 * d2 > zero:
            return 1
    return 0


@func
def _tt_coplanar(n: Any, v0: Any, v1: Any, v2: Any, u0: Any, u1: Any, u2: Any) -> int:
    """The coplanar case, in 2D on the axis plane where the normal n is largest."""
    a0 = wp.abs(n[0])
    a1 = wp.abs(n[1])
    a2 = wp.abs(n[2])
    i0 = int(0)
    i1 = int(1)
    if a0 > a1:
        if a0 > a2:
            i0 = 1
            i1 = 2
    elif not (a2 > a1):
        i1 = 2
    if _tt_edge_against_edges(v0, v1, u0, u1, u2, i0, i1) == 1:
        return 1
    if _tt_edge_against_edges(v1, v2, u0, u1, u2, i0, i1) == 1:
        return 1
    if _tt_edge_against_edges(v2, v0, u0, u1, u2, i0, i1) == 1:
        return 1
    if _tt_point_in_tri(v0, u0, u1, u2, i0, i1) == 1:
        return 1
    return _tt_point_in_tri(u0, v0, v1, v2, i0, i1)


@func
def _tt_cross(a: Any, b: Any):
    return type(a)(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@func
def _tt_dot(a: Any, b: Any):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@func
def _tt_interval(p0: Any, p1: Any, p2: Any, d0: Any, d1: Any, d2: Any, d0d1: Any, d0d2: Any):
    """(a, b, c, x0, x1): a triangle's interval on the planes' line, without divisions: its ends are
    a + b / x0 and a + c / x1, from the vertex alone on its side of the plane (Moeller's NEWCOMPUTE_INTERVALS;
    the coplanar case, all three distances 0, is taken out before)."""
    zero = type(d0)(0.0)
    if d0d1 > zero:
        return p2, (p0 - p2) * d2, (p1 - p2) * d2, d2 - d0, d2 - d1
    if d0d2 > zero:
        return p1, (p0 - p1) * d1, (p2 - p1) * d1, d1 - d0, d1 - d2
    if d1 * d2 > zero or d0 != zero:
        return p0, (p1 - p0) * d0, (p2 - p0) * d0, d0 - d1, d0 - d2
    if d1 != zero:
        return p1, (p0 - p1) * d1, (p2 - p1) * d1, d1 - d0, d1 - d2
    return p2, (p0 - p2) * d2, (p1 - p2) * d2, d2 - d0, d2 - d1


@func
def _tt_test(v0: Any, v1: Any, v2: Any, u0: Any, u1: Any, u2: Any) -> int:
    zero = type(v0[0])(0.0)
    # the plane of (v0, v1, v2): n1 . x + d1 = 0, and the distances of u0, u1, u2 to it
    n1 = _tt_cross(v1 - v0, v2 - v0)
    d1 = -_tt_dot(n1, v0)
    du0 = _tt_snap(_tt_dot(n1, u0) + d1)
    du1 = _tt_snap(_tt_dot(n1, u1) + d1)
    du2 = _tt_snap(_tt_dot(n1, u2) + d1)
    du0du1 = du0 * du1
    du0du2 = du0 * du2
    if du0du1 > zero and du0du2 > zero:
        return 0  # (u0, u1, u2) strictly on one side of the plane
    # the plane of (u0, u1, u2) and the distances of v0, v1, v2 to it
    n2 = _tt_cross(u1 - u0, u2 - u0)
    d2 = -_tt_dot(n2, u0)
    dv0 = _tt_snap(_tt_dot(n2, v0) + d2)
    dv1 = _tt_snap(_tt_dot(n2, v1) + d2)
    dv2 = _tt_snap(_tt_dot(n2, v2) + d2)
    dv0dv1 = dv0 * dv1
    dv0dv2 = dv0 * dv2
    if dv0dv1 > zero and dv0dv2 > zero:
        return 0
    if dv0 == zero and dv1 == zero and dv2 == zero:
        return _tt_coplanar(n1, v0, v1, v2, u0, u1, u2)
    if du0 == zero and du1 == zero and du2 == zero:
        return _tt_coplanar(n1, v0, v1, v2, u0, u1, u2)
    # the direction of the planes' line, projected onto its largest axis
    ld = _tt_cross(n1, n2)
    index = int(0)
    big = wp.abs(ld[0])
    if wp.abs(ld[1]) > big:
        big = wp.abs(ld[1])
        index = 1
    if wp.abs(ld[2]) > big:
        index = 2
    a, b, c, x0, x1 = _tt_interval(v0[index], v1[index], v2[index], dv0, dv1, dv2, dv0dv1, dv0dv2)
    d, e, f, y0, y1 = _tt_interval(u0[index], u1[index], u2[index], du0, du1, du2, du0du1, du0du2)
    xx = x0 * x1
    yy = y0 * y1
    xxyy = xx * yy
    tmp = a * xxyy
    s0 = tmp + b * x1 * yy
    s1 = tmp + c * x0 * yy
    tmp = d * xxyy
    t0 = tmp + e * xx * y1
    t1 = tmp + f * xx * y0
    if s0 > s1:
        s = s0
        s0 = s1
        s1 = s
    if t0 > t1:
        t = t0
        t0 = t1
        t1 = t
    if s1 < t0 or t1 < s0:
        return 0
    return 1


@func
def intersect_tri_tri(v0: vec3, v1: vec3, v2: vec3, u0: vec3, u1: vec3, u2: vec3) -> int:
    """1 where the triangles (v0, v1, v2) and (u0, u1, u2) intersect (touching included), else 0: Moeller's
    test, in float32, as Warp."""
    return _tt_test(v0, v1, v2, u0, u1, u2)


@func
def intersect_tri_tri(v0: vec3d, v1: vec3d, v2: vec3d, u0: vec3d, u1: vec3d, u2: vec3d) -> int:  # noqa: F811
    """1 where the triangles (v0, v1, v2) and (u0, u1, u2) intersect (touching included), else 0: Moeller's
    test, in float64, as Warp."""
    return _tt_test(v0, v1, v2, u0, u1, u2)


__all__ = ["closest_point_edge_edge", "intersect_tri_tri"]
