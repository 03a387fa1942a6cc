"""`wp.grad(f)(args...)` in kernels, @wp.func and @wp.func_grad bodies (Warp 1.19's grad()): the adjoint of each input
of f with the result's adjoint seeded to ones, checked against closed forms; Warp's errors; wp.grad at Python scope."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import mlwarp as wp

XS = np.array([0.5, 1.0, 2.0, 3.0], dtype=np.float32)


def launch(kernel, n, *arrays):
    wp.launch(kernel, dim=n, inputs=list(arrays))
    return [a.numpy() for a in arrays]


@wp.func
def square(x: float):
    return x * x


@wp.func
def twice_square(x: float):
    return 2.0 * square(x)  # a function calling another: d/dx = 4x


@wp.func
def uses_grad(x: float):
    return x + wp.grad(square)(x)  # a @wp.func calling wp.grad: x + 2x


@wp.kernel(enable_backward=False)
def scalar_kernel(x: wp.array(dtype=float), d_square: wp.array(dtype=float), d_twice: wp.array(dtype=float),
                  via_local: wp.array(dtype=float), in_func: wp.array(dtype=float)):
    i = wp.tid()
    d_square[i] = wp.grad(square)(x[i])
    d_twice[i] = wp.grad(twice_square)(x[i])
    g = wp.grad(square)
    via_local[i] = g(x[i])
    in_func[i] = uses_grad(x[i])


def test_scalar_functions_closed_forms():
    n = len(XS)
    x = wp.array(XS, dtype=float)
    outs = [wp.zeros(n, dtype=float) for _ in range(4)]
    _, d_square, d_twice, via_local, in_func = launch(scalar_kernel, n, x, *outs)
    np.testing.assert_allclose(d_square, 2 * XS, rtol=1e-6)
    np.testing.assert_allclose(d_twice, 4 * XS, rtol=1e-6)
    np.testing.assert_allclose(via_local, 2 * XS, rtol=1e-6)
    np.testing.assert_allclose(in_func, 3 * XS, rtol=1e-6)


@wp.kernel(enable_backward=False)
def atan2_kernel(y: wp.array(dtype=float), x: wp.array(dtype=float), dy: wp.array(dtype=float),
                 dx: wp.array(dtype=float), dsin: wp.array(dtype=float)):
    i = wp.tid()
    b, a = wp.grad(wp.atan2)(y[i], x[i])
    dy[i] = b
    dx[i] = a
    dsin[i] = wp.grad(wp.sin)(x[i])


def test_builtins_partials():
    n = len(XS)
    ys = np.array([1.0, -2.0, 0.25, 3.0], dtype=np.float32)
    y, x = wp.array(ys, dtype=float), wp.array(XS, dtype=float)
    outs = [wp.zeros(n, dtype=float) for _ in range(3)]
    _, _, dy, dx, dsin = launch(atan2_kernel, n, y, x, *outs)
    r2 = XS ** 2 + ys ** 2
    np.testing.assert_allclose(dy, XS / r2, rtol=1e-5)
    np.testing.assert_allclose(dx, -ys / r2, rtol=1e-5)
    np.testing.assert_allclose(dsin, np.cos(XS), rtol=1e-5)


@wp.func
def cross_of(a: wp.vec3, b: wp.vec3):
    return wp.cross(a, b)


@wp.func
def weighted(v: wp.vec3, n: int):
    return wp.length(v) * float(n)


@wp.kernel(enable_backward=False)
def vector_kernel(out: wp.array(dtype=wp.vec3), ints: wp.array(dtype=int)):
    a, b = wp.grad(cross_of)(wp.vec3(1.0, 2.0, 3.0), wp.vec3(4.0, 5.0, 6.0))  # seeded with (1, 1, 1)
    out[0] = a
    out[1] = b
    out[2] = wp.grad(wp.length)(wp.vec3(3.0, 4.0, 0.0))
    p, q = wp.grad(wp.dot)(wp.vec3(1.0, 2.0, 3.0), wp.vec3(4.0, 5.0, 6.0))
    out[3] = p
    out[4] = q
    v, k = wp.grad(weighted)(wp.vec3(3.0, 4.0, 0.0), 2)
    out[5] = v
    ints[0] = k


def test_vector_functions():
    out, ints = wp.zeros(6, dtype=wp.vec3), wp.zeros(1, dtype=int)
    launch(vector_kernel, 1, out, ints)
    o = out.numpy()
    a, b, ones = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0]), np.ones(3)
    np.testing.assert_allclose(o[0], np.cross(b, ones), rtol=1e-6)  # d(a x b).1 / da = b x 1
    np.testing.assert_allclose(o[1], np.cross(ones, a), rtol=1e-6)
    np.testing.assert_allclose(o[2], [0.6, 0.8, 0.0], rtol=1e-6)  # v / |v|
    np.testing.assert_allclose(o[3], b, rtol=1e-6)
    np.testing.assert_allclose(o[4], a, rtol=1e-6)
    np.testing.assert_allclose(o[5], [1.2, 1.6, 0.0], rtol=1e-6)  # n v / |v|
    assert ints.numpy()[0] == 0  # an int input's adjoint: zero


@wp.func
def cube(x: Any):  # a generic: specialised per argument type
    return x * x * x


@wp.func
def poly(x: float):
    return x * x


@wp.func
def poly(x: wp.float64):  # noqa: F811  (an overload: d/dx x^3)
    return x * x * x


@wp.kernel(enable_backward=False)
def generic_kernel(x32: wp.array(dtype=float), x64: wp.array(dtype=wp.float64), out32: wp.array(dtype=float),
                   out64: wp.array(dtype=wp.float64), ov32: wp.array(dtype=float), ov64: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out32[i] = wp.grad(cube)(x32[i])
    out64[i] = wp.grad(cube)(x64[i])
    ov32[i] = wp.grad(poly)(x32[i])
    ov64[i] = wp.grad(poly)(x64[i])


def test_generic_and_overloaded_functions():
    n = len(XS)
    x32, x64 = wp.array(XS, dtype=float), wp.array(XS.astype(np.float64), dtype=wp.float64)
    outs = [wp.zeros(n, dtype=t) for t in (float, wp.float64, float, wp.float64)]
    _, _, out32, out64, ov32, ov64 = launch(generic_kernel, n, x32, x64, *outs)
    np.testing.assert_allclose(out32, 3 * XS ** 2, rtol=1e-6)
    np.testing.assert_allclose(out64, 3 * XS.astype(np.float64) ** 2, rtol=1e-12)
    assert out64.dtype == np.float64
    np.testing.assert_allclose(ov32, 2 * XS, rtol=1e-6)
    np.testing.assert_allclose(ov64, 3 * XS.astype(np.float64) ** 2, rtol=1e-12)


@wp.func
def clipped_sqrt(x: float):
    return wp.sqrt(x)


@wp.func_grad(clipped_sqrt)
def adj_clipped_sqrt(x: float, adj_ret: float):
    if x > 0.0:
        wp.adjoint[x] += wp.grad(wp.sqrt)(x) * adj_ret  # wp.grad inside a custom adjoint


@wp.kernel
def clipped_kernel(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = clipped_sqrt(x[i])


def test_in_func_grad():
    """As Warp's test_grad_in_func_grad: the custom adjoint computes sqrt's derivative with wp.grad."""
    x = wp.array(XS, dtype=float, requires_grad=True)
    y = wp.zeros_like(x, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(clipped_kernel, len(XS), inputs=[x, y])
    tape.backward(grads={y: wp.ones(len(XS), dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), 0.5 / np.sqrt(XS), rtol=1e-5)


@wp.func
def offset(x: float):
    return x * x + 1.0


@wp.func_grad(offset)
def adj_offset(x: float, adj_ret: float):
    wp.adjoint[x] += 10.0 * adj_ret  # deliberately not 2x: wp.grad must use it


@wp.kernel(enable_backward=False)
def custom_kernel(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.grad(offset)(x[i])


def test_uses_custom_adjoint():
    x, out = wp.array(XS, dtype=float), wp.zeros(len(XS), dtype=float)
    launch(custom_kernel, len(XS), x, out)
    np.testing.assert_allclose(out.numpy(), np.full(len(XS), 10.0), rtol=1e-6)


@wp.kernel
def backward_kernel(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.grad(square)(x[i]) * x[i]  # (2x) x: the backward pass sees 2x as a constant


def test_forward_only_in_backward_kernel():
    x = wp.array(XS, dtype=float, requires_grad=True)
    y = wp.zeros_like(x, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with wp.Tape() as tape:
            wp.launch(backward_kernel, len(XS), inputs=[x, y])
    np.testing.assert_allclose(y.numpy(), 2 * XS * XS, rtol=1e-6)
    tape.backward(grads={y: wp.ones(len(XS), dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), 2 * XS, rtol=1e-6)  # not 4x: no adjoint through the grad call
    messages = [str(w.message) for w in caught]
    if messages:  # (only a build that compiled the kernel warns; a cached one says nothing, as Warp's)
        assert any('grad() call for function "square" is used in a kernel with enable_backward=True. The gradient '
                   'call does NOT participate in automatic differentiation' in m for m in messages)


def test_python_scope():
    g = wp.grad(square)
    assert isinstance(g, wp.GradWrapper)
    assert repr(g) == "GradWrapper(square)"
    assert repr(wp.grad(wp.sin)) == "GradWrapper(sin)"
    with pytest.raises(RuntimeError, match=r"^grad\(\) wrapper can only be called inside Warp kernels and "
                                           r"functions\.$"):
        g(1.0)
    with pytest.raises(TypeError, match=r"^grad\(\) expects a Warp function, got <class 'function'>$"):
        wp.grad(lambda v: v)


# -- Warp's errors, one test each -------------------------------------------------------------------------------
def build(kernel):
    wp.launch(kernel, dim=1, inputs=[wp.zeros(1, dtype=float)])


def test_error_two_arguments():
    @wp.kernel(enable_backward=False, module="unique")
    def k(out: wp.array(dtype=float)):
        out[0] = wp.grad(square, square)(1.0)

    with pytest.raises(wp.WarpCodegenError, match=r"grad\(\) expects exactly one function argument"):
        build(k)


def test_error_not_a_function():
    @wp.kernel(enable_backward=False, module="unique")
    def k(out: wp.array(dtype=float)):
        v = 1.0
        out[0] = wp.grad(v)(1.0)

    with pytest.raises(wp.WarpCodegenError, match=r"grad\(\) expects a Warp function, got Var"):
        build(k)


def test_error_non_differentiable():
    @wp.kernel(enable_backward=False, module="unique")
    def k(out: wp.array(dtype=float)):
        out[0] = wp.grad(wp.floor)(1.5)

    with pytest.raises(wp.WarpCodegenError, match=r"Cannot compute gradient of non-differentiable function 'floor'"):
        build(k)


@wp.func
def returns_nothing(x: float):
    y = x * 2.0  # noqa: F841


def test_error_void_function():
    @wp.kernel(enable_backward=False, module="unique")
    def k(out: wp.array(dtype=float)):
        out[0] = wp.grad(returns_nothing)(1.0)

    with pytest.raises(wp.WarpCodegenError, match=r"Cannot compute gradient of void function 'returns_nothing'"):
        build(k)


REASSIGN = r"Cannot reassign local 'g'.*wp.grad"


def test_error_rebind_to_value():
    @wp.kernel(enable_backward=False, module="unique")
    def k(out: wp.array(dtype=float)):
        g = wp.grad(square)
        g = 1.0
        out[0] = g

    with pytest.raises(wp.WarpCodegenError, match=REASSIGN):
        build(k)


def test_error_rebind_through_tuple():
    @wp.kernel(enable_backward=False, module="unique")
    def k(out: wp.array(dtype=float)):
        g = wp.grad(square)
        g, x = (1.0, 2.0)
        out[0] = x

    with pytest.raises(wp.WarpCodegenError, match=REASSIGN):
        build(k)


def test_error_rebind_through_augassign():
    @wp.kernel(enable_backward=False, module="unique")
    def k(out: wp.array(dtype=float)):
        g = wp.grad(square)
        g += 1.0
        out[0] = 1.0

    with pytest.raises(wp.WarpCodegenError, match=REASSIGN):
        build(k)


def test_rebind_to_another_grad_is_allowed():
    @wp.kernel(enable_backward=False, module="unique")
    def k(out: wp.array(dtype=float)):
        g = wp.grad(square)
        g = wp.grad(twice_square)  # Warp rebinds a wp.grad local to another wp.grad
        out[0] = g(3.0)

    out = wp.zeros(1, dtype=float)
    wp.launch(k, dim=1, inputs=[out])
    assert out.numpy()[0] == pytest.approx(12.0)
