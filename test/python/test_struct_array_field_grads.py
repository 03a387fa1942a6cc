"""Gradients through the array fields of structs held in arrays (`holders[i].values[j]`): as Warp's array_t, a
struct's array field records the array's gradient address, and the adjoint of a read or write through a struct
read back from memory goes there (none where the array has no gradient)."""

import gc

import numpy as np
import pytest

import mlwarp as wp


@wp.struct
class VecHolder:
    values: wp.array[wp.vec3]


@wp.struct
class Holder:
    scale: float
    values: wp.array[float]


@wp.struct
class Outer:
    inner: Holder


@wp.struct
class GridHolder:
    grid: wp.array2d[float]


@wp.kernel
def _member_write(holders: wp.array[VecHolder], src: wp.array[float]):
    holders[0].values[0].x = src[0]


@wp.kernel
def _scaled_reads(holders: wp.array[Holder], out: wp.array[float]):
    i = wp.tid()
    h = holders[i]
    for j in range(3):
        out[i * 3 + j] = h.scale * h.values[j] * h.values[j]


@wp.kernel
def _nested_reads(outers: wp.array[Outer], out: wp.array[float]):
    j = wp.tid()
    out[j] = wp.sin(outers[0].inner.values[j])


@wp.kernel
def _row_reads(holders: wp.array[GridHolder], out: wp.array[float]):
    j = wp.tid()
    row = holders[0].grid[1]
    out[j] = 3.0 * row[j]


def _holder(values, requires_grad=True, scale=1.0):
    h = Holder()
    h.scale = scale
    h.values = wp.array(values, dtype=float, requires_grad=requires_grad)
    return h


def test_a_member_write_through_a_struct_in_an_array():
    # values recorded from warp-lang 1.19 (its test_embedded_array_without_outer_gradient)
    holder = VecHolder()
    holder.values = wp.array([[2.0, 3.0, 4.0]], dtype=wp.vec3, requires_grad=True)
    holders = wp.array([holder], dtype=VecHolder)
    src = wp.array([5.0], dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_member_write, 1, [holders, src])
    holder.values.grad.fill_(wp.vec3(1.0))
    tape.backward()
    np.testing.assert_array_equal(holder.values.numpy(), [[5.0, 3.0, 4.0]])
    np.testing.assert_array_equal(src.grad.numpy(), [1.0])
    np.testing.assert_array_equal(holder.values.grad.numpy(), [[0.0, 1.0, 1.0]])


def test_reads_through_structs_in_an_array_accumulate_into_each_array_s_grad():
    rng = np.random.default_rng(3)
    data = [rng.standard_normal(3).astype(np.float32) for _ in range(2)]
    hs = [_holder(data[0], scale=2.0), _holder(data[1], scale=-0.5)]
    holders = wp.array(hs, dtype=Holder)
    out = wp.zeros(6, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_scaled_reads, 2, [holders, out])
    weights = rng.standard_normal(6).astype(np.float32)
    tape.backward(grads={out: wp.array(weights, dtype=float)})
    for i, (h, scale) in enumerate(zip(hs, (2.0, -0.5))):
        # d(scale * v^2)/dv = 2 * scale * v, times the output's adjoint (closed form)
        np.testing.assert_allclose(h.values.grad.numpy(), 2.0 * scale * data[i] * weights[3 * i:3 * i + 3],
                                   rtol=1e-6)


def test_an_array_without_gradient_gets_none():
    with_grad, without = _holder([1.0, 2.0, 3.0]), _holder([4.0, 5.0, 6.0], requires_grad=False)
    holders = wp.array([with_grad, without], dtype=Holder)
    out = wp.zeros(6, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_scaled_reads, 2, [holders, out])
    tape.backward(grads={out: wp.ones(6, dtype=float)})
    np.testing.assert_allclose(with_grad.values.grad.numpy(), [2.0, 4.0, 6.0])  # 2 * v
    assert without.values.grad is None
    np.testing.assert_array_equal(without.values.numpy(), [4.0, 5.0, 6.0])


def test_a_nested_struct_in_an_array():
    x = np.array([0.1, 0.7, -1.2], dtype=np.float32)
    outer = Outer()
    outer.inner = _holder(x)
    outers = wp.array([outer], dtype=Outer)
    out = wp.zeros(3, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_nested_reads, 3, [outers, out])
    tape.backward(grads={out: wp.ones(3, dtype=float)})
    np.testing.assert_allclose(out.numpy(), np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(outer.inner.values.grad.numpy(), np.cos(x), rtol=1e-6)


def test_a_row_of_a_2d_array_field():
    holder = GridHolder()
    holder.grid = wp.array(np.arange(8, dtype=np.float32).reshape(2, 4), dtype=float, requires_grad=True)
    holders = wp.array([holder], dtype=GridHolder)
    out = wp.zeros(4, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_row_reads, 4, [holders, out])
    tape.backward(grads={out: wp.ones(4, dtype=float)})
    np.testing.assert_array_equal(out.numpy(), 3.0 * np.arange(4, 8))
    np.testing.assert_array_equal(holder.grid.grad.numpy(), [[0, 0, 0, 0], [3, 3, 3, 3]])


def test_the_struct_layout_records_the_gradient_address():
    h = _holder([1.0, 2.0])
    plain = _holder([1.0, 2.0], requires_grad=False)
    row = wp.array([h, plain], dtype=Holder).numpy()
    # Warp's array_t (values its .numpy() shows: test_struct_array_field_layout.py checks the whole layout)
    assert row.dtype["values"].names == ("data", "grad", "shape", "strides", "ndim", "flags")
    assert int(row["values"]["grad"][0]) == h.values.grad.ptr
    assert list(row["values"]["ndim"]) == [1, 1] and list(wp.zeros(2, dtype=Holder).numpy()["values"]["ndim"]) == [0, 0]
    assert int(row["values"]["grad"][1]) == 0
    assert int(row["values"]["data"][0]) == h.values.ptr


def test_tangents_are_not_taken_from_recorded_gradients():
    # forward mode (wp.jvp) has no tangent arrays for a struct read from memory: its error names why
    holders = wp.array([_holder([1.0, 2.0, 3.0])], dtype=Holder)
    out = wp.zeros(3, dtype=float)
    with pytest.raises(wp.CompileError, match=r"kernel '_scaled_reads' cannot be differentiated in forward mode "
                                              r"\(wp.jvp\): loc\(.*test_struct_array_field_grads.py\":\d+:\d+\): cannot "
                                              r"differentiate an access to an array that is neither a kernel argument"):
        wp.jvp(_scaled_reads, 1, inputs=[holders], outputs=[out], tan_outputs=[wp.zeros(3, dtype=float)])


@wp.kernel
def _swapped_in_a_loop(holders: wp.array[Holder], other: wp.array[float], n: int, out: wp.array[float]):
    i = wp.tid()
    h = holders[0]
    acc = float(0.0)
    for _ in range(n):
        acc += h.values[i]
        h.values = other
    out[i] = acc


@wp.kernel
def _swapped_in_an_unrolled_loop(holders: wp.array[Holder], other: wp.array[float], out: wp.array[float]):
    i = wp.tid()
    h = holders[0]
    acc = float(0.0)
    for _ in range(2):  # unrolled: each read knows its array
        acc += h.values[i]
        h.values = other
    out[i] = acc


def test_a_field_a_loop_swaps_has_no_single_gradient():
    # which array h.values is changes with the iteration: forward values (closed form), and the adjoint refused
    holders = wp.array([_holder([1.0, 2.0])], dtype=Holder)
    other = wp.array([10.0, 20.0], dtype=float, requires_grad=True)
    out = wp.zeros(2, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_swapped_in_a_loop, 2, [holders, other, 2, out])
    np.testing.assert_array_equal(out.numpy(), [11.0, 22.0])
    with pytest.raises(wp.CompileError, match="kernel '_swapped_in_a_loop' cannot be differentiated: .*neither a "
                                              "kernel argument nor a field of a struct argument"):
        tape.backward(grads={out: wp.ones(2, dtype=float)})


def test_a_field_an_unrolled_loop_swaps_sends_each_read_s_gradient_to_its_array():
    held = _holder([1.0, 2.0])
    holders = wp.array([held], dtype=Holder)
    other = wp.array([10.0, 20.0], dtype=float, requires_grad=True)
    out = wp.zeros(2, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_swapped_in_an_unrolled_loop, 2, [holders, other, out])
    tape.backward(grads={out: wp.array([1.0, 3.0], dtype=float)})
    np.testing.assert_array_equal(out.numpy(), [11.0, 22.0])  # held's values, then other's
    np.testing.assert_array_equal(held.values.grad.numpy(), [1.0, 3.0])
    np.testing.assert_array_equal(other.grad.numpy(), [1.0, 3.0])


@wp.kernel
def _read_values(holders: wp.array[Holder], out: wp.array[float]):
    i = wp.tid()
    out[i] = holders[0].values[i]


def test_an_array_of_structs_keeps_the_arrays_its_elements_point_to():
    # the instances are dropped at once: the struct array keeps them (and so their arrays) alive, as otherwise
    # the kernel would read freed memory that the arrays made next reuse
    made = wp.array([_holder([1.0, 2.0])], dtype=Holder)
    filled = wp.zeros(1, dtype=Holder)
    filled.fill_(_holder([3.0, 4.0]))
    gc.collect()
    _reuse = [wp.full(2, -1.0, dtype=float) for _ in range(64)]
    for holders, expected in ((made, [1.0, 2.0]), (filled, [3.0, 4.0])):
        out = wp.zeros(2, dtype=float)
        wp.launch(_read_values, 2, [holders, out])
        np.testing.assert_array_equal(out.numpy(), expected)
