"""for-loop iteration: reversed(range(...)), the loop variable after the loop, wp.float / wp.int."""

import types

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def reversed_range(start: int, end: int, step: int, count: wp.array(dtype=int), values: wp.array(dtype=int)):
    c = int(0)
    for i in reversed(range(start, end, step)):
        values[c] = i
        c += 1
    count[0] = c


@pytest.mark.parametrize("start,end,step", [(-2, 8, 3), (9, -3, -2), (10, 8, 4), (0, 5, 1), (3, 3, 1), (5, 0, -1)])
def test_reversed_runtime_range(start, end, step):
    count = wp.zeros(1, dtype=int)
    values = wp.zeros(32, dtype=int)
    wp.launch(reversed_range, 1, inputs=[start, end, step, count, values])
    expected = list(reversed(range(start, end, step)))
    assert count.numpy()[0] == len(expected)
    np.testing.assert_array_equal(values.numpy()[: len(expected)], expected)


@wp.kernel
def reversed_constant(values: wp.array(dtype=int)):
    c = int(0)
    for i in reversed(range(4)):
        values[c] = i
        c += 1


def test_reversed_constant_range():
    values = wp.zeros(4, dtype=int)
    wp.launch(reversed_constant, 1, inputs=[values])
    np.testing.assert_array_equal(values.numpy(), [3, 2, 1, 0])


@wp.kernel
def loop_variable_after(n: int, out: wp.array(dtype=int)):
    s = int(0)
    for i in range(n):
        s += i
    k = int(0)
    while k < 3:
        i = i + 1
        k += 1
    out[0] = i
    for j in range(4):
        s += 1
    out[1] = j


def test_loop_variable_keeps_last_value_after_loop():
    out = wp.zeros(2, dtype=int)
    wp.launch(loop_variable_after, 1, inputs=[2, out])
    np.testing.assert_array_equal(out.numpy(), [1 + 3, 3])  # as Python: i == 1 after range(2)


@wp.kernel
def warp_scalar_names(out: wp.array(dtype=float), ints: wp.array(dtype=int)):
    a = wp.float(0.0)
    for _i in range(4, wp.min(8, 100)):
        a += wp.float(1.0)
    out[0] = a
    ints[0] = wp.int(3.7)


def test_wp_float_and_wp_int_are_float32_and_int32():
    out = wp.zeros(1, dtype=float)
    ints = wp.zeros(1, dtype=int)
    wp.launch(warp_scalar_names, 1, inputs=[out, ints])
    assert out.numpy()[0] == 4.0
    assert ints.numpy()[0] == 3


# -- kernels and return values ---------------------------------------------------------------------------------
KERNEL_RETURN = ("Warp kernels cannot return values. Write results to output arguments, and omit the return "
                 "annotation or use `-> None`.")


def test_kernel_return_annotation_none_is_allowed():
    def none_annotated(out: wp.array(dtype=float)) -> None:
        out[0] = 1.0
        return

    def nonetype_annotated(out: wp.array(dtype=float)) -> types.NoneType:
        out[0] = 2.0

    for f, v in ((none_annotated, 1.0), (nonetype_annotated, 2.0)):
        out = wp.zeros(1, dtype=float)
        wp.launch(wp.kernel(f), 1, inputs=[out])
        assert out.numpy()[0] == v


def returns_none(out: wp.array(dtype=float)):
    return None


def annotated_float(out: wp.array(dtype=float)) -> float:
    return 1.0


@pytest.mark.parametrize("f", [returns_none, annotated_float])
def test_kernel_return_value_is_refused_with_warps_text(f):
    with pytest.raises(wp.CompileTypeError) as info:
        wp.launch(wp.kernel(f), 1, inputs=[wp.zeros(1, dtype=float)])
    assert str(info.value).splitlines()[0].endswith(f"in '{f.__name__}': {KERNEL_RETURN}")


def test_kernel_return_annotation_is_read_as_evaluated_at_definition():
    Ret = None

    def aliased(out: wp.array(dtype=float)) -> Ret:
        out[0] = 1.0

    out = wp.zeros(1, dtype=float)
    wp.launch(wp.kernel(aliased, module="unique"), 1, inputs=[out])
    assert out.numpy()[0] == 1.0
    Ret = float

    def aliased(out: wp.array(dtype=float)) -> Ret:  # noqa: F811
        out[0] = 2.0

    with pytest.raises(wp.CompileTypeError) as info:
        wp.launch(wp.kernel(aliased, module="unique"), 1, inputs=[out])
    assert str(info.value).splitlines()[0].endswith(f"in 'aliased': {KERNEL_RETURN}")


def test_generic_kernel_return_annotation_alias_is_not_reused():
    from typing import Any

    Ret = None

    def aliased_generic(x: Any, out: wp.array(dtype=float)) -> Ret:
        out[0] = 1.0

    out = wp.zeros(1, dtype=float)
    wp.launch(wp.kernel(aliased_generic, module="unique"), 1, inputs=[3.0, out])
    assert out.numpy()[0] == 1.0
    Ret = float

    def aliased_generic(x: Any, out: wp.array(dtype=float)) -> Ret:  # noqa: F811
        out[0] = 1.0

    with pytest.raises(wp.CompileTypeError) as info:  # same source: the annotation tells the two apart
        wp.launch(wp.kernel(aliased_generic, module="unique"), 1, inputs=[3.0, out])
    assert str(info.value).splitlines()[0].endswith(f"in 'aliased_generic': {KERNEL_RETURN}")
