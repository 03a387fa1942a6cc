"""Debug mode: out-of-bounds accesses raise after the launch, naming the kernel, the array argument, the
index and the source line, and never touch memory outside the array. Release builds carry none of it."""

import inspect
import re

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.launching.debug import for_launch
from source_util import where


@wp.kernel
def shifted_copy(a: wp.array(dtype=wp.float32), b: wp.array(dtype=wp.float32), n: int):
    i = wp.tid()
    b[i] = a[i + n] * 2.0


@wp.kernel
def shifted_store(b: wp.array(dtype=wp.float32), n: int):
    i = wp.tid()
    b[i + n] = 1.0


@wp.kernel
def grid_add(g: wp.array2d(dtype=wp.int32), di: int, dj: int):
    i, j = wp.tid()
    g[i + di, j + dj] += 1


@wp.kernel
def atomic_count(c: wp.array(dtype=wp.int32), n: int):
    i = wp.tid()
    wp.atomic_add(c, i - n, 1)


def test_out_of_bounds_read_names_kernel_argument_index_and_line(debug_mode):
    a = wp.array(np.arange(10, dtype=np.float32))
    b = wp.zeros(10, dtype=wp.float32)
    loc = where(shifted_copy, "a[i + n]")
    with pytest.raises(wp.KernelBoundsError, match=re.escape(
            f"{loc}: kernel 'shifted_copy': index [10] is out of bounds reading argument 'a' of shape (10,) "
            f"(thread 7; 3 out-of-bounds accesses in this launch)")):
        wp.launch(shifted_copy, 10, inputs=[a, b, 3])
    # in-bounds threads ran; the skipped loads read 0
    np.testing.assert_array_equal(b.numpy(), [6, 8, 10, 12, 14, 16, 18, 0, 0, 0])


def test_out_of_bounds_write_leaves_memory_after_the_array_untouched(debug_mode):
    base = np.zeros(20, dtype=np.float32)
    view = base[:10]  # memory right after the array belongs to someone else
    with pytest.raises(wp.KernelBoundsError, match=re.escape(
            f"{where(shifted_store, 'b[i + n]')}: kernel 'shifted_store': index [10] is out of bounds writing "
            f"argument 'b' of shape (10,) (thread 5; 5 out-of-bounds accesses")):
        wp.launch(shifted_store, 10, inputs=[view, 5])
    np.testing.assert_array_equal(base, [0] * 5 + [1] * 5 + [0] * 10)


def test_negative_index_counts_from_the_end(debug_mode):
    # as Warp 1.19's array indexing: -shape <= i < 0 is element shape + i (numpy's rule)
    c = wp.zeros(4, dtype=wp.int32)
    wp.launch(atomic_count, 4, inputs=[c, 2])  # indices -2, -1, 0, 1
    np.testing.assert_array_equal(c.numpy(), [1, 1, 1, 1])


def test_negative_index_past_the_start_is_out_of_bounds(debug_mode):
    c = wp.zeros(4, dtype=wp.int32)
    with pytest.raises(wp.KernelBoundsError, match=re.escape(
            "kernel 'atomic_count': index [-6] is out of bounds atomically updating argument 'c' of shape (4,) "
            "(thread 0; 2 out-of-bounds accesses")):
        wp.launch(atomic_count, 4, inputs=[c, 6])  # indices -6, -5 (outside), -4, -3 (elements 0, 1)
    np.testing.assert_array_equal(c.numpy(), [1, 1, 0, 0])


def test_two_dimensional_index_and_shape(debug_mode):
    g = wp.zeros((3, 4), dtype=wp.int32)
    # `+=` on an array element is an atomic add (as in Warp); thread (0, 0) updates g[0, 3], thread (0, 1)
    # is out of bounds: g[0, 4]
    with pytest.raises(wp.KernelBoundsError, match=re.escape(
            f"{where(grid_add, 'g[i + di, j + dj]')}: kernel 'grid_add': index [0, 4] is out of bounds atomically "
            f"updating argument 'g' of shape (3, 4) (thread 1)")):
        wp.launch(grid_add, (1, 2), inputs=[g, 0, 3])
    np.testing.assert_array_equal(g.numpy()[0], [0, 0, 0, 1])


def test_the_next_launch_after_an_error_runs_normally(debug_mode):
    a = wp.array(np.arange(10, dtype=np.float32))
    b = wp.zeros(10, dtype=wp.float32)
    with pytest.raises(wp.KernelBoundsError):
        wp.launch(shifted_copy, 10, inputs=[a, b, 1])
    wp.launch(shifted_copy, 10, inputs=[a, b, 0])
    np.testing.assert_array_equal(b.numpy(), np.arange(10) * 2)


def test_release_mode_checks_nothing_and_has_no_hidden_parameter():
    assert wp.config.mode == "release"
    assert for_launch(shifted_copy) is shifted_copy
    assert [f for f, _ in shifted_copy.launch_struct._fields_] == ["dims", "p0", "p1", "p2"]
    a = wp.array(np.arange(20, dtype=np.float32))
    b = wp.zeros(10, dtype=wp.float32)
    wp.launch(shifted_copy, 10, inputs=[a[:10], b, 0])  # in bounds: no error either way
    np.testing.assert_array_equal(b.numpy(), np.arange(10) * 2)


def test_debug_build_is_its_own_cache_entry_with_a_hidden_record(debug_mode):
    built = for_launch(shifted_copy)
    assert built is not shifted_copy and built is for_launch(shifted_copy)
    assert built.options["mode"] == "debug"
    device = wp.get_device("cpu")
    assert built.cache_key(device) != shifted_copy.cache_key(device)
    assert [f for f, _ in built.launch_struct._fields_] == ["dims", "p0", "p1", "p2", "p3"]


def _library_bytes(kernel) -> bytes:
    with open(kernel.compiled(wp.get_device("cpu")).library._name, "rb") as f:
        return f.read()


def test_debug_builds_keep_line_tables(debug_mode):
    a = wp.array(np.arange(10, dtype=np.float32))
    b = wp.zeros(10, dtype=wp.float32)
    wp.launch(shifted_copy, 10, inputs=[a, b, 0])
    assert b".debug_line" in _library_bytes(for_launch(shifted_copy))
    assert b".debug_line" not in _library_bytes(shifted_copy)


@wp.kernel(module="unique", module_options={"mode": "debug"})
def always_checked(b: wp.array(dtype=wp.float32), n: int):
    i = wp.tid()
    b[i + n] = 2.0


def test_per_kernel_option_checks_in_release_mode():
    assert wp.config.mode == "release"
    b = wp.zeros(3, dtype=wp.float32)
    with pytest.raises(wp.KernelBoundsError, match=re.escape(
            f"{where(always_checked, 'b[i + n]')}: kernel 'always_checked': index [3] is out of bounds writing "
            f"argument 'b' of shape (3,) (thread 2)")):
        wp.launch(always_checked, 3, inputs=[b, 1])
    np.testing.assert_array_equal(b.numpy(), [0, 2, 2])


def test_module_option_turns_debug_on_for_this_module_only():
    assert wp.get_module_options(__name__)["mode"] is None
    wp.set_module_options({"mode": "debug"}, __name__)
    try:
        assert wp.get_module_options(__name__)["mode"] == "debug"
        b = wp.zeros(3, dtype=wp.float32)
        with pytest.raises(wp.KernelBoundsError, match="kernel 'shifted_store': index \\[3\\]"):
            wp.launch(shifted_store, 3, inputs=[b, 2])
    finally:
        wp.set_module_options({"mode": None}, __name__)
    assert for_launch(shifted_store) is shifted_store


def test_set_module_options_defaults_to_the_callers_module():
    wp.set_module_options({"mode": "release"})
    try:
        assert wp.get_module_options(__name__)["mode"] == "release"
        assert wp.get_module(__name__).options["mode"] == "release"
    finally:
        wp.set_module_options({"mode": None})


def test_a_kernel_option_overrides_debug_mode(debug_mode):
    @wp.kernel(module="unique", module_options={"mode": "release"})
    def unchecked(b: wp.array(dtype=wp.float32)):
        i = wp.tid()
        b[i] = 1.0

    assert for_launch(unchecked) is unchecked


@wp.kernel
def square_shifted(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32), n: int):
    i = wp.tid()
    y[i] = x[i + n] * x[i + n]


def test_adjoint_launch_in_debug_mode_checks_bounds_too(debug_mode):
    x = wp.array(np.arange(4, dtype=np.float32))
    y = wp.zeros(4, dtype=wp.float32)
    adj_x = wp.zeros(4, dtype=wp.float32)
    adj_y = wp.array(np.ones(4, dtype=np.float32))
    wp.launch(square_shifted, 4, inputs=[x, y, 0], adjoint=True, adj_inputs=[adj_x, adj_y, 0])
    np.testing.assert_array_equal(adj_x.numpy(), [0, 2, 4, 6])  # in bounds: the ordinary gradient
    adj_x.zero_()
    with pytest.raises(wp.KernelBoundsError, match=re.escape(
            "kernel 'square_shifted': index [4] is out of bounds reading argument 'x' of shape (4,) (thread 3;")):
        wp.launch(square_shifted, 4, inputs=[x, y, 1], adjoint=True, adj_inputs=[adj_x, adj_y, 0])
    np.testing.assert_array_equal(adj_x.numpy(), [0, 2, 4, 6])  # threads 0..2 ran; thread 3 was skipped


@wp.struct
class Cloud:
    pos: wp.array(dtype=wp.vec3)
    scale: float


@wp.kernel
def scatter(c: Cloud, v: wp.array(dtype=wp.vec3), n: int):
    i = wp.tid()
    c.pos[i + n] = v[i] * c.scale


@wp.kernel
def gather_rows(m: wp.array(dtype=wp.mat22), out: wp.array(dtype=wp.vec2), n: int):
    i = wp.tid()
    out[i] = m[i + n][0]


def test_struct_field_arrays_are_named_by_their_path(debug_mode):
    c = Cloud()
    c.pos = wp.zeros(3, dtype=wp.vec3)
    c.scale = 2.0
    v = wp.array(np.ones((3, 3), dtype=np.float32), dtype=wp.vec3)
    with pytest.raises(wp.KernelBoundsError, match=re.escape(
            f"{where(scatter, 'c.pos[i + n]')}: kernel 'scatter': index [3] is out of bounds writing argument "
            f"'c.pos' of shape (3,) (thread 2)")):
        wp.launch(scatter, 3, inputs=[c, v, 1])
    np.testing.assert_array_equal(c.pos.numpy(), [[0, 0, 0], [2, 2, 2], [2, 2, 2]])


def test_out_of_bounds_composite_load_yields_zero(debug_mode):
    m = wp.array(np.arange(8, dtype=np.float32).reshape(2, 2, 2) + 1, dtype=wp.mat22)
    out = wp.full(2, wp.vec2(9.0, 9.0), dtype=wp.vec2)
    with pytest.raises(wp.KernelBoundsError, match=re.escape(
            "kernel 'gather_rows': index [2] is out of bounds reading argument 'm' of shape (2,) (thread 1)")):
        wp.launch(gather_rows, 2, inputs=[m, out, 1])
    np.testing.assert_array_equal(out.numpy(), [[5, 6], [0, 0]])


@wp.func
def next_element(a: wp.array(dtype=wp.float32), i: int):
    return a[i + 1]


@wp.kernel
def uses_next_element(a: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i] = next_element(a, i)


def test_access_inside_a_wp_func_names_the_functions_line(debug_mode):
    lines, first = inspect.getsourcelines(next_element.__wrapped__)
    loc = f"{inspect.getsourcefile(next_element.__wrapped__)}:{first + 2}:12"
    with pytest.raises(wp.KernelBoundsError, match=re.escape(loc) + r"(?: \(called from [^)]*\))*" + re.escape(
            ": kernel 'uses_next_element': index [3] is out of bounds reading argument 'a' of shape (3,) "
            "(thread 2)")):
        wp.launch(uses_next_element, 3, inputs=[wp.full(3, 1.0, dtype=wp.float32), wp.zeros(3, dtype=wp.float32)])
