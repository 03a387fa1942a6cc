"""wp.autograd (Warp 1.19's warp.autograd): jacobian / jacobian_fd against closed forms and numpy finite
differences, gradcheck / gradcheck_tape passing on right gradients and failing on a deliberately wrong
@wp.func_grad, their argument errors, and wp.config.verify_autograd_array_access's warnings."""

from typing import Any

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.autograd import gradcheck, gradcheck_tape, jacobian, jacobian_fd, jacobian_plot


@wp.kernel
def scale_shift(a: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = 3.0 * a[i] * b[i] + a[i]


@wp.kernel
def mixed(a: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), out1: wp.array(dtype=wp.vec2),
          out2: wp.array(dtype=float)):
    i = wp.tid()
    out1[i] = wp.vec2(a[i] * wp.length(v[i]), wp.sin(a[i]) * v[i][1])
    out2[i] = wp.dot(v[i], v[i])


@wp.kernel
def sum_squares(x: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, x[i] * x[i])


@wp.func
def square(x: float):
    return x * x


@wp.func_grad(square)
def adj_square_wrong_sign(x: float, adj: float):
    wp.adjoint[x] -= 2.0 * x * adj  # the right adjoint adds


@wp.kernel
def square_kernel(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = square(a[i])


@wp.kernel(enable_backward=False)
def no_backward(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = 2.0 * a[i]


@wp.kernel
def sqrt_norm(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.sqrt(v[i][0] * v[i][0] + v[i][1] * v[i][1] + v[i][2] * v[i][2])


def _arr(values, dtype=float):
    return wp.array(np.asarray(values), dtype=dtype, requires_grad=True)


def _mixed_forward(a, v):
    """numpy version of `mixed`: (out1 scalars, out2 scalars)."""
    out1 = np.stack([a * np.linalg.norm(v, axis=1), np.sin(a) * v[:, 1]], axis=1)
    return out1.reshape(-1), np.sum(v * v, axis=1)


def _numpy_fd(f, x, eps=1e-6):
    """Central differences of f (float64 numpy) at x: (outputs, inputs)."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    cols = []
    for c in range(x.size):
        d = np.zeros_like(x)
        d[c] = eps
        cols.append((f(x + d) - f(x - d)) / (2 * eps))
    return np.stack(cols, axis=1)


def test_jacobian_closed_form():
    a0, b0 = np.array([1.0, -2.0, 0.5]), np.array([2.0, 1.0, -1.0])
    a, b, out = _arr(a0), _arr(b0), _arr(np.zeros(3))
    jac = jacobian(scale_shift, dim=3, inputs=[a, b], outputs=[out])
    assert sorted(jac) == [(0, 0), (1, 0)]
    # d out_i / d a_j = (3 b_i + 1) delta_ij, d out_i / d b_j = 3 a_i delta_ij
    np.testing.assert_allclose(jac[0, 0].numpy(), np.diag(3 * b0 + 1), rtol=1e-6)
    np.testing.assert_allclose(jac[1, 0].numpy(), np.diag(3 * a0), rtol=1e-6)
    assert jac[0, 0].dtype is wp.float32 and jac[0, 0].shape == (3, 3)
    fd = jacobian_fd(scale_shift, dim=3, inputs=[a, b], outputs=[out], eps=1e-3)
    np.testing.assert_allclose(fd[0, 0].numpy(), np.diag(3 * b0 + 1), atol=2e-3)
    np.testing.assert_allclose(fd[1, 0].numpy(), np.diag(3 * a0), atol=2e-3)
    # the inputs are as they were, the FD probes wrote into copies of the outputs
    np.testing.assert_array_equal(a.numpy(), a0.astype(np.float32))
    np.testing.assert_array_equal(out.numpy(), np.zeros(3, np.float32))


def test_jacobian_vector_dtypes_against_numpy_fd():
    a0 = np.array([0.7, -1.3])
    v0 = np.array([[3.0, 1.0, 2.0], [-4.0, -1.0, 0.5]])
    a, v = _arr(a0), _arr(v0, wp.vec3)
    out1, out2 = wp.zeros(2, dtype=wp.vec2, requires_grad=True), wp.zeros(2, dtype=float, requires_grad=True)
    ad = jacobian(mixed, dim=2, inputs=[a, v], outputs=[out1, out2])
    fd = jacobian_fd(mixed, dim=2, inputs=[a, v], outputs=[out1, out2], eps=1e-3)
    assert sorted(ad) == sorted(fd) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    # rows: the output's scalars; columns: the input's elements, of the input's dtype (a vec3 per element)
    assert ad[1, 0].shape == (4, 2) and ad[1, 0].dtype is wp.vec3
    assert ad[0, 1].shape == (2, 2) and ad[0, 1].dtype is wp.float32
    ref = {
        (0, 0): _numpy_fd(lambda x: _mixed_forward(x, v0)[0], a0),
        (0, 1): _numpy_fd(lambda x: _mixed_forward(x, v0)[1], a0),
        (1, 0): _numpy_fd(lambda x: _mixed_forward(a0, x.reshape(2, 3))[0], v0),
        (1, 1): _numpy_fd(lambda x: _mixed_forward(a0, x.reshape(2, 3))[1], v0),
    }
    for key, want in ref.items():
        np.testing.assert_allclose(ad[key].numpy().reshape(want.shape), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(fd[key].numpy().reshape(want.shape), want, rtol=1e-2, atol=1e-2)


def test_masks_limits_and_names():
    a0, b0 = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    a, b, out = _arr(a0), _arr(b0), _arr(np.zeros(3))
    ad = jacobian(scale_shift, dim=3, inputs=[a, b], outputs=[out], input_output_mask=[("b", "out")],
                  max_outputs_per_var=2)
    assert list(ad) == [(1, 0)]
    got = ad[1, 0].numpy()
    np.testing.assert_allclose(got[:2], np.diag(3 * a0)[:2], rtol=1e-6)
    assert np.all(np.isnan(got[2:]))  # rows past max_outputs_per_var stay NaN
    fd = jacobian_fd(scale_shift, dim=3, inputs=[a, b], outputs=[out], input_output_mask=[(0, 0)],
                     max_inputs_per_var=1, eps=1e-3)
    assert list(fd) == [(0, 0)]
    got = fd[0, 0].numpy()
    np.testing.assert_allclose(got[:, 0], [3 * b0[0] + 1, 0, 0], atol=2e-3)
    assert np.all(np.isnan(got[:, 1:]))
    with pytest.raises(ValueError, match="'bogus' is not in list"):
        jacobian(scale_shift, dim=3, inputs=[a, b], outputs=[out], input_output_mask=[("bogus", "out")])


def test_only_requires_grad_arrays_take_part():
    a = _arr([1.0, 2.0])
    b = wp.array([1.0, 1.0], dtype=float)  # no gradient: no Jacobian for it
    out = _arr([0.0, 0.0])
    assert list(jacobian(scale_shift, dim=2, inputs=[a, b], outputs=[out])) == [(0, 0)]
    assert list(jacobian_fd(scale_shift, dim=2, inputs=[a, b], outputs=[out])) == [(0, 0)]


def test_float64_tight_tolerances():
    x0 = np.array([0.5, -1.5, 2.0, 3.0])
    x, loss = _arr(x0, wp.float64), wp.zeros(1, dtype=wp.float64, requires_grad=True)
    ad = jacobian(sum_squares, dim=4, inputs=[x], outputs=[loss])[0, 0]
    np.testing.assert_allclose(ad.numpy(), [2 * x0], rtol=1e-12)
    assert ad.dtype is wp.float64
    assert gradcheck(sum_squares, dim=4, inputs=[x], outputs=[loss], eps=1e-6, atol=1e-7, rtol=1e-7,
                     show_summary=False)


@wp.kernel
def generic_product(a: wp.array2d(dtype=Any), b: wp.array2d(dtype=Any), out: wp.array2d(dtype=Any)):
    i, j = wp.tid()
    out[i, j] = a[i, j] * b[i, j] - b[i, j]


@pytest.mark.parametrize("dtype", [wp.float32, wp.float64])
def test_generic_kernel_jacobians(dtype):
    a0, b0 = np.array([[1.0, 2.0], [3.0, -1.0]]), np.array([[0.5, -2.0], [4.0, 1.5]])
    a, b, out = _arr(a0, dtype), _arr(b0, dtype), _arr(np.zeros((2, 2)), dtype)
    ad = jacobian(generic_product, dim=(2, 2), inputs=[a, b], outputs=[out])
    assert ad[0, 0].dtype is dtype and ad[0, 0].shape == (4, 4)
    np.testing.assert_allclose(ad[0, 0].numpy(), np.diag(b0.reshape(-1)), rtol=1e-6)
    np.testing.assert_allclose(ad[1, 0].numpy(), np.diag(a0.reshape(-1) - 1), rtol=1e-6)
    with wp.Tape() as tape:
        wp.launch(generic_product, dim=(2, 2), inputs=[a, b], outputs=[out])
    assert gradcheck_tape(tape, show_summary=False)


def test_python_function_restores_inputs():
    @wp.kernel
    def increment(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = x[i] + 1.0

    @wp.kernel
    def cube(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[i] * x[i] * x[i]

    def forward(x):  # y = (x + 1)^3, changing x on the way
        wp.launch(increment, dim=x.size, inputs=[x])
        y = wp.zeros_like(x)
        wp.launch(cube, dim=x.size, inputs=[x], outputs=[y])
        return y

    x0 = np.array([0.5, 1.0, -2.0], dtype=np.float32)
    x = wp.array(x0, dtype=float, requires_grad=True)
    want = np.diag(3 * (x0.astype(np.float64) + 1) ** 2)
    np.testing.assert_allclose(jacobian(forward, inputs=[x])[0, 0].numpy(), want, rtol=1e-5)
    np.testing.assert_array_equal(x.numpy(), x0)
    np.testing.assert_allclose(jacobian_fd(forward, inputs=[x], eps=1e-3)[0, 0].numpy(), want, atol=2e-2)
    np.testing.assert_array_equal(x.numpy(), x0)
    assert gradcheck(forward, inputs=[x], show_summary=False)
    np.testing.assert_array_equal(x.numpy(), x0)
    # without restoring, every FD probe starts from an x that drifted by 1: the check fails
    assert not gradcheck(forward, inputs=[x], restore_inputs=False, raise_exception=False, show_summary=False)

    def raises(x):
        wp.launch(increment, dim=x.size, inputs=[x])
        raise RuntimeError("boom")

    x = wp.array(x0, dtype=float, requires_grad=True)
    for fn in (jacobian, jacobian_fd):
        with pytest.raises(RuntimeError, match="boom"):
            fn(raises, inputs=[x])
        np.testing.assert_array_equal(x.numpy(), x0)


def test_gradcheck_passes_and_prints_summary(capsys):
    a, b, out = _arr([1.0, 2.0]), _arr([0.5, -1.0]), _arr([0.0, 0.0])
    assert gradcheck(scale_shift, dim=2, inputs=[a, b], outputs=[out]) is True
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert [c.strip() for c in lines[0].split(" | ")[:7]] == ["Input", "Output", "Max Abs Error", "AD at MAE", "FD at MAE",
                                         "Max Rel Error", "Pass"]
    assert lines[2].startswith("a     | out    | ") and "\033[92mPASS\033[0m" in lines[2]
    assert lines[3].startswith("b     | out    | ")
    assert lines[-1] == "\033[92mGradient check for kernel scale_shift passed\033[0m"


def test_gradcheck_fails_on_wrong_custom_gradient(capsys):
    a, out = _arr([1.0, 2.0, 3.0]), _arr([0.0, 0.0, 0.0])
    # the wrong adjoint's Jacobian is -2x on the diagonal, the finite differences' +2x
    np.testing.assert_allclose(jacobian(square_kernel, dim=3, inputs=[a], outputs=[out])[0, 0].numpy(),
                               np.diag([-2.0, -4.0, -6.0]))
    assert gradcheck(square_kernel, dim=3, inputs=[a], outputs=[out], raise_exception=False) is False
    text = capsys.readouterr().out
    assert "\033[91mFAIL\033[0m" in text
    assert "1.200e+01 at (2, 2)" in text  # max |AD - FD| = |-6 - 6|, at row 2, column 2
    assert text.splitlines()[-1] == "\033[91mGradient check for kernel square_kernel failed\033[0m"
    with pytest.raises(ValueError, match=r"^Gradient check failed for kernel square_kernel, input 0, output 0: "
                                         r"finite difference and autodiff gradients do not match$"):
        gradcheck(square_kernel, dim=3, inputs=[a], outputs=[out], show_summary=False)


def test_gradcheck_nan_gradient():
    # d sqrt(s) / d s at s = 0 is infinite: the AD Jacobian holds NaN for the zero vector
    v = _arr([[1.0, 2.0, 2.0], [0.0, 0.0, 0.0]], wp.vec3)
    out = _arr([0.0, 0.0])
    assert not gradcheck(sqrt_norm, dim=2, inputs=[v], outputs=[out], raise_exception=False, show_summary=False)
    with pytest.raises(ValueError, match="Gradient check failed for kernel sqrt_norm, input 0, output 0"):
        gradcheck(sqrt_norm, dim=2, inputs=[v], outputs=[out], show_summary=False)


def test_gradcheck_tape():
    a, b, out = _arr([1.0, 2.0]), _arr([0.5, -1.0]), _arr([0.0, 0.0])
    x, y = _arr([1.0, -1.0]), _arr([0.0, 0.0])
    with wp.Tape() as tape:
        wp.launch(scale_shift, dim=2, inputs=[a, b], outputs=[out])
        wp.launch(square_kernel, dim=2, inputs=[x], outputs=[y])
    assert not gradcheck_tape(tape, raise_exception=False, show_summary=False)  # square_kernel's is wrong
    assert gradcheck_tape(tape, blacklist_kernels=["square_kernel"], show_summary=False)
    assert gradcheck_tape(tape, whitelist_kernels=["scale_shift"], show_summary=False)
    assert gradcheck_tape(tape, skip_to_launch_index=1, reverse_launches=True, show_summary=False)
    with pytest.raises(ValueError, match="Gradient check failed for kernel square_kernel"):
        gradcheck_tape(tape, show_summary=False)


def test_backward_disabled_kernels():
    a, out = _arr([1.0, 2.0]), _arr([0.0, 0.0])
    with pytest.raises(ValueError, match="^Kernel must have backward pass enabled to compute Jacobians$"):
        jacobian(no_backward, dim=2, inputs=[a], outputs=[out])

    def pipeline(a):
        out = wp.zeros_like(a)
        wp.launch(no_backward, dim=a.size, inputs=[a], outputs=[out])
        return out

    with pytest.raises(ValueError, match="^Kernel must have backward pass enabled to compute Jacobians$"):
        jacobian(pipeline, inputs=[a])
    # finite differences need forward launches only
    np.testing.assert_allclose(jacobian_fd(no_backward, dim=2, inputs=[a], outputs=[out])[0, 0].numpy(),
                               2 * np.eye(2), atol=1e-2)
    with wp.Tape() as tape:
        wp.launch(no_backward, dim=2, inputs=[a], outputs=[out])
    assert gradcheck_tape(tape, show_summary=False)  # nothing to check


def test_argument_errors():
    a, out = _arr([1.0]), _arr([0.0])
    with pytest.raises(ValueError, match="^The inputs argument must be provided$"):
        gradcheck(square_kernel, dim=1)
    for fn in (jacobian, jacobian_fd):
        with pytest.raises(ValueError, match="^A list of output arguments must be provided to compute kernel "
                                             "Jacobians$"):
            fn(square_kernel, dim=1, inputs=[a])
    with pytest.raises(ValueError, match="^inputs must be provided when kernel is a Warp kernel$"):
        jacobian_plot({}, square_kernel)
    with pytest.raises(ValueError, match="^Invalid kernel argument: must be a Warp kernel or a FunctionMetadata "
                                         "object$"):
        jacobian_plot({}, "square_kernel")
    jac = jacobian(square_kernel, dim=1, inputs=[a], outputs=[out])
    with pytest.raises(NotImplementedError, match="draws no plots"):
        jacobian_plot(jac, square_kernel, inputs=[a])

    @wp.struct
    class S:
        x: float

    s = wp.array([S()], dtype=S, requires_grad=True)
    with pytest.raises(ValueError, match="^Unsupported array dtype S: array to be flattened must be a "
                                         "scalar/vector/matrix array$"):
        jacobian(lambda s: s, inputs=[s])


def test_reachable_as_wp_autograd():
    import mlwarp.autograd

    assert wp.autograd is mlwarp.autograd
    assert wp.autograd.gradcheck is gradcheck


# -- wp.config.verify_autograd_array_access ------------------------------------------------------------
_PREVIOUS = ("has already been read from in a previous launch. This may corrupt gradient computation in the "
             "backward pass.")
_SAME = ("is being written to after it has been read from within the same kernel. This may corrupt gradient "
         "computation in the backward pass.")


@pytest.fixture
def verify_access():
    saved = wp.config.verify_autograd_array_access
    wp.config.verify_autograd_array_access = True
    yield
    wp.config.verify_autograd_array_access = saved


@wp.kernel
def read_x_write_y(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 2.0 * x[i]


@wp.kernel
def write_second(z: wp.array(dtype=float), x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = z[i]


@wp.kernel
def increments(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 1.0  # the left operand's read does not count (Warp's rule): a write only
    y[i] += x[i]  # an in-place update: a write of y, a read of x


def _line_of(fn):
    import inspect

    return inspect.getsourcelines(fn.func)[1]


def test_overwrite_after_recorded_read_warns(verify_access, capsys):
    x = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
    y, z = wp.zeros_like(x), wp.array([5.0, 6.0], dtype=float, requires_grad=True)
    with wp.Tape():
        wp.launch(read_x_write_y, dim=2, inputs=[x], outputs=[y])
        assert x._is_read and not y._is_read
        wp.launch(write_second, dim=2, inputs=[z], outputs=[x])  # overwrites x, which the first launch read
    err = capsys.readouterr().err
    where = f"{__file__}:{_line_of(write_second)}"
    assert err == (f"Warning (UserWarning): Array [5. 6.] passed to argument x in kernel write_second at {where} "
                   f"is being written to but {_PREVIOUS}\n")


def test_no_warning_when_off_or_untaped(capsys):
    x, y, z = (wp.array([1.0, 2.0], dtype=float, requires_grad=True) for _ in range(3))
    with wp.Tape():  # the setting is off
        wp.launch(read_x_write_y, dim=2, inputs=[x], outputs=[y])
        wp.launch(write_second, dim=2, inputs=[z], outputs=[x])
    saved = wp.config.verify_autograd_array_access
    wp.config.verify_autograd_array_access = True
    try:  # on, but nothing recorded
        wp.launch(read_x_write_y, dim=2, inputs=[x], outputs=[y])
        wp.launch(write_second, dim=2, inputs=[z], outputs=[x])
    finally:
        wp.config.verify_autograd_array_access = saved
    assert capsys.readouterr().err == ""
    assert not x._is_read


def test_in_place_updates_and_operands(verify_access, capsys):
    x, y = wp.zeros(3, dtype=float, requires_grad=True), wp.zeros(3, dtype=float, requires_grad=True)
    with wp.Tape():
        wp.launch(increments, dim=3, inputs=[x, y])
    assert x._is_read and not y._is_read
    assert capsys.readouterr().err == ""  # x is written before it is read: no warning
    np.testing.assert_array_equal(y.numpy(), [1.0, 1.0, 1.0])


def test_write_after_read_in_one_kernel(verify_access, capsys):
    @wp.kernel
    def read_then_store(a: wp.array(dtype=float), b: wp.array(dtype=float)):
        i = wp.tid()
        b[i] = a[i] * a[i]
        a[i] = 1.0

    @wp.kernel
    def read_then_atomic(a: wp.array(dtype=float)):
        i = wp.tid()
        v = a[i]
        wp.atomic_add(a, 0, v)

    a, b = wp.zeros(2, dtype=float, requires_grad=True), wp.zeros(2, dtype=float, requires_grad=True)
    with wp.Tape():
        wp.launch(read_then_store, dim=2, inputs=[a, b])
        wp.launch(read_then_atomic, dim=2, inputs=[b])
    err = capsys.readouterr().err.splitlines()
    store_line = _line_of(read_then_store) + 4
    assert err == [f"Warning (UserWarning): Array passed to argument a in kernel read_then_store at "
                   f"{__file__}:{store_line} {_SAME}",
                   f"Warning (UserWarning): Array a {_SAME}"]


def test_views_functions_and_copies(verify_access, capsys):
    @wp.func
    def load(a: wp.array(dtype=float), i: int):
        return a[i]

    @wp.func
    def store(a: wp.array(dtype=float), i: int, v: float):
        a[i] = v

    @wp.kernel
    def rows(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float), s: wp.array(dtype=float),
             t: wp.array(dtype=float)):
        i, j = wp.tid()
        row = x[i]  # a view: no read yet
        y_row = y[i]
        y_row[j] = row[j]  # a read of x, a write of y
        store(t, i, load(s, i))

    x, y = wp.ones((2, 3), dtype=float, requires_grad=True), wp.zeros((2, 3), dtype=float, requires_grad=True)
    s, t = wp.ones(2, dtype=float, requires_grad=True), wp.zeros(2, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(rows, dim=(2, 3), inputs=[x[:, :], y, s, t])  # through a view of x: x is marked too
    assert (x._is_read, y._is_read, s._is_read, t._is_read) == (True, False, True, False)
    np.testing.assert_array_equal(y.numpy(), np.ones((2, 3)))
    with tape:
        line = __import__("inspect").currentframe().f_lineno + 1
        wp.copy(s, t)  # overwrites s, read by the kernel
    assert capsys.readouterr().err == (f"Warning (UserWarning): Array [1. 1.] is being written to by an array "
                                       f"copy at {__file__}:{line} but {_PREVIOUS}\n")
    assert t._is_read
    tape.backward(grads={y: wp.ones_like(y)})  # consumes the reads
    assert not (x._is_read or s._is_read or t._is_read)
    w = wp.zeros((3, 3), dtype=float)
    w.view(wp.int32).flatten().mark_read()
    assert w._is_read
    w.zero_()
    assert not w._is_read


def test_reset_clears_read_marks(verify_access):
    x, y = wp.ones(2, dtype=float, requires_grad=True), wp.zeros(2, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(read_x_write_y, dim=2, inputs=[x], outputs=[y])
    assert x._is_read
    tape.reset()
    assert not x._is_read


def test_tape_scopes():
    tape = wp.Tape()
    with pytest.raises(RuntimeError, match="^Warp: Error, ended tape scope, but scope not present$"):
        tape.record_scope_end()
    tape.record_scope_begin("empty")
    tape.record_scope_end()
    assert tape.scopes == []  # an empty scope is forgotten
    x, y = wp.ones(2, dtype=float, requires_grad=True), wp.zeros(2, dtype=float, requires_grad=True)
    with tape:
        tape.record_scope_begin("outer", {"k": 1})
        wp.launch(read_x_write_y, dim=2, inputs=[x], outputs=[y])
        tape.record_scope_end()
    assert tape.scopes == [(0, "outer", {"k": 1}), (1, None, None)]
    with pytest.raises(RuntimeError, match="ended tape scope, but scope not present"):
        tape.record_scope_end()
    tape.reset()
    assert tape.scopes == []


def test_access_through_function_parameters():
    from mlwarp.arrays import access

    @wp.func
    def read_at(arr: wp.array(dtype=float), i: int):
        return arr[i]

    @wp.func
    def apply(g: wp.Function, arr: wp.array(dtype=float), i: int):
        return g(arr, i)

    @wp.kernel
    def k(arr: wp.array(dtype=float), out: wp.array(dtype=float)):
        out[0] = apply(read_at, arr, 0)

    # the analysis follows the @wp.func passed to a wp.Function parameter (no launch: it reads the source)
    found = access.kernel_access(k)
    assert (sorted(found.reads), sorted(found.writes)) == ([0], [1])


def test_one_tape_records_at_a_time():
    outer = wp.Tape()
    with outer:
        with pytest.raises(RuntimeError, match="^Warp: Error, entering a tape while one is already active$"):
            with wp.Tape():
                pass
        with pytest.raises(RuntimeError, match="entering a tape while one is already active"):
            with outer:
                pass
    with wp.Tape():  # the outer one has ended
        pass


@wp.struct
class Pair:
    x: wp.array(dtype=float)
    y: wp.array(dtype=float)


@wp.kernel
def pair_product(p: Pair, z: wp.array(dtype=float)):
    i = wp.tid()
    z[i] = p.x[i] * p.y[i]


def test_tape_gradients_of_a_struct_argument():
    p = Pair()
    p.x = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
    p.y = wp.array([3.0, -4.0], dtype=float, requires_grad=True)
    z = wp.zeros(2, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(pair_product, dim=2, inputs=[p], outputs=[z])
    tape.backward(grads={z: wp.ones_like(z)})
    # as in Warp, tape.gradients maps the struct to its adjoint: fields d z / d x = y, d z / d y = x
    adj = tape.gradients[p]
    np.testing.assert_array_equal(adj.x.numpy(), [3.0, -4.0])
    np.testing.assert_array_equal(adj.y.numpy(), [1.0, 2.0])
    tape.zero()
    np.testing.assert_array_equal(p.x.grad.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(p.y.grad.numpy(), [0.0, 0.0])


def test_launch_record_tape_false():
    x, y = wp.array([1.0, 2.0], dtype=float, requires_grad=True), wp.zeros(2, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(read_x_write_y, dim=2, inputs=[x], outputs=[y], record_tape=False)
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0])  # it ran
    assert tape.launches == []  # unrecorded
    with tape:  # and the tape records again afterwards
        wp.launch(read_x_write_y, dim=2, inputs=[x], outputs=[y])
    assert len(tape.launches) == 1


@wp.kernel
def length_and_quat(a: wp.array(dtype=float), b: wp.array(dtype=wp.vec3), out1: wp.array(dtype=wp.vec2),
                    out2: wp.array(dtype=wp.quat)):
    tid = wp.tid()
    ai, bi = a[tid], b[tid]
    out1[tid] = wp.vec2(ai * wp.length(bi), -ai * wp.dot(bi, wp.vec3(0.1, 1.0, -0.1)))
    out2[tid] = wp.normalize(wp.quat(ai, bi[0], bi[1], bi[2]))


def test_gradcheck_summary_indexes_vector_inputs_by_component(capsys):
    # the gradcheck example of Warp's user guide (differentiability.rst); the rows below were printed by warp-lang
    # 1.19.0 on the CPU: a vec3 input's Jacobian is (outputs, inputs, 3), and the max-error index names all three
    a = wp.array([2.0, -1.0], dtype=wp.float32, requires_grad=True)
    b = wp.array([wp.vec3(3.0, 1.0, 2.0), wp.vec3(-4.0, -1.0, 0.0)], dtype=wp.vec3, requires_grad=True)
    out1 = wp.zeros(2, dtype=wp.vec2, requires_grad=True)
    out2 = wp.zeros(2, dtype=wp.quat, requires_grad=True)
    assert gradcheck(length_and_quat, dim=2, inputs=[a, b], outputs=[out1, out2], raise_exception=False)
    rows = [line.split(" | ")[:3] for line in capsys.readouterr().out.splitlines()[2:6]]
    assert [[c.strip() for c in row] for row in rows] == [
        ["a", "out1", "8.903e-04 at (1, 0)"],
        ["a", "out2", "1.887e-04 at (0, 0)"],
        ["b", "out1", "1.919e-03 at (0, 0, 1)"],
        ["b", "out2", "3.349e-04 at (5, 1, 0)"],
    ]
