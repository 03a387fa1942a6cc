"""The catalogue of user mistakes (issue 8, item 2): each raises a clean exception of a known type whose
message names the user's file:line (compile errors) or the argument (launch errors), never a traceback
from inside the compiler. After every one, the process compiles and runs a new kernel normally."""

import importlib.util
import inspect
import itertools
import re
import textwrap

import numpy as np
import pytest

import mlwarp as wp

_fresh = itertools.count()


@pytest.fixture(autouse=True)
def next_kernel_compiles_and_runs(tmp_path):
    """After each mistake: a kernel never seen before (new source, so a cache miss) compiles and runs."""
    yield
    n = next(_fresh)
    path = tmp_path / f"fresh_kernel_{n}.py"
    path.write_text(textwrap.dedent(f"""
        import mlwarp as wp

        @wp.kernel
        def fresh_{n}(a: wp.array(dtype=wp.float32), s: float):
            i = wp.tid()
            a[i] = float(i) * s + {n}.0
    """))
    spec = importlib.util.spec_from_file_location(f"fresh_kernel_{n}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    a = wp.zeros(4, dtype=wp.float32)
    wp.launch(getattr(module, f"fresh_{n}"), 4, inputs=[a, 2.0])
    np.testing.assert_array_equal(a.numpy(), np.arange(4) * 2.0 + n)


def at(kernel, text) -> str:
    """The regex prefix of a compile error at the line of `kernel` (or @wp.func) holding `text`:
    `file:line: in 'k': `."""
    func = getattr(kernel, "func", None) or kernel.__wrapped__
    lines, first = inspect.getsourcelines(func)
    for k, line in enumerate(lines):
        if text in line:
            return re.escape(f"{inspect.getsourcefile(func)}:{first + k}: in '{kernel.key}': ")
    raise AssertionError(f"{text!r} not in {kernel.key}")


def compile_error(kernel, cls, text, message, inputs=None):
    """Launching `kernel` raises `cls` at the line holding `text`, with `message` (a regex)."""
    if inputs is None:
        inputs = [wp.zeros(4, dtype=wp.float32)]
    with pytest.raises(cls, match=at(kernel, text) + message):
        wp.launch(kernel, 4, inputs=inputs)


# -- unsupported syntax ---------------------------------------------------------------------------------------
@wp.kernel
def uses_list_comprehension(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = [float(j) for j in range(3)][0]


@wp.kernel
def uses_lambda(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    f = lambda x: x * 2.0  # noqa: E731
    a[i] = f(1.0)


@wp.kernel
def uses_try(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    try:
        a[i] = 1.0
    except Exception:
        pass


@wp.kernel
def uses_with(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    with open("x"):
        a[i] = 1.0


@wp.kernel
def uses_dict_literal(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    d = {"k": 1.0}
    a[i] = 1.0


@wp.kernel
def uses_set_literal(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    s = {1.0, 2.0}
    a[i] = 1.0


@wp.kernel
def uses_generator(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    g = (float(j) for j in range(3))
    a[i] = 1.0


@wp.kernel
def uses_global(a: wp.array(dtype=wp.float32)):
    global counter
    i = wp.tid()
    a[i] = 1.0


@wp.kernel
def uses_star_args(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = wp.max(*(1.0, 2.0))


@pytest.mark.parametrize("kernel, text, what", [
    (uses_list_comprehension, "[float(j) for j in range(3)]", "list comprehension"),
    (uses_lambda, "lambda x", "lambda"),
    (uses_try, "try:", "try statement"),
    (uses_with, "with open", "with statement"),
    (uses_set_literal, "{1.0, 2.0}", "set literal"),
    (uses_generator, "g = (float(j)", "generator expression"),
    (uses_global, "global counter", "global statement"),
], ids=lambda v: v.key if isinstance(v, wp.Kernel) else None)
def test_unsupported_syntax(kernel, text, what):
    compile_error(kernel, wp.UnsupportedSyntaxError, text, re.escape(f"unsupported: {what}"))


def test_star_args_of_a_tuple_use_warps_text():
    # Warp unpacks vectors, quaternions, matrices and sliced arrays only (test_lang_star_unpack.py)
    compile_error(uses_star_args, wp.CompileTypeError, "wp.max(*(1.0, 2.0))",
                  re.escape("Starred expressions are only supported for arrays (with slice), vectors, quaternions, "
                            "and matrices. Got tuple(float32, float32)."))


def test_dict_literal_uses_warps_text():
    compile_error(uses_dict_literal, wp.UnsupportedSyntaxError, '{"k": 1.0}',
                  re.escape("Construct `ast.Dict` not supported in kernels."))


# -- calls and names --------------------------------------------------------------------------------------------
@wp.kernel
def calls_numpy(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = np.sin(1.0)


def plain_python_function(x):
    return x + 1.0


@wp.kernel
def calls_python_function(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = plain_python_function(1.0)


@wp.kernel
def uses_undefined_name(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = not_defined_anywhere * 2.0  # noqa: F821


@wp.kernel
def calls_undefined_function(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = no_such_function(1.0)  # noqa: F821


@wp.kernel
def uses_name_bound_in_one_branch(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    if i > 2:
        y = (a[i], 1.0)  # tuples have no value on the other path (numbers, vectors and arrays do)
    a[i] = y[1]


def test_calling_numpy_in_a_kernel():
    compile_error(calls_numpy, wp.CompileError, "np.sin(1.0)",
                  re.escape("calling 'np.sin' (ufunc) is not supported in kernels"))


def test_calling_a_plain_python_function():
    compile_error(calls_python_function, wp.CompileError, "plain_python_function(1.0)",
                  re.escape("calling 'plain_python_function' (function) is not supported in kernels: only Warp "
                            "builtins and @wp.func functions can be called"))


def test_undefined_name():
    compile_error(uses_undefined_name, wp.CompileKeyError, "not_defined_anywhere",
                  re.escape("Referencing undefined symbol: not_defined_anywhere"))  # Warp's KeyError


def test_undefined_function():
    compile_error(calls_undefined_function, wp.CompileKeyError, "no_such_function",
                  re.escape("Referencing undefined symbol: no_such_function"))  # Warp's KeyError


def test_name_unbound_on_one_path():
    compile_error(uses_name_bound_in_one_branch, wp.CompileError, "a[i] = y[1]",
                  re.escape("'y' is not defined on every path through the if at line"))


# -- types ------------------------------------------------------------------------------------------------------
@wp.kernel
def branch_types_differ(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    v = 0.0
    if i > 1:
        v = 1.0
    else:
        v = 2
    a[i] = v


@wp.kernel
def scalar_argument_changes_type(a: wp.array(dtype=wp.float32), x: float):
    i = wp.tid()
    x = i
    a[i] = 1.0


@wp.kernel
def scalar_argument_reassigned(a: wp.array(dtype=wp.float32), x: float):
    i = wp.tid()
    x = x + 1.0  # allowed, as in Warp: the argument is a local copy
    x += float(i)
    a[i] = x


@wp.kernel
def scalar_argument_indexed(a: wp.array(dtype=wp.float32), x: float):
    i = wp.tid()
    x[0] = 1.0
    a[i] = x


@wp.kernel
def stores_wrong_dtype(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = i


def test_type_differs_between_branches():
    compile_error(branch_types_differ, wp.CompileTypeError, "v = 2",
                  re.escape("assigning to existing symbol v (float32) with different type (int32)"))


def test_assigning_another_type_to_a_scalar_argument():
    compile_error(scalar_argument_changes_type, wp.CompileTypeError, "x = i",
                  re.escape("assigning to existing symbol x (float32) with different type (int32)"),
                  inputs=[wp.zeros(4, dtype=wp.float32), 1.0])


def test_reassigning_a_scalar_argument_is_allowed_as_in_warp():
    a = wp.zeros(4, dtype=wp.float32)
    wp.launch(scalar_argument_reassigned, 4, inputs=[a, 1.0])
    np.testing.assert_array_equal(a.numpy(), [2, 3, 4, 5])


def test_indexing_a_scalar_argument():
    compile_error(scalar_argument_indexed, wp.CompileTypeError, "x[0] = 1.0",
                  re.escape("cannot index a value of type float32"),
                  inputs=[wp.zeros(4, dtype=wp.float32), 1.0])


def test_storing_an_int_into_a_float_array():
    compile_error(stores_wrong_dtype, wp.CompileTypeError, "a[i] = i",
                  re.escape("array_store() value argument type (int32) must be of the same type as the array "
                            "(float32)"))


# -- kernel shape -----------------------------------------------------------------------------------------------
@wp.kernel
def returns_a_value(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    return a[i]


CAPTURED_LIST = [1.0, 2.0]


class Opaque:
    pass


CAPTURED_OBJECT = Opaque()


@wp.kernel
def captures_a_list(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = CAPTURED_LIST


@wp.kernel
def captures_an_object(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = CAPTURED_OBJECT.value


def test_kernel_with_a_return_value():
    compile_error(returns_a_value, wp.CompileTypeError, "return a[i]", re.escape("Warp kernels cannot return values. Write "
                  "results to output arguments, and omit the return annotation or use `-> None`."))


def test_captured_python_list():
    compile_error(captures_a_list, wp.CompileError, "a[i] = CAPTURED_LIST",
                  re.escape("'CAPTURED_LIST' refers to a Python list, which kernels cannot use"))


def test_captured_unknown_object():
    compile_error(captures_an_object, wp.CompileError, "CAPTURED_OBJECT.value",
                  re.escape("undefined name 'CAPTURED_OBJECT.value'"))


def test_missing_annotation_names_the_argument():
    def no_annotation(a: wp.array(dtype=wp.float32), x):
        a[wp.tid()] = 1.0

    with pytest.raises(wp.CompileError, match=re.escape(
            f"{inspect.getsourcefile(no_annotation)}:{no_annotation.__code__.co_firstlineno}: in 'no_annotation': "
            f"argument 'x' needs a type annotation")):
        wp.kernel(no_annotation)


# -- launch arguments -------------------------------------------------------------------------------------------
@wp.kernel
def scale(a: wp.array(dtype=wp.float32), s: float, out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i] = a[i] * s


def _launch_error(message, dim=3, inputs=None, **kw):
    a = wp.array(np.ones(3, dtype=np.float32))
    out = wp.zeros(3, dtype=wp.float32)
    with pytest.raises(wp.LaunchError, match=re.escape(message)):
        wp.launch(scale, dim, inputs=[a, 2.0] if inputs is None else inputs, outputs=[out], **kw)
    np.testing.assert_array_equal(out.numpy(), [0, 0, 0])  # nothing ran


def test_too_few_inputs():
    _launch_error("Error launching kernel 'scale', passed 2 arguments but kernel requires 3.",
                  inputs=[wp.zeros(3, dtype=wp.float32)])


def test_too_many_inputs():
    _launch_error("Error launching kernel 'scale', passed 4 arguments but kernel requires 3.",
                  inputs=[wp.zeros(3, dtype=wp.float32), 1.0, 2.0])


def test_wrong_array_dtype():
    _launch_error("Error launching kernel 'scale', argument 'a' expects an array with dtype=float32 but passed "
                  "array has dtype=int32.", inputs=[wp.zeros(3, dtype=wp.int32), 2.0])


def test_float64_numpy_array_for_a_float32_array():
    _launch_error("Error launching kernel 'scale', argument 'a' expects an array with dtype=float32 but passed "
                  "array has dtype=float64.", inputs=[np.ones(3), 2.0])


def test_wrong_ndim():
    _launch_error("Error launching kernel 'scale', argument 'a' expects an array with 1 dimension(s) but the "
                  "passed array has 2 dimension(s).", inputs=[wp.zeros((3, 1), dtype=wp.float32), 2.0])


def test_scalar_where_an_array_is_declared():
    _launch_error("Error launching kernel 'scale', argument 'a' expects an array of type array(ndim=1, "
                  "dtype=float32), but passed value has type float.", inputs=[1.0, 2.0])


def test_array_where_a_scalar_is_declared():
    _launch_error("Error launching kernel 'scale', argument 's' expects float32, but passed value has type "
                  "array", inputs=[wp.zeros(3, dtype=wp.float32), wp.zeros(3, dtype=wp.float32)])


def test_unknown_device():
    _launch_error("Error launching kernel 'scale'", device="tpu:7")


def test_negative_dims():
    _launch_error("Error launching kernel 'scale': launch dimensions must be non-negative, got (3, -1)",
                  dim=(3, -1))


def test_non_int_dims():
    _launch_error("Error launching kernel 'scale': dim must be an int or a tuple of 1 to 4 ints, got 2.5", dim=2.5)


def test_too_many_dims():
    _launch_error("Error launching kernel 'scale': dim must be an int or a tuple of 1 to 4 ints, got "
                  "(1, 1, 1, 1, 1)", dim=(1, 1, 1, 1, 1))


def test_calling_a_kernel_directly():
    with pytest.raises(RuntimeError, match=re.escape("kernel 'scale' must be launched with wp.launch(), not called")):
        scale(wp.zeros(3, dtype=wp.float32), 1.0, wp.zeros(3, dtype=wp.float32))


def test_launching_something_that_is_not_a_kernel():
    with pytest.raises(wp.LaunchError, match=re.escape("wp.launch expects a @wp.kernel, got function")):
        wp.launch(plain_python_function, 1, inputs=[])


# -- structs ----------------------------------------------------------------------------------------------------
@wp.struct
class Body:
    pos: wp.array(dtype=wp.vec3)
    mass: float


@wp.kernel
def reads_a_misspelled_field(b: Body, out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i] = b.mas


@wp.kernel
def writes_a_misspelled_field(b: Body, out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    local = Body()
    local.mas = 1.0
    out[i] = local.mass


def _body():
    b = Body()
    b.pos = wp.zeros(2, dtype=wp.vec3)
    b.mass = 1.0
    return b


def test_struct_field_typo_in_a_kernel_read():
    compile_error(reads_a_misspelled_field, AttributeError, "b.mas",
                  r"`mas` is not an attribute of 'b' \([\w.]+\.Body\)",
                  inputs=[_body(), wp.zeros(4, dtype=wp.float32)])


def test_struct_field_typo_in_a_kernel_write():
    compile_error(writes_a_misspelled_field, AttributeError, "local.mas = 1.0",
                  r"`mas` is not an attribute of 'local' \([\w.]+\.Body\)",
                  inputs=[_body(), wp.zeros(4, dtype=wp.float32)])


def test_struct_field_typo_on_the_host():
    b = Body()
    with pytest.raises(AttributeError, match=re.escape("struct Body has no field 'mas' (fields: pos, mass)")):
        b.mas = 2.0


# -- functions --------------------------------------------------------------------------------------------------
@wp.func
def factorial(n: int) -> int:
    if n <= 1:
        return 1
    return n * factorial(n - 1)


@wp.func
def ping(n: int) -> int:
    return pong(n - 1)


@wp.func
def pong(n: int) -> int:
    return ping(n)


@wp.func
def add_one(x: float):
    return x + 1.0


@wp.kernel
def calls_a_recursive_function(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = float(factorial(i))


@wp.kernel
def calls_mutually_recursive_functions(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = float(ping(i))


@wp.kernel
def calls_a_function_with_the_wrong_type(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = add_one(1)


def test_direct_recursion():
    with pytest.raises(wp.CompileError, match=at(factorial, "return n * factorial(n - 1)") + re.escape(
            "recursion is not supported: 'factorial' calls itself (factorial -> factorial)")):
        wp.launch(calls_a_recursive_function, 4, inputs=[wp.zeros(4, dtype=wp.float32)])


def test_mutual_recursion():
    with pytest.raises(wp.CompileError, match=at(pong, "return ping(n)") + re.escape(
            "recursion is not supported: 'ping' calls itself (ping -> pong -> ping)")):
        wp.launch(calls_mutually_recursive_functions, 4, inputs=[wp.zeros(4, dtype=wp.float32)])


def test_function_argument_of_the_wrong_type():
    compile_error(calls_a_function_with_the_wrong_type, wp.CompileTypeError, "add_one(1)", re.escape(
        "Couldn't find function overload for 'add_one' that matched inputs with types: [int32]"))


def test_unknown_mode():
    wp.config.mode = "debgu"
    try:
        _launch_error("Error launching kernel 'scale': mode must be 'release' or 'debug', got 'debgu'")
    finally:
        wp.config.mode = "release"


# -- array shapes -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, cls, message", [
    (-3, ValueError, "Array shapes must be non-negative, got -3 in dimension 0"),
    ((2, -1), ValueError, "Array shapes must be non-negative, got -1 in dimension 1"),
    (2.5, TypeError, "Invalid array shape 2.5: expected an int or a tuple of ints"),
    ((2, "a"), TypeError, "Invalid array shape (2, 'a'): dimension 1 is not an int"),
    (True, TypeError, "Invalid array shape True: expected an int or a tuple of ints"),
])
def test_negative_or_non_int_array_shapes(shape, cls, message):
    with pytest.raises(cls, match=re.escape(message)):
        wp.zeros(shape, dtype=wp.float32)
