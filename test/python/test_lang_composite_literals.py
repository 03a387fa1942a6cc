"""Literals and captured constants in typed composite constructors take the constructor's scalar type exactly
(wp.vec3d(1.00000005) is the double 1.00000005, not a float32 rounded and widened); a variable of another
scalar type is an error, as in Warp."""

import math

import numpy as np
import pytest

import mlwarp as wp

E_64 = 2.718281828459045


@wp.kernel
def _precise(d: wp.float64, out: wp.array(dtype=wp.float64)):
    v = wp.vec3d(1.00000005, d, -3.141592653589793)
    f = wp.vec3d(1.00000005)
    q = wp.quatd(0.0, 0.0, 0.7071067811865476, 0.7071067811865476)
    m = wp.mat22d(1.111111111111111, 0.0, 0.0, wp.PI)
    c = wp.vec2d(E_64, wp.TAU)
    out[0] = v[0]
    out[1] = v[1]
    out[2] = v[2]
    out[3] = f[2]
    out[4] = q[3]
    out[5] = m[0, 0]
    out[6] = m[1, 1]
    out[7] = c[0]
    out[8] = c[1]


def test_constructor_literals_keep_double_precision():
    out = wp.zeros(9, dtype=wp.float64)
    wp.launch(_precise, 1, [wp.float64(2.00000005), out])
    expected = [1.00000005, 2.00000005, -3.141592653589793, 1.00000005, 0.7071067811865476, 1.111111111111111,
                math.pi, E_64, 2 * math.pi]
    assert out.numpy().tolist() == expected  # exact: float32 rounding would change every one


@pytest.mark.parametrize("body, message", [
    ("v = wp.vec3f(x, x, x)", "all values used to initialize this vector are expected to be of the type `float32`"),
    ("v = wp.vec3f(x)", "the value used to fill this vector is expected to be of the type `float32`"),
    ("m = wp.mat22f(x, 1.0, 2.0, 3.0)",
     "all values used to initialize this matrix are expected to be of the type `float32`"),
    ("q = wp.quatf(x, 0.0, 0.0, 1.0)",
     "all values used to initialize this quaternion are expected to be of the type `float32`"),
])
def test_a_variable_of_another_scalar_type_is_an_error(body, message, tmp_path):
    src = f"import mlwarp as wp\n\ndef k(x: wp.float64):\n    {body}\n"
    path = tmp_path / "k_mismatch.py"
    path.write_text(src)
    namespace = {}
    exec(compile(src, str(path), "exec"), namespace)
    with pytest.raises(wp.CompileTypeError) as info:
        wp.launch(wp.kernel(namespace["k"]), 1, [wp.float64(1.0)])
    assert str(info.value) == f"{path}:4: in 'k': {message}"


@wp.kernel
def _converting(v: wp.vec3, out: wp.array(dtype=wp.vec3d)):
    out[0] = wp.vec3d(v)  # a conversion of a whole vector stays allowed


def test_vector_conversion_still_casts():
    out = wp.zeros(1, dtype=wp.vec3d)
    wp.launch(_converting, 1, [wp.vec3(0.5, 1.5, -2.0), out])
    np.testing.assert_array_equal(out.numpy(), [[0.5, 1.5, -2.0]])
