"""print() and failed wp.expect_eq of vectors, matrices, quaternions and transforms, in Warp's format: each
component as a float with %g; vectors `1 2 3 `, one such line per matrix row, `x y z w`, `(p) (q)`."""

import pytest

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


@wp.kernel
def composite_expectations(x: float):
    wp.expect_near(wp.vec3(1.0, 2.0, 3.0), wp.vec3(1.0, 2.5, 3.0 + x), 0.1)
    wp.expect_near(wp.quat(1.0, 2.0, 3.0, 4.0), wp.quat(1.0, 2.0, 3.0, 4.25))
    wp.expect_near(wp.mat22(1.0, 2.0, 3.0, 4.0), wp.mat22(1.0, 2.0, 3.0, 4.5), 0.25)
    wp.expect_near(wp.vec2d(wp.float64(1.0), wp.float64(2.0)), wp.vec2d(wp.float64(1.0), wp.float64(2.05)),
                   wp.float64(0.1))  # holds
    wp.expect_neq(wp.vec2ul(wp.uint64(16777217), wp.uint64(3)), wp.vec2ul(wp.uint64(16777217), wp.uint64(3)))
    wp.expect_eq(wp.vector(True, False), wp.vector(True, True))
    wp.expect_eq(wp.vec2i(1, 2) - wp.vec2i(1, 1), wp.vec2i(0, 1))  # holds


def test_composite_expectations_print_warps_text(capfd):
    # Warp: the largest component difference ("Max absolute difference"); components as float32 with %g, so
    # 16777217 prints as 1.67772e+07; bools as 1 / 0
    capfd.readouterr()
    wp.launch(composite_expectations, dim=1, inputs=[0.0])
    assert capfd.readouterr().out.split("\n") == [
        "Error, expect_near() failed with tolerance 0.1", "    Expected: 1 2.5 3 ", "    Actual: 1 2 3 ",
        "    Max absolute difference: 0.5",
        "Error, expect_near() failed with tolerance 1e-06", "    Expected: 1 2 3 4.25", "    Actual: 1 2 3 4",
        "    Max absolute difference: 0.25",
        "Error, expect_near() failed with tolerance 0.25", "    Expected: 1 2 ", "3 4.5 ", "    Actual: 1 2 ",
        "3 4 ", "    Max absolute difference: 0.5",
        "Error, expect_neq() failed:", "\t Expected: 1.67772e+07 3 ", "\t Actual: 1.67772e+07 3 ",
        "Error, expect_eq() failed:", "\t Expected: 1 1 ", "\t Actual: 1 0 ", ""]


def test_expect_on_composites_of_different_types_is_warps_error():
    def k():
        wp.expect_neq(wp.vec3f(0.0, 0.0, 0.0), wp.vec2f(0.0, 0.0))

    with pytest.raises(RuntimeError) as info:
        wp.launch(wp.kernel(k), dim=1, inputs=[])
    # the message (without the source-line note) ends with Warp's text
    assert str(info.value).endswith("in 'k': expect_neq() arguments must have the same type, got vec3f and vec2f: "
                                    "Can't test equality for objects with different types")


def test_expectations_in_python_scope_print_warps_text(capfd):
    # a @wp.func run from Python calls them there; the text is the kernels' (and Warp's exported builtins')
    capfd.readouterr()
    wp.expect_eq(wp.vec3(1.0, 2.0, 3.0), wp.vec3(1.0, 2.0, 3.5))
    wp.expect_eq(wp.vec3(1.0, 2.0, 3.0), wp.vec3(1.0, 2.0, 3.0))  # holds
    wp.expect_eq(wp.quat(1.0, 2.0, 3.0, 4.0), wp.quat(1.0, 2.0, 3.0, 4.5))
    wp.expect_eq(3, 4)
    wp.expect_eq(True, False)
    wp.expect_neq(wp.mat22(1.0, 2.0, 3.0, 4.0), wp.mat22(1.0, 2.0, 3.0, 4.0))
    wp.expect_near(1.0, 1.5)
    wp.expect_near(wp.vec3(1.0, 2.0, 3.0), wp.vec3(1.0, 2.5, 3.0), 0.1)
    assert capfd.readouterr().out.split("\n") == [
        "Error, expect_eq() failed:", "\t Expected: 1 2 3.5 ", "\t Actual: 1 2 3 ",
        "Error, expect_eq() failed:", "\t Expected: 1 2 3 4.5", "\t Actual: 1 2 3 4",
        "Error, expect_eq() failed:", "\t Expected: 4", "\t Actual: 3",
        "Error, expect_eq() failed:", "\t Expected: False", "\t Actual: True",
        "Error, expect_neq() failed:", "\t Expected: 1 2 ", "3 4 ", "\t Actual: 1 2 ", "3 4 ",
        "Error, expect_near() failed with tolerance 1e-06", "    Expected: 1.5", "    Actual: 1",
        "    Absolute difference: 0.5",
        "Error, expect_near() failed with tolerance 0.1", "    Expected: 1 2.5 3 ", "    Actual: 1 2 3 ",
        "    Max absolute difference: 0.5", ""]
