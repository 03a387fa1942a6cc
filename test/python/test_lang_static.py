"""Compile-time values: wp.constant, captured globals and closures (captured when the module is built, seen
again once it is modified, as Warp's rule) and wp.static()."""

import numpy as np
import pytest

import mlwarp as wp

SCALE = wp.constant(2.0)
COUNT = wp.constant(4)
WIDE = wp.constant(wp.float64(0.1))
FLAG = True
BIG = 5_000_000_000  # does not fit int32: an int64 constant


@wp.kernel
def read_constants(f: wp.array(dtype=float), i: wp.array(dtype=int), d: wp.array(dtype=wp.float64),
                   l: wp.array(dtype=wp.int64)):
    f[0] = SCALE * 3.0
    i[0] = COUNT * 10
    d[0] = WIDE
    if FLAG:
        i[1] = 1
    l[0] = BIG + wp.int64(1)


def test_constants_and_globals_are_typed_as_literals():
    assert wp.constant(3) == 3 and type(wp.constant(1.5)) is float
    f, i, d, l = wp.zeros(1), wp.zeros(2, dtype=int), wp.zeros(1, dtype=wp.float64), wp.zeros(1, dtype=wp.int64)
    wp.launch(read_constants, dim=1, inputs=[f, i, d, l])
    assert (f.numpy()[0], list(i.numpy()), d.numpy()[0], l.numpy()[0]) == (6.0, [40, 1], 0.1, BIG + 1)


def test_constant_refuses_other_objects():
    with pytest.raises(TypeError, match=r"^Invalid constant type: <class 'list'>$"):
        wp.constant([1, 2])


OFFSET = 1.0


@wp.func
def shifted(x: float):
    return x + OFFSET


@wp.kernel
def uses_globals(out: wp.array(dtype=float)):
    out[0] = SCALE_CHANGING * 10.0 + shifted(0.0)


SCALE_CHANGING = 1.0


def test_a_changed_global_is_seen_once_the_module_is_modified():
    # Warp's rule (its code-generation page; the same sequence checked under warp-lang 1.19): a kernel captures
    # globals when its module is built; a global changed later is seen after the module is modified (a kernel
    # or @wp.func defined in it, mark_modified, reloading it), not before
    global SCALE_CHANGING, OFFSET
    out = wp.zeros(1)
    wp.launch(uses_globals, dim=1, inputs=[out])
    assert out.numpy()[0] == 11.0
    SCALE_CHANGING = 2.0
    try:
        wp.launch(uses_globals, dim=1, inputs=[out])
        assert out.numpy()[0] == 11.0
        wp.get_module(__name__).mark_modified()
        wp.launch(uses_globals, dim=1, inputs=[out])
        assert out.numpy()[0] == 21.0
        OFFSET = 5.0  # a global read by a @wp.func the kernel calls
        wp.launch(uses_globals, dim=1, inputs=[out])
        assert out.numpy()[0] == 21.0

        @wp.func
        def defined_later(x: float):  # a new function of this module modifies it
            return x

        wp.launch(uses_globals, dim=1, inputs=[out])
        assert out.numpy()[0] == 25.0
    finally:
        SCALE_CHANGING, OFFSET = 1.0, 1.0
        wp.get_module(__name__).mark_modified()
    wp.launch(uses_globals, dim=1, inputs=[out])
    assert out.numpy()[0] == 11.0


t = 0.0  # module globals of the same names as the kernel's own variables below, changed before every launch
steps = 0
SHADOW_SCALE = 3.0


@wp.kernel
def own_variables(x: wp.array(dtype=float), out: wp.array(dtype=float), steps: int):
    i = wp.tid()
    t = x[i] * SHADOW_SCALE
    for k in range(steps):
        t = t + 1.0
    out[i] = t


def test_variables_named_like_changing_globals_capture_nothing():
    # a parameter (`steps`) or a variable assigned before any read (`t`) is the kernel's own: globals of the same
    # names changing between launches (a timing loop's `t`) neither recompile nor reload the kernel; a global the
    # kernel reads (SHADOW_SCALE) still does
    global t, steps, SHADOW_SCALE
    from mlwarp.kernels.captures import captured_constants

    paths = [path for _, path, _ in captured_constants(own_variables.func)]
    assert ["SHADOW_SCALE"] in paths and ["t"] not in paths and ["steps"] not in paths
    x, out = wp.array(np.array([1.0, 2.0], np.float32)), wp.zeros(2)
    wp.launch(own_variables, dim=2, inputs=[x, out, 2])
    compiled = own_variables.compiled(wp.get_device("cpu"))
    for k in range(3):
        t, steps = float(k) + 0.5, k + 7
        wp.launch(own_variables, dim=2, inputs=[x, out, 2])
        assert own_variables.compiled(wp.get_device("cpu")) is compiled
    np.testing.assert_array_equal(out.numpy(), [5.0, 8.0])
    SHADOW_SCALE = 10.0
    try:
        wp.get_module(__name__).mark_modified()
        wp.launch(own_variables, dim=2, inputs=[x, out, 2])
        np.testing.assert_array_equal(out.numpy(), [12.0, 22.0])
    finally:
        SHADOW_SCALE = 3.0
        wp.get_module(__name__).mark_modified()


def test_a_global_read_before_a_variable_of_its_name_is_assigned_stays_a_capture():
    from mlwarp.kernels.captures import _paths
    import ast

    tree = ast.parse("def k(out):\n    out[0] = t\n    t = 1.0\n    u = u + 1.0\n    v = 2.0\n    out[1] = v\n")
    names = {path[0] for path, _ in _paths(tree)}
    assert "t" in names and "u" in names and "v" not in names and "out" not in names


def make_kernel(k, fn):
    @wp.kernel
    def closure_kernel(x: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = fn(x[i]) * k

    return closure_kernel


def test_closures_with_different_values_compile_different_kernels():
    x = wp.array(np.array([0.5, 2.0], np.float32))
    results = []
    for k, fn in [(2.0, wp.sqrt), (3.0, wp.sqrt), (2.0, wp.abs)]:
        out = wp.zeros(2)
        wp.launch(make_kernel(k, fn), dim=2, inputs=[x, out])
        results.append(list(out.numpy()))
    f = np.float32
    assert results == [[f(np.sqrt(f(0.5))) * 2, 2 * f(np.sqrt(f(2.0)))], [f(np.sqrt(f(0.5))) * 3,
                       3 * f(np.sqrt(f(2.0)))], [1.0, 4.0]]


@wp.func
def plus_one(x: float):
    return x + 1.0


@wp.func
def times_ten(x: float):
    return x * 10.0


FUNCS = [plus_one, times_ten]
N = 3


@wp.kernel
def use_static(out: wp.array(dtype=float), n: wp.array(dtype=int)):
    out[0] = wp.static(SCALE * 2.0 + float(len(FUNCS)))  # any Python expression, evaluated once
    out[1] = wp.static(FUNCS[1])(2.0)  # choosing a function at compile time
    s = 0
    for k in range(wp.static(N + 1)):
        s += k
    n[0] = s


def test_static_expressions():
    out, n = wp.zeros(2), wp.zeros(1, dtype=int)
    wp.launch(use_static, dim=1, inputs=[out, n])
    assert list(out.numpy()) == [6.0, 20.0] and n.numpy()[0] == 6
    assert wp.static(3) == 3  # Python scope: the value itself


def k_static_local(out: wp.array(dtype=float)):
    x = 1.0
    out[0] = wp.static(x * 2.0)


def k_static_computed_local(out: wp.array(dtype=float)):
    x = 1.0
    x = x + 1.0
    out[0] = wp.static(x)


def test_static_sees_constant_locals_only():
    # Warp's rule (checked under warp-lang 1.19): a local that holds a constant is a value wp.static() can use;
    # one computed at run time is not, with Warp's message
    out = wp.zeros(1)
    wp.launch(wp.kernel(k_static_local), dim=1, inputs=[out])
    assert out.numpy()[0] == 2.0
    with pytest.raises(wp.CompileError, match=r"test_lang_static.py:\d+: in 'k_static_computed_local': Error "
                       r"evaluating static expression: name 'x' is not defined\. Make sure all variables used in the "
                       r"static expression are constant\.\n"):
        wp.launch(wp.kernel(k_static_computed_local), dim=1, inputs=[wp.zeros(1)])


def test_static_errors_in_warps_words():
    def divides_by_zero(out: wp.array(dtype=float)):
        out[0] = wp.static(1.0 / 0.0)

    def makes_an_array(out: wp.array(dtype=float)):
        out[0] = wp.static(wp.zeros(1))[0]

    with pytest.raises(wp.CompileError, match=r"in 'divides_by_zero': Error evaluating static expression: float "
                                              r"division by zero while evaluating the following code generated from "
                                              r"the static expression:\n1\.0 / 0\.0\n"):
        wp.launch(wp.kernel(divides_by_zero), dim=1, inputs=[wp.zeros(1)])
    with pytest.raises(wp.CompileError, match=r"in 'makes_an_array': Static expression returns an unsupported value: "
                                              r"a Warp array cannot be created inside Warp kernels"):
        wp.launch(wp.kernel(makes_an_array), dim=1, inputs=[wp.zeros(1)])


@wp.struct
class StaticInner:
    data: wp.array(dtype=int)
    z: wp.vec3


@wp.struct
class StaticOuter:
    inner: StaticInner
    x: int


def make_outer_with_array():
    outer = StaticOuter()
    outer.inner = StaticInner()
    outer.inner.data = wp.zeros(3, dtype=int)
    return outer


def test_a_static_struct_holding_an_array_is_refused_in_warps_words():
    def k(out: wp.array(dtype=int)):
        s = wp.static(make_outer_with_array())
        out[0] = s.x

    # the path names the struct that holds the array field, as Warp's message does
    with pytest.raises(wp.CompileError, match=r"Static expression returns an unsupported value: the returned Warp "
                                              r"struct contains a data type that cannot be constructed inside Warp "
                                              r"kernels: a Warp array cannot be created inside Warp kernels at "
                                              r"StaticOuter\.inner\n"):
        wp.launch(wp.kernel(k), dim=1, inputs=[wp.zeros(1, dtype=int)])


@wp.kernel
def static_lengths(v1: wp.vec2, out: wp.array(dtype=float)):
    v2 = wp.vec3()
    m = wp.identity(n=wp.static(len(v1) + len(v2) + 1), dtype=float)
    out[0] = wp.ddot(m, m)
    t = wp.transform_identity(float)
    out[1] = float(wp.static(len(t)))
    k = 3
    m2 = wp.identity(n=k, dtype=float)
    out[2] = wp.ddot(m2, m2)


def test_static_len_of_composite_locals_and_constant_sizes():
    # len() of a vector/transform local is its type's length, as in Warp (values checked under warp-lang 1.19)
    out = wp.zeros(3)
    wp.launch(static_lengths, dim=1, inputs=[wp.vec2(), out])
    np.testing.assert_array_equal(out.numpy(), [6.0, 7.0, 3.0])



shadowed = wp.vec3(1.0, 2.0, 3.0)  # a global named as the kernel's parameter below, of another length
shadowed_rows = wp.types.matrix((4, 4), float)()


@wp.kernel
def parameter_lengths(shadowed: wp.vec2, shadowed_rows: wp.types.matrix((2, 3), float), out: wp.array(dtype=float)):
    m = wp.identity(n=wp.static(len(shadowed) + 1), dtype=shadowed.dtype)
    out[0] = wp.ddot(m, m)
    out[1] = float(wp.static(len(shadowed_rows)))


def test_static_len_of_a_parameter_shadows_a_global_of_its_name():
    # Warp's user guide (code_generation.rst, "Static Length Query") run after a block that made a global `v` of
    # another length: Warp takes len() of a kernel argument from the argument's type when the kernel is declared,
    # so the parameter wins (warp-lang 1.19.0 on the CPU: ddot(identity(3), identity(3)) = 3; 2 rows of a mat23)
    out = wp.zeros(2)
    wp.launch(parameter_lengths, dim=1, inputs=[wp.vec2(1.0, 2.0), wp.types.matrix((2, 3), float)(), out])
    np.testing.assert_array_equal(out.numpy(), [3.0, 2.0])


def test_declaring_reads_the_source_only_of_functions_that_name_static(monkeypatch):
    # a function whose code never loads the name `static` has no wp.static() call to evaluate: its source is not
    # read when it is declared (the API's ~130 library functions load without a read each); one that does is read
    from mlwarp.core import statics

    reads = []
    real = statics.function_source
    monkeypatch.setattr(statics, "function_source", lambda f: (reads.append(f.__name__), real(f))[1])
    scale = 3

    def plain(x: float):
        return x * 2.0

    def attribute(x: float):
        return x * wp.static(scale)

    def nested(x: float):
        return (lambda y: y * wp.static(scale))(x)

    for f in (plain, attribute, nested):
        statics.declare(f)
    assert reads == ["attribute", "nested"]
    assert list(statics.declared_values(attribute).values()) == [3]
