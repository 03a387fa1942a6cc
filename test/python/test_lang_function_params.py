"""`wp.Function` parameters: a @wp.func taking another @wp.func or a builtin as an argument (Warp 1.19),
specialized per target; defaults, keywords, local bindings, generic neighbours, Python scope, the cache key
following the target, gradients through the target, and the rejected cases with their messages."""

import typing

import numpy as np
import pytest

import mlwarp as wp


@wp.func
def fp_double(x: float):
    return x * 2.0


@wp.func
def fp_triple(x: float):
    return x * 3.0


@wp.func
def fp_cube(x: float):
    return x * x * x


@wp.func
def fp_apply(g: wp.Function, x: float):
    return g(x)


@wp.func
def fp_apply_any(g: wp.Function, x: typing.Any):
    return g(x)


@wp.func
def fp_apply_default(g: wp.Function = fp_triple, x: float = 5.0):
    return g(x)


@wp.func
def fp_apply2(g: wp.Function, x: float, y: float):
    return g(x, y)


@wp.func
def fp_apply_bound(g: wp.Function, x: float):
    h = g  # a local holding a function
    return h(x) + 1.0


@wp.func
def fp_twice(g: wp.Function, x: float):
    return fp_apply(g, fp_apply(g, x))  # passed on to another function


@wp.func
def fp_write(g: wp.Function, dst: wp.ref[float], x: float):
    dst = g(x)


@wp.kernel
def fp_kernel(out: wp.array(dtype=float)):
    out[0] = fp_apply(fp_double, 3.0)
    out[1] = fp_apply(fp_triple, 3.0)
    out[2] = fp_apply(wp.sqrt, 16.0)
    out[3] = fp_apply2(wp.min, 7.0, 4.0)
    out[4] = fp_apply_default()
    out[5] = fp_apply(g=fp_cube, x=2.0)
    out[6] = fp_apply_any(fp_double, 10.0)
    out[7] = fp_apply_bound(fp_triple, 2.0)
    f = fp_cube
    out[8] = fp_apply(f, 3.0)
    out[9] = fp_twice(fp_triple, 2.0)
    fp_write(fp_double, out[10], 21.0)


def test_kernel_targets():
    out = wp.zeros(11, dtype=float)
    wp.launch(fp_kernel, dim=1, outputs=[out])
    np.testing.assert_allclose(out.numpy(), [6.0, 9.0, 4.0, 4.0, 15.0, 8.0, 20.0, 7.0, 27.0, 18.0, 42.0])


def test_python_scope():
    assert fp_apply(fp_double, 3.0) == 6.0
    assert fp_apply(g=fp_cube, x=2.0) == 8.0
    assert fp_apply_default() == 15.0
    assert fp_apply(wp.sqrt, 9.0) == pytest.approx(3.0)
    with pytest.raises(RuntimeError, match=r"^Error calling function 'fp_apply', no overload found"):
        fp_apply(lambda x: x, 3.0)


@wp.kernel
def fp_grad_kernel(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = fp_apply(fp_cube, x[i]) + fp_apply(wp.sin, x[i])


def test_gradient_through_target():
    xs = np.array([0.5, -1.25, 2.0], dtype=np.float32)
    x = wp.array(xs, dtype=float, requires_grad=True)
    out = wp.zeros(3, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(fp_grad_kernel, dim=3, inputs=[x], outputs=[out])
    tape.backward(grads={out: wp.ones(3, dtype=float)})
    np.testing.assert_allclose(out.numpy(), xs ** 3 + np.sin(xs), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 3.0 * xs ** 2 + np.cos(xs), rtol=1e-5)


FP_TARGET = fp_double


@wp.kernel
def fp_global_kernel(out: wp.array(dtype=float)):
    out[0] = fp_apply(FP_TARGET, 3.0)


@wp.kernel
def fp_default_kernel(out: wp.array(dtype=float)):
    out[0] = fp_apply_default()


def test_cache_key_follows_target():
    global FP_TARGET
    out = wp.zeros(1, dtype=float)
    try:
        wp.launch(fp_global_kernel, dim=1, outputs=[out])
        assert out.numpy()[0] == 6.0
        double_hash = fp_global_kernel.module.hash_module()
        FP_TARGET = fp_triple
        assert fp_global_kernel.module.hash_module() != double_hash  # the hash follows the target now
        wp.launch(fp_global_kernel, dim=1, outputs=[out])
        assert out.numpy()[0] == 6.0  # the launch sees it once the module is modified (Warp's rule for globals)
        fp_global_kernel.module.mark_modified()
        wp.launch(fp_global_kernel, dim=1, outputs=[out])
        assert out.numpy()[0] == 9.0
    finally:
        FP_TARGET = fp_double
        fp_global_kernel.module.mark_modified()
    saved = fp_apply_default.defaults.copy()
    try:  # a default target is compiled in: the module's hash follows it (as Warp's hash_module)
        wp.launch(fp_default_kernel, dim=1, outputs=[out])
        assert out.numpy()[0] == 15.0
        triple_hash = fp_default_kernel.module.hash_module()
        fp_apply_default.defaults["g"] = fp_double
        assert fp_default_kernel.module.hash_module() != triple_hash
        fp_apply_default.defaults["g"] = fp_triple
        assert fp_default_kernel.module.hash_module() == triple_hash
    finally:
        fp_apply_default.defaults = saved


@wp.func
def fp_over(x: int):
    return float(x)


@wp.func
def fp_over(x: float, g: wp.Function = fp_double):
    return g(x)


def test_get_overload():
    o = fp_over.get_overload([float], {})
    assert o.defaults == {"g": fp_double}
    assert fp_over.get_overload([int], {}).defaults == {}
    assert fp_over.get_overload([wp.vec3], {}) is None


@wp.kernel
def fp_printf_kernel(out: wp.array(dtype=float)):
    out[0] = fp_apply(wp.printf, 0.5)


@wp.func
def fp_custom(g: wp.Function, x: float):
    return x


@wp.func_grad(fp_custom)
def fp_custom_grad(g: wp.Function, x: float, adj_ret: float):
    wp.adjoint[x] += adj_ret


@wp.kernel
def fp_custom_kernel(out: wp.array(dtype=float)):
    out[0] = fp_custom(fp_double, 2.0)


def test_rejected_targets():
    out = wp.zeros(1, dtype=float)
    with pytest.raises(wp.WarpCodegenError, match=r"wp.Function parameters support user-defined Warp functions and "
                                                  r"simple built-in Warp functions such as wp.sin\(\) and wp.min\(\), "
                                                  r"but parameter 'g' of 'fp_apply' received unsupported built-in "
                                                  r"function 'printf'."):
        wp.launch(fp_printf_kernel, dim=1, outputs=[out])
    with pytest.raises(wp.WarpCodegenError, match=r"wp.Function parameters are not supported on functions with "
                                                  r"custom gradients or replay functions: 'fp_custom'"):
        wp.launch(fp_custom_kernel, dim=1, outputs=[out])


def test_python_scope_argument_count_of_the_chosen_overload():
    from unittest import mock

    with mock.patch.object(fp_apply, "get_overload", return_value=fp_double):  # an overload of 1 parameter
        with pytest.raises(RuntimeError, match=r"^Invalid number of arguments for function 'fp_apply', expected 1, "
                                               r"got 2$"):
            fp_apply(fp_cube, 3.0)
    assert fp_over(2.5) == 5.0 and fp_over(2.5, fp_triple) == 7.5 and fp_over(3) == 3.0
