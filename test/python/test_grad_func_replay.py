"""`@wp.func_replay`: the backward pass's forward replay calls the replay function instead of the function
(Warp's use: an atomic counter whose forward results the replay reads back instead of counting again); the
reverse sweep gives the call no derivative, and refuses one whose arguments or results carry one."""

import numpy as np
import pytest

import mlwarp as wp


@wp.func
def rp_take_slot(counter: wp.array(dtype=int), step: int, slots: wp.array(dtype=int), tid: int):
    n = wp.atomic_add(counter, 0, step)
    slots[tid] = n
    return n


@wp.func_replay(rp_take_slot)
def rp_take_slot_replay(counter: wp.array(dtype=int), step: int, slots: wp.array(dtype=int), tid: int):
    return slots[tid]


@wp.kernel
def rp_kernel(x: wp.array(dtype=float), counter: wp.array(dtype=int), slots: wp.array(dtype=int),
              out: wp.array(dtype=float)):
    tid = wp.tid()
    k = rp_take_slot(counter, 1, slots, tid)
    out[k] = x[k] * x[k] * x[k] + 2.0 * x[k]


def test_replay_reads_back_instead_of_counting_again():
    n = 32
    xs = np.linspace(-1.5, 2.0, n).astype(np.float32)
    x = wp.array(xs, dtype=float, requires_grad=True)
    counter = wp.zeros(1, dtype=int)
    slots = wp.zeros(n, dtype=int)
    out = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(rp_kernel, dim=n, inputs=[x, counter, slots], outputs=[out])
    tape.backward(grads={out: wp.ones(n, dtype=float)})
    assert counter.numpy()[0] == n  # the backward pass did not count again
    assert sorted(slots.numpy().tolist()) == list(range(n))
    np.testing.assert_allclose(out.numpy(), xs ** 3 + 2.0 * xs, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 3.0 * xs ** 2 + 2.0, rtol=1e-5)


@wp.func
def rp_scaled(x: float):
    return x * 2.0


@wp.func_replay(rp_scaled)
def rp_scaled_replay(x: float):
    return x * 2.0


@wp.kernel
def rp_float_kernel(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = rp_scaled(x[i])


def test_replay_of_a_function_with_derivatives_is_refused():
    x = wp.ones(2, dtype=float, requires_grad=True)
    out = wp.zeros(2, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(rp_float_kernel, dim=2, inputs=[x], outputs=[out])
    np.testing.assert_allclose(out.numpy(), [2.0, 2.0])  # the forward pass runs
    with pytest.raises(Exception, match=r"which has a @wp.func_replay: mlwarp differentiates such a call only when "
                                        r"its arguments and results carry no derivative"):
        tape.backward(grads={out: wp.ones(2, dtype=float)})


def test_replay_argument_count():
    with pytest.raises(wp.CompileError, match=r"a @wp.func_replay function for 'rp_scaled' takes its 1 "
                                              r"argument\(s\), got 2"):
        @wp.func_replay(rp_scaled)
        def bad(x: float, y: float):
            return x
    with pytest.raises(TypeError, match=r"wp.func_replay expects a @wp.func"):
        wp.func_replay(len)
