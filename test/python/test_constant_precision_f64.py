"""Constants keep their Python value until the program gives them a type: `wp.float64(wp.pi)`,
`wp.float64(y)` with `y = 0.1`, `wp.vec3d(G, ...)` with a global `G`, `v[0] = wp.pi` on a vec3d are rounded
once, to the requested type, never through float32 first (Warp's rule, its test_constant_precision.py).

The expected values are the Python numbers themselves (math.pi, 0.1, ...) or numpy's conversion of them;
the float64 ones are also what warp-lang 1.19 gave for the same kernels on the CPU. Where mlwarp
differs from Warp on purpose, the test says so."""

import math

import numpy as np
import pytest

import mlwarp as wp

G = 0.1
G_INT_AS_FLOAT = 16777217.0  # 2**24 + 1: float32 has no such value (it rounds to 2**24)
G_INT = 16777217
G_BIG_INT = 2**40 + 1
G_HALF_TIE = 1.0004882812509095  # 1 + 2**-11 + 2**-40: float32 rounds it onto the float16 tie, then to 1.0
C = wp.constant(0.1)
C64 = wp.constant(wp.float64(0.1))
C32 = wp.constant(wp.float32(0.1))
G_INF = float("inf")


def run(kernel, n, dtype=wp.float64):
    out = wp.zeros(n, dtype=dtype)
    wp.launch(kernel, dim=1, inputs=[out])
    return out.numpy()


@wp.kernel
def scalar_casts(out: wp.array(dtype=wp.float64)):
    out[0] = wp.float64(wp.pi) + wp.float64(1.0)
    y = 0.1
    out[1] = wp.float64(y)
    out[2] = wp.float64(y)  # the same local again
    out[3] = wp.float64(wp.e)
    out[4] = wp.float64(wp.tau)
    out[5] = wp.float64(wp.half_pi)
    out[6] = wp.float64(wp.PI)
    out[7] = wp.float64(wp.inf)
    out[8] = wp.float64(G)
    out[9] = wp.float64(C)
    out[10] = C64
    out[11] = wp.float64(wp.static(G * 3.0))
    out[12] = wp.float64(-wp.pi)
    out[13] = wp.float64(-y)
    z = -0.3
    out[14] = wp.float64(z)
    out[15] = wp.float64(+G)
    out[16] = wp.float64(G_INT_AS_FLOAT)
    out[17] = wp.float64(G_BIG_INT)
    out[18] = wp.float64(wp.nan)


def test_casts_of_constants_to_float64_are_exact():
    got = run(scalar_casts, 19)
    want = [math.pi + 1.0, 0.1, 0.1, math.e, math.tau, math.pi / 2, math.pi, math.inf, 0.1, 0.1, 0.1,
            0.1 * 3.0, -math.pi, -0.1, -0.3, 0.1, 16777217.0, float(2**40 + 1)]
    assert got[:18].tolist() == want
    assert math.isnan(got[18])


@wp.kernel
def integer_casts(out: wp.array(dtype=wp.int64)):
    out[0] = wp.int64(G_INT_AS_FLOAT)
    f = 3000000001.0
    out[1] = wp.int64(f)
    out[2] = wp.int64(G_BIG_INT)
    out[3] = wp.int64(wp.uint64(G_INT_AS_FLOAT))
    # Warp 1.19 gives 16777216 here (its int32 conversion reads the constant as a float32); mlwarp
    # converts the Python value, as it already does for the literal wp.int32(16777217.0)
    out[4] = wp.int64(wp.int32(G_INT_AS_FLOAT))
    out[5] = wp.int64(-G_INT_AS_FLOAT)
    out[6] = wp.int64(wp.int8(G_INT))  # wraps from the exact int: 16777217 mod 256


def test_casts_of_constants_to_integer_types_are_exact():
    assert run(integer_casts, 7, wp.int64).tolist() == [16777217, 3000000001, 2**40 + 1, 16777217, 16777217,
                                                        -16777217, 1]


@wp.kernel
def half_casts(out: wp.array(dtype=wp.float16)):
    out[0] = wp.float16(G_HALF_TIE)
    h = 1.0004882812509095
    out[1] = wp.float16(h)
    out[2] = wp.float16(1.0004882812509095)


def test_casts_of_constants_to_float16_round_once():
    # numpy rounds the Python float straight to float16; Warp 1.19 gives 1.0 for all three (through float32)
    want = float(np.float16(G_HALF_TIE))
    assert want == 1.0009765625
    assert run(half_casts, 3, wp.float16).tolist() == [want] * 3


@wp.kernel
def composites(out: wp.array(dtype=wp.float64)):
    y = 0.1
    v = wp.vec3d(y, wp.pi, G)
    out[0] = v[0]
    out[1] = v[1]
    out[2] = v[2]
    m = wp.mat22d(0.1, y, C, wp.e)
    out[3] = m[0, 1]
    out[4] = m[1, 0]
    out[5] = m[1, 1]
    q = wp.quatd(y, 0.0, 0.0, -wp.pi)
    out[6] = q[0]
    out[7] = q[3]
    t = wp.transformd(wp.vec3d(0.1, G, wp.e), wp.quatd(0.0, 0.0, 0.0, 1.0))
    out[8] = wp.transform_get_translation(t)[1]
    a = wp.types.vector(G, wp.tau, dtype=wp.float64)
    out[9] = a[1]
    f = wp.mat22d(wp.pi)
    out[10] = f[1, 1]


def test_float64_composites_built_from_constants_are_exact():
    want = [0.1, math.pi, 0.1, 0.1, 0.1, math.e, 0.1, -math.pi, 0.1, math.tau, math.pi]
    assert run(composites, 11).tolist() == want


@wp.kernel
def component_stores(out: wp.array(dtype=wp.float64)):
    v = wp.vec3d()
    v[0] = G
    v.y = wp.pi
    m = wp.mat22d()
    m[0, 1] = wp.e
    x: wp.float64 = 0.1
    y = 0.1
    w: wp.float64 = y
    out[0] = v[0]
    out[1] = v[1]
    out[2] = m[0, 1]
    out[3] = x
    out[4] = w


def test_stores_and_annotations_of_constants_are_exact():
    # Warp 1.19 refuses a float32 constant in a vec3d/mat22d component store and has no annotated
    # assignments; mlwarp takes both, so they give the constant's exact value
    assert run(component_stores, 5).tolist() == [0.1, math.pi, math.e, 0.1, 0.1]


@wp.kernel
def tile_stores(out: wp.array(dtype=wp.float64)):
    t = wp.tile_zeros(shape=2, dtype=wp.float64)
    t[0] = G
    t[1] = wp.pi
    wp.tile_store(out, t)


def test_tile_element_stores_of_constants_are_exact():
    out = wp.zeros(2, dtype=wp.float64)
    wp.launch_tiled(tile_stores, dim=1, inputs=[out], block_dim=1)
    assert out.numpy().tolist() == [0.1, math.pi]


@wp.kernel
def still_float32(out: wp.array(dtype=wp.float64), out32: wp.array(dtype=wp.float32), flag: int):
    out[0] = wp.float64(float(0.1))  # float() is float32: the constant is typed there
    out[1] = wp.float64(wp.float32(G))
    out[2] = wp.float64(C32)  # a typed constant is a float32 value
    y = 0.1
    if flag > 0:
        y = 0.2
    out[3] = wp.float64(y)  # y depends on the branch: a float32 variable
    x = 0.1
    out[4] = wp.float64(x)
    out32[0] = x * 3.0  # x's other uses are float32 still
    z = 0.1
    for i in range(2):
        out[5 + i] = wp.float64(z)  # z changes in the loop: a float32 variable there
        z = z + 1.0
    if wp.float64(0.1) == 0.1:  # a float literal operand is float32, as in Warp: unequal
        out[7] = wp.float64(1.0)


def test_constants_given_a_float32_type_first_stay_float32_values():
    out = wp.zeros(8, dtype=wp.float64)
    out32 = wp.zeros(1, dtype=wp.float32)
    wp.launch(still_float32, dim=1, inputs=[out, out32, 1])
    f = float(np.float32(0.1))
    # Warp 1.19 gives 0.1 for out[2]: its wp.float32(0.1) keeps the unrounded Python value
    assert out.numpy().tolist() == [f, f, f, float(np.float32(0.2)), 0.1, f, float(np.float32(f) + np.float32(1.0)),
                                    0.0]
    assert out32.numpy().tolist() == [float(np.float32(0.1) * np.float32(3.0))]


def test_python_scope_casts_of_constants_are_exact():
    assert float(wp.float64(wp.pi)) == math.pi
    assert float(wp.float64(G)) == 0.1
    assert [float(c) for c in wp.vec3d(0.1, 0.2, wp.pi)] == [0.1, 0.2, math.pi]
    assert float(wp.mat22d(0.1, 0.2, 0.3, wp.e)[1, 1]) == math.e


def test_a_non_finite_constant_for_an_integer_type_is_a_clear_error():
    @wp.kernel
    def inf_to_int(out: wp.array(dtype=int)):
        out[0] = int(wp.int32(wp.inf))

    @wp.kernel
    def nan_to_int64(out: wp.array(dtype=wp.int64)):
        out[0] = wp.int64(wp.nan)

    @wp.kernel
    def global_inf_to_uint(out: wp.array(dtype=wp.uint32)):
        y = G_INF
        out[0] = wp.uint32(y)

    with pytest.raises(wp.WarpCodegenError, match=r"test_constant_precision_f64\.py:\d+: .*int32\(inf\) has no "
                                                  r"integer value"):
        wp.launch(inf_to_int, dim=1, inputs=[wp.zeros(1, dtype=int)])
    with pytest.raises(wp.WarpCodegenError, match=r"int64\(nan\) has no integer value"):
        wp.launch(nan_to_int64, dim=1, inputs=[wp.zeros(1, dtype=wp.int64)])
    with pytest.raises(wp.WarpCodegenError, match=r"uint32\(inf\) has no integer value"):
        wp.launch(global_inf_to_uint, dim=1, inputs=[wp.zeros(1, dtype=wp.uint32)])
