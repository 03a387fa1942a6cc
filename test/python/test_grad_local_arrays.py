"""Gradients of kernels whose loops keep state in the thread's own wp.zeros arrays (a traversal's int stack, as the
mesh queries' near-first ray casts): the adjoint replays the stores into such an array (its reads in the replay see
what the forward wrote), a loop whose results carry no derivative and that writes only such arrays is not reversed,
and a loop that would need reversing refuses with a clear error instead of reading the array wrongly. References:
closed forms computed with numpy."""

import numpy as np
import pytest

import mlwarp as wp

STACK = 16


@wp.kernel
def largest_by_stack(x: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    # a depth-first search over a binary tree of index ranges of row i, kept on an int stack: the leaf with the
    # largest value; then out[i] = that value squared (the derivative flows through the found index only)
    i = wp.tid()
    n = x.shape[1]
    lo_stack = wp.zeros(shape=STACK, dtype=int)
    hi_stack = wp.zeros(shape=STACK, dtype=int)
    lo_stack[0] = 0
    hi_stack[0] = n
    depth = int(1)
    best = int(0)
    best_value = float(-1.0e30)
    while depth > 0:
        depth -= 1
        lo = lo_stack[depth]
        hi = hi_stack[depth]
        if hi - lo == 1:
            if x[i, lo] > best_value:
                best_value = x[i, lo]
                best = lo
        else:
            mid = (lo + hi) // 2
            lo_stack[depth] = lo
            hi_stack[depth] = mid
            lo_stack[depth + 1] = mid
            hi_stack[depth + 1] = hi
            depth += 2
    v = x[i, best]
    out[i] = v * v


def test_gradient_through_an_int_stack_traversal():
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal((5, 13)).astype(np.float32)
    x = wp.array(x0, requires_grad=True)
    out = wp.zeros(5, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(largest_by_stack, dim=5, inputs=[x, out])
    tape.backward(grads={out: wp.array(np.ones(5, np.float32))})
    k = x0.argmax(axis=1)
    np.testing.assert_array_equal(out.numpy(), x0.max(axis=1) ** 2)
    want = np.zeros_like(x0)
    want[np.arange(5), k] = 2.0 * x0[np.arange(5), k]
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)


@wp.kernel
def scratch_in_a_carrying_loop(x: wp.array(dtype=float), out: wp.array(dtype=float), n: int):
    i = wp.tid()
    scratch = wp.zeros(shape=4, dtype=int)
    v = x[i]
    for k in range(n):
        scratch[k] = k
        v = v * x[i] + float(scratch[k])
    out[i] = v


def test_a_loop_that_carries_a_derivative_and_writes_its_own_array_refuses():
    x = wp.array(np.ones(2, np.float32), requires_grad=True)
    out = wp.zeros(2, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scratch_in_a_carrying_loop, dim=2, inputs=[x, out, 3])
    with pytest.raises(wp.errors.CompileError, match=r"cannot differentiate a loop that writes a wp\.zeros array of "
                                                      r"the thread and carries a derivative"):
        tape.backward(grads={out: wp.array(np.ones(2, np.float32))})
