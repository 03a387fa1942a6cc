"""Transforms (p, q) and spatial vectors, against numpy with 4x4 homogeneous matrices as the reference."""

import numpy as np
import pytest

import mlwarp as wp

rng = np.random.default_rng(3)


def quat_matrix(q):
    x, y, z, w = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                     np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                     np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], 1)


def homogeneous(p, q):
    m = np.zeros((len(p), 4, 4))
    m[:, :3, :3] = quat_matrix(q.astype(np.float64))
    m[:, :3, 3] = p
    m[:, 3, 3] = 1.0
    return m


def random_transforms(n):
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    p = rng.uniform(-3, 3, size=(n, 3))
    return np.concatenate([p, q], 1).astype(np.float32)


def test_transform_types_in_python():
    t = wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat_identity())
    assert list(t) == [1, 2, 3, 0, 0, 0, 1] and t.p == wp.vec3(1, 2, 3) and t.q == wp.quat(0, 0, 0, 1)
    assert wp.transform_identity() == wp.transform(0, 0, 0, 0, 0, 0, 1)
    assert wp.types.type_size_in_bytes(wp.transformd) == 56


def test_transform_builtins():
    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=wp.transform), b: wp.array(dtype=wp.transform), x: wp.array(dtype=wp.vec3),
          ts: wp.array(dtype=wp.transform, ndim=2), vs: wp.array(dtype=wp.vec3, ndim=2),
          qs: wp.array(dtype=wp.quat)):
        i = wp.tid()
        ta = a[i]
        ts[i, 0] = wp.transform_multiply(ta, b[i])
        ts[i, 1] = ta * b[i]
        ts[i, 2] = wp.transform_inverse(ta)
        ts[i, 3] = wp.transform_identity()
        ts[i, 4] = wp.transform(wp.transform_get_translation(ta) * 2.0, wp.transform_get_rotation(ta))
        vs[i, 0] = wp.transform_point(ta, x[i])
        vs[i, 1] = wp.transform_vector(ta, x[i])
        vs[i, 2] = ta.p
        qs[i] = ta.q

    n = 10
    A, B = random_transforms(n), random_transforms(n)
    X = rng.normal(size=(n, 3)).astype(np.float32)
    ts, vs, qs = wp.zeros((n, 5), dtype=wp.transform), wp.zeros((n, 3), dtype=wp.vec3), wp.zeros(n, dtype=wp.quat)
    wp.launch(k, n, [wp.array(A, dtype=wp.transform), wp.array(B, dtype=wp.transform), wp.array(X, dtype=wp.vec3),
                     ts, vs, qs])
    T = ts.numpy()
    HA, HB = homogeneous(A[:, :3], A[:, 3:]), homogeneous(B[:, :3], B[:, 3:])
    for got in (T[:, 0], T[:, 1]):
        np.testing.assert_allclose(homogeneous(got[:, :3], got[:, 3:]), HA @ HB, atol=1e-5)
    np.testing.assert_allclose(homogeneous(T[:, 2, :3], T[:, 2, 3:]), np.linalg.inv(HA), atol=1e-5)
    np.testing.assert_array_equal(T[:, 3], np.broadcast_to([0, 0, 0, 0, 0, 0, 1], (n, 7)))
    np.testing.assert_array_equal(T[:, 4], np.concatenate([A[:, :3] * 2, A[:, 3:]], 1))
    Xh = np.concatenate([X, np.ones((n, 1))], 1)
    np.testing.assert_allclose(vs.numpy()[:, 0], np.einsum("nij,nj->ni", HA, Xh)[:, :3], atol=1e-5)
    np.testing.assert_allclose(vs.numpy()[:, 1], np.einsum("nij,nj->ni", HA[:, :3, :3], X), atol=1e-5)
    np.testing.assert_array_equal(vs.numpy()[:, 2], A[:, :3])
    np.testing.assert_array_equal(qs.numpy(), A[:, 3:])


def test_transform_argument_by_value_and_composed_transforms():
    @wp.kernel(enable_backward=False)
    def k(t: wp.transform, pts: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        out[i] = wp.transform_point(wp.transform_inverse(t), wp.transform_point(t, pts[i]))

    t = wp.transform(wp.vec3(1.0, -2.0, 0.5), wp.quat(0.0, 0.0, np.sin(0.4), np.cos(0.4)))
    pts = rng.normal(size=(5, 3)).astype(np.float32)
    out = wp.zeros(5, dtype=wp.vec3)
    wp.launch(k, 5, [t, wp.array(pts, dtype=wp.vec3), out])
    np.testing.assert_allclose(out.numpy(), pts, atol=1e-5)


def test_spatial_vectors_and_matrices():
    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=wp.spatial_vector), m: wp.array(dtype=wp.spatial_matrix),
          top: wp.array(dtype=wp.vec3), bottom: wp.array(dtype=wp.vec3), d: wp.array(dtype=float),
          mv: wp.array(dtype=wp.spatial_vector), built: wp.array(dtype=wp.spatial_vector)):
        i = wp.tid()
        top[i] = wp.spatial_top(a[i])
        bottom[i] = wp.spatial_bottom(a[i])
        d[i] = wp.spatial_dot(a[i], a[i])
        mv[i] = m[i] * a[i] + a[i] * 2.0
        built[i] = wp.spatial_vector(bottom[i], top[i])

    n = 3
    A = rng.normal(size=(n, 6)).astype(np.float32)
    M = rng.normal(size=(n, 6, 6)).astype(np.float32)
    top, bottom, d = wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=float)
    mv, built = wp.zeros(n, dtype=wp.spatial_vector), wp.zeros(n, dtype=wp.spatial_vector)
    wp.launch(k, n, [wp.array(A, dtype=wp.spatial_vector), wp.array(M, dtype=wp.spatial_matrix), top, bottom, d,
                     mv, built])
    np.testing.assert_array_equal(top.numpy(), A[:, :3])
    np.testing.assert_array_equal(bottom.numpy(), A[:, 3:])
    np.testing.assert_allclose(d.numpy(), (A * A).sum(1), rtol=1e-6)
    np.testing.assert_allclose(mv.numpy(), np.einsum("nij,nj->ni", M, A) + A * 2, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(built.numpy(), np.concatenate([A[:, 3:], A[:, :3]], 1))


def test_transform_errors():
    @wp.kernel(enable_backward=False)
    def k(t: wp.array(dtype=wp.transform), v: wp.array(dtype=wp.vec4)):
        v[0] = wp.transform_point(t[0], v[0])

    # Warp's wording in a kernel (recorded from warp-lang 1.19)
    with pytest.raises(wp.CompileTypeError, match=r"Couldn't find function overload for 'transform_point' that "
                                                  r"matched inputs with types: \[transformf, vec4f\]"):
        wp.launch(k, 1, [wp.zeros(1, dtype=wp.transform), wp.zeros(1, dtype=wp.vec4)])


def test_transform_members_can_be_assigned():
    @wp.kernel(enable_backward=False)
    def k(out: wp.array(dtype=wp.transform)):
        t = wp.transform_identity()
        t.p = wp.vec3(1.0, 2.0, 3.0)
        t.q = wp.quat(0.0, 0.0, 1.0, 0.0)
        out[0] = t

    out = wp.zeros(1, dtype=wp.transform)
    wp.launch(k, 1, [out])
    np.testing.assert_array_equal(out.numpy()[0], [1, 2, 3, 0, 0, 1, 0])  # as warp-lang 1.19 gives


def test_transform_setters_modify_their_argument():
    @wp.kernel(enable_backward=False)
    def k(out: wp.array(dtype=wp.transform)):
        t = wp.transform_identity()
        wp.transform_set_translation(t, wp.vec3(1.0, 2.0, 3.0))
        wp.transform_set_rotation(t, wp.quat(0.0, 1.0, 0.0, 0.0))
        out[0] = t

    out = wp.zeros(1, dtype=wp.transform)
    wp.launch(k, 1, [out])
    np.testing.assert_array_equal(out.numpy()[0], [1, 2, 3, 0, 1, 0, 0])  # as warp-lang 1.19 gives
    t = wp.transform_identity()
    wp.transform_set_translation(t, wp.vec3(4.0, 5.0, 6.0))
    assert t == wp.transform(4, 5, 6, 0, 0, 0, 1)


def test_rigid_body_helpers_in_kernels_and_python():
    @wp.kernel(enable_backward=False)
    def k(t: wp.array(dtype=wp.transform), s: wp.array(dtype=wp.spatial_vector), r: wp.array(dtype=wp.vec3),
          m: wp.array(dtype=wp.mat44), c: wp.array(dtype=wp.mat44), vel: wp.array(dtype=wp.vec3),
          tw: wp.array(dtype=wp.spatial_vector), wr: wp.array(dtype=wp.spatial_vector),
          rpy: wp.array(dtype=wp.vec3), angles: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        m[i] = wp.transform_to_matrix(t[i])
        c[i] = wp.transform_compose(wp.transform_get_translation(t[i]), wp.transform_get_rotation(t[i]), r[i])
        vel[i] = wp.velocity_at_point(s[i], r[i])
        tw[i] = wp.transform_twist(t[i], s[i])
        wr[i] = wp.transform_wrench(t[i], s[i])
        a = angles[i]
        rpy[i] = wp.quat_to_rpy(wp.quat_rpy(a[0], a[1], a[2]))

    n = 6
    T = random_transforms(n)
    S = rng.normal(size=(n, 6)).astype(np.float32)
    R = rng.normal(size=(n, 3)).astype(np.float32)
    A = rng.uniform(-1.2, 1.2, size=(n, 3)).astype(np.float32)  # pitch away from +-pi/2
    outs = [wp.zeros(n, dtype=d) for d in (wp.mat44, wp.mat44, wp.vec3, wp.spatial_vector, wp.spatial_vector,
                                            wp.vec3)]
    wp.launch(k, n, [wp.array(T, dtype=wp.transform), wp.array(S, dtype=wp.spatial_vector),
                     wp.array(R, dtype=wp.vec3), *outs, wp.array(A, dtype=wp.vec3)])
    m, c, vel, tw, wr, rpy = (o.numpy() for o in outs)
    H = homogeneous(T[:, :3], T[:, 3:])
    np.testing.assert_allclose(m, H, atol=1e-6)
    np.testing.assert_allclose(c, H * np.concatenate([R, np.ones((n, 1))], 1)[:, None, :], atol=1e-5)
    w, v = S[:, :3], S[:, 3:]
    np.testing.assert_allclose(vel, v + np.cross(w, R), atol=1e-5)
    Rm, p = H[:, :3, :3], T[:, :3]
    w2 = np.einsum("nij,nj->ni", Rm, w)
    np.testing.assert_allclose(tw, np.concatenate([w2, np.einsum("nij,nj->ni", Rm, v) + np.cross(p, w2)], 1),
                               atol=1e-5)
    f2 = np.einsum("nij,nj->ni", Rm, v)
    np.testing.assert_allclose(wr, np.concatenate([np.einsum("nij,nj->ni", Rm, w) + np.cross(p, f2), f2], 1),
                               atol=1e-5)
    np.testing.assert_allclose(rpy, A, atol=1e-5)
    np.testing.assert_allclose(wp.transform_to_matrix(wp.transform(*T[0].tolist())).numpy(), H[0], atol=1e-6)


def test_transform_from_matrix_and_decompose_invert_compose():
    @wp.kernel(enable_backward=False)
    def k(t: wp.array(dtype=wp.transform), s: wp.array(dtype=wp.vec3), back: wp.array(dtype=wp.transform),
          pos: wp.array(dtype=wp.vec3), rot: wp.array(dtype=wp.quat), scale: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        back[i] = wp.transform_from_matrix(wp.transform_to_matrix(t[i]))
        p, q, sc = wp.transform_decompose(wp.transform_compose(wp.transform_get_translation(t[i]),
                                                               wp.transform_get_rotation(t[i]), s[i]))
        pos[i] = p
        rot[i] = q
        scale[i] = sc

    n = 5
    T = random_transforms(n)
    S = rng.uniform(0.5, 2.0, size=(n, 3)).astype(np.float32)
    back, pos = wp.zeros(n, dtype=wp.transform), wp.zeros(n, dtype=wp.vec3)
    rot, scale = wp.zeros(n, dtype=wp.quat), wp.zeros(n, dtype=wp.vec3)
    wp.launch(k, n, [wp.array(T, dtype=wp.transform), wp.array(S, dtype=wp.vec3), back, pos, rot, scale])
    same_rotation = lambda q: np.minimum(np.abs(q - T[:, 3:]).max(1), np.abs(q + T[:, 3:]).max(1))  # noqa: E731
    np.testing.assert_allclose(back.numpy()[:, :3], T[:, :3], atol=1e-6)
    assert same_rotation(back.numpy()[:, 3:]).max() < 1e-5
    np.testing.assert_allclose(pos.numpy(), T[:, :3], atol=1e-6)
    assert same_rotation(rot.numpy()).max() < 1e-5
    np.testing.assert_allclose(scale.numpy(), S, atol=1e-5)


@wp.kernel
def _compose_wide(out: wp.array(dtype=wp.mat44d), outh: wp.array(dtype=wp.mat44h)):
    q = wp.quatd(0.0, 0.0, 0.7071067811865476, 0.7071067811865476)  # 90 degrees about z
    out[0] = wp.transform_compose(wp.vec3d(1.0, 2.0, 3.0), q, wp.vec3d(2.0, 3.0, 4.0))
    outh[0] = wp.transform_compose(wp.vec3h(1.0, 2.0, 3.0), wp.quath(0.0, 0.0, 0.0, 1.0), wp.vec3h(2.0, 2.0, 2.0))


def test_transform_compose_in_float64_and_float16():
    out, outh = wp.zeros(1, dtype=wp.mat44d), wp.zeros(1, dtype=wp.mat44h)
    wp.launch(_compose_wide, 1, [out, outh])
    expected = np.array([[0, -3, 0, 1], [2, 0, 0, 2], [0, 0, 4, 3], [0, 0, 0, 1]], dtype=np.float64)  # R diag(s)
    np.testing.assert_allclose(out.numpy()[0], expected, atol=1e-15)
    np.testing.assert_array_equal(outh.numpy()[0], [[2, 0, 0, 1], [0, 2, 0, 2], [0, 0, 2, 3], [0, 0, 0, 1]])
