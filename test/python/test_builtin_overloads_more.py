"""More of Warp 1.19's builtin overloads: atomic_cas/atomic_exch on arrays of vectors, matrices, quaternions and
transforms, atomic_and/or/xor on arrays of integer vectors, wp.printf of composites, where(array, a, b),
wp.array(ptr, shape, dtype) positional, matrix_from_cols/rows of one vector, wp.matrix(*args, shape=, dtype=) and
Warp's refusal of wp.matrix(pos, rot, scale).

The expected values are closed forms / numpy; where they state Warp's behaviour they were recorded by running
warp-lang 1.19.0 on the CPU (the test itself never imports warp-lang). The error texts are Warp 1.19's."""

import re

import numpy as np
import pytest

import mlwarp as wp


def _launch(k, *args):
    wp.launch(k, 1, list(args), device="cpu")


# -- atomic_cas / atomic_exch on composites ------------------------------------------------------------------
@wp.kernel
def _cas_exch(a: wp.array(dtype=wp.vec3), r: wp.array(dtype=wp.vec3), m: wp.array2d(dtype=wp.mat22),
              rm: wp.array(dtype=wp.mat22), q: wp.array(dtype=wp.quat), rq: wp.array(dtype=wp.quat)):
    r[0] = wp.atomic_cas(a, 0, wp.vec3(1.0, 2.0, 3.0), wp.vec3(7.0, 8.0, 9.0))
    r[1] = wp.atomic_cas(a, 1, wp.vec3(1.0, 2.0, 3.0), wp.vec3(7.0, 8.0, 9.0))
    r[2] = wp.atomic_exch(a, 2, wp.vec3(5.0, 5.0, 5.0))
    rm[0] = wp.atomic_cas(m, 0, 1, wp.mat22(1.0, 2.0, 3.0, 4.0), wp.mat22(0.0, 0.0, 0.0, 1.0))
    rm[1] = wp.atomic_exch(m, 1, 0, wp.mat22(9.0, 9.0, 9.0, 9.0))
    rq[0] = wp.atomic_cas(q, 0, wp.quat(0.0, 0.0, 0.0, 1.0), wp.quat(1.0, 0.0, 0.0, 0.0))
    rq[1] = wp.atomic_exch(q, 1, wp.quat(0.5, 0.5, 0.5, 0.5))


def test_atomic_cas_exch_composites_whole_value():
    # Warp 1.19 (CPU, recorded): compare-and-swap compares the whole value (vec_t ==): [1, 2, 4] against
    # compare [1, 2, 3] is left alone although two components match; exch stores the whole value
    a = wp.array([[1, 2, 3], [1, 2, 4], [0, 0, 1]], dtype=wp.vec3)
    r = wp.zeros(3, dtype=wp.vec3)
    m = wp.array(np.zeros((2, 2, 2, 2), np.float32) + np.array([[1, 2], [3, 4]], np.float32), dtype=wp.mat22)
    rm = wp.zeros(2, dtype=wp.mat22)
    q = wp.array([[0, 0, 0, 1], [1, 2, 3, 4]], dtype=wp.quat)
    rq = wp.zeros(2, dtype=wp.quat)
    _launch(_cas_exch, a, r, m, rm, q, rq)
    np.testing.assert_array_equal(a.numpy(), [[7, 8, 9], [1, 2, 4], [5, 5, 5]])
    np.testing.assert_array_equal(r.numpy(), [[1, 2, 3], [1, 2, 4], [0, 0, 1]])
    mm = m.numpy()
    np.testing.assert_array_equal(mm[0, 1], [[0, 0], [0, 1]])
    np.testing.assert_array_equal(mm[1, 0], [[9, 9], [9, 9]])
    np.testing.assert_array_equal(mm[0, 0], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(rm.numpy(), [[[1, 2], [3, 4]]] * 2)
    np.testing.assert_array_equal(q.numpy(), [[1, 0, 0, 0], [0.5, 0.5, 0.5, 0.5]])
    np.testing.assert_array_equal(rq.numpy(), [[0, 0, 0, 1], [1, 2, 3, 4]])


@wp.kernel
def _cas_nd(a3: wp.array3d(dtype=wp.transform), a4: wp.array4d(dtype=wp.vec2d), r: wp.array(dtype=wp.transform),
            r2: wp.array(dtype=wp.vec2d)):
    t = wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat(0.0, 0.0, 0.0, 1.0))
    r[0] = wp.atomic_cas(a3, 0, 1, 0, t, wp.transform(wp.vec3(4.0, 5.0, 6.0), wp.quat(0.0, 1.0, 0.0, 0.0)))
    r[1] = wp.atomic_exch(a3, 0, 0, 0, t)
    r2[0] = wp.atomic_cas(a4, 0, 0, 0, 1, wp.vec2d(0.0, 0.0), wp.vec2d(-1.0, 2.0))
    r2[1] = wp.atomic_exch(a4, 0, 0, 0, 0, wp.vec2d(3.0, 4.0))


def test_atomic_cas_exch_3d_4d_transform_vec2d():
    t0 = np.array([1, 2, 3, 0, 0, 0, 1], np.float32)
    a3 = wp.array(np.tile(t0, (1, 2, 1, 1)), dtype=wp.transform)
    a4 = wp.array(np.ones((1, 1, 1, 2, 2)), dtype=wp.vec2d)
    a4.numpy()  # (ones: the cas at [0,0,0,1] compares (0, 0) with (1, 1) and keeps it)
    r = wp.zeros(2, dtype=wp.transform)
    r2 = wp.zeros(2, dtype=wp.vec2d)
    _launch(_cas_nd, a3, a4, r, r2)
    np.testing.assert_array_equal(a3.numpy()[0, 1, 0], [4, 5, 6, 0, 1, 0, 0])
    np.testing.assert_array_equal(r.numpy(), [t0, t0])
    np.testing.assert_array_equal(a4.numpy()[0, 0, 0], [[3, 4], [1, 1]])
    np.testing.assert_array_equal(r2.numpy(), [[1, 1], [1, 1]])


@wp.kernel
def _bits(ai: wp.array(dtype=wp.vec3i), ri: wp.array(dtype=wp.vec3i), a2: wp.array2d(dtype=wp.vec2ul),
          r2: wp.array(dtype=wp.vec2ul)):
    ri[0] = wp.atomic_and(ai, 0, wp.vec3i(6, 5, 12))
    ri[1] = wp.atomic_or(ai, 1, wp.vec3i(6, 5, 12))
    ri[2] = wp.atomic_xor(ai, 2, wp.vec3i(6, 5, 12))
    r2[0] = wp.atomic_xor(a2, 0, 1, wp.vec2ul(wp.uint64(1) << wp.uint64(40), wp.uint64(3)))


def test_atomic_and_or_xor_integer_vectors():
    # component-wise, the old value returned (Warp's vec.h atomic_and/or/xor; values recorded from warp-lang:
    # [3,3,10] & [6,5,12] = [2,1,8], | = [7,7,14], ^ = [5,6,6])
    ai = wp.array([[3, 3, 10]] * 3, dtype=wp.vec3i)
    ri = wp.zeros(3, dtype=wp.vec3i)
    a2 = wp.array(np.full((1, 2, 2), 5, np.uint64), dtype=wp.vec2ul)
    r2 = wp.zeros(1, dtype=wp.vec2ul)
    _launch(_bits, ai, ri, a2, r2)
    np.testing.assert_array_equal(ai.numpy(), [[2, 1, 8], [7, 7, 14], [5, 6, 6]])
    np.testing.assert_array_equal(ri.numpy(), [[3, 3, 10]] * 3)
    np.testing.assert_array_equal(a2.numpy()[0, 1], [5 ^ (1 << 40), 5 ^ 3])
    np.testing.assert_array_equal(r2.numpy()[0], [5, 5])


def _refused(src_kernel, message):
    with pytest.raises(Exception, match=re.escape(message)):
        _launch(src_kernel, wp.zeros(2, dtype=wp.vec3), wp.zeros(2, dtype=wp.vec3h))


def test_atomic_and_float_vector_refused():
    @wp.kernel(module="unique")
    def k(a: wp.array(dtype=wp.vec3), h: wp.array(dtype=wp.vec3h)):
        wp.atomic_and(a, 0, wp.vec3(1.0, 2.0, 3.0))

    _refused(k, "atomic_and() operations only work on arrays with [u]int32 or [u]int64 as the underlying scalar "
                "types, but got vec3f (with scalar type float32)")


def test_atomic_cas_half_vector_refused():
    @wp.kernel(module="unique")
    def k(a: wp.array(dtype=wp.vec3), h: wp.array(dtype=wp.vec3h)):
        wp.atomic_cas(h, 0, wp.vec3h(), wp.vec3h())

    _refused(k, "atomic_cas() operations only work on arrays with [u]int32, [u]int64, float32, or float64 as the "
                "underlying scalar types, but got vec3h (with scalar type float16)")


def test_atomic_exch_half_vector_refused():
    @wp.kernel(module="unique")
    def k(a: wp.array(dtype=wp.vec3), h: wp.array(dtype=wp.vec3h)):
        wp.atomic_exch(h, 0, wp.vec3h())

    _refused(k, "atomic_exch() operations only work on arrays with [u]int32, [u]int64, float32, or float64 as the "
                "underlying scalar types, but got vec3h (with scalar type float16)")


@wp.kernel
def _exch_grad(a: wp.array(dtype=wp.vec3), x: wp.array(dtype=wp.vec3), y: wp.array(dtype=float)):
    wp.atomic_exch(a, 0, x[0])
    wp.atomic_cas(a, 0, x[0], x[0] * 2.0)
    y[0] = wp.dot(x[0], x[0])


def test_atomic_exch_cas_composite_not_differentiable():
    # Warp: atomic_cas/exch are is_differentiable=False (adj_atomic_exch/cas do nothing): no adjoint flows through
    # them, to the value or to the array; x's gradient is only its direct use
    a = wp.array([[1.0, 2.0, 3.0]], dtype=wp.vec3, requires_grad=True)
    x = wp.array([[0.5, 0.25, 2.0]], dtype=wp.vec3, requires_grad=True)
    y = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_exch_grad, 1, [a, x, y], device="cpu")
    a.grad.fill_(1.0)
    tape.backward(y)
    np.testing.assert_array_equal(a.numpy(), [[1.0, 0.5, 4.0]])
    np.testing.assert_allclose(x.grad.numpy(), [[1.0, 0.5, 4.0]])
    np.testing.assert_array_equal(a.grad.numpy(), [[1.0, 1.0, 1.0]])


# -- printf of composites ------------------------------------------------------------------------------------
@wp.kernel
def _printf_composites():
    v = wp.vec3(1.0, 2.0, 3.0)
    wp.printf("A %f\n", v)
    wp.printf("B %f\n", wp.mat22(1.0, 2.0, 3.0, 4.0))
    wp.printf("C %f\n", wp.quat(0.0, 0.0, 0.0, 1.0))
    wp.printf("D %d\n", wp.vec2i(1, 2))
    wp.printf("E %f %d\n", v, 7)
    wp.printf("F %f\n", wp.transform(v, wp.quat(0.0, 0.0, 0.0, 1.0)))
    wp.printf("G %f\n", wp.vec2d(1.5, 2.0))


def test_printf_composites_as_warp(capfd):
    # Warp passes the struct to the variadic printf (undefined in C; its compiler warns): each 8-byte piece of the
    # packed components is read as one argument. Warp 1.19 on x86-64 CPU printed exactly A-F (recorded): %f of
    # vec3(1, 2, 3) is the double with the bits of floats 1 and 2, which is 2.0000004731...
    wp.launch(_printf_composites, 1, [], device="cpu")
    wp.synchronize()
    out = capfd.readouterr().out
    assert "A 2.000000\nB 2.000000\nC 0.000000\nD 1\nE 2.000000 7\nF 2.000000\nG 1.500000\n" in out


# -- where(array, a, b), wp.array positional ------------------------------------------------------------------
@wp.kernel
def _where_arrays(a: wp.array(dtype=float), e: wp.array(dtype=float), n: wp.array(dtype=wp.vec3),
                  out: wp.array(dtype=float), vo: wp.array(dtype=wp.vec3)):
    out[0] = wp.where(a, 1.0, 2.0)
    out[1] = wp.where(e, 1.0, 2.0)
    vo[0] = wp.where(n, wp.vec3(1.0), wp.vec3(2.0))
    b = wp.array(a.ptr, (3,), float)
    out[2] = b[1]
    c = wp.array(a.ptr, shape=(3,), dtype=wp.float32)
    out[3] = c[2]


def test_where_array_condition_and_positional_array():
    # Warp's where(arr, a, b) (array.h): a when the array's data pointer is non-null; an empty array and None have
    # none (recorded with warp-lang: 1.0, 2.0 and, for None, vec3(2))
    a = wp.array([1.0, 5.0, 7.0], dtype=float)
    e = wp.array(np.zeros(0, np.float32), dtype=float)
    out = wp.zeros(4, dtype=float)
    vo = wp.zeros(1, dtype=wp.vec3)
    _launch(_where_arrays, a, e, None, out, vo)
    np.testing.assert_array_equal(out.numpy(), [1.0, 2.0, 5.0, 7.0])
    np.testing.assert_array_equal(vo.numpy(), [[2.0, 2.0, 2.0]])


def test_array_without_dtype_refused():
    @wp.kernel(module="unique")
    def k(a: wp.array(dtype=wp.vec3), h: wp.array(dtype=wp.vec3h)):
        c = wp.array(a.ptr, (3,))

    _refused(k, "Couldn't find function overload for 'array' that matched inputs with types: [uint64, tuple(int32)]")


# -- matrices ------------------------------------------------------------------------------------------------
M31 = wp.types.matrix((3, 1), float)
M13 = wp.types.matrix((1, 3), float)


@wp.kernel
def _mats(x: wp.array(dtype=wp.vec3), m31: wp.array(dtype=M31), m13: wp.array(dtype=M13),
          m: wp.array(dtype=wp.mat22), y: wp.array(dtype=float)):
    v = x[0]
    c = wp.matrix_from_cols(v)
    r = wp.matrix_from_rows(v)
    m31[0] = c
    m13[0] = r
    m[0] = wp.matrix(1.0, 2.0, 3.0, 4.0, shape=(2, 2), dtype=float)
    m[1] = wp.matrix(5.0, shape=(2, 2), dtype=float)
    y[0] = c[0, 0] * 2.0 + c[1, 0] * 3.0 + r[0, 2] * 4.0


def test_matrix_from_one_vector_and_anonymous_matrix():
    x = wp.array([[1.0, 2.0, 3.0]], dtype=wp.vec3, requires_grad=True)
    m31 = wp.zeros(1, dtype=M31)
    m13 = wp.zeros(1, dtype=M13)
    m = wp.zeros(2, dtype=wp.mat22)
    y = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_mats, 1, [x, m31, m13, m, y], device="cpu")
    tape.backward(y)
    np.testing.assert_array_equal(m31.numpy(), [[[1.0], [2.0], [3.0]]])
    np.testing.assert_array_equal(m13.numpy(), [[[1.0, 2.0, 3.0]]])
    np.testing.assert_array_equal(m.numpy(), [[[1, 2], [3, 4]], [[5, 5], [5, 5]]])
    assert y.numpy()[0] == 2.0 + 6.0 + 12.0
    np.testing.assert_array_equal(x.grad.numpy(), [[2.0, 3.0, 4.0]])


def test_matrix_pos_rot_scale_refused():
    @wp.kernel(module="unique")
    def k(a: wp.array(dtype=wp.vec3), h: wp.array(dtype=wp.vec3h)):
        m = wp.matrix(wp.vec3(1.0, 2.0, 3.0), wp.quat_identity(), wp.vec3(1.0, 1.0, 1.0), dtype=float)

    _refused(k, "the built-in `wp.types.matrix()` to construct a 4x4 matrix from a 3D position, quaternion, and 3D "
                "scale vector has been removed in favor of `wp.transform_compose()`.")


@wp.struct
class WhereState:
    a: float
    b: wp.vec3


@wp.kernel
def where_of_structs(out: wp.array(dtype=WhereState), flags: wp.array(dtype=int), src: wp.array(dtype=float)):
    i = wp.tid()
    x = WhereState()
    x.a = src[i]
    y = WhereState()
    y.a = 2.0 * src[i]
    y.b = wp.vec3(1.0, 2.0, 3.0)
    out[i] = wp.where(flags[i] > 0, x, y)
    z = wp.where(flags[i], y, x)  # an integer condition: nonzero is true
    out[i].a = out[i].a + z.a * 10.0


def test_where_of_struct_values_and_its_gradient():
    # values recorded from warp-lang 1.19.0 for src = 1: [(12, (1, 2, 3)), (21, (0, 0, 0))]; the gradient by hand:
    # flag 0 picks y then x (2 + 10), flag 1 picks x then y (1 + 20)
    src = wp.array([1.0, 1.0], dtype=float, requires_grad=True)
    out = wp.zeros(2, dtype=WhereState, requires_grad=True)
    flags = wp.array([0, 1], dtype=int)
    with wp.Tape() as tape:
        wp.launch(where_of_structs, 2, inputs=[out, flags, src])
    result = out.numpy()
    np.testing.assert_array_equal(result["a"], [12.0, 21.0])
    np.testing.assert_array_equal(result["b"], [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    seed = np.zeros(2, dtype=result.dtype)
    seed["a"] = 1.0
    tape.backward(grads={out: wp.array(seed, dtype=WhereState)})
    np.testing.assert_array_equal(src.grad.numpy(), [12.0, 21.0])


def test_where_of_structs_refuses_mixed_types():
    @wp.kernel(module="unique")
    def mixed(out: wp.array(dtype=float)):
        x = WhereState()
        out[0] = wp.where(True, x, 1.0).a

    with pytest.raises(wp.CompileTypeError, match=r"where\(\) true value type \(WhereState\) must be of the same type "
                                                  r"as the false type \(float32\)"):
        wp.launch(mixed, 1, inputs=[wp.zeros(1)])
