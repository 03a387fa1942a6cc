"""Loop adjoints in linear time (warp-autodiff's loop tape): a loop whose reverse needs its carried state
keeps each iteration's state on the thread's stack, or, past TAPE_BYTES, checkpoints every k-th state and
re-runs the segments. Both paths against numpy forwards (float64) and central differences of them, with trip
counts on each side of the tape's capacity and at its edges (0, 1, exactly full, one past full, a partial
last segment). The tape also keeps the results of the body's libm builtins (sin, exp, ...), which the
reverse reads instead of calling them again."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.compiler.passes.registry import TAPE_BYTES

from grad_util import check_against_numpy

f64 = wp.float64
FLOAT64_STATES = TAPE_BYTES // 8  # iterations whose f64 state fills the tape
TAPED_SIN_ITERATIONS = TAPE_BYTES // 16  # iterations whose f64 state and f64 sin (a taped builtin) fill it


def arr(values, dtype=f64):
    return wp.array(np.asarray(values), dtype=dtype, requires_grad=True)


def out(n, dtype=f64):
    return wp.zeros(n, dtype=dtype, requires_grad=True)


@wp.kernel
def damped_iteration(x: wp.array(dtype=f64), a: f64, n: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    for _ in range(n):
        v = v + a * wp.sin(v)
    y[i] = v


def damped_reference(x, a, n):
    v = x.copy()
    for _ in range(n):
        v = v + a * np.sin(v)
    return v


@pytest.mark.parametrize("n", [0, 1, 7, TAPED_SIN_ITERATIONS, TAPED_SIN_ITERATIONS + 1, 2 * TAPED_SIN_ITERATIONS + 5])
def test_a_dynamic_loop_whose_reverse_needs_every_state(n):
    """Each iteration's state and sin(state) go into the tape (sin is a libm builtin: the reverse reads it for
    a's adjoint, beside cos(state) for v's)."""
    # 1e-4: the gradient is a product of n factors near 1, so it stays O(1) at any n
    check_against_numpy(damped_iteration, 3, [arr([0.3, 1.1, 2.5]), 1.0e-4, n], [out(3)], damped_reference,
                        tangents=False)


@wp.struct
class Body:
    p: wp.vec3d
    w: f64


@wp.kernel
def orbit(x: wp.array(dtype=wp.vec3d), s: wp.array(dtype=f64), n: int, y: wp.array(dtype=wp.vec3d),
          z: wp.array(dtype=f64)):
    i = wp.tid()
    b = Body()
    b.p = x[i]
    b.w = s[i]
    k = int(0)
    for j in range(n):
        b.p = b.p + wp.cross(b.p, wp.vec3d(f64(0.0), f64(0.0), f64(1.0e-3))) * b.w
        b.w = b.w * f64(0.9999) + f64(1.0e-4) * wp.cos(b.p[0])
        k = k + j % 3
    y[i] = b.p
    z[i] = b.w + f64(k) * f64(1.0e-6)


def orbit_reference(x, s, n):
    p, w = x.copy(), s.copy()
    k = 0
    axis = np.array([0.0, 0.0, 1.0e-3])
    for j in range(n):
        p = p + np.cross(p, axis) * w[:, None]
        w = w * 0.9999 + 1.0e-4 * np.cos(p[:, 0])
        k += j % 3
    return p, w + k * 1.0e-6


@pytest.mark.parametrize("n", [5, 3000])  # 32 bytes of state + an int: 3000 iterations take checkpoints
def test_a_struct_a_vector_and_an_int_carried(n):
    x = arr([[1.0, 0.5, 0.2], [-0.3, 2.0, 1.0]], wp.vec3d)
    check_against_numpy(orbit, 2, [x, arr([0.7, 1.3]), n], [out(2, wp.vec3d), out(2)], orbit_reference,
                        grad_rtol=1e-5, tangents=False)


@wp.kernel
def halving(x: wp.array(dtype=f64), y: wp.array(dtype=f64), steps: wp.array(dtype=int)):
    i = wp.tid()
    v = x[i]
    n = int(0)
    while v > f64(1.0e-3):
        v = v * f64(0.999) - f64(1.0e-7) * wp.sin(v)
        n += 1
    y[i] = v * f64(1.0e3) + wp.sqrt(v)
    steps[i] = n


def halving_reference(x):
    ys, ns = [], []
    for v in x:
        n = 0
        while v > 1.0e-3:
            v = v * 0.999 - 1.0e-7 * np.sin(v)
            n += 1
        ys.append(v * 1.0e3 + np.sqrt(v))
        ns.append(n)
    return np.array(ys), np.array(ns)


def test_a_while_loop_past_the_tape_takes_checkpoints():
    # about 12,000 iterations (> FLOAT64_STATES); the inputs sit far from the step where the count changes
    steps = wp.zeros(2, dtype=int)
    (_, counts), _ = check_against_numpy(halving, 2, [arr([150.0, 190.0])], [out(2), steps], halving_reference,
                                         grad_rtol=1e-5, tangents=False)
    assert counts.min() > FLOAT64_STATES


@wp.kernel
def nested(x: wp.array(dtype=f64), n: int, m: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    for _ in range(n):
        u = v
        for _ in range(m):
            u = u * f64(0.99) + wp.sin(u) * f64(0.01)
        v = v + u * u * f64(1.0e-3)
    y[i] = v


def nested_reference(x, n, m):
    v = x.copy()
    for _ in range(n):
        u = v.copy()
        for _ in range(m):
            u = u * 0.99 + np.sin(u) * 0.01
        v = v + u * u * 1.0e-3
    return v


def test_nested_loops_each_taped():
    check_against_numpy(nested, 2, [arr([0.4, 1.7]), 30, 40], [out(2)], nested_reference, tangents=False)


@wp.kernel
def float32_loop(x: wp.array(dtype=float), n: int, y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    for _ in range(n):
        v = v + 1.0e-5 * wp.sin(v)
    y[i] = v


def test_the_tape_gradient_equals_the_product_of_the_step_derivatives():
    # closed form: dv_n/dv_0 = prod_k (1 + 1e-5 cos v_k), the v_k from a float64 numpy forward
    x0 = np.array([0.1, 0.6, 2.0, 3.0], dtype=np.float32)
    n = 20000  # past the tape for a float32 state (16384): checkpoints
    x = wp.array(x0, dtype=float, requires_grad=True)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(float32_loop, 4, inputs=[x, n, y])
    tape.backward(grads={y: wp.ones(4, dtype=float)})
    v, d = x0.astype(np.float64), np.ones(4)
    for _ in range(n):
        d *= 1.0 + 1.0e-5 * np.cos(v)
        v = v + 1.0e-5 * np.sin(v)
    np.testing.assert_allclose(y.numpy(), v, rtol=1e-4)
    np.testing.assert_allclose(x.grad.numpy(), d, rtol=1e-3)


@wp.kernel
def two_taped_builtins(x: wp.array(dtype=f64), a: f64, b: f64, n: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    for _ in range(n):
        e = wp.exp(-v * v)
        v = v + a * wp.sin(v) * e + b * e
    y[i] = v


def two_taped_reference(x, a, b, n):
    v = x.copy()
    for _ in range(n):
        e = np.exp(-v * v)
        v = v + a * np.sin(v) * e + b * e
    return v


@pytest.mark.parametrize("n", [3, TAPE_BYTES // 24, TAPE_BYTES // 24 + 1, 3 * (TAPE_BYTES // 24) + 2])
def test_two_taped_builtins_whose_results_the_reverse_reads_for_every_adjoint(n):
    """exp(-v^2) and sin(v) (24 bytes an iteration with the state) feed v's, a's and b's adjoints; on each side
    of the tape's capacity (one segment; checkpoints)."""
    check_against_numpy(two_taped_builtins, 3, [arr([0.3, -1.1, 2.5]), 1.0e-3, -2.0e-4, n], [out(3)],
                        two_taped_reference, tangents=False)
