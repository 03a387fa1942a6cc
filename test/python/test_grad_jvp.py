"""Forward mode (wp.jvp) against central finite differences in float64: every differentiable builtin of
the table (generated, as in test_grad_builtins.py), control flow, scalar tangents, atomics; and forward
mode agrees with reverse mode (<J v, w> = <v, J^T w>)."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.compiler.builtins.table import BUILTINS

from test_grad_builtins import N, SCALAR_DIFFERENTIABLE, builtin_kernel, forward, sample_points

f64 = wp.float64


@pytest.mark.parametrize("name", SCALAR_DIFFERENTIABLE)
def test_builtin_tangent_matches_finite_differences(tmp_path, name):
    nargs = len(BUILTINS[name].args)
    kernel = builtin_kernel(tmp_path, name, nargs)
    xs = sample_points(nargs, seed=sum(map(ord, name)) + 1)
    ok = np.isfinite(forward(kernel, xs))
    rng = np.random.default_rng(3)
    dirs = [rng.uniform(-1, 1, N) for _ in xs]
    y, dy = wp.zeros(N, dtype=f64), wp.zeros(N, dtype=f64)
    wp.jvp(kernel, N, inputs=[wp.array(x, dtype=f64) for x in xs], outputs=[y],
           tan_inputs=[wp.array(d, dtype=f64) for d in dirs], tan_outputs=[dy])
    # the jvp loop is another loop: LLVM may vectorise it at another width, so a libm call may be another
    # libmvec variant (or the scalar call), within 4 ulp (docs/robustness.md)
    np.testing.assert_array_max_ulp(y.numpy()[ok], forward(kernel, xs)[ok], maxulp=4)
    h = 1e-6
    fd = (forward(kernel, [x + h * d for x, d in zip(xs, dirs)])
          - forward(kernel, [x - h * d for x, d in zip(xs, dirs)])) / (2 * h)
    np.testing.assert_allclose(dy.numpy()[ok], fd[ok], rtol=1e-5, atol=1e-6, err_msg=f"jvp of {name}")


@wp.kernel
def recurrence(x: wp.array(dtype=f64), a: f64, y: wp.array(dtype=f64), n: int):
    i = wp.tid()
    v = x[i]
    for k in range(n):
        v = v * a + wp.sin(v)
    if v > f64(0.0):
        v = v * f64(2.0)
    while v > f64(1.0):
        v = v * f64(0.5)
    y[i] = v


def run(xv, a, n):
    """numpy forward of `recurrence`: the differences below are of it, not of mlwarp's forward."""
    v = np.array(xv, dtype=np.float64)
    for _ in range(n):
        v = v * a + np.sin(v)
    v = np.where(v > 0.0, v * 2.0, v)
    for k in range(len(v)):
        while v[k] > 1.0:
            v[k] *= 0.5
    return v


def test_loops_and_branches_and_a_scalar_tangent():
    xv = np.array([-0.95, -0.45, 0.55, 0.95])
    a, n, h = 0.7, 3, 1e-6
    y = wp.zeros(4, dtype=f64)
    wp.launch(recurrence, dim=4, inputs=[wp.array(xv, dtype=f64), a], outputs=[y, n])
    np.testing.assert_allclose(y.numpy(), run(xv, a, n), rtol=1e-14)
    dy = wp.zeros(4, dtype=f64)
    # tangent along a only: d y / d a (reverse mode drops scalar gradients, forward mode has them)
    wp.jvp(recurrence, 4, inputs=[wp.array(xv, dtype=f64), a], outputs=[wp.zeros(4, dtype=f64), n],
           tan_inputs=[None, 1.0], tan_outputs=[dy, None])
    np.testing.assert_allclose(dy.numpy(), (run(xv, a + h, n) - run(xv, a - h, n)) / (2 * h), rtol=1e-6)
    # along x
    d = np.array([1.0, -2.0, 0.5, 3.0])
    wp.jvp(recurrence, 4, inputs=[wp.array(xv, dtype=f64), a], outputs=[wp.zeros(4, dtype=f64), n],
           tan_inputs=[wp.array(d, dtype=f64), None], tan_outputs=[dy, None])
    np.testing.assert_allclose(dy.numpy(), (run(xv + h * d, a, n) - run(xv - h * d, a, n)) / (2 * h), rtol=1e-6)


@wp.kernel
def mix(x: wp.array(dtype=f64), l: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_add(l, 0, x[i] * x[i])
    y[i] = wp.exp(x[(i + 1) % 3]) * x[i]


def test_forward_and_reverse_mode_agree():
    xv = np.array([0.3, -0.7, 1.2])
    v = np.array([0.5, 1.0, -2.0])
    w_l, w_y = np.array([1.5]), np.array([1.0, -1.0, 2.0])
    dl, dy = wp.zeros(1, dtype=f64), wp.zeros(3, dtype=f64)
    wp.jvp(mix, 3, inputs=[wp.array(xv, dtype=f64)], outputs=[wp.zeros(1, dtype=f64), wp.zeros(3, dtype=f64)],
           tan_inputs=[wp.array(v, dtype=f64)], tan_outputs=[dl, dy])
    adj_x = wp.zeros(3, dtype=f64)
    wp.launch(mix, dim=3, inputs=[wp.array(xv, dtype=f64)], outputs=[wp.zeros(1, dtype=f64), wp.zeros(3, dtype=f64)],
              adjoint=True, adj_inputs=[adj_x], adj_outputs=[wp.array(w_l, dtype=f64), wp.array(w_y, dtype=f64)])
    forward_side = dl.numpy() @ w_l + dy.numpy() @ w_y
    reverse_side = v @ adj_x.numpy()
    assert forward_side == pytest.approx(reverse_side, rel=1e-12)
    np.testing.assert_allclose(dl.numpy(), [2 * xv @ v], rtol=1e-12)


def test_jvp_is_not_recorded_by_a_tape_and_checks_counts():
    tape = wp.Tape()
    x = wp.zeros(3, dtype=f64)
    with tape:
        wp.jvp(mix, 3, inputs=[x], outputs=[wp.zeros(1, dtype=f64), wp.zeros(3, dtype=f64)])
    assert tape.launches == []
    with pytest.raises(wp.LaunchError, match="tan_inputs has 2 entries, expected 1"):
        wp.jvp(mix, 3, inputs=[x], outputs=[wp.zeros(1, dtype=f64), wp.zeros(3, dtype=f64)],
               tan_inputs=[None, None])
