"""Derivative rules of the quaternion, transform and spatial overloads (quat.py).

Most are `Expansion`s: the builtin's formula (the same as its lowering in
quat.py, itself Warp's native/quat.h) written over components and other
builtins; the autodiff passes differentiate the formula. Branches of a
formula are scf.if, not selects, so the branch not taken contributes no
NaN (quat_from_matrix takes square roots that only one branch may take).
quat_to_axis / quat_to_angle (an atan2 inside) have closed-form rules.
"""

from __future__ import annotations

from mlwarp.core import vector as wv

from .derivatives import Expansion, V, call, const, select, warp_type
from .derivatives_composite import Custom, construct, extract, indices, set_overload_grad, shape_of, zero_unless


# -- values ------------------------------------------------------------------------------------
def comps(v: V) -> list:
    return [extract(v, idx) for idx in indices(shape_of(v))]


def scalar_of(v: V):
    c = shape_of(v)
    return c.dtype if c is not None else v.value.type


def typ(kind: str, scalar, shape=None):
    """The MLIR type of a vector-like of `scalar` (an MLIR type)."""
    from ..frontend.types import to_mlir  # lazy: MLIR

    s = warp_type(scalar)
    make = {"vec": lambda: wv.vector(shape[0], s), "mat": lambda: wv.matrix(shape, s),
            "quat": lambda: wv.quaternion(s), "transform": lambda: wv.transformation(s)}
    return to_mlir(make[kind]())


def quat(scalar, x, y, z, w) -> V:
    return construct(typ("quat", scalar), [x, y, z, w])


def vec3(scalar, xs) -> V:
    return construct(typ("vec", scalar, (3,)), list(xs))


def if_else(cond: V, then_fn, else_fn, result_type) -> V:
    """cond ? then_fn() : else_fn() as an scf.if (each side computed only when taken)."""
    from mlir import ir  # lazy: MLIR
    from mlir.dialects import scf  # lazy: MLIR

    op = scf.IfOp(cond.value, [result_type], has_else=True)
    for block, fn in ((op.then_block, then_fn), (op.else_block, else_fn)):
        with ir.InsertionPoint(block):
            scf.YieldOp([fn().value])
    return V(op.results[0])


# -- formulas (quat.py) -------------------------------------------------------------------------
def qmul(a: V, b: V) -> V:
    ax, ay, az, aw = comps(a)
    bx, by, bz, bw = comps(b)
    return quat(scalar_of(a), aw * bx + bw * ax + ay * bz - by * az, aw * by + bw * ay + az * bx - bz * ax,
                aw * bz + bw * az + ax * by - bx * ay, aw * bw - ax * bx - ay * by - az * bz)


def rotate(q: V, x: V, inverse=False) -> V:
    qx, qy, qz, qw = comps(q)
    x0, x1, x2 = comps(x)
    c = qw * qw * 2.0 - 1.0
    d = (qx * x0 + qy * x1 + qz * x2) * 2.0
    cross = [(qy * x2 - qz * x1), (qz * x0 - qx * x2), (qx * x1 - qy * x0)]
    out = []
    for xi, qi, ci in zip((x0, x1, x2), (qx, qy, qz), cross):
        t = ci * qw * 2.0
        out.append(xi * c + qi * d - t if inverse else xi * c + qi * d + t)
    return vec3(scalar_of(x), out)


def conjugate(q: V) -> V:
    x, y, z, w = comps(q)
    return quat(scalar_of(q), -x, -y, -z, w)


def normalize_quat(q: V) -> V:
    n = call("length", q)
    scaled = q * select(n > 0.0, 1.0 / n, 0.0, n)
    return scaled + quat(scalar_of(q), *(const(0.0, n.value.type) for _ in range(3)), select(n > 0.0, 0.0, 1.0, n))


def from_axis_angle(axis: V, angle: V) -> V:
    half = angle * 0.5
    v = comps(axis * call("sin", half))
    return quat(scalar_of(axis), v[0], v[1], v[2], call("cos", half))


def rpy(roll: V, pitch: V, yaw: V) -> V:
    roll, pitch, yaw = roll * 0.5, pitch * 0.5, yaw * 0.5
    cy, sy = call("cos", yaw), call("sin", yaw)
    cr, sr = call("cos", roll), call("sin", roll)
    cp, sp = call("cos", pitch), call("sin", pitch)
    return quat(roll.value.type, cy * sr * cp - sy * cr * sp, cy * cr * sp + sy * sr * cp,
                sy * cr * cp - cy * sr * sp, cy * cr * cp + sy * sr * sp)


def to_matrix(q: V) -> V:
    s = scalar_of(q)
    units = [vec3(s, [const(1.0 if i == k else 0.0, s) for i in range(3)]) for k in range(3)]
    cols = [comps(rotate(q, u)) for u in units]
    return construct(typ("mat", s, (3, 3)), [cols[j][i] for i in range(3) for j in range(3)])


def from_matrix(m: V) -> V:
    s = shape_of(m).dtype

    def e(i, j):
        return extract(m, (i, j))

    def branch(h_arg, order, others):
        def emit():
            h = call("sqrt", h_arg() + 1.0)
            first = h * 0.5
            k = 0.5 / h
            vals = [o() * k for o in others]
            named = dict(zip(order[1:], vals))
            named[order[0]] = first
            return quat(s, named["x"], named["y"], named["z"], named["w"])
        return emit

    tr = lambda: e(0, 0) + e(1, 1) + e(2, 2)  # noqa: E731
    q0 = branch(tr, "wxyz", [lambda: e(2, 1) - e(1, 2), lambda: e(0, 2) - e(2, 0), lambda: e(1, 0) - e(0, 1)])
    q1 = branch(lambda: e(0, 0) - (e(1, 1) + e(2, 2)), "xyzw",
                [lambda: e(0, 1) + e(1, 0), lambda: e(2, 0) + e(0, 2), lambda: e(2, 1) - e(1, 2)])
    q2 = branch(lambda: e(1, 1) - (e(2, 2) + e(0, 0)), "yzxw",
                [lambda: e(1, 2) + e(2, 1), lambda: e(0, 1) + e(1, 0), lambda: e(0, 2) - e(2, 0)])
    q3 = branch(lambda: e(2, 2) - (e(0, 0) + e(1, 1)), "zxyw",
                [lambda: e(2, 0) + e(0, 2), lambda: e(1, 2) + e(2, 1), lambda: e(1, 0) - e(0, 1)])
    one_gt_zero = e(1, 1) > e(0, 0)
    best = select(one_gt_zero, e(1, 1), e(0, 0), e(0, 0))
    two_wins = e(2, 2) > best
    ge = call("ge", tr(), const(0.0, s))
    qt = typ("quat", s)
    q = if_else(ge, q0, lambda: if_else(two_wins, q3, lambda: if_else(one_gt_zero, q2, q1, qt), qt), qt)
    return normalize_quat(q)


def t_parts(t: V):
    c = comps(t)
    s = scalar_of(t)
    return vec3(s, c[:3]), quat(s, *c[3:])


def transform(p: V, q: V) -> V:
    return construct(typ("transform", scalar_of(p)), comps(p) + comps(q))


def t_multiply(a: V, b: V) -> V:
    (pa, qa), (pb, qb) = t_parts(a), t_parts(b)
    return transform(call("quat_rotate", qa, pb) + pa, call("mul", qa, qb))


def t_inverse(t: V) -> V:
    p, q = t_parts(t)
    qi = call("quat_inverse", q)
    return transform(-call("quat_rotate", qi, p), qi)


# -- axis and angle: atan2 inside, so closed-form rules ------------------------------------------------
def _axis_parts(q: V):
    x, y, z, w = comps(q)
    s = select(w < 0.0, -1.0, 1.0, w)
    return vec3(scalar_of(q), [x, y, z]), w, s


def _normalize_map(d: V, v: V) -> V:
    n = call("length", v)
    u = call("normalize", v)
    return zero_unless(n, (d - u * call("dot", u, d)) * (1.0 / n))


def _quat_from_v_w(q: V, dv: V, dw: V) -> V:
    c = comps(dv)
    return quat(scalar_of(q), c[0], c[1], c[2], dw)


def _axis_vjp(g, q, out):
    v, w, s = _axis_parts(q)
    return [_quat_from_v_w(q, _normalize_map(g, v) * s, const(0.0, w.value.type))]


def _axis_jvp(t, q, out):
    v, w, s = _axis_parts(q)
    dq = comps(t[0])
    return _normalize_map(vec3(scalar_of(q), dq[:3]), v) * s


def _angle_terms(q):
    """angle = 2 atan2(|v|, |w|): d angle = 2 (|w| d|v| - |v| s dw) / (|v|^2 + w^2), d|v| = <v, dv> / |v|."""
    v, w, s = _axis_parts(q)
    n = call("length", v)
    aw = w * s
    denom = n * n + w * w
    k_v = aw * 2.0 / denom / n  # times <v, dv>, where |v| > 0 (the v term is zero at v = 0)
    k_w = -(n * s * 2.0 / denom)  # times dw
    return v, n, k_v, k_w


def _angle_vjp(g, q, out):
    v, n, k_v, k_w = _angle_terms(q)
    return [_quat_from_v_w(q, zero_unless(n, v * (g * k_v)), g * k_w)]


def _angle_jvp(t, q, out):
    v, n, k_v, k_w = _angle_terms(q)
    dq = comps(t[0])
    return zero_unless(n, call("dot", v, vec3(scalar_of(q), dq[:3])) * k_v) + dq[3] * k_w


# -- the table -------------------------------------------------------------------------------------------
set_overload_grad("mul", ["Quaternion", "Quaternion"], Expansion(qmul))
set_overload_grad("normalize", ["Quaternion"], Expansion(normalize_quat))
set_overload_grad("quat_inverse", ["Quaternion"], Expansion(conjugate))
set_overload_grad("quat_rotate", ["Quaternion", "Vector"], Expansion(rotate))
set_overload_grad("quat_rotate_inv", ["Quaternion", "Vector"], Expansion(lambda q, x: rotate(q, x, inverse=True)))
set_overload_grad("quat_from_axis_angle", ["Vector", "Float"], Expansion(from_axis_angle))
set_overload_grad("quat_rpy", ["Float", "Float", "Float"], Expansion(rpy))
set_overload_grad("quat_to_matrix", ["Quaternion"], Expansion(to_matrix))
set_overload_grad("quat_from_matrix", ["Matrix"], Expansion(from_matrix))


def slerp(q0: V, q1: V, t: V) -> V:
    r = call("mul", call("quat_inverse", q0), q1)
    return call("mul", q0, call("quat_from_axis_angle", call("quat_to_axis", r), t * call("quat_to_angle", r)))


def between(a: V, b: V) -> V:
    a, b = call("normalize", a), call("normalize", b)
    c = comps(call("cross", a, b))
    return normalize_quat(quat(scalar_of(a), c[0], c[1], c[2], call("dot", a, b) + 1.0))


set_overload_grad("quat_slerp", ["Quaternion", "Quaternion", "Float"], Expansion(slerp))
set_overload_grad("quat_between_vectors", ["Vector", "Vector"], Expansion(between))


set_overload_grad("quat_to_axis", ["Quaternion"], Custom(_axis_vjp, _axis_jvp))
set_overload_grad("quat_to_angle", ["Quaternion"], Custom(_angle_vjp, _angle_jvp))
set_overload_grad("transform_get_translation", ["Transformation"], Expansion(lambda t: t_parts(t)[0]))
set_overload_grad("transform_get_rotation", ["Transformation"], Expansion(lambda t: t_parts(t)[1]))
set_overload_grad("transform_point", ["Transformation", "Vector"], Expansion(
    lambda t, x: call("transform_get_translation", t) + call("quat_rotate", call("transform_get_rotation", t), x)))
set_overload_grad("transform_vector", ["Transformation", "Vector"], Expansion(
    lambda t, x: call("quat_rotate", call("transform_get_rotation", t), x)))


def _homogeneous(w: float):
    def expand(m, x):
        s = scalar_of(x)
        x4 = construct(typ("vec", s, (4,)), comps(x) + [const(w, s)])
        return vec3(s, comps(call("mul", m, x4))[:3])

    expand.__name__ = f"homogeneous_w{int(w)}"
    return expand


set_overload_grad("transform_point", ["Matrix", "Vector"], Expansion(_homogeneous(1.0)))
set_overload_grad("transform_vector", ["Matrix", "Vector"], Expansion(_homogeneous(0.0)))
set_overload_grad("transform_multiply", ["Transformation", "Transformation"], Expansion(t_multiply))
set_overload_grad("mul", ["Transformation", "Transformation"], Expansion(t_multiply))
set_overload_grad("transform_inverse", ["Transformation"], Expansion(t_inverse))
set_overload_grad("spatial_top", ["Vector"], Expansion(lambda v: vec3(scalar_of(v), comps(v)[:3])))
set_overload_grad("spatial_bottom", ["Vector"], Expansion(lambda v: vec3(scalar_of(v), comps(v)[3:])))
set_overload_grad("spatial_dot", ["Vector", "Vector"], Expansion(lambda a, b: call("dot", a, b)))


def _spatial_halves(x: V):
    c = comps(x)
    s = scalar_of(x)
    return vec3(s, c[:3]), vec3(s, c[3:])


def _spatial(top: V, bottom: V) -> V:
    return construct(typ("vec", scalar_of(top), (6,)), comps(top) + comps(bottom))


def spatial_cross(a: V, b: V) -> V:  # (wa x wb, va x wb + wa x vb)
    (wa, va), (wb, vb) = _spatial_halves(a), _spatial_halves(b)
    return _spatial(call("cross", wa, wb), call("cross", va, wb) + call("cross", wa, vb))


def spatial_cross_dual(a: V, b: V) -> V:  # (wa x wb + va x vb, wa x vb)
    (wa, va), (wb, vb) = _spatial_halves(a), _spatial_halves(b)
    return _spatial(call("cross", wa, wb) + call("cross", va, vb), call("cross", wa, vb))


set_overload_grad("spatial_cross", ["Vector", "Vector"], Expansion(spatial_cross))
set_overload_grad("spatial_cross_dual", ["Vector", "Vector"], Expansion(spatial_cross_dual))


def spatial_adjoint(r: V, s: V) -> V:  # [[r, 0], [s, r]]
    rc, sc = comps(r), comps(s)
    zero = const(0.0, scalar_of(r))
    elems = []
    for i in range(3):
        elems += rc[3 * i:3 * i + 3] + [zero] * 3
    for i in range(3):
        elems += sc[3 * i:3 * i + 3] + rc[3 * i:3 * i + 3]
    return construct(typ("mat", scalar_of(r), (6, 6)), elems)


set_overload_grad("spatial_adjoint", ["Matrix", "Matrix"], Expansion(spatial_adjoint))
