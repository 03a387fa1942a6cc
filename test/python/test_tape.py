"""wp.Tape: recording, backward(loss=...), backward(grads=...), zero, reset, gradients; multi-kernel
tapes against finite differences; the seeds' optimisation loops converge with mlwarp gradients."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp

f64 = wp.float64


@wp.kernel
def square_sum(xs: wp.array(dtype=float, ndim=2), l: wp.array(dtype=float)):
    tid = wp.tid()
    wp.atomic_add(l, 0, xs[tid, 0] ** 2.0 + xs[tid, 1] ** 2.0)


def test_backward_loss_seeds_one_and_fills_grad():
    x = np.array([[1.0, -2.0], [0.5, 3.0]], dtype=np.float32)
    xs = wp.array(x, dtype=wp.float32, requires_grad=True)
    l = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square_sum, dim=len(xs), inputs=[xs], outputs=[l])
    assert l.numpy()[0] == pytest.approx(np.sum(x ** 2))
    tape.backward(loss=l)
    np.testing.assert_allclose(xs.grad.numpy(), 2 * x, rtol=1e-6)
    assert l.grad.numpy()[0] == 1.0
    assert tape.gradients[xs] is xs.grad
    # gradients accumulate across backward calls, as in Warp, until zero()
    tape.backward(loss=l)
    np.testing.assert_allclose(xs.grad.numpy(), 4 * x, rtol=1e-6)
    tape.zero()
    assert not xs.grad.numpy().any() and not l.grad.numpy().any()


def test_reset_forgets_launches():
    xs = wp.array(np.ones((3, 2)), dtype=wp.float32, requires_grad=True)
    l = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square_sum, dim=3, inputs=[xs], outputs=[l])
    assert len(tape.launches) == 1
    tape.reset()
    assert tape.launches == [] and tape.gradients == {}
    tape.backward(loss=l)
    assert not xs.grad.numpy().any()


def test_launches_outside_the_tape_are_not_recorded():
    xs = wp.array(np.ones((3, 2)), dtype=wp.float32, requires_grad=True)
    l = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    wp.launch(square_sum, dim=3, inputs=[xs], outputs=[l])
    with tape:
        pass
    assert tape.launches == []


def test_loss_must_be_a_single_value():
    l = wp.zeros(2, dtype=wp.float32, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can only return gradients for scalar loss functions"):
        wp.Tape().backward(loss=l)


# -- multi-kernel tapes ---------------------------------------------------------------------
@wp.kernel
def stage1(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = wp.sin(x[i]) * x[i]


@wp.kernel
def stage2(y: wp.array(dtype=f64), w: wp.array(dtype=f64), z: wp.array(dtype=f64)):
    i = wp.tid()
    z[i] = y[i] * w[i] + wp.exp(y[(i + 1) % 4])


@wp.kernel
def reduce_sq(z: wp.array(dtype=f64), l: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_add(l, 0, z[i] * z[i])


def chain(xv, wv):
    x = wp.array(xv, dtype=f64, requires_grad=True)
    w = wp.array(wv, dtype=f64, requires_grad=True)
    y = wp.zeros(4, dtype=f64, requires_grad=True)
    z = wp.zeros(4, dtype=f64, requires_grad=True)
    l = wp.zeros(1, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(stage1, dim=4, inputs=[x], outputs=[y])
        wp.launch(stage2, dim=4, inputs=[y, w], outputs=[z])
        wp.launch(reduce_sq, dim=4, inputs=[z], outputs=[l])
    return tape, x, w, z, l


def chain_reference(xv, wv):
    """numpy forward of stage1 -> stage2 -> reduce_sq."""
    y = np.sin(xv) * xv
    z = y * wv + np.exp(np.roll(y, -1))
    return np.sum(z * z)


def test_three_kernel_tape_matches_finite_differences():
    xv = np.array([0.3, -0.6, 1.1, 0.2])
    wv = np.array([1.5, -0.5, 0.25, 2.0])
    tape, x, w, z, l = chain(xv, wv)
    assert l.numpy()[0] == pytest.approx(chain_reference(xv, wv), rel=1e-13)
    tape.backward(loss=l)
    h = 1e-6
    for arr, base, other in ((x, xv, lambda v: (v, wv)), (w, wv, lambda v: (xv, v))):
        fd = np.zeros(4)
        for k in range(4):
            p, m = base.copy(), base.copy()
            p[k] += h
            m[k] -= h
            fd[k] = (chain_reference(*other(p)) - chain_reference(*other(m))) / (2 * h)
        np.testing.assert_allclose(arr.grad.numpy(), fd, rtol=1e-6)


def test_backward_with_grads_seeds_an_intermediate():
    xv = np.array([0.3, -0.6, 1.1, 0.2])
    tape, x, w, z, l = chain(xv, np.ones(4))
    tape.reset()
    with tape:
        wp.launch(stage1, dim=4, inputs=[x], outputs=[wp.zeros(4, dtype=f64)])
    out = wp.zeros(4, dtype=f64)
    tape2 = wp.Tape()
    with tape2:
        wp.launch(stage1, dim=4, inputs=[x], outputs=[out])
    tape2.backward(grads={out: wp.array([1.0, 2.0, 3.0, 4.0], dtype=f64)})
    want = (np.sin(xv) + xv * np.cos(xv)) * np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)
    # the store's adjoint consumed the seed (the stored value is gone before the kernel), as in Warp 1.19
    assert tape2.gradients[out].numpy().tolist() == [0.0, 0.0, 0.0, 0.0]


def test_record_func_runs_in_backward():
    calls = []
    tape = wp.Tape()
    a = wp.zeros(1, dtype=f64, requires_grad=True)
    with tape:
        tape.record_func(lambda: calls.append("back"), arrays=[a])
    tape.backward(grads={a: wp.ones(1, dtype=f64)})
    assert calls == ["back"]


# -- adjoint launches -----------------------------------------------------------------------------
def test_adjoint_launch_checks_adjoint_shapes_and_counts():
    x = wp.zeros(4, dtype=f64)
    y = wp.zeros(4, dtype=f64)
    with pytest.raises(wp.LaunchError, match="adj_inputs has 2 entries, expected 1"):
        wp.launch(stage1, dim=4, inputs=[x], outputs=[y], adjoint=True, adj_inputs=[None, None],
                  adj_outputs=[None])
    with pytest.raises(wp.LaunchError, match=r"argument 'adj_x': its shape \(3,\) differs from the shape \(4,\)"):
        wp.launch(stage1, dim=4, inputs=[x], outputs=[y], adjoint=True, adj_inputs=[wp.zeros(3, dtype=f64)],
                  adj_outputs=[None])


# -- the seeds' optimisation loops ---------------------------------------------------------------------
def test_minimise_sum_of_squares_of_points():
    rng = np.random.default_rng(0)
    xs = wp.array(rng.normal(size=(100, 2)), dtype=wp.float32, requires_grad=True)
    l = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square_sum, dim=len(xs), inputs=[xs], outputs=[l])
    first = l.numpy()[0]
    for _ in range(100):
        tape.zero()
        tape.backward(loss=l)
        xs.numpy()[...] -= 0.1 * xs.grad.numpy()
        l.zero_()
        wp.launch(square_sum, dim=len(xs), inputs=[xs], outputs=[l])
    assert first > 100.0
    assert l.numpy()[0] < 1e-12


@wp.kernel
def eval_rosenbrock(xs: wp.array(dtype=float, ndim=2), z: wp.array(dtype=float)):
    i = wp.tid()
    x = xs[i, 0]
    y = xs[i, 1]
    z[i] = (1.0 - x) ** 2.0 + 100.0 * (y - x ** 2.0) ** 2.0


def adam(grad_fn, x0, steps, lr=5e-2, b1=0.9, b2=0.999, eps=1e-8):
    """The seed's torch.optim.Adam, in numpy; grad_fn(x) -> gradient."""
    x = x0.copy()
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    for t in range(1, steps + 1):
        g = grad_fn(x)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        x -= lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
    return x


def rosenbrock_grad(p):
    x, y = p[:, 0], p[:, 1]
    return np.stack([-2 * (1 - x) - 400 * x * (y - x * x), 200 * (y - x * x)], axis=1)


def rosenbrock(p):
    return (1 - p[:, 0]) ** 2 + 100 * (p[:, 1] - p[:, 0] ** 2) ** 2


def test_rosenbrock_with_adjoint_launches_follows_the_exact_gradient_to_the_minimum():
    rng = np.random.default_rng(42)
    n = 1500
    start = rng.normal(size=(n, 2))
    xy = wp.array(start, dtype=wp.float32, requires_grad=True)
    z = wp.zeros(n, requires_grad=True)

    def mlwarp_grad(p):  # as the seed's Rosenbrock.backward: adjoint launch with adj_z = 1
        xy.numpy()[...] = p
        wp.launch(kernel=eval_rosenbrock, dim=n, inputs=[xy], outputs=[z])
        xy.grad.zero_()
        z.grad.fill_(1.0)
        wp.launch(kernel=eval_rosenbrock, dim=n, inputs=[xy], outputs=[z], adj_inputs=[xy.grad],
                  adj_outputs=[z.grad], adjoint=True)
        return xy.grad.numpy().astype(np.float64)

    got = adam(mlwarp_grad, start, 3000)
    want = adam(rosenbrock_grad, start, 3000)
    assert np.mean(rosenbrock(got)) < np.mean(rosenbrock(start)) / 1000
    np.testing.assert_allclose(np.mean(got, axis=0), np.mean(want, axis=0), atol=2e-3)
    np.testing.assert_allclose(np.mean(got, axis=0), [1.0, 1.0], atol=0.05)  # the minimum


@wp.struct
class _Pair:
    x: wp.array(dtype=float)
    y: wp.array(dtype=float)


@wp.kernel
def _pair_mul(p: _Pair, z: wp.array(dtype=float)):
    i = wp.tid()
    z[i] = p.x[i] * p.y[i]


def test_reset_keeps_gradient_entries_zeroed():
    # as Warp: reset() zeroes tape.gradients' arrays and keeps the entries (a struct's too)
    tape = wp.Tape()
    with tape:
        p = _Pair()
        p.x = wp.array([2.0, 3.0], dtype=float, requires_grad=True)
        p.y = wp.array([5.0, 7.0], dtype=float, requires_grad=True)
        z = wp.zeros(2, dtype=float, requires_grad=True)
        wp.launch(_pair_mul, 2, inputs=[p], outputs=[z])
    tape.backward(grads={z: wp.ones_like(z)})
    np.testing.assert_array_equal(tape.gradients[p].x.numpy(), [5.0, 7.0])
    tape.reset()
    assert not tape.launches
    np.testing.assert_array_equal(tape.gradients[p].x.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(tape.gradients[p].y.numpy(), [0.0, 0.0])
