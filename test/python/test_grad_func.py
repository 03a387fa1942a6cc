"""Gradients through @wp.func calls (inlined before warp-autodiff), @wp.func_grad custom adjoints, and the
seed's Rosenbrock example verbatim (a @wp.func on wp.vec2 points, `adjoint=True` launches)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlwarp as wp

from grad_util import central_difference

f64 = wp.float64


@wp.func
def smooth_step(x: f64, k: f64):
    if x < f64(0.0):
        return f64(0.0)
    v = x
    for _ in range(3):
        v = v * k + wp.sin(v)
    return v


@wp.kernel
def calls_func(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = smooth_step(x[i], f64(0.5)) * x[i]


def forward(kernel, xv):
    y = wp.zeros(len(xv), dtype=f64)
    wp.launch(kernel, dim=len(xv), inputs=[wp.array(xv, dtype=f64)], outputs=[y])
    return y.numpy().copy()


def adjoint(kernel, xv, seed=None):
    adj = wp.zeros(len(xv), dtype=f64)
    wp.launch(kernel, dim=len(xv), inputs=[wp.array(xv, dtype=f64)], outputs=[wp.zeros(len(xv), dtype=f64)],
              adjoint=True, adj_inputs=[adj], adj_outputs=[wp.array(seed if seed is not None else np.ones(len(xv)),
                                                                     dtype=f64)])
    return adj.numpy()


def smooth_step_reference(x):
    """numpy forward of calls_func: smooth_step(x, 0.5) * x."""
    def one(xv):
        if xv < 0.0:
            return 0.0
        v = xv
        for _ in range(3):
            v = v * 0.5 + math.sin(v)
        return v * xv
    return np.array([one(v) for v in x])


def test_function_with_early_return_and_loop_is_differentiated_after_inlining():
    xv = np.array([-0.5, 0.3, 0.9, 1.7])
    np.testing.assert_allclose(forward(calls_func, xv), smooth_step_reference(xv), rtol=1e-14)
    np.testing.assert_allclose(adjoint(calls_func, xv), central_difference(smooth_step_reference, [xv])[0],
                               rtol=1e-6, atol=1e-8)


@wp.func
def safe_sqrt(x: f64):
    return wp.sqrt(x)


@wp.func_grad(safe_sqrt)
def adj_safe_sqrt(x: f64, adj_ret: f64):
    if x > f64(0.0):
        wp.adjoint[x] += adj_ret / (f64(2.0) * wp.sqrt(x))


@wp.kernel
def uses_custom_grad(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = safe_sqrt(x[i]) * f64(3.0) + x[i] * x[i]


def test_func_grad_replaces_the_derivative_of_the_body():
    xv = np.array([0.0, 1.0, 4.0])
    # at 0 the custom adjoint gives 0 where sqrt's derivative is infinite
    np.testing.assert_allclose(adjoint(uses_custom_grad, xv), [0.0, 3.5, 8.75], rtol=1e-12)
    # the forward value is the function's own
    np.testing.assert_allclose(forward(uses_custom_grad, xv), [0.0, 4.0, 22.0], rtol=1e-12)


@wp.func
def scaled(x: f64, s: f64):
    return x * s


@wp.func_grad(scaled)
def adj_scaled(x: f64, s: f64, adj_ret: f64):
    wp.adjoint[x] += f64(10.0) * adj_ret  # deliberately not the true derivative: proves it is used
    wp.adjoint[s] -= adj_ret


@wp.kernel
def uses_scaled(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = scaled(x[i], x[i])


def test_func_grad_adjoints_of_every_argument_are_accumulated():
    np.testing.assert_allclose(adjoint(uses_scaled, np.array([2.0, 3.0]), seed=[1.0, 2.0]), [9.0, 18.0])


def test_forward_mode_differentiates_the_body_of_a_func_grad_function():
    xv = np.array([1.0, 4.0])
    dy = wp.zeros(2, dtype=f64)
    wp.jvp(uses_custom_grad, 2, inputs=[wp.array(xv, dtype=f64)], outputs=[wp.zeros(2, dtype=f64)],
           tan_inputs=[wp.ones(2, dtype=f64)], tan_outputs=[dy])
    np.testing.assert_allclose(dy.numpy(), 1.5 / np.sqrt(xv) + 2 * xv, rtol=1e-12)


def test_func_grad_errors():
    with pytest.raises(TypeError, match="wp.func_grad expects a @wp.func"):
        wp.func_grad(lambda x: x)
    with pytest.raises(wp.CompileError, match="takes its 1 argument\\(s\\) and the adjoint of each of its "
                                              "results, got 0 argument"):
        @wp.func_grad(safe_sqrt)
        def wrong():
            pass

    @wp.func
    def lonely(x: f64):
        return x * x

    @wp.func_grad(lonely)
    def lonely_grad(x: f64):  # no adjoint for its one result: said as a kernel calling it compiles
        wp.adjoint[x] += x

    @wp.kernel
    def k_lonely(xs: wp.array(dtype=f64)):
        xs[0] = lonely(xs[0])

    with pytest.raises(wp.CompileError, match="a @wp.func_grad function for 'lonely' takes its 1 argument\\(s\\) "
                                              "and the adjoint of each of its 1 result\\(s\\), got 1 argument"):
        wp.launch(k_lonely, dim=1, inputs=[wp.zeros(1, dtype=f64)])
    with pytest.raises(wp.CompileError, match="cannot return; it adds to wp.adjoint"):
        @wp.func_grad(safe_sqrt)
        def returns(x: f64, adj_ret: f64):
            return x


# -- the seed's Rosenbrock example (000_*: torch.autograd.Function backward with adjoint=True) ------------
@wp.func
def rosenbrock(x: float, y: float):
    return (1.0 - x) ** 2.0 + 100.0 * (y - x**2.0) ** 2.0


@wp.kernel
def eval_rosenbrock(
    xs: wp.array(dtype=wp.vec2),
    # outputs
    z: wp.array(dtype=float),
):
    i = wp.tid()
    x = xs[i]
    z[i] = rosenbrock(x[0], x[1])


def test_seed_rosenbrock_gradient_is_the_analytic_one():
    rng = np.random.default_rng(42)
    num_points = 64
    xy = wp.array(rng.normal(size=(num_points, 2)), dtype=wp.vec2, requires_grad=True)
    z = wp.zeros(num_points, requires_grad=True)
    wp.launch(kernel=eval_rosenbrock, dim=num_points, inputs=[xy], outputs=[z])
    z.grad = wp.ones(num_points)
    wp.launch(kernel=eval_rosenbrock, dim=num_points, inputs=[xy], outputs=[z], adj_inputs=[xy.grad],
              adj_outputs=[z.grad], adjoint=True)
    p = xy.numpy().astype(np.float64)
    x, y = p[:, 0], p[:, 1]
    want = np.stack([-2 * (1 - x) - 400 * x * (y - x * x), 200 * (y - x * x)], axis=1)
    np.testing.assert_allclose(xy.grad.numpy(), want, rtol=2e-5, atol=1e-3)


def test_func_grad_source_is_part_of_the_cache_key_of_callers():
    from mlwarp.kernels.captures import fingerprint

    key = fingerprint(safe_sqrt)
    assert "func_grad:" in key and "adj_ret / (f64(2.0) * wp.sqrt(x))" not in key  # hashed, not raw text
    assert fingerprint(safe_sqrt) == key
    assert fingerprint(smooth_step) and "func_grad:" not in fingerprint(smooth_step)


# -- custom adjoints of functions with several results, and of each overload of a function -----------------------
@wp.func
def two_results(x: float, y: float):
    return x * 3.0 + y, y * y


@wp.func_grad(two_results)
def two_results_grad(x: float, y: float, adj_ret0: float, adj_ret1: float):  # one adjoint per result
    wp.adjoint[x] += 42.0 * adj_ret0  # deliberately not the true derivative: shows this adjoint is the one used
    wp.adjoint[y] += 10.0 * adj_ret1 + adj_ret0


@wp.func
def per_overload(x: float):
    return x * 2.0


@wp.func_grad(per_overload)
def per_overload_grad32(x: float, adj_ret: float):
    wp.adjoint[x] += 5.0 * adj_ret


@wp.func
def per_overload(x: f64):
    return x * f64(2.0)


@wp.func_grad(per_overload)
def per_overload_grad64(x: f64, adj_ret: f64):
    wp.adjoint[x] += f64(7.0) * adj_ret


@wp.kernel
def k_custom_results(xs: wp.array(dtype=float), ys: wp.array(dtype=float), a: wp.array(dtype=float),
                     b: wp.array(dtype=float), d: wp.array(dtype=f64), e: wp.array(dtype=f64),
                     c: wp.array(dtype=float)):
    i = wp.tid()
    r0, r1 = two_results(xs[i], ys[i])
    a[i] = r0
    b[i] = r1
    c[i] = per_overload(xs[i])
    e[i] = per_overload(d[i])


def test_custom_grad_of_several_results_and_of_each_overload():
    xv, yv, dv = np.array([1.0, -2.0], np.float32), np.array([0.5, 3.0], np.float32), np.array([1.5, 2.5])
    xs, ys = wp.array(xv, requires_grad=True), wp.array(yv, requires_grad=True)
    d = wp.array(dv, dtype=f64, requires_grad=True)
    a, b, c = (wp.zeros(2, requires_grad=True) for _ in range(3))
    e = wp.zeros(2, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k_custom_results, dim=2, inputs=[xs, ys], outputs=[a, b, d, e, c])
    np.testing.assert_allclose(a.numpy(), 3 * xv + yv)
    np.testing.assert_allclose(b.numpy(), yv * yv)
    np.testing.assert_allclose(e.numpy(), 2 * dv)
    tape.backward(grads={a: wp.array([1.0, 2.0], dtype=float), b: wp.array([3.0, 4.0], dtype=float),
                         c: wp.array([1.0, 1.0], dtype=float),
                         e: wp.array([1.0, 2.0], dtype=f64)})
    np.testing.assert_allclose(xs.grad.numpy(), 42.0 * np.array([1.0, 2.0]) + 5.0)  # two_results + float overload
    np.testing.assert_allclose(ys.grad.numpy(), 10.0 * np.array([3.0, 4.0]) + np.array([1.0, 2.0]))
    np.testing.assert_allclose(d.grad.numpy(), 7.0 * np.array([1.0, 2.0]))  # the f64 overload's adjoint


# -- wp.adjoint[...] on a member of a struct argument ------------------------------------------------------------
@wp.struct
class Holder:
    s: float
    v: wp.vec3


@wp.func
def holder_sum(h: Holder):
    return h.s + h.v[0] + h.v[1] + h.v[2]


@wp.func_grad(holder_sum)
def holder_sum_grad(h: Holder, adj_ret: float):
    wp.adjoint[h.v].y = 5.0 * adj_ret  # a plain write of one component of the adjoint
    wp.adjoint[h.v][2] += 3.0 * adj_ret
    wp.adjoint[h.s] += 2.0 * adj_ret


@wp.kernel
def k_holder(hs: wp.array(dtype=Holder), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = holder_sum(hs[i])


def test_adjoint_of_struct_members():
    h = Holder()
    h.s, h.v = 1.0, wp.vec3(1.0, 2.0, 3.0)
    hs = wp.array([h, h], dtype=Holder, requires_grad=True)
    out = wp.zeros(2, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k_holder, dim=2, inputs=[hs], outputs=[out])
    np.testing.assert_allclose(out.numpy(), [7.0, 7.0])
    tape.backward(grads={out: wp.array([1.0, 2.0], dtype=float)})
    g = hs.grad.numpy()
    np.testing.assert_allclose(g["s"], [2.0, 4.0])
    np.testing.assert_allclose(g["v"], [[0.0, 5.0, 3.0], [0.0, 10.0, 6.0]])


def test_adjoint_of_an_integer_array_argument_is_refused():
    @wp.func
    def pick_int(values: wp.array(dtype=int), i: int):
        return float(values[i])

    with pytest.raises(wp.CompileError, match=r"wp.adjoint\[values\]: an array of values without a derivative "
                                              r"\(integers, structs\) has no adjoint array in mlwarp's @wp.func_grad"):
        @wp.func_grad(pick_int)
        def pick_int_grad(values: wp.array(dtype=int), i: int, adj_ret: float):
            wp.adjoint[values][i] += 1


def test_composite_slot_assignment_type_mismatch_message():
    @wp.kernel
    def k_mismatch(y: wp.array(dtype=wp.vec3), src: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        y[i].y = src[i]

    with pytest.raises(wp.CompileTypeError, match=r"Composite slot assignment expects value of type float32, got "
                                                  r"vec3f\n"):
        wp.launch(k_mismatch, dim=1, inputs=[wp.zeros(1, dtype=wp.vec3), wp.zeros(1, dtype=wp.vec3)])


# -- wp.adjoint[a][i] += e: a custom adjoint adding to an array argument's adjoint array -------------------------
@wp.func
def squash_into(i: int, xs: wp.array(dtype=float), ys: wp.array(dtype=float)):  # no result: it writes ys
    ys[i] = xs[i] * xs[i]


@wp.func_grad(squash_into)
def squash_into_grad(i: int, xs: wp.array(dtype=float), ys: wp.array(dtype=float)):
    wp.adjoint[xs][i] += 10.0 * xs[i]  # deliberately 5x the true derivative 2x (shows this adjoint is used)


@wp.func
def pick(values: wp.array(dtype=wp.vec3), k: int):
    return values[k].x


@wp.func_grad(pick)
def pick_grad(values: wp.array(dtype=wp.vec3), k: int, adj_ret: float):
    wp.adjoint[values][k].y += 3.0 * adj_ret  # (the y component: not the true one)


@wp.kernel
def k_array_adjoints(xs: wp.array(dtype=float), ys: wp.array(dtype=float), vs: wp.array(dtype=wp.vec3),
                     out: wp.array(dtype=float)):
    i = wp.tid()
    squash_into(i, xs, ys)
    out[i] = pick(vs, 1 - i)


def test_custom_adjoint_adds_to_an_array_arguments_adjoint():
    xv = np.array([1.5, -2.0], np.float32)
    xs = wp.array(xv, requires_grad=True)
    ys = wp.zeros(2, requires_grad=True)
    vs = wp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(2, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k_array_adjoints, dim=2, inputs=[xs, ys, vs], outputs=[out])
    np.testing.assert_allclose(ys.numpy(), xv * xv)
    np.testing.assert_allclose(out.numpy(), [4.0, 1.0])
    tape.backward(grads={ys: wp.ones(2, dtype=float), out: wp.array([1.0, 2.0], dtype=float)})
    np.testing.assert_allclose(xs.grad.numpy(), 10.0 * xv)
    np.testing.assert_allclose(vs.grad.numpy(), [[0.0, 6.0, 0.0], [0.0, 3.0, 0.0]])


def test_func_grad_defined_in_a_function_sees_its_enclosing_names():
    """A @wp.func_grad written inside a function reads that function's locals (a tile shape, a scale), as the
    @wp.func it differentiates does: Warp's test of a custom tile_matmul gradient is written so."""
    m, scale = 4, 3.0

    @wp.func
    def scaled_gemm(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):
        acc = wp.tile_zeros(shape=(m, m), dtype=float)
        wp.tile_matmul(wp.tile_load(a, shape=(m, m)), wp.tile_load(b, shape=(m, m)), acc)
        wp.tile_store(c, acc * scale)

    @wp.func_grad(scaled_gemm)
    def adj_scaled_gemm(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):
        adj_c = wp.tile_load(wp.adjoint[c], shape=(m, m)) * scale
        adj_a = wp.tile_zeros(shape=(m, m), dtype=float)
        adj_b = wp.tile_zeros(shape=(m, m), dtype=float)
        wp.tile_matmul(adj_c, wp.tile_transpose(wp.tile_load(b, shape=(m, m))), adj_a)
        wp.tile_matmul(wp.tile_transpose(wp.tile_load(a, shape=(m, m))), adj_c, adj_b)
        wp.tile_atomic_add(wp.adjoint[a], adj_a)
        wp.tile_atomic_add(wp.adjoint[b], adj_b)

    @wp.kernel(module="unique")
    def run(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):
        scaled_gemm(a, b, c)

    rng = np.random.default_rng(7)
    a0, b0, g = (rng.standard_normal((m, m)).astype(np.float32) for _ in range(3))
    a, b = wp.array(a0, requires_grad=True), wp.array(b0, requires_grad=True)
    c = wp.zeros((m, m), dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(run, dim=[1], inputs=[a, b, c], block_dim=1)
    np.testing.assert_allclose(c.numpy(), scale * a0 @ b0, rtol=1e-5, atol=1e-5)
    tape.backward(grads={c: wp.array(g)})
    np.testing.assert_allclose(a.grad.numpy(), scale * g @ b0.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), scale * a0.T @ g, rtol=1e-5, atol=1e-5)
