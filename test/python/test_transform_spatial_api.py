"""The transform API (keyword constructors, Warp's constructor errors, indexing and slicing, the matrix
helpers for every float type, Python-scope products), wp.spatial_adjoint, wp.sample_cdf and random
functions on state expressions, the Euler/twist quaternion helpers and erfinv/erfcinv. References are numpy,
closed forms, finite differences, or values recorded from warp-lang 1.19.0 (CPU), marked where used."""

import math
import re

import numpy as np
import pytest

import mlwarp as wp

FLOATS = [(wp.float16, np.float16, 2e-2), (wp.float32, np.float32, 1e-5), (wp.float64, np.float64, 1e-12)]


def quat_matrix(q):
    """The rotation matrix of the unit quaternion q = (x, y, z, w)."""
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


# -- constructors in kernels ----------------------------------------------------------------------------------
@wp.kernel
def _constructors(out: wp.array(dtype=wp.transform), outd: wp.array(dtype=wp.transformd),
                  outh: wp.array(dtype=wp.transformh)):
    out[0] = wp.transform(p=wp.vec3(1.0, 2.0, 3.0), q=wp.quat(0.0, 0.6, 0.0, 0.8))
    out[1] = wp.transformf(p=wp.vec3(1.0, 2.0, 3.0))  # q: the identity
    out[2] = wp.transform(wp.vec3(4.0, 5.0, 6.0), q=wp.quat(0.6, 0.0, 0.0, 0.8))
    out[3] = wp.transform(1.5)  # fill
    out[4] = wp.transform(wp.vec3(7.0, 8.0, 9.0))  # p alone
    out[5] = wp.types.transformation(p=wp.vec3(1.0, 1.0, 1.0))
    out[6] = wp.transform(out[0])  # copy
    outd[0] = wp.transformd(wp.float64(2.5))
    outd[1] = wp.types.transformation(p=wp.vec3d(1.0, 2.0, 3.0), dtype=wp.float64)
    outh[0] = wp.transformh(wp.float16(3.5))
    outh[1] = wp.transformh(p=wp.vec3h(1.0, 2.0, 3.0))


def test_transform_constructors_in_kernels():
    out = wp.zeros(7, dtype=wp.transform)
    outd = wp.zeros(2, dtype=wp.transformd)
    outh = wp.zeros(2, dtype=wp.transformh)
    wp.launch(_constructors, 1, outputs=[out, outd, outh])
    ident = [0.0, 0.0, 0.0, 1.0]
    np.testing.assert_allclose(out.numpy(), [[1, 2, 3, 0, 0.6, 0, 0.8], [1, 2, 3] + ident, [4, 5, 6, 0.6, 0, 0, 0.8],
                                             [1.5] * 7, [7, 8, 9] + ident, [1, 1, 1] + ident,
                                             [1, 2, 3, 0, 0.6, 0, 0.8]], rtol=1e-6)
    np.testing.assert_array_equal(outd.numpy(), [[2.5] * 7, [1, 2, 3] + ident])
    np.testing.assert_array_equal(outh.numpy(), [[3.5] * 7, [1, 2, 3] + ident])


def _raises_exactly(kernel, pattern):
    """Launching `kernel` raises a RuntimeError whose message (without the source-line note, which pytest's
    `match` would read too) matches `pattern`, as Warp's tests check with assertRaisesRegex."""
    with pytest.raises(RuntimeError) as info:
        wp.launch(kernel, 1)
    assert re.search(pattern, str(info.value)), str(info.value)


def test_transform_arity_error_two():
    @wp.kernel(module="unique")
    def k():
        wp.transform(1.0, 2.0)

    _raises_exactly(k, r"incompatible number of values given \(2\) when constructing a "
                                           r"transform; expected 0, 1, or 7$")


def test_transform_arity_error_three():
    @wp.kernel(module="unique")
    def k():
        wp.transform(1.0, 2.0, 3.0)

    _raises_exactly(k, r"incompatible number of values given \(3\) when constructing a "
                                           r"transform; expected 0, 1, or 7$")


def test_transform_copy_dtype_mismatch_error():
    @wp.kernel(module="unique")
    def k():
        wp.transformd(wp.transform(1.0))

    _raises_exactly(k, r"copy constructing a transform requires matching source and target "
                                           r"dtypes, got `float32` and `float64`$")


# -- indexing and slicing -------------------------------------------------------------------------------------
@wp.kernel
def _index_slice(out: wp.array(dtype=wp.transform), parts: wp.array(dtype=wp.vec3)):
    t = wp.transform(p=wp.vec3(1.0, 2.0, 3.0), q=wp.quat(4.0, 5.0, 6.0, 7.0))
    parts[0] = t[0:3]
    parts[1] = t[::-3]
    t[0] = 10.0
    t[3] *= 2.0
    t[-1] = 9.0
    t[1:3] = wp.vec2(20.0, 30.0)
    t[::-2] += wp.vec4(1.0, 1.0, 1.0, 1.0)
    out[0] = t


def test_transform_index_and_slice():
    out = wp.zeros(1, dtype=wp.transform)
    parts = wp.zeros(2, dtype=wp.vec3)
    wp.launch(_index_slice, 1, outputs=[out, parts])
    t = np.array([1.0, 2, 3, 4, 5, 6, 7])
    np.testing.assert_array_equal(parts.numpy(), [t[0:3], t[::-3]])
    t[0] = 10
    t[3] *= 2
    t[-1] = 9
    t[1:3] = [20, 30]
    t[::-2] += 1
    np.testing.assert_array_equal(out.numpy()[0], t)


@wp.kernel
def _slice_assign_grad(x: wp.array(dtype=wp.vec2), y: wp.array(dtype=wp.transform)):
    i = wp.tid()
    t = y[i]
    t[:2] = x[i]
    t[1:-4] += x[i][:2] * 3.0
    t[4:2:-1] -= x[i]
    y[i] = t


def test_transform_slice_assign_gradient():
    x = wp.array([[1.0, 2.0]], dtype=wp.vec2, requires_grad=True)
    y = wp.zeros(1, dtype=wp.transform, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_slice_assign_grad, 1, inputs=[x], outputs=[y])
    # t = (x0, x1 + 3 x0, 3 x1, -x1, -x0, 0, 0)
    np.testing.assert_allclose(y.numpy()[0], [1, 5, 6, -2, -1, 0, 0])
    y.grad = wp.ones_like(y)
    tape.backward()
    np.testing.assert_allclose(x.grad.numpy()[0], [1 + 3 - 1, 1 + 3 - 1])


# -- transform <-> matrix, compose / decompose, every float type ----------------------------------------------
def _helpers_kernel(dt):
    m44 = wp.types.matrix((4, 4), dt)
    tr = wp.types.transformation(dt)
    v3 = wp.types.vector(3, dt)
    qt = wp.types.quaternion(dt)

    @wp.kernel(module="unique")
    def k(t: wp.array(dtype=tr), m: wp.array(dtype=m44), om: wp.array(dtype=m44), ot: wp.array(dtype=tr),
          ov: wp.array(dtype=v3), oq: wp.array(dtype=qt)):
        om[0] = wp.transform_to_matrix(t[0])
        ot[0] = wp.transform_from_matrix(m[0])
        p, r, s = wp.transform_decompose(m[0])
        ov[0] = p
        ov[1] = s
        oq[0] = r
        om[1] = wp.transform_compose(p, r, s)

    return k, m44, tr, v3, qt


@pytest.mark.parametrize("dt,npt,tol", FLOATS, ids=["float16", "float32", "float64"])
def test_transform_matrix_helpers(dt, npt, tol):
    k, m44, tr, v3, qt = _helpers_kernel(dt)
    ang = 0.7
    q = np.array([0.0, math.sin(ang / 2), 0.0, math.cos(ang / 2)])
    R = quat_matrix(q)
    scale = np.array([2.0, 3.0, 0.5])
    M = np.eye(4)
    M[:3, :3] = R * scale
    M[:3, 3] = [4, 5, 6]
    t = wp.array([np.concatenate([[1.0, 2.0, 3.0], q])], dtype=tr)
    m = wp.array([M], dtype=m44)
    om, ot = wp.zeros(2, dtype=m44), wp.zeros(1, dtype=tr)
    ov, oq = wp.zeros(2, dtype=v3), wp.zeros(1, dtype=qt)
    wp.launch(k, 1, inputs=[t, m], outputs=[om, ot, ov, oq])
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = [1, 2, 3]
    atol = 10 * tol
    np.testing.assert_allclose(om.numpy()[0].astype(np.float64), T, atol=atol)
    np.testing.assert_allclose(ov.numpy().astype(np.float64), [[4, 5, 6], scale], atol=atol * 6)
    np.testing.assert_allclose(oq.numpy()[0].astype(np.float64), q, atol=atol)
    np.testing.assert_allclose(om.numpy()[1].astype(np.float64), M, atol=atol * 6)
    # transform_from_matrix reads the rotation of the (scaled) upper block's quaternion and the translation
    np.testing.assert_allclose(ot.numpy()[0][:3].astype(np.float64), [4, 5, 6], atol=atol)
    # Python scope, float32
    if dt is wp.float32:
        pm = wp.transform_to_matrix(wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat(*q.tolist())))
        np.testing.assert_allclose(np.array(pm).reshape(4, 4), T, atol=1e-6)


# -- Python-scope products ------------------------------------------------------------------------------------
def test_python_scope_transform_product():
    qa = np.array([0.0, 0.0, math.sin(0.25), math.cos(0.25)])
    qb = np.array([math.sin(0.15), 0.0, 0.0, math.cos(0.15)])
    a = wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat(*qa.tolist()))
    b = wp.transform(wp.vec3(-1.0, 0.5, 2.0), wp.quat(*qb.tolist()))
    # a * b maps x to a(b(x)): matrices multiply
    Ta, Tb = np.eye(4), np.eye(4)
    Ta[:3, :3], Ta[:3, 3] = quat_matrix(qa), [1, 2, 3]
    Tb[:3, :3], Tb[:3, 3] = quat_matrix(qb), [-1, 0.5, 2]
    for c in (a * b, wp.mul(a, b), wp.transform_multiply(a, b)):
        assert type(c) is wp.transformf
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = quat_matrix(np.array(c.q)), np.array(c.p)
        np.testing.assert_allclose(T, Ta @ Tb, atol=1e-6)
    d = wp.transformd(wp.vec3d(1.0, 2.0, 3.0)) * wp.transformd(wp.vec3d(1.0, 2.0, 3.0))
    assert type(d) is wp.transformd
    np.testing.assert_array_equal(np.array(d), [2, 4, 6, 0, 0, 0, 1])
    with pytest.raises(RuntimeError, match="Couldn't find a function 'mul' compatible with the arguments "
                                           "'transformf, transformd'"):
        a * wp.transformd()


# -- spatial_adjoint ------------------------------------------------------------------------------------------
def _adjoint_kernel(dt):
    m3 = wp.types.matrix((3, 3), dt)
    m6 = wp.types.matrix((6, 6), dt)

    @wp.kernel(module="unique")
    def k(R: wp.array(dtype=m3), S: wp.array(dtype=m3), W: wp.array(dtype=m6), out: wp.array(dtype=dt),
          full: wp.array(dtype=m6)):
        m = wp.spatial_adjoint(R[0], S[0])
        full[0] = m
        out[0] = wp.ddot(W[0], m * m)  # something nonlinear to differentiate

    return k, m3, m6


@pytest.mark.parametrize("dt,npt,tol", FLOATS, ids=["float16", "float32", "float64"])
def test_spatial_adjoint_values_and_gradients(dt, npt, tol):
    k, m3, m6 = _adjoint_kernel(dt)
    rng = np.random.default_rng(3)
    r, s, w = rng.normal(size=(3, 3)), rng.normal(size=(3, 3)), rng.normal(size=(6, 6))

    def block(r, s):
        return np.block([[r, np.zeros((3, 3))], [s, r]])

    R = wp.array([r], dtype=m3, requires_grad=True)
    S = wp.array([s], dtype=m3, requires_grad=True)
    W = wp.array([w], dtype=m6)
    out = wp.zeros(1, dtype=dt, requires_grad=True)
    full = wp.zeros(1, dtype=m6)
    tape = wp.Tape()
    with tape:
        wp.launch(k, 1, inputs=[R, S, W], outputs=[out, full])
    tape.backward(loss=out)
    rr, ss = R.numpy()[0].astype(np.float64), S.numpy()[0].astype(np.float64)
    np.testing.assert_array_equal(full.numpy()[0].astype(np.float64), block(rr, ss))

    def f(r, s):
        m = block(r, s)
        return float((w * (m @ m)).sum())

    eps = 1e-6
    for which, grad in ((0, R.grad.numpy()[0]), (1, S.grad.numpy()[0])):
        fd = np.zeros((3, 3))
        for i in range(3):
            for j in range(3):
                d = np.zeros((3, 3))
                d[i, j] = eps
                args_p = (rr + d, ss) if which == 0 else (rr, ss + d)
                args_m = (rr - d, ss) if which == 0 else (rr, ss - d)
                fd[i, j] = (f(*args_p) - f(*args_m)) / (2 * eps)
        np.testing.assert_allclose(grad.astype(np.float64), fd, rtol=max(tol, 1e-7) * 50, atol=max(tol, 1e-7) * 50)
    # Python scope
    py = wp.spatial_adjoint(m3(*rr.ravel().tolist()), m3(*ss.ravel().tolist()))
    assert type(py) is m6
    np.testing.assert_array_equal(py.numpy().reshape(6, 6).astype(np.float64), block(rr, ss))  # (np.array of a half
    # matrix is its bits, as in Warp)


# -- random ---------------------------------------------------------------------------------------------------
@wp.kernel
def _cdf_kernel(seed: int, cdf: wp.array(dtype=float), idx: wp.array(dtype=int), u: wp.array(dtype=float),
                same_state: wp.array(dtype=int)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    copy = state
    u[tid] = wp.randf(copy)
    idx[tid] = wp.sample_cdf(state, cdf)
    same_state[tid] = int(state == copy)  # both advanced by one draw


def test_sample_cdf_is_lower_bound_of_a_uniform():
    cdf = np.arange(1, 101, dtype=np.float32) / 100.0
    cdf = cdf * cdf
    n = 512
    idx, u, same = wp.zeros(n, dtype=int), wp.zeros(n, dtype=float), wp.zeros(n, dtype=int)
    wp.launch(_cdf_kernel, n, inputs=[7, wp.array(cdf, dtype=float)], outputs=[idx, u, same])
    np.testing.assert_array_equal(idx.numpy(), np.searchsorted(cdf, u.numpy(), side="left"))
    assert same.numpy().all()
    # inverse-transform sampling: P(index <= k) = cdf[k]
    hist = np.bincount(idx.numpy(), minlength=100).cumsum() / n
    assert np.abs(hist - cdf).max() < 0.08


@wp.kernel
def _poisson_expr(seed: int, states: wp.array(dtype=wp.uint32), a: wp.array(dtype=wp.uint32),
                  b: wp.array(dtype=wp.uint32)):
    tid = wp.tid()
    s = wp.rand_init(seed, tid)
    a[tid] = wp.poisson(s, 4.5)
    b[tid] = wp.poisson(wp.rand_init(seed, tid), 4.5)  # a state expression: a copy, advanced and dropped
    a[tid + 64] = wp.poisson(states[tid], 30.0)
    b[tid + 64] = wp.poisson(states[tid], 30.0)


def test_random_functions_take_state_expressions():
    states = wp.array(np.arange(64, dtype=np.uint32) * 11 + 3, dtype=wp.uint32)
    a, b = wp.zeros(128, dtype=wp.uint32), wp.zeros(128, dtype=wp.uint32)
    wp.launch(_poisson_expr, 64, inputs=[5, states], outputs=[a, b])
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(states.numpy(), np.arange(64, dtype=np.uint32) * 11 + 3)  # not written back
    assert abs(a.numpy()[:64].mean() - 4.5) < 1.0 and abs(a.numpy()[64:].mean() - 30.0) < 3.0


# -- quaternion helpers ---------------------------------------------------------------------------------------
@wp.kernel
def _euler(q: wp.array(dtype=wp.quat), seq: wp.array(dtype=wp.vec3i), e: wp.array(dtype=wp.vec3),
           back: wp.array(dtype=wp.quat)):
    tid = wp.tid()
    s = seq[tid]
    e[tid] = wp.quat_to_euler(q[0], s[0], s[1], s[2])
    back[tid] = wp.quat_from_euler(e[tid], s[0], s[1], s[2])


def test_quat_to_euler_round_trip_and_warp_values():
    q = np.array([0.1, 0.2, 0.3, 0.9])
    q /= np.linalg.norm(q)
    seqs = [(i, j, k) for i in range(3) for j in range(3) for k in range(3) if i != j and j != k]
    e, back = wp.zeros(len(seqs), dtype=wp.vec3), wp.zeros(len(seqs), dtype=wp.quat)
    wp.launch(_euler, len(seqs), inputs=[wp.array([q], dtype=wp.quat), wp.array(seqs, dtype=wp.vec3i)],
              outputs=[e, back])
    for n, (i, j, k) in enumerate(seqs):
        if i != k:  # Tait-Bryan sequences invert exactly (up to the quaternion's sign)
            b = back.numpy()[n]
            assert min(np.abs(b - q).max(), np.abs(b + q).max()) < 1e-5
    # values recorded from warp-lang 1.19.0 (CPU) for (0,1,2), (2,1,0), (0,1,0), (2,0,2)
    recorded = {(0, 1, 2): [0.33929264545440674, 0.32128846645355225, 0.6989996433258057],
                (2, 1, 0): [0.07047134637832642, 0.45794427394866943, 0.6270706653594971],
                (0, 1, 0): [-0.8721365332603455, 0.7578495144844055, 1.0934510231018066],
                (2, 0, 2): [0.46295464038848877, 1.4288992881774902, -0.7853982448577881]}
    for s, v in recorded.items():
        np.testing.assert_allclose(e.numpy()[seqs.index(s)], v, rtol=1e-6, atol=1e-6)
    # quat_to_euler(q, 0, 1, 2) is quat_to_rpy away from gimbal lock
    np.testing.assert_allclose(np.array(wp.quat_to_rpy(wp.quat(*q.tolist()))), recorded[(0, 1, 2)], rtol=1e-5)
    # Python scope
    np.testing.assert_allclose(np.array(wp.quat_to_euler(wp.quat(*q.tolist()), 0, 1, 2)), recorded[(0, 1, 2)],
                               rtol=1e-5)


def test_quat_twist_closed_forms():
    axis = np.array([0.0, 0.0, 1.0])
    for angle in (0.4, -0.9, 2.5):
        # a twist about z composed with a swing about x: the twist angle is the z rotation's
        qz = np.array([0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2)])
        q = wp.quat(*qz.tolist())
        assert abs(wp.quat_twist_angle_signed(wp.vec3(*axis.tolist()), q) - angle) < 1e-6
        assert abs(wp.quat_twist_angle(wp.vec3(*axis.tolist()), q) - abs(angle)) < 1e-6
        tw = wp.quat_twist(wp.vec3(*axis.tolist()), q)
        np.testing.assert_allclose(np.array(tw), qz, atol=1e-6)


# -- erfinv / erfcinv -----------------------------------------------------------------------------------------
def _erf_kernel(dt):
    @wp.kernel(module="unique")
    def k(x: wp.array(dtype=dt), c: wp.array(dtype=dt), o: wp.array(dtype=dt)):
        i = wp.tid()
        o[i] = wp.erfinv(x[i]) + wp.erfcinv(c[i])

    return k


@pytest.mark.parametrize("dt,npt,tol", FLOATS, ids=["float16", "float32", "float64"])
def test_erfinv_erfcinv_invert_erf(dt, npt, tol):
    xs = np.array([-0.99, -0.5, 0.0, 0.3, 0.9, 0.999])
    cs = np.array([0.01, 0.4, 1.0, 1.3, 1.9, 1.5])
    k = _erf_kernel(dt)
    x = wp.array(xs.astype(npt), dtype=dt, requires_grad=True)
    c = wp.array(cs.astype(npt), dtype=dt, requires_grad=True)
    o = wp.zeros(len(xs), dtype=dt, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k, len(xs), inputs=[x, c], outputs=[o])
    o.grad = wp.ones_like(o)
    tape.backward()
    xr, cr = xs.astype(npt).astype(np.float64), cs.astype(npt).astype(np.float64)
    yi = [_erfinv_ref(v) for v in xr]
    yc = [_erfinv_ref(1.0 - v) for v in cr]
    np.testing.assert_allclose(o.numpy().astype(np.float64), np.add(yi, yc), rtol=tol * 4, atol=tol * 4)
    # d/dx erfinv = sqrt(pi)/2 exp(erfinv(x)^2); d/dx erfcinv = -sqrt(pi)/2 exp(erfcinv(x)^2)
    h = math.sqrt(math.pi) / 2
    np.testing.assert_allclose(x.grad.numpy().astype(np.float64), [h * math.exp(y * y) for y in yi], rtol=tol * 20)
    np.testing.assert_allclose(c.grad.numpy().astype(np.float64), [-h * math.exp(y * y) for y in yc], rtol=tol * 20)


def _erfinv_ref(x):
    """erfinv by bisection on math.erf (float64)."""
    if x in (-1.0, 1.0):
        return math.copysign(math.inf, x)
    lo, hi = -7.0, 7.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if math.erf(mid) < x else (lo, mid)
    return 0.5 * (lo + hi)


def test_erfinv_float32_matches_warp_and_edges():
    @wp.kernel(module="unique")
    def k(x: wp.array(dtype=float), c: wp.array(dtype=float), o: wp.array(dtype=float)):
        i = wp.tid()
        o[i] = wp.erfinv(x[i])
        o[i + 4] = wp.erfcinv(c[i])

    o = wp.zeros(8, dtype=float)
    wp.launch(k, 4, inputs=[wp.array([0.5, -0.9, 0.999, 0.0], dtype=float),
                            wp.array([0.3, 1.7, 0.001, 1.0], dtype=float)], outputs=[o])
    # recorded from warp-lang 1.19.0 (CPU)
    warp_values = [0.4769362807273865, -1.1630871295928955, 2.326756238937378, 0.0, 0.7328690886497498,
                   -0.7328691482543945, 2.326753854751587, 0.0]
    np.testing.assert_array_equal(o.numpy(), np.array(warp_values, dtype=np.float32))
    assert wp.erfinv(1.0) == math.inf and wp.erfinv(-1.0) == -math.inf and math.isnan(wp.erfinv(1.5))
    assert wp.erfcinv(0.0) == math.inf and wp.erfcinv(2.0) == -math.inf
    assert abs(float(wp.erfinv(wp.float64(0.5))) - 0.4769362762044699) < 1e-15
