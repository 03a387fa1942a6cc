"""Warp's Function members on a @wp.func: the builtin-registration fields at Warp's defaults for a user function,
the descriptive ones from its definitions (expected values: what warp-lang 1.19 gives for the same function)."""

import inspect
from typing import Any

import mlwarp as wp


@wp.func
def scaled(x: float, a: wp.array(dtype=float), k: float = 2.0) -> float:
    """scales x"""
    return x * k


@wp.func
def scaled(x: int, a: wp.array(dtype=float), k: float = 2.0) -> int:  # noqa: F811
    return x


@wp.func
def anything(x: Any):
    return x


@wp.func(inline=True)
def inlined(x: float) -> float:
    return x


def test_descriptive_members():
    first = scaled.overloads[0].func
    assert scaled.func is first and scaled.key == "scaled" and not scaled.is_builtin()
    assert list(scaled.input_types) == ["x", "a", "k"] and scaled.input_types["x"] is float
    assert scaled.value_type is float and inspect.signature(first) == scaled.signature
    assert scaled.signature.parameters["k"].default == 2.0
    assert not scaled.generic and anything.generic
    assert scaled.native_func.startswith("scaled_") and len(scaled.native_func) == len("scaled_") + 8
    assert scaled.mangle() == "wp_builtin_scaled_float_array_float"
    assert not scaled.is_simple() and inlined.is_simple()  # (an array argument: not exported, as Warp's rule)
    assert inlined.inline_hint == "forceinline" and scaled.inline_hint is None


def test_overload_tables():
    assert list(scaled.user_overloads) == ["scaled(float, array(ndim=1, dtype=float32), float)",
                                        "scaled(int, array(ndim=1, dtype=float32), float)"]
    assert scaled.user_templates == {} and list(anything.user_templates) == ["anything(Any)"]
    one = scaled.user_overloads["scaled(int, array(ndim=1, dtype=float32), float)"]
    assert len(one.overloads) == 1 and one.input_types["x"] is int and one.value_type is int


def test_builtin_fields_have_warp_defaults_for_a_user_function():
    assert scaled.namespace == "" and scaled.value_func is None and scaled.native_snippet is None
    assert scaled.export is False and scaled.variadic is False and scaled.is_differentiable is True
    assert scaled.custom_grad_func is None and scaled.custom_replay_func is None
    assert scaled.initializer_list_func({}, float) is False


def test_add_overload_and_custom_grad():
    @wp.func
    def base(x: float) -> float:
        return x

    @wp.func
    def other(x: wp.vec3) -> float:
        return x[0]

    base.add_overload(other)
    assert len(base.overloads) == 2

    @wp.func_grad(base)
    def base_grad(x: float, adj_ret: float):
        wp.adjoint[x] += adj_ret

    assert base.custom_grad_func is not None


@wp.func
def length_of(x: wp.array(dtype=Any)):
    return x.shape[0]


def test_generic_instances_are_listed_once_per_signature_and_keep_no_array():
    """A generic function called from Python lists one instance per concrete signature in user_overloads, whose
    generic_parent is the template; the instance keeps the argument types, not the array (as warp-lang 1.19:
    a second int32 array reuses the instance, a float64 one adds one, and a deleted array is freed)."""
    import gc
    import weakref

    before = len(length_of.user_overloads)
    a = wp.zeros(2, dtype=wp.int32)
    alive = weakref.ref(a)
    assert length_of(a) == 2
    instances = dict(length_of.user_overloads)
    assert len(instances) == before + 1
    del a
    gc.collect()
    assert alive() is None
    assert length_of(wp.zeros(3, dtype=wp.int32)) == 3 and length_of.user_overloads == instances
    assert length_of(wp.zeros((4, 1), dtype=wp.float64)) == 4 and len(length_of.user_overloads) == before + 2
    inst = length_of.user_overloads["length_of(array(ndim=2, dtype=float64))"]
    assert inst.generic_parent.generic and inst.generic_parent.overloads == length_of.overloads
    assert not inst.generic and inst.input_types["x"].dtype is wp.float64 and inst.input_types["x"].ndim == 2
    assert list(length_of.user_templates) == ["length_of(array(ndim=1, dtype=Any))"]


def test_custom_grad_and_replay_carry_the_forward_inline_hint():
    """As warp-lang 1.19: the @wp.func_grad and @wp.func_replay functions of a @wp.func(inline=False) are
    "noinline" too (and None for a function without a hint)."""
    @wp.func(inline=False)
    def squared(x: float) -> float:
        return x * x

    @wp.func_grad(squared)
    def adj_squared(x: float, adj_ret: float):
        wp.adjoint[x] += 2.0 * x * adj_ret

    @wp.func_replay(squared)
    def replay_squared(x: float):
        return x * x

    assert squared.custom_grad_func.inline_hint == "noinline"
    assert squared.custom_replay_func.inline_hint == "noinline"

    @wp.func
    def cubed(x: float) -> float:
        return x * x * x

    @wp.func_grad(cubed)
    def adj_cubed(x: float, adj_ret: float):
        wp.adjoint[x] += 3.0 * x * x * adj_ret

    assert cubed.custom_grad_func.inline_hint is None
