"""Builtins on quaternions (x, y, z, w), transforms (p, q) and spatial vectors: overloads in the
builtin table, with Warp's formulas (native/quat.h, native/spatial.h) so results match Warp's."""

from __future__ import annotations

from mlwarp.core import types as wt
from mlwarp.core.vector import quaternion

from . import vecmath as vm
from .matrix import rows
from .table import overload
from .vecmath import V
from .vector import _names, mat_type, same, vec_type


def quat_type(scalar):
    return quaternion(scalar)


def _q(v) -> list:
    return vm.components(v)


def _quat(x, y, z, w) -> V:
    return vm.from_elements([x, y, z, w])


def _check(types, *kinds_shapes):
    for t, want in zip(types, kinds_shapes):
        kind, shp = want
        if wt.composite_kind(t) != kind or (shp is not None and wt.inner_shape(t) != shp):
            raise TypeError(f"unexpected argument types {_names(types)}")
    scalars = {wt.scalar_type_of(t) for t in types}
    if len(scalars) != 1 or not wt.is_float(scalars.pop()):
        raise TypeError(f"arguments must share one float scalar type, got {_names(types)}")
    return wt.scalar_type_of(types[0])


QUAT, VEC3 = ("quat", (4,)), ("vec", (3,))


def _scalar_arg(kind):
    return (None, None) if kind is None else kind


# -- products and rotations ------------------------------------------------------------------------
def qmul(a, b) -> V:
    ax, ay, az, aw = _q(a)
    bx, by, bz, bw = _q(b)
    return _quat(aw * bx + bw * ax + ay * bz - by * az, aw * by + bw * ay + az * bx - bz * ax,
                 aw * bz + bw * az + ax * by - bx * ay, aw * bw - ax * bx - ay * by - az * bz)


def rotate(q, x, inverse=False) -> V:
    qx, qy, qz, qw = _q(q)
    x0, x1, x2 = vm.components(x)
    c = qw * qw * 2.0 - 1.0
    d = (qx * x0 + qy * x1 + qz * x2) * 2.0
    cross = [(qy * x2 - qz * x1), (qz * x0 - qx * x2), (qx * x1 - qy * x0)]
    out = []
    for xi, qi, ci in zip((x0, x1, x2), (qx, qy, qz), cross):
        t = ci * qw * 2.0
        out.append(xi * c + qi * d - t if inverse else xi * c + qi * d + t)
    return vm.from_elements(out)


def inverse(q) -> V:
    x, y, z, w = _q(q)
    return _quat(-x, -y, -z, w)


def from_axis_angle(axis, angle) -> V:
    half = V(angle) * 0.5
    w = vm.unary("CosOp", half)
    s = vm.unary("SinOp", half)
    v = V(axis) * s
    return _quat(v[0], v[1], v[2], w)


def normalize_quat(q) -> V:
    q = V(q)
    length = vm.sqrt(vm.dot(q, q))
    inv = 1.0 / length
    identity = _quat(*[V(vm.constant(k, vm.elem_type(q.type)), "float") for k in (0, 0, 0, 1)])
    return vm.select(length.cmp("gt", 0.0), (q * inv).value, identity.value)


def normalize3(v) -> V:
    v = V(v)
    n = vm.sqrt(vm.dot(v, v))
    return vm.select(n.cmp("gt", 0.0), (v / n).value, vm.constant(0, v.type))


def axis_angle(q):
    x, y, z, w = _q(q)
    v = vm.from_elements([x, y, z])
    n = normalize3(v)
    axis = vm.select(w.cmp("lt", 0.0), (-n).value, n.value)
    absw = vm.select(w.cmp("lt", 0.0), (-w).value, w.value)
    angle = V(vm.math.Atan2Op(vm.sqrt(vm.dot(v, v)).value, absw.value).result, "float") * 2.0
    return axis, angle


overload("mul", ["Quaternion", "Quaternion"], same, doc="the quaternion product")(
    lambda args, types, rt: qmul(args[0], args[1]).value)
overload("normalize", ["Quaternion"], lambda ts: _check(ts, QUAT) and ts[0],
         doc="q / length(q); the identity when length(q) is 0, as in Warp")(
    lambda args, types, rt: normalize_quat(args[0]).value)
overload("quat_inverse", ["Quaternion"], same, doc="the conjugate (-x, -y, -z, w)")(
    lambda args, types, rt: inverse(args[0]).value)
overload("quat_rotate", ["Quaternion", "Vector"], lambda ts: vec_type(3, _check(ts, QUAT, VEC3)),
         doc="rotates a 3-vector by a unit quaternion")(lambda args, types, rt: rotate(args[0], args[1]).value)
overload("quat_rotate_inv", ["Quaternion", "Vector"], lambda ts: vec_type(3, _check(ts, QUAT, VEC3)),
         doc="rotates a 3-vector by the inverse of a unit quaternion")(
    lambda args, types, rt: rotate(args[0], args[1], inverse=True).value)


def _axis_angle_rule(ts):
    s = _check(ts[:1], VEC3)
    if ts[1] is not s:
        raise TypeError(f"the angle must be {wt.type_name(s)}, got {wt.type_name(ts[1])}")
    return quat_type(s)


overload("quat_from_axis_angle", ["Vector", "Float"], _axis_angle_rule,
         doc="the rotation by `angle` radians about a unit `axis`")(
    lambda args, types, rt: from_axis_angle(args[0], args[1]).value)


def _float3(ts):
    if len(set(ts)) != 1 or not wt.is_float(ts[0]):
        raise TypeError(f"expects three floats of one type, got {_names(ts)}")
    return quat_type(ts[0])


@overload("quat_rpy", ["Float", "Float", "Float"], _float3, doc="the rotation from roll, pitch and yaw")
def _rpy(args, types, rt):
    roll, pitch, yaw = (V(a) * 0.5 for a in args)
    cy, sy = vm.unary("CosOp", yaw), vm.unary("SinOp", yaw)
    cr, sr = vm.unary("CosOp", roll), vm.unary("SinOp", roll)
    cp, sp = vm.unary("CosOp", pitch), vm.unary("SinOp", pitch)
    w = cy * cr * cp + sy * sr * sp
    x = cy * sr * cp - sy * cr * sp
    y = cy * cr * sp + sy * sr * cp
    z = sy * cr * cp - cy * sr * sp
    return _quat(x, y, z, w).value


@overload("quat_to_matrix", ["Quaternion"], lambda ts: mat_type(3, 3, _check(ts, QUAT)),
          doc="the rotation matrix of a unit quaternion")
def _to_matrix(args, types, rt):
    q = V(args[0])
    e = vm.elem_type(q.type)
    cols = []
    for k in range(3):
        unit = vm.from_elements([V(vm.constant(1 if i == k else 0, e), "float") for i in range(3)])
        cols.append(rotate(q, unit))
    return vm.from_elements([cols[j][i] for i in range(3) for j in range(3)]).value


def _from_matrix_rule(ts):
    if wt.inner_shape(ts[0]) not in ((3, 3), (4, 4)) or not wt.is_float(wt.scalar_type_of(ts[0])):
        raise TypeError(f"quat_from_matrix takes a 3x3 or 4x4 float matrix, got {_names(ts)}")
    return quat_type(wt.scalar_type_of(ts[0]))


@overload("quat_from_matrix", ["Matrix"], _from_matrix_rule, doc="the rotation of a 3x3 (or 4x4) matrix")
def _from_matrix(args, types, rt):
    """Warp's branchy algorithm as selects: every branch is computed, the trace and the largest diagonal
    element pick one."""
    m = [r for r in rows(args[0], types[0])]
    e = lambda i, j: m[i][j]  # noqa: E731
    tr = e(0, 0) + e(1, 1) + e(2, 2)

    def branch(h_arg, big, others):
        h = vm.sqrt(h_arg + 1.0)
        first = h * 0.5
        h = 0.5 / h
        return first, [o * h for o in others]

    w0, (x0, y0, z0) = branch(tr, None, [e(2, 1) - e(1, 2), e(0, 2) - e(2, 0), e(1, 0) - e(0, 1)])
    x1, (y1, z1, w1) = branch(e(0, 0) - (e(1, 1) + e(2, 2)), None,
                              [e(0, 1) + e(1, 0), e(2, 0) + e(0, 2), e(2, 1) - e(1, 2)])
    y2, (z2, x2, w2) = branch(e(1, 1) - (e(2, 2) + e(0, 0)), None,
                              [e(1, 2) + e(2, 1), e(0, 1) + e(1, 0), e(0, 2) - e(2, 0)])
    z3, (x3, y3, w3) = branch(e(2, 2) - (e(0, 0) + e(1, 1)), None,
                              [e(2, 0) + e(0, 2), e(1, 2) + e(2, 1), e(1, 0) - e(0, 1)])
    q0, q1, q2, q3 = (_quat(x0, y0, z0, w0), _quat(x1, y1, z1, w1), _quat(x2, y2, z2, w2), _quat(x3, y3, z3, w3))
    one_gt_zero = e(1, 1).cmp("gt", e(0, 0))
    best = vm.select(one_gt_zero, e(1, 1).value, e(0, 0).value)
    two_wins = e(2, 2).cmp("gt", best)
    diag = vm.select(two_wins, q3.value, vm.select(one_gt_zero, q2.value, q1.value).value)
    q = vm.select(tr.cmp("ge", 0.0), q0.value, diag.value)
    return normalize_quat(q).value


def _slerp_rule(ts):
    s = _check(ts[:2], QUAT, QUAT)
    if ts[2] is not s:
        raise TypeError(f"t must be {wt.type_name(s)}, got {wt.type_name(ts[2])}")
    return ts[0]


@overload("quat_slerp", ["Quaternion", "Quaternion", "Float"], _slerp_rule,
          doc="spherical interpolation from q0 (t = 0) to q1 (t = 1)")
def _slerp(args, types, rt):
    q0, q1, t = args
    axis, angle = axis_angle(qmul(inverse(q0), q1))
    return qmul(q0, from_axis_angle(axis, V(t) * angle)).value


@overload("quat_between_vectors", ["Vector", "Vector"], lambda ts: quat_type(_check(ts, VEC3, VEC3)),
          doc="the shortest rotation taking the direction of a to that of b (opposite directions unhandled)")
def _between(args, types, rt):
    a, b = normalize3(args[0]), normalize3(args[1])
    c = vm.components(vm.from_elements([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                                        a[0] * b[1] - a[1] * b[0]]))
    d = vm.dot(a, b)
    return normalize_quat(_quat(c[0], c[1], c[2], d + 1.0)).value


# -- quat_to_axis_angle returns (axis, angle): the frontend unpacks it from these two parts ------------
overload("quat_to_axis", ["Quaternion"], lambda ts: vec_type(3, _check(ts, QUAT)),
         doc="the rotation axis of quat_to_axis_angle")(lambda args, types, rt: axis_angle(args[0])[0].value)
overload("quat_to_angle", ["Quaternion"], lambda ts: _check(ts, QUAT),
         doc="the rotation angle of quat_to_axis_angle")(lambda args, types, rt: axis_angle(args[0])[1].value)


# -- transforms (p, q) ------------------------------------------------------------------------------------
TRANSFORM = ("transform", (7,))


def tparts(t):
    t = V(t)
    return vm.slice_(t, 0, 3), vm.slice_(t, 3, 4)


def transform_of(p, q) -> V:
    return vm.concat(p, q)


overload("transform_get_translation", ["Transformation"], lambda ts: vec_type(3, _check(ts, TRANSFORM)),
         doc="p")(lambda args, types, rt: tparts(args[0])[0].value)
overload("transform_get_rotation", ["Transformation"], lambda ts: quat_type(_check(ts, TRANSFORM)),
         doc="q")(lambda args, types, rt: tparts(args[0])[1].value)
overload("transform_point", ["Transformation", "Vector"], lambda ts: vec_type(3, _check(ts, TRANSFORM, VEC3)),
         doc="p + quat_rotate(q, x)")(
    lambda args, types, rt: (tparts(args[0])[0] + rotate(tparts(args[0])[1], args[1])).value)
overload("transform_vector", ["Transformation", "Vector"], lambda ts: vec_type(3, _check(ts, TRANSFORM, VEC3)),
         doc="quat_rotate(q, x)")(lambda args, types, rt: rotate(tparts(args[0])[1], args[1]).value)

MAT44 = ("mat", (4, 4))


def _homogeneous(w: float):
    """m * (x, w), its first three components: a 4x4 matrix applied to a point (w = 1) or a vector (w = 0),
    as Warp's transform_point/transform_vector(mat44, vec3)."""

    def lower(args, types, rt):
        x = V(args[1])
        x4 = vm.from_elements([x[0], x[1], x[2], V(vm.constant(w, vm.elem_type(x.type)), x.kind)])
        return vm.from_elements([vm.dot(row, x4) for row in rows(args[0], types[0])[:3]]).value

    return lower


overload("transform_point", ["Matrix", "Vector"], lambda ts: vec_type(3, _check(ts, MAT44, VEC3)),
         doc="(m * (x, 1))[:3]: x transformed by the homogeneous 4x4 matrix m")(_homogeneous(1.0))
overload("transform_vector", ["Matrix", "Vector"], lambda ts: vec_type(3, _check(ts, MAT44, VEC3)),
         doc="(m * (x, 0))[:3]: the direction x transformed by the 4x4 matrix m (no translation)")(_homogeneous(0.0))


def _tmul(args, types, rt):
    (pa, qa), (pb, qb) = tparts(args[0]), tparts(args[1])
    return transform_of(rotate(qa, pb) + pa, qmul(qa, qb)).value


overload("transform_multiply", ["Transformation", "Transformation"], same, doc="a then b: (a.q b.p + a.p, a.q b.q)")(
    _tmul)
overload("mul", ["Transformation", "Transformation"], same, doc="transform_multiply")(_tmul)


@overload("transform_inverse", ["Transformation"], same, doc="(-rotate(q^-1, p), q^-1)")
def _tinv(args, types, rt):
    p, q = tparts(args[0])
    qi = inverse(q)
    return transform_of(-rotate(qi, p), qi).value


# -- spatial vectors (angular top, linear bottom) ----------------------------------------------------------
def _six(ts):
    if wt.inner_shape(ts[0]) != (6,) or wt.composite_kind(ts[0]) != "vec":
        raise TypeError(f"expects a 6-vector, got {_names(ts)}")
    return vec_type(3, wt.scalar_type_of(ts[0]))


overload("spatial_top", ["Vector"], _six, doc="the first three components")(
    lambda args, types, rt: vm.slice_(args[0], 0, 3).value)
overload("spatial_bottom", ["Vector"], _six, doc="the last three components")(
    lambda args, types, rt: vm.slice_(args[0], 3, 3).value)
overload("spatial_dot", ["Vector", "Vector"], lambda ts: wt.scalar_type_of(_six([same(ts)])),
         doc="dot product of two spatial vectors")(lambda args, types, rt: vm.dot(args[0], args[1]).value)
