"""Builtins at the edges where Warp 1.19.0 defines the result: scalar where(), atan2 at signed zeros
(folded and at run time), asin/acos clamping and their derivatives at +-1, integer division that never
traps, adjoints of saturated min/max/clamp, and scalar negation as `0 - x`. Expected values are
hand-computed or numpy's."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp

from grad_util import kernel_from_source

INT_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def _backward(kernel, dim, inputs, out, seed=None):
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim, inputs=inputs + [out])
    tape.backward(grads={out: seed if seed is not None else wp.ones(out.shape[0], dtype=out.dtype)})
    return tape


# -- where(cond, a, b) on scalars ------------------------------------------------------------------------
@pytest.mark.parametrize("cond_type", ["bool", "int8", "int32", "int64", "uint16", "uint64"])
@pytest.mark.parametrize("value_type", ["float16", "float32", "float64", "int8", "int32", "uint64"])
def test_where_on_scalars_picks_by_the_condition(tmp_path, cond_type, value_type):
    src = (f"import mlwarp as wp\n\n@wp.kernel\n"
           f"def k(c: wp.array(dtype=wp.{cond_type}), a: wp.array(dtype=wp.{value_type}),\n"
           f"      b: wp.array(dtype=wp.{value_type}), out: wp.array(dtype=wp.{value_type})):\n"
           f"    i = wp.tid()\n    out[i] = wp.where(c[i], a[i], b[i])\n")
    k = kernel_from_source(tmp_path, src)
    conds = np.array([1, 0, 1, 0, 1], dtype=cond_type)
    if cond_type != "bool":
        conds = np.array([1, 0, 2, 0, 100], dtype=cond_type)  # any nonzero value is true
    a = np.array([1, 2, 3, 4, 5], dtype=value_type)
    b = np.array([10, 20, 30, 40, 50], dtype=value_type)
    out = wp.zeros(5, dtype=getattr(wp, value_type))
    wp.launch(k, 5, inputs=[wp.array(conds), wp.array(a), wp.array(b), out])
    np.testing.assert_array_equal(out.numpy(), np.where(conds != 0, a, b))


def test_where_of_a_comparison_and_of_bools():
    @wp.kernel
    def k(x: wp.array(dtype=float), flags: wp.array(dtype=wp.bool), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = wp.where(x[i] > 0.5, 1.0, -1.0) + wp.where(wp.where(x[i] < 0.0, True, flags[i]), 10.0, 0.0)

    x = np.array([0.1, 0.9, -2.0, 0.7], np.float32)
    flags = np.array([True, False, False, False])
    out = wp.zeros(4, dtype=float)
    wp.launch(k, 4, inputs=[wp.array(x), wp.array(flags), out])
    np.testing.assert_array_equal(out.numpy(), np.where(x > 0.5, 1.0, -1.0) + np.where((x < 0) | flags, 10.0, 0.0))


@pytest.mark.parametrize("cond_type", ["int32", "uint16", "bool"])
def test_where_gradient_goes_to_the_chosen_operand_only(tmp_path, cond_type):
    k = kernel_from_source(tmp_path, (
        f"import mlwarp as wp\n\n@wp.kernel\n"
        f"def k(c: wp.array(dtype=wp.{cond_type}), a: wp.array(dtype=float), b: wp.array(dtype=float),\n"
        f"      out: wp.array(dtype=float)):\n"
        f"    i = wp.tid()\n    out[i] = wp.where(c[i], a[i] * a[i], 3.0 * b[i])\n"))
    c = np.array([1, 0, 7, 0], cond_type)
    av, bv = np.array([1.0, 2.0, 3.0, 4.0], np.float32), np.array([5.0, 6.0, 7.0, 8.0], np.float32)
    a, b = wp.array(av, requires_grad=True), wp.array(bv, requires_grad=True)
    out = wp.zeros(4, dtype=float, requires_grad=True)
    _backward(k, 4, [wp.array(c), a, b], out)
    np.testing.assert_array_equal(out.numpy(), np.where(c != 0, av * av, 3 * bv))
    np.testing.assert_array_equal(a.grad.numpy(), np.where(c != 0, 2 * av, 0.0))
    np.testing.assert_array_equal(b.grad.numpy(), np.where(c != 0, 0.0, 3.0))


def test_where_gradient_is_not_nan_on_the_unchosen_side():
    # the unchosen operand's adjoint is infinite (1/x at 0): selected away, not multiplied by 0
    @wp.kernel
    def k(x: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = 1.0 / wp.where(x[i] > 5.0, x[i], 0.0)

    x = wp.array(np.array([1.0, 10.0], np.float32), requires_grad=True)
    out = wp.zeros(2, dtype=float, requires_grad=True)
    _backward(k, 2, [x], out)
    np.testing.assert_array_equal(x.grad.numpy(), np.float32([0.0, -1.0 / 100.0]))


def test_where_tangent():
    @wp.kernel
    def k(c: wp.array(dtype=wp.bool), a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64),
          out: wp.array(dtype=wp.float64)):
        i = wp.tid()
        out[i] = wp.where(c[i], a[i] * a[i], b[i])

    c = np.array([True, False, True])
    av, bv = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    ta, tb = np.array([0.5, 0.25, 2.0]), np.array([1.0, -1.0, 3.0])
    out, dout = wp.zeros(3, dtype=wp.float64), wp.zeros(3, dtype=wp.float64)
    wp.jvp(k, 3, inputs=[wp.array(c), wp.array(av, dtype=wp.float64), wp.array(bv, dtype=wp.float64)],
           outputs=[out], tan_inputs=[None, wp.array(ta, dtype=wp.float64), wp.array(tb, dtype=wp.float64)],
           tan_outputs=[dout])
    np.testing.assert_array_equal(dout.numpy(), np.where(c, 2 * av * ta, tb))


def test_where_in_python_scope():
    assert wp.where(True, 1.5, 2.5) == 1.5
    assert wp.where(0, 1, 2) == 2
    r = wp.where(wp.int8(3), wp.float64(1.0), wp.float64(2.0))
    assert isinstance(r, wp.float64) and r.value == 1.0


def test_where_refuses_mixed_value_types_and_a_float_condition():
    with pytest.raises(TypeError, match=r"^where\(\) true value type \(float32\) must be of the same type as the "
                                        r"false type \(int32\)$"):
        wp.where(True, 1.0, 2)
    with pytest.raises(TypeError, match=r"^where\(cond, a, b\): cond must be a bool or an integer, got float32$"):
        wp.where(0.5, 1.0, 2.0)


# -- atan2 at signed zeros ---------------------------------------------------------------------------------
def test_atan2_at_signed_zeros_folded_and_at_run_time():
    @wp.kernel
    def k(ys: wp.array(dtype=float), xs: wp.array(dtype=float), out: wp.array(dtype=float)):
        out[0] = wp.atan2(0.0, 0.0)
        out[1] = wp.atan2(-0.0, 0.0)
        out[2] = wp.atan2(0.0, -0.0)
        out[3] = wp.atan2(-0.0, -0.0)
        out[4] = wp.atan2(1.0 - 1.0, 2.0 - 2.0)  # zeros that appear only when arith folds
        for j in range(4):
            out[5 + j] = wp.atan2(ys[j], xs[j])

    ys = np.array([0.0, -0.0, 0.0, -0.0], np.float32)
    xs = np.array([0.0, 0.0, -0.0, -0.0], np.float32)
    out = wp.zeros(9, dtype=float)
    wp.launch(k, 1, inputs=[wp.array(ys), wp.array(xs), out])
    expected = np.arctan2(np.concatenate([ys, [0.0], ys]), np.concatenate([xs, [0.0], xs])).astype(np.float32)
    np.testing.assert_array_equal(out.numpy(), expected)  # 0, -0, pi, -pi (C's atan2, Warp's values)
    np.testing.assert_array_equal(np.signbit(out.numpy()), np.signbit(expected))


# -- asin / acos ---------------------------------------------------------------------------------------------
ASIN_POINTS = np.array([2.0, 1.0, -1.0, -3.0, np.nan, 0.5, 1.0000001, -0.25], np.float32)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_asin_acos_clamp_their_argument(tmp_path, dtype):
    k = kernel_from_source(tmp_path, (
        f"import mlwarp as wp\n\n@wp.kernel\n"
        f"def k(x: wp.array(dtype=wp.{dtype}), s: wp.array(dtype=wp.{dtype}), c: wp.array(dtype=wp.{dtype})):\n"
        f"    i = wp.tid()\n    s[i] = wp.asin(x[i])\n    c[i] = wp.acos(x[i])\n"))
    dtype = getattr(wp, dtype)
    n = len(ASIN_POINTS)
    s, c = wp.zeros(n, dtype=dtype), wp.zeros(n, dtype=dtype)
    wp.launch(k, n, inputs=[wp.array(ASIN_POINTS, dtype=dtype), s, c])
    # Warp clamps with fmin/fmax: NaN becomes -1
    clamped = np.clip(np.nan_to_num(ASIN_POINTS.astype(np.float64), nan=-1.0), -1.0, 1.0)
    np.testing.assert_allclose(s.numpy(), np.arcsin(clamped), rtol=1e-6)
    np.testing.assert_allclose(c.numpy(), np.arccos(clamped), rtol=1e-6)
    assert wp.asin(2.0) == pytest.approx(np.pi / 2) and wp.acos(-5.0) == pytest.approx(np.pi)


def test_asin_acos_adjoints_are_zero_at_and_beyond_one():
    @wp.kernel
    def k(x: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = wp.asin(x[i]) + 10.0 * wp.acos(x[i]) + 100.0 * wp.asin(wp.clamp(x[i], -1.0, 1.0))

    n = len(ASIN_POINTS)
    x = wp.array(ASIN_POINTS, requires_grad=True)
    out = wp.zeros(n, dtype=float, requires_grad=True)
    _backward(k, n, [x], out)
    xs = ASIN_POINTS.astype(np.float64)
    inside = np.abs(xs) < 1  # False for NaN
    d = np.where(inside, 1 / np.sqrt(np.where(inside, 1 - xs * xs, 1.0)), 0.0)
    np.testing.assert_allclose(x.grad.numpy(), (1 - 10 + 100) * d, rtol=1e-6)


def test_asin_tangent_is_zero_at_one():
    @wp.kernel
    def k(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
        i = wp.tid()
        out[i] = wp.asin(x[i]) - wp.acos(x[i])

    xs = np.array([1.0, -1.0, 2.0, 0.6])
    out, dout = wp.zeros(4, dtype=wp.float64), wp.zeros(4, dtype=wp.float64)
    wp.jvp(k, 4, inputs=[wp.array(xs, dtype=wp.float64)], outputs=[out],
           tan_inputs=[wp.array(np.ones(4), dtype=wp.float64)], tan_outputs=[dout])
    np.testing.assert_allclose(dout.numpy(), [0.0, 0.0, 0.0, 2 / 0.8])


# -- integer division ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("tname", INT_TYPES)
def test_integer_division_never_traps(tmp_path, tname):
    src = (f"import mlwarp as wp\n\n@wp.kernel\n"
           f"def k(x: wp.array(dtype=wp.{tname}), y: wp.array(dtype=wp.{tname}), q: wp.array(dtype=wp.{tname}),\n"
           f"      f: wp.array(dtype=wp.{tname}), r: wp.array(dtype=wp.{tname})):\n"
           f"    i = wp.tid()\n    q[i] = x[i] / y[i]\n    f[i] = x[i] // y[i]\n    r[i] = x[i] % y[i]\n")
    k = kernel_from_source(tmp_path, src)
    T = getattr(wp, tname)
    info = np.iinfo(tname)
    signed = info.min < 0
    # x / 0 (Warp crashes: we give 0, and x % 0 == x), MIN / -1 (wraps to MIN, remainder 0, as Warp's
    # narrow types), and ordinary quotients (C truncation, floor for //)
    xs = [7, info.min, -7 if signed else 9, 0, info.max]
    ys = [0, -1 if signed else 1, 2, 0, 3]
    if signed:
        q_ref = [0, info.min, -3, 0, info.max // 3]
        f_ref = [0, info.min, -4, 0, info.max // 3]
        r_ref = [7, 0, -1, 0, info.max % 3]
    else:
        q_ref = f_ref = [0, 0, 4, 0, info.max // 3]
        r_ref = [7, 0, 1, 0, info.max % 3]
    outs = [wp.zeros(5, dtype=T) for _ in range(3)]
    wp.launch(k, 5, inputs=[wp.array(np.array(xs, dtype=tname)), wp.array(np.array(ys, dtype=tname))] + outs)
    for out, ref in zip(outs, (q_ref, f_ref, r_ref)):
        np.testing.assert_array_equal(out.numpy(), np.array(ref, dtype=tname))


def test_integer_vector_division_never_traps():
    @wp.kernel
    def k(a: wp.array(dtype=wp.vec3i), b: wp.array(dtype=wp.vec3i), q: wp.array(dtype=wp.vec3i),
          r: wp.array(dtype=wp.vec3i)):
        i = wp.tid()
        q[i] = a[i] / b[i][0]
        r[i] = a[i] % b[i]

    a = np.array([[7, -2147483648, 9]], np.int32)
    b = np.array([[0, -1, 2]], np.int32)
    q, r = wp.zeros(1, dtype=wp.vec3i), wp.zeros(1, dtype=wp.vec3i)
    wp.launch(k, 1, inputs=[wp.array(a, dtype=wp.vec3i), wp.array(b, dtype=wp.vec3i), q, r])
    np.testing.assert_array_equal(q.numpy(), [[0, 0, 0]])  # every component divided by b[0] == 0
    np.testing.assert_array_equal(r.numpy(), [[7, 0, 1]])


def test_integer_division_in_python_scope():
    assert wp.div(7, 0) == 0 and wp.mod(7, 0) == 7 and wp.floordiv(-7, 0) == 0
    assert wp.div(wp.int8(-128), wp.int8(-1)) == wp.int8(-128)
    assert wp.mod(wp.int8(-128), wp.int8(-1)) == wp.int8(0)


# -- saturated min / max / clamp adjoints ----------------------------------------------------------------------
def test_saturated_min_max_clamp_adjoints_are_routed_not_masked():
    # 1/u has an infinite adjoint where u == 0; the saturated side of min/max/clamp gets it, x gets 0
    @wp.kernel
    def k(x: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = 1.0 / wp.clamp(x[i], 0.0, 1.0) + 1.0 / wp.min(x[i], 0.0) + 1.0 / wp.max(x[i], 0.0)

    x = wp.array(np.array([-1.0, 2.0, 0.5], np.float32), requires_grad=True)
    out = wp.zeros(3, dtype=float, requires_grad=True)
    _backward(k, 3, [x], out)
    # x=-1: only min picks x (-1/x^2 = -1); x=2: only max (-1/4); x=0.5: clamp and max (-4 - 4)
    np.testing.assert_array_equal(x.grad.numpy(), [-1.0, -0.25, -8.0])


def test_min_max_clamp_adjoints_with_nan_operands():
    # Warp's adj_min/adj_max: a NaN operand loses (the other one gets the adjoint), ties go to b
    @wp.kernel
    def k(x: wp.array(dtype=float), z: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = wp.min(x[i], z[i]) + 10.0 * wp.max(x[i], z[i]) + 100.0 * wp.clamp(x[i], z[i], 2.0)

    nan = np.nan
    xv = np.array([nan, 1.0, 3.0, 1.0, nan], np.float32)
    zv = np.array([1.0, nan, 1.0, 1.0, nan], np.float32)
    x, z = wp.array(xv, requires_grad=True), wp.array(zv, requires_grad=True)
    out = wp.zeros(5, dtype=float, requires_grad=True)
    _backward(k, 5, [x, z], out)
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 111.0, 10.0, 100.0, 0.0])
    np.testing.assert_array_equal(z.grad.numpy(), [111.0, 0.0, 1.0, 11.0, 11.0])


def test_saturated_clamp_tangent_is_zero_not_nan():
    @wp.kernel
    def k(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
        i = wp.tid()
        out[i] = wp.clamp(x[i], wp.float64(0.0), wp.float64(1.0))

    out, dout = wp.zeros(3, dtype=wp.float64), wp.zeros(3, dtype=wp.float64)
    wp.jvp(k, 3, inputs=[wp.array(np.array([-1.0, 0.5, 2.0]), dtype=wp.float64)], outputs=[out],
           tan_inputs=[wp.array(np.array([np.inf, 2.0, np.inf]), dtype=wp.float64)], tan_outputs=[dout])
    np.testing.assert_array_equal(dout.numpy(), [0.0, 2.0, 0.0])


# -- negation -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_scalar_negation_of_zero_is_positive_zero(tmp_path, dtype):
    k = kernel_from_source(tmp_path, (
        f"import mlwarp as wp\n\n@wp.kernel\n"
        f"def k(x: wp.array(dtype=wp.{dtype}), out: wp.array(dtype=wp.{dtype})):\n"
        f"    a = x[0]\n"
        f"    out[0] = -a\n"
        f"    out[1] = wp.{dtype}(1.0) / (-a)\n"
        f"    out[2] = -(-a)\n"
        f"    out[3] = wp.{dtype}(-0.0)  # a negative literal stays -0.0 (as in Warp)\n"))
    dtype = getattr(wp, dtype)
    out = wp.zeros(4, dtype=dtype)
    wp.launch(k, 1, inputs=[wp.zeros(1, dtype=dtype), out])
    np.testing.assert_array_equal(np.signbit(out.numpy()), [False, False, False, True])
    assert out.numpy()[1] == np.inf


def test_composite_negation_keeps_the_sign_of_zero():
    # Warp negates vectors, matrices and quaternions component by component (-x), unlike scalars (0 - x)
    @wp.kernel
    def k(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22)):
        a = x[0]
        v[0] = -wp.vec3(a, a, a)
        m[0] = -wp.mat22(a, a, a, a)

    v, m = wp.zeros(1, dtype=wp.vec3), wp.zeros(1, dtype=wp.mat22)
    wp.launch(k, 1, inputs=[wp.zeros(1, dtype=float), v, m])
    assert np.signbit(v.numpy()).all() and np.signbit(m.numpy()).all()


def test_negation_in_python_scope():
    assert not np.signbit(wp.neg(0.0))
    assert wp.neg(wp.int8(-128)) == wp.int8(-128)


def test_length_and_normalize_adjoints_at_the_zero_vector_are_zero_not_nan():
    # 1/length(v) and 1/normalize(v)[0] send an infinite adjoint into length/normalize at v = 0, where
    # Warp's adj_length/adj_normalize add nothing
    @wp.kernel
    def k(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = 1.0 / wp.length(v[i]) + 1.0 / wp.normalize(v[i])[0]

    vv = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 2.0]], np.float32)
    v = wp.array(vv, dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(2, dtype=float, requires_grad=True)
    _backward(k, 2, [v], out)
    x = vv[1].astype(np.float64)
    n = np.linalg.norm(x)
    # d(1/|x|) = -x/|x|^3; d(|x|/x0) = x/(|x| x0) - |x|/x0^2 e0
    expected = -x / n ** 3 + x / (n * x[0]) - n / x[0] ** 2 * np.eye(3)[0]
    np.testing.assert_array_equal(v.grad.numpy()[0], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(v.grad.numpy()[1], expected, rtol=1e-6)


def test_where_on_vectors_refuses_a_float_condition_as_warp():
    with pytest.raises(TypeError, match=r"^Couldn't find a function 'where' compatible with the arguments "
                                        r"'float, vec3f, vec3f'$"):
        wp.where(0.5, wp.vec3(1.0), wp.vec3(2.0))
    assert wp.where(wp.uint8(1), wp.vec3(1.0), wp.vec3(2.0)) == wp.vec3(1.0)
