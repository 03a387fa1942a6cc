"""print, wp.printf, wp.expect_eq/neq/near in CPU kernels: the text Warp's native print overloads
write (compared with warp-lang 1.19's output for the same kernel)."""

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def prints(a: wp.array(dtype=float)):
    i = wp.tid()
    x = a[i]
    n = i + 1
    print(x)
    print(n)
    print("hello")
    wp.printf("i=%d x=%f n=%d\n", i, x, n)
    print(wp.uint32(7))
    print(wp.float64(2.5))
    print(True)
    wp.expect_eq(n, 2)
    wp.expect_near(x, 1.5)
    wp.expect_near(x, 1.5, 0.1)
    wp.expect_neq(n, 1)


WARP_OUTPUT = """1.25
1
hello
i=0 x=1.250000 n=1
7
2.5
True
Error, expect_eq() failed:
\t Expected: 2
\t Actual: 1
Error, expect_near() failed with tolerance 1e-06
    Expected: 1.5
    Actual: 1.25
    Absolute difference: 0.25
Error, expect_near() failed with tolerance 0.1
    Expected: 1.5
    Actual: 1.25
    Absolute difference: 0.25
Error, expect_neq() failed:
\t Expected: 1
\t Actual: 1
"""


def test_output_matches_warp(capfd):
    capfd.readouterr()
    wp.launch(prints, dim=1, inputs=[wp.array(np.array([1.25], np.float32))])
    assert capfd.readouterr().out == WARP_OUTPUT


@wp.kernel
def print_types(out: wp.array(dtype=int)):
    print(wp.int8(-5))
    print(wp.uint8(250))
    print(wp.int64(-5000000000))
    print(wp.uint64(18000000000000000000))
    print(wp.float16(0.5))
    print(1e20)
    print(False)
    print("100% literal", 3, 0.25)  # several parts: space-separated, as Python's print
    wp.printf("%s|%5.2f|%u|%lld|%d\n", "x", 3.14159, wp.uint32(4000000000), wp.int64(1) << wp.int64(40), True)


def test_every_scalar_type_prints_with_warps_format(capfd):
    capfd.readouterr()
    wp.launch(print_types, dim=1, inputs=[wp.zeros(1, dtype=int)])
    assert capfd.readouterr().out.splitlines() == [
        "-5", "250", "-5000000000", "18000000000000000000", "0.5", "1e+20", "False", "100% literal 3 0.25",
        "x| 3.14|4000000000|1099511627776|1"]


@wp.kernel
def expectations_that_hold(a: wp.array(dtype=float)):
    i = wp.tid()
    wp.expect_eq(i, i)
    wp.expect_neq(i, -1)
    wp.expect_near(a[i], a[i] + 1e-7)
    wp.expect_near(a[i], a[i] + 0.05, tolerance=0.1)


def test_expectations_that_hold_print_nothing(capfd):
    capfd.readouterr()
    wp.launch(expectations_that_hold, dim=100, inputs=[wp.ones(100)])
    assert capfd.readouterr().out == ""


@wp.func
def report(k: int):
    if k % 2 == 1:
        print(k)


@wp.kernel
def prints_from_func():
    i = wp.tid()
    report(i)


def test_print_from_a_function_on_many_threads(capfd):
    capfd.readouterr()
    wp.launch(prints_from_func, dim=40000, inputs=[])
    lines = capfd.readouterr().out.splitlines()
    assert sorted(map(int, lines)) == list(range(1, 40000, 2))  # each line whole, none lost


def k_printf_no_format(a: wp.array(dtype=float)):
    wp.printf(a[0])


def k_expect_types(a: wp.array(dtype=float)):
    wp.expect_eq(a[0], 1)


@pytest.mark.parametrize("func,message", [
    (k_printf_no_format, r"wp.printf\(\) needs a string literal format as its first argument"),
    (k_expect_types, r"expect_eq\(\) arguments must have the same type, got float32 and int32"),
])
def test_errors(func, message):
    with pytest.raises(wp.CompileError, match=message):
        wp.launch(wp.kernel(func), dim=1, inputs=[wp.zeros(1)])


@wp.kernel
def k_wp_print(v: int):
    wp.print(1.5)
    wp.print("a string")
    wp.print(wp.uint8(v))
    wp.print(v > 0)


def test_wp_print_is_print(capfd):
    capfd.readouterr()
    wp.launch(k_wp_print, dim=1, inputs=[-1])
    assert capfd.readouterr().out == "1.5\na string\n255\nFalse\n"
    wp.print("from Python", 3)  # Python scope: Python's print
    assert capfd.readouterr().out == "from Python 3\n"


def k_printf_33(a: wp.array(dtype=float)):
    wp.printf("%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n",
              0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
              29, 30, 31, 32)


def test_printf_takes_at_most_32_values():
    # Warp's limit, kept so that kernels stay portable
    with pytest.raises(RuntimeError) as e:
        wp.launch(wp.kernel(k_printf_33), dim=1, inputs=[wp.zeros(1)])
    assert str(e.value).endswith(": in 'k_printf_33': the maximum number of variadic arguments that can be passed "
                                 "to `printf` is 32")


@wp.struct
class PrintedPair:
    x: float
    y: float


@wp.kernel
def prints_in_reverse(x: float, v: wp.vec3, b: wp.bool, s: PrintedPair, a: wp.array(dtype=float),
                      out: wp.array(dtype=float)):
    print(x)
    y = x * 3.0
    print(y)
    print("hello")
    print(v)
    print(b)
    out[0] = y * 2.0 + v[1]
    print(1.5)
    print(s)
    print(a)


@wp.kernel
def prints_matrices(m: wp.mat22, q: wp.quat, t: wp.transform, i: int, u: wp.uint8):
    print(m)
    print(q)
    print(t)
    print(i)
    print(u)


# Recorded from warp-lang 1.19 (its adjoint kernel replays the forward prints, then adj_print writes each printed
# value's adjoint in the reverse sweep: an argument's adjoint starts at what adj_inputs passed, then gathers the
# sweep's contributions: x's is 5 + 3 * 2 = 11, v's (7, 8, 9) + (0, 1, 0)).
WARP_REVERSE_OUTPUT = """2
6
hello
1 2 3 \nTrue
1.5
<type without print implementation>
<type without print implementation>
adj: <type without print implementation>
adj: <type without print implementation>
adj: 0
adj: False
adj: 7 9 9
adj: hello
adj: 2
adj: 11
"""

WARP_REVERSE_COMPOSITES = """1 2 \n3 4 \n1 2 3 4
(0 0 0) (0 0 0 1)
3
4
adj: 10
adj: 9
adj: (5 6 7) (8 9 10 11)
adj: 5 6 7 8
adj: 5 6
     7 8
"""


def test_adjoint_launch_prints_adjoints_as_warp(capfd):
    a = wp.zeros(2, dtype=float)
    capfd.readouterr()
    wp.launch(prints_in_reverse, dim=1, inputs=[2.0, wp.vec3(1.0, 2.0, 3.0), True, PrintedPair(), a],
              outputs=[wp.zeros(1, dtype=float)], adj_inputs=[5.0, wp.vec3(7.0, 8.0, 9.0), False, PrintedPair(), a],
              adj_outputs=[wp.ones(1, dtype=float)], adjoint=True)
    assert capfd.readouterr().out == WARP_REVERSE_OUTPUT
    wp.launch(prints_matrices, dim=1, inputs=[wp.mat22(1.0, 2.0, 3.0, 4.0), wp.quat(1.0, 2.0, 3.0, 4.0),
                                              wp.transform_identity(), 3, wp.uint8(4)],
              adj_inputs=[wp.mat22(5.0, 6.0, 7.0, 8.0), wp.quat(5.0, 6.0, 7.0, 8.0),
                          wp.transform(wp.vec3(5.0, 6.0, 7.0), wp.quat(8.0, 9.0, 10.0, 11.0)), 9, wp.uint8(10)],
              adjoint=True)
    assert capfd.readouterr().out == WARP_REVERSE_COMPOSITES


def test_forward_launch_prints_no_adjoint(capfd):
    capfd.readouterr()
    wp.launch(prints_matrices, dim=1, inputs=[wp.mat22(1.0, 2.0, 3.0, 4.0), wp.quat(1.0, 2.0, 3.0, 4.0),
                                              wp.transform_identity(), 3, wp.uint8(4)])
    assert "adj" not in capfd.readouterr().out
