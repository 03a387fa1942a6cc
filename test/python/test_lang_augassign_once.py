"""Augmented assignment evaluates its target's indices once, before the right-hand side (as Python and Warp)."""

import numpy as np

import mlwarp as wp


@wp.struct
class Item:
    value: float


@wp.func
def counted_index(counter: wp.array(dtype=int), i: int) -> int:
    wp.atomic_add(counter, 0, 1)
    return i


@wp.func
def counted_value(counter: wp.array(dtype=int), v: float) -> float:
    wp.atomic_add(counter, 0, 1)
    return v


@wp.kernel
def updates(idx: wp.array(dtype=int), rhs: wp.array(dtype=int), items: wp.array(dtype=Item),
            mats: wp.array(dtype=wp.mat33), xs: wp.array(dtype=float)):
    i = wp.tid()
    items[counted_index(idx, i)].value += counted_value(rhs, 5.0)  # struct attribute of an array element
    mats[counted_index(idx, i)][1] += wp.vec3(1.0, 2.0, 3.0)  # a row of a matrix element
    xs[counted_index(idx, i)] += 2.0  # atomic add
    xs[counted_index(idx, i)] *= 3.0  # read, multiply, write


def test_indices_and_rhs_are_evaluated_once():
    idx, rhs = wp.zeros(1, dtype=int), wp.zeros(1, dtype=int)
    items = wp.zeros(1, dtype=Item)
    mats = wp.zeros(1, dtype=wp.mat33)
    xs = wp.array([1.0], dtype=float)
    wp.launch(updates, 1, inputs=[idx, rhs, items, mats, xs])
    assert idx.numpy()[0] == 4 and rhs.numpy()[0] == 1
    assert items.numpy()[0][0] == 5.0
    expected = np.zeros((3, 3), dtype=np.float32)
    expected[1] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(mats.numpy()[0], expected)
    assert xs.numpy()[0] == (1.0 + 2.0) * 3.0


@wp.func
def bump_state(state: wp.array(dtype=int)) -> int:
    i = state[0]
    state[0] = 1
    return i


@wp.func
def read_state(state: wp.array(dtype=int)) -> float:
    return float(state[0]) * 100.0


@wp.kernel
def target_before_rhs(dst: wp.array(dtype=wp.mat33), state: wp.array(dtype=int)):
    dst[bump_state(state)][1] += wp.vec3(read_state(state), 0.0, 0.0)


def test_target_index_is_evaluated_before_rhs():
    dst = wp.zeros(2, dtype=wp.mat33)
    state = wp.zeros(1, dtype=int)
    wp.launch(target_before_rhs, 1, inputs=[dst, state])
    expected = np.zeros((2, 3, 3), dtype=np.float32)
    expected[0, 1, 0] = 100.0  # index 0 taken first (state -> 1), then the rhs reads 1
    np.testing.assert_array_equal(dst.numpy(), expected)
