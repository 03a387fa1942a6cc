"""Slicing arrays inside kernels (compiler/frontend/slicing.py, warp.slice): strided views with
Python's slice rules, checked against numpy slicing of the same data; gradients through slices; Warp's
compile error for a literal zero step; `.ndim` and the unused dimensions of `.shape` (0, as Warp)."""

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def _slices_1d(arr: wp.array(dtype=int), out: wp.array(dtype=int)):
    sub = arr[:3]
    out[0] = sub.ndim
    out[1] = sub.shape[0]
    out[2] = sub.shape[1]  # beyond the rank: 0
    out[3] = sub[2]
    sub = arr[3::-1]
    out[4] = sub.shape[0]
    out[5] = sub[0]
    out[6] = sub[3]
    sub = arr[::-3]
    sub = sub[::2]  # a slice of a slice
    out[7] = sub.shape[0]
    out[8] = sub[0]
    out[9] = sub[2]
    out[10] = arr[-3:].shape[0]
    out[11] = arr[-3:][0]
    out[12] = arr[20:].shape[0]  # clamped: empty
    out[13] = arr[5:2].shape[0]


def test_1d_slices_match_numpy():
    data = np.arange(16, dtype=np.int32)
    out = wp.zeros(14, dtype=int)
    wp.launch(_slices_1d, dim=1, inputs=[wp.array(data), out])
    expected = [1, 3, 0, data[:3][2], len(data[3::-1]), data[3::-1][0], data[3::-1][3],
                len(data[::-3][::2]), data[::-3][::2][0], data[::-3][::2][2], 3, 13, 0, 0]
    assert out.numpy().tolist() == expected


@wp.kernel
def _slices_2d(arr: wp.array2d(dtype=int), out: wp.array(dtype=int)):
    a = arr[:2, 1]
    out[0] = a.shape[0]
    out[1] = a[1]
    b = arr[-4, :3]  # a negative index counts from the end
    out[2] = b.shape[0]
    out[3] = b[2]
    c = arr[3:5, 3:1:-1]
    out[4] = c.ndim
    out[5] = c.shape[1]
    out[6] = c[0, 0]
    out[7] = c[1, 1]
    d = arr[::4]
    d = d[:, ::-3]
    out[8] = d.shape[1]
    out[9] = d[1, 1]
    e = arr[1:3]  # trailing dimension kept
    out[10] = e.shape[1]
    out[11] = e[1, 2]


def test_2d_slices_match_numpy():
    data = np.arange(32, dtype=np.int32).reshape(8, 4)
    out = wp.zeros(12, dtype=int)
    wp.launch(_slices_2d, dim=1, inputs=[wp.array(data), out])
    d = data[::4][:, ::-3]
    expected = [2, data[:2, 1][1], 3, data[-4, :3][2], 2, 2, data[3:5, 3:1:-1][0, 0], data[3:5, 3:1:-1][1, 1],
                d.shape[1], d[1, 1], 4, data[1:3][1, 2]]
    assert out.numpy().tolist() == expected


@wp.kernel
def _dynamic(arr: wp.array2d(dtype=int), start: int, stop: int, step: int, out: wp.array(dtype=int)):
    view = arr[start:stop:step, 1]
    n = view.shape[0]
    out[0] = n
    if n > 0:
        out[1] = view[0]
        out[2] = view[n - 1]


@pytest.mark.parametrize("start, stop, step", [(1, 6, 2), (5, 0, -2), (-1, -7, -1), (0, 100, 4), (-100, 3, 1),
                                               (4, 4, 1), (2, 5, -1)])
def test_runtime_bounds_and_steps_match_numpy(start, stop, step):
    data = np.arange(18, dtype=np.int32).reshape(6, 3)
    out = wp.zeros(3, dtype=int)
    wp.launch(_dynamic, dim=1, inputs=[wp.array(data), start, stop, step, out])
    ref = data[start:stop:step, 1]
    expected = [len(ref), ref[0], ref[-1]] if len(ref) else [0, 0, 0]
    assert out.numpy().tolist() == expected


@wp.kernel
def _square_reversed(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    xs = x[::-1]
    y[i] = xs[i] * xs[i]


@wp.kernel
def _store_through_slice(x: wp.array(dtype=float), y: wp.array2d(dtype=float)):
    i = wp.tid()
    row = y[1:2, :]
    row[0, i] = 2.0 * x[i]


def test_gradients_through_slices():
    x = wp.array(np.arange(1, 5, dtype=np.float32), requires_grad=True)
    y = wp.zeros(4, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_square_reversed, dim=4, inputs=[x, y])
    tape.backward(grads={y: wp.ones_like(y)})
    assert y.numpy().tolist() == [16.0, 9.0, 4.0, 1.0]
    assert x.grad.numpy().tolist() == [2.0, 4.0, 6.0, 8.0]  # d(x^2)/dx, each element read once

    x = wp.array(np.arange(1, 5, dtype=np.float32), requires_grad=True)
    y = wp.zeros((2, 4), requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_store_through_slice, dim=4, inputs=[x, y])
    tape.backward(grads={y: wp.ones_like(y)})
    assert y.numpy().tolist() == [[0.0] * 4, [2.0, 4.0, 6.0, 8.0]]
    assert x.grad.numpy().tolist() == [2.0] * 4
    assert y.grad.numpy().tolist() == [[1.0] * 4, [0.0] * 4]  # the store through the slice consumed its row


def test_literal_zero_step_is_a_compile_error():
    @wp.kernel
    def zero_step(a: wp.array(dtype=int)):
        v = a[0:2:0]  # noqa: F841

    with pytest.raises(wp.WarpCodegenValueError, match=r"test_kernel_slicing\.py:\d+: in 'zero_step': Slice step "
                                                       r"cannot be zero"):
        wp.launch(zero_step, dim=1, inputs=[wp.zeros(2, dtype=int)])
    assert issubclass(wp.WarpCodegenValueError, ValueError)


def test_too_many_slices():
    @wp.kernel
    def too_many(a: wp.array(dtype=int)):
        v = a[0:1, 0:1]  # noqa: F841

    with pytest.raises(wp.CompileError, match=r"in 'too_many': Incorrect number of indices specified for array "
                                             r"indexing, got 2 indices for a 1 dimensional array\."):
        wp.launch(too_many, dim=1, inputs=[wp.zeros(2, dtype=int)])


@wp.kernel
def _rebind_ranks(arr: wp.array2d(dtype=int), out: wp.array(dtype=int)):
    sub = arr[:2]
    out[0] = sub[1, 3]
    sub = arr[:2, 1]  # another rank, the same dtype: allowed, as Warp's types_equal
    out[1] = sub[1]


def test_a_variable_may_be_rebound_to_an_array_of_another_rank():
    data = np.arange(32, dtype=np.int32).reshape(8, 4)
    out = wp.zeros(2, dtype=int)
    wp.launch(_rebind_ranks, dim=1, inputs=[wp.array(data), out])
    assert out.numpy().tolist() == [data[1, 3], data[:2, 1][1]]


def test_run_time_zero_step_prints_warps_message_and_aborts(tmp_path):
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "zero_step.py"
    script.write_text(textwrap.dedent("""
        import mlwarp as wp

        @wp.kernel
        def k(a: wp.array(dtype=int), step: int, out: wp.array(dtype=int)):
            out[0] = a[::step].shape[0]

        a, out = wp.zeros(4, dtype=int), wp.zeros(1, dtype=int)
        wp.launch(k, dim=1, inputs=[a, 2, out])
        print("step 2:", out.numpy()[0], flush=True)
        wp.launch(k, dim=1, inputs=[a, 0, out])
        print("not reached", flush=True)
    """))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert run.returncode != 0
    assert "step 2: 2" in run.stdout and "Warp error: slice step cannot be zero" in run.stdout
    assert "not reached" not in run.stdout
