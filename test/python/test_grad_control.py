"""Gradients through control flow, array access patterns and atomics, by adjoint launches
(`wp.launch(..., adjoint=True)`), against central finite differences in float64 of numpy forwards written
here (never of mlwarp's own forward, which a frontend bug would make agree with a wrong gradient), or
closed forms. Dynamic loops with carried state are the case Warp gets wrong."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlwarp as wp

from grad_util import central_difference

f64 = wp.float64


def adjoint_grads(kernel, n, xs, scalars=(), out_count=1, seed=None):
    """Gradient of sum(outputs) w.r.t. each input array, by one adjoint launch with adj_out = 1
    (or `seed`)."""
    x_arrays = [wp.array(x, dtype=f64) for x in xs]
    outs = [wp.zeros(n, dtype=f64) for _ in range(out_count)]
    adj_x = [wp.zeros(x.shape, dtype=f64) for x in xs]
    adj_out = [wp.array(seed if seed is not None else np.ones(n), dtype=f64) for _ in range(out_count)]
    wp.launch(kernel, dim=n, inputs=x_arrays + list(scalars), outputs=outs, adjoint=True,
              adj_inputs=adj_x + [0.0 if isinstance(s, float) else 0 for s in scalars], adj_outputs=adj_out)
    return [a.numpy() for a in adj_x]


def mlwarp_forward(kernel, n, xs, scalars=(), out_count=1):
    outs = [wp.zeros(n, dtype=f64) for _ in range(out_count)]
    wp.launch(kernel, dim=n, inputs=[wp.array(x, dtype=f64) for x in xs] + list(scalars), outputs=outs)
    return np.concatenate([o.numpy() for o in outs])


def check(kernel, xs, reference, scalars=(), n=None, out_count=1, rtol=1e-6):
    """The forward against `reference(*xs)` (numpy, the outputs concatenated) and the adjoint launch's
    gradient of sum(outputs) against central differences of the reference."""
    n = n or len(xs[0])
    np.testing.assert_allclose(mlwarp_forward(kernel, n, xs, scalars, out_count), reference(*xs), rtol=1e-12,
                               atol=1e-14, err_msg="forward against the numpy reference")
    got = adjoint_grads(kernel, n, xs, scalars, out_count)
    want = central_difference(reference, xs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-7)
    return got


def elementwise(fn):
    """A numpy reference that applies the per-thread function `fn` to each element."""
    return lambda x: np.array([fn(v) for v in x])


# -- branches -------------------------------------------------------------------------
@wp.kernel
def branchy(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    if v > f64(0.5):
        v = v * v * f64(3.0)
    elif v > f64(-0.5):
        v = wp.sin(v) + v
    else:
        v = -v
    w = v * f64(2.0) if x[i] < f64(1.0) else wp.exp(v)
    y[i] = w


def branchy_reference(x):
    v = x * x * 3.0 if x > 0.5 else (math.sin(x) + x if x > -0.5 else -x)
    return v * 2.0 if x < 1.0 else math.exp(v)


def test_if_elif_else_and_conditional_expression():
    x = np.array([-1.3, -0.2, 0.3, 0.7, 1.4, 2.0])
    g = check(branchy, [x], elementwise(branchy_reference))
    np.testing.assert_allclose(g[0][0], -2.0)  # v = -x, w = 2 v


@wp.kernel
def branch_store(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    if x[i] > f64(0.0):
        y[i] = x[i] * x[i]


def test_store_inside_a_branch():
    x = np.array([-1.0, 0.5, 2.0])
    g = check(branch_store, [x], lambda x: np.where(x > 0.0, x * x, 0.0))
    np.testing.assert_allclose(g[0], [0.0, 1.0, 4.0])


# -- static loops ---------------------------------------------------------------------------
@wp.kernel
def static_loop(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    for k in range(4):
        v = v * wp.sin(v) + f64(0.5)
    y[i] = v


@wp.kernel
def nested_branches(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    w = f64(0.0)
    if v > f64(-1.0):
        a = wp.exp(v * f64(0.5))
        if v > f64(0.0):
            b = wp.sin(a * v)
            if v > f64(1.0):
                c = wp.cbrt(b + f64(2.0)) * a
                for k in range(i % 3 + 1):  # a loop with carried state inside three branches
                    c = c * wp.cos(c) + v
                w = c
            else:
                p = wp.vec3d(v, b * b, a)
                j = (i + 1) % x.shape[0]  # an index computed in the branch, read back by the reverse
                w = wp.length(p) * x[j]
        else:
            w = a * v
    else:
        w = wp.sqrt(v * v + f64(1.0))
    y[i] = w


def nested_branches_reference(x):
    out = np.zeros_like(x)
    for i, v in enumerate(x):
        if v > -1.0:
            a = math.exp(v * 0.5)
            if v > 0.0:
                b = math.sin(a * v)
                if v > 1.0:
                    c = np.cbrt(b + 2.0) * a
                    for _ in range(i % 3 + 1):
                        c = c * math.cos(c) + v
                    w = c
                else:
                    w = math.sqrt(v * v + (b * b) ** 2 + a * a) * x[(i + 1) % len(x)]
            else:
                w = a * v
        else:
            w = math.sqrt(v * v + 1.0)
        out[i] = w
    return out


def test_nested_branches_against_finite_differences():
    """Each level's reverse reads the values of the forward replay's branch (yielded out of it: see
    test/lit/warp-autodiff/branch-yields.mlir), ints, vectors and a loop's inputs among them."""
    x = np.array([-1.7, -0.4, 0.3, 0.8, 1.2, 1.9, 2.4, 0.6, 1.5])
    check(nested_branches, [x], nested_branches_reference)


def test_nested_branches_are_not_copied_into_their_reverses():
    """The adjoint holds each branch's forward ops once (the replay), however deep the nesting: the reverse of
    `if` used to replay its branch again inside itself, so the innermost branch's cbrt came once per level."""
    text = nested_branches.to_mlir("autodiff")
    adjoint = text[text.index("func.func @nested_branches_adj"):]
    assert adjoint.count('"warp.cbrt"') == 1
    assert adjoint.count('"warp.exp"') == 1


def test_static_loop_with_carried_state():
    def one(v):
        for _ in range(4):
            v = v * math.sin(v) + 0.5
        return v

    check(static_loop, [np.array([0.3, -0.8, 1.1])], elementwise(one))


# -- dynamic loops with carried state (runtime n) ----------------------------------------------
@wp.kernel
def affine_recurrence(x: wp.array(dtype=f64), a: wp.array(dtype=f64), y: wp.array(dtype=f64), n: int):
    i = wp.tid()
    v = x[i]
    for k in range(n):
        v = v * a[i] + wp.sin(v)
    y[i] = v


@pytest.mark.parametrize("n", [0, 1, 5])
def test_dynamic_loop_carried_state(n):
    x = np.array([0.3, -0.7, 1.2])
    a = np.array([0.9, 1.1, -0.5])
    def reference(x, a):
        v = x.copy()
        for _ in range(n):
            v = v * a + np.sin(v)
        return v

    check_with_scalar_after(affine_recurrence, [x, a], n, reference)


def check_with_scalar_after(kernel, xs, n, reference):
    """For kernels whose outputs come before a trailing int parameter: the forward against the numpy
    `reference(*xs)`, the adjoint against its central differences."""
    m = len(xs[0])
    y = wp.zeros(m, dtype=f64)
    wp.launch(kernel, dim=m, inputs=[wp.array(v, dtype=f64) for v in xs] + [y, n])
    np.testing.assert_allclose(y.numpy(), reference(*xs), rtol=1e-12, atol=1e-14,
                               err_msg="forward against the numpy reference")
    x_arrays = [wp.array(v, dtype=f64) for v in xs]
    adj_x = [wp.zeros(m, dtype=f64) for _ in xs]
    y = wp.zeros(m, dtype=f64)
    wp.launch(kernel, dim=m, inputs=x_arrays + [y, n], adjoint=True,
              adj_inputs=adj_x + [wp.ones(m, dtype=f64), 0])
    for g, w in zip(adj_x, central_difference(reference, xs)):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-6, atol=1e-7)


def test_dynamic_loop_gradient_is_exact_closed_form():
    # v_{k+1} = a v_k (no sin): d v_n / d x = a^n, d v_n / d a = n a^(n-1) x
    x = np.array([0.5])

    @wp.kernel
    def power(x: wp.array(dtype=f64), a: f64, y: wp.array(dtype=f64), n: int):
        i = wp.tid()
        v = x[i]
        for k in range(n):
            v = v * a
        y[i] = v

    adj_x = wp.zeros(1, dtype=f64)
    wp.launch(power, dim=1, inputs=[wp.array(x, dtype=f64), 1.5, wp.zeros(1, dtype=f64), 7], adjoint=True,
              adj_inputs=[adj_x, 0.0, wp.ones(1, dtype=f64), 0])
    assert adj_x.numpy()[0] == pytest.approx(1.5 ** 7, rel=1e-12)


@wp.kernel
def accumulate_loop(x: wp.array(dtype=f64), w: wp.array(dtype=f64), y: wp.array(dtype=f64), n: int):
    i = wp.tid()
    s = f64(0.0)
    for k in range(n):
        s += w[k] * x[k] * x[k]
    y[i] = s


def test_dynamic_reduction_loop_without_recompute():
    # the reverse body does not need s: the pass leaves the recomputation out
    x = np.array([0.3, -0.7, 1.2, 0.1])
    w = np.array([1.0, 2.0, 3.0, 4.0])
    m = 2  # two threads each read all of x: adjoints add up

    def f(xv, wv):
        return np.full(m, np.sum(wv * xv * xv))

    y = wp.zeros(m, dtype=f64)
    wp.launch(accumulate_loop, dim=m, inputs=[wp.array(x, dtype=f64), wp.array(w, dtype=f64), y, 4])
    np.testing.assert_allclose(y.numpy(), f(x, w), rtol=1e-14)
    adj_x, adj_w = wp.zeros(4, dtype=f64), wp.zeros(4, dtype=f64)
    wp.launch(accumulate_loop, dim=m, inputs=[wp.array(x, dtype=f64), wp.array(w, dtype=f64),
                                              wp.zeros(m, dtype=f64), 4], adjoint=True,
              adj_inputs=[adj_x, adj_w, wp.ones(m, dtype=f64), 0])
    want_x, want_w = central_difference(f, [x, w])
    np.testing.assert_allclose(adj_x.numpy(), want_x, rtol=1e-6)
    np.testing.assert_allclose(adj_w.numpy(), want_w, rtol=1e-6)
    np.testing.assert_allclose(adj_x.numpy(), 2 * m * w * x, rtol=1e-12)


@wp.kernel
def nested_loops(x: wp.array(dtype=f64), y: wp.array(dtype=f64), n: int):
    i = wp.tid()
    v = x[i]
    for k in range(n):
        u = v
        for j in range(k + 1):
            u = u * f64(0.9) + wp.cos(u)
        v = v + u * v
    y[i] = v


def test_nested_dynamic_loops_with_carried_state():
    def one(v):
        for k in range(3):
            u = v
            for _ in range(k + 1):
                u = u * 0.9 + math.cos(u)
            v = v + u * v
        return v

    check_with_scalar_after(nested_loops, [np.array([0.2, -0.4, 0.9])], 3, elementwise(one))


# -- while loops ----------------------------------------------------------------------------------
@wp.kernel
def halving(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    while v > f64(1.0):
        v = v * f64(0.5) + wp.sin(v) * f64(0.1)
    y[i] = v * v


def test_while_loop_with_data_dependent_trip_count():
    def one(v):
        while v > 1.0:
            v = v * 0.5 + math.sin(v) * 0.1
        return v * v

    check(halving, [np.array([0.5, 3.0, 7.5, 40.0])], elementwise(one))


@wp.kernel
def loop_with_break(x: wp.array(dtype=f64), y: wp.array(dtype=f64), n: int):
    i = wp.tid()
    v = x[i]
    for k in range(n):
        if v > f64(4.0):
            break
        v = v * v + f64(0.5)
    y[i] = v


def test_loop_with_break():
    def one(v):
        for _ in range(6):
            if v > 4.0:
                break
            v = v * v + 0.5
        return v

    check_with_scalar_after(loop_with_break, [np.array([0.3, 1.1, 1.9, 5.0])], 6, elementwise(one))


# -- arrays and atomics -------------------------------------------------------------------------------
@wp.kernel
def atomics(x: wp.array(dtype=f64), l: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_add(l, 0, x[i] * x[i])
    l[1] -= wp.sin(x[i])


def test_atomic_add_and_sub():
    x = np.array([0.3, -0.7, 1.2])
    l = wp.zeros(2, dtype=f64)
    adj_x = wp.zeros(3, dtype=f64)
    wp.launch(atomics, dim=3, inputs=[wp.array(x, dtype=f64)], outputs=[l], adjoint=True,
              adj_inputs=[adj_x], adj_outputs=[wp.array([1.0, 2.0], dtype=f64)])
    np.testing.assert_allclose(adj_x.numpy(), 2 * x - 2 * np.cos(x), rtol=1e-12)


@wp.kernel
def gather_2d(x: wp.array(dtype=f64, ndim=2), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = x[i, 0] * x[i, 1] + x[0, 0]


def test_2d_reads_accumulate_into_the_adjoint():
    x = np.array([[0.5, 2.0], [1.5, -1.0], [3.0, 0.25]])
    check(gather_2d, [x], lambda x: x[:, 0] * x[:, 1] + x[0, 0], n=3)


@wp.kernel
def cast_chain(x: wp.array(dtype=wp.float32), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = f64(x[i]) * f64(x[i]) + f64(int(x[i]))


def test_casts_float32_to_float64_and_through_int():
    x = wp.array([0.5, 1.5, -2.25], dtype=wp.float32)
    adj_x = wp.zeros(3, dtype=wp.float32)
    wp.launch(cast_chain, dim=3, inputs=[x], outputs=[wp.zeros(3, dtype=f64)], adjoint=True,
              adj_inputs=[adj_x], adj_outputs=[wp.ones(3, dtype=f64)])
    np.testing.assert_allclose(adj_x.numpy(), 2 * x.numpy(), rtol=1e-7)  # the int path has no gradient


# -- what cannot be differentiated fails to compile ---------------------------------------------------
@wp.kernel
def uses_atomic_result(x: wp.array(dtype=f64), l: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    old = wp.atomic_add(l, 0, x[i])
    y[i] = old * x[i]


def test_used_atomic_result_is_refused_when_the_adjoint_is_launched():
    x, l, y = wp.ones(2, dtype=f64), wp.zeros(1, dtype=f64), wp.zeros(2, dtype=f64)
    wp.launch(uses_atomic_result, dim=2, inputs=[x, l], outputs=[y])  # forward still runs
    assert l.numpy()[0] == 2.0 and sorted(y.numpy()) == [0.0, 1.0]
    with pytest.raises(wp.CompileError, match="kernel 'uses_atomic_result' cannot be differentiated: .*uses the "
                                              "value returned by an atomic operation"):
        wp.launch(uses_atomic_result, dim=2, inputs=[x, l], outputs=[y], adjoint=True,
                  adj_inputs=[None, None], adj_outputs=[None])


@wp.kernel
def stores_atomic_min(slot: wp.array(dtype=f64), value: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    out[i] = wp.atomic_min(slot, i, value[i])


@wp.kernel
def stores_atomic_max(slot: wp.array(dtype=f64), value: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    out[i] = wp.atomic_max(slot, i, value[i])


@pytest.mark.parametrize("kernel", [stores_atomic_min, stores_atomic_max])
def test_stored_atomic_minmax_result_differentiates_as_warp(kernel):
    # Warp's adj_atomic_minmax: value[i] gets slot's gradient where the element holds value[i] after the forward
    # launch (the value won) or both are NaN; the returned value's adjoint is dropped (out's gradient goes nowhere)
    nan = float("nan")
    slot0 = np.array([nan, nan, 2.0, 5.0, 2.0])
    value = np.array([nan, 2.0, nan, 2.0, 5.0])
    slot = wp.array(slot0, dtype=f64, requires_grad=True)
    v = wp.array(value, dtype=f64, requires_grad=True)
    out = wp.zeros(5, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim=5, inputs=[slot, v], outputs=[out])
    pick = np.fmin if kernel is stores_atomic_min else np.fmax  # a NaN loses to a number, as Warp's atomics
    final = pick(slot0, value)
    np.testing.assert_array_equal(slot.numpy(), final)
    slot.grad.fill_(1.0)
    out.grad.fill_(1.0)
    tape.backward()
    won = (final == value) | (np.isnan(final) & np.isnan(value))
    np.testing.assert_array_equal(v.grad.numpy(), np.where(won, 1.0, 0.0))


@wp.kernel(enable_backward=False)
def forward_only(x: wp.array(dtype=f64), l: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    old = wp.atomic_add(l, 0, x[i])
    y[i] = old


def test_enable_backward_false_skips_the_adjoint():
    l = wp.zeros(1, dtype=f64)
    wp.launch(forward_only, dim=3, inputs=[wp.ones(3, dtype=f64), l], outputs=[wp.zeros(3, dtype=f64)])
    assert l.numpy()[0] == 3.0
    with pytest.raises(wp.LaunchError, match="compiled with enable_backward=False, so it has no adjoint"):
        wp.launch(forward_only, dim=3, inputs=[wp.ones(3, dtype=f64), l], outputs=[wp.zeros(3, dtype=f64)],
                  adjoint=True, adj_inputs=[None, None], adj_outputs=[None])



@wp.kernel
def own_index(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    v = wp.sin(x[i])
    if x[i] > f64(0.0):
        v = v + x[i] * x[i]
    y[i] = v


def test_thread_owned_adjoint_accumulates_onto_existing_values():
    # x is only read at x[tid]: the adjoint adds without atomics; it must still add to what adj_x holds
    x = np.array([0.5, -1.0, 2.0])
    adj_x = wp.array([10.0, 20.0, 30.0], dtype=f64)
    y = wp.zeros(3, dtype=f64)
    wp.launch(own_index, dim=3, inputs=[wp.array(x, dtype=f64)], outputs=[y], adjoint=True,
              adj_inputs=[adj_x], adj_outputs=[wp.ones(3, dtype=f64)])
    want = np.array([10.0, 20.0, 30.0]) + np.where(x > 0, 2 * x, 0.0) + np.cos(x)
    np.testing.assert_allclose(adj_x.numpy(), want, rtol=1e-12)
