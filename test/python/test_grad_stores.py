"""The adjoint of an array store follows Warp 1.19: it reads the stored element's gradient and, when the
gradient array is the array's own `.grad` (what Tape.backward passes), clears it, so a value overwritten
later (in the same kernel or by a later launch) gets no gradient from a location it no longer holds. An
adjoint buffer the caller passes (`wp.launch(..., adjoint=True, adj_outputs=[g])`) is only read. The
expected gradients are those of the final values (hand-computed; Warp 1.19 gives the same)."""

import numpy as np

import mlwarp as wp

f64 = wp.float64


@wp.kernel
def scale(x: wp.array(dtype=f64), c: f64, y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = c * x[i]


@wp.kernel
def overwrite(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = f64(5.0) * x[i]
    y[i] = f64(3.0) * x[i]  # y = 3 x: the first value is gone


def test_a_location_written_by_two_launches_gives_the_last_writes_gradient():
    x = wp.array([1.0, 2.0], dtype=f64, requires_grad=True)
    y = wp.zeros(2, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scale, dim=2, inputs=[x, 7.0], outputs=[y])
        wp.launch(scale, dim=2, inputs=[x, 2.0], outputs=[y])  # y = 2 x
    tape.backward(grads={y: wp.ones(2, dtype=f64)})
    assert x.grad.numpy().tolist() == [2.0, 2.0]
    assert y.grad.numpy().tolist() == [0.0, 0.0]  # consumed by the stores, as in Warp


def test_a_location_written_twice_in_one_kernel():
    x = wp.array([1.0, -4.0], dtype=f64, requires_grad=True)
    y = wp.zeros(2, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(overwrite, dim=2, inputs=[x], outputs=[y])
    assert y.numpy().tolist() == [3.0, -12.0]
    tape.backward(grads={y: wp.array([1.0, 2.0], dtype=f64)})
    assert x.grad.numpy().tolist() == [3.0, 6.0]


def test_an_adjoint_buffer_the_caller_passes_is_only_read():
    x = wp.array([1.0, 2.0], dtype=f64)
    y = wp.zeros(2, dtype=f64)
    adj_x, adj_y = wp.zeros(2, dtype=f64), wp.array([1.0, 10.0], dtype=f64)
    wp.launch(overwrite, dim=2, inputs=[x], outputs=[y], adj_inputs=[adj_x], adj_outputs=[adj_y], adjoint=True)
    assert adj_y.numpy().tolist() == [1.0, 10.0]
    # not consumed: the first store reads the same adjoint again (Warp 1.19 does the same with its own buffers)
    assert adj_x.numpy().tolist() == [8.0, 80.0]


def test_passing_the_arrays_own_grad_as_adjoint_consumes_it():
    x = wp.array([1.0, 2.0], dtype=f64, requires_grad=True)
    y = wp.zeros(2, dtype=f64, requires_grad=True)
    y.grad.fill_(1.0)
    wp.launch(overwrite, dim=2, inputs=[x], outputs=[y], adj_inputs=[x.grad], adj_outputs=[y.grad], adjoint=True)
    assert x.grad.numpy().tolist() == [3.0, 3.0]
    assert y.grad.numpy().tolist() == [0.0, 0.0]


# -- retain_grad and views taken in the kernel ------------------------------------------------------------------
@wp.kernel
def store_direct(x: wp.array(dtype=f64), y: wp.array2d(dtype=f64)):
    i = wp.tid()
    y[0, i] = f64(2.0) * x[i]


@wp.kernel
def store_through_slice(x: wp.array(dtype=f64), y: wp.array2d(dtype=f64)):
    i = wp.tid()
    s = y[0:1, :]
    s[0, i] = f64(2.0) * x[i]


@wp.kernel
def store_through_row(x: wp.array(dtype=f64), y: wp.array2d(dtype=f64)):
    i = wp.tid()
    r = y[0]
    r[i] = f64(2.0) * x[i]


@wp.kernel
def add_through_slice(x: wp.array(dtype=f64), y: wp.array2d(dtype=f64)):
    i = wp.tid()
    s = y[0:1, :]
    s[0, i] += f64(2.0) * x[i]


@wp.kernel
def read_row_plus_one(y: wp.array2d(dtype=f64), z: wp.array(dtype=f64)):
    i = wp.tid()
    z[i] = y[0, i] + f64(1.0)


def test_retain_grad_is_dropped_by_a_row_or_slice_taken_in_the_kernel():
    # recorded from warp-lang 1.19: its in-kernel views drop the array's flags, retain_grad among them, so a
    # store through one consumes the gradient; a store into the array itself, or an atomic add, keeps it
    n = 4
    for kernel, kept in [(store_direct, True), (store_through_slice, False), (store_through_row, False),
                         (add_through_slice, True)]:
        for retain in (True, False):
            x = wp.ones(n, dtype=f64, requires_grad=True)
            y = wp.zeros((1, n), dtype=f64, requires_grad=True, retain_grad=retain)
            z = wp.zeros(n, dtype=f64, requires_grad=True)
            with wp.Tape() as tape:
                wp.launch(kernel, dim=n, inputs=[x, y])
                wp.launch(read_row_plus_one, dim=n, inputs=[y, z])
            tape.backward(grads={z: wp.ones_like(z)})
            assert x.grad.numpy().tolist() == [2.0] * n
            stays = kept and (retain or kernel is add_through_slice)
            assert y.grad.numpy().tolist() == [[1.0 if stays else 0.0] * n], (kernel.key, retain)
