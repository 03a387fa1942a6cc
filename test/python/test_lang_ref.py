"""wp.ref[T] parameters (Warp 1.19's pass-by-reference), wp.address_of and wp.func_native: hand-computed
values, gradients against finite differences of a numpy forward, and each rejection's message."""

import ctypes
import typing

import numpy as np
import pytest

import mlwarp as wp


# -- the annotation object ------------------------------------------------------------------------
def test_ref_annotation_object():
    r = wp.ref[wp.int32]
    assert r.dtype is wp.int32 and r.value_type is wp.int32
    assert repr(r) == "wp.ref[int32]" and repr(wp.ref[wp.vec3]) == "wp.ref[vec3f]"
    assert r == wp.ref[wp.int32] and hash(r) == hash(wp.ref[wp.int32])
    assert r != wp.ref[wp.float32] and r != wp.int32
    assert wp.ref[wp.float64].dtype is wp.float64
    with pytest.raises(TypeError, match=r"wp\.ref is an annotation: write wp\.ref\[T\]"):
        wp.ref(wp.int32)


# -- values ---------------------------------------------------------------------------------------
@wp.func
def inc(x: wp.ref[wp.int32]):
    x += 1


@wp.func
def inc_twice(x: wp.ref[wp.int32]):
    inc(x)  # a reference parameter forwarded to another
    inc(x)


@wp.func
def set_f(x: wp.ref[wp.float32], value: wp.float32):
    x = value


@wp.func
def add_f(x: wp.ref[wp.float32], delta: wp.float32):
    x += delta


@wp.func
def set_v3(x: wp.ref[wp.vec3], value: wp.vec3):
    x = value


@wp.func
def bump_components(v: wp.ref[wp.vec3], m: wp.ref[wp.mat33]):
    v[0] += 1.0
    m[0, 0] += 1.0
    m[2] = wp.vec3(7.0, 8.0, 9.0)


@wp.struct
class Counter:
    value: wp.int32
    scale: wp.float32


@wp.func
def bump_counter(c: wp.ref[Counter]):
    c.value += 1
    c.scale = c.scale * 2.0


@wp.func
def swap(x: wp.ref[wp.float32], y: wp.ref[wp.float32]):
    x, y = y, x  # both right-hand values are read before either is written


@wp.func
def old_then_set(x: wp.ref[wp.float32]) -> wp.float32:
    old, x = x, wp.float32(2.0)
    return old


@wp.func
def bumped_double(x: wp.ref[wp.float32]) -> wp.float32:
    x += 1.0
    return x * 2.0


@wp.func
def by_value_inc(x: wp.int32) -> wp.int32:
    x += 1
    return x


@wp.kernel
def ref_locals(out: wp.array(dtype=float), iout: wp.array(dtype=wp.int32)):
    v = wp.int32(0)
    inc(v)
    inc_twice(v)
    iout[0] = v
    w = wp.int32(10)
    iout[1] = by_value_inc(w)
    iout[2] = w  # a by-value parameter leaves the caller's variable alone
    c = Counter()
    c.value = 5
    c.scale = 1.5
    bump_counter(c)
    iout[3] = c.value
    out[0] = c.scale
    x = wp.float32(3.0)
    y = wp.float32(4.0)
    swap(x, y)
    out[1] = x
    out[2] = y
    z = wp.float32(9.0)
    out[3] = old_then_set(z)
    out[4] = z
    out[5] = bumped_double(z)  # z: 2 -> 3, returns 6
    out[6] = z
    add_f(x=z, delta=0.5)  # by keyword
    out[7] = z


def test_ref_parameters_change_the_callers_locals():
    out, iout = wp.zeros(8, dtype=float), wp.zeros(4, dtype=wp.int32)
    wp.launch(ref_locals, 1, [out, iout])
    assert list(iout.numpy()) == [3, 11, 10, 6]
    assert list(out.numpy()) == [3.0, 4.0, 3.0, 9.0, 2.0, 6.0, 3.0, 3.5]


@wp.kernel
def ref_components(out: wp.array(dtype=float)):
    v = wp.vec3(1.0, 2.0, 3.0)
    m = wp.mat33(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)
    bump_components(v, m)
    set_f(v[-1], 10.0)  # negative indices count from the end
    set_f(m[-1, -2], 20.0)
    set_v3(m[1], wp.vec3(30.0, 31.0, 32.0))
    q = wp.quat(1.0, 2.0, 3.0, 4.0)
    set_f(q.y, 40.0)
    set_f(q[2], 41.0)
    t = wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat_identity())
    set_f(t.p.x, 50.0)
    set_f(t.q.w, 51.0)
    y = v.y  # a copy of a component is its own local
    set_f(y, 60.0)
    for k in range(3):
        out[k] = v[k]
    for r in range(3):
        for s in range(3):
            out[3 + 3 * r + s] = m[r, s]
    for k in range(4):
        out[12 + k] = q[k]
    out[16] = t.p.x
    out[17] = t.p.y
    out[18] = t.q.w
    out[19] = y


def test_ref_to_vector_matrix_quaternion_transform_components():
    out = wp.zeros(20, dtype=float)
    wp.launch(ref_components, 1, [out])
    expected = [2, 2, 10, 2, 2, 3, 30, 31, 32, 7, 20, 9, 1, 40, 41, 4, 50, 2, 51, 60]
    assert list(out.numpy()) == expected


@wp.struct
class Inner:
    value: wp.float32


@wp.struct
class Box:
    inner: Inner
    vec: wp.vec3
    mat: wp.mat22
    quat: wp.quat
    xform: wp.transform


@wp.func
def set_inner(outer: wp.ref[Box], value: wp.float32):
    set_f(outer.inner.value, value)  # a nested field of a reference parameter, forwarded


@wp.kernel
def ref_array_elements(a: wp.array(dtype=float), a2: wp.array2d(dtype=float), boxes: wp.array(dtype=Box)):
    i = wp.tid()
    add_f(a[i], 10.0)
    row = a2[i]  # an element through a view
    set_f(row[1], float(i) + 0.5)
    set_f(a2[i, 0], -1.0)
    set_f(boxes[i].inner.value, float(i) + 1.0)
    set_f(boxes[i].vec.y, float(i) + 2.0)
    set_f(boxes[i].mat[1, 0], float(i) + 3.0)
    set_f(boxes[i].quat.w, float(i) + 4.0)
    set_f(boxes[i].xform.p.z, float(i) + 5.0)
    b = Box()
    set_inner(b, 7.0)
    add_f(boxes[i].inner.value, b.inner.value)


def test_ref_to_array_elements_and_struct_array_fields():
    a = wp.array(np.array([1.0, 2.0, 3.0], np.float32))
    a2 = wp.zeros((3, 2), dtype=float)
    boxes = wp.zeros(3, dtype=Box)
    wp.launch(ref_array_elements, 3, [a, a2, boxes])
    assert list(a.numpy()) == [11.0, 12.0, 13.0]
    assert a2.numpy().tolist() == [[-1.0, 0.5], [-1.0, 1.5], [-1.0, 2.5]]
    got = boxes.numpy()
    for i, b in enumerate(got):
        assert b["inner"]["value"] == i + 1.0 + 7.0
        assert list(b["vec"]) == [0.0, i + 2.0, 0.0]
        assert b["mat"].tolist() == [[0.0, 0.0], [i + 3.0, 0.0]]
        assert list(b["quat"]) == [0.0, 0.0, 0.0, i + 4.0]
        assert list(b["xform"]) == [0.0, 0.0, i + 5.0, 0.0, 0.0, 0.0, 0.0]


@wp.func
def count_down(x: wp.ref[wp.float32], limit: float) -> int:
    n = int(0)
    while x > limit:
        x = x - 1.0
        n += 1
        if n >= 4:
            return n  # an early return keeps what the loop did so far
    return n


@wp.func
def generic_double(x: wp.ref[typing.Any]):
    x = x + x


@wp.kernel
def ref_control_flow(out: wp.array(dtype=float), iout: wp.array(dtype=wp.int32), slots: wp.array(dtype=wp.int32)):
    v = wp.int32(0)
    for j in range(5):  # the loop carries what the calls change
        inc(v)
        if j % 2 == 0:
            inc(v)
    iout[0] = v
    f = wp.float32(4.5)
    iout[1] = count_down(f, 2.0)
    out[0] = f
    g = wp.float32(9.5)
    iout[2] = count_down(g, 2.0)
    out[1] = g
    for j in range(3):  # the index calls once: read and written back at the same element
        set_f(out[2 + wp.atomic_add(slots, 0, 1)], float(j) + 10.0)
    d = wp.float64(1.25)
    generic_double(d)
    out[5] = float(d)
    n = wp.int32(-3)
    generic_double(n)
    iout[3] = n


def test_ref_through_loops_branches_and_generic_parameters():
    out, iout, slots = wp.zeros(6, dtype=float), wp.zeros(4, dtype=wp.int32), wp.zeros(1, dtype=wp.int32)
    wp.launch(ref_control_flow, 1, [out, iout, slots])
    assert list(iout.numpy()) == [8, 3, 4, -6]
    assert list(out.numpy()) == [1.5, 5.5, 10.0, 11.0, 12.0, 2.5]
    assert slots.numpy()[0] == 3


@wp.func
def row_value(values: wp.ref[wp.array2d(dtype=float)], r: int) -> float:
    return values[r, 1]  # a reference to an array is the array


@wp.kernel
def ref_array_param(values: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = row_value(values, i)


def test_ref_of_an_array_is_the_array():
    values = wp.array(np.array([[2.0, 3.0], [4.0, 5.0]], np.float32))
    out = wp.zeros(2, dtype=float)
    wp.launch(ref_array_param, 2, [values, out])
    assert list(out.numpy()) == [3.0, 5.0]


# -- gradients ------------------------------------------------------------------------------------
@wp.func
def axpy_sin(y: wp.ref[wp.float32], a: wp.float32, x: wp.float32):
    y = y * a + wp.sin(x)


@wp.func
def scale_parts(v: wp.ref[wp.vec3], s: wp.float32):
    v[1] = v[1] * s
    v.z += s * s


@wp.kernel
def ref_grad(x: wp.array(dtype=float), y: wp.array(dtype=float), out: wp.array(dtype=float),
             boxes: wp.array(dtype=Box)):
    i = wp.tid()
    t = x[i] * 2.0
    axpy_sin(t, x[i], y[i])
    v = wp.vec3(x[i], y[i], 1.0)
    scale_parts(v, t)
    axpy_sin(out[i], 3.0, v[1] + v[2])  # out[i] is read, then overwritten
    set_f(boxes[i].inner.value, t * y[i])


def _forward(x, y, out0):
    t = x * 2.0
    t = t * x + np.sin(y)
    v1 = y * t
    v2 = 1.0 + t * t
    return out0 * 3.0 + np.sin(v1 + v2), t * y


def test_ref_gradients_match_finite_differences():
    rng = np.random.default_rng(7)
    xn, yn, o0 = (rng.uniform(-1.0, 1.0, 5) for _ in range(3))
    x = wp.array(xn.astype(np.float32), requires_grad=True)
    y = wp.array(yn.astype(np.float32), requires_grad=True)
    out = wp.array(o0.astype(np.float32), requires_grad=True)
    boxes = wp.zeros(5, dtype=Box, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(ref_grad, 5, [x, y, out, boxes])
    f_out, f_box = _forward(xn, yn, o0)
    np.testing.assert_allclose(out.numpy(), f_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(boxes.numpy()["inner"]["value"], f_box, rtol=1e-5, atol=1e-6)

    box_seed = np.zeros(5, dtype=boxes.numpy().dtype)
    box_seed["inner"]["value"] = 0.5
    boxes.grad.assign(box_seed)
    tape.backward(grads={out: wp.ones(5, dtype=float)})

    def loss(xv, yv, ov):
        a, b = _forward(xv, yv, ov)
        return a + 0.5 * b

    eps = 1e-6
    gx = (loss(xn + eps, yn, o0) - loss(xn - eps, yn, o0)) / (2 * eps)
    gy = (loss(xn, yn + eps, o0) - loss(xn, yn - eps, o0)) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(y.grad.numpy(), gy, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out.grad.numpy(), np.full(5, 3.0), rtol=1e-6)  # d out_new / d out_old


# -- rejections -----------------------------------------------------------------------------------
@wp.func
def set_i(x: wp.ref[wp.int32], value: wp.int32):
    x = value


@wp.func
def make_box() -> Box:
    return Box()


_ADDRESSABLE = (r"wp\.ref\[float32\] parameter requires an addressable expression \(local variable, array "
                r"element, struct field, or wp\.ref\[T\] parameter\)")


def _compile(fn):
    k = wp.kernel(fn, module="unique")
    wp.launch(k, 1, [wp.zeros(2, dtype=float)])


def test_ref_rejects_arguments_without_storage():
    def literal(a: wp.array(dtype=float)):
        set_f(1.0, 2.0)

    def arithmetic(a: wp.array(dtype=float)):
        set_f(a[0] + 1.0, 2.0)

    def call_result(a: wp.array(dtype=float)):
        set_f(wp.sin(a[0]), 2.0)

    def field_of_call_result(a: wp.array(dtype=float)):
        set_f(make_box().inner.value, 2.0)

    def component_of_temporary(a: wp.array(dtype=float)):
        set_f(wp.vec3(1.0, 2.0, 3.0).x, 2.0)

    for fn in (literal, arithmetic, call_result, field_of_call_result, component_of_temporary):
        with pytest.raises(wp.CompileError, match=rf"test_lang_ref\.py:\d+: in '{fn.__name__}': {_ADDRESSABLE}(\n|$)"):
            _compile(fn)


def test_ref_rejects_constant_locals_with_warps_hint():
    def int_constant(a: wp.array(dtype=float)):
        x = 0
        set_i(x, 2)

    def float_constant(a: wp.array(dtype=float)):
        x = 1.0
        set_f(x, 2.0)

    with pytest.raises(wp.CompileError, match=r"Error taking a mutable reference to constant local 'x', use the "
                                              r"following syntax: x = wp\.int32\(0\) to declare a dynamic "
                                              r"variable(\n|$)"):
        _compile(int_constant)
    with pytest.raises(wp.CompileError, match=r"x = wp\.float32\(1\.0\) to declare a dynamic variable(\n|$)"):
        _compile(float_constant)


def test_ref_argument_of_another_type_finds_no_overload():
    def wrong_type(a: wp.array(dtype=float)):
        x = wp.int32(1)
        set_f(x, 2.0)

    with pytest.raises(wp.CompileTypeError, match=r"Couldn't find function overload for 'set_f' that matched "
                                                  r"inputs with types: \[int32, float32\]"):
        _compile(wrong_type)


@wp.func
def assign_int_to_ref(x: wp.ref[wp.float32]):
    x = wp.int32(1)


@wp.func
def add_int_into_ref(x: wp.ref[wp.float32]):
    x += wp.int32(1)


def test_ref_parameter_keeps_its_type_in_warps_words():
    def plain(a: wp.array(dtype=float)):
        x = wp.float32(0.0)
        assign_int_to_ref(x)

    def augmented(a: wp.array(dtype=float)):
        x = wp.float32(0.0)
        add_int_into_ref(x)

    with pytest.raises(wp.CompileTypeError, match=r"in 'assign_int_to_ref': Error, assigning to ref parameter 'x' "
                                                  r"\(float32\) with value of different type \(int32\)"):
        _compile(plain)
    with pytest.raises(wp.CompileTypeError, match=r"in 'add_int_into_ref': Input types must be the same, got "
                                                  r"\['float32', 'int32'\]"):  # the builtin + refuses first
        _compile(augmented)


@wp.func
def second_of_row(values: wp.ref[wp.array2d[float]], row_index: int) -> float:
    alias = values
    row = alias[row_index]
    return row[1]


@wp.func_grad(second_of_row)
def adj_second_of_row(values: wp.ref[wp.array2d[float]], row_index: int, adj_ret: float):
    row = values[row_index]
    wp.adjoint[values][row_index, 1] += 2.0 * adj_ret + row[0] * 0.0


@wp.kernel
def rows_second(values: wp.array2d[float], out: wp.array[float]):
    i = wp.tid()
    out[i] = second_of_row(values, i)


def test_custom_gradient_of_a_function_taking_a_ref_array():
    # a wp.ref of an array is the array: its custom adjoint adds to the array's adjoint (a hand-written rule: 2x)
    values = wp.array(np.array([[2.0, 3.0], [4.0, 5.0]], dtype=np.float32), ndim=2, requires_grad=True)
    out = wp.zeros(2, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(rows_second, dim=2, inputs=[values], outputs=[out])
    tape.backward(grads={out: wp.ones_like(out)})
    np.testing.assert_array_equal(out.numpy(), [3.0, 5.0])
    np.testing.assert_array_equal(values.grad.numpy(), [[0.0, 2.0], [0.0, 2.0]])


def test_ref_is_not_allowed_in_kernel_signatures():
    def takes_ref(x: wp.ref[wp.float32]):
        pass

    with pytest.raises(wp.CompileTypeError, match=r"in 'takes_ref': argument 'x' is annotated wp\.ref\[float32\]: "
                                                  r"wp\.ref\[T\] is not allowed in @wp\.kernel signatures; pass "
                                                  r"addressable values to a @wp\.func's wp\.ref\[T\] parameter "
                                                  r"instead"):
        wp.kernel(takes_ref, module="unique")


def test_overloads_differing_only_by_ref_are_rejected():
    @wp.func
    def refness(x: wp.int32) -> wp.int32:
        return x

    first = refness
    with pytest.raises(RuntimeError, match=r"^Cannot overload Warp function 'refness' with signatures that differ "
                                           r"only by `wp\.ref\[T\]`; use distinct value types or a different "
                                           r"function name\.$"):
        @wp.func
        def refness(x: wp.ref[wp.int32]):  # noqa: F811  (a second definition in the scope: an overload)
            x += 1
    assert len(first.overloads) == 1


def test_custom_adjoint_of_a_function_writing_a_ref_is_rejected():
    @wp.func
    def twice_into(y: wp.ref[wp.float32], x: wp.float32):
        y = 2.0 * x

    @wp.func_grad(twice_into)
    def adj_twice_into(y: wp.float32, x: wp.float32, adj_ret: wp.float32):
        wp.adjoint[x] += 2.0 * adj_ret

    def uses(a: wp.array(dtype=float)):
        y = wp.float32(0.0)
        twice_into(y, a[0])

    with pytest.raises(wp.CompileError, match=r"'twice_into' has a @wp\.func_grad and writes its wp\.ref\[T\] "
                                              r"parameter\(s\) y: a custom adjoint cannot take the adjoint of a "
                                              r"reference parameter; return the value instead(\n|$)"):
        _compile(uses)


# -- wp.address_of --------------------------------------------------------------------------------
@wp.struct
class Cell:
    x: wp.float64
    inner: Inner
    v: wp.vec3
    m: wp.mat22


@wp.kernel
def addresses(a: wp.array(dtype=float), cells: wp.array(dtype=Cell), out: wp.array2d(dtype=wp.uint64)):
    i = wp.tid()
    out[i, 0] = wp.address_of(a[i])
    out[i, 1] = wp.address_of(cells[i])
    out[i, 2] = wp.address_of(cells[i].inner.value)
    out[i, 3] = wp.address_of(cells[i].v.z)
    out[i, 4] = wp.address_of(cells[i].m[1, 0])
    out[i, 5] = wp.address_of(cells[i].m[1])


def test_address_of_array_elements_fields_and_components():
    a, cells = wp.zeros(3, dtype=float), wp.zeros(3, dtype=Cell)
    out = wp.zeros((3, 6), dtype=wp.uint64)
    wp.launch(addresses, 3, [a, cells, out])
    c = Cell._ctype_
    size = ctypes.sizeof(c)
    inner = c.inner.offset
    for i, row in enumerate(out.numpy().astype(np.int64)):
        base = cells.ptr + i * size
        assert list(row) == [a.ptr + 4 * i, base, base + inner, base + c.v.offset + 8, base + c.m.offset + 8,
                             base + c.m.offset + 8]


def test_address_of_rejections():
    def of_local(a: wp.array(dtype=float)):
        x = wp.float32(1.0)
        a[0] = float(wp.address_of(x))

    def of_expression(a: wp.array(dtype=float)):
        a[0] = float(wp.address_of(a[0] + a[1]))

    def of_constant(a: wp.array(dtype=float)):
        x = 0
        a[0] = float(wp.address_of(x))

    with pytest.raises(wp.CompileError, match=r"in 'of_local': wp\.address_of\(\) of a local value: mlwarp keeps "
                                              r"kernel locals in registers \(SSA values\), which have no address; "
                                              r"only array elements \(and their fields and components\) have "
                                              r"one\. Pass the value to a wp\.ref\[T\] parameter instead(\n|$)"):
        _compile(of_local)
    with pytest.raises(wp.CompileError, match=r"wp\.address_of\(\) requires an addressable expression \(local "
                                              r"variable, array element, struct field, or wp\.ref\[T\] "
                                              r"parameter\)(\n|$)"):
        _compile(of_expression)
    with pytest.raises(wp.CompileError, match=r"constant local 'x', use the following syntax: x = wp\.int32\(0\)"):
        _compile(of_constant)
    with pytest.raises(RuntimeError, match=r"^wp\.address_of\(\) can only be called inside a @wp\.kernel or "
                                           r"@wp\.func body$"):
        wp.address_of(1)


# -- wp.func_native -------------------------------------------------------------------------------
def test_func_native_ref_parameter_is_a_cpp_reference():
    """A wp.ref[T] parameter of a native snippet is a C++ reference to the argument (Warp 1.19): 1 + 5 = 6, written
    back into the local and into the array element (test_func_native.py has the rest)."""
    @wp.func_native("x = x + 5;", adj_snippet="adj_x = adj_x;")
    def native_add(x: wp.ref[wp.int32]): ...

    assert native_add.native_snippet == "x = x + 5;" and native_add.__name__ == "native_add"

    @wp.kernel(module="unique")
    def calls_native(a: wp.array(dtype=wp.int32)):
        x = wp.int32(1)
        native_add(x)
        a[0] = x
        native_add(a[1])

    a = wp.zeros(2, dtype=wp.int32)
    wp.launch(calls_native, 1, [a])
    np.testing.assert_array_equal(a.numpy(), [6, 5])
    with pytest.raises(RuntimeError, match=r"^'native_add' is a @wp\.func_native function \(C\+\+/CUDA source\): it "
                                           r"can be called from kernels and @wp\.func functions only$"):
        native_add(1)


def test_verify_autograd_array_access_sees_ref_arguments_as_writes():
    from mlwarp.arrays import access

    @wp.kernel
    def through_ref(a: wp.array(dtype=float), x: wp.array(dtype=float), boxes: wp.array(dtype=Box)):
        i = wp.tid()
        add_f(a[i], x[i])  # written back, as `a[i] += x[i]`: a write of a, a read of x
        set_f(boxes[i].vec.y, 1.0)

    found = access.kernel_access(through_ref)
    assert (sorted(found.reads), sorted(found.writes)) == ([1], [0, 2])


_INCREMENTS = [inc]


@wp.kernel
def ref_static_callee(out: wp.array(dtype=wp.int32)):
    v = wp.int32(1)
    for j in range(4):
        wp.static(_INCREMENTS[0])(v)  # the loop sees through wp.static to the reference parameter
    out[0] = v


def test_ref_through_a_static_callee_in_a_loop():
    out = wp.zeros(1, dtype=wp.int32)
    wp.launch(ref_static_callee, 1, [out])
    assert out.numpy()[0] == 5
