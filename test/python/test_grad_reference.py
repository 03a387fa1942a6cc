"""Loops, branches, composites, structs and @wp.func calls against references that do not run mlwarp: each
kernel's forward against a numpy implementation written here, its wp.Tape gradient against central
differences of that numpy forward (or a closed form). Finite differences of mlwarp's own forward would agree
with a frontend that computes the wrong function (a component write lost in a loop makes both wrong alike).

Inputs are kept away from branch thresholds by far more than the difference step, so every difference sees
the same decisions. Warp 1.19.0 is wrong on adjoints of in-place composite updates (`v[1] *= c`, `v += v`,
`t.q = ...`); mlwarp follows the finite differences there."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlwarp as wp

from grad_util import check_against_numpy

f64 = wp.float64
RNG = np.random.default_rng(20261201)


def arr(values, dtype, grad=True):
    return wp.array(np.asarray(values), dtype=dtype, requires_grad=grad)


def out(n, dtype=f64):
    return wp.zeros(n, dtype=dtype, requires_grad=True)


def per_thread(fn, *columns):
    """numpy reference helper: fn applied to each thread's row of every column; stacked."""
    return np.array([fn(*row) for row in zip(*columns)], dtype=np.float64)


def cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def quat_rotate(q, v):
    """Warp's formula, also off the unit sphere (the differences leave it): v (2w^2 - 1) + 2 q (q.v) + 2w q x v."""
    qv, w = np.asarray(q[:3]), q[3]
    return v * (2 * w * w - 1) + qv * (2 * np.dot(qv, v)) + cross(qv, v) * (2 * w)


def quat_mul(a, b):
    av, aw, bv, bw = np.asarray(a[:3]), a[3], np.asarray(b[:3]), b[3]
    return np.concatenate([aw * bv + bw * av + cross(av, bv), [aw * bw - np.dot(av, bv)]])


# == loops ===================================================================================================
@wp.kernel
def static_loop_carried(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    for k in range(4):
        v = v * wp.sin(v) + f64(0.5) * f64(k)
    y[i] = v


def test_static_range_with_carried_state():
    def ref(x):
        def one(v):
            for k in range(4):
                v = v * math.sin(v) + 0.5 * k
            return v
        return per_thread(one, x)

    check_against_numpy(static_loop_carried, 4, [arr([0.3, -0.8, 1.1, 2.2], f64)], [out(4)], ref)


@wp.kernel
def horner_runtime_bounds(x: wp.array(dtype=f64), lo: int, hi: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    s = f64(0.0)
    for k in range(lo, hi):
        s = s * x[i] + f64(k)
    y[i] = s


@pytest.mark.parametrize("lo,hi", [(1, 6), (3, 3), (4, 2), (-2, 2)])
def test_dynamic_range_with_runtime_bounds(lo, hi):
    def ref(x, lo, hi):
        def one(xv):
            s = 0.0
            for k in range(lo, hi):
                s = s * xv + k
            return s
        return per_thread(one, x)

    xv = np.array([0.5, -1.25, 2.0])
    _, grads = check_against_numpy(horner_runtime_bounds, 3, [arr(xv, f64), lo, hi], [out(3)], ref)
    # closed form: s = sum_k k x^(hi-1-k), ds/dx = sum_k k (hi-1-k) x^(hi-2-k)
    want = sum(k * (hi - 1 - k) * xv ** (hi - 2 - k) for k in range(lo, hi) if hi - 1 - k > 0)
    weights = np.random.default_rng(0).uniform(-1.0, 1.0, size=3)
    np.testing.assert_allclose(grads[0], weights * want, rtol=1e-12, atol=1e-12)


@wp.kernel
def negative_step(x: wp.array(dtype=f64), a: wp.array(dtype=f64), lo: int, hi: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    for k in range(hi - 1, lo - 1, -2):
        v = v * a[i] + wp.cos(v) * f64(k)
    y[i] = v


def test_dynamic_range_with_a_negative_step():
    def ref(x, a, lo, hi):
        def one(v, av):
            for k in range(hi - 1, lo - 1, -2):
                v = v * av + math.cos(v) * k
            return v
        return per_thread(one, x, a)

    check_against_numpy(negative_step, 3, [arr([0.3, -0.7, 1.2], f64), arr([0.9, 0.6, -0.5], f64), 1, 6],
                        [out(3)], ref)


@wp.kernel
def while_data_dependent(x: wp.array(dtype=f64), y: wp.array(dtype=f64), steps: wp.array(dtype=int)):
    i = wp.tid()
    v = x[i]
    n = int(0)
    while v > f64(1.0):
        v = v * f64(0.5) + wp.sin(v) * f64(0.1)
        n += 1
    y[i] = v * v + f64(n)
    steps[i] = n


def test_while_with_a_data_dependent_trip_count():
    def ref(x):
        ys, ns = [], []
        for v in x:
            n = 0
            while v > 1.0:
                v = v * 0.5 + math.sin(v) * 0.1
                n += 1
            ys.append(v * v + n)
            ns.append(n)
        return np.array(ys), np.array(ns)

    steps = wp.zeros(4, dtype=int)
    check_against_numpy(while_data_dependent, 4, [arr([0.5, 3.0, 7.5, 40.0], f64)], [out(4), steps], ref)


@wp.kernel
def nested_static_dynamic(x: wp.array(dtype=f64), n: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    for k in range(3):
        u = v
        for j in range(n + k):
            u = u * f64(0.9) + wp.cos(u) * f64(0.1)
        v = v + u * v * f64(0.25)
    y[i] = v


def test_nested_static_and_dynamic_loops():
    def ref(x, n):
        def one(v):
            for k in range(3):
                u = v
                for _ in range(n + k):
                    u = u * 0.9 + math.cos(u) * 0.1
                v = v + u * v * 0.25
            return v
        return per_thread(one, x)

    check_against_numpy(nested_static_dynamic, 3, [arr([0.2, -0.4, 0.9], f64), 2], [out(3)], ref)


@wp.kernel
def nested_dynamic_triangular(x: wp.array(dtype=f64), n: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    s = f64(0.0)
    for k in range(n):
        p = f64(1.0)
        for j in range(k + 1):
            p = p * x[(i + j) % n]
        s += p
    y[i] = s


def test_nested_dynamic_loops_reading_other_threads_elements():
    def ref(x, n):
        ys = []
        for i in range(n):
            s = 0.0
            for k in range(n):
                s += np.prod([x[(i + j) % n] for j in range(k + 1)])
            ys.append(s)
        return np.array(ys)

    check_against_numpy(nested_dynamic_triangular, 4, [arr([0.5, -1.5, 1.2, 0.8], f64), 4], [out(4)], ref)


@wp.kernel
def break_and_continue(x: wp.array(dtype=f64), n: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    for k in range(n):
        if k % 3 == 1:
            continue
        v = v * v * f64(0.5) + x[i]
        if v > f64(3.0):
            break
    y[i] = v


def test_break_and_continue_in_a_dynamic_loop():
    def ref(x, n):
        def one(xv):
            v = xv
            for k in range(n):
                if k % 3 == 1:
                    continue
                v = v * v * 0.5 + xv
                if v > 3.0:
                    break
            return v
        return per_thread(one, x)

    # trip counts differ per thread: 0.3 never breaks, 1.4 and 2.1 break at different iterations
    check_against_numpy(break_and_continue, 4, [arr([0.3, 1.4, 2.1, -0.9], f64), 7], [out(4)], ref)


@wp.kernel
def while_with_break(x: wp.array(dtype=f64), n: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    k = int(0)
    while k < n:
        k += 1
        if v > f64(5.0):
            break
        v = v * f64(1.5) + wp.exp(-v)
    y[i] = v * f64(k)


def test_while_with_a_counter_and_break():
    def ref(x, n):
        def one(v):
            k = 0
            while k < n:
                k += 1
                if v > 5.0:
                    break
                v = v * 1.5 + math.exp(-v)
            return v * k
        return per_thread(one, x)

    check_against_numpy(while_with_break, 3, [arr([0.2, 2.5, 6.0], f64), 8], [out(3)], ref)


# == branches ================================================================================================
@wp.kernel
def merged_branches(x: wp.array(dtype=f64), y: wp.array(dtype=f64), z: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    a = v
    b = f64(1.0)
    if v > f64(0.5):
        a = v * v * f64(3.0)
    elif v > f64(-0.5):
        b = wp.sin(v) + v
    else:
        a = -v
        b = v * v
    w = a * f64(2.0) if x[i] < f64(1.0) else wp.exp(a)
    y[i] = w * b
    z[i] = a - b


def test_if_elif_else_with_values_merged_from_each_branch():
    def ref(x):
        ys, zs = [], []
        for v in x:
            a, b = v, 1.0
            if v > 0.5:
                a = v * v * 3.0
            elif v > -0.5:
                b = math.sin(v) + v
            else:
                a, b = -v, v * v
            w = a * 2.0 if v < 1.0 else math.exp(a)
            ys.append(w * b)
            zs.append(a - b)
        return np.array(ys), np.array(zs)

    check_against_numpy(merged_branches, 6, [arr([-1.3, -0.2, 0.3, 0.7, 1.4, 2.0], f64)], [out(6), out(6)], ref)


@wp.kernel
def branch_in_loop(x: wp.array(dtype=f64), n: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    peak = f64(0.0)
    for k in range(n):
        v = wp.sin(v * f64(2.0)) + v * f64(0.5)
        if v > peak:
            peak = v
    y[i] = peak + v


def test_value_assigned_in_one_branch_inside_a_loop():
    def ref(x, n):
        def one(v):
            peak = 0.0
            for _ in range(n):
                v = math.sin(v * 2.0) + v * 0.5
                if v > peak:
                    peak = v
            return peak + v
        return per_thread(one, x)

    check_against_numpy(branch_in_loop, 4, [arr([0.3, -0.8, 1.7, 2.9], f64), 5], [out(4)], ref)


@wp.func
def first_crossing(x: f64, n: int):
    v = x
    for k in range(n):
        if v > f64(2.0):
            return v * f64(k)
        v = v * v + f64(0.1)
    if v < f64(0.0):
        return f64(-1.0)
    return -v


@wp.kernel
def calls_early_return(x: wp.array(dtype=f64), n: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = first_crossing(x[i], n) * x[i]


def test_early_return_inside_a_loop_of_a_func():
    def ref(x, n):
        def crossing(v):
            for k in range(n):
                if v > 2.0:
                    return v * k
                v = v * v + 0.1
            return -1.0 if v < 0.0 else -v
        return per_thread(lambda v: crossing(v) * v, x)

    check_against_numpy(calls_early_return, 4, [arr([0.3, 1.2, 1.6, 3.0], f64), 4], [out(4)], ref)


@wp.func
def piecewise(x: f64):
    if x < f64(0.0):
        return x * x
    if x < f64(1.0):
        return wp.sin(x)
    return wp.sqrt(x) + f64(0.5)


@wp.kernel
def calls_piecewise(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = piecewise(x[i]) + piecewise(x[i] * f64(2.0))


def test_func_with_several_early_returns():
    def ref(x):
        def pw(v):
            return v * v if v < 0.0 else (math.sin(v) if v < 1.0 else math.sqrt(v) + 0.5)
        return per_thread(lambda v: pw(v) + pw(2 * v), x)

    check_against_numpy(calls_piecewise, 4, [arr([-0.7, 0.2, 0.8, 1.9], f64)], [out(4)], ref)


# == composites ==============================================================================================
@wp.kernel
def component_writes_static(x: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    u = x[i]
    for j in range(3):
        u[j] = u[j] * f64(j + 1)
    y[i] = u


def test_component_writes_in_a_static_loop():
    # the example: [1, 2, 3] -> [1, 4, 9]; the gradient is the constant scale (closed form)
    x = np.array([[1.0, 2.0, 3.0], [-0.5, 0.25, 4.0]])
    got, grads = check_against_numpy(component_writes_static, 2, [arr(x, wp.vec3d)], [out(2, wp.vec3d)],
                                     lambda x: x * np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(got[0][0], [1.0, 4.0, 9.0])
    w = np.random.default_rng(0).uniform(-1.0, 1.0, size=(2, 3))
    np.testing.assert_allclose(grads[0], w * [1.0, 2.0, 3.0], rtol=1e-15)


@wp.kernel
def component_writes_dynamic(x: wp.array(dtype=wp.vec3d), s: wp.array(dtype=f64), n: int,
                             y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    u = x[i]
    for j in range(n):
        u[j % 3] = u[(j + 1) % 3] * s[i] + wp.sin(u[j % 3])
    y[i] = u


def test_component_writes_in_a_dynamic_loop():
    def ref(x, s, n):
        def one(u, sv):
            u = u.copy()
            for j in range(n):
                u[j % 3] = u[(j + 1) % 3] * sv + math.sin(u[j % 3])
            return u
        return per_thread(one, x, s)

    x = RNG.uniform(-1.0, 1.0, size=(3, 3))
    check_against_numpy(component_writes_dynamic, 3, [arr(x, wp.vec3d), arr([0.5, -1.2, 0.9], f64), 7],
                        [out(3, wp.vec3d)], ref)


@wp.kernel
def component_writes_f32(x: wp.array(dtype=wp.vec3), n: int, y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    u = x[i]
    for j in range(n):
        u[j % 3] = u[j % 3] * float(j + 1)
    y[i] = u


def test_component_writes_in_a_dynamic_loop_float32():
    x = np.array([[1.0, 2.0, 3.0], [0.5, -0.25, 2.0]], dtype=np.float32)
    got, grads = check_against_numpy(component_writes_f32, 2, [arr(x, wp.vec3), 3], [out(2, wp.vec3)],
                                     lambda x, n: x * np.array([1.0, 2.0, 3.0]), rtol=1e-6, atol=1e-6,
                                     grad_rtol=1e-3, grad_atol=1e-4)
    np.testing.assert_array_equal(got[0][0], [1.0, 4.0, 9.0])
    w = np.random.default_rng(0).uniform(-1.0, 1.0, size=(2, 3)).astype(np.float32)
    np.testing.assert_allclose(grads[0], w * np.float32([1.0, 2.0, 3.0]), rtol=1e-6)


@wp.kernel
def compound_component_updates(x: wp.array(dtype=wp.vec3d), c: wp.array(dtype=f64), n: int,
                               y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = x[i]
    for j in range(n):
        v[j % 3] *= c[i]
        v[(j + 2) % 3] += v[j % 3] * f64(0.5)
        v[(j + 1) % 3] -= wp.cos(v[(j + 2) % 3]) * f64(0.25)
    y[i] = v


def test_compound_assignments_to_components_in_a_loop():
    def ref(x, c, n):
        def one(v, cv):
            v = v.copy()
            for j in range(n):
                v[j % 3] *= cv
                v[(j + 2) % 3] += v[j % 3] * 0.5
                v[(j + 1) % 3] -= math.cos(v[(j + 2) % 3]) * 0.25
            return v
        return per_thread(one, x, c)

    x = RNG.uniform(-1.0, 1.0, size=(3, 3))
    check_against_numpy(compound_component_updates, 3, [arr(x, wp.vec3d), arr([0.8, -1.1, 1.3], f64), 5],
                        [out(3, wp.vec3d)], ref)


@wp.kernel
def attribute_updates_in_while(x: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = x[i]
    k = int(0)
    while k < 4:
        v.y += v.x * v.z
        v.x = v.x * f64(0.5) + wp.sin(v.y)
        v.z *= f64(0.9)
        k += 1
    y[i] = v


def test_attribute_updates_in_a_while_loop():
    def ref(x):
        def one(v):
            vx, vy, vz = v
            for _ in range(4):
                vy += vx * vz
                vx = vx * 0.5 + math.sin(vy)
                vz *= 0.9
            return [vx, vy, vz]
        return per_thread(one, x)

    check_against_numpy(attribute_updates_in_while, 3, [arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d)],
                        [out(3, wp.vec3d)], ref)


@wp.kernel
def component_writes_in_branches(x: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    u = x[i]
    if u[0] > f64(0.0):
        u.y = u.x * u.z
        u[2] += f64(1.0)
    else:
        u[0] = -u[0] * u[1]
    y[i] = u


def test_component_writes_merged_across_if_else():
    def ref(x):
        def one(u):
            u = u.copy()
            if u[0] > 0.0:
                u[1] = u[0] * u[2]
                u[2] += 1.0
            else:
                u[0] = -u[0] * u[1]
            return u
        return per_thread(one, x)

    x = np.array([[0.7, 0.2, -1.1], [-0.6, 1.5, 0.3], [1.2, -0.4, 0.8]])
    check_against_numpy(component_writes_in_branches, 3, [arr(x, wp.vec3d)], [out(3, wp.vec3d)], ref)


@wp.kernel
def matrix_writes_and_products(x: wp.array(dtype=wp.vec3d), a: wp.array(dtype=f64), y: wp.array(dtype=wp.vec3d),
                               d: wp.array(dtype=f64)):
    i = wp.tid()
    m = wp.mat33d()
    for r in range(3):
        for c in range(3):
            m[r, c] = wp.cos(a[i] * f64(r + 1) + f64(c)) + f64(1.0 if r == c else 0.0)
    v = m * x[i]
    v = wp.transpose(m) @ v
    y[i] = v
    d[i] = wp.determinant(m)


def test_matrix_component_writes_in_nested_loops_and_matrix_vector_products():
    def ref(x, a):
        ys, ds = [], []
        for xv, av in zip(x, a):
            m = np.array([[math.cos(av * (r + 1) + c) + (r == c) for c in range(3)] for r in range(3)])
            ys.append(m.T @ (m @ xv))
            ds.append(np.linalg.det(m))
        return np.array(ys), np.array(ds)

    check_against_numpy(matrix_writes_and_products, 3,
                        [arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d), arr([0.3, -0.9, 1.4], f64)],
                        [out(3, wp.vec3d), out(3)], ref, rtol=1e-9)


@wp.kernel
def matrix_row_updates(m: wp.array(dtype=wp.mat33d), n: int, y: wp.array(dtype=wp.mat33d)):
    i = wp.tid()
    a = m[i]
    for k in range(n):
        a[k % 3] = a[k % 3] + a[(k + 1) % 3] * f64(0.5)
        a[1, k % 3] *= f64(1.1)
    y[i] = a


def test_matrix_row_and_element_updates_in_a_dynamic_loop():
    def ref(m, n):
        def one(a):
            a = a.copy()
            for k in range(n):
                a[k % 3] = a[k % 3] + a[(k + 1) % 3] * 0.5
                a[1, k % 3] *= 1.1
            return a
        return np.array([one(a) for a in m])

    check_against_numpy(matrix_row_updates, 2, [arr(RNG.uniform(-1, 1, size=(2, 3, 3)), wp.mat33d), 5],
                        [out(2, wp.mat33d)], ref)


@wp.kernel
def geometry(a: wp.array(dtype=wp.vec3d), b: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.vec3d),
             s: wp.array(dtype=f64)):
    i = wp.tid()
    n = wp.normalize(a[i])
    c = wp.cross(n, b[i])
    y[i] = c + n * wp.dot(c, b[i])
    s[i] = wp.length(c) * wp.length_sq(b[i])


def test_normalize_cross_dot_length():
    def ref(a, b):
        n = a / np.linalg.norm(a, axis=1, keepdims=True)
        c = np.cross(n, b)
        y = c + n * np.sum(c * b, axis=1, keepdims=True)
        return y, np.linalg.norm(c, axis=1) * np.sum(b * b, axis=1)

    check_against_numpy(geometry, 4, [arr(RNG.uniform(-1, 1, size=(4, 3)), wp.vec3d),
                                      arr(RNG.uniform(-1, 1, size=(4, 3)), wp.vec3d)],
                        [out(4, wp.vec3d), out(4)], ref, rtol=1e-12)


@wp.kernel
def geometry_f32(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    n = wp.normalize(a[i])
    y[i] = wp.cross(n, b[i]) * wp.length(b[i])


def test_normalize_cross_length_float32():
    def ref(a, b):
        n = a / np.linalg.norm(a, axis=1, keepdims=True)
        return np.cross(n, b) * np.linalg.norm(b, axis=1, keepdims=True)

    a = RNG.uniform(0.3, 1.0, size=(4, 3)).astype(np.float32)
    b = RNG.uniform(-1.0, 1.0, size=(4, 3)).astype(np.float32)
    check_against_numpy(geometry_f32, 4, [arr(a, wp.vec3), arr(b, wp.vec3)], [out(4, wp.vec3)], ref,
                        rtol=1e-5, atol=1e-6, grad_rtol=1e-3, grad_atol=1e-4, h=1e-4)


@wp.kernel
def rotations(q: wp.array(dtype=wp.quatd), p: wp.array(dtype=wp.quatd), v: wp.array(dtype=wp.vec3d),
              y: wp.array(dtype=wp.vec3d), r: wp.array(dtype=wp.quatd)):
    i = wp.tid()
    qp = q[i] * p[i]
    y[i] = wp.quat_rotate(qp, v[i]) + wp.quat_rotate_inv(q[i], v[i])
    r[i] = qp * wp.quat_inverse(p[i])


def test_quaternion_rotation_and_product():
    def ref(q, p, v):
        ys, rs = [], []
        for qi, pi, vi in zip(q, p, v):
            qp = quat_mul(qi, pi)
            qinv = np.concatenate([-qi[:3], [qi[3]]])
            ys.append(quat_rotate(qp, vi) + quat_rotate(qinv, vi))  # Warp: quat_rotate_inv = rotate by conjugate
            rs.append(quat_mul(qp, np.concatenate([-pi[:3], [pi[3]]])))
        return np.array(ys), np.array(rs)

    def unit(k):
        u = RNG.normal(size=(k, 4))
        return u / np.linalg.norm(u, axis=1, keepdims=True)

    check_against_numpy(rotations, 3, [arr(unit(3), wp.quatd), arr(unit(3), wp.quatd),
                                       arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d)],
                        [out(3, wp.vec3d), out(3, wp.quatd)], ref, rtol=1e-12)


@wp.kernel
def rotate_in_a_loop(q: wp.array(dtype=wp.quatd), v: wp.array(dtype=wp.vec3d), n: int, y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    u = v[i]
    r = q[i]
    for k in range(n):
        u = wp.quat_rotate(r, u) + wp.vec3d(f64(0.1), f64(0.0), f64(0.0))
        r = wp.normalize(r * r)
    y[i] = u


def test_quaternion_carried_through_a_dynamic_loop():
    def ref(q, v, n):
        def one(r, u):
            for _ in range(n):
                u = quat_rotate(r, u) + np.array([0.1, 0.0, 0.0])
                r = quat_mul(r, r)
                r = r / np.linalg.norm(r)
            return u
        return per_thread(one, q, v)

    qs = RNG.normal(size=(3, 4))
    check_against_numpy(rotate_in_a_loop, 3, [arr(qs / np.linalg.norm(qs, axis=1, keepdims=True), wp.quatd),
                                              arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d), 3],
                        [out(3, wp.vec3d)], ref, rtol=1e-12)


@wp.kernel
def rigid_integrator(x: wp.array(dtype=wp.vec3d), w: wp.array(dtype=wp.vec3d), dt: f64, n: int,
                     y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = x[i]
    for k in range(n):
        v = v + wp.cross(w[i], v) * dt
        v = v * (f64(1.0) / wp.length(v))
    y[i] = v


def test_vector_carried_through_a_dynamic_loop():
    def ref(x, w, dt, n):
        def one(v, wv):
            for _ in range(n):
                v = v + cross(wv, v) * dt
                v = v / np.linalg.norm(v)
            return v
        return per_thread(one, x, w)

    check_against_numpy(rigid_integrator, 3, [arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d),
                                              arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d), 0.1, 6],
                        [out(3, wp.vec3d)], ref, rtol=1e-12)


# -- in-place composite updates: Warp 1.19.0's adjoints are wrong here, finite differences decide -------------
@wp.kernel
def inplace_component_scale(x: wp.array(dtype=wp.vec3d), c: wp.array(dtype=f64), y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = x[i]
    v[1] *= c[i]
    v[2] += v[1] * v[0]
    y[i] = v


def test_inplace_component_multiply_adjoint_matches_finite_differences():
    x = np.array([[0.5, 2.0, -1.0], [1.5, -0.5, 0.25]])
    c = np.array([3.0, -2.0])

    def ref(x, c):
        y = x.copy()
        y[:, 1] *= c
        y[:, 2] += y[:, 1] * y[:, 0]
        return y

    _, grads = check_against_numpy(inplace_component_scale, 2, [arr(x, wp.vec3d), arr(c, f64)],
                                   [out(2, wp.vec3d)], ref)
    # closed form (Warp 1.19.0 gives d y1 / d x1 = c + 1 for `v[1] *= c`): y = (x0, c x1, x2 + c x1 x0)
    w = np.random.default_rng(0).uniform(-1.0, 1.0, size=(2, 3))
    x0, x1 = x[:, 0], x[:, 1]
    want_x = np.stack([w[:, 0] + w[:, 2] * c * x1, w[:, 1] * c + w[:, 2] * c * x0, w[:, 2]], axis=1)
    np.testing.assert_allclose(grads[0], want_x, rtol=1e-12)
    np.testing.assert_allclose(grads[1], w[:, 1] * x1 + w[:, 2] * x1 * x0, rtol=1e-12)


@wp.kernel
def inplace_self_add(x: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = x[i]
    v += v
    v *= v[0]
    y[i] = v


def test_inplace_self_add_adjoint_matches_finite_differences():
    def ref(x):
        v = 2 * x
        return v * v[:, :1]

    x = np.array([[0.5, 2.0, -1.0], [1.5, -0.5, 0.25]])
    _, grads = check_against_numpy(inplace_self_add, 2, [arr(x, wp.vec3d)], [out(2, wp.vec3d)], ref)
    # closed form for adj_y = w: y = 4 x0 x, dy_k/dx_j = 4 (x0 delta_kj + x_k delta_j0)
    w = np.random.default_rng(0).uniform(-1.0, 1.0, size=(2, 3))
    want = 4 * x[:, :1] * w
    want[:, 0] += 4 * np.sum(w * x, axis=1)
    np.testing.assert_allclose(grads[0], want, rtol=1e-12)


@wp.kernel
def transform_field_assignment(p: wp.array(dtype=wp.vec3d), q: wp.array(dtype=wp.quatd),
                               v: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    t = wp.transformd(p[i], wp.quatd(f64(0.0), f64(0.0), f64(0.0), f64(1.0)))
    t.q = q[i]
    t.p = t.p * f64(2.0)
    y[i] = wp.transform_point(t, v[i])


def test_transform_field_assignment_adjoint_matches_finite_differences():
    def ref(p, q, v):
        return np.array([2 * pi + quat_rotate(qi, vi) for pi, qi, vi in zip(p, q, v)])

    qs = RNG.normal(size=(3, 4))
    check_against_numpy(transform_field_assignment, 3,
                        [arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d),
                         arr(qs / np.linalg.norm(qs, axis=1, keepdims=True), wp.quatd),
                         arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d)], [out(3, wp.vec3d)], ref, rtol=1e-12)


@wp.kernel
def quat_component_assignment(q: wp.array(dtype=wp.quatd), v: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    r = q[i]
    r.w *= f64(2.0)
    r[0] = r[0] + r.w
    y[i] = wp.quat_rotate(r, v[i])


def test_quaternion_component_updates():
    def ref(q, v):
        ys = []
        for r, vi in zip(q, v):
            r = r.copy()
            r[3] *= 2.0
            r[0] = r[0] + r[3]
            ys.append(quat_rotate(r, vi))
        return np.array(ys)

    check_against_numpy(quat_component_assignment, 3, [arr(RNG.uniform(-1, 1, size=(3, 4)), wp.quatd),
                                                       arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d)],
                        [out(3, wp.vec3d)], ref, rtol=1e-12)


# == structs =================================================================================================
@wp.struct
class State:
    pos: wp.vec3d
    vel: wp.vec3d
    energy: f64


@wp.kernel
def integrate_struct_local(x: wp.array(dtype=wp.vec3d), g: wp.array(dtype=wp.vec3d), n: int,
                           y: wp.array(dtype=wp.vec3d), e: wp.array(dtype=f64)):
    i = wp.tid()
    s = State()
    s.pos = x[i]
    for k in range(n):
        s.vel += g[i] * f64(0.1) - s.pos * f64(0.2)
        s.pos = s.pos + s.vel * f64(0.1)
        s.energy += wp.dot(s.vel, s.vel)
        s.pos[1] *= f64(0.95)
    y[i] = s.pos
    e[i] = s.energy


def test_struct_local_with_field_writes_in_a_loop():
    def ref(x, g, n):
        ys, es = [], []
        for pos, gv in zip(x, g):
            pos, vel, energy = pos.copy(), np.zeros(3), 0.0
            for _ in range(n):
                vel = vel + gv * 0.1 - pos * 0.2
                pos = pos + vel * 0.1
                energy += np.dot(vel, vel)
                pos[1] *= 0.95
            ys.append(pos)
            es.append(energy)
        return np.array(ys), np.array(es)

    check_against_numpy(integrate_struct_local, 3, [arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d),
                                                    arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d), 5],
                        [out(3, wp.vec3d), out(3)], ref, rtol=1e-12)


@wp.kernel
def struct_field_writes_in_while(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    s = State()
    s.energy = x[i]
    while s.energy < f64(10.0):
        s.energy = s.energy * f64(1.7) + f64(0.3)
        s.vel.x += s.energy
    y[i] = s.energy + s.vel[0]


def test_struct_field_writes_in_a_while_loop():
    def ref(x):
        def one(e):
            vx = 0.0
            while e < 10.0:
                e = e * 1.7 + 0.3
                vx += e
            return e + vx
        return per_thread(one, x)

    check_against_numpy(struct_field_writes_in_while, 3, [arr([0.5, 4.0, 12.0], f64)], [out(3)], ref)


@wp.struct
class Particle:
    pos: wp.vec3d
    mass: f64
    id: int


@wp.kernel
def particle_energy(ps: wp.array(dtype=Particle), e: wp.array(dtype=f64)):
    i = wp.tid()
    p = ps[i]
    q = p
    q.mass = p.mass * f64(2.0)  # a copy: p keeps its mass
    e[i] = q.mass * wp.dot(p.pos, p.pos) + wp.sin(p.pos[1]) * f64(p.id) + p.mass


def particles(pos, mass):
    a = wp.zeros(len(mass), dtype=Particle, requires_grad=True)
    v = a.numpy()
    v["pos"], v["mass"], v["id"] = pos, mass, np.arange(1, len(mass) + 1)
    return a


def test_array_of_structs_fields_and_a_copy_with_a_field_replaced():
    def ref(ps):
        return (2 * ps["mass"] * np.sum(ps["pos"] ** 2, axis=1) + np.sin(ps["pos"][:, 1]) * ps["id"]
                + ps["mass"])

    _, grads = check_against_numpy(particle_energy, 3, [particles(RNG.normal(size=(3, 3)), np.array([0.5, 1.5, 2.5]))],
                                   [out(3)], ref)
    np.testing.assert_array_equal(grads[0]["id"], 0)


@wp.kernel
def struct_array_field_loop(ps: wp.array(dtype=Particle), x: wp.array(dtype=f64), n: int, e: wp.array(dtype=f64)):
    i = wp.tid()
    p = ps[i]
    s = f64(0.0)
    for k in range(n):
        p.pos[k % 3] = p.pos[k % 3] * x[k] + p.mass
        s += p.mass * wp.length(p.pos) * x[k]
    e[i] = s


def test_struct_from_an_array_updated_in_a_loop():
    def ref(ps, x, n):
        ys = []
        for pos, mass in zip(ps["pos"], ps["mass"]):
            pos, s = pos.copy(), 0.0
            for k in range(n):
                pos[k % 3] = pos[k % 3] * x[k] + mass
                s += mass * np.linalg.norm(pos) * x[k]
            ys.append(s)
        return np.array(ys)

    check_against_numpy(struct_array_field_loop, 3, [particles(RNG.normal(size=(3, 3)), np.array([0.5, 1.5, 2.5])),
                                                     arr([0.9, -1.1, 0.7, 1.3], f64), 4], [out(3)], ref)


@wp.struct
class Params:
    scale: f64
    offset: wp.vec3d
    steps: int


@wp.func
def apply(p: Params, v: wp.vec3d):
    p.scale = p.scale * f64(2.0)  # changes the func's copy only
    for k in range(p.steps):
        v = v * p.scale + p.offset
    return v


@wp.kernel
def struct_by_value(x: wp.array(dtype=wp.vec3d), p: Params, y: wp.array(dtype=wp.vec3d), s: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = apply(p, x[i])
    s[i] = p.scale * x[i][0]


def test_struct_by_value_kernel_argument_and_func_argument():
    p = Params()
    p.scale, p.offset, p.steps = 0.6, wp.vec3d(0.1, -0.2, 0.3), 3

    def ref(x, p):
        v = x.copy()
        for _ in range(3):
            v = v * 1.2 + np.array([0.1, -0.2, 0.3])
        return v, 0.6 * x[:, 0]

    check_against_numpy(struct_by_value, 3, [arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d), p],
                        [out(3, wp.vec3d), out(3)], ref, rtol=1e-12)


@wp.kernel
def vec_by_value(x: wp.array(dtype=f64), g: wp.vec3d, y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    y[i] = g * x[i] * x[i]


def test_vector_by_value_kernel_argument():
    def ref(x, g):
        return np.outer(x * x, np.asarray(g))

    check_against_numpy(vec_by_value, 3, [arr([0.5, -1.0, 2.0], f64), wp.vec3d(1.0, 2.0, -3.0)],
                        [out(3, wp.vec3d)], ref)


# == @wp.func calls ============================================================================================
@wp.func
def spring_force(a: wp.vec3d, b: wp.vec3d, rest: f64):
    d = b - a
    l = wp.length(d)
    return d * ((l - rest) / l)


@wp.func
def relax(v: wp.vec3d, anchor: wp.vec3d, n: int):
    for k in range(n):
        v = v + spring_force(v, anchor, f64(0.5)) * f64(0.3)
    return v


@wp.kernel
def func_with_loop(x: wp.array(dtype=wp.vec3d), a: wp.array(dtype=wp.vec3d), n: int, y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = x[i]
    for k in range(2):
        v = relax(v, a[i], n)
    y[i] = v


def test_nested_funcs_with_loops_and_vector_results():
    def ref(x, a, n):
        def one(v, anchor):
            for _ in range(2 * n):
                d = anchor - v
                l = np.linalg.norm(d)
                v = v + d * ((l - 0.5) / l) * 0.3
            return v
        return per_thread(one, x, a)

    check_against_numpy(func_with_loop, 3, [arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d),
                                            arr(RNG.uniform(1, 2, size=(3, 3)), wp.vec3d), 3],
                        [out(3, wp.vec3d)], ref, rtol=1e-12)


@wp.func
def scale_first(v: wp.vec3d, c: f64):
    v[0] = v[0] * c  # the caller's vector is a copy
    return v[0] + v[1]


@wp.kernel
def func_arguments_are_copies(x: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.vec3d), s: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    s[i] = scale_first(v, f64(3.0))
    y[i] = v


def test_func_component_write_does_not_reach_the_caller():
    def ref(x):
        return x, 3 * x[:, 0] + x[:, 1]

    check_against_numpy(func_arguments_are_copies, 3, [arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d)],
                        [out(3, wp.vec3d), out(3)], ref)


@wp.func
def polar(x: f64, y: f64):
    return wp.sqrt(x * x + y * y), wp.atan2(y, x)


@wp.kernel
def tuple_returns(p: wp.array(dtype=wp.vec2d), y: wp.array(dtype=f64)):
    i = wp.tid()
    r, t = polar(p[i][0], p[i][1])
    y[i] = r * wp.cos(t * f64(2.0))


def test_func_with_a_tuple_return():
    def ref(p):
        r = np.hypot(p[:, 0], p[:, 1])
        t = np.arctan2(p[:, 1], p[:, 0])
        return r * np.cos(2 * t)

    check_against_numpy(tuple_returns, 4, [arr(RNG.uniform(0.2, 1, size=(4, 2)) * [[1, 1], [-1, 1], [1, -1], [-1, -1]],
                                                wp.vec2d)], [out(4)], ref, rtol=1e-12)


@wp.kernel
def atomics_from_a_loop(x: wp.array(dtype=f64), n: int, total: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    for k in range(n):
        v = v * f64(0.5) + wp.sin(v)
        wp.atomic_add(total, k % 2, v * v)


def test_atomic_adds_inside_a_dynamic_loop():
    def ref(x, n):
        t = np.zeros(2)
        for v in x:
            for k in range(n):
                v = v * 0.5 + math.sin(v)
                t[k % 2] += v * v
        return t

    check_against_numpy(atomics_from_a_loop, 4, [arr([0.3, -0.8, 1.2, 2.0], f64), 5], [out(2)], ref)


# == more combinations: float32 composites and structs, carried matrices, funcs returning composites =========
@wp.struct
class Body32:
    pos: wp.vec3
    vel: wp.vec3
    damping: float


@wp.kernel
def integrate_f32(x: wp.array(dtype=wp.vec3), d: wp.array(dtype=float), n: int, y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    b = Body32()
    b.pos = x[i]
    b.damping = d[i]
    for k in range(n):
        b.vel = b.vel * b.damping + wp.vec3(0.0, -0.1, 0.0) - b.pos * 0.3
        b.pos += b.vel * 0.1
        b.pos[0] = wp.sin(b.pos[0])
    y[i] = b.pos


def test_float32_struct_local_in_a_dynamic_loop():
    def ref(x, d, n):
        ys = []
        for pos, damping in zip(x, d):
            pos, vel = pos.copy(), np.zeros(3)
            for _ in range(n):
                vel = vel * damping + np.array([0.0, -0.1, 0.0]) - pos * 0.3
                pos = pos + vel * 0.1
                pos[0] = math.sin(pos[0])
            ys.append(pos)
        return np.array(ys)

    x = RNG.uniform(-1, 1, size=(3, 3)).astype(np.float32)
    check_against_numpy(integrate_f32, 3, [arr(x, wp.vec3), arr(np.float32([0.9, 0.7, 0.95]), float), 6],
                        [out(3, wp.vec3)], ref, rtol=1e-5, atol=1e-6, grad_rtol=1e-3, grad_atol=1e-4, h=1e-4)


@wp.kernel
def matrix_power_f32(m: wp.array(dtype=wp.mat33), v: wp.array(dtype=wp.vec3), n: int, y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    a = m[i]
    p = wp.identity(n=3, dtype=float)
    for k in range(n):
        p = p @ a
        p[k % 3, k % 3] += 0.5
    y[i] = p @ v[i]


def test_float32_matrix_carried_through_a_dynamic_loop():
    def ref(m, v, n):
        ys = []
        for a, vi in zip(m, v):
            p = np.eye(3)
            for k in range(n):
                p = p @ a
                p[k % 3, k % 3] += 0.5
            ys.append(p @ vi)
        return np.array(ys)

    m = (RNG.uniform(-0.5, 0.5, size=(2, 3, 3)) + np.eye(3) * 0.5).astype(np.float32)
    check_against_numpy(matrix_power_f32, 2, [arr(m, wp.mat33), arr(RNG.uniform(-1, 1, size=(2, 3)).astype(np.float32),
                                                                    wp.vec3), 4],
                        [out(2, wp.vec3)], ref, rtol=1e-5, atol=1e-5, grad_rtol=1e-3, grad_atol=1e-3, h=1e-3)


@wp.kernel
def matrix_elements_dynamic_bounds(x: wp.array(dtype=wp.mat33d), rows: int, cols: int, y: wp.array(dtype=wp.mat33d)):
    i = wp.tid()
    m = x[i]
    for r in range(rows):
        for c in range(cols):
            m[r, c] += m[c, r] * m[r, r]
            if m[r, c] > f64(0.0):
                m[r, c] = wp.sqrt(m[r, c])
    y[i] = m


def test_matrix_element_updates_in_nested_dynamic_loops_with_a_branch():
    def ref(x, rows, cols):
        ys = []
        for m in x:
            m = m.copy()
            for r in range(rows):
                for c in range(cols):
                    m[r, c] += m[c, r] * m[r, r]
                    if m[r, c] > 0.0:
                        m[r, c] = math.sqrt(m[r, c])
            ys.append(m)
        return np.array(ys)

    # values kept away from 0 after each update, so no difference crosses the branch
    x = np.array([[[0.9, -0.8, 0.7], [1.2, 0.6, -1.1], [-0.9, 1.3, 1.4]],
                  [[1.1, 0.5, -1.2], [-0.7, 0.8, 0.9], [0.6, -1.3, 1.2]]])
    check_against_numpy(matrix_elements_dynamic_bounds, 2, [arr(x, wp.mat33d), 3, 2], [out(2, wp.mat33d)], ref)


@wp.kernel
def array_element_components(x: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    y[i] = x[i] * f64(2.0)
    y[i].y = x[i].x * x[i].z
    y[i][2] += wp.sin(x[i][1])


def test_component_writes_into_array_elements():
    def ref(x):
        y = 2 * x
        y[:, 1] = x[:, 0] * x[:, 2]
        y[:, 2] += np.sin(x[:, 1])
        return y

    check_against_numpy(array_element_components, 3, [arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d)],
                        [out(3, wp.vec3d)], ref)


@wp.func
def make_state(p: wp.vec3d, speed: f64):
    s = State()
    s.pos = p
    s.vel = wp.normalize(p) * speed
    s.energy = speed * speed * f64(0.5)
    return s


@wp.func
def reflect_first_negative(v: wp.vec3d):
    for j in range(3):
        if v[j] < f64(0.0):
            v[j] = -v[j] * f64(0.5)
            return v
    return v * f64(2.0)


@wp.kernel
def funcs_returning_composites(x: wp.array(dtype=wp.vec3d), s: wp.array(dtype=f64), y: wp.array(dtype=wp.vec3d),
                               e: wp.array(dtype=f64)):
    i = wp.tid()
    st = make_state(x[i], s[i])
    st.pos = st.pos + st.vel
    y[i] = reflect_first_negative(st.pos)
    e[i] = st.energy + wp.dot(st.vel, x[i])


def test_funcs_returning_a_struct_and_a_vector_with_early_returns_in_a_loop():
    def ref(x, s):
        ys, es = [], []
        for p, speed in zip(x, s):
            vel = p / np.linalg.norm(p) * speed
            pos = p + vel
            v = pos.copy()
            for j in range(3):
                if v[j] < 0.0:
                    v[j] = -v[j] * 0.5
                    break
            else:
                v = v * 2.0
            ys.append(v)
            es.append(speed * speed * 0.5 + np.dot(vel, p))
        return np.array(ys), np.array(es)

    x = np.array([[0.5, -0.7, 0.3], [0.8, 0.6, 0.9], [-0.6, 0.4, -0.5]])
    check_against_numpy(funcs_returning_composites, 3, [arr(x, wp.vec3d), arr([0.3, 0.2, 0.4], f64)],
                        [out(3, wp.vec3d), out(3)], ref)


@wp.kernel
def merged_composites(x: wp.array(dtype=wp.vec3d), q: wp.array(dtype=wp.quatd), y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = x[i]
    r = q[i]
    s = State()
    if v[0] > f64(0.0):
        v = wp.quat_rotate(r, v)
        s.vel = v * f64(2.0)
    else:
        r = r * r
        s.pos = wp.cross(v, x[i] + wp.vec3d(f64(1.0), f64(0.0), f64(0.0)))
        v.z = r.w
    y[i] = v + s.vel + s.pos


def test_vectors_quaternions_and_structs_merged_across_if_else():
    def ref(x, q):
        ys = []
        for v, r in zip(x, q):
            vel, pos = np.zeros(3), np.zeros(3)
            if v[0] > 0.0:
                v2 = quat_rotate(r, v)
                vel = v2 * 2.0
            else:
                r = quat_mul(r, r)
                pos = cross(v, v + np.array([1.0, 0.0, 0.0]))
                v2 = v.copy()
                v2[2] = r[3]
            ys.append(v2 + vel + pos)
        return np.array(ys)

    x = np.array([[0.6, -0.2, 0.4], [-0.5, 0.3, 0.9], [0.9, 0.1, -0.3], [-0.8, -0.6, 0.2]])
    qs = RNG.normal(size=(4, 4))
    check_against_numpy(merged_composites, 4, [arr(x, wp.vec3d), arr(qs / np.linalg.norm(qs, axis=1, keepdims=True),
                                                                     wp.quatd)], [out(4, wp.vec3d)], ref)


@wp.kernel
def continue_in_while(x: wp.array(dtype=wp.vec3d), n: int, y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = x[i]
    k = int(0)
    while k < n:
        k += 1
        if k % 2 == 0:
            v.x *= f64(1.1)
            continue
        v = wp.vec3d(v.y, v.z, v.x) + v * f64(0.2)
    y[i] = v


def test_continue_in_a_while_loop_over_a_vector():
    def ref(x, n):
        def one(v):
            v = v.copy()
            k = 0
            while k < n:
                k += 1
                if k % 2 == 0:
                    v[0] *= 1.1
                    continue
                v = np.array([v[1], v[2], v[0]]) + v * 0.2
            return v
        return per_thread(one, x)

    check_against_numpy(continue_in_while, 3, [arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d), 7],
                        [out(3, wp.vec3d)], ref)


# -- arrays of structs as outputs ------------------------------------------------------------------------------
def particle_records(pos, mass, ids):
    r = np.zeros(len(mass), dtype=[("pos", np.float64, 3), ("mass", np.float64), ("id", np.int32)])
    r["pos"], r["mass"], r["id"] = pos, mass, ids
    return r


@wp.kernel
def struct_store(ps: wp.array(dtype=Particle), n: int, out: wp.array(dtype=Particle)):
    i = wp.tid()
    p = ps[i]
    for k in range(n):
        p.mass *= f64(1.5)
        p.pos = p.pos * p.mass + wp.vec3d(f64(0.0), f64(k), f64(0.0))
        p.id += 1
    out[i] = p


def test_struct_updated_in_a_loop_stored_into_an_array_of_structs():
    def ref(ps, n):
        pos, mass, ids = ps["pos"].copy(), ps["mass"].copy(), ps["id"].copy()
        for k in range(n):
            mass = mass * 1.5
            pos = pos * mass[:, None] + np.array([0.0, k, 0.0])
            ids = ids + 1
        return particle_records(pos, mass, ids)

    check_against_numpy(struct_store, 3, [particles(RNG.uniform(-1, 1, size=(3, 3)), np.array([0.5, 0.8, 1.1])), 3],
                        [wp.zeros(3, dtype=Particle, requires_grad=True)], ref)


@wp.kernel
def struct_field_stores(x: wp.array(dtype=wp.vec3d), m: wp.array(dtype=f64), out: wp.array(dtype=Particle)):
    i = wp.tid()
    out[i].mass = m[i] * m[i]
    out[i].pos = x[i] * m[i]
    out[i].id = i


def test_field_stores_into_an_array_of_structs():
    def ref(x, m):
        return particle_records(x * m[:, None], m * m, np.arange(3))

    check_against_numpy(struct_field_stores, 3, [arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d),
                                                 arr([0.5, -1.5, 2.0], f64)],
                        [wp.zeros(3, dtype=Particle, requires_grad=True)], ref)


@wp.kernel
def struct_store_then_field_store(ps: wp.array(dtype=Particle), out: wp.array(dtype=Particle)):
    i = wp.tid()
    out[i] = ps[i]
    out[i].mass = ps[i].mass * wp.length(ps[i].pos)


def test_struct_store_then_a_field_store_into_the_same_element():
    # the same class as /tmp/grad_repro_1.py: the field store must not pass its adjoint to the earlier store
    def ref(ps):
        return particle_records(ps["pos"], ps["mass"] * np.linalg.norm(ps["pos"], axis=1), ps["id"])

    check_against_numpy(struct_store_then_field_store, 3,
                        [particles(RNG.uniform(-1, 1, size=(3, 3)), np.array([0.5, 0.8, 1.1]))],
                        [wp.zeros(3, dtype=Particle, requires_grad=True)], ref)


# == nested structs, 2-D launches, kernel returns, other sizes, a two-kernel tape ================================
@wp.struct
class Spring:
    rest: f64
    ends: wp.vec2d


@wp.struct
class Chain:
    spring: Spring
    tip: wp.vec3d


@wp.kernel
def nested_struct_local(x: wp.array(dtype=wp.vec3d), n: int, y: wp.array(dtype=wp.vec3d), r: wp.array(dtype=f64)):
    i = wp.tid()
    c = Chain()
    c.tip = x[i]
    c.spring.rest = f64(1.0)
    for k in range(n):
        c.spring.ends.y += c.tip.x * f64(0.5)
        c.spring.rest *= f64(0.9) + c.spring.ends[1] * f64(0.1)
        c.tip.z = c.tip.z * c.spring.rest + c.spring.ends.y
    y[i] = c.tip
    r[i] = c.spring.rest


def test_nested_struct_local_with_nested_member_writes_in_a_loop():
    def ref(x, n):
        ys, rs = [], []
        for tip in x:
            tip, rest, ends_y = tip.copy(), 1.0, 0.0
            for _ in range(n):
                ends_y += tip[0] * 0.5
                rest *= 0.9 + ends_y * 0.1
                tip[2] = tip[2] * rest + ends_y
            ys.append(tip)
            rs.append(rest)
        return np.array(ys), np.array(rs)

    check_against_numpy(nested_struct_local, 3, [arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d), 4],
                        [out(3, wp.vec3d), out(3)], ref)


@wp.kernel
def stencil_2d(x: wp.array(dtype=wp.vec2d, ndim=2), y: wp.array(dtype=f64, ndim=2)):
    i, j = wp.tid()
    v = x[i, j]
    if i > 0:
        v = v + x[i - 1, j] * f64(0.5)
    if j + 1 < x.shape[1]:
        v.y *= x[i, j + 1].x
    y[i, j] = wp.dot(v, v) + wp.sin(v.x)


def test_two_dimensional_launch_over_vectors():
    def ref(x):
        y = np.zeros(x.shape[:2])
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                v = x[i, j].copy()
                if i > 0:
                    v = v + x[i - 1, j] * 0.5
                if j + 1 < x.shape[1]:
                    v[1] *= x[i, j + 1, 0]
                y[i, j] = np.dot(v, v) + math.sin(v[0])
        return y

    check_against_numpy(stencil_2d, (3, 4), [arr(RNG.uniform(-1, 1, size=(3, 4, 2)), wp.vec2d)],
                        [wp.zeros((3, 4), dtype=f64, requires_grad=True)], ref)


@wp.kernel
def kernel_return_in_loop(x: wp.array(dtype=f64), n: int, y: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    for k in range(n):
        v = v * v + f64(0.25)
        if v > f64(2.0):
            y[i] = v * f64(k + 1)
            return
    y[i] = -v


def test_kernel_return_inside_a_loop():
    def ref(x, n):
        def one(v):
            for k in range(n):
                v = v * v + 0.25
                if v > 2.0:
                    return v * (k + 1)
            return -v
        return per_thread(one, x)

    check_against_numpy(kernel_return_in_loop, 4, [arr([0.1, 0.9, 1.3, -1.6], f64), 5], [out(4)], ref)


@wp.kernel
def other_sizes(a: wp.array(dtype=wp.vec4d), m: wp.array(dtype=wp.mat44d), b: wp.array(dtype=wp.vec2d),
                k: wp.array(dtype=wp.mat22d), y: wp.array(dtype=wp.vec4d), z: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    v = m[i] * a[i]
    for j in range(4):
        v[j] = v[j] * a[i][3 - j]
    y[i] = wp.normalize(v) + wp.outer(b[i], b[i])[0, 1] * a[i]
    w = k[i] * b[i]
    w.x += wp.determinant(k[i])
    z[i] = wp.transpose(k[i]) * w


def test_vec4_mat44_vec2_mat22():
    def ref(a, m, b, k):
        ys, zs = [], []
        for ai, mi, bi, ki in zip(a, m, b, k):
            v = mi @ ai
            v = v * ai[::-1]
            ys.append(v / np.linalg.norm(v) + np.outer(bi, bi)[0, 1] * ai)
            w = ki @ bi
            w[0] += np.linalg.det(ki)
            zs.append(ki.T @ w)
        return np.array(ys), np.array(zs)

    check_against_numpy(other_sizes, 3, [arr(RNG.uniform(-1, 1, size=(3, 4)), wp.vec4d),
                                         arr(RNG.uniform(-1, 1, size=(3, 4, 4)), wp.mat44d),
                                         arr(RNG.uniform(-1, 1, size=(3, 2)), wp.vec2d),
                                         arr(RNG.uniform(-1, 1, size=(3, 2, 2)), wp.mat22d)],
                        [out(3, wp.vec4d), out(3, wp.vec2d)], ref, rtol=1e-12)


@wp.kernel
def rotate_points(q: wp.array(dtype=wp.quatd), p: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = p[i]
    for k in range(3):
        v = wp.quat_rotate(q[0], v)
        v[k] += f64(0.1)
    out[i] = v


@wp.kernel
def spread(p: wp.array(dtype=wp.vec3d), loss: wp.array(dtype=f64)):
    i = wp.tid()
    c = p[(i + 1) % 4] - p[i]
    wp.atomic_add(loss, 0, wp.dot(c, c) * wp.length(p[i]))


def test_two_kernel_tape_over_vectors_and_a_shared_quaternion():
    # q[0] is read by every thread: its adjoint adds up over threads and through the second kernel
    def forward_np(q, p):
        rotated = []
        for v in p:
            v = v.copy()
            for k in range(3):
                v = quat_rotate(q[0], v)
                v[k] += 0.1
            rotated.append(v)
        rotated = np.array(rotated)
        c = np.roll(rotated, -1, axis=0) - rotated
        return np.sum(np.sum(c * c, axis=1) * np.linalg.norm(rotated, axis=1))

    qv = np.array([[0.3, -0.5, 0.2, 0.8]])
    qv /= np.linalg.norm(qv)
    pv = RNG.uniform(-1, 1, size=(4, 3))
    q, p = arr(qv, wp.quatd), arr(pv, wp.vec3d)
    mid, loss = out(4, wp.vec3d), out(1)
    tape = wp.Tape()
    with tape:
        wp.launch(rotate_points, 4, inputs=[q, p], outputs=[mid])
        wp.launch(spread, 4, inputs=[mid], outputs=[loss])
    assert loss.numpy()[0] == pytest.approx(forward_np(qv, pv), rel=1e-12)
    tape.backward(loss=loss)
    for got, j in ((q.grad.numpy(), 0), (p.grad.numpy(), 1)):
        base = [qv, pv]
        want = np.zeros_like(base[j])
        for idx in np.ndindex(base[j].shape):
            plus, minus = [b.copy() for b in base], [b.copy() for b in base]
            plus[j][idx] += 1e-6
            minus[j][idx] -= 1e-6
            want[idx] = (forward_np(*plus) - forward_np(*minus)) / 2e-6
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


# -- the in-place updates Warp 1.19.0 gets wrong, inside loops ------------------------------------------------
@wp.kernel
def inplace_updates_in_loops(x: wp.array(dtype=wp.vec3d), q: wp.array(dtype=wp.quatd), m: wp.array(dtype=wp.mat33d),
                             n: int, y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = x[i]
    t = wp.transformd(wp.vec3d(), q[i])
    a = m[i]
    k = int(0)
    while k < n:
        v += v * f64(0.5)
        v[k % 3] *= a[k % 3, 0]
        a[(k + 1) % 3] *= f64(0.8)
        r = t.q
        r.x += v.y * f64(0.1)
        t.q = wp.normalize(r)
        t.p += v * f64(0.1)
        k += 1
    y[i] = wp.transform_point(t, a * v)


def test_inplace_vector_quaternion_matrix_and_transform_updates_in_a_while_loop():
    def ref(x, q, m, n):
        ys = []
        for v, r0, a in zip(x, q, m):
            v, a, rot, p = v.copy(), a.copy(), r0.copy(), np.zeros(3)
            for k in range(n):
                v = v + v * 0.5
                v[k % 3] *= a[k % 3, 0]
                a[(k + 1) % 3] *= 0.8
                r = rot.copy()
                r[0] += v[1] * 0.1
                rot = r / np.linalg.norm(r)
                p = p + v * 0.1
            ys.append(p + quat_rotate(rot, a @ v))
        return np.array(ys)

    qs = RNG.normal(size=(3, 4))
    check_against_numpy(inplace_updates_in_loops, 3,
                        [arr(RNG.uniform(-1, 1, size=(3, 3)), wp.vec3d),
                         arr(qs / np.linalg.norm(qs, axis=1, keepdims=True), wp.quatd),
                         arr(RNG.uniform(-1, 1, size=(3, 3, 3)), wp.mat33d), 4], [out(3, wp.vec3d)], ref, rtol=1e-12)
