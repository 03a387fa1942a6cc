"""wp.fabricarray / wp.indexedfabricarray in Python: construction from the Fabric interface (dtypes from the type
metadata, and every malformed interface's error), values (numpy, list, str), writes (fill_, zero_, assign,
wp.copy) against numpy on the memory the buckets split, copies (clone, contiguous, to, *_like), the annotation
forms, and struct fields (kernels through structs, nested and in struct arrays; field checks, to(), list())."""

from typing import Any, Literal

import numpy as np
import pytest

import mlwarp as wp

from fabric_util import bucket_interface, fabric, index, rows_interface, type_info


# -- construction ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("info, dtype", [
    ((True, "i2", 1, 0, ""), wp.int16),
    ((True, "u8", 1, 0, ""), wp.uint64),
    ((True, "b", 1, 0, ""), wp.bool),
    ((True, "f4", 3, 0, "vector"), wp.vec3),
    ((True, "f8", 4, 0, "quat"), wp.quatd),
    ((True, "f4", 4, 0, "color"), wp.vec4),
    ((True, "f2", 9, 0, "matrix"), wp.mat33h),
    ((True, "f8", 16, 0, "transform"), wp.mat44d),
    ((True, "i4", 4, 0, "frame"), wp.types.matrix((2, 2), wp.int32)),
])
def test_dtype_from_type_metadata(info, dtype):
    iface = {"version": 1, "device": "cpu", "attribs": {"a": {"type": info, "access": 1, "pointers": [],
                                                              "counts": []}}}
    fa = wp.fabricarray(iface, "a")
    assert fa.dtype is dtype and fa.ndim == 1 and fa.shape == (0,) and fa.size == 0 and fa.access == 1
    assert fa.device == wp.get_device("cpu")


class _Provider:
    def __init__(self, iface):
        self.__fabric_arrays_interface__ = iface


def test_objects_providing_the_interface():
    data = wp.array(np.arange(5, dtype=np.float32))
    fa = wp.fabricarray(_Provider(bucket_interface(data, "p", [3, 2])), "p")
    np.testing.assert_array_equal(fa.numpy(), np.arange(5))


def _iface(**changes):
    info = {"type": (True, "f4", 1, 0, ""), "access": 2, "pointers": [0], "counts": [0]}
    info.update(changes.pop("info", {}))
    iface = {"version": 1, "device": "cpu", "attribs": {"a": info}}
    iface.update(changes)
    return iface


@pytest.mark.parametrize("make, error, message", [
    (lambda: wp.fabricarray(_iface(), None), ValueError, "Invalid attribute name: None"),
    (lambda: wp.fabricarray([1], "a"), ValueError,
     "Invalid data argument for fabricarray: expected dict or object with __fabric_arrays_interface__"),
    (lambda: wp.fabricarray(_iface(version=2), "a"), ValueError, "Unsupported Fabric interface version: 2"),
    (lambda: wp.fabricarray(_iface(device=0), "a"), ValueError, "Invalid Fabric interface device: 0"),
    (lambda: wp.fabricarray(_iface(attribs=[]), "a"), ValueError, "Failed to get Fabric interface attributes"),
    (lambda: wp.fabricarray(_iface(), "b"), ValueError, "Failed to get attribute 'b'"),
    (lambda: wp.fabricarray(_iface(info={"type": (True, "f4", 1, 0)}), "a"), ValueError,
     "Fabric attribute 'a' type metadata must contain five elements, got 4: (True, 'f4', 1, 0)"),
    (lambda: wp.fabricarray(_iface(info={"type": (True, "f4", 6, 0, "matrix")}), "a"), ValueError,
     "Fabric attribute 'a' matrix metadata must have a square element count, got 6"),
    (lambda: wp.fabricarray(_iface(info={"type": (False, "f4", 1, 0, "")}), "a"), RuntimeError,
     "Attribute 'a' cannot be used in Warp"),
    (lambda: wp.fabricarray(_iface(info={"type": (True, "c8", 1, 0, "")}), "a"), RuntimeError,
     "Attribute 'a' base data type 'c8' is not supported in Warp"),
    (lambda: wp.fabricarray(_iface(info={"type": (True, "u1", 1, 0, "text")}), "a"), RuntimeError,
     "Attribute 'a' role 'text' is not supported in Warp"),
    (lambda: wp.fabricarray(_iface(info={"type": (True, "f4", 1, 2, "")}), "a"), ValueError,
     "Invalid attribute array depth: 2"),
    (lambda: wp.fabricarray(_iface(info={"counts": [1, 2]}), "a"), RuntimeError,
     "Attribute pointers and counts must be lists of the same size"),
    (lambda: wp.fabricarray(_iface(info={"type": (True, "f4", 1, 1, ""), "array_lengths": []}), "a"), RuntimeError,
     "Attribute `array_lengths` must be a list of the same size as `pointers` and `counts`"),
    (lambda: fabric([1.0])[0][3], ValueError,
     "Fabric arrays only support indexing using index arrays, got key of type <class 'int'>"),
    (lambda: fabric([1.0])[0][wp.array([0], dtype=wp.int64)], ValueError, "Index array must use int32, got dtype "),
    (lambda: wp.indexedfabricarray(fa=wp.zeros(1), indices=index([0])), ValueError,
     "Indexed Fabric array data must be a Warp Fabric array, got <class 'mlwarp.arrays.array.array'>"),
])
def test_malformed_interfaces_and_indices(make, error, message):
    with pytest.raises(error) as e:
        make()
    assert str(e.value).startswith(message)


# -- values and writes -----------------------------------------------------------------------------------
def test_values_of_fabric_and_indexed_fabric_arrays():
    values = np.arange(24, dtype=np.float64).reshape(8, 3)
    fa, _ = fabric(values, dtype=wp.vec3d, sizes=[0, 5, 0, 3])
    np.testing.assert_array_equal(fa.numpy(), values)
    assert fa.numpy().dtype == np.float64 and fa.list() == wp.array(values, dtype=wp.vec3d).list()
    picks = [7, 0, 7, 2]
    ifa = fa[index(picks)]
    np.testing.assert_array_equal(ifa.numpy(), values[picks])
    assert ifa.list() == wp.array(values[picks], dtype=wp.vec3d).list()
    assert str(ifa) == str(values[picks])


def test_fill_zero_and_assign_write_through_the_buckets():
    fa, data = fabric(np.zeros((6, 2, 2)), dtype=wp.mat22, sizes=[2, 0, 4])
    fa.fill_([[1, 2], [3, 4]])
    np.testing.assert_array_equal(data.numpy(), np.tile([[1, 2], [3, 4]], (6, 1, 1)))
    odd = fa[index([1, 3, 5])]
    odd.fill_(7.5)
    expected = np.tile(np.array([[1, 2], [3, 4]], dtype=np.float32), (6, 1, 1))
    expected[1::2] = 7.5
    np.testing.assert_array_equal(data.numpy(), expected)
    odd.zero_()
    expected[1::2] = 0
    np.testing.assert_array_equal(data.numpy(), expected)
    odd.assign(np.arange(12).reshape(3, 2, 2))
    expected[1::2] = np.arange(12).reshape(3, 2, 2)
    np.testing.assert_array_equal(data.numpy(), expected)
    fa.zero_()
    np.testing.assert_array_equal(data.numpy(), np.zeros((6, 2, 2)))
    with pytest.raises(RuntimeError, match=r"^Cannot assign 8 values to a Fabric array of 3 elements \(shape \(3,\)\)"):
        odd.assign(np.arange(8))


@pytest.mark.parametrize("dtype, value, stored", [
    (wp.int8, 42, 42), (wp.float16, 13.37, np.float16(13.37)), (wp.uint16, wp.uint16(17), 17),
    (wp.vec3ui, [4, 5, 6], [4, 5, 6]), (wp.vec2, wp.vec2(1.5, -2.0), [1.5, -2.0]),
])
def test_fill_converts_as_wp_array_fill(dtype, value, stored):
    shape = (5,) + tuple(getattr(dtype, "_shape_", ()))
    fa, data = fabric(np.zeros(shape), dtype=dtype, sizes=[1, 4])
    fa.fill_(value)
    np.testing.assert_array_equal(data.numpy(), np.broadcast_to(np.asarray(stored, dtype=data.numpy().dtype), shape))


def test_copies_between_arrays_and_fabric_arrays():
    values = np.arange(7, dtype=np.int32)
    fa, data = fabric(np.zeros(7), dtype=wp.int32, sizes=[3, 0, 4])
    wp.copy(fa, wp.array(values, dtype=wp.int32))
    np.testing.assert_array_equal(data.numpy(), values)
    ifa = fa[index([6, 1])]
    out = wp.zeros(2, dtype=wp.int32)
    wp.copy(out, ifa)
    np.testing.assert_array_equal(out.numpy(), [6, 1])
    wp.copy(ifa, wp.array([-1, -2], dtype=wp.int32))
    np.testing.assert_array_equal(data.numpy(), [0, -2, 2, 3, 4, 5, -1])
    fa.assign(wp.array(values * 10, dtype=wp.int32))
    np.testing.assert_array_equal(data.numpy(), values * 10)
    for copy in (wp.clone(ifa), ifa.contiguous()):
        assert type(copy) is wp.array and copy.numpy().tolist() == [60, 10]
    clone = wp.clone(fa)
    assert isinstance(clone, wp.array) and clone.dtype is wp.int32
    np.testing.assert_array_equal(clone.numpy(), values * 10)
    assert fa.to("cpu") is fa and ifa.to("cpu") is ifa
    assert wp.zeros_like(ifa).shape == (2,) and wp.full_like(fa, 3).numpy().tolist() == [3] * 7
    with pytest.raises(RuntimeError, match="^dest_offset, src_offset, and count are not supported"):
        wp.copy(fa, wp.zeros(7, dtype=wp.int32), count=2)


def test_empty_fabric_arrays():
    fa, _ = fabric(np.zeros((0, 3)), dtype=wp.vec3, sizes=[])
    ifa = fa[wp.empty(0, dtype=int)]
    for a in (fa, ifa):
        assert a.size == 0 and a.shape == (0,)
        a.zero_()
        a.fill_(wp.vec3(1.0))
        wp.copy(a, wp.clone(a))
        a.assign(wp.zeros(0, dtype=wp.vec3))
        assert a.numpy().shape == (0, 3) and a.numpy().dtype == np.float32 and a.list() == []


def test_arrays_of_arrays_refuse_python_values():
    faa = wp.fabricarrayarray(data=rows_interface([wp.zeros(2), wp.zeros(1)], "r", [2]), attrib="r")
    with pytest.raises(RuntimeError, match="^Filling Fabric arrays of arrays is not supported$"):
        faa.fill_(1.0)
    with pytest.raises(RuntimeError, match="^Filling indexed Fabric arrays of arrays is not supported$"):
        faa[index([0])].fill_(1.0)
    with pytest.raises(RuntimeError, match="^Copying to/from Fabric arrays of arrays is not supported$"):
        faa.numpy()
    with pytest.raises(RuntimeError, match="^Copying to/from Fabric arrays of arrays is not supported$"):
        wp.copy(wp.zeros(2), faa)


# -- annotations -----------------------------------------------------------------------------------------
def test_annotation_forms():
    assert repr(wp.fabricarray[float]) == "wp.fabricarray[wp.float32]"
    assert repr(wp.indexedfabricarray[wp.float64, Literal[2]]) == "wp.indexedfabricarray[wp.float64, Literal[2]]"
    assert repr(wp.fabricarray[wp.vec3, Any]) == "wp.fabricarray[wp.vec3f, Any]"
    assert wp.fabricarray[wp.float32, 2] == wp.fabricarray[wp.float32, Literal[2]]
    assert hash(wp.fabricarray[float]) == hash(wp.fabricarray[wp.float32])
    assert wp.fabricarray[float] != wp.indexedfabricarray[float]
    assert not isinstance(wp.fabricarray[float], wp.fabricarray)
    assert wp.fabricarray[Any].dtype is Any and wp.indexedfabricarray[float, Any].ndim is Any
    assert (wp.fabricarray[float].type_id, wp.indexedfabricarray[float].type_id) == (2, 3)
    for factory, subscript in ((wp.fabricarray(dtype=wp.float32, ndim=2), wp.fabricarray[wp.float32, Literal[2]]),
                               (wp.fabricarrayarray(dtype=wp.int8), wp.fabricarray[wp.int8, Literal[2]]),
                               (wp.indexedfabricarrayarray(dtype=Any), wp.indexedfabricarray[Any, Literal[2]]),
                               (wp.indexedfabricarray(dtype=float), wp.indexedfabricarray[wp.float32])):
        assert (factory.dtype, factory.ndim, factory.type_id) == (subscript.dtype, subscript.ndim, subscript.type_id)
        assert factory.is_annotation and factory.device is None
    with pytest.raises(TypeError, match="^wp.fabricarray expects 1 or 2 type parameters, got 3$"):
        wp.fabricarray[float, 1, 2]
    with pytest.raises(ValueError, match="^ndim must be between 1 and 4, got 0$"):
        wp.indexedfabricarray[float, 0]


# -- struct fields ---------------------------------------------------------------------------------------
@wp.struct
class _Views:
    values: wp.fabricarray[float]
    picked: wp.indexedfabricarray(dtype=float)
    scale: float


@wp.struct
class _Outer:
    inner: _Views


@wp.kernel
def _through_struct(s: _Views):
    i = wp.tid()
    s.values[i] = s.values[i] * s.scale
    s.picked[i] = s.picked[i] + 1.0


@wp.kernel
def _through_nested(o: _Outer):
    i = wp.tid()
    o.inner.values[i] = o.inner.values[i] * o.inner.scale
    o.inner.picked[i] = o.inner.picked[i] + 1.0


@wp.kernel
def _through_struct_array(ss: wp.array[_Views]):
    i = wp.tid()
    s = ss[0]
    s.values[i] = s.values[i] * s.scale
    s.picked[i] = s.picked[i] + 1.0


def _struct_case():
    a, a_data = fabric(np.arange(6), sizes=[2, 4])
    b, b_data = fabric(np.arange(10, 16), sizes=[5, 1])
    s = _Views()
    s.values, s.picked, s.scale = a, b[index([5, 0, 3])], 3.0
    return s, (a, b), a_data, b_data


@pytest.mark.parametrize("how", ["struct", "nested", "struct array"])
def test_kernels_reach_fabric_fields(how):
    s, _keep, a_data, b_data = _struct_case()
    if how == "struct":
        wp.launch(_through_struct, dim=3, inputs=[s])
    elif how == "nested":
        o = _Outer()
        o.inner = s
        wp.launch(_through_nested, dim=3, inputs=[o])
    else:
        wp.launch(_through_struct_array, dim=3, inputs=[wp.array([s], dtype=_Views)])
    np.testing.assert_array_equal(a_data.numpy(), [0, 3, 6, 3, 4, 5])
    np.testing.assert_array_equal(b_data.numpy(), [11, 11, 12, 14, 14, 16])


@wp.struct
class _IntFields:
    values: wp.fabricarray[wp.int32]
    picked: wp.indexedfabricarray[wp.int32, Literal[2]]
    any_rank: wp.fabricarray[wp.int32, Any]


def test_struct_field_checks_and_defaults():
    s = _IntFields()
    assert s.values is None and s.picked is None and s.any_rank is None
    floats, _ = fabric([1.0])
    ints, _ = fabric([1], dtype=wp.int32)
    rows = wp.fabricarrayarray(data=rows_interface([wp.zeros(1, dtype=wp.int32)], "r", [1]), attrib="r")
    for field, value, message in (
            ("values", [1, 2], "Struct field 'values' expects a Warp Fabric array, got list"),
            ("values", floats, "Struct field 'values' expects dtype int32, got float32"),
            ("values", rows, r"Struct field 'values' expects an array with 1 dimension\(s\), got 2 dimension\(s\)"),
            ("values", ints[index([0])], "Struct field 'values' expects a Warp Fabric array, got indexedfabricarray"),
            ("picked", ints, "Struct field 'picked' expects a Warp indexed Fabric array, got fabricarray"),
            ("picked", ints[index([0])], r"Struct field 'picked' expects an array with 2 dimension\(s\)")):
        with pytest.raises(TypeError, match=f"^{message}"):
            setattr(s, field, value)
    s.any_rank = rows
    assert s.any_rank is rows
    s.any_rank = ints
    s.picked = rows[index([0])]
    s.values = None
    assert s.values is None and s.any_rank is ints


@wp.kernel
def _index_any_rank(s: _IntFields):
    s.any_rank[0] = 1


def test_a_field_of_any_rank_cannot_be_indexed():
    s = _IntFields()
    ints, _ = fabric([1], dtype=wp.int32)
    s.any_rank = ints
    with pytest.raises(wp.CompileError, match=r"a fabricarray\(ndim=Any, dtype=int32\) \(a struct field declared "
                                              r"with ndim=Any\) cannot be indexed in a kernel") as e:
        wp.launch(_index_any_rank, dim=1, inputs=[s])
    assert __file__ in str(e.value)


def test_struct_to_keeps_fabric_fields_on_their_device_and_list_gives_annotations():
    s, keep, _, _ = _struct_case()
    moved = s.to("cpu")
    assert moved.values is s.values and moved.picked is s.picked
    elements = wp.array([s], dtype=_Views).list()
    assert isinstance(elements[0].values, wp.fabricarray) and elements[0].values.is_annotation
    assert isinstance(elements[0].picked, wp.indexedfabricarray) and elements[0].picked.dtype is wp.float32
    assert elements[0].scale == 3.0
    assert elements[0].to("cpu").values is elements[0].values
    assert _Views.key == "_Views"


def test_interface_type_metadata_helper_matches_dtypes():
    # fabric_util.type_info writes what wp.fabricarray reads back (the tests' interfaces rely on it)
    for dtype in (wp.uint8, wp.vec4h, wp.mat44d, wp.quat):
        iface = {"version": 1, "device": "cpu",
                 "attribs": {"a": {"type": type_info(dtype), "access": 2, "pointers": [], "counts": []}}}
        assert wp.fabricarray(iface, "a").dtype is dtype
