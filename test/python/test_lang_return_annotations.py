"""Return annotations of @wp.func as Warp reads them: `-> Any` on a generic function is what its body returns,
`typing.Tuple[...]` / `tuple[...]` several results; `-> Any` on a function that is not generic is Warp's error
(values and message checked under warp-lang 1.19)."""

import typing

import numpy as np
import pytest

import mlwarp as wp


@wp.func
def doubled(x: typing.Any) -> typing.Any:
    return x + x


@wp.func
def split(x: float) -> typing.Tuple[float, float]:
    return x, x * 3.0


@wp.func
def with_vector(x: float) -> tuple[float, wp.vec3]:
    return x, wp.vec3(x)


@wp.kernel
def uses_annotated(out: wp.array(dtype=float)):
    out[0] = doubled(2.0)
    out[1] = doubled(wp.vec3(1.0, 2.0, 3.0))[2]
    a, b = split(1.0)
    out[2] = a + b
    c, v = with_vector(1.5)
    out[3] = v[1] + c
    out[4] = wp.float32(doubled(wp.float64(0.25)))


def test_any_and_tuple_return_annotations():
    out = wp.zeros(5)
    wp.launch(uses_annotated, dim=1, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), [4.0, 6.0, 4.0, 3.0, 0.5])


def test_any_return_of_a_function_that_is_not_generic_is_refused():
    @wp.func
    def not_generic(x: float) -> typing.Any:
        return x * 2.0

    @wp.kernel
    def calls(out: wp.array(dtype=float)):
        out[0] = not_generic(2.0)

    with pytest.raises(wp.CompileTypeError, match=r"in 'not_generic': The function `not_generic` has its return type "
                                                  r"annotated as `Any` but the code returns a value of type `float32`\."):
        wp.launch(calls, dim=1, inputs=[wp.zeros(1)])
