"""Kernels the frontend refuses: each raises its exact message, naming this file, the line and the kernel."""

import inspect

import pytest

import mlwarp as wp


def helper(x):
    return x


def expect_error(func, cls, message, line_text):
    """Launching `func` as a kernel raises `cls` whose text is `<file>:<line>: in '<name>': <message>`,
    the line being the first one of `func` containing `line_text`."""
    lines, first = inspect.getsourcelines(func)
    line = first + next(n for n, text in enumerate(lines) if line_text in text)
    k = wp.kernel(func)
    with pytest.raises(cls) as info:
        wp.launch(k, dim=1, inputs=[wp.zeros(1)])
    assert str(info.value).splitlines()[0] == f"{__file__}:{line}: in '{func.__name__}': {message}"
    assert info.value.filename == __file__ and info.value.lineno == line
    return info.value


# -- unsupported syntax ---------------------------------------------------------------------------
def k_listcomp(out: wp.array(dtype=float)):
    x = [j for j in range(3)]


def k_lambda(out: wp.array(dtype=float)):
    f = lambda v: v  # noqa: E731


def k_try(out: wp.array(dtype=float)):
    try:
        out[0] = 1.0
    except Exception:
        pass


def k_with(out: wp.array(dtype=float)):
    with open("x"):
        pass


def k_dict(out: wp.array(dtype=float)):
    d = {1: 2.0}


def k_set(out: wp.array(dtype=float)):
    s = {1, 2}


def k_generator(out: wp.array(dtype=float)):
    out[0] = sum(float(j) for j in range(3))


def k_global(out: wp.array(dtype=float)):
    global helper


def k_starargs(out: wp.array(dtype=float)):
    out[0] = wp.min(*out)


@pytest.mark.parametrize("func,construct,line_text", [
    (k_listcomp, "list comprehension", "x = ["), (k_lambda, "lambda", "f = lambda"), (k_try, "try statement", "try:"),
    (k_with, "with statement", "with open"), (k_set, "set literal", "s = {"),
    (k_generator, "generator expression", "sum("), (k_global, "global statement", "global helper"),
])
def test_unsupported_syntax_names_the_construct(func, construct, line_text):
    expect_error(func, wp.UnsupportedSyntaxError, f"unsupported: {construct}", line_text)


def test_star_args_of_a_whole_array_use_warps_text():
    expect_error(k_starargs, wp.CompileTypeError, "Starred expressions apply to arrays only if they are sliced with "
                                                  "bounds known at compile-time.", "*out")


def k_list(out: wp.array(dtype=float)):
    x = [1.0, 2.0]


def test_list_and_dict_literals_use_warps_text():
    expect_error(k_list, wp.UnsupportedSyntaxError, "List constructs are not supported in kernels. Use vectors like "
                 "`wp.vec3()` for small fixed-size collections, or `wp.zeros(shape=N, dtype=...)` for stack-allocated "
                 "arrays.", "x = [")
    expect_error(k_dict, wp.UnsupportedSyntaxError, "Construct `ast.Dict` not supported in kernels.", "d = {")


# -- names and types --------------------------------------------------------------------------------
def k_undefined(out: wp.array(dtype=float)):
    out[0] = undefined_thing  # noqa: F821


def test_undefined_name():
    expect_error(k_undefined, wp.CompileKeyError, "Referencing undefined symbol: undefined_thing", "undefined_thing")


def k_one_branch(out: wp.array(dtype=float)):
    i = wp.tid()
    if i > 0:
        y = (out[0], 1.0)  # a tuple has no value on the path that skips this (a float or an array would)
    out[0] = y[1]


def test_name_bound_in_only_one_branch():
    lines, first = inspect.getsourcelines(k_one_branch)
    if_line = first + next(n for n, t in enumerate(lines) if "if i > 0" in t)
    expect_error(k_one_branch, wp.CompileError,
                 f"'y' is not defined on every path through the if at line {if_line}", "out[0] = y[1]")


def k_loop_only(out: wp.array(dtype=float)):
    for j in range(3):
        z = (out[0], 1.0)  # a tuple has no value after a loop that runs no iteration (a float or an array would)
    out[0] = z[1]


def test_name_bound_only_inside_a_loop():
    lines, first = inspect.getsourcelines(k_loop_only)
    loop_line = first + next(n for n, t in enumerate(lines) if "for j" in t)
    expect_error(k_loop_only, wp.CompileError,
                 f"'z' is assigned inside the loop at line {loop_line} and not defined before it", "out[0] = z[1]")


def k_loop_reads_first(out: wp.array(dtype=float)):
    for j in range(out.shape[0]):
        if j > 0:
            out[j] = w  # nothing has given w a type yet: the loop cannot carry it
        w = float(j)


def test_name_read_in_a_loop_before_any_assignment():
    expect_error(k_loop_reads_first, wp.CompileError,
                 "'w' is read before any assignment to it in the loop; define it before the loop", "out[j] = w")


def k_changes_type(out: wp.array(dtype=float)):
    x = 1.0
    x = 2


def k_changes_type_in_branch(out: wp.array(dtype=float)):
    i = wp.tid()
    x = 1.0
    if i > 0:
        x = i


def k_changes_type_in_loop(out: wp.array(dtype=float)):
    x = 1.0
    for j in range(3):
        x = j


@pytest.mark.parametrize("func,line_text", [(k_changes_type, "x = 2"), (k_changes_type_in_branch, "x = i"),
                                            (k_changes_type_in_loop, "x = j")])
def test_variable_changing_type(func, line_text):
    expect_error(func, wp.CompileTypeError, "assigning to existing symbol x (float32) with different type (int32)",
                 line_text)


def k_mixed(out: wp.array(dtype=float)):
    x = 2.0
    out[0] = x + 1


def k_mixed_widths(out: wp.array(dtype=float)):
    y = wp.float64(1.0) * 2.0


def test_mixed_type_operator():
    expect_error(k_mixed, wp.CompileTypeError, "Input types must be the same, got ['float32', 'int32']", "x + 1")
    expect_error(k_mixed_widths, wp.CompileTypeError, "Input types must be the same, got ['float64', 'float32']",
                 "* 2.0")


def k_store_type(out: wp.array(dtype=float)):
    out[0] = 1


def test_storing_another_type_into_an_array():
    expect_error(k_store_type, wp.CompileTypeError,
                 "array_store() value argument type (int32) must be of the same type as the array (float32)",
                 "out[0] = 1")


def k_returns_value(out: wp.array(dtype=float)):
    return 1.0


def test_kernel_returning_a_value():
    expect_error(k_returns_value, wp.CompileTypeError, "Warp kernels cannot return values. Write results to output "
                 "arguments, and omit the return annotation or use `-> None`.", "return 1.0")


def k_unknown_function(out: wp.array(dtype=float)):
    out[0] = no_such_function(1.0)  # noqa: F821


def test_unknown_function():
    expect_error(k_unknown_function, KeyError, "Referencing undefined symbol: no_such_function",  # Warp's KeyError
                 "no_such_function(")


def k_plain_python(out: wp.array(dtype=float)):
    out[0] = helper(1.0)


def test_calling_a_plain_python_function():
    expect_error(k_plain_python, wp.CompileError,
                 "calling 'helper' (function) is not supported in kernels: only Warp builtins and @wp.func "
                 "functions can be called", "helper(1.0)")


def k_bad_builtin_args(out: wp.array(dtype=float)):
    out[0] = wp.sin(1)


def test_builtin_with_wrong_argument_type():
    expect_error(k_bad_builtin_args, wp.CompileTypeError,
                 # (Warp's kernel-scope wording, recorded from warp-lang 1.19)
                 "Couldn't find function overload for 'sin' that matched inputs with types: [int32]",
                 "wp.sin(1)")


def k_range_float(out: wp.array(dtype=float)):
    for j in range(2.0):
        pass


def test_range_with_a_float_bound():
    expect_error(k_range_float, wp.CompileTypeError, "range() arguments must be int32, got float32", "range(2.0)")


def test_error_is_not_a_compiler_traceback():
    err = expect_error(k_undefined, wp.CompileKeyError, "Referencing undefined symbol: undefined_thing", "undefined_thing")
    assert err.__cause__ is None and err.__suppress_context__ in (True, False)
    assert str(err).endswith("Referencing undefined symbol: undefined_thing")  # the reason last, as Warp's messages
    assert err.__notes__ == ["    out[0] = undefined_thing  # noqa: F821"]  # the source line: printed below


def k_atomic_type(out: wp.array(dtype=float)):
    out[0] += 1


def test_augmented_assignment_on_an_array_names_the_atomic():
    expect_error(k_atomic_type, wp.CompileTypeError,
                 "atomic_add() value argument type (int32) must be of the same type as the array (float32)",
                 "out[0] += 1")


def k_branch_types(out: wp.array(dtype=float)):
    i = wp.tid()
    if i > 0:
        z = 1.0
    else:
        z = 2
    out[0] = 0.0


def test_a_new_variable_with_different_types_in_the_branches():
    expect_error(k_branch_types, wp.CompileTypeError,
                 "variable 'z' has type float32 in one branch and int32 in the other", "if i > 0")


@pytest.mark.parametrize("expr, message", [  # the messages warp-lang 1.19 gives for the same kernels
    ("wp.dot(wp.vec2(1.0, 2.0), wp.vec2h(wp.float16(1.0), wp.float16(2.0)))",
     "Input types must be exactly the same, got ['vec2f', 'vec2h']"),
    ("wp.vec3(1.0) + wp.vec3d(wp.float64(1.0))", "Input types must be the same, got ['vec3f', 'vec3d']"),
    ("wp.cross(wp.vec3(1.0), wp.vec3d(wp.float64(1.0)))", "Input types must be the same, got ['vec3f', 'vec3d']"),
    ("wp.min(wp.vec2(1.0), wp.vec2d(wp.float64(1.0)))", "Input types must be the same, got ['vec2f', 'vec2d']"),
    ("wp.vec3(1.0) + wp.vec2(1.0)", "Input types must be the same, got ['vec3f', 'vec2f']"),
    ("wp.quat() * wp.quatd()", "Input types must be the same, got ['quatf', 'quatd']"),
])
def test_composites_of_different_types_do_not_combine(tmp_path, expr, message):
    import importlib.util

    path = tmp_path / "mixed_composites.py"
    path.write_text(f"import mlwarp as wp\n\n\n@wp.kernel(module='unique')\ndef mixed():\n    x = {expr}\n")
    spec = importlib.util.spec_from_file_location("mixed_composites", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(wp.CompileTypeError) as info:
        wp.launch(module.mixed, 1)
    assert f"{path}:6" in str(info.value) and message in str(info.value)
