"""Rigid-body helpers that Warp defines as @wp.func over its builtins, written here in the kernel
language too (float32, Warp's conventions: quaternions (x, y, z, w), spatial vectors (angular, linear),
quat_rpy's extrinsic x-y-z order). Usable in kernels and from Python, like any @wp.func."""

from __future__ import annotations

from mlwarp.library.builtins import namespace as wp  # wp.sin, wp.length, ...: the builtins, spelt as in user code
from mlwarp.library.constants import HALF_PI, PI
from mlwarp.kernels.func import func
from mlwarp.types import float16, float32, float64, int32
from mlwarp.core.vector import matrix, quat, vec4, quaternion, spatial_vector, transform, transformation, vec3, vector


@func
def velocity_at_point(qd: spatial_vector, r: vec3) -> vec3:
    """The linear velocity of a point at offset r in a frame moving with twist qd = (w, v): v + w x r."""
    return wp.spatial_bottom(qd) + wp.cross(wp.spatial_top(qd), r)


@func
def transform_twist(t: transform, x: spatial_vector) -> spatial_vector:
    """A twist (w, v) mapped by t = (p, q): w' = q w, v' = q v + p x w'."""
    q = wp.transform_get_rotation(t)
    p = wp.transform_get_translation(t)
    w = wp.quat_rotate(q, wp.spatial_top(x))
    v = wp.quat_rotate(q, wp.spatial_bottom(x)) + wp.cross(p, w)
    return spatial_vector(w, v)


@func
def transform_wrench(t: transform, x: spatial_vector) -> spatial_vector:
    """A wrench (tau, f) mapped by t = (p, q): f' = q f, tau' = q tau + p x f'."""
    q = wp.transform_get_rotation(t)
    p = wp.transform_get_translation(t)
    f = wp.quat_rotate(q, wp.spatial_bottom(x))
    tau = wp.quat_rotate(q, wp.spatial_top(x)) + wp.cross(p, f)
    return spatial_vector(tau, f)


_typed_helpers: dict = {}  # name -> the @wp.func whose overloads _transform_helpers adds, one per float type


def _typed(fn, annotations: dict):
    """`fn` as an overload of its @wp.func with these parameter and return types (Warp defines the transform
    helpers once per float type: float32 first, then float16 and float64)."""
    fn.__annotations__ = annotations
    found = _typed_helpers.get(fn.__name__)
    if found is None:
        found = _typed_helpers[fn.__name__] = func(fn)
    else:
        found.add(fn)  # (each call of _transform_helpers is its own scope: the overloads are gathered here)
    return found


def _transform_helpers(s):
    """transform_to_matrix, transform_from_matrix, transform_compose and transform_decompose for scalar s."""
    v3, q4, m33, m44, tr = vector(3, s), quaternion(s), matrix((3, 3), s), matrix((4, 4), s), transformation(s)

    def transform_to_matrix(t):
        """The 4x4 homogeneous matrix [[R, p], [0, 1]] of t = (p, q), R = quat_to_matrix(q)."""
        p = wp.transform_get_translation(t)
        r = wp.quat_to_matrix(wp.transform_get_rotation(t))
        return m44(r[0, 0], r[0, 1], r[0, 2], p[0],
                   r[1, 0], r[1, 1], r[1, 2], p[1],
                   r[2, 0], r[2, 1], r[2, 2], p[2],
                   0.0, 0.0, 0.0, 1.0)

    def transform_from_matrix(m):
        """The transform of a 4x4 matrix [[R, p], [0, 1]]: p from the last column, q from R."""
        return tr(v3(m[0, 3], m[1, 3], m[2, 3]), wp.quat_from_matrix(m))

    def transform_compose(position, rotation, scale):
        """The 4x4 matrix [[R diag(scale), position], [0, 1]]."""
        r = wp.quat_to_matrix(rotation)
        return m44(r[0, 0] * scale[0], r[0, 1] * scale[1], r[0, 2] * scale[2], position[0],
                   r[1, 0] * scale[0], r[1, 1] * scale[1], r[1, 2] * scale[2], position[1],
                   r[2, 0] * scale[0], r[2, 1] * scale[1], r[2, 2] * scale[2], position[2],
                   0.0, 0.0, 0.0, 1.0)

    def transform_decompose(m):
        """(position, rotation, scale) of a 4x4 matrix [[R diag(scale), position], [0, 1]]: the column lengths
        are the scale (a zero column is left as it is), the normalised columns the rotation."""
        c0 = v3(m[0, 0], m[1, 0], m[2, 0])
        c1 = v3(m[0, 1], m[1, 1], m[2, 1])
        c2 = v3(m[0, 2], m[1, 2], m[2, 2])
        scale = v3(wp.length(c0), wp.length(c1), wp.length(c2))
        if scale[0] != s(0.0):
            c0 = c0 / scale[0]
        if scale[1] != s(0.0):
            c1 = c1 / scale[1]
        if scale[2] != s(0.0):
            c2 = c2 / scale[2]
        rotation = wp.quat_from_matrix(m33(c0[0], c1[0], c2[0], c0[1], c1[1], c2[1], c0[2], c1[2], c2[2]))
        return v3(m[0, 3], m[1, 3], m[2, 3]), rotation, scale

    return (_typed(transform_to_matrix, {"t": tr, "return": m44}),
            _typed(transform_from_matrix, {"m": m44, "return": tr}),
            _typed(transform_compose, {"position": v3, "rotation": q4, "scale": v3, "return": m44}),
            _typed(transform_decompose, {"m": m44}))


for _s in (float32, float16, float64):  # one overload per float type, float32 first (as Warp's)
    transform_to_matrix, transform_from_matrix, transform_compose, transform_decompose = _transform_helpers(_s)


@func
def quat_to_rpy(q: quat) -> vec3:
    """(roll, pitch, yaw) of a unit quaternion: the inverse of quat_rpy away from gimbal lock."""
    x = q[0]
    y = q[1]
    z = q[2]
    w = q[3]
    roll = wp.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = wp.asin(wp.clamp(2.0 * (w * y - z * x), -1.0, 1.0))
    yaw = wp.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return vec3(roll, pitch, yaw)


@func
def quat_twist(axis: vec3, q: quat) -> quat:
    """The twist of q about the unit `axis` (swing-twist decomposition): the vector part projected on the
    axis, with q's real part, normalised."""
    a = wp.dot(vec3(q[0], q[1], q[2]), axis) * axis
    return wp.normalize(quat(a[0], a[1], a[2], q[3]))


@func
def quat_twist_angle(axis: vec3, q: quat) -> float32:
    """The unsigned twist angle of q about the unit `axis`: 2 atan2(|axis . q.xyz|, q.w)."""
    return 2.0 * wp.atan2(wp.abs(wp.dot(axis, vec3(q[0], q[1], q[2]))), q[3])


@func
def quat_twist_angle_signed(axis: vec3, q: quat) -> float32:
    """The signed twist angle of q about the unit `axis` (right-hand rule): 2 atan2(axis . q.xyz, q.w)."""
    return 2.0 * wp.atan2(wp.dot(axis, vec3(q[0], q[1], q[2])), q[3])


@func
def quat_from_euler(e: vec3, i: int32, j: int32, k: int32) -> quat:
    """The rotation by e[i] about axis i, then e[j] about axis j, then e[k] about axis k (fixed axes):
    q_k q_j q_i."""
    ui = vec3(0.0, 0.0, 0.0)
    uj = vec3(0.0, 0.0, 0.0)
    uk = vec3(0.0, 0.0, 0.0)
    ui[i] = wp.sin(0.5 * e[i])
    uj[j] = wp.sin(0.5 * e[j])
    uk[k] = wp.sin(0.5 * e[k])
    qi = quat(ui, wp.cos(0.5 * e[i]))
    qj = quat(uj, wp.cos(0.5 * e[j]))
    qk = quat(uk, wp.cos(0.5 * e[k]))
    return wp.mul(qk, wp.mul(qj, qi))


@func
def quat_to_euler(q: quat, i: int32, j: int32, k: int32) -> vec3:
    """Euler angles of q for the fixed-axis sequence i, j, k (Bernardes and Viollet's direct method, PLOS ONE
    2022, as Warp): e[i], e[j] and the third axis' slot hold the first, second and third angles. Proper
    sequences (i == k) put the third angle in the slot of the axis left out."""
    qs = vec4(q[3], q[0], q[1], q[2])  # scalar first: qs[1 + axis] is the axis' component
    proper = i == k
    kk = k
    if proper:
        kk = 3 - i - j
    sign = float32((i - j) * (j - kk) * (kk - i)) / 2.0  # the Levi-Civita symbol of (i, j, kk)
    a = qs[0]
    b = qs[1 + i]
    c = qs[1 + j]
    d = qs[1 + kk] * sign
    if not proper:
        a = qs[0] - qs[1 + j]
        b = qs[1 + i] + qs[1 + kk] * sign
        c = qs[1 + j] + qs[0]
        d = qs[1 + kk] * sign - qs[1 + i]
    n2 = a * a + b * b + c * c + d * d
    t2 = wp.acos(2.0 * (a * a + b * b) / n2 - 1.0)
    tp = wp.atan2(b, a)
    tm = wp.atan2(d, c)
    t1 = float32(0.0)
    t3 = float32(0.0)
    if wp.abs(t2) < 1.0e-6:
        t3 = 2.0 * tp
    elif wp.abs(t2 - PI) < 1.0e-6:
        t3 = 2.0 * tm
    else:
        t1 = tp - tm
        t3 = tp + tm
    if not proper:
        t2 = t2 - HALF_PI
        t3 = t3 * sign
    out = vec3(0.0, 0.0, 0.0)
    out[i] = t1
    out[j] = t2
    out[kk] = t3
    return out


__all__ = ["quat_twist", "quat_twist_angle", "quat_twist_angle_signed", "quat_from_euler", "quat_to_euler",
           "velocity_at_point", "transform_twist", "transform_wrench", "transform_to_matrix", "transform_compose",
           "transform_from_matrix", "transform_decompose", "quat_to_rpy"]
