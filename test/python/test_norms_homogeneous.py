"""Warp's vector norms (norm_l1, norm_l2, norm_huber, norm_pseudo_huber, smooth_normalize: @wp.func in
Warp's warp.math) and transform_point/transform_vector of a 4x4 matrix, against numpy forms of Warp's
formulas; gradients against closed forms."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp

VECS = np.array([[0.1, -0.2, 0.3], [1.0, 2.0, -2.0], [0.0, 0.0, 0.0], [-3.0, 0.5, 0.25]], np.float32)


def _huber(x, delta):
    a = x @ x
    return 0.5 * a if a <= delta * delta else delta * (np.sqrt(a) - 0.5 * delta)


def _pseudo_huber(x, delta):
    return delta * np.sqrt(1.0 + (x @ x) / (delta * delta))


@wp.kernel
def norms(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float, ndim=2), sn: wp.array(dtype=wp.vec3, ndim=2)):
    i = wp.tid()
    x = v[i]
    out[i, 0] = wp.norm_l1(x)
    out[i, 1] = wp.norm_l2(x)
    out[i, 2] = wp.norm_huber(x)
    out[i, 3] = wp.norm_huber(x, 2.0)
    out[i, 4] = wp.norm_pseudo_huber(x)
    out[i, 5] = wp.norm_pseudo_huber(x, 0.5)
    sn[i, 0] = wp.smooth_normalize(x)
    sn[i, 1] = wp.smooth_normalize(x, 3.0)


def test_norms_match_warps_formulas():
    n = len(VECS)
    out, sn = wp.zeros((n, 6), dtype=float), wp.zeros((n, 2), dtype=wp.vec3)
    wp.launch(norms, n, inputs=[wp.array(VECS, dtype=wp.vec3), out, sn])
    for i, x in enumerate(VECS.astype(np.float64)):
        expected = [np.abs(x).sum(), np.linalg.norm(x), _huber(x, 1.0), _huber(x, 2.0), _pseudo_huber(x, 1.0),
                    _pseudo_huber(x, 0.5)]
        np.testing.assert_allclose(out.numpy()[i], expected, rtol=2e-7, atol=1e-7)
        np.testing.assert_allclose(sn.numpy()[i], [x / _pseudo_huber(x, 1.0), x / _pseudo_huber(x, 3.0)], rtol=2e-7)


def test_norm_gradients():
    @wp.kernel
    def k(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
        i = wp.tid()
        x = v[i]
        out[i] = (wp.norm_l1(x) + 10.0 * wp.norm_huber(x) + 100.0 * wp.norm_pseudo_huber(x, 0.5)
                  + 1000.0 * wp.smooth_normalize(x)[1])

    n = len(VECS)
    v = wp.array(VECS, dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k, n, inputs=[v, out])
    tape.backward(grads={out: wp.ones(n, dtype=float)})
    for i, x in enumerate(VECS.astype(np.float64)):
        a = x @ x
        d_l1 = np.where(x < 0, -1.0, 1.0)  # Warp: abs'(0) = 1
        d_huber = x if a <= 1.0 else x / np.sqrt(a)
        p = _pseudo_huber(x, 0.5)
        d_pseudo = x / (0.25 * p) * 0.25  # d (delta sqrt(1 + a/delta^2)) = x / p
        h = _pseudo_huber(x, 1.0)
        d_smooth = np.eye(3)[1] / h - x[1] * x / h ** 3  # d (x1 / h), dh = x / h
        expected = d_l1 + 10 * d_huber + 100 * d_pseudo + 1000 * d_smooth
        np.testing.assert_allclose(v.grad.numpy()[i], expected, rtol=1e-5, atol=1e-5)


def test_norms_in_python_scope():
    x = wp.vec3(1.0, -2.0, 3.0)
    assert wp.norm_l1(x) == 6.0
    assert wp.norm_huber(x) == pytest.approx(np.sqrt(14.0) - 0.5, rel=1e-6)
    assert wp.norm_pseudo_huber(x, 2.0) == pytest.approx(2.0 * np.sqrt(1.0 + 14.0 / 4.0), rel=1e-6)


RNG = np.random.default_rng(0)
MATS = RNG.normal(size=(3, 4, 4)).astype(np.float32)
POINTS = RNG.normal(size=(3, 3)).astype(np.float32)


def _homogeneous_kernel(tmp_path, name, dtype):
    from grad_util import kernel_from_source

    m, v = ("mat44", "vec3") if dtype == "float32" else ("mat44d", "vec3d")
    return kernel_from_source(tmp_path, (
        "import mlwarp as wp\n\n@wp.kernel\n"
        f"def k(m: wp.array(dtype=wp.{m}), x: wp.array(dtype=wp.{v}), y: wp.array(dtype=wp.{v})):\n"
        f"    i = wp.tid()\n    y[i] = wp.{name}(m[i], x[i])\n")), getattr(wp, m), getattr(wp, v)


# On AVX-512 hosts LLVM's X86 shuffle combiner (combineX86ShufflesRecursively) asserts on the float32
# adjoints: the compile process dies, and the driver rebuilds the kernel without AVX-512
# (compiler/contained.py, driver.compile_cpu), so these run everywhere.
@pytest.mark.filterwarnings("ignore:kernel 'k' was built without AVX-512")
@pytest.mark.parametrize("name, w, dtype", [("transform_point", 1.0, "float32"), ("transform_point", 1.0, "float64"),
                                            ("transform_vector", 0.0, "float32"), ("transform_vector", 0.0, "float64")])
def test_transform_point_and_vector_of_a_4x4_matrix(tmp_path, name, w, dtype):
    k, mat, vec = _homogeneous_kernel(tmp_path, name, dtype)
    m = wp.array(MATS, dtype=mat, requires_grad=True)
    x = wp.array(POINTS, dtype=vec, requires_grad=True)
    y = wp.zeros(3, dtype=vec, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k, 3, inputs=[m, x, y])
    seed = RNG.normal(size=(3, 3))
    tape.backward(grads={y: wp.array(seed, dtype=vec)})
    x4 = np.concatenate([POINTS, np.full((3, 1), w, np.float32)], 1).astype(np.float64)
    m64 = MATS.astype(np.float64)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y.numpy(), np.einsum("nij,nj->ni", m64, x4)[:, :3], **tol)
    # y = (M x4)[:3]: dy/dx = M[:3, :3], dy/dM[:3, :] = outer(seed, x4), nothing to M's last row
    seed = seed.astype(np.float32).astype(np.float64) if dtype == "float32" else seed
    np.testing.assert_allclose(x.grad.numpy(), np.einsum("nij,ni->nj", m64[:, :3, :3], seed), **tol)
    expected_m = np.zeros_like(m64)
    expected_m[:, :3, :] = np.einsum("ni,nj->nij", seed, x4)
    np.testing.assert_allclose(m.grad.numpy(), expected_m, **tol)


def test_transform_vector_of_a_4x4_matrix_float32_forward_and_python_scope(tmp_path):
    k, mat, vec = _homogeneous_kernel(tmp_path, "transform_vector", "float32")
    y = wp.zeros(3, dtype=vec)
    wp.launch(k, 3, inputs=[wp.array(MATS, dtype=mat), wp.array(POINTS, dtype=vec), y])
    np.testing.assert_allclose(y.numpy(), np.einsum("nij,nj->ni", MATS[:, :3, :3].astype(np.float64), POINTS),
                               rtol=1e-5, atol=1e-6)
    for name, w in (("transform_point", 1.0), ("transform_vector", 0.0)):
        r = getattr(wp, name)(wp.mat44(*MATS[0].reshape(-1).tolist()), wp.vec3(*POINTS[0].tolist()))
        np.testing.assert_allclose(np.array(r), (MATS[0].astype(np.float64) @ np.append(POINTS[0], w))[:3], rtol=1e-6)


def test_transform_point_of_a_3x3_matrix_is_refused():
    with pytest.raises(TypeError, match="Couldn't find a function 'transform_point' compatible with the arguments "
                                        "'mat33f, vec3f'"):
        wp.transform_point(wp.mat33(), wp.vec3())
