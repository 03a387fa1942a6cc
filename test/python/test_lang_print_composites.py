"""print() and failed wp.expect_eq of vectors, matrices, quaternions and transforms, in Warp's format: each
component as a float with %g; vectors `1 2 3 `, one such line per matrix row, `x y z w`, `(p) (q)`."""

import mlwarp as wp


@wp.kernel
def print_composites(a: wp.array(dtype=float)):
    print(wp.vec3(1.0, 2.5, -3.0))
    print(wp.mat22(1.0, 2.0, 3.0, 4.0))
    print(wp.quat(0.0, 0.0, 0.6, 0.8))
    print(wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat_identity()))
    print(wp.vec2i(3, -4))
    print(wp.vec2d(wp.float64(0.1), wp.float64(1e30)))
    wp.expect_eq(wp.vec2(1.0, 2.0), wp.vec2(1.0, 3.0))
    wp.expect_eq(wp.mat22(1.0, 0.0, 0.0, 1.0), wp.mat22(1.0, 0.0, 0.0, 1.0))  # holds: prints nothing


def test_composites_print_with_warps_format(capfd):
    capfd.readouterr()
    wp.launch(print_composites, dim=1, inputs=[wp.zeros(1)])
    assert capfd.readouterr().out.split("\n") == [
        "1 2.5 -3 ", "1 2 ", "3 4 ", "0 0 0.6 0.8", "(1 2 3) (0 0 0 1)", "3 -4 ", "0.1 1e+30 ",
        "Error, expect_eq() failed:", "\t Expected: 1 3 ", "\t Actual: 1 2 ", ""]
