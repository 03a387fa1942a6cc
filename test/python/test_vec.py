"""Vectors: types, constructors, operators, component reads and writes, arrays of vectors with numpy's
(n, 3) layout, atomics, arguments by value, and the vector builtins, each against numpy."""

import numpy as np
import pytest

import mlwarp as wp

rng = np.random.default_rng(7)


def vec3s(n, dtype=np.float32):
    return rng.uniform(-2.0, 2.0, size=(n, 3)).astype(dtype)


def test_vector_types_are_cached_and_named_as_in_warp():
    assert wp.vec(3, wp.float32) is wp.vec3 is wp.vec3f
    assert wp.types.vector(3, float) is wp.vec3
    assert wp.vec(4, wp.float64) is wp.vec4d
    assert wp.vec3i.__name__ == "vec3i" and wp.vec2ui.__name__ == "vec2ui" and wp.vec4h.__name__ == "vec4h"
    assert wp.types.type_size_in_bytes(wp.vec3) == 12 and wp.types.type_size_in_bytes(wp.vec4d) == 32
    v = wp.vec3(1.0, 2.0, 3.0)
    assert (v.x, v.y, v.z, v[2]) == (1.0, 2.0, 3.0, 3.0)
    assert wp.vec3(1.5) == wp.vec3(1.5, 1.5, 1.5)
    assert (v * 2.0, 2.0 * v, v / 2.0, -v) == (wp.vec3(2, 4, 6), wp.vec3(2, 4, 6), wp.vec3(0.5, 1, 1.5),
                                               wp.vec3(-1, -2, -3))
    assert wp.vec3i(7, 8, -9) / 2 == wp.vec3i(3, 4, -4)  # C division truncates


def test_arithmetic_components_and_writes():
    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), s: float, out: wp.array(dtype=wp.vec3),
          w: wp.array(dtype=wp.vec3), comps: wp.array(dtype=float, ndim=2)):
        i = wp.tid()
        u = a[i]
        v = b[i]
        out[i] = (u + v) * s - v / s + s * (-u)
        x = wp.vec3(u)  # copy
        x.y = v.z
        x[2] = x[0] + 1.0
        x[0] += 10.0
        w[i] = x
        comps[i, 0] = u.x
        comps[i, 1] = u[1]
        comps[i, 2] = a[i].z
        j = i % 3
        comps[i, 3] = v[j]

    A, B = vec3s(6), vec3s(6)
    out, w = wp.zeros(6, dtype=wp.vec3), wp.zeros(6, dtype=wp.vec3)
    comps = wp.zeros((6, 4), dtype=float)
    s = np.float32(1.5)
    wp.launch(k, 6, [wp.array(A, dtype=wp.vec3), wp.array(B, dtype=wp.vec3), 1.5, out, w, comps])
    np.testing.assert_allclose(out.numpy(), (A + B) * s - B / s + s * (-A), rtol=1e-6)
    expected_w = A.copy()
    expected_w[:, 1] = B[:, 2]
    expected_w[:, 2] = A[:, 0] + np.float32(1.0)
    expected_w[:, 0] += np.float32(10.0)
    np.testing.assert_array_equal(w.numpy(), expected_w)
    np.testing.assert_array_equal(comps.numpy()[:, :3], A)
    np.testing.assert_array_equal(comps.numpy()[:, 3], B[np.arange(6), np.arange(6) % 3])


def test_constructors_fill_conversion_and_comparisons():
    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3d), fill: wp.array(dtype=wp.vec4),
          ints: wp.array(dtype=wp.vec3i), eq: wp.array(dtype=wp.int32)):
        i = wp.tid()
        out[i] = wp.vec3d(a[i])
        fill[i] = wp.vec4(a[i].x)
        ints[i] = wp.vec3i(a[i])
        z = wp.vec3()
        if a[i] == a[i] and a[i] != z and not (z != wp.vec3(0.0, 0.0, 0.0)):
            eq[i] = 1

    A = vec3s(4) * np.float32(10)
    out, fill = wp.zeros(4, dtype=wp.vec3d), wp.zeros(4, dtype=wp.vec4)
    ints, eq = wp.zeros(4, dtype=wp.vec3i), wp.zeros(4, dtype=wp.int32)
    wp.launch(k, 4, [wp.array(A, dtype=wp.vec3), out, fill, ints, eq])
    np.testing.assert_array_equal(out.numpy(), A.astype(np.float64))
    np.testing.assert_array_equal(fill.numpy(), np.repeat(A[:, :1], 4, axis=1))
    np.testing.assert_array_equal(ints.numpy(), A.astype(np.int32))  # truncation toward zero
    np.testing.assert_array_equal(eq.numpy(), [1, 1, 1, 1])


def test_vector_builtins_against_numpy():
    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), scal: wp.array(dtype=float, ndim=2),
          vecs: wp.array(dtype=wp.vec3, ndim=2), idx: wp.array(dtype=wp.uint32, ndim=2),
          outer: wp.array(dtype=wp.mat33)):
        i = wp.tid()
        u = a[i]
        v = b[i]
        scal[i, 0] = wp.dot(u, v)
        scal[i, 1] = wp.length(u)
        scal[i, 2] = wp.length_sq(u)
        scal[i, 3] = wp.min(u)
        scal[i, 4] = wp.max(u)
        vecs[i, 0] = wp.cross(u, v)
        vecs[i, 1] = wp.normalize(u)
        vecs[i, 2] = wp.cw_mul(u, v)
        vecs[i, 3] = wp.cw_div(u, v)
        vecs[i, 4] = wp.min(u, v)
        vecs[i, 5] = wp.max(u, v)
        vecs[i, 6] = wp.abs(u)
        vecs[i, 7] = wp.sign(u)
        vecs[i, 8] = wp.normalize(wp.vec3(0.0))
        idx[i, 0] = wp.argmin(u)
        idx[i, 1] = wp.argmax(u)
        outer[i] = wp.outer(u, v)

    n = 8
    A, B = vec3s(n), vec3s(n)
    scal, vecs = wp.zeros((n, 5), dtype=float), wp.zeros((n, 9), dtype=wp.vec3)
    idx, outer = wp.zeros((n, 2), dtype=wp.uint32), wp.zeros(n, dtype=wp.mat33)
    wp.launch(k, n, [wp.array(A, dtype=wp.vec3), wp.array(B, dtype=wp.vec3), scal, vecs, idx, outer])
    s, v = scal.numpy(), vecs.numpy()
    dot = A[:, 0] * B[:, 0] + A[:, 1] * B[:, 1] + A[:, 2] * B[:, 2]  # Warp's order of additions
    np.testing.assert_array_equal(s[:, 0], dot)
    np.testing.assert_allclose(s[:, 1], np.linalg.norm(A, axis=1), rtol=1e-6)
    np.testing.assert_allclose(s[:, 2], (A * A).sum(1), rtol=1e-6)
    np.testing.assert_array_equal(s[:, 3], A.min(1))
    np.testing.assert_array_equal(s[:, 4], A.max(1))
    np.testing.assert_allclose(v[:, 0], np.cross(A, B), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(v[:, 1], A / np.linalg.norm(A, axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(v[:, 2], A * B)
    np.testing.assert_array_equal(v[:, 3], A / B)
    np.testing.assert_array_equal(v[:, 4], np.minimum(A, B))
    np.testing.assert_array_equal(v[:, 5], np.maximum(A, B))
    np.testing.assert_array_equal(v[:, 6], np.abs(A))
    np.testing.assert_array_equal(v[:, 7], np.where(A < 0, -1.0, 1.0))
    np.testing.assert_array_equal(v[:, 8], 0.0)  # normalize(0) is 0, as in Warp
    np.testing.assert_array_equal(idx.numpy()[:, 0], A.argmin(1))
    np.testing.assert_array_equal(idx.numpy()[:, 1], A.argmax(1))
    np.testing.assert_array_equal(outer.numpy(), A[:, :, None] * B[:, None, :])


@pytest.mark.parametrize("V,np_t", [(wp.vec3i, np.int32), (wp.vec2ui, np.uint32), (wp.vec4h, np.float16),
                                     (wp.vec3d, np.float64), (wp.vec2ub, np.uint8), (wp.vec3l, np.int64)],
                         ids=lambda x: getattr(x, "__name__", str(x)))
def test_vectors_of_every_scalar_type(V, np_t):
    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=V), b: wp.array(dtype=V), add: wp.array(dtype=V), div: wp.array(dtype=V),
          mx: wp.array(dtype=V), big: wp.array(dtype=wp.uint32)):
        i = wp.tid()
        add[i] = a[i] + b[i]
        div[i] = a[i] / b[i][0]
        mx[i] = wp.max(a[i], b[i])
        big[i] = wp.argmax(a[i])

    n = len(V._shape_) and V._length_
    vals = np.array([[7, 200, 3, 9], [2, 5, 100, 1], [9, 1, 4, 60]], dtype=np.float64)[:, :n]
    a, b = vals.astype(np_t), (vals[::-1] + 1).astype(np_t)
    add, div, mx = (wp.zeros(3, dtype=V) for _ in range(3))
    big = wp.zeros(3, dtype=wp.uint32)
    wp.launch(k, 3, [wp.array(a, dtype=V), wp.array(b, dtype=V), add, div, mx, big])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(add.numpy(), a + b)
    d = b[:, :1]
    expected_div = a / d if np.issubdtype(np_t, np.floating) else (a.astype(np.int64) // d).astype(np_t)
    np.testing.assert_array_equal(div.numpy(), expected_div)  # positive values: truncation == floor
    np.testing.assert_array_equal(mx.numpy(), np.maximum(a, b))
    np.testing.assert_array_equal(big.numpy(), a.argmax(1))


def test_arrays_of_vectors_keep_numpy_layout_and_atomic_add_is_componentwise():
    @wp.kernel(enable_backward=False)
    def k(src: wp.array(dtype=wp.vec3), acc: wp.array(dtype=wp.vec3), g: wp.vec3, old: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        acc[i % 2] += src[i] + g
        old[i] = wp.atomic_add(acc, 2, g)

    A = np.arange(12, dtype=np.float32).reshape(4, 3)
    src = wp.array(A, dtype=wp.vec3)
    assert src.shape == (4,) and src.numpy().shape == (4, 3) and src.strides == (12,)
    acc, old = wp.zeros(3, dtype=wp.vec3), wp.zeros(4, dtype=wp.vec3)
    wp.launch(k, 4, [src, acc, wp.vec3(1.0, 2.0, 3.0), old])
    g = np.array([1, 2, 3], dtype=np.float32)
    np.testing.assert_array_equal(acc.numpy()[0], A[0] + A[2] + 2 * g)
    np.testing.assert_array_equal(acc.numpy()[1], A[1] + A[3] + 2 * g)
    np.testing.assert_array_equal(acc.numpy()[2], 4 * g)
    np.testing.assert_array_equal(np.sort(old.numpy()[:, 0]), [0, 1, 2, 3])  # each thread saw an old value


def test_vector_arguments_by_value_accept_sequences():
    @wp.kernel(enable_backward=False)
    def k(v: wp.vec3, d: wp.vec2d, out: wp.array(dtype=float)):
        out[0] = v.x + v.y + v.z + float(d[1])

    out = wp.zeros(1, dtype=float)
    wp.launch(k, 1, [(1.0, 2.0, 3.0), wp.vec2d(0.0, 4.0), out])
    assert out.numpy()[0] == 10.0
    with pytest.raises(wp.LaunchError, match=r"argument 'v' expects vec3f \(3 components\), but passed value has 2"):
        wp.launch(k, 1, [(1.0, 2.0), wp.vec2d(0.0, 4.0), out])


def test_captured_vector_constant():
    up = wp.vec3(0.0, 1.0, 0.0)

    @wp.kernel(enable_backward=False)
    def k(out: wp.array(dtype=wp.vec3)):
        out[0] = up * 2.0

    out = wp.zeros(1, dtype=wp.vec3)
    wp.launch(k, 1, [out])
    np.testing.assert_array_equal(out.numpy()[0], [0, 2, 0])


def test_vector_type_errors_name_the_line():
    @wp.kernel(enable_backward=False)
    def vv(a: wp.array(dtype=wp.vec3)):
        a[0] = a[0] * a[1]

    # Warp's wording in a kernel (recorded from warp-lang 1.19)
    with pytest.raises(wp.CompileTypeError, match=r"test_vec.py:\d+.*Couldn't find function overload for 'mul' "
                                                  r"that matched inputs with types: \[vec3f, vec3f\]"):
        wp.launch(vv, 1, [wp.zeros(2, dtype=wp.vec3)])

    @wp.kernel(enable_backward=False)
    def comp(a: wp.array(dtype=wp.vec2)):
        a[0] = wp.vec2(a[0].z, 1.0)

    with pytest.raises(AttributeError, match=r"`z` is not an attribute of 'a\[\.\.\.\]' \(vec2f\)"):  # Warp's words
        wp.launch(comp, 1, [wp.zeros(2, dtype=wp.vec2)])

    @wp.kernel(enable_backward=False)
    def count(a: wp.array(dtype=wp.vec3)):
        a[0] = wp.vec3(1.0, 2.0)

    with pytest.raises(wp.CompileTypeError, match=r"incompatible number of values given \(2\) when constructing a "
                                                  r"vector of length 3"):
        wp.launch(count, 1, [wp.zeros(2, dtype=wp.vec3)])


def test_seed_vec3_particle_system():
    """The seeds' first simulation: particles under gravity bouncing on the ground, 60 frames, vs numpy."""

    @wp.kernel(enable_backward=False)
    def step(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), gravity: wp.vec3, dt: wp.float32,
             restitution: wp.float32):
        tid = wp.tid()
        v = vel[tid] + gravity * dt
        p = pos[tid] + v * dt
        if p[1] < 0.0:
            p = wp.vec3(p[0], 0.0, p[2])
            v = wp.vec3(v[0], -v[1] * restitution, v[2])
        pos[tid] = p
        vel[tid] = v

    n = 4096
    start = np.random.default_rng(0).random((n, 3)).astype(np.float32)
    pos = wp.array(start, dtype=wp.vec3)
    vel = wp.zeros(n, dtype=wp.vec3)
    gravity = wp.vec3(0.0, -9.8, 0.0)
    dt, restitution = 1.0 / 60.0, 0.6
    for _ in range(60):
        wp.launch(step, dim=n, inputs=[pos, vel, gravity, dt, restitution])

    p, v = start.copy(), np.zeros_like(start)
    g, dt32, r32 = np.array([0.0, -9.8, 0.0], np.float32), np.float32(dt), np.float32(restitution)
    for _ in range(60):
        v = v + g * dt32
        p = p + v * dt32
        below = p[:, 1] < 0
        p[below, 1] = 0.0
        v[below, 1] = -v[below, 1] * r32
    np.testing.assert_array_equal(pos.numpy(), p)
    np.testing.assert_array_equal(vel.numpy(), v)
    assert (pos.numpy()[:, 1] == 0.0).any()  # some particles bounced


def test_composite_builtins_in_python_scope():
    a, b = wp.vec3(1.0, 2.0, 3.0), wp.vec3(0.0, 1.0, 0.0)
    assert wp.dot(a, b) == 2.0 and wp.cross(a, b) == wp.vec3(-3.0, 0.0, 1.0)
    assert wp.length_sq(a) == 14.0 and wp.min(a) == 1.0 and wp.argmax(a) == 2
    assert wp.max(a, b) == a and wp.normalize(wp.vec3(0.0)) == wp.vec3(0.0)
    q = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), np.pi / 2)
    np.testing.assert_allclose(wp.quat_rotate(q, wp.vec3(1.0, 0.0, 0.0)).numpy(), [0, 1, 0], atol=1e-7)
    assert wp.normalize(wp.quat(0.0, 0.0, 0.0, 0.0)) == wp.quat_identity()
    m = wp.mat22(1.0, 2.0, 3.0, 4.0)
    assert wp.determinant(m) == -2.0 and wp.transpose(m) == wp.mat22(1.0, 3.0, 2.0, 4.0)
    np.testing.assert_allclose(wp.inverse(m).numpy(), np.linalg.inv(m.numpy()))
    with pytest.raises(TypeError, match=r"Couldn't find a function 'dot' compatible with the arguments "
                                        r"'vec3f, vec2f'"):
        wp.dot(a, wp.vec2(1.0, 1.0))


def test_min_max_argmin_with_nan_follow_warp():
    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), mn: wp.array(dtype=wp.vec3),
          red: wp.array(dtype=float, ndim=2), idx: wp.array(dtype=wp.uint32, ndim=2)):
        i = wp.tid()
        mn[i] = wp.min(a[i], b[i])
        red[i, 0] = wp.min(a[i])
        red[i, 1] = wp.max(a[i])
        idx[i, 0] = wp.argmin(a[i])
        idx[i, 1] = wp.argmax(a[i])

    nan = np.nan
    A = np.array([[nan, 2.0, 1.0], [3.0, nan, 5.0], [nan, nan, nan], [4.0, 4.0, -1.0]], dtype=np.float32)
    B = np.array([[1.0, nan, 0.0], [nan, 1.0, 9.0], [1.0, nan, 2.0], [4.0, 5.0, -2.0]], dtype=np.float32)
    mn, red, idx = wp.zeros(4, dtype=wp.vec3), wp.zeros((4, 2), dtype=float), wp.zeros((4, 2), dtype=wp.uint32)
    wp.launch(k, 4, [wp.array(A, dtype=wp.vec3), wp.array(B, dtype=wp.vec3), mn, red, idx])
    np.testing.assert_array_equal(mn.numpy(), np.fmin(A, B))  # C fmin: a NaN loses to a number
    np.testing.assert_array_equal(red.numpy()[:, 0], [1.0, 3.0, nan, -1.0])  # fmin folded left to right
    np.testing.assert_array_equal(red.numpy()[:, 1], [2.0, 5.0, nan, 4.0])
    np.testing.assert_array_equal(idx.numpy()[:, 0], [2, 0, 0, 2])  # NaN slots skipped; all NaN -> 0
    np.testing.assert_array_equal(idx.numpy()[:, 1], [1, 2, 0, 0])  # first of equal maxima


def test_lerp_mod_float_tests_bit_ops_and_spatial_cross():
    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), lerp: wp.array(dtype=wp.vec3),
          md: wp.array(dtype=wp.vec3), tests: wp.array(dtype=wp.int32, ndim=2), ia: wp.array(dtype=wp.vec2i),
          bits: wp.array(dtype=wp.vec2i, ndim=2), ua: wp.array(dtype=wp.vec2ui), ushift: wp.array(dtype=wp.vec2ui),
          s: wp.array(dtype=wp.spatial_vector), sc: wp.array(dtype=wp.spatial_vector, ndim=2)):
        i = wp.tid()
        lerp[i] = wp.lerp(a[i], b[i], 0.25)
        md[i] = wp.mod(a[i], b[i])
        if wp.isnan(a[i]):
            tests[i, 0] = 1
        if wp.isinf(a[i]):
            tests[i, 1] = 1
        if wp.isfinite(a[i]):
            tests[i, 2] = 1
        x = ia[i]
        y = wp.vec2i(3, 1)
        bits[i, 0] = x & y
        bits[i, 1] = x | y
        bits[i, 2] = x ^ y
        bits[i, 3] = x << y
        bits[i, 4] = x >> y
        bits[i, 5] = ~x
        ushift[i] = ua[i] >> wp.vec2ui(wp.uint32(1), wp.uint32(4))
        sc[i, 0] = wp.spatial_cross(s[i], s[(i + 1) % 3])
        sc[i, 1] = wp.spatial_cross_dual(s[i], s[(i + 1) % 3])

    inf, nan = np.inf, np.nan
    A = np.array([[1.5, -7.25, 3.0], [nan, 1.0, 2.0], [inf, 1.0, 2.0]], dtype=np.float32)
    B = np.array([[0.5, 2.0, -2.5], [1.0, 3.0, 0.75], [2.0, 0.5, 3.0]], dtype=np.float32)
    I = np.array([[12, -7], [5, 6], [-1, 1024]], dtype=np.int32)
    U = np.array([[0xFFFFFFFF, 256], [8, 17], [1, 2]], dtype=np.uint32)
    S = rng.normal(size=(3, 6)).astype(np.float32)
    lerp, md = wp.zeros(3, dtype=wp.vec3), wp.zeros(3, dtype=wp.vec3)
    tests, bits = wp.zeros((3, 3), dtype=wp.int32), wp.zeros((3, 6), dtype=wp.vec2i)
    ushift, sc = wp.zeros(3, dtype=wp.vec2ui), wp.zeros((3, 2), dtype=wp.spatial_vector)
    wp.launch(k, 3, [wp.array(A, dtype=wp.vec3), wp.array(B, dtype=wp.vec3), lerp, md, tests,
                     wp.array(I, dtype=wp.vec2i), bits, wp.array(U, dtype=wp.vec2ui), ushift,
                     wp.array(S, dtype=wp.spatial_vector), sc])
    t = np.float32(0.25)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(lerp.numpy(), A * (np.float32(1) - t) + B * t)
        np.testing.assert_array_equal(md.numpy(), np.fmod(A, B))
    np.testing.assert_array_equal(tests.numpy(), [[0, 0, 1], [1, 0, 0], [0, 1, 0]])
    y = np.array([3, 1], dtype=np.int32)
    got = bits.numpy()
    for j, expected in enumerate([I & y, I | y, I ^ y, I << y, I >> y, ~I]):
        np.testing.assert_array_equal(got[:, j], expected)
    np.testing.assert_array_equal(ushift.numpy(), U >> np.array([1, 4], dtype=np.uint32))  # logical shift
    S2 = S[[1, 2, 0]]
    w = np.cross(S[:, :3], S2[:, :3])
    np.testing.assert_allclose(sc.numpy()[:, 0], np.concatenate(
        [w, np.cross(S[:, 3:], S2[:, :3]) + np.cross(S[:, :3], S2[:, 3:])], 1), atol=1e-5)
    np.testing.assert_allclose(sc.numpy()[:, 1], np.concatenate(
        [w + np.cross(S[:, 3:], S2[:, 3:]), np.cross(S[:, :3], S2[:, 3:])], 1), atol=1e-5)


def test_vectors_and_matrices_through_loops_branches_and_annotations():
    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22),
          d: wp.array(dtype=wp.vec3d)):
        i = wp.tid()
        acc = wp.vec3()
        for j in range(3):
            acc = acc + a[j] * float(j)
        n = int(0)
        mm = wp.identity(n=2, dtype=float)
        while n < 3:
            mm = mm @ m[0]
            n += 1
        x: wp.vec3d = acc  # converted component-wise, as wp.vec3d(acc)
        d[i] = x
        out[i] = acc if i > 0 else -acc
        m[1] = mm

    A = np.arange(9, dtype=np.float32).reshape(3, 3)
    out, d = wp.zeros(2, dtype=wp.vec3), wp.zeros(2, dtype=wp.vec3d)
    m = wp.array(np.array([[[1, 1], [0, 1]], [[0, 0], [0, 0]]], np.float32), dtype=wp.mat22)
    wp.launch(k, 2, [wp.array(A, dtype=wp.vec3), out, m, d])
    acc = A[1] + 2 * A[2]
    np.testing.assert_array_equal(out.numpy(), [-acc, acc])
    np.testing.assert_array_equal(d.numpy(), [acc, acc])
    np.testing.assert_array_equal(m.numpy()[1], [[1, 3], [0, 1]])

    @wp.kernel(enable_backward=False)
    def bad(o: wp.array(dtype=wp.vec3d)):
        x: wp.vec2d = wp.vec3(1.0, 2.0, 3.0)

    with pytest.raises(wp.CompileTypeError, match=r"test_vec.py:\d+: in 'bad': cannot convert vec3f to vec2d"):
        wp.launch(bad, 1, [d])


UP = wp.vec3(0.0, 1.0, 0.0)


def test_changed_vector_global_is_seen_once_the_module_is_modified():
    global UP

    @wp.kernel(enable_backward=False)
    def k(out: wp.array(dtype=wp.vec3)):
        out[0] = UP * 2.0

    out = wp.zeros(1, dtype=wp.vec3)
    try:
        wp.launch(k, 1, [out])
        np.testing.assert_array_equal(out.numpy()[0], [0, 2, 0])
        UP = wp.vec3(1.0, 0.0, 0.0)
        wp.launch(k, 1, [out])
        np.testing.assert_array_equal(out.numpy()[0], [0, 2, 0])  # Warp's rule: captured when the module was built
        wp.get_module(__name__).mark_modified()
        wp.launch(k, 1, [out])
        np.testing.assert_array_equal(out.numpy()[0], [2, 0, 0])  # ... and seen again once it is modified
    finally:
        UP = wp.vec3(0.0, 1.0, 0.0)
        wp.get_module(__name__).mark_modified()


def test_where_selects_whole_vectors():
    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=wp.vec2), b: wp.array(dtype=wp.vec2), flags: wp.array(dtype=wp.int32),
          out: wp.array(dtype=wp.vec2), out2: wp.array(dtype=wp.vec2)):
        i = wp.tid()
        out[i] = wp.where(flags[i], a[i], b[i])
        out2[i] = wp.where(flags[i] == 0, a[i], b[i])

    A, B = np.array([[1, 2], [3, 4]], np.float32), np.array([[5, 6], [7, 8]], np.float32)
    out, out2 = wp.zeros(2, dtype=wp.vec2), wp.zeros(2, dtype=wp.vec2)
    wp.launch(k, 2, [wp.array(A, dtype=wp.vec2), wp.array(B, dtype=wp.vec2),
                     wp.array(np.array([7, 0], np.int32), dtype=wp.int32), out, out2])
    np.testing.assert_array_equal(out.numpy(), [[1, 2], [7, 8]])
    np.testing.assert_array_equal(out2.numpy(), [[5, 6], [3, 4]])


vec5h = wp.types.vector(5, wp.float16)


@wp.kernel
def div_by_scalar_h(s: wp.array(dtype=wp.float16), v: wp.array(dtype=vec5h), o: wp.array(dtype=wp.float16)):
    r = v[0] / s[0]
    o[0] = wp.float16(2.0) * r[1]


def test_vector_by_scalar_division_gradient_rounds_as_warp():
    # Warp's adj_div(vec, s): adj_s -= dot(a, adj_ret) / (s * s), each operation rounded to half here
    rng = np.random.default_rng(123)
    sv, av = rng.standard_normal(1).astype(np.float16), rng.standard_normal((1, 5)).astype(np.float16)
    s, v = wp.array(sv, requires_grad=True), wp.array(av, dtype=vec5h, requires_grad=True)
    o = wp.zeros(1, dtype=wp.float16, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(div_by_scalar_h, 1, [s, v, o])
    tape.backward(grads={o: wp.array(np.ones(1, np.float16), dtype=wp.float16)})
    h = np.float16
    adj_r1 = h(2.0)  # d o / d r[1]
    expected = -(h(av[0, 1] * adj_r1) / h(sv[0] * sv[0]))
    assert s.grad.numpy()[0] == expected
    np.testing.assert_array_equal(v.grad.numpy()[0], [0, h(adj_r1 / sv[0]), 0, 0, 0])


CAPTURED_VEC = wp.vec3(1.0, 2.0, 3.0)


def test_unknown_attributes_in_warps_words():
    # recorded from warp-lang 1.19: an AttributeError naming the attribute, the expression and its type
    @wp.kernel(enable_backward=False)
    def captured(out: wp.array(dtype=float)):
        out[0] = CAPTURED_VEC.foo

    @wp.kernel(enable_backward=False)
    def of_array(out: wp.array(dtype=float)):
        out[0] = out.foo

    @wp.kernel(enable_backward=False)
    def of_matrix(out: wp.array(dtype=float)):
        m = wp.mat22()
        out[0] = m.x

    for kernel, words in [(captured, "`foo` is not an attribute of 'CAPTURED_VEC' (vec3f)"),
                          (of_array, "`foo` is not an attribute of 'out' (array(ndim=1, dtype=float32))"),
                          (of_matrix, "`x` is not an attribute of 'm' (mat22f)")]:
        with pytest.raises(AttributeError) as info:
            wp.launch(kernel, 1, [wp.zeros(1, dtype=float)])
        assert words in str(info.value) and "test_vec.py" in str(info.value)
