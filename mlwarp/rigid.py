"""Rigid-body helpers that Warp defines as @wp.func over its builtins, written here in the kernel
language too (float32, Warp's conventions: quaternions (x, y, z, w), spatial vectors (angular, linear),
quat_rpy's extrinsic x-y-z order). Usable in kernels and from Python, like any @wp.func."""

from __future__ import annotations

from typing import Any

from .builtins import namespace as wp  # wp.sin, wp.length, ...: the builtins, spelt as in user code
from .func import func
from .vector import mat44, matrix, quat, spatial_vector, transform, vec3


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


@func
def transform_to_matrix(t: transform) -> mat44:
    """The 4x4 homogeneous matrix [[R, p], [0, 1]] of t."""
    p = wp.transform_get_translation(t)
    r = wp.quat_to_matrix(wp.transform_get_rotation(t))
    return mat44(r[0, 0], r[0, 1], r[0, 2], p[0],
                 r[1, 0], r[1, 1], r[1, 2], p[1],
                 r[2, 0], r[2, 1], r[2, 2], p[2],
                 0.0, 0.0, 0.0, 1.0)


@func
def transform_compose(position: vec3, rotation: quat, scale: vec3) -> mat44:
    """The 4x4 matrix [[R diag(scale), position], [0, 1]]."""
    r = wp.quat_to_matrix(rotation)
    return mat44(r[0, 0] * scale[0], r[0, 1] * scale[1], r[0, 2] * scale[2], position[0],
                 r[1, 0] * scale[0], r[1, 1] * scale[1], r[1, 2] * scale[2], position[1],
                 r[2, 0] * scale[0], r[2, 1] * scale[1], r[2, 2] * scale[2], position[2],
                 0.0, 0.0, 0.0, 1.0)


@func
def transform_compose(position: Any, rotation: Any, scale: Any):  # noqa: F811  (float16 and float64)
    """transform_compose for the other scalar types (Warp has an overload per type)."""
    r = wp.quat_to_matrix(rotation)
    return matrix(r[0, 0] * scale[0], r[0, 1] * scale[1], r[0, 2] * scale[2], position[0],
                  r[1, 0] * scale[0], r[1, 1] * scale[1], r[1, 2] * scale[2], position[1],
                  r[2, 0] * scale[0], r[2, 1] * scale[1], r[2, 2] * scale[2], position[2],
                  0.0, 0.0, 0.0, 1.0, shape=(4, 4), dtype=rotation.dtype)


@func
def transform_from_matrix(m: mat44) -> transform:
    """The transform of a 4x4 matrix [[R, p], [0, 1]]: p from the last column, q from R."""
    return transform(vec3(m[0, 3], m[1, 3], m[2, 3]), wp.quat_from_matrix(m))


@func
def transform_decompose(m: mat44):
    """(position, rotation, scale) of a 4x4 matrix [[R diag(scale), position], [0, 1]]: the column lengths
    are the scale (a zero column is left as it is), the normalised columns the rotation."""
    c0 = vec3(m[0, 0], m[1, 0], m[2, 0])
    c1 = vec3(m[0, 1], m[1, 1], m[2, 1])
    c2 = vec3(m[0, 2], m[1, 2], m[2, 2])
    scale = vec3(wp.length(c0), wp.length(c1), wp.length(c2))
    if scale[0] != 0.0:
        c0 = c0 / scale[0]
    if scale[1] != 0.0:
        c1 = c1 / scale[1]
    if scale[2] != 0.0:
        c2 = c2 / scale[2]
    rotation = wp.quat_from_matrix(wp.matrix_from_cols(c0, c1, c2))
    return vec3(m[0, 3], m[1, 3], m[2, 3]), rotation, scale


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


__all__ = ["velocity_at_point", "transform_twist", "transform_wrench", "transform_to_matrix", "transform_compose",
           "transform_from_matrix", "transform_decompose", "quat_to_rpy"]
