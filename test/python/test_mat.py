"""Matrices (row-major, as in Warp): constructors, element and row access, products with `*` and `@`,
and the matrix builtins, against numpy."""

import numpy as np
import pytest

import mlwarp as wp

rng = np.random.default_rng(11)


def mats(n, r, c=None):
    return rng.uniform(-2.0, 2.0, size=(n, r, c or r)).astype(np.float32)


def test_matrix_types_and_python_scope():
    assert wp.mat(3, wp.float32) is wp.mat33 is wp.mat33f and wp.mat((2, 3), float).__name__ == "mat23f"
    assert wp.types.type_size_in_bytes(wp.mat44d) == 128 and wp.types.type_size_in_bytes(wp.spatial_matrix) == 144
    m = wp.mat22(1.0, 2.0, 3.0, 4.0)
    assert m[0, 1] == 2.0 and m[1] == wp.vec2(3.0, 4.0)
    assert m @ wp.vec2(1.0, 1.0) == wp.vec2(3.0, 7.0) and wp.vec2(1.0, 1.0) @ m == wp.vec2(4.0, 6.0)
    np.testing.assert_array_equal(wp.identity(3, dtype=wp.float64).numpy(), np.eye(3))


def test_products_and_elements():
    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=wp.mat33), b: wp.array(dtype=wp.mat33), v: wp.array(dtype=wp.vec3),
          mm: wp.array(dtype=wp.mat33), mv: wp.array(dtype=wp.vec3), vm: wp.array(dtype=wp.vec3),
          at: wp.array(dtype=wp.mat33), ms: wp.array(dtype=wp.mat33), el: wp.array(dtype=float, ndim=2)):
        i = wp.tid()
        m = a[i]
        mm[i] = m @ b[i]
        mv[i] = m * v[i]
        vm[i] = v[i] @ m
        at[i] = m * b[i] + 2.0 * m - m / 2.0
        x = m
        x[0, 1] = 100.0
        x[2] = wp.vec3(7.0, 8.0, 9.0)
        x[1][2] = -5.0
        ms[i] = x
        el[i, 0] = m[1, 2]
        el[i, 1] = m[2][0]
        j = i % 3
        el[i, 2] = m[j, 2 - j]
        row = m[j]
        el[i, 3] = row[0]

    n = 5
    A, B = mats(n, 3), mats(n, 3)
    Vv = rng.uniform(-1, 1, size=(n, 3)).astype(np.float32)
    outs = [wp.zeros(n, dtype=t) for t in (wp.mat33, wp.vec3, wp.vec3, wp.mat33, wp.mat33)]
    el = wp.zeros((n, 4), dtype=float)
    wp.launch(k, n, [wp.array(A, dtype=wp.mat33), wp.array(B, dtype=wp.mat33), wp.array(Vv, dtype=wp.vec3),
                     *outs, el])
    mm, mv, vm, at, ms = (o.numpy() for o in outs)
    np.testing.assert_allclose(mm, A @ B, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mv, np.einsum("nij,nj->ni", A, Vv), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(vm, np.einsum("ni,nij->nj", Vv, A), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(at, A @ B + 2 * A - A / 2, rtol=1e-5, atol=1e-6)
    X = A.copy()
    X[:, 0, 1] = 100.0
    X[:, 2] = [7.0, 8.0, 9.0]
    X[:, 1, 2] = -5.0
    np.testing.assert_array_equal(ms, X)
    idx = np.arange(n) % 3
    np.testing.assert_array_equal(el.numpy(), np.stack([A[:, 1, 2], A[:, 2, 0], A[np.arange(n), idx, 2 - idx],
                                                        A[np.arange(n), idx, 0]], 1))


def test_matrix_builtins_against_numpy():
    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=wp.mat33), a2: wp.array(dtype=wp.mat22), a4: wp.array(dtype=wp.mat44),
          v: wp.array(dtype=wp.vec3), m33: wp.array(dtype=wp.mat33, ndim=2), s: wp.array(dtype=float, ndim=2),
          inv2: wp.array(dtype=wp.mat22), inv4: wp.array(dtype=wp.mat44), dg: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        m = a[i]
        m33[i, 0] = wp.transpose(m)
        m33[i, 1] = wp.inverse(m)
        m33[i, 2] = wp.diag(v[i])
        m33[i, 3] = wp.skew(v[i])
        m33[i, 4] = wp.identity(n=3, dtype=float) * 2.0
        m33[i, 5] = wp.matrix_from_rows(v[i], v[i] * 2.0, v[i] * 3.0)
        m33[i, 6] = wp.matrix_from_cols(v[i], v[i] * 2.0, v[i] * 3.0)
        m33[i, 7] = wp.inverse(wp.mat33(1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 0.0, 1.0, 0.0))  # singular: zero
        s[i, 0] = wp.determinant(m)
        s[i, 1] = wp.trace(m)
        s[i, 2] = wp.ddot(m, a[(i + 1) % 4])
        s[i, 3] = wp.determinant(a2[i])
        s[i, 4] = wp.determinant(a4[i])
        inv2[i] = wp.inverse(a2[i])
        inv4[i] = wp.inverse(a4[i])
        dg[i] = wp.get_diag(m)

    n = 4
    A, A2, A4 = mats(n, 3), mats(n, 2), mats(n, 4)
    Vv = rng.uniform(-1, 1, size=(n, 3)).astype(np.float32)
    m33, s = wp.zeros((n, 8), dtype=wp.mat33), wp.zeros((n, 5), dtype=float)
    inv2, inv4, dg = wp.zeros(n, dtype=wp.mat22), wp.zeros(n, dtype=wp.mat44), wp.zeros(n, dtype=wp.vec3)
    wp.launch(k, n, [wp.array(A, dtype=wp.mat33), wp.array(A2, dtype=wp.mat22), wp.array(A4, dtype=wp.mat44),
                     wp.array(Vv, dtype=wp.vec3), m33, s, inv2, inv4, dg])
    M = m33.numpy()
    np.testing.assert_array_equal(M[:, 0], A.transpose(0, 2, 1))
    np.testing.assert_allclose(M[:, 1], np.linalg.inv(A), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(M[:, 2], np.stack([np.diag(x) for x in Vv]))
    np.testing.assert_allclose(np.einsum("nij,nj->ni", M[:, 3], Vv[::-1]), np.cross(Vv, Vv[::-1]), atol=1e-6)
    np.testing.assert_array_equal(M[:, 4], np.broadcast_to(2 * np.eye(3), (n, 3, 3)))
    rows = np.stack([Vv, Vv * 2, Vv * 3], 1)
    np.testing.assert_array_equal(M[:, 5], rows)
    np.testing.assert_array_equal(M[:, 6], rows.transpose(0, 2, 1))
    np.testing.assert_array_equal(M[:, 7], 0.0)
    S = s.numpy()
    np.testing.assert_allclose(S[:, 0], np.linalg.det(A), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(S[:, 1], np.trace(A, axis1=1, axis2=2), rtol=1e-6)
    np.testing.assert_allclose(S[:, 2], (A * A[(np.arange(n) + 1) % 4]).sum((1, 2)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(S[:, 3], np.linalg.det(A2), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(S[:, 4], np.linalg.det(A4), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(inv2.numpy(), np.linalg.inv(A2), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(inv4.numpy(), np.linalg.inv(A4), rtol=1e-3, atol=1e-3)
    np.testing.assert_array_equal(dg.numpy(), np.diagonal(A, axis1=1, axis2=2))


def test_rectangular_and_double_matrices():
    M23 = wp.mat((2, 3), wp.float64)

    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=M23), v: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.vec2d),
          t: wp.array(dtype=wp.mat((3, 2), wp.float64))):
        i = wp.tid()
        out[i] = a[i] * v[i]
        t[i] = wp.transpose(a[i])

    A = rng.uniform(-1, 1, size=(3, 2, 3))
    Vv = rng.uniform(-1, 1, size=(3, 3))
    out, t = wp.zeros(3, dtype=wp.vec2d), wp.zeros(3, dtype=wp.mat((3, 2), wp.float64))
    wp.launch(k, 3, [wp.array(A, dtype=M23), wp.array(Vv, dtype=wp.vec3d), out, t])
    np.testing.assert_allclose(out.numpy(), np.einsum("nij,nj->ni", A, Vv), rtol=1e-12)
    np.testing.assert_array_equal(t.numpy(), A.transpose(0, 2, 1))


def test_matrix_errors():
    @wp.kernel(enable_backward=False)
    def bad_shape(a: wp.array(dtype=wp.mat33), v: wp.array(dtype=wp.vec2)):
        v[0] = a[0] * v[0]

    with pytest.raises(wp.CompileTypeError, match=r"Couldn't find function overload for 'mul' that matched inputs "
                                                  r"with types: \[mat33f, vec2f\]"):
        wp.launch(bad_shape, 1, [wp.zeros(1, dtype=wp.mat33), wp.zeros(1, dtype=wp.vec2)])

    @wp.kernel(enable_backward=False)
    def from_vectors(a: wp.array(dtype=wp.mat22)):
        a[0] = wp.mat22(wp.vec2(1.0, 2.0), wp.vec2(3.0, 4.0))

    with pytest.raises(wp.CompileTypeError, match=r"use `wp.matrix_from_rows\(\)` or `wp.matrix_from_cols\(\)`"):
        wp.launch(from_vectors, 1, [wp.zeros(1, dtype=wp.mat22)])


def _det4_warp_rounding(m):
    """Warp's 4x4 determinant with its C++ roundings, in numpy: 2x2 determinants of columns 2, 3 in float32
    (kept as doubles), cofactors in double rounded to float32, the final sum in float32."""
    f, d = np.float32, np.float64
    x = m.astype(f)

    def y(a, b):
        return d(x[a, 2] * x[b, 3] - x[b, 2] * x[a, 3])

    y01, y02, y03, y12, y13, y23 = y(0, 1), y(0, 2), y(0, 3), y(1, 2), y(1, 3), y(2, 3)
    c = [d(x[i, 1]) for i in range(4)]
    z30 = f(c[1] * y02 - c[2] * y01 - c[0] * y12)
    z20 = f(c[0] * y13 - c[1] * y03 + c[3] * y01)
    z10 = f(c[2] * y03 - c[3] * y02 - c[0] * y23)
    z00 = f(c[1] * y23 - c[2] * y13 + c[3] * y12)
    return f(f(f(x[3, 0] * z30 + x[2, 0] * z20) + x[1, 0] * z10) + x[0, 0] * z00)


@wp.kernel
def det4(m: wp.array(dtype=wp.mat44), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.determinant(m[i])


def test_determinant_4x4_rounds_as_warp():
    a = np.random.default_rng(11).standard_normal((200, 4, 4)).astype(np.float32)
    out = wp.zeros(200)
    wp.launch(det4, 200, [wp.array(a, dtype=wp.mat44), out])
    np.testing.assert_array_equal(out.numpy(), [_det4_warp_rounding(m) for m in a])
    np.testing.assert_allclose(out.numpy(), np.linalg.det(a.astype(np.float64)), atol=1e-5)


def test_matrix_from_rows_and_cols_in_python_scope():
    m = wp.matrix_from_rows(wp.vec3(1.0, 2.0, 3.0), wp.vec3(4.0, 5.0, 6.0))
    assert type(m) is wp.types.matrix((2, 3), wp.float32)
    np.testing.assert_array_equal([[m[i, j] for j in range(3)] for i in range(2)], [[1, 2, 3], [4, 5, 6]])
    m = wp.matrix_from_cols(wp.vec2d(1.0, 2.0), wp.vec2d(3.0, 4.0), wp.vec2d(5.0, 6.0))
    assert type(m) is wp.types.matrix((2, 3), wp.float64)
    np.testing.assert_array_equal([[m[i, j] for j in range(3)] for i in range(2)], [[1, 3, 5], [2, 4, 6]])


MAT22UI = wp.types.matrix(shape=(2, 2), dtype=wp.uint32)


@wp.kernel
def integer_matrix_bits(a: wp.array(dtype=MAT22UI), b: wp.array(dtype=MAT22UI), out: wp.array(dtype=MAT22UI)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    out[4 * i + 0] = x & y
    out[4 * i + 1] = x | y
    out[4 * i + 2] = (x << MAT22UI(1, 2, 3, 4)) ^ y
    out[4 * i + 3] = ~(x >> MAT22UI(1, 1, 31, 0))


def test_bitwise_operators_of_unsigned_integer_matrices():
    rng = np.random.default_rng(0)
    a, b = (rng.integers(0, 2 ** 32 - 1, (3, 2, 2), dtype=np.uint32, endpoint=True) for _ in range(2))
    out = wp.zeros(12, dtype=MAT22UI)
    wp.launch(integer_matrix_bits, 3, inputs=[wp.array(a, dtype=MAT22UI), wp.array(b, dtype=MAT22UI), out])
    o = out.numpy().reshape(3, 4, 2, 2)
    shifts, right = np.array([[1, 2], [3, 4]], np.uint32), np.array([[1, 1], [31, 0]], np.uint32)
    np.testing.assert_array_equal(o[:, 0], a & b)
    np.testing.assert_array_equal(o[:, 1], a | b)
    np.testing.assert_array_equal(o[:, 2], (a << shifts) ^ b)
    np.testing.assert_array_equal(o[:, 3], ~(a >> right))  # logical shifts: the type is unsigned
