"""Tuple values in kernels and @wp.func (Warp 1.19): literals, len() and wp.static(len()), constant and loop
indices, unpacking, builtin and @wp.func results kept as tuples, tuple parameters (`tuple[A, B]`, `tuple[T, ...]`,
`Any`, `tuple`), tuple returns, gradients through tuples, and the errors. Expected values are hand-computed."""

import inspect
import math
from typing import Any

import numpy as np
import pytest

import mlwarp as wp


@wp.struct
class Frame:
    origin: wp.vec3
    scale: float


@wp.kernel
def k_basics(out: wp.array(dtype=float), iout: wp.array(dtype=int)):
    tid = wp.tid()
    s = Frame()
    s.origin = wp.vec3(1.0, 2.0, 3.0)
    s.scale = 4.0
    t = (7, 2.5, wp.vec3(0.5, 1.5, 2.5), s, tid)
    iout[0] = len(t)
    iout[1] = wp.static(len(t))
    iout[2] = t[0]
    iout[3] = t[4]
    iout[4] = t[-5]
    out[0] = t[1]
    out[1] = t[2][1]
    out[2] = t[3].origin[2]
    out[3] = t[-2].scale
    a, b, c, d, e = t
    out[4] = b + c[2] + d.scale
    iout[5] = a + e
    (x, y), z = ((1.5, 2), t[2])  # nested unpacking
    out[5] = x + float(y) + z[0]
    u = (t, 3)  # a tuple inside a tuple
    out[6] = u[0][2][2] + float(u[1])
    iout[6] = len(u[0])


def test_tuple_literals_indexing_and_unpacking():
    out, iout = wp.zeros(7, dtype=float), wp.zeros(7, dtype=int)
    wp.launch(k_basics, dim=1, inputs=[out, iout])
    np.testing.assert_array_equal(iout.numpy(), [5, 5, 7, 0, 7, 7, 5])
    np.testing.assert_allclose(out.numpy(), [2.5, 1.5, 3.0, 4.0, 2.5 + 2.5 + 4.0, 1.5 + 2.0 + 0.5, 2.5 + 3.0])


@wp.kernel
def k_builtin_tuple(q: wp.array(dtype=wp.quat), out: wp.array(dtype=float)):
    t = wp.quat_to_axis_angle(q[0])
    axis = t[0]
    out[0] = axis[2]
    out[1] = t[1]
    out[2] = float(len(t))
    a, b = t
    out[3] = a[0] + b


def test_builtin_result_kept_as_a_tuple():
    # q = (0, 0, sin(h), cos(h)) with sin(h) = 0.6, cos(h) = 0.8: axis z, angle 2h = 2 atan2(0.6, 0.8)
    q = wp.array([wp.quat(0.0, 0.0, 0.6, 0.8)], dtype=wp.quat)
    out = wp.zeros(4, dtype=float)
    wp.launch(k_builtin_tuple, dim=1, inputs=[q, out])
    angle = 2.0 * math.atan2(0.6, 0.8)
    np.testing.assert_allclose(out.numpy(), [1.0, angle, 2.0, angle], rtol=1e-6, atol=1e-6)


@wp.func
def split(x: int, y: float) -> tuple[int, float]:
    return (x * 10, y * 0.5)


@wp.func
def shifted(scale: float, offset: wp.vec3) -> tuple[float, wp.vec3]:
    t = (scale * 2.0, offset + wp.vec3(1.0, 1.0, 1.0))
    return t  # a tuple local returned


@wp.kernel
def k_func_results(out: wp.array(dtype=float)):
    t = split(3, 5.0)
    out[0] = float(t[0])
    out[1] = t[1]
    out[2] = float(wp.static(len(t)))
    r = shifted(1.5, wp.vec3(1.0, 2.0, 3.0))
    s, v = r
    out[3] = s
    out[4] = v[2]
    out[5] = r[1][0]


def test_function_results_kept_as_tuples():
    out = wp.zeros(6, dtype=float)
    wp.launch(k_func_results, dim=1, inputs=[out])
    np.testing.assert_allclose(out.numpy(), [30.0, 2.5, 2.0, 3.0, 4.0, 2.0])


@wp.func
def weighted(values: tuple[wp.vec3, float]) -> float:
    return wp.length(values[0]) * values[1]


@wp.func
def total_ellipsis(values: tuple[int, ...]):
    out = int(0)
    for i in range(wp.static(len(values))):
        out += values[i]
    return out


@wp.func
def total_any(values: Any):
    out = int(0)
    for i in range(len(values)):
        out += values[i] * (i + 1)
    return out


@wp.func
def count_bare(values: tuple):
    return len(values)


@wp.func
def nested(values: tuple[tuple[int, float], wp.vec2]) -> float:
    inner, v = values
    return float(inner[0]) * inner[1] + v[1]


@wp.kernel
def k_tuple_params(out: wp.array(dtype=float), iout: wp.array(dtype=int)):
    t = (wp.vec3(3.0, 0.0, 4.0), 2.0)
    out[0] = weighted(t)
    out[1] = weighted((t[0], 0.5))
    iout[0] = total_ellipsis((5,))
    iout[1] = total_ellipsis((1, 2, 3))
    iout[2] = total_any((4, 5))  # 4*1 + 5*2
    iout[3] = total_any((1, 1, 1, 1))  # 1 + 2 + 3 + 4
    iout[4] = count_bare((1, 2.0, wp.vec2()))
    out[2] = nested(((3, 1.5), wp.vec2(0.0, 0.25)))


def test_tuple_parameters():
    out, iout = wp.zeros(3, dtype=float), wp.zeros(5, dtype=int)
    wp.launch(k_tuple_params, dim=1, inputs=[out, iout])
    np.testing.assert_allclose(out.numpy(), [10.0, 2.5, 4.75])
    np.testing.assert_array_equal(iout.numpy(), [5, 6, 14, 10, 3])


@wp.kernel
def k_runtime_index(idx: wp.array(dtype=int), out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    t = (wp.vec2(1.0, 2.0), wp.vec2(3.0, 4.0), wp.vec2(5.0, 6.0))
    out[i] = t[idx[i]]


def test_runtime_index_into_a_homogeneous_tuple():
    idx = wp.array([0, 1, 2, -1, -3], dtype=int)
    out = wp.zeros(5, dtype=wp.vec2)
    wp.launch(k_runtime_index, dim=5, inputs=[idx, out])
    np.testing.assert_array_equal(out.numpy(), [[1, 2], [3, 4], [5, 6], [5, 6], [1, 2]])


@wp.kernel
def k_branches(x: wp.array(dtype=float), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    t = (x[i], (wp.vec2(1.0, 2.0), 3))
    if x[i] > 0.0:
        t = (x[i] * 2.0, (wp.vec2(5.0, 6.0), 7))  # reassigned in one branch: merged part by part
    if x[i] > 1.0:
        u = (1.0, 2.0)
        s = u[1]
    else:
        u = (3.0, 4.0)
        s = u[0]
    out[i] = wp.vec3(t[0] + u[0], t[1][0][1] + s, float(t[1][1]))


def test_tuples_reassigned_in_branches():
    x = wp.array([-1.0, 0.5, 2.0], dtype=float)
    out = wp.zeros(3, dtype=wp.vec3)
    wp.launch(k_branches, dim=3, inputs=[x, out])
    np.testing.assert_allclose(out.numpy(), [[-1.0 + 3.0, 2.0 + 3.0, 3.0], [1.0 + 3.0, 6.0 + 3.0, 7.0],
                                             [4.0 + 1.0, 6.0 + 2.0, 7.0]])


CAPTURED = (2, 0.25)
INDEX = 1


@wp.kernel
def k_captured(out: wp.array(dtype=float)):
    out[0] = float(CAPTURED[0]) + CAPTURED[1]
    out[1] = float(len(CAPTURED))
    t = (3, 0.75, wp.vec2(0.0, 9.0))
    out[2] = t[INDEX] + t[wp.static(INDEX + 1)][1]  # constant indices from Python: mixed types allowed


def test_captured_python_tuple_and_constant_indices():
    out = wp.zeros(3, dtype=float)
    wp.launch(k_captured, dim=1, inputs=[out])
    np.testing.assert_allclose(out.numpy(), [2.25, 2.0, 9.75])


@wp.func
def product(values: tuple[float, float]) -> float:
    return values[0] * values[1]


@wp.kernel
def k_grad(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = (x[i], 2.0 * x[i])
    y[i] = product(t) + t[1]  # 2 x^2 + 2 x


def test_gradients_flow_through_tuples():
    x = wp.array([1.0, -0.5, 3.0], dtype=float, requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k_grad, dim=3, inputs=[x, y])
    tape.backward(grads={y: wp.ones(3, dtype=float)})
    xs = np.array([1.0, -0.5, 3.0])
    np.testing.assert_allclose(y.numpy(), 2 * xs ** 2 + 2 * xs)
    np.testing.assert_allclose(x.grad.numpy(), 4 * xs + 2)


# -- errors ----------------------------------------------------------------------------------
def launch_error(kernel_func, cls, message, line_text):
    lines, first = inspect.getsourcelines(kernel_func)
    line = first + next(n for n, t in enumerate(lines) if line_text in t)
    with pytest.raises(cls) as info:
        wp.launch(wp.kernel(kernel_func), dim=1, inputs=[wp.zeros(1)])
    assert str(info.value).splitlines()[0] == f"{__file__}:{line}: in '{kernel_func.__name__}': {message}"


def k_mixed_runtime_index(out: wp.array(dtype=float)):
    t = (1, 2.0)
    i = int(out[0])
    out[0] = t[i]


def test_runtime_index_into_a_mixed_tuple():
    launch_error(k_mixed_runtime_index, wp.CompileError, "Tuple index must be a compile time expression: the "
                 "elements of this tuple[int32, float32] differ in type, so a runtime index cannot choose among "
                 "them", "= t[i]")


def k_out_of_bounds(out: wp.array(dtype=float)):
    t = (1.0, 2.0)
    out[0] = t[2]


def k_out_of_bounds_negative(out: wp.array(dtype=float)):
    t = (1.0, 2.0)
    out[0] = t[-3]


def test_index_out_of_bounds():
    launch_error(k_out_of_bounds, wp.CompileError, "Tuple index out of bounds, 2 >= 2", "t[2]")
    launch_error(k_out_of_bounds_negative, wp.CompileError, "Tuple index out of bounds, -3 < -2", "t[-3]")


def k_item_assignment(out: wp.array(dtype=float)):
    t = (1.0, 2.0)
    t[0] = 3.0


def test_tuples_cannot_be_changed():
    launch_error(k_item_assignment, wp.CompileError,
                 "'t' is a tuple, which cannot be changed: assign a new tuple to 't' instead", "t[0] = 3.0")


@wp.kernel
def k_loops(x: wp.array(dtype=float), out: wp.array(dtype=float), iout: wp.array(dtype=int)):
    t = (1.0, 2.0)
    for i in range(3):
        t = (t[1], t[0] + t[1])  # (2, 3), (3, 5), (5, 8)
    out[0] = t[0]
    out[1] = t[1]
    w = (1, 0)
    while w[0] < 10:
        w = (w[0] + w[1] + 1, w[0])  # (2, 1), (4, 2), (7, 4), (12, 7)
    iout[0] = w[0]
    iout[1] = w[1]
    b = (1, -1)
    for i in range(10):
        if b[0] > 4:
            break
        b = (b[0] * 2, i)  # (2, 0), (4, 1), (8, 2), then break
    iout[2] = b[0]
    iout[3] = b[1]
    u = (0, (0.5, 1))
    for i in range(2):
        for j in range(2):
            u = (u[0] + 1, (u[1][0] * 2.0, u[1][1] + j))
    iout[4] = u[0]
    out[2] = u[1][0]
    iout[5] = u[1][1]
    g = (x[0], 0.0)
    for k in range(3):
        g = (g[0] * 2.0, g[1] + g[0])  # (8 x, 7 x)
    out[3] = g[0] + g[1]


def test_tuples_reassigned_in_loops():
    x = wp.array([0.5], dtype=float, requires_grad=True)
    out = wp.zeros(4, dtype=float, requires_grad=True)
    iout = wp.zeros(6, dtype=int)
    tape = wp.Tape()
    with tape:
        wp.launch(k_loops, dim=1, inputs=[x, out, iout])
    np.testing.assert_allclose(out.numpy(), [5.0, 8.0, 8.0, 7.5])
    np.testing.assert_array_equal(iout.numpy(), [12, 7, 8, 2, 4, 1 + 0 + 1 + 0 + 1])
    tape.backward(grads={out: wp.array([0.0, 0.0, 0.0, 1.0], dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), [15.0])


def k_tuple_loop_variable(out: wp.array(dtype=float)):
    t = (1.0, 2.0)
    for t in range(3):
        out[0] = float(t)


def test_a_tuple_cannot_become_a_loop_variable():
    launch_error(k_tuple_loop_variable, wp.CompileError,
                 "the loop variable 't' is a tuple defined before the loop; use another name", "for t in range(3)")


def k_branch_types_differ(out: wp.array(dtype=float)):
    t = (1.0, 2.0)
    if out[0] > 0.0:
        t = (3.0, 4)
    out[0] = t[0]


def test_a_tuple_reassigned_in_a_branch_keeps_its_type():
    launch_error(k_branch_types_differ, wp.CompileTypeError, "assigning to existing symbol t "
                 "(tuple[float32, float32]) with different type (tuple[float32, int32])", "t = (3.0, 4)")


def k_tuple_as_value(out: wp.array(dtype=float)):
    t = (1.0, 2.0)
    out[0] = wp.sin(t)


def test_a_tuple_where_a_value_is_needed():
    launch_error(k_tuple_as_value, wp.CompileTypeError, "a tuple (tuple[float32, float32]) cannot be used here: "
                 "index it (`t[0]`), unpack it (`a, b = t`), take its len(), or pass it to a @wp.func", "wp.sin(t)")


def k_unpack_count(out: wp.array(dtype=float)):
    t = (1.0, 2.0)
    a, b, c = t


def test_unpacking_the_wrong_number_of_values():
    launch_error(k_unpack_count, wp.CompileError, "cannot unpack 2 values into 3 names", "a, b, c")


def k_wrong_tuple_argument(out: wp.array(dtype=float)):
    out[0] = weighted((1.0, 2.0))


def test_a_tuple_argument_that_matches_no_annotation():
    launch_error(k_wrong_tuple_argument, wp.CompileTypeError, "Couldn't find function overload for 'weighted' that "
                 "matched inputs with types: [tuple[float32, float32]]", "weighted(")
