"""wp.static() over the variable of a constant-range loop (Warp unrolls such loops, so `wp.static(table[i])`
works inside them): the frontend unrolls exactly those loops, forwards and reversed, with hand-computed
results; a loop too long to unroll, or one wp.static() does not read, keeps its usual form."""

import numpy as np
import pytest

import mlwarp as wp

OFFSETS = ((0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0))


@wp.kernel
def reads_a_table(out: wp.array(dtype=int)):
    total = int(0)
    for c in range(4):
        total += wp.static(OFFSETS[c][0] * 10 + OFFSETS[c][1]) * wp.static(2**c)
    out[0] = total
    for c in reversed(range(1, 4)):
        out[c] = wp.static(c * 7) + c  # the variable is a value too
    last = int(0)
    for c in range(2, 8, 3):
        last = wp.static(c)
    out[4] = last


def test_static_reads_the_loop_variable():
    out = wp.zeros(5, dtype=int)
    wp.launch(reads_a_table, 1, [out])
    # 0*1 + 10*2 + 11*4 + 1*8 = 72; c * 7 + c = 8 c; range(2, 8, 3) = 2, 5
    assert out.numpy().tolist() == [72, 8, 16, 24, 5]


@wp.kernel
def nested(out: wp.array2d(dtype=float)):
    for i in range(3):
        for j in range(2):
            out[i, j] = wp.static(float(i * 10 + j))


def test_nested_loops_and_gradient_free_values():
    out = wp.zeros((3, 2), dtype=float)
    wp.launch(nested, 1, [out])
    assert np.array_equal(out.numpy(), [[0, 1], [10, 11], [20, 21]])


def test_a_loop_too_long_to_unroll_is_refused():
    @wp.kernel
    def too_long(out: wp.array(dtype=int)):
        for c in range(5000):
            out[0] = wp.static(c)

    with pytest.raises(wp.CompileError, match=r"a loop whose variable wp\.static\(\) reads is unrolled: 5000 "
                                              r"iterations exceed 4096"):
        wp.launch(too_long, 1, [wp.zeros(1, dtype=int)])


def test_static_outside_the_loop_sees_constant_locals_and_refuses_computed_ones():
    # Warp's rule (checked under warp-lang 1.19): a local holding a constant is visible, a computed one is not
    @wp.kernel
    def local_read(out: wp.array(dtype=int)):
        n = 3
        out[0] = wp.static(n)

    out = wp.zeros(1, dtype=int)
    wp.launch(local_read, 1, [out])
    assert out.numpy()[0] == 3

    @wp.kernel
    def computed_read(out: wp.array(dtype=int)):
        n = 3
        n = n + 1
        out[0] = wp.static(n)

    with pytest.raises(wp.CompileError, match=r"test_static_loop_variable.py:\d+: in 'computed_read': Error evaluating "
                                              r"static expression: name 'n' is not defined\. Make sure all variables "
                                              r"used in the static expression are constant\.\n"):
        wp.launch(computed_read, 1, [wp.zeros(1, dtype=int)])


@wp.kernel
def skips_statically(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    tid = wp.tid()
    value = float(0.0)
    for i in range(20):
        if wp.static(i % 2 == 0):
            continue
        value += float(i) * x[tid]
    out[tid] = value


@wp.kernel
def skips_both_ways(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    tid = wp.tid()
    value = float(0.0)
    for j in range(3):
        for i in range(6):
            if x[tid] > float(i) + 0.5:
                continue
            if wp.static(i == 3):
                continue
            value += float(i * 10 + j)
    out[tid] = value


def test_continue_in_an_unrolled_loop_ends_that_copy_of_the_body():
    x = wp.full(2, 2.0, requires_grad=True)
    out = wp.zeros(2, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(skips_statically, 2, [x, out])
    tape.backward(grads={out: wp.ones_like(out)})
    # the odd i: 1 + 3 + ... + 19 = 100, times x = 2
    assert out.numpy().tolist() == [200.0, 200.0] and x.grad.numpy().tolist() == [100.0, 100.0]
    x = wp.array([2.0, 4.0], dtype=float)
    wp.launch(skips_both_ways, 2, [x, out])
    # x = 2: i in 2, 4, 5 (3 skipped statically): sum over j = 0..2 of (20 + j) + (40 + j) + (50 + j) = 339;
    # x = 4: i in 4, 5: sum of (40 + j) + (50 + j) = 276
    assert out.numpy().tolist() == [339.0, 276.0]
