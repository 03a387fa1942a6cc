"""Struct values built in kernels (Warp 1.19): `S()` zero-initialises, `S(a, b)` and `S(b=..., a=...)` set every
field from values of its exact type; anything else is Warp's overload error."""

import inspect

import numpy as np
import pytest

import mlwarp as wp


@wp.struct
class Body:
    origin: wp.vec3
    mass: float
    flags: int


@wp.kernel
def k_construct(out: wp.array(dtype=float)):
    a = Body(wp.vec3(1.0, 2.0, 3.0), 1.5, 4)
    b = Body(flags=2, mass=0.25, origin=wp.vec3(0.5))
    c = Body()
    out[0] = a.origin[2] + a.mass + float(a.flags)
    out[1] = b.origin[0] + b.mass + float(b.flags)
    out[2] = c.mass + float(c.flags) + c.origin[1]


def test_struct_constructors():
    out = wp.zeros(3, dtype=float)
    wp.launch(k_construct, dim=1, inputs=[out])
    np.testing.assert_allclose(out.numpy(), [3.0 + 1.5 + 4.0, 0.5 + 0.25 + 2.0, 0.0])


@wp.struct
class Scaled:
    dt: float
    m: wp.array(dtype=float)


@wp.kernel
def k_array_field(model: Scaled, out: wp.array(dtype=float)):
    i = wp.tid()
    r = Scaled(2.0, model.m)  # an array field takes the argument's array
    out[i] = r.m[i] * r.dt


def test_struct_constructor_with_an_array_field():
    model = Scaled()
    model.dt = 1.0
    model.m = wp.array([1.0, 3.0], dtype=float)
    out = wp.zeros(2, dtype=float)
    wp.launch(k_array_field, dim=2, inputs=[model, out])
    np.testing.assert_allclose(out.numpy(), [2.0, 6.0])


def k_wrong_type(out: wp.array(dtype=float)):
    b = Body(wp.vec3(1.0, 2.0, 3.0), 2, 4)


def k_missing_field(out: wp.array(dtype=float)):
    b = Body(wp.vec3(1.0, 2.0, 3.0), 2.0)


def check(kernel_func, message):
    lines, first = inspect.getsourcelines(kernel_func)
    line = first + next(n for n, t in enumerate(lines) if "Body(" in t)
    with pytest.raises(wp.CompileTypeError) as info:
        wp.launch(wp.kernel(kernel_func), dim=1, inputs=[wp.zeros(1)])
    assert str(info.value).splitlines()[0] == f"{__file__}:{line}: in '{kernel_func.__name__}': {message}"


def test_struct_constructor_errors():
    check(k_wrong_type, "Couldn't find function overload for 'Body' that matched inputs with types: "
                        "[vec3f, int32, int32]")
    check(k_missing_field, "Couldn't find function overload for 'Body' that matched inputs with types: "
                           "[vec3f, float32]")
