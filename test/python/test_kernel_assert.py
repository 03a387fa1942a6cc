"""`assert` in kernels, as Warp compiles C's assert: the condition is evaluated in every build and checked in debug
builds only, where a false one makes the launch raise wp.KernelAssertionError (Warp's debug build aborts the
process; mlwarp raises after the launch, which went on past it)."""

import re

import numpy as np
import pytest

import mlwarp as wp
from source_util import where


@wp.kernel
def root(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    assert a[i] >= 0.0, "no negative values"
    b[i] = wp.sqrt(wp.abs(a[i]))


@wp.func
def counted(counter: wp.array(dtype=int)) -> bool:
    return wp.atomic_add(counter, 0, 1) >= 0


@wp.kernel
def side_effect(counter: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    assert counted(counter)
    out[i] = i


def check_positive_py(x: float):
    assert x > 0.0


check_positive = wp.func(check_positive_py)


@wp.kernel
def through_func(a: wp.array(dtype=float)):
    i = wp.tid()
    check_positive(a[i])


def _where_in(py_func, text):
    class _Source:
        func = py_func

    return where(_Source, text)


VALUES = np.array([1.0, 4.0, -9.0, 16.0, -25.0], np.float32)


def test_release_builds_do_not_check():
    b = wp.zeros(5, dtype=float)
    wp.launch(root, 5, inputs=[wp.array(VALUES), b])
    np.testing.assert_allclose(b.numpy(), np.sqrt(np.abs(VALUES)))


def test_the_condition_is_evaluated_in_release_builds():
    counter, out = wp.zeros(1, dtype=int), wp.zeros(7, dtype=int)
    wp.launch(side_effect, 7, inputs=[counter, out])
    assert counter.numpy()[0] == 7
    np.testing.assert_array_equal(out.numpy(), np.arange(7))


def test_debug_builds_raise_with_the_statement_and_its_line(debug_mode):
    b = wp.zeros(5, dtype=float)
    with pytest.raises(wp.KernelAssertionError) as err:
        wp.launch(root, 5, inputs=[wp.array(VALUES), b])
    message = str(err.value)
    first = "thread 2; 2 threads failed it in this launch"
    assert message == (f"{where(root, 'assert a[i]')}: kernel 'root': `assert a[i] >= 0.0, \"no negative values\"` "
                       f"failed ({first})")
    assert isinstance(err.value, AssertionError)
    np.testing.assert_allclose(b.numpy(), np.sqrt(np.abs(VALUES)))  # the launch went on past the assert


def test_debug_builds_pass_true_asserts_and_count_side_effects_once(debug_mode):
    b = wp.zeros(3, dtype=float)
    wp.launch(root, 3, inputs=[wp.array(np.array([1.0, 0.0, 9.0], np.float32)), b])
    np.testing.assert_array_equal(b.numpy(), [1.0, 0.0, 3.0])
    counter, out = wp.zeros(1, dtype=int), wp.zeros(4, dtype=int)
    wp.launch(side_effect, 4, inputs=[counter, out])
    assert counter.numpy()[0] == 4


def test_an_assert_in_a_function_names_the_functions_line(debug_mode):
    with pytest.raises(wp.KernelAssertionError) as err:
        wp.launch(through_func, 2, inputs=[wp.array(np.array([1.0, -1.0], np.float32))])
    assert re.fullmatch(re.escape(_where_in(check_positive_py, "assert x")) + r"(?: \(called from [^)]*\))*" +
                        re.escape(": kernel 'through_func': `assert x > 0.0` failed (thread 1)"), str(err.value)), \
        str(err.value)


def test_the_gradient_of_a_kernel_with_an_assert(debug_mode):
    a = wp.array(np.array([1.0, 4.0], np.float32), requires_grad=True)
    b = wp.zeros(2, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(root, 2, inputs=[a, b])
    tape.backward(grads={b: wp.ones(2, dtype=float)})
    np.testing.assert_allclose(a.grad.numpy(), 0.5 / np.sqrt([1.0, 4.0]))
