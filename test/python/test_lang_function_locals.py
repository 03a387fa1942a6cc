"""A @wp.func bound to a local (`f = some_func; f(x)`), and Warp's errors when such a local is rebound."""

import pytest

import mlwarp as wp


@wp.func
def double(a: float):
    return a * 2.0


@wp.func
def halve(a: float):
    return a * 0.5


@wp.kernel
def call_through_local(out: wp.array(dtype=float)):
    f = double
    out[0] = f(3.0)
    f = double  # the same function again: allowed
    out[1] = f(out[0])


def test_function_bound_to_local_is_called():
    out = wp.zeros(2, dtype=float)
    wp.launch(call_through_local, 1, inputs=[out])
    assert out.numpy().tolist() == [6.0, 12.0]


def rebind_to_other_function(out: wp.array(dtype=float)):
    f = double
    f = halve
    out[0] = f(3.0)


def rebind_to_value(out: wp.array(dtype=float)):
    f = double
    f = 1.0
    out[0] = f


@pytest.mark.parametrize("fn, what, tail", [
    (rebind_to_other_function, "a different function", "must refer to the same function throughout the kernel."),
    (rebind_to_value, "a non-function value", "must refer to a function throughout the kernel."),
])
def test_rebinding_a_function_valued_local_is_refused(fn, what, tail):
    with pytest.raises(wp.CompileError) as info:
        wp.launch(wp.kernel(fn), 1, inputs=[wp.zeros(1, dtype=float)])
    first = str(info.value).splitlines()[0]
    line = fn.__code__.co_firstlineno + 2
    assert first == (f"{__file__}:{line}: in '{fn.__name__}': Error, rebinding function-valued local 'f' to {what} "
                     f"is not supported. Warp does not have function pointers, so a local bound to a function {tail}")


# -- calls that resolve to nothing: Warp's texts, as AttributeError ----------------------------------------------
def calls_missing_intermediate():
    t = wp.foo.bar.tid()  # noqa: F841


def calls_missing_function():
    x = wp.nonexistent_func()  # noqa: F841


NOTE = (" as a built-in or user-defined function. Note that user functions must be annotated with a @wp.func "
        "decorator to be called from a kernel.")


@pytest.mark.parametrize("fn, message", [
    (calls_missing_intermediate, "Error, `foo` is not an attribute of 'wp'"),
    (calls_missing_function, "Could not find function wp.nonexistent_func" + NOTE),
])
def test_missing_function_paths(fn, message):
    with pytest.raises(AttributeError) as info:
        wp.launch(wp.kernel(fn), 1)
    assert isinstance(info.value, wp.CompileError)
    line = fn.__code__.co_firstlineno + 1
    assert str(info.value).splitlines()[0] == f"{__file__}:{line}: in '{fn.__name__}': {message}"


@pytest.mark.parametrize("value", [1, 1.5, "yes"])
def test_inline_hint_must_be_a_bool(value):
    with pytest.raises(TypeError) as info:
        wp.func(inline=value)
    assert str(info.value) == f"inline must be a bool or None, got {type(value).__name__}: {value!r}"


@wp.func(inline=True)
def plus_one_inline(x: float) -> float:
    return x + 1.0


@wp.func(inline=False)
def plus_two_noinline(x: float) -> float:
    return x + 2.0


@wp.kernel
def uses_inline_hints(out: wp.array(dtype=float)):
    out[0] = plus_one_inline(1.0) + plus_two_noinline(1.0)


def test_inline_hint_bools_are_accepted():
    out = wp.zeros(1, dtype=float)
    wp.launch(uses_inline_hints, 1, inputs=[out])
    assert out.numpy()[0] == 5.0
