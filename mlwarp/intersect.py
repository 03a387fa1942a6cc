"""Geometric queries that Warp 1.19 has as builtins (warp/native/intersect.h), written here in the kernel
language as @wp.func: `closest_point_edge_edge` (with Warp's analytic adjoint, a @wp.func_grad) and
`intersect_tri_tri` (Moeller's triangle-triangle test, float32 and float64 overloads)."""

from __future__ import annotations

from .builtins import namespace as wp  # wp.dot, wp.clamp, ...: the builtins, spelt as in user code
from .func import func
from .func_grad import adjoint, func_grad
from .types import float32, float64, int32
from .vector import vec3, vec3d

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


__all__ = ["closest_point_edge_edge"]
