"""@wp.func: calls from kernels and functions, early and tuple returns, overloads, generic (typing.Any)
arguments, defaults and keywords, Python-scope calls and the errors (behaviour checked against warp-lang)."""

import inspect
import typing

import numpy as np
import pytest

import mlwarp as wp


@wp.func
def square(x: float):
    return x * x


@wp.func
def sum_of_squares(a: float, b: float):
    return square(a) + square(b)  # a function calling a function


@wp.func
def signed_square(x: float):
    if x < 0.0:
        return -square(x)  # early return from a branch
    return square(x)


@wp.func
def first_over(values: wp.array(dtype=float), limit: float):
    for k in range(values.shape[0]):
        if values[k] > limit:
            return k  # early return from a loop
    return -1


@wp.kernel
def use_funcs(x: wp.array(dtype=float), out: wp.array(dtype=float), idx: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = sum_of_squares(x[i], 1.0) + signed_square(x[i])
    idx[i] = first_over(x, x[i])


def test_functions_called_from_kernels_and_functions():
    x = np.array([-2.0, 0.5, 3.0, 1.0], np.float32)
    out, idx = wp.zeros(4), wp.zeros(4, dtype=int)
    wp.launch(use_funcs, dim=4, inputs=[wp.array(x), out, idx])
    np.testing.assert_array_equal(out.numpy(), x * x + np.float32(1.0) + np.where(x < 0, -x * x, x * x))
    assert list(idx.numpy()) == [1, 2, -1, 2]


@wp.func
def divmod_int(a: int, b: int):
    return a // b, a % b  # a tuple result


@wp.func
def forward_tuple(a: int, b: int):
    return divmod_int(a, b)


@wp.kernel
def use_tuples(a: wp.array(dtype=int), q: wp.array(dtype=int), r: wp.array(dtype=int)):
    i = wp.tid()
    qq, rr = forward_tuple(a[i], 7)
    q[i] = qq
    r[i] = rr


def test_tuple_returns_unpack():
    a = np.array([-15, -1, 0, 6, 50], np.int32)
    q, r = wp.zeros(5, dtype=int), wp.zeros(5, dtype=int)
    wp.launch(use_tuples, dim=5, inputs=[wp.array(a), q, r])
    np.testing.assert_array_equal(q.numpy(), a // 7)
    np.testing.assert_array_equal(r.numpy(), np.fmod(a, 7))


@wp.func
def scale(x: float):
    return x * 2.0


@wp.func
def scale(x: int):  # noqa: F811  (an overload, as in Warp)
    return x * 3


@wp.func
def double(x: typing.Any):
    return x + x


@wp.kernel
def use_overloads(f: wp.array(dtype=float), n: wp.array(dtype=int), d: wp.array(dtype=wp.float64)):
    i = wp.tid()
    f[i] = scale(1.5) + double(f[i])
    n[i] = scale(2) + double(n[i])
    d[i] = double(d[i])  # a third specialisation of the generic function


def test_overloads_by_annotation_and_generic_arguments():
    f, n, d = wp.full(2, 0.25), wp.full(2, 5, dtype=int), wp.full(2, 0.1, dtype=wp.float64)
    wp.launch(use_overloads, dim=2, inputs=[f, n, d])
    assert list(f.numpy()) == [3.5, 3.5]
    assert list(n.numpy()) == [16, 16]
    assert list(d.numpy()) == [0.2, 0.2]


@wp.func
def axpy(x: float, y: float, a: float = 2.0):
    return a * x + y


@wp.func
def store(arr: wp.array(dtype=float), i: int, v: float):
    arr[i] = v  # no return value: called for its effect


@wp.kernel
def use_defaults(out: wp.array(dtype=float)):
    i = wp.tid()
    store(out, i, axpy(1.0, 1.0) + axpy(1.0, y=0.5, a=10.0) + float(i))


def test_defaults_keywords_and_functions_without_result():
    out = wp.zeros(3)
    wp.launch(use_defaults, dim=3, inputs=[out])
    assert list(out.numpy()) == [13.5, 14.5, 15.5]


@wp.func
def thread_value():
    return wp.tid() * 10


@wp.kernel
def tid_in_func(out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = thread_value() + 1


def test_tid_inside_a_function():
    out = wp.zeros(4, dtype=int)
    wp.launch(tid_in_func, dim=4, inputs=[out])
    assert list(out.numpy()) == [1, 11, 21, 31]


@wp.func
def modify_argument(x: float):
    x = x + 1.0
    return x


@wp.kernel
def arguments_are_values(out: wp.array(dtype=float)):
    y = 1.0
    z = modify_argument(y)
    out[0] = y * 10.0 + z


def test_arguments_are_passed_by_value():
    out = wp.zeros(1)
    wp.launch(arguments_are_values, dim=1, inputs=[out])
    assert out.numpy()[0] == 12.0


def test_functions_callable_from_python():
    assert square(3.0) == 9.0
    assert sum_of_squares(1.0, 2.0) == 5.0
    assert scale(2) == 6 and scale(1.5) == 3.0  # the overload chosen by the argument types
    assert double(2) == 4
    assert axpy(1.0, 1.0) == 3.0


def test_function_ir_is_inlined_by_the_pipeline():
    ir_text = use_funcs.to_mlir("warp")
    assert ir_text.count("func.func private") == 4 and "call @square_0" in ir_text  # square: emitted once
    inlined = use_funcs.to_mlir("warp-opt")
    assert "func.func private" not in inlined and "call @" not in inlined


@wp.func
def sum_and_difference(a: float, b: float):
    s = a + b
    return s, a - b  # the body's only return, its last statement


@wp.func
def store_square(out: wp.array(dtype=float), i: int, x: float):
    out[i] = square(x)  # no return


@wp.kernel
def ends_in_return(xs: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    s, d = sum_and_difference(xs[i], 1.0)
    store_square(out, i, s * d + signed_square(xs[i]))


def test_functions_whose_only_return_ends_them_are_emitted_once(monkeypatch):
    # their result types are those of that return: no first emission to find them (a function returning
    # elsewhere, signed_square, still takes one)
    from mlwarp.compiler.frontend import functions

    emitted = []
    real = functions.FunctionEmitter._emit_body
    monkeypatch.setattr(functions.FunctionEmitter, "_emit_body",
                        lambda self, *a: (emitted.append(self.src.name), real(self, *a))[1])
    ir_text = ends_in_return.to_mlir("warp")
    assert sorted(emitted) == ["signed_square", "signed_square", "square", "store_square", "sum_and_difference"]
    assert "func.func private @sum_and_difference_0(%arg0: f32, %arg1: f32) -> (f32, f32)" in ir_text
    assert "func.func private @store_square_0(%arg0: !warp.array<f32, 1 : i64>, %arg1: i32, %arg2: f32) {" in ir_text
    xs = np.array([-2.0, 0.5, 3.0], dtype=np.float32)
    out = wp.zeros(3)
    wp.launch(ends_in_return, dim=3, inputs=[wp.array(xs), out])
    expected = ((xs + 1) * (xs - 1) + np.sign(xs) * xs * xs) ** 2
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


# -- errors ----------------------------------------------------------------------------------
def launch_error(kernel_func, cls, message, func_for_line, line_text):
    lines, first = inspect.getsourcelines(func_for_line)
    line = first + next(n for n, t in enumerate(lines) if line_text in t)
    with pytest.raises(cls) as info:
        wp.launch(wp.kernel(kernel_func), dim=1, inputs=[wp.zeros(1)])
    assert str(info.value).splitlines()[0] == (f"{__file__}:{line}: in '{func_for_line.__name__}': {message}")


@wp.func
def countdown(n: int):
    if n <= 0:
        return 0
    return countdown(n - 1) + 1


def k_recursion(out: wp.array(dtype=float)):
    out[0] = float(countdown(3))


def test_recursion_is_a_clear_error():
    launch_error(k_recursion, wp.CompileError, "recursion is not supported: 'countdown' calls itself "
                 "(countdown -> countdown)", countdown, "return countdown(")


@wp.func
def ping(n: int):
    return pong(n)


@wp.func
def pong(n: int):
    return ping(n)


def k_mutual(out: wp.array(dtype=float)):
    out[0] = float(ping(1))


def test_mutual_recursion_is_a_clear_error():
    launch_error(k_mutual, wp.CompileError, "recursion is not supported: 'ping' calls itself (ping -> pong -> ping)",
                 pong, "return ping(n)")


@wp.func
def mixed_returns(x: float):
    if x > 0.0:
        return 1
    return 2.0


def k_mixed_returns(out: wp.array(dtype=float)):
    out[0] = mixed_returns(1.0)


def test_returning_different_types():
    launch_error(k_mixed_returns, wp.CompileTypeError,
                 "function returned different types, previous: [int32], new [float32]", mixed_returns, "return 2.0")


@wp.func
def annotated(x: float) -> int:
    return x


def k_annotated(out: wp.array(dtype=float)):
    out[0] = float(annotated(1.0))


def test_return_value_must_match_the_annotation():
    launch_error(k_annotated, wp.CompileTypeError, "The function `annotated` has its return type annotated as "
                 "`int` but the code returns a value of type `float32`.", annotated, "return x")


@wp.func
def two_for_one(x: int) -> int:
    return (x + x, x * x)


@wp.func
def mixed_pair(x: int) -> tuple[int, int]:
    return (x, 1.23)


@wp.func
def short_triple(x: int) -> tuple[int, int, int]:
    return (x + x, x * x)


def k_two_for_one(out: wp.array(dtype=float)):
    a, b = two_for_one(3)


def k_mixed_pair(out: wp.array(dtype=float)):
    a, b = mixed_pair(3)


def k_short_triple(out: wp.array(dtype=float)):
    a, b, c = short_triple(3)


@pytest.mark.parametrize("kernel_func, func, message", [
    (k_two_for_one, two_for_one, "annotated as `int` but the code returns 2 values."),
    (k_mixed_pair, mixed_pair, "annotated as `tuple[int, int]` but the code returns a tuple with types "
                               "`(int32, float32)`."),
    (k_short_triple, short_triple, "annotated as a tuple of 3 elements but the code returns 2 values."),
])
def test_returned_tuple_must_match_the_annotation(kernel_func, func, message):
    launch_error(kernel_func, wp.CompileTypeError, f"The function `{func.__name__}` has its return type {message}",
                 func, "return (")


def k_no_overload(out: wp.array(dtype=float)):
    out[0] = scale(wp.float64(1.0))


def test_no_matching_overload():
    launch_error(k_no_overload, wp.CompileTypeError,
                 "Couldn't find function overload for 'scale' that matched inputs with types: [float64]",
                 k_no_overload, "scale(")


def k_unpack_count(out: wp.array(dtype=float)):
    a, b, c = divmod_int(1, 2)


def test_unpacking_the_wrong_number_of_results():
    launch_error(k_unpack_count, wp.CompileError,
                 "cannot unpack 2 value(s) returned by 'divmod_int' into 3 names", k_unpack_count, "a, b, c")


def test_missing_annotations_fail_at_definition():
    with pytest.raises(wp.CompileError, match=r"Incomplete argument annotations on function f: x need\(s\) a type"):
        @wp.func
        def f(x):
            return x


@wp.func
def reflect(v: wp.vec3, n: wp.vec3):
    if wp.dot(v, n) > 0.0:
        return v  # an early return of a composite value
    return v - 2.0 * wp.dot(v, n) * n


@wp.func
def direction_and_length(v: wp.vec3) -> tuple[wp.vec3, float]:
    return wp.normalize(v), wp.length(v)


@wp.kernel
def use_vector_funcs(vs: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), lens: wp.array(dtype=float)):
    i = wp.tid()
    d, length = direction_and_length(reflect(vs[i], wp.vec3(0.0, 1.0, 0.0)))
    out[i] = d
    lens[i] = length


def test_functions_taking_and_returning_vectors():
    v = np.array([[1, -2, 0], [0, 3, 4]], np.float32)
    out, lens = wp.zeros(2, dtype=wp.vec3), wp.zeros(2)
    wp.launch(use_vector_funcs, dim=2, inputs=[wp.array(v, dtype=wp.vec3), out, lens])
    r = np.array([[1, 2, 0], [0, 3, 4]], np.float32)
    np.testing.assert_allclose(lens.numpy(), np.linalg.norm(r, axis=1), rtol=1e-6)
    np.testing.assert_allclose(out.numpy(), r / np.linalg.norm(r, axis=1, keepdims=True), rtol=1e-6)


@wp.func
def takes_float64(x: wp.float64):
    return x


@wp.func
def takes_float32(x: float):
    return x * 2.0


def test_python_scope_calls_match_python_numbers_to_warps_default_types_only():
    # Warp's rule (checked under warp-lang 1.19): 1.0 is a float32 and 1 an int32, nothing wider or narrower
    assert takes_float32(1.5) == 3.0
    assert takes_float64(wp.float64(0.5)) == wp.float64(0.5)
    for call, shown in ((lambda: takes_float64(1.0), r"\(1\.0,\)"), (lambda: takes_float32(1), r"\(1,\)"),
                        (lambda: takes_float32(True), r"\(True,\)")):
        with pytest.raises(RuntimeError, match=rf"^Error calling function '\w+', no overload found for arguments "
                                               rf"{shown}$"):
            call()
