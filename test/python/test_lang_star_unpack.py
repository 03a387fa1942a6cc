"""Star-unpacking in call arguments, as Warp: a vector, quaternion, transform or matrix (its rows), whole or
sliced with constant bounds, or a 1-d array sliced with constant bounds, passes its components as separate
arguments to builtins, constructors and @wp.funcs; gradients flow through; Warp's errors for the rest."""

import inspect

import numpy as np
import pytest

import mlwarp as wp

VEC = wp.constant(wp.vec3(7.0, 8.0, 9.0))
TWO = wp.constant(2)


@wp.func
def weigh(a: float, b: float, c: float):
    return a + 10.0 * b + 100.0 * c


@wp.func
def swap(a: float, b: float):
    return wp.vec2(b, a)


@wp.func
def sum_diff(a: float, b: float):
    return a + b, a - b


@wp.func
def weigh_tail(v: wp.vec4):
    return weigh(*v[1:])  # in a @wp.func, on a parameter, in a return


# A vector's components as one number, (1, 2, 3) -> 123: one output checks both their order and their values
@wp.func
def digits2(v: wp.vec2):
    return v[0] * 10.0 + v[1]


@wp.func
def digits3(v: wp.vec3):
    return v[0] * 100.0 + v[1] * 10.0 + v[2]


@wp.func
def digits4(v: wp.vec4):
    return v[0] * 1000.0 + v[1] * 100.0 + v[2] * 10.0 + v[3]


@wp.kernel
def composite_unpacks(flag: int, out: wp.array(dtype=float)):
    v3 = wp.vec3(1.0, 2.0, 3.0)
    v4 = wp.vec4(4.0, 5.0, 6.0, 7.0)
    q = wp.quat(1.0, 2.0, 3.0, 4.0)
    m = wp.mat33(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)
    out[0] = digits4(wp.vec4(*v3, 9.0))
    out[1] = digits4(wp.vec4(8.0, *wp.vec2(1.0, 2.0), 3.0))
    out[2] = digits4(wp.vec4(*v3[:2], *v3[1:]))
    qq = wp.quat(*v4)  # a vector into a quaternion and back
    out[3] = digits4(wp.vec4(*qq))
    out[4] = digits3(wp.vec3(*q[:3]))
    out[5] = wp.max(*v3[1:])
    out[6] = weigh(*v4[1:3], 9.0)
    out[7] = digits2(wp.vec2(*m[2][:2]))  # part of a matrix row
    out[8] = digits3(wp.vec3(*v3[::-1]))
    out[9] = digits2(wp.vec2(*v4[-3:-1]))  # negative bounds count from the end
    out[10] = digits4(wp.vec4(*v4[-100:100]))  # out-of-range bounds clamp, as Python's
    out[11] = digits2(wp.vec2(*v4[3:0:-2]))
    out[12] = digits2(wp.vec2(*VEC[:TWO]))  # a captured constant, a wp.constant bound
    stop = 2  # a local bound to a literal is a constant bound, as in Warp
    out[13] = digits2(wp.vec2(*v3[:stop]))
    r = wp.matrix_from_rows(*m[1:])  # a matrix unpacks to its rows
    out[14] = digits3(r[1]) + r[0, 0] * 1000.0
    c = wp.matrix_from_cols(*m)
    out[15] = c[0, 1] * 10.0 + c[1, 0]
    tf = wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat(0.0, 0.0, 0.0, 1.0))
    t7 = wp.vector(*tf)  # p then q
    out[16] = t7[0] + t7[2] * 10.0 + t7[6] * 100.0
    out[17] = weigh_tail(v4)
    a, b = sum_diff(*v3[1:])
    out[18] = a * 10.0 + b
    out[19] = weigh(*swap(*v3[:2]), 3.0)  # nested: one call's result unpacked into another
    acc = float(0.0)
    for i in range(3):  # in a loop, beside an argument that branches
        w = wp.vec3(*v3[:2], 5.0 if flag > i else 6.0)
        acc += w[2]
    out[20] = acc
    out[21] = digits2(wp.vec2(*m[1, :2]))  # a tuple index is no slice: the vector it selects unpacks whole


def test_composite_unpacks():
    out = wp.zeros(22)
    wp.launch(composite_unpacks, 1, [1, out])
    expected = [1239, 8123, 1223, 4567, 123, 3, 5 + 60 + 900, 78, 321, 56, 4567, 75, 78, 12,
                4000 + 789, 42, 1 + 30 + 100, 5 + 60 + 700, 5 * 10 - 1, 2 + 10 + 300, 5 + 6 + 6, 45]
    np.testing.assert_array_equal(out.numpy(), expected)


@wp.kernel
def array_unpacks(a: wp.array(dtype=int), f: wp.array(dtype=float), ia: wp.indexedarray(dtype=float),
                  out: wp.array(dtype=float)):
    out[0] = digits3(wp.vec3(wp.vec3i(*a[:3])))
    out[1] = digits2(wp.vec2(wp.vec2i(*a[0:4:2])))
    out[2] = float(wp.max(*a[4:6]))
    out[3] = weigh(*f[1:3], 5.0)
    out[4] = digits2(wp.vec2(*ia[0:2]))
    out[5] = digits3(wp.vec3(wp.vec3i(*a[2:9:3])))  # a[2], a[5], a[8]


def test_array_unpacks():
    a = wp.array(np.arange(1, 10, dtype=np.int32))
    f = wp.array(np.array([0.5, 1.5, 2.5, 3.5], dtype=np.float32))
    base = wp.array(np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32))
    ia = wp.indexedarray(base, [wp.array(np.array([3, 1], dtype=np.int32))])
    out = wp.zeros(6)
    wp.launch(array_unpacks, 1, [a, f, ia, out])
    np.testing.assert_array_equal(out.numpy(), [123, 13, 6, 1.5 + 25 + 500, 42, 369])


@wp.func
def blend(a: float, b: float, c: float):
    return a * b + wp.sin(c)


@wp.kernel
def unpack_grads(x: wp.array(dtype=wp.vec3), y: wp.array(dtype=float), m: wp.array(dtype=wp.mat22),
                 out: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    q = wp.quat(*v, y[0])
    n = wp.vec4(*q[::-1])  # (y0, v2, v1, v0)
    rr = wp.matrix_from_cols(*m[i])  # the transpose
    out[i] = (wp.dot(n, wp.vec4(1.0, 2.0, 3.0, 4.0)) + 2.0 * blend(*v[1:], y[1]) + wp.length(wp.vec3(*y[1:4]))
              + 3.0 * rr[0, 1] + 5.0 * rr[1, 0])


def unpack_forward(x, y, m):
    """unpack_grads in numpy (float64), written out component by component."""
    n_dot = y[0] + 2 * x[:, 2] + 3 * x[:, 1] + 4 * x[:, 0]
    return (n_dot + 2 * (x[:, 1] * x[:, 2] + np.sin(y[1])) + np.sqrt(np.sum(y[1:4] ** 2))
            + 3 * m[:, 1, 0] + 5 * m[:, 0, 1])


def central_differences(f, xs, h=1e-6):
    grads = []
    for j, x in enumerate(xs):
        g = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            plus = [a.copy() for a in xs]
            minus = [a.copy() for a in xs]
            plus[j][idx] += h
            minus[j][idx] -= h
            g[idx] = np.sum(f(*plus) - f(*minus)) / (2 * h)
        grads.append(g)
    return grads


def test_gradients_flow_through_unpacked_arguments():
    rng = np.random.default_rng(7)
    xs = rng.uniform(-1, 1, (3, 3)).astype(np.float32)
    ys = rng.uniform(0.5, 1.5, 4).astype(np.float32)
    ms = rng.uniform(-1, 1, (3, 2, 2)).astype(np.float32)
    x = wp.array(xs, dtype=wp.vec3, requires_grad=True)
    y = wp.array(ys, dtype=float, requires_grad=True)
    m = wp.array(ms, dtype=wp.mat22, requires_grad=True)
    out = wp.zeros(3, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(unpack_grads, 3, inputs=[x, y, m], outputs=[out])
    out.grad = wp.ones_like(out)
    tape.backward()
    xs64, ys64, ms64 = (a.astype(np.float64) for a in (xs, ys, ms))
    np.testing.assert_allclose(out.numpy(), unpack_forward(xs64, ys64, ms64), rtol=1e-5, atol=1e-5)
    gx, gy, gm = central_differences(unpack_forward, [xs64, ys64, ms64])
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(y.grad.numpy(), gy, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(m.grad.numpy(), gm, rtol=1e-4, atol=1e-4)


# -- what Warp refuses: its exception class and text, at the user's line ------------------------------------
def k_nonconstant_vector_bound(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    v = wp.vec3(1.0, 2.0, 3.0)
    w = wp.vec2(*v[:n])


def k_nonconstant_array_bound(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    w = wp.vec3i(*a[:n])


def k_float_bound(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    v = wp.vec3(1.0, 2.0, 3.0)
    w = wp.vec2(*v[:2.0])


def k_zero_step(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    v = wp.vec3(1.0, 2.0, 3.0)
    w = wp.vec2(*v[::0])


def k_empty(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    v = wp.vec3(1.0, 2.0, 3.0)
    x = wp.max(*v[2:1])


def k_whole_array(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    x = wp.max(*a)


def k_2d_array(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    x = wp.max(*a2[0:2])


def k_reversed_open_array(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    x = wp.max(*a[::-1])


def k_negative_array_bound(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    w = wp.vec3i(*a[:-3])


def k_negative_array_step(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    w = wp.vec3i(*a[5:2:-1])


def k_missing_array_stop(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    w = wp.vec3i(*a[0:])


def k_scalar(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    x = 42
    w = wp.vec3i(*x)


def k_sliced_scalar(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    x = 42.0
    w = wp.vec2(*x[0:2])


def k_tuple(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    t = (1.0, 2.0)
    w = wp.vec2(*t)


def k_outside_a_call(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    v = wp.vec2(1.0, 2.0)
    t = (*v, 3.0)


@wp.func
def set_five(x: wp.ref[int]):
    x = 5


def k_reference_to_component(a: wp.array(dtype=int), a2: wp.array2d(dtype=int), n: int):
    set_five(*a[0:1])


ONLY = "vectors, quaternions, and matrices"


@pytest.mark.parametrize("func, cls, message, line_text", [
    (k_nonconstant_vector_bound, wp.CompileValueError, "Slice component must be a compile-time constant.", "*v[:n]"),
    (k_nonconstant_array_bound, wp.CompileValueError, "Slice component must be a compile-time constant.", "*a[:n]"),
    (k_float_bound, wp.CompileTypeError, "Slice component must be an integer.", "*v[:2.0]"),
    (k_zero_step, wp.CompileValueError, "Slice step cannot be zero.", "*v[::0]"),
    (k_empty, wp.CompileError, "Starred expression results in empty sequence.", "*v[2:1]"),
    (k_whole_array, wp.CompileTypeError, "Starred expressions apply to arrays only if they are sliced with bounds "
                                         "known at compile-time.", "*a)"),
    (k_2d_array, wp.CompileValueError, "Starred expressions with slices are only supported for 1D arrays, got 2D "
                                       "array.", "*a2"),
    (k_reversed_open_array, wp.CompileValueError, "Reverse slices require explicit start and stop bounds when the "
                                                  "sequence length is not known at compile time (e.g. slicing an "
                                                  "array).", "*a[::-1]"),
    (k_negative_array_bound, wp.CompileValueError, "Starred expression slice bounds cannot be negative for arrays.",
     "*a[:-3]"),
    (k_negative_array_step, wp.CompileValueError, "Starred expression slice step cannot be negative for arrays.",
     "*a[5:2:-1]"),
    (k_missing_array_stop, wp.CompileValueError, "Starred expression on arrays requires explicit upper bound "
                                                 "(e.g., *array[0:3], not *array[0:]).", "*a[0:]"),
    (k_scalar, wp.CompileTypeError, f"Starred expressions are only supported for arrays (with slice), {ONLY}. "
                                    f"Got int32.", "*x"),
    (k_sliced_scalar, wp.CompileTypeError, f"Starred expressions with slices are only supported for arrays, {ONLY}. "
                                           f"Got float32.", "*x[0:2]"),
    (k_tuple, wp.CompileTypeError, f"Starred expressions are only supported for arrays (with slice), {ONLY}. "
                                   f"Got tuple(float32, float32).", "*t"),
    (k_reference_to_component, wp.CompileError, "wp.ref[int] parameter requires an addressable expression (local "
                                                "variable, array element, struct field, or wp.ref[T] parameter)",
     "*a[0:1]"),
    (k_outside_a_call, wp.UnsupportedSyntaxError, "Construct `ast.Starred` not supported in kernels.", "(*v"),
], ids=lambda v: v.__name__ if callable(v) and not isinstance(v, type) else None)
def test_refusals_use_warps_class_and_text(func, cls, message, line_text):
    lines, first = inspect.getsourcelines(func)
    line = first + next(k for k, text in enumerate(lines) if line_text in text)
    with pytest.raises(cls) as info:
        wp.launch(wp.kernel(func), 1, [wp.zeros(10, dtype=int), wp.zeros((3, 3), dtype=int), 3])
    assert type(info.value) is cls
    assert str(info.value).splitlines()[0] == f"{__file__}:{line}: in '{func.__name__}': {message}"
