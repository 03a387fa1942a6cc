"""A kernel's or function's identity is the object and what it captured when it was defined, never its name
(Warp's rules; every expected value below is what warp-lang 1.19 gives for the same code on the CPU)."""

import typing

import numpy as np

import mlwarp as wp


def make_offset(c):
    @wp.func
    def offset(x: int):
        return x + c

    return offset


offset17 = make_offset(17)
offset42 = make_offset(42)


@wp.kernel
def call_both_offsets(out: wp.array(dtype=int)):
    out[0] = offset17(0)
    out[1] = offset42(0)


def test_functions_from_a_factory_are_distinct():
    out = wp.zeros(2, dtype=int)
    wp.launch(call_both_offsets, dim=1, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), [17, 42])
    assert offset17 is not offset42


def make_scale(s):
    @wp.func
    def scale(x: int):
        return x * s

    return scale


def test_kernels_over_closure_functions_use_each_ones_constant():
    results = []
    for scale in [make_scale(k) for k in range(3)]:
        @wp.kernel
        def apply(out: wp.array(dtype=int)):
            i = wp.tid()
            out[i] = scale(i)

        out = wp.zeros(4, dtype=int)
        wp.launch(apply, dim=4, inputs=[out])
        results.append(out.numpy().tolist())
    assert results == [[0, 0, 0, 0], [0, 1, 2, 3], [0, 2, 4, 6]]


def test_kernels_defined_in_a_loop_keep_their_static_values():
    # Warp's documented example: wp.static() is evaluated when the kernel is defined
    kernels = []
    for i in range(3):
        @wp.kernel
        def read_static(out: wp.array(dtype=int)):
            out[0] = wp.static(i)

        kernels.append(read_static)
    found = []
    for k in kernels:  # launched after all three are defined, and the loop variable is 2
        out = wp.zeros(1, dtype=int)
        wp.launch(k, dim=1, inputs=[out])
        found.append(int(out.numpy()[0]))
    assert found == [0, 1, 2]


def test_kernels_defined_in_a_loop_keep_their_static_values_in_the_adjoint():
    # the adjoint (and debug) builds are variants of the kernel: they use the values taken at its definition,
    # not the loop variable's value when Tape.backward first runs (warp-lang 1.19: x.grad 1, 2, 3)
    kernels = []
    for i in range(3):
        @wp.kernel
        def scale_static(x: wp.array(dtype=float), out: wp.array(dtype=float)):
            out[0] = x[0] * float(wp.static(i + 1))

        kernels.append(scale_static)
    found = []
    for k in kernels:
        x = wp.array([1.0], dtype=float, requires_grad=True)
        out = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(k, dim=1, inputs=[x, out])
        tape.backward(grads={out: wp.array([1.0], dtype=float)})
        found.append((float(out.numpy()[0]), float(x.grad.numpy()[0])))
        out.zero_()
        wp.launch(k, dim=1, inputs=[x, out])  # and the forward after the adjoint's build
        assert float(out.numpy()[0]) == found[-1][0]
    assert found == [(1.0, 1.0), (2.0, 2.0), (3.0, 3.0)]


def test_functions_defined_in_a_loop_keep_their_static_values():
    funcs = []
    for i in range(3):
        @wp.func
        def tenfold():
            return wp.static(i * 10)

        funcs.append(tenfold)
    f0, f1, f2 = funcs

    @wp.kernel
    def call_all(out: wp.array(dtype=int)):
        out[0] = f0()
        out[1] = f1()
        out[2] = f2()

    out = wp.zeros(3, dtype=int)
    wp.launch(call_all, dim=1, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), [0, 10, 20])


def make_generic(c):
    @wp.func
    def times(x: typing.Any):
        return x * type(x)(c)

    return times


double, triple = make_generic(2), make_generic(3)


@wp.kernel
def call_generic_closures(out: wp.array(dtype=float), iout: wp.array(dtype=int)):
    out[0] = double(1.5)
    out[1] = triple(1.5)
    iout[0] = double(5)
    iout[1] = triple(5)


def test_generic_functions_from_a_factory_are_distinct():
    out, iout = wp.zeros(2), wp.zeros(2, dtype=int)
    wp.launch(call_generic_closures, dim=1, inputs=[out, iout])
    np.testing.assert_array_equal(out.numpy(), [3.0, 4.5])
    np.testing.assert_array_equal(iout.numpy(), [10, 15])


def test_overloads_accumulate_in_the_defining_scope_and_a_redefinition_is_a_new_function():
    @wp.func
    def pick(x: int):
        return 1

    first = pick

    @wp.func
    def pick(x: float):  # other annotations: an overload of the same function
        return 2

    assert pick is first

    @wp.func
    def pick(x: int):  # the first one's annotations: a new function holding both overloads
        return 3

    assert pick is not first

    @wp.kernel
    def call(out: wp.array(dtype=int)):
        out[0] = first(0)
        out[1] = first(0.0)
        out[2] = pick(0)
        out[3] = pick(0.0)

    out = wp.zeros(4, dtype=int)
    wp.launch(call, dim=1, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), [1, 2, 3, 2])


def make_overloaded(base):
    @wp.func
    def shifted(x: int):
        return x + base

    @wp.func
    def shifted(x: float):
        return x + float(base)

    return shifted


def test_overloads_from_separate_factory_calls_do_not_mix():
    s1, s100 = make_overloaded(1), make_overloaded(100)

    @wp.kernel
    def call(out: wp.array(dtype=int), fout: wp.array(dtype=float)):
        out[0] = s1(1)
        out[1] = s100(1)
        fout[0] = s1(0.5)
        fout[1] = s100(0.5)

    out, fout = wp.zeros(2, dtype=int), wp.zeros(2)
    wp.launch(call, dim=1, inputs=[out, fout])
    np.testing.assert_array_equal(out.numpy(), [2, 101])
    np.testing.assert_array_equal(fout.numpy(), [1.5, 100.5])


shadowed_index = 999  # a global of the loop variable's name, which wp.static() must not see inside the loop


@wp.kernel
def static_after_a_shadowing_loop(results: wp.array(dtype=int)):
    idx = 0
    for shadowed_index in range(2):
        for shadowed_index in range(3):
            pass
        results[idx] = wp.static(shadowed_index)  # Python's rule: the inner loop's last value
        idx += 1


def test_static_of_a_loop_variable_an_inner_loop_rebinds():
    out = wp.zeros(2, dtype=int)
    wp.launch(static_after_a_shadowing_loop, dim=1, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), [2, 2])


@wp.struct
class Gains:
    kp: float
    kd: float
    axis: wp.vec3


def make_gains():
    g = Gains()
    g.kp, g.kd, g.axis = 2.0, 0.5, wp.vec3(0.0, 1.0, 0.0)
    return g


@wp.kernel
def static_struct(out: wp.array(dtype=float)):
    g = wp.static(make_gains())
    out[0] = g.kp * 10.0 + g.kd
    out[1] = g.axis[1]


def test_a_static_struct_instance_is_a_constant():
    # hand-computed: warp-lang 1.19 fails to build this module (its C++ does not declare a struct that is
    # only a static value), so there is no Warp value to record
    out = wp.zeros(2)
    wp.launch(static_struct, dim=1, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), [20.5, 1.0])
