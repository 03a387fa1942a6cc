"""`@wp.struct` as Warp's: empty structs, `Struct.cls`, the Python types fields read back, Warp's errors for
bad field values, inheritance and unknown fields, keeping array gradients alive, hashes that ignore where a
struct or kernel is defined, and structs from another module."""

import gc
import importlib.util
import textwrap
import warnings
import weakref

import numpy as np
import pytest

import mlwarp as wp


@wp.struct
class Empty:
    pass


@wp.struct
class EmptyNest:
    a: Empty
    b: Empty
    z: int


@wp.struct
class WithArray:
    data: wp.array(dtype=float)
    some_value: int


@wp.struct
class Composites:
    v: wp.vec3
    m: wp.mat22
    q: wp.quat
    t: wp.transform


@wp.kernel
def read_nest(e: Empty, n: EmptyNest, out: wp.array(dtype=int)):
    local = Empty()  # noqa: F841
    out[0] = n.z


@wp.kernel
def read_first(s: WithArray, out: wp.array(dtype=float)):
    out[0] = s.data[0]


# -- empty structs ----------------------------------------------------------------------------------------------
def test_empty_structs_as_arguments_fields_and_locals():
    n = EmptyNest()
    n.z = 42
    out = wp.zeros(1, dtype=int)
    wp.launch(read_nest, 1, [Empty(), n, out])
    assert out.numpy()[0] == 42


def test_an_empty_struct_takes_one_byte_as_in_c():
    assert Empty.numpy_dtype()["itemsize"] == 1
    assert np.dtype(EmptyNest.numpy_dtype()).fields["z"][1] == 4  # a and b: a byte each, then int32 alignment
    a = wp.zeros(3, dtype=EmptyNest)
    assert a.strides == (8,) and list(a.numpy()["z"]) == [0, 0, 0]


# -- the class, field types -------------------------------------------------------------------------------------
def test_cls_is_the_class_as_written_and_instances_are_its_instances():
    @wp.struct
    class Point:
        x: float

        def doubled(self):
            return 2.0 * self.x

    p = Point()
    p.x = 1.5
    assert isinstance(p, Point.cls) and Point.cls.__name__ == "Point" and Point.cls is not Point
    assert p.doubled() == 3.0


def test_fields_read_back_their_warp_types():
    @wp.struct
    class Scalars:
        u8: wp.uint8
        i32: wp.int32
        f16: wp.float16
        f64: wp.float64
        b: wp.bool

    s = Scalars()
    for name, t in (("u8", wp.uint8), ("i32", wp.int32), ("f16", wp.float16), ("f64", wp.float64),
                    ("b", wp.bool)):
        assert type(getattr(s, name)) is t  # the defaults
    s.u8, s.f16 = wp.uint8(7), wp.float16(1.5)
    assert type(s.u8) is wp.uint8 and int(s.u8) == 7 and type(s.f16) is wp.float16 and float(s.f16) == 1.5
    s.i32, s.f64 = wp.int8(-3), 2.5  # a Warp scalar takes the field's type; a Python number stays itself
    assert type(s.i32) is wp.int32 and int(s.i32) == -3 and type(s.f64) is float
    s.u8 = None
    assert type(s.u8) is wp.uint8 and int(s.u8) == 0
    assert type(Composites().v) is wp.vec3 and type(Composites().m) is wp.mat22


def test_composite_fields_default_to_zero_and_are_copied():
    c = Composites()
    np.testing.assert_array_equal(np.array(c.t), np.zeros(7))  # zero memory, not the identity transform
    v = wp.vec3(1.0, 2.0, 3.0)
    c.v = v
    v[0] = 9.0
    assert c.v == wp.vec3(1.0, 2.0, 3.0)
    c.v = None
    assert c.v == wp.vec3(0.0, 0.0, 0.0)


def test_nested_struct_assignment_copies():
    n = EmptyNest()
    e = Empty()
    kept = n.a
    n.a = e
    assert n.a is kept and n.a is not e


def test_values_written_in_python_reach_the_kernel():
    @wp.struct
    class Mixed:
        u8: wp.uint8
        h: wp.float16
        i: int

    @wp.kernel
    def read(m: Mixed, out: wp.array(dtype=float)):
        out[0] = float(m.u8)
        out[1] = float(m.h)
        out[2] = float(m.i)

    m = Mixed()
    m.u8, m.h, m.i = wp.uint8(200), 0.5, wp.int32(-4)
    out = wp.zeros(3, dtype=float)
    wp.launch(read, 1, [m, out])
    np.testing.assert_array_equal(out.numpy(), [200.0, 0.5, -4.0])


# -- Warp's errors ----------------------------------------------------------------------------------------------
def test_a_list_for_an_array_field():
    s = WithArray()
    with pytest.raises(TypeError, match=r"^Struct field 'data' expects a Warp array, got list$"):
        s.data = [1.0, 2.0]


def test_an_array_of_another_dtype_for_an_array_field():
    s = WithArray()
    with pytest.raises(TypeError, match=r"^Struct field 'data' expects dtype float32, got int32$"):
        s.data = wp.zeros(2, dtype=int)


def test_an_array_of_another_ndim_for_an_array_field():
    s = WithArray()
    with pytest.raises(TypeError, match=r"^Struct field 'data' expects an array with 1 dimension\(s\), got 2 "
                                        r"dimension\(s\)$"):
        s.data = wp.zeros((2, 2), dtype=float)


def test_a_list_for_an_indexedarray_field():
    @wp.struct
    class Indexed:
        values: wp.indexedarray(dtype=wp.int32)

    s = Indexed()
    with pytest.raises(TypeError, match=r"^Struct field 'values' expects a Warp indexed array, got list$"):
        s.values = [1, 2, 3]
    data = wp.array([1.0], dtype=float)
    with pytest.raises(TypeError, match=r"^Struct field 'values' expects dtype int32, got float32$"):
        s.values = wp.indexedarray1d(data, [wp.array([0], dtype=wp.int32)])


@pytest.mark.parametrize("field,type_name", [("v", "vec3f"), ("m", "mat22f"), ("q", "quatf"), ("t", "transformf")])
@pytest.mark.parametrize("value", [123, 1.5, wp.float32(1.5), wp.int32(2)])
def test_a_single_value_for_a_composite_field(field, type_name, value):
    with pytest.raises(TypeError, match=rf"^Struct field '{field}' expects {type_name} but got a single value of "
                                        rf"type {type(value).__name__}\. Construct the value explicitly, e\.g\.: "
                                        rf"{type_name}\(\.\.\.\)\.$"):
        setattr(Composites(), field, value)


def test_a_bool_or_numpy_scalar_for_a_composite_field_warns_and_fills_it():
    c = Composites()
    with pytest.warns(DeprecationWarning, match=r"^Implicit conversion from a value of type `float32` to the "
                                                r"composite type `vec3f` for struct field 'v' is deprecated"):
        c.v = np.float32(1.5)
    assert c.v == wp.vec3(1.5, 1.5, 1.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        c.t = True
    np.testing.assert_array_equal(np.array(c.t), np.ones(7))


def test_a_float_for_an_int_field_is_refused_as_ctypes_does():
    s = WithArray()
    with pytest.raises(TypeError, match=r"'float' object cannot be interpreted as an integer"):
        s.some_value = 1.5


def test_a_non_struct_for_a_struct_field():
    n = EmptyNest()
    with pytest.raises(RuntimeError, match=r"^Trying to assign a non-structure value to a struct attribute with "
                                           r"type: Empty$"):
        n.a = 3
    with pytest.raises(RuntimeError, match=r"^Trying to assign a structure of type WithArray to an attribute of "
                                           r"Empty$"):
        n.a = WithArray()


def test_deriving_from_a_struct():
    @wp.struct
    class Parent:
        x: int

    with pytest.raises(RuntimeError, match=r"^Warp structs must be defined as base classes$"):
        @wp.struct
        class Child(Parent):
            y: int


def test_a_missing_field_in_a_kernel():
    @wp.kernel(module="unique")
    def k(s: WithArray):
        _ = s.nonexisting

    with pytest.raises(AttributeError) as info:
        wp.launch(k, 1, [WithArray()])
    assert str(info.value).endswith("`nonexisting` is not an attribute of 's' (test_struct_fields.WithArray)")


def test_indexing_a_row_view_with_too_many_indices():
    @wp.kernel(module="unique")
    def assign_view(out: wp.array2d(dtype=wp.mat44)):
        out[0][2, 2] = 6.0

    with pytest.raises(wp.WarpCodegenError, match=r"Incorrect number of indices specified for array indexing, got "
                                                  r"2 indices for a 1 dimensional array\."):
        wp.launch(assign_view, (1, 1), [wp.zeros((1, 1), dtype=wp.mat44)])


# -- arrays kept alive ------------------------------------------------------------------------------------------
def test_an_array_only_the_struct_holds_survives_gc():
    s = WithArray()
    s.data = wp.array([4.0, 5.0, 6.0], dtype=float)
    gc.collect()
    out = wp.zeros(1, dtype=float)
    wp.launch(read_first, 1, [s, out])
    assert out.numpy()[0] == 4.0


@pytest.mark.parametrize("replacement", ["none", "array without grad"])
def test_replacing_an_array_releases_its_gradient(replacement):
    s = WithArray()
    old = wp.array([1.0, 2.0, 3.0], dtype=float, requires_grad=True)
    grad = weakref.ref(old.grad)
    s.data = old
    assert s._data_grad is grad()
    del old
    s.data = None if replacement == "none" else wp.array([4.0], dtype=float)
    gc.collect()
    assert s._data_grad is None and grad() is None


# -- hashes -----------------------------------------------------------------------------------------------------
def test_module_hash_ignores_a_redefinition_that_changes_nothing():
    # the same struct and kernel written again further down: as Warp's, the hash follows content, not lines
    @wp.struct
    class Content:
        i: int

    @wp.kernel
    def uses(a: wp.array(dtype=Content)):  # noqa: F811
        i = wp.tid()  # noqa: F841

    first = wp.get_module(uses.__module__).hash_module()

    @wp.struct
    class Content:  # noqa: F811
        i: int

    @wp.kernel
    def uses(a: wp.array(dtype=Content)):  # noqa: F811
        i = wp.tid()  # noqa: F841

    assert wp.get_module(uses.__module__).hash_module() == first

    @wp.struct
    class Content:  # noqa: F811
        i: float

    @wp.kernel
    def uses(a: wp.array(dtype=Content)):  # noqa: F811
        i = wp.tid()  # noqa: F841

    assert wp.get_module(uses.__module__).hash_module() != first


# -- other modules ----------------------------------------------------------------------------------------------
def test_a_struct_from_another_module_as_a_field(tmp_path):
    path = tmp_path / "other_struct_module.py"
    path.write_text(textwrap.dedent("""
        import mlwarp as wp

        @wp.struct
        class Sample:
            index: int
            weight: float
    """))
    spec = importlib.util.spec_from_file_location("other_struct_module", path)
    other = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(other)

    @wp.struct
    class Holder:
        a: other.Sample
        b: other.Sample

    @wp.kernel(module="unique")
    def k(h: Holder, out: wp.array(dtype=float)):
        out[0] = float(h.a.index) + h.b.weight

    h = Holder()
    h.a.index = 3
    h.b.weight = 0.25
    out = wp.zeros(1, dtype=float)
    wp.launch(k, 1, [h, out])
    assert out.numpy()[0] == 3.25


def test_struct_vars_lists_the_fields_by_name_in_declaration_order():
    # Warp's Struct.vars: name -> a record with `label` and `type` (as warp-lang 1.19 shows them)
    @wp.struct
    class Particle:
        mass: float
        velocity: wp.vec3d
        history: wp.array2d(dtype=wp.vec3)

    assert list(Particle.vars) == ["mass", "velocity", "history"]
    assert [v.label for v in Particle.vars.values()] == ["mass", "velocity", "history"]
    assert Particle.vars["mass"].type is wp.float32
    assert Particle.vars["velocity"].type is wp.vec3d
    history = Particle.vars["history"].type
    assert history.dtype is wp.vec3 and history.ndim == 2
