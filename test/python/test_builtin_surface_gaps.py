"""Builtin overloads Warp 1.19 has that mlwarp lacked (found by ../shared/warp-surface/check.py): wp.unot, wp.pos of
scalars, constructors taking their dtype positionally, wp.len in kernels, float16 degrees/radians. Expected values
were recorded from warp-lang 1.19 on the CPU for the same kernel (and agree with the closed forms)."""

import numpy as np

import mlwarp as wp


@wp.kernel
def uses_surface_gaps(out: wp.array(dtype=float), x: float):
    out[0] = wp.pos(x) + wp.pos(wp.vec3(1.0, 2.0, 3.0))[1]
    out[1] = float(wp.unot(x > 0.0)) + float(wp.unot(3)) * 10.0 + float(wp.unot(0)) * 100.0
    q = wp.quaternion(1.0, 2.0, 3.0, 4.0, wp.float64)
    out[2] = float(q[3])
    sv = wp.spatial_vector(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, wp.float32)
    out[3] = sv[5]
    t = wp.transformation(wp.vec3(1.0, 2.0, 3.0), wp.quat_identity(), wp.float32)
    out[4] = t[2]
    q0 = wp.quaternion(wp.float16)  # a zero quaternion (not the identity), as Warp's
    out[5] = float(q0[3])
    out[6] = float(wp.len(wp.vec4()))


def test_surface_gaps_compute_warps_values():
    out = wp.zeros(7)
    wp.launch(uses_surface_gaps, dim=1, inputs=[out, 2.0])
    np.testing.assert_array_equal(out.numpy(), [4.0, 100.0, 4.0, 6.0, 3.0, 0.0, 4.0])


@wp.kernel
def half_angles(x: wp.array(dtype=wp.float16), out: wp.array(dtype=wp.float16)):
    i = wp.tid()
    out[i] = wp.degrees(x[i])
    out[i + x.shape[0]] = wp.radians(x[i])


def test_float16_degrees_and_radians_round_through_float():
    # computed in double and rounded to half through float, as Warp's C++ (a direct double-to-half conversion
    # needed a runtime symbol the kernel library lacked: the load failed)
    xs = np.array([1.0, 0.5, -3.0, 100.0], np.float16)
    out = wp.zeros(8, dtype=wp.float16)
    wp.launch(half_angles, dim=4, inputs=[wp.array(xs, dtype=wp.float16), out])
    wide = xs.astype(np.float64)
    expected = np.concatenate([wide * 57.29577951308232, wide * 0.017453292519943295]).astype(np.float32)
    np.testing.assert_array_equal(out.numpy().astype(np.float32), expected.astype(np.float16).astype(np.float32))
