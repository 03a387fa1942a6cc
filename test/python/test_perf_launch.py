"""The planned launch path and `wp.launch(..., record_cmd=True)`: same results and the same errors as
the plain path, and a recorded `Launch` that can be replayed and re-parameterised."""

import ctypes

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.core.errors import LaunchError
from mlwarp.launching.launch_plan import Launch, plan_for


@wp.kernel
def axpby(x: wp.array(dtype=float), y: wp.array(dtype=float), out: wp.array(dtype=float), a: float, b: wp.int32):
    i = wp.tid()
    out[i] = a * x[i] + float(b) * y[i]


@wp.kernel
def fill_rows(out: wp.array(dtype=wp.int64, ndim=2), base: wp.int64):
    i, j = wp.tid()
    out[i, j] = base + wp.int64(i * 100 + j)


def _arrays(n=8):
    x = wp.array(np.arange(n, dtype=np.float32))
    y = wp.array(np.full(n, 10.0, dtype=np.float32))
    return x, y, wp.zeros(n, dtype=float)


def test_kernel_gets_a_plan_laid_out_like_the_ctypes_struct():
    plan = plan_for(axpby)
    assert plan is not None
    # dims[4], 3 descriptors (ptr + shape + stride), a float, an int32 (+ padding to 8)
    assert plan.struct.size == 32 + 3 * 24 + 4 + 4
    assert [offset for offset, _ in plan.slots] == [32, 56, 80, 104, 108]


def test_planned_launch_matches_numpy_and_numpy_inputs_work():
    x, y, out = _arrays()
    wp.launch(axpby, 8, inputs=[x, y, out, 2.0, 3])
    np.testing.assert_array_equal(out.numpy(), np.arange(8, dtype=np.float32) * 2 + 30)
    xs = np.arange(8, dtype=np.float32)[::-1].copy()
    o = np.zeros(8, np.float32)
    wp.launch(axpby, 8, inputs=[xs, np.ones(8, np.float32), o, 1.0, np.int32(-1)])
    np.testing.assert_array_equal(o, xs - 1)


def test_cached_array_fields_follow_a_new_dtype_check_per_kernel():
    x, y, out = _arrays()
    ints = wp.zeros(8, dtype=wp.int32)
    wp.launch(axpby, 8, inputs=[x, y, out, 1.0, 1])
    with pytest.raises(LaunchError, match=r"argument 'out' expects an array with dtype=float32 but passed array "
                                          r"has dtype=int32\."):
        wp.launch(axpby, 8, inputs=[x, y, ints, 1.0, 1])


def test_scalar_errors_come_from_the_same_checks():
    x, y, out = _arrays()
    with pytest.raises(LaunchError, match=r"argument 'b' expects int32, but passed value has type float \(1\.5\)\."):
        wp.launch(axpby, 8, inputs=[x, y, out, 1.0, 1.5])
    with pytest.raises(LaunchError, match=r"argument 'b': value 2147483648 is out of range for int32"):
        wp.launch(axpby, 8, inputs=[x, y, out, 1.0, 2**31])
    with pytest.raises(LaunchError, match=r"passed 4 arguments but kernel requires 5\."):
        wp.launch(axpby, 8, inputs=[x, y, out, 1.0])


def test_launch_dims_beyond_int32_are_refused():
    x, y, out = _arrays()
    with pytest.raises(LaunchError, match=r"each launch dimension must be below 2\*\*31"):
        wp.launch(axpby, (1, 2**31), inputs=[x, y, out, 1.0, 1])


def test_record_cmd_returns_a_launch_that_has_not_run():
    x, y, out = _arrays()
    cmd = wp.launch(axpby, 8, inputs=[x, y, out, 1.0, 0], record_cmd=True)
    assert isinstance(cmd, Launch)
    np.testing.assert_array_equal(out.numpy(), np.zeros(8, np.float32))
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), np.arange(8, dtype=np.float32))


def test_launch_set_params_and_dim():
    x, y, out = _arrays()
    cmd = wp.launch(axpby, 8, inputs=[x, y, out, 1.0, 0], record_cmd=True)
    cmd.set_param_at_index(3, 3.0)
    cmd.set_param_by_name("b", 2)
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), np.arange(8, dtype=np.float32) * 3 + 20)
    other = wp.zeros(8, dtype=float)
    cmd.set_param_by_name("out", other)
    cmd.set_dim(4)
    cmd.launch()
    np.testing.assert_array_equal(other.numpy(), [20, 23, 26, 29, 0, 0, 0, 0])
    cmd.set_params([y, x, out, 1.0, 1])
    cmd.launch()
    np.testing.assert_array_equal(out.numpy()[:4], [10, 11, 12, 13])


def test_launch_set_param_from_ctype():
    x, y, out = _arrays()
    cmd = wp.launch(axpby, 8, inputs=[x, y, out, 0.0, 1], record_cmd=True)
    cmd.set_param_at_index_from_ctype(4, ctypes.c_int32(-2))
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), np.full(8, -20, np.float32))


@wp.struct
class ScaleParams:
    i: int
    f: float


@wp.kernel
def scaled_rows(params: ScaleParams, v: wp.vec3, m: wp.mat33, out: wp.array(dtype=float)):
    tid = wp.tid()
    out[tid] = float(params.i) * params.f + v[1] + m[2, 2] + float(tid)


def test_struct_kernel_launch_set_params_from_ctypes():
    # a struct parameter: the launch replays through wp.launch; C values as Warp's __ctype__() gives them
    out = wp.zeros(3, dtype=float)
    cmd = wp.launch(scaled_rows, 3, inputs=[ScaleParams(), wp.vec3(), wp.mat33(), None], record_cmd=True)
    params = ScaleParams()
    params.i, params.f = 3, 0.5
    cmd.set_param_at_index_from_ctype(0, params.__ctype__())
    cmd.set_param_at_index_from_ctype(1, wp.vec3(0.0, 10.0, 0.0))
    cmd.set_param_at_index_from_ctype(2, wp.mat33(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 100.0))
    cmd.set_param_by_name_from_ctype("out", out.__ctype__())
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), [111.5, 112.5, 113.5])  # 3 * 0.5 + 10 + 100 + tid
    with pytest.raises(ValueError, match=r"Argument 'c' not found in kernel 'scaled_rows'"):
        cmd.set_param_by_name_from_ctype("c", 1)


def test_array_ctype_is_its_descriptor():
    a = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    d = a.__ctype__()
    assert d.data == a.ptr and list(d.shape) == [3, 4] and list(d.strides) == [16, 4]


def test_launch_setters_check_like_wp_launch():
    x, y, out = _arrays()
    cmd = wp.launch(axpby, 8, inputs=[x, y, out, 1.0, 0], record_cmd=True)
    with pytest.raises(LaunchError, match=r"argument 'b' expects int32, but passed value has type str"):
        cmd.set_param_by_name("b", "2")
    with pytest.raises(ValueError, match=r"Argument 'c' not found in kernel 'axpby'"):
        cmd.set_param_by_name("c", 1)
    with pytest.raises(LaunchError, match=r"argument 'x' expects an array with 1 dimension\(s\)"):
        cmd.set_param_at_index(0, wp.zeros((2, 4), dtype=float))


def test_recorded_2d_launch_replays():
    out = wp.zeros((3, 5), dtype=wp.int64)
    cmd = wp.launch(fill_rows, (3, 5), inputs=[out, 7], record_cmd=True)
    cmd.launch()
    ii, jj = np.indices((3, 5))
    np.testing.assert_array_equal(out.numpy(), 7 + ii * 100 + jj)
    cmd.set_param_at_index(1, 2**40)
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), 2**40 + ii * 100 + jj)


def test_record_cmd_of_a_debug_launch_replays_it_with_its_checks(monkeypatch):
    # the checked path (debug build, verify_fp) records the call itself: nothing runs until launch()
    @wp.kernel(module="unique", module_options={"mode": "debug"})
    def shift(a: wp.array(dtype=float), b: wp.array(dtype=float), n: int):
        i = wp.tid()
        b[i] = a[i + n]

    a, b = wp.array(np.arange(8, dtype=np.float32)), wp.zeros(8, dtype=float)
    cmd = wp.launch(shift, 8, inputs=[a, b, 0], record_cmd=True)
    np.testing.assert_array_equal(b.numpy(), np.zeros(8, np.float32))
    cmd.launch()
    np.testing.assert_array_equal(b.numpy(), np.arange(8, dtype=np.float32))
    cmd.set_param_by_name("n", 1)
    with pytest.raises(wp.KernelBoundsError, match=r"index \[8\] is out of bounds reading argument 'a' of shape \(8,\)"):
        cmd.launch()
    cmd.set_dim(7)
    cmd.launch()
    np.testing.assert_array_equal(b.numpy()[:7], np.arange(1, 8, dtype=np.float32))
    with pytest.raises(ValueError, match=r"Argument 'm' not found in kernel 'shift'"):
        cmd.set_param_by_name("m", 1)


def test_record_cmd_of_an_adjoint_launch_replays_it():
    x = wp.array(np.array([1.0, 2.0], np.float32))
    y, adj_x, adj_y = wp.zeros(2, dtype=float), wp.zeros(2, dtype=float), wp.ones(2, dtype=float)

    @wp.kernel
    def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[i] * x[i]

    cmd = wp.launch(square, 2, inputs=[x], outputs=[y], adj_inputs=[adj_x], adj_outputs=[adj_y], adjoint=True,
                    record_cmd=True)
    np.testing.assert_array_equal(adj_x.numpy(), [0.0, 0.0])
    cmd.launch()
    cmd.launch()  # adjoints accumulate
    np.testing.assert_array_equal(adj_x.numpy(), [4.0, 8.0])


@pytest.mark.parametrize("device", [None, "cpu", wp.get_device("cpu")])
def test_planned_launch_sizes_around_the_parallel_threshold(device):
    """The planned CPU runner calls the serial entry itself below MIN_PARALLEL threads and hands larger
    launches to the kernel's run (the pool): every size fills exactly its threads, launched or replayed."""
    from mlwarp.runtime.cpu import MIN_PARALLEL

    n = MIN_PARALLEL + 5
    x = wp.array(np.arange(n, dtype=np.float32))
    y = wp.array(np.full(n, 10.0, dtype=np.float32))
    for size in (0, 1, 3, MIN_PARALLEL - 1, MIN_PARALLEL, n):
        out = wp.array(np.full(n, -1.0, dtype=np.float32))
        wp.launch(axpby, size, inputs=[x, y, out, 2.0, 1], device=device)
        expected = np.full(n, -1.0, dtype=np.float32)
        expected[:size] = np.arange(size, dtype=np.float32) * 2 + 10
        np.testing.assert_array_equal(out.numpy(), expected)
    cmd = wp.launch(axpby, 2, inputs=[x, y, out, 1.0, 0], device=device, record_cmd=True)
    for size in (MIN_PARALLEL + 1, 7):
        out.zero_()
        cmd.set_param_at_index(2, out)
        cmd.set_dim(size)
        cmd.launch()
        expected = np.zeros(n, dtype=np.float32)
        expected[:size] = np.arange(size, dtype=np.float32)
        np.testing.assert_array_equal(out.numpy(), expected)


def test_planned_launch_follows_the_default_device_and_refuses_unknown_names():
    x, y, out = _arrays()
    with wp.ScopedDevice("cpu"):
        wp.launch(axpby, 8, inputs=[x, y, out, 1.0, 2])
    np.testing.assert_array_equal(out.numpy(), np.arange(8, dtype=np.float32) + 20)
    with pytest.raises(LaunchError, match=r"Error launching kernel 'axpby'.*Invalid device identifier: 'gpu7'"):
        wp.launch(axpby, 8, inputs=[x, y, out, 1.0, 2], device="gpu7")


@wp.kernel
def _composite_params(out: wp.array(dtype=wp.vec3), g: wp.vec3, m: wp.mat22, h: wp.float16, s: float):
    i = wp.tid()
    out[i] = g * s + wp.vec3(m[0, 1], m[1, 0], float(h)) * float(i)


def test_vector_and_matrix_parameters_take_the_planned_launch():
    assert plan_for(_composite_params) is not None  # their bytes in C layout, at ctypes' offsets
    out = wp.zeros(3, dtype=wp.vec3)
    for g in (wp.vec3(1.0, -2.0, 0.5), (1.0, -2.0, 0.5), np.array([1.0, -2.0, 0.5])):  # each launch: all forms
        for _ in range(4):  # the first launches and the compiled fields function
            wp.launch(_composite_params, 3, inputs=[out, g, wp.mat22(1.0, 2.0, 3.0, 4.0), 1.5, 2.0])
            want = np.array([1.0, -2.0, 0.5]) * 2.0 + np.outer(np.arange(3), [2.0, 3.0, 1.5])
            np.testing.assert_array_equal(out.numpy(), want)
    cmd = wp.launch(_composite_params, 3, inputs=[out, g, wp.mat22(1.0, 2.0, 3.0, 4.0), 1.5, 2.0], record_cmd=True)
    cmd.set_param_by_name("g", wp.vec3(0.0, 0.0, 1.0))
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), [0.0, 0.0, 2.0] + np.outer(np.arange(3), [2.0, 3.0, 1.5]))
    with pytest.raises(wp.LaunchError, match=r"^Error launching kernel '_composite_params', argument 'g' expects "
                                             r"vec3f \(3 components\), but passed value has 2\.$"):
        wp.launch(_composite_params, 3, inputs=[out, (1.0, 2.0), wp.mat22(1.0, 2.0, 3.0, 4.0), 1.5, 2.0])
    with pytest.raises(wp.LaunchError, match=r"^Error launching kernel '_composite_params', argument 'g' expects "
                                             r"vec3f, but passed value has type str\.$"):
        cmd.set_param_by_name("g", "abc")


def test_repeated_launches_reuse_their_fields_and_keep_no_array_alive():
    import gc
    import weakref

    x, y, out = _arrays()
    for b in (2, 2, 3):  # the same objects (fields reused), then another int: new fields
        for _ in range(3):
            wp.launch(axpby, 8, inputs=[x, y, out, 0.5, b])
        np.testing.assert_array_equal(out.numpy(), 0.5 * np.arange(8) + 10.0 * b)
    out2 = wp.zeros(8, dtype=float)  # another output array: its own pointer
    wp.launch(axpby, 8, inputs=[x, y, out2, 0.5, 3])
    np.testing.assert_array_equal(out2.numpy(), out.numpy())
    # the last launch's arrays are not kept alive by the plan (an array's deleter runs when the user drops it)
    dropped = weakref.ref(out2)
    del out2
    gc.collect()
    assert dropped() is None
    wp.launch(axpby, 8, inputs=[x, y, out, 1.0, 0])  # (a memo whose array died: fields computed again)
    np.testing.assert_array_equal(out.numpy(), np.arange(8))


def test_launches_swapping_two_buffers_reuse_both_fields_and_stay_exact():
    """A loop that swaps two arrays (`[a, b]`, then `[b, a]`) keeps both launches' fields and struct bytes; a
    third argument set, a launch size of its own and an array dropped meanwhile are computed again: every launch
    against numpy."""
    import gc

    x, y, out = _arrays()
    z = wp.array(np.full(8, -1.0, dtype=np.float32))
    plan = plan_for(axpby)
    want_x, want_y = np.arange(8, dtype=np.float32), np.full(8, 10.0, dtype=np.float32)
    for step in range(4):
        wp.launch(axpby, 8, inputs=[x, y, out, 1.0, 1])
        np.testing.assert_array_equal(out.numpy(), want_x + want_y)
        wp.launch(axpby, 8, inputs=[y, x, out, 0.5, 2])
        np.testing.assert_array_equal(out.numpy(), 0.5 * want_y + 2.0 * want_x)
        if step >= 1:  # both argument sets remembered, with their struct bytes
            assert {plan._memo[2], plan._memo_other[2]} == {plan._packed[0], plan._packed_other[0]}
    wp.launch(axpby, 8, inputs=[x, z, out, 1.0, 1])  # a third set: new fields, the older of the two dropped
    np.testing.assert_array_equal(out.numpy(), want_x - 1.0)
    wp.launch(axpby, 8, inputs=[y, x, out, 0.5, 2])  # the set kept
    np.testing.assert_array_equal(out.numpy(), 0.5 * want_y + 2.0 * want_x)
    wp.launch(axpby, 4, inputs=[x, z, out, 2.0, 3])  # the other set kept, another launch size: its own bytes
    np.testing.assert_array_equal(out.numpy()[:4], 2.0 * want_x[:4] - 3.0)
    del z
    gc.collect()
    z2 = wp.array(np.full(8, 5.0, dtype=np.float32))  # (may reuse the dropped array's address)
    wp.launch(axpby, 8, inputs=[x, z2, out, 1.0, 1])
    np.testing.assert_array_equal(out.numpy(), want_x + 5.0)


def test_a_vector_argument_changed_in_place_is_read_again():
    # composites are mutable: a kernel with a composite parameter does not reuse its last launch's fields
    out = wp.zeros(3, dtype=wp.vec3)
    g = wp.vec3(1.0, 2.0, 3.0)
    m = wp.mat22(1.0, 2.0, 3.0, 4.0)
    for step in range(4):
        g[0] = float(step)
        wp.launch(_composite_params, 3, inputs=[out, g, m, 1.5, 2.0])
        np.testing.assert_array_equal(out.numpy()[0], np.array([step, 2.0, 3.0]) * 2.0)
