"""Quaternions (x, y, z, w): construction, products and Warp's quaternion builtins, against an independent
numpy reference (Hamilton product, Rodrigues' rotation formula)."""

import numpy as np
import pytest

import mlwarp as wp

rng = np.random.default_rng(5)


def unit(n, d):
    v = rng.normal(size=(n, d))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def hamilton(a, b):
    """(x, y, z, w) quaternion product, from the scalar/vector form: (s1 s2 - v1.v2, s1 v2 + s2 v1 + v1 x v2)."""
    va, sa, vb, sb = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    v = sa * vb + sb * va + np.cross(va, vb)
    s = sa * sb - (va * vb).sum(-1, keepdims=True)
    return np.concatenate([v, s], -1)


def rodrigues(axis, angle, v):
    """v rotated by `angle` about the unit `axis`."""
    c, s = np.cos(angle)[:, None], np.sin(angle)[:, None]
    return v * c + np.cross(axis, v) * s + axis * (axis * v).sum(1, keepdims=True) * (1 - c)


def rotation_matrix(axis, angle):
    return np.stack([rodrigues(axis, angle, np.broadcast_to(e, axis.shape)) for e in np.eye(3)], -1)


def test_seed_quaternion_rotation_example():
    """The seeds' review: rotate vectors with wp.quat_rotate(q, v), q built from an axis and an angle."""

    @wp.kernel(enable_backward=False)
    def rotate(axes: wp.array(dtype=wp.vec3), angles: wp.array(dtype=float), points: wp.array(dtype=wp.vec3),
               out: wp.array(dtype=wp.vec3), back: wp.array(dtype=wp.vec3)):
        tid = wp.tid()
        q = wp.quat_from_axis_angle(axes[tid], angles[tid])
        out[tid] = wp.quat_rotate(q, points[tid])
        back[tid] = wp.quat_rotate_inv(q, out[tid])

    n = 64
    axes, angles = unit(n, 3), rng.uniform(-np.pi, np.pi, n).astype(np.float32)
    pts = rng.normal(size=(n, 3)).astype(np.float32)
    out, back = wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.vec3)
    wp.launch(rotate, n, [wp.array(axes, dtype=wp.vec3), wp.array(angles, dtype=float),
                          wp.array(pts, dtype=wp.vec3), out, back])
    np.testing.assert_allclose(out.numpy(), rodrigues(axes.astype(np.float64), angles.astype(np.float64), pts),
                               atol=2e-6 * 4)
    np.testing.assert_allclose(back.numpy(), pts, atol=1e-5)


def test_quaternion_builtins():
    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=wp.quat), b: wp.array(dtype=wp.quat), axes: wp.array(dtype=wp.vec3),
          angles: wp.array(dtype=float), qs: wp.array(dtype=wp.quat, ndim=2), ms: wp.array(dtype=wp.mat33),
          axis_out: wp.array(dtype=wp.vec3), s: wp.array(dtype=float, ndim=2)):
        i = wp.tid()
        qa = a[i]
        qb = b[i]
        qs[i, 0] = qa * qb
        qs[i, 1] = wp.quat_inverse(qa)
        qs[i, 2] = wp.normalize(qa * 3.0)
        qs[i, 3] = wp.quat_identity()
        qs[i, 4] = wp.quat_from_matrix(wp.quat_to_matrix(qa))
        qs[i, 5] = qa + qb - qa / 2.0
        qs[i, 6] = wp.quat_rpy(angles[i], angles[i] * 0.5, -angles[i])
        qs[i, 7] = wp.normalize(wp.quat(0.0, 0.0, 0.0, 0.0))
        ms[i] = wp.quat_to_matrix(wp.quat_from_axis_angle(axes[i], angles[i]))
        axis, angle = wp.quat_to_axis_angle(wp.quat_from_axis_angle(axes[i], angles[i]))
        axis_out[i] = axis
        s[i, 0] = angle
        s[i, 1] = wp.dot(qa, qb)
        s[i, 2] = wp.length(qa * 2.0)
        s[i, 3] = qa.w + qa[0]

    n = 16
    A, B = unit(n, 4), unit(n, 4)
    axes = unit(n, 3)
    angles = rng.uniform(0.1, 3.0, n).astype(np.float32)
    qs, ms = wp.zeros((n, 8), dtype=wp.quat), wp.zeros(n, dtype=wp.mat33)
    axis_out, s = wp.zeros(n, dtype=wp.vec3), wp.zeros((n, 4), dtype=float)
    wp.launch(k, n, [wp.array(A, dtype=wp.quat), wp.array(B, dtype=wp.quat), wp.array(axes, dtype=wp.vec3),
                     wp.array(angles, dtype=float), qs, ms, axis_out, s])
    Q = qs.numpy()
    np.testing.assert_allclose(Q[:, 0], hamilton(A, B), atol=1e-6)
    np.testing.assert_array_equal(Q[:, 1], A * [-1, -1, -1, 1])
    np.testing.assert_allclose(Q[:, 2], A, atol=1e-6)
    np.testing.assert_array_equal(Q[:, 3], np.broadcast_to([0, 0, 0, 1], (n, 4)))
    same_rotation = np.minimum(np.abs(Q[:, 4] - A).max(1), np.abs(Q[:, 4] + A).max(1))  # q and -q
    assert same_rotation.max() < 1e-5
    np.testing.assert_allclose(Q[:, 5], A + B - A / 2, atol=1e-6)
    # roll about x, then pitch about y, then yaw about z: q = qz(yaw) qy(pitch) qx(roll)
    ex, ey, ez = (np.broadcast_to(e, (n, 3)) for e in np.eye(3))
    half = lambda ax, ang: np.concatenate([ax * np.sin(ang / 2)[:, None], np.cos(ang / 2)[:, None]], 1)  # noqa
    a64 = angles.astype(np.float64)
    rpy = hamilton(hamilton(half(ez, -a64), half(ey, a64 * 0.5)), half(ex, a64))
    np.testing.assert_allclose(Q[:, 6], rpy, atol=1e-6)
    np.testing.assert_array_equal(Q[:, 7], np.broadcast_to([0, 0, 0, 1], (n, 4)))  # Warp: identity, not zero
    np.testing.assert_allclose(ms.numpy(), rotation_matrix(axes.astype(np.float64), a64), atol=2e-6)
    np.testing.assert_allclose(axis_out.numpy(), axes, atol=1e-5)
    S = s.numpy()
    np.testing.assert_allclose(S[:, 0], angles, atol=1e-5)
    np.testing.assert_allclose(S[:, 1], (A * B).sum(1), atol=1e-6)
    np.testing.assert_allclose(S[:, 2], 2.0, atol=1e-6)
    np.testing.assert_array_equal(S[:, 3], A[:, 3] + A[:, 0])


def test_slerp_and_between_vectors():
    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), t: float, mid: wp.array(dtype=wp.vec3),
          turned: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        q = wp.quat_between_vectors(a[i], b[i])
        turned[i] = wp.quat_rotate(q, wp.normalize(a[i]))
        half = wp.quat_slerp(wp.quat_identity(), q, t)
        mid[i] = wp.quat_rotate(half, wp.normalize(a[i]))

    n = 12
    a, b = unit(n, 3) * 2.0, unit(n, 3) * 0.5
    mid, turned = wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.vec3)
    wp.launch(k, n, [wp.array(a, dtype=wp.vec3), wp.array(b, dtype=wp.vec3), 0.25, mid, turned])
    an, bn = a / np.linalg.norm(a, axis=1, keepdims=True), b / np.linalg.norm(b, axis=1, keepdims=True)
    np.testing.assert_allclose(turned.numpy(), bn, atol=2e-6)
    # a quarter of the way along the great circle from an to bn
    axis = np.cross(an, bn)
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    theta = np.arccos(np.clip((an * bn).sum(1), -1, 1))
    np.testing.assert_allclose(mid.numpy(), rodrigues(axis, 0.25 * theta, an), atol=1e-5)


def test_quat_type_errors():
    @wp.kernel(enable_backward=False)
    def k(q: wp.array(dtype=wp.quat), v: wp.array(dtype=wp.vec4)):
        v[0] = wp.quat_rotate(q[0], v[0])

    # Warp's kernel-scope wording (recorded from warp-lang 1.19)
    with pytest.raises(wp.CompileTypeError, match=r"Couldn't find function overload for 'quat_rotate' that matched "
                                                  r"inputs with types: \[quatf, vec4f\]"):
        wp.launch(k, 1, [wp.zeros(1, dtype=wp.quat), wp.zeros(1, dtype=wp.vec4)])


@wp.kernel
def axis_angle_out_args(qs: wp.array(dtype=wp.quat), loss: wp.array(dtype=float)):
    tid = wp.tid()
    axis = wp.vec3()
    angle = float(0.0)
    wp.quat_to_axis_angle(qs[tid], axis, angle)  # Warp's output-argument form
    t = wp.quat_to_axis_angle(qs[tid])  # the tuple form
    wp.atomic_add(loss, 0, axis[2] * 10.0 + angle + t[1] * 100.0)


def test_quat_to_axis_angle_output_arguments_and_gradient():
    # q = (0, 0, sin(a/2), cos(a/2)): axis (0, 0, 1), angle a = 2 atan2(z, w); loss = 10 axis_z + 101 a.
    # d a/dz = 2w / (z^2 + w^2) = 2 cos(a/2), d a/dw = -2 sin(a/2); axis_z = z/|z| has no z-derivative
    a = 0.5
    qs = wp.array(np.array([[0.0, 0.0, np.sin(a / 2), np.cos(a / 2)]], np.float32), dtype=wp.quat,
                  requires_grad=True)
    loss = wp.zeros(1, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(axis_angle_out_args, 1, [qs, loss])
    tape.backward(loss)
    np.testing.assert_allclose(loss.numpy(), [10.0 + 101.0 * a], rtol=1e-6)
    np.testing.assert_allclose(qs.grad.numpy(), [[0.0, 0.0, 202.0 * np.cos(a / 2), -202.0 * np.sin(a / 2)]],
                               rtol=1e-5, atol=1e-5)


def test_quat_to_axis_angle_output_arguments_must_match():
    def k(q: wp.quat):
        axis = wp.vec3d()
        angle = float(0.0)
        wp.quat_to_axis_angle(q, axis, angle)

    with pytest.raises(wp.CompileTypeError, match=r"quat_to_axis_angle\(q, axis, angle\): expected a vec3f output, "
                                                   r"got vec3d"):
        wp.launch(wp.kernel(k), 1, [wp.quat_identity()])


def test_quat_rpy_in_python_scope():
    r, p, y = 0.3, -0.2, 1.1
    cr, sr, cp, sp, cy, sy = np.cos(r / 2), np.sin(r / 2), np.cos(p / 2), np.sin(p / 2), np.cos(y / 2), np.sin(y / 2)
    expected = [cy * sr * cp - sy * cr * sp, cy * cr * sp + sy * sr * cp, sy * cr * cp - cy * sr * sp,
                cy * cr * cp + sy * sr * sp]  # q_z(yaw) q_y(pitch) q_x(roll)
    q = wp.quat_rpy(r, p, y)
    assert isinstance(q, wp.quat)
    np.testing.assert_allclose(list(q), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(list(wp.quat_rpy(0.5, 0.0, 0.0)), [np.sin(0.25), 0, 0, np.cos(0.25)], rtol=1e-6)
