"""Control flow in kernels: if/elif/else, range loops, while, break, continue, return, carried locals.
Each kernel is checked against the same function run as plain Python."""

import numpy as np
import pytest

import mlwarp as wp


def launch_ints(kernel, inputs, n):
    out = wp.zeros(n, dtype=int)
    inputs = [wp.array(v) if isinstance(v, np.ndarray) else v for v in inputs]
    wp.launch(kernel, dim=n, inputs=[*inputs, out])
    return list(out.numpy())


@wp.kernel
def if_elif_else(x: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    v = x[i]
    if v < 0:
        r = -1
    elif v == 0:
        r = 0
    elif v < 10:
        r = 1
    else:
        r = 2
    out[i] = r


def test_if_elif_else():
    x = np.array([-5, 0, 3, 10, 99], np.int32)
    assert launch_ints(if_elif_else, [x], 5) == [-1, 0, 1, 2, 2]


@wp.kernel
def if_without_else_reassigns(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    if v > 1.0:
        v = v * 2.0
        if v > 10.0:
            v = 10.0
    out[i] = v


def test_if_reassigns_a_local_in_nested_branches():
    out = wp.zeros(4)
    wp.launch(if_without_else_reassigns, dim=4, inputs=[wp.array(np.array([0.5, 2.0, 6.0, -1.0], np.float32)), out])
    assert list(out.numpy()) == [0.5, 4.0, 10.0, -1.0]


@wp.kernel
def conditional_expression(x: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = x[i] * 2 if x[i] > 2 else -x[i]


def test_conditional_expression():
    assert launch_ints(conditional_expression, [np.array([1, 2, 3, 4], np.int32)], 4) == [-1, -2, 6, 8]


# -- range loops -------------------------------------------------------------------------------
@wp.kernel
def range_loops(start: int, stop: int, step: int, out: wp.array(dtype=int)):
    i = wp.tid()
    r = 0
    if i == 0:
        for k in range(stop):  # one argument
            r = r * 3 + k
    elif i == 1:
        for k in range(start, stop):  # runtime bounds
            r = r * 3 + k
    elif i == 2:
        for k in range(start, stop, step):  # a runtime step of either sign
            r = r * 3 + k
    elif i == 3:
        for k in range(stop, start, -1):  # a constant negative step
            r = r * 3 + k
    elif i == 4:
        for k in range(start, stop, 3):  # a constant positive step > 1
            r = r * 3 + k
    else:
        for k in range(10, -10, -4):  # constant bounds, constant negative step
            r = r * 3 + k
    out[i] = r


def python_range_loops(start, stop, step):
    def fold(rng):
        r = 0
        for k in rng:
            r = (r * 3 + k)
        return r

    return [fold(range(stop)), fold(range(start, stop)), fold(range(start, stop, step)),
            fold(range(stop, start, -1)), fold(range(start, stop, 3)), fold(range(10, -10, -4))]


@pytest.mark.parametrize("start,stop,step", [(0, 5, 1), (2, 9, 2), (-3, 4, 3), (9, 2, -2), (5, -5, -3),
                                             (3, 3, 1), (7, 2, 1), (2, 7, -1), (0, 0, -1)])
def test_range_loops_match_python(start, stop, step):
    expect = [np.int32(v) for v in python_range_loops(start, stop, step)]
    assert launch_ints(range_loops, [start, stop, step], 6) == expect


@wp.kernel
def nested_loops_carry_state(n: int, out: wp.array(dtype=int)):
    i = wp.tid()
    total = 0
    count = 0
    for a in range(n):
        for b in range(a):
            total = total + a * b + i
            count += 1
    out[i] = total * 1000 + count


def test_nested_loops_carry_locals():
    n = 6
    expect = [sum(a * b + i for a in range(n) for b in range(a)) * 1000 + n * (n - 1) // 2 for i in range(3)]
    assert launch_ints(nested_loops_carry_state, [n], 3) == expect


@wp.kernel
def loop_variable_kept_after_loop(n: int, out: wp.array(dtype=int)):
    i = wp.tid()
    k = -1
    for k in range(n):
        pass
    out[i] = k


def test_loop_variable_defined_before_keeps_its_last_value():
    # Python: after `for k in range(n)`, k is n - 1 (or unchanged when the loop does not run).
    assert launch_ints(loop_variable_kept_after_loop, [4], 1) == [3]
    assert launch_ints(loop_variable_kept_after_loop, [0], 1) == [-1]


# -- while, break, continue ----------------------------------------------------------------------
@wp.kernel
def collatz_steps(x: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    v = x[i]
    steps = 0
    while v != 1:
        if v % 2 == 0:
            v = v // 2
        else:
            v = 3 * v + 1
        steps += 1
    out[i] = steps


def collatz(v):
    steps = 0
    while v != 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        steps += 1
    return steps


def test_while_loop():
    x = np.array([1, 2, 3, 7, 27, 97], np.int32)
    assert launch_ints(collatz_steps, [x], 6) == [collatz(int(v)) for v in x]


@wp.kernel
def break_and_continue(limit: int, out: wp.array(dtype=int)):
    i = wp.tid()
    total = 0
    for k in range(100):
        if k % 3 == i % 3:
            continue
        if total > limit:
            break
        total = total + k
    j = 0
    while True:
        j += 1
        if j % 2 == 0:
            continue
        if j > 10 + i:
            break
        total = total + 1000
    out[i] = total


def py_break_and_continue(i, limit):
    total = 0
    for k in range(100):
        if k % 3 == i % 3:
            continue
        if total > limit:
            break
        total += k
    j = 0
    while True:
        j += 1
        if j % 2 == 0:
            continue
        if j > 10 + i:
            break
        total += 1000
    return total


def test_break_and_continue():
    assert launch_ints(break_and_continue, [50], 4) == [py_break_and_continue(i, 50) for i in range(4)]


@wp.kernel
def break_inner_loop_only(out: wp.array(dtype=int)):
    i = wp.tid()
    hits = 0
    for a in range(5):
        for b in range(5):
            if b > a:
                break
            hits = hits + 1
    out[i] = hits


def test_break_leaves_only_the_inner_loop():
    assert launch_ints(break_inner_loop_only, [], 1) == [15]


# -- early return ----------------------------------------------------------------------------------
@wp.kernel
def early_return(x: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = -1
    if x[i] < 0:
        return
    for k in range(10):
        if k == x[i]:
            out[i] = k * 10
            return
        out[i] = k
    out[i] = 99


def test_early_return_from_branch_and_loop():
    x = np.array([-3, 0, 4, 20], np.int32)
    assert launch_ints(early_return, [x], 4) == [-1, 0, 40, 99]


@wp.kernel
def return_inside_while(out: wp.array(dtype=int)):
    i = wp.tid()
    n = 0
    while n < 1000:
        n += 1
        if n == i + 5:
            out[i] = n
            return
    out[i] = -7


def test_return_inside_while():
    assert launch_ints(return_inside_while, [], 3) == [5, 6, 7]


# -- carried state across branches and loops ---------------------------------------------------------
@wp.kernel
def running_extrema(x: wp.array(dtype=float, ndim=2), lo: wp.array(dtype=float), hi: wp.array(dtype=float),
                    crossings: wp.array(dtype=int)):
    i = wp.tid()
    a = x[i, 0]
    b = x[i, 0]
    c = 0
    prev = x[i, 0]
    for k in range(1, x.shape[1]):
        v = x[i, k]
        if v < a:
            a = v
        elif v > b:
            b = v
        if (v > 0.0) != (prev > 0.0):
            c += 1
        prev = v
    lo[i] = a
    hi[i] = b
    crossings[i] = c


def test_locals_carried_through_loops_and_branches():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 33)).astype(np.float32)
    lo, hi, c = wp.zeros(8), wp.zeros(8), wp.zeros(8, dtype=int)
    wp.launch(running_extrema, dim=8, inputs=[wp.array(x), lo, hi, c])
    np.testing.assert_array_equal(lo.numpy(), x.min(axis=1))
    np.testing.assert_array_equal(hi.numpy(), x.max(axis=1))
    np.testing.assert_array_equal(c.numpy(), (np.diff(x > 0, axis=1) != 0).sum(axis=1))


@wp.func
def count_call(calls: wp.array(dtype=int)) -> bool:
    calls[0] = calls[0] + 1
    return True


@wp.kernel
def short_circuit(x: wp.array(dtype=int), calls: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    r = 0
    if x[0] > 0 and count_call(calls):  # not called: the left side is false
        r += 1
    if x[0] < 0 or count_call(calls):  # not called: the left side is true
        r += 10
    if x[0] < 0 and count_call(calls) or x[0] == -1:
        r += 100
    if x[0] < 0 or count_call(calls):
        r += 1000
    out[0] = r


def test_and_or_short_circuit_as_in_python_and_warp():
    # warp-lang 1.19 never calls the right side when the left decides (checked with this kernel).
    calls, out = wp.zeros(1, dtype=int), wp.zeros(1, dtype=int)
    wp.launch(short_circuit, dim=1, inputs=[wp.array(np.array([-1], np.int32)), calls, out])
    assert calls.numpy()[0] == 1 and out.numpy()[0] == 1110
    calls.zero_()
    wp.launch(short_circuit, dim=1, inputs=[wp.array(np.array([3], np.int32)), calls, out])
    assert calls.numpy()[0] == 3 and out.numpy()[0] == 1011


@wp.kernel
def runtime_step(step: int, out: wp.array(dtype=int)):
    n = 0
    for k in range(0, 10, step):
        n += 1
    out[0] = n


def test_a_runtime_step_of_zero_runs_no_iterations():
    # Python raises ValueError and Warp's C loop would never end; the kernel must not divide by zero.
    out = wp.zeros(1, dtype=int)
    wp.launch(runtime_step, dim=1, inputs=[0, out])
    assert out.numpy()[0] == 0
    wp.launch(runtime_step, dim=1, inputs=[3, out])
    assert out.numpy()[0] == 4
