"""wp.full / fill_ dtype inference and struct values, .list() element types, .view() between element sizes,
.reshape() with -1, empty arrays, cptr, numpy shapes, dtype=Any, numpy aliasing and retain_grad (Warp 1.19's
behaviour). Expected values are numpy's or written by hand."""

import ctypes
from typing import Any

import numpy as np
import pytest

import mlwarp as wp
from test_cuda_runtime_fake import fake  # noqa: F401  (the fake-GPU fixture)


# -- wp.full's dtype from the value --------------------------------------------------------------------------
def test_full_infers_vectors_and_matrices_from_sequences():
    a = wp.full((2, 3), np.array([17, 42], dtype=np.int8))
    assert a.dtype is wp.types.vector(2, wp.int8) and a.shape == (2, 3)
    assert a.numpy().tolist() == [[[17, 42]] * 3] * 2
    m = wp.full(2, [[1.5, 2.0], [3.0, 4.0]])  # a nested list: numpy's float64
    assert m.dtype is wp.types.matrix((2, 2), wp.float64)
    assert m.numpy().tolist() == [[[1.5, 2.0], [3.0, 4.0]]] * 2
    b = wp.full(3, np.array([True, False]))
    assert b.dtype is wp.types.vector(2, wp.bool) and b.numpy().tolist() == [[True, False]] * 3
    assert wp.full(2, wp.vec3h(1.0, 2.0, 3.0)).dtype is wp.vec3h
    assert wp.full(2, True).dtype is wp.bool and wp.full(2, 7).dtype is wp.int32 and wp.full(2, 0.5).dtype is wp.float32


def test_full_vector_of_float16_from_values():
    # the values, not their bit patterns (float16(17) has the bits 19520)
    a = wp.full(3, [17, 42], dtype=wp.vec2h)
    assert a.numpy().dtype == np.float16 and a.numpy().tolist() == [[17.0, 42.0]] * 3
    assert wp.full(2, wp.vec2h(17.0, 42.0)).numpy().tolist() == [[17.0, 42.0]] * 2


@pytest.mark.parametrize("value, message", [
    (object(), "Invalid value type for Warp array: <class 'object'>"),
    (np.zeros((2, 2, 2)), "Values with more than two dimensions are not supported"),
    (["a"], "Failed to convert <U1 to a Warp data type"),
])
def test_full_refuses_what_it_cannot_type(value, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        wp.full(2, value)


# -- struct values ----------------------------------------------------------------------------------------------
@wp.struct
class Inner:
    h: wp.float16
    v: wp.vec3


@wp.struct
class Record:
    i: int
    h: wp.float16
    b: wp.bfloat16
    vh: wp.vec4h
    mb: wp.types.matrix((2, 2), wp.bfloat16)
    inner: Inner
    a2: wp.array2d[float]


def _record():
    s = Record()
    s.i, s.h, s.b = 42, -1.25, 2.5
    s.vh = wp.vec4h(1.0, 2.0, 3.0, 4.0)
    s.mb = [[1, 2], [3, 4]]
    s.inner.h, s.inner.v = 1.5, [1.0, 2.0, 3.0]
    s.a2 = wp.full((2, 3), 7.0)
    return s


def test_full_and_fill_with_a_struct():
    s = _record()
    a = wp.full((2, 2), s)
    assert a.dtype is Record and a.shape == (2, 2)
    expected = np.zeros((2, 2), dtype=Record.numpy_dtype())
    expected.fill(s.numpy_value())
    assert a.numpy().tobytes() == expected.tobytes()
    assert a.numpy()["i"].tolist() == [[42, 42], [42, 42]]
    a.fill_(0)  # 0: a default instance
    assert a.numpy().tobytes() == np.zeros((2, 2), dtype=Record.numpy_dtype()).tobytes()
    with pytest.raises(ValueError, match=r"^Failed to convert the value to the array data type: Invalid initializer "
                                         r"value for struct Record, expected struct instance or 0$"):
        a.fill_(1)


def test_struct_list_reads_fields_back():
    s = _record()
    values = wp.full(3, s).list()
    assert len(values) == 3 and all(type(v) is Record for v in values)
    v = values[2]
    assert (v.i, v.h, v.b) == (42, -1.25, 2.5)
    assert v.vh == wp.vec4h(1.0, 2.0, 3.0, 4.0) and v.mb == wp.types.matrix((2, 2), wp.bfloat16)(1, 2, 3, 4)
    assert v.inner.h == 1.5 and v.inner.v == wp.vec3(1.0, 2.0, 3.0)
    # an array field: an array over the memory the struct points to
    assert v.a2.dtype is wp.float32 and v.a2.shape == (2, 3) and v.a2.strides == (12, 4)
    assert v.a2.ptr == s.a2.ptr and v.a2.numpy().tolist() == [[7.0] * 3] * 2
    assert wp.zeros(1, dtype=Record).list()[0].a2 is None  # a null pointer


def test_struct_array_from_numpy_structured_data_round_trip():
    @wp.struct
    class Pair:
        x: int
        v: wp.vec3

    na = np.zeros(4, dtype=Pair.numpy_dtype())
    na["x"] = 17
    na["v"] = (1, 2, 3)
    a = wp.array(na, dtype=Pair)
    assert a.numpy()["x"].tolist() == [17] * 4 and a.numpy()["v"].tolist() == [[1.0, 2.0, 3.0]] * 4
    back = a.numpy().copy()
    back["x"] = 42
    b = wp.from_numpy(back, Pair)
    assert b.numpy()["x"].tolist() == [42] * 4 and b.list()[1].v == wp.vec3(1.0, 2.0, 3.0)


# -- .list() ------------------------------------------------------------------------------------------------
def test_list_is_flat_python_values():
    values = wp.full((3, 4), 99, dtype=wp.int64).list()
    assert values == [99] * 12 and all(type(x) is int for x in values)
    assert all(type(x) is float for x in wp.full(2, 3.25, dtype=wp.float16).list())
    assert wp.full(2, True, dtype=wp.bool).list() == [True, True]
    t = wp.array(np.arange(6, dtype=np.int32).reshape(2, 3)).transpose()
    assert t.list() == [0, 3, 1, 4, 2, 5]  # flattened in the view's order


def test_list_of_bfloat16_values_not_bits():
    s = wp.full(3, 42.0, dtype=wp.bfloat16).list()
    assert all(type(x) is wp.bfloat16 and x == 42.0 for x in s)
    vec2bf = wp.types.vector(2, wp.bfloat16)
    v = wp.full(2, vec2bf(1.5, -3.0)).list()
    assert all(type(x) is vec2bf for x in v) and v[1] == vec2bf(1.5, -3.0)
    mat22bf = wp.types.matrix((2, 2), wp.bfloat16)
    m = wp.full(2, mat22bf(1, 2, 3, 4)).list()
    assert m[0] == mat22bf(1, 2, 3, 4)


def test_list_of_vectors_and_matrices_are_warp_values():
    v = wp.full((2, 2), wp.vec3i(1, 2, 3)).list()
    assert len(v) == 4 and all(type(x) is wp.vec3i and isinstance(x, ctypes.Array) for x in v)
    assert v[3] == wp.vec3i(1, 2, 3)
    m = wp.full(2, wp.types.matrix((2, 3), float)(1, 2, 3, 4, 5, 6)).list()
    assert type(m[0]) is wp.types.matrix((2, 3), float) and m[1] == wp.types.matrix((2, 3), float)(1, 2, 3, 4, 5, 6)


# -- .view() --------------------------------------------------------------------------------------------------
def test_view_same_size_reinterprets():
    f = np.arange(1, 10, dtype=np.float32)
    assert wp.array(f).view(wp.uint32).numpy().tolist() == f.view(np.uint32).tolist()
    rgba = wp.array(np.array([[1, 2, 3, 4]] * 2, dtype=np.uint8), dtype=wp.vec4ub)
    assert rgba.view(wp.uint32).numpy().tolist() == [0x04030201] * 2
    v = wp.array(np.arange(16, dtype=np.float32).reshape(4, 4), dtype=wp.vec4)
    assert v.view(wp.mat22).numpy()[1].tolist() == [[4.0, 5.0], [6.0, 7.0]]
    assert v.view(wp.quat).dtype is wp.quat and v.view(wp.quat).ptr == v.ptr


def test_view_between_vectors_and_scalars():
    v = wp.array(np.arange(16, dtype=np.float32).reshape(4, 4), dtype=wp.vec4)
    s = v.view(float)
    assert s.dtype is wp.float32 and s.shape == (4, 4) and s.strides == (16, 4)
    assert s.numpy().tolist() == np.arange(16, dtype=np.float32).reshape(4, 4).tolist()
    m = wp.array(np.arange(8, dtype=np.float32).reshape(2, 2, 2), dtype=float).view(wp.mat22)
    assert m.shape == (2,) and m.numpy().tolist() == np.arange(8).reshape(2, 2, 2).tolist()
    one = wp.array([1, 2, 3, 4], dtype=float).view(wp.vec4)
    assert one.shape == (1,) and one.numpy().tolist() == [[1.0, 2.0, 3.0, 4.0]]
    strided = wp.array(np.arange(8, dtype=np.float32).reshape(4, 2), dtype=wp.vec2)[::2]
    assert strided.view(float).numpy().tolist() == [[0.0, 1.0], [4.0, 5.0]]
    g = wp.zeros(3, dtype=wp.vec2, requires_grad=True).view(float)
    assert g.grad is not None and g.grad.shape == (3, 2)
    s.fill_(1.0)  # the view writes the vectors' memory
    assert v.numpy().tolist() == [[1.0] * 4] * 4


@pytest.mark.parametrize("make, dtype, error, message", [
    (lambda: wp.zeros(3), wp.uint16, TypeError,
     "cannot create an array view with dtype uint16 from source dtype float32: source dtype has size 4 bytes, but "
     "target dtype has size 2 bytes"),
    (lambda: wp.zeros(3, dtype=wp.vec4), wp.float64, TypeError,
     "cannot create an array view with dtype float64 from source dtype vec4f: source scalar dtype float32 has size 4 "
     "bytes, but target dtype has size 8 bytes"),
    (lambda: wp.zeros((3, 4)), wp.vec4d, TypeError,
     "cannot create an array view with dtype vec4d from source dtype float32: source dtype has size 4 bytes, but "
     "target scalar dtype float64 has size 8 bytes"),
    (lambda: wp.zeros((3, 3)), wp.vec4, RuntimeError,
     r"The shape of the source array \(3, 3\) is not compatible with the requested data type vec4f"),
    (lambda: wp.zeros((4, 3)).transpose(), wp.vec4, RuntimeError,
     r"The inner strides of the source array \(4, 12\) are not compatible with the requested data type vec4f"),
])
def test_view_errors(make, dtype, error, message):
    with pytest.raises(error, match=f"^{message}$"):
        make().view(dtype)


# -- .reshape() -----------------------------------------------------------------------------------------------
def test_reshape_infers_minus_one():
    a = wp.array(np.arange(6, dtype=np.float32))
    r = a.reshape((-1, 3))
    assert r.shape == (2, 3) and r.numpy().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert a.reshape(np.int64(6)).shape == (6,) and a.reshape([3, -1]).shape == (3, 2)


@pytest.mark.parametrize("shape, message", [
    ((4, 2), r"cannot reshape array of shape \(6,\) \(size 6\) into shape \(4, 2\) \(size 8\)"),
    ((-1, 4), r"cannot reshape array of shape \(6,\) \(size 6\) into shape \(1, 4\) \(size 4\)"),
    ((-1, -1), r"Cannot infer shape if more than one index is -1\."),
    ((1, 1, 1, 1, 6), r"Arrays may only have 4 dimensions maximum, trying to create array with 5 dims\."),
    (None, r"shape parameter is required\."),
])
def test_reshape_errors(shape, message):
    with pytest.raises(RuntimeError, match=f"^{message}$"):
        wp.array(np.arange(6, dtype=np.float32)).reshape(shape)


# -- empty arrays, cptr, shapes, dtype=Any, aliasing ------------------------------------------------------------
def test_empty_array_has_no_pointer_and_warps_strides():
    a = wp.zeros((1, 0), dtype=wp.vec2f, requires_grad=True)
    assert a.ptr is None and a.grad.ptr is None and a.size == 0
    assert a.strides == (0, 8)
    interface = a.__array_interface__
    assert interface["data"][0] != 0
    na = np.asarray(a)
    assert na.shape == (1, 0, 2) and na.strides == (0, 8, 4) and na.dtype == np.float32
    a.fill_(wp.vec2f(1.0, 2.0))
    assert a.list() == [] and a.reshape((0,)).shape == (0,) and a.transpose().shape == (0, 1)
    assert wp.clone(a).shape == (1, 0) and a.cptr() is None


def test_cptr():
    a = wp.array([1.5, 2.5], dtype=float)
    p = a.cptr()
    assert p[1] == 2.5 and p._ref is a
    v = wp.zeros(2, dtype=wp.vec3)
    v.cptr()[4] = 7.0  # the scalars of the vectors
    assert v.numpy().tolist() == [[0.0, 0.0, 0.0], [0.0, 7.0, 0.0]]

    @wp.struct
    class P:
        x: int
        v: wp.vec3

    c = wp.full(2, P(x=3, v=wp.vec3(1.0, 2.0, 3.0))).cptr()
    assert c[1].x == 3 and c[1].v == wp.vec3(1.0, 2.0, 3.0)
    with pytest.raises(RuntimeError, match=r"^Accessing array memory through a ctypes ptr is only supported for "
                                           r"contiguous CPU arrays\.$"):
        wp.zeros((3, 3)).transpose().cptr()


def test_numpy_shape_and_dtype_any():
    a = wp.zeros(np.array([4, 3, 2], dtype=np.int32))
    assert a.shape == (4, 3, 2) and all(type(n) is int for n in a.shape)
    src = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    d = wp.array(src, dtype=Any, shape=(3, 2, 2))
    assert d.dtype is wp.float32 and d.numpy().tolist() == np.arange(12).reshape(3, 2, 2).tolist()


def test_alias_of_numpy_keeps_its_source():
    a_np = np.ones(8, dtype=np.int32)
    a = wp.array(a_np, dtype=int, copy=False)
    assert a._ref is a_np and a.ptr == a_np.ctypes.data
    a_np.fill(2)
    assert a.numpy().tolist() == [2] * 8
    b_np = np.ones(8, dtype=np.int64)
    b = wp.array(b_np, dtype=int, copy=False)  # another dtype: a copy
    assert b.ptr != b_np.ctypes.data and b._ref is None


# -- retain_grad -------------------------------------------------------------------------------------------------
@wp.kernel
def _scale(x: wp.array(dtype=float), y: wp.array(dtype=float), c: float):
    i = wp.tid()
    y[i] = c * x[i]


@wp.kernel
def _plus_one(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] + 1.0


def test_retain_grad_property_rules():
    a = wp.zeros(3)
    assert a.retain_grad is False
    with pytest.raises(ValueError, match="^retain_grad=True requires requires_grad=True$"):
        a.retain_grad = True
    a.requires_grad = True
    a.retain_grad = True
    assert a.retain_grad
    a.requires_grad = False
    assert a.retain_grad is False
    assert wp.zeros(2, requires_grad=True, retain_grad=True).retain_grad
    assert wp.full(2, 1.0, requires_grad=True, retain_grad=True).retain_grad
    assert wp.zeros_like(a, requires_grad=True, retain_grad=True).retain_grad
    assert wp.array([1.0], dtype=float, requires_grad=True, retain_grad=True).retain_grad


@pytest.mark.parametrize("retain", [False, True])
def test_retain_grad_keeps_an_overwritten_arrays_gradient(retain):
    n = 4
    xa, xb = wp.ones(n, requires_grad=True), wp.ones(n, requires_grad=True)
    y = wp.zeros(n, requires_grad=True, retain_grad=retain)
    with wp.Tape() as tape:
        wp.launch(_scale, dim=n, inputs=[xa, y, 2.0])
        wp.launch(_scale, dim=n, inputs=[xb, y, 3.0])  # overwrites y
    tape.backward(grads={y: wp.ones_like(y)})
    assert xb.grad.numpy().tolist() == [3.0] * n
    # without retain_grad the second store consumes y.grad: the first write gets nothing
    assert xa.grad.numpy().tolist() == [2.0 if retain else 0.0] * n
    assert y.grad.numpy().tolist() == [1.0 if retain else 0.0] * n


def test_retain_grad_intermediate():
    n = 3
    x, z = wp.ones(n, requires_grad=True), wp.zeros(n, requires_grad=True)
    y = wp.zeros(n, requires_grad=True, retain_grad=True)
    with wp.Tape() as tape:
        wp.launch(_scale, dim=n, inputs=[x, y, 2.0])
        wp.launch(_plus_one, dim=n, inputs=[y, z])
    tape.backward(grads={z: wp.ones_like(z)})
    assert x.grad.numpy().tolist() == [2.0] * n and y.grad.numpy().tolist() == [1.0] * n


# -- None for an array argument: Warp's null array ---------------------------------------------------------------
@wp.kernel
def _shape_plus(a: wp.array2d(dtype=wp.vec3), x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = float(a.shape[0] + a.shape[1]) + 2.0 * x[i]


def test_none_is_a_null_array():
    out = wp.zeros(2, requires_grad=True)
    x = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
    wp.launch(_shape_plus, dim=2, inputs=[None, x], outputs=[out])
    assert out.numpy().tolist() == [2.0, 4.0]  # no rows, no columns
    wp.launch(_shape_plus, dim=2, inputs=[wp.zeros((3, 4), dtype=wp.vec3), x], outputs=[out])
    assert out.numpy().tolist() == [9.0, 11.0]
    with wp.Tape() as tape:  # and in an adjoint launch
        wp.launch(_shape_plus, dim=2, inputs=[None, x], outputs=[out])
    tape.backward(grads={out: wp.ones_like(out)})
    assert x.grad.numpy().tolist() == [2.0, 2.0]


@wp.kernel
def _truthiness(a: wp.array(dtype=float), b: wp.array2d(dtype=float), out: wp.array(dtype=int)):
    if not a:
        out[0] = 1
    if b:
        out[1] = 1
    out[2] = wp.where(a and b, 1, 0)
    out[3] = 5 if b else 6


@pytest.mark.parametrize("a, b, expected", [
    (None, wp.zeros((2, 2)), [1, 1, 0, 5]),
    (wp.zeros(3), wp.zeros((2, 0)), [0, 0, 0, 6]),  # an empty array is null, as Warp's
    (wp.zeros(3), wp.zeros((1, 1)), [0, 1, 1, 5]),
])
def test_array_truthiness_in_a_kernel(a, b, expected):
    out = wp.zeros(4, dtype=int)
    wp.launch(_truthiness, dim=1, inputs=[a, b, out])
    assert out.numpy().tolist() == expected


def test_list_and_view_of_cuda_arrays(fake):  # two fake GPUs (test_cuda_runtime_fake.py)
    d = wp.full((2, 2), wp.vec2(1.0, 2.0), device="cuda:0")
    values = d.list()  # a host copy, as CPU arrays' elements
    assert len(values) == 4 and all(type(v) is wp.vec2 and v == wp.vec2(1.0, 2.0) for v in values)
    assert wp.full((2, 2), 3, device="cuda:0").list() == [3, 3, 3, 3]
    f = wp.array(np.arange(8, dtype=np.float32), device="cuda:0")
    assert f.view(wp.uint32).numpy().tolist() == np.arange(8, dtype=np.float32).view(np.uint32).tolist()
    assert f.reshape((-1, 4)).view(wp.vec4).numpy().tolist() == np.arange(8).reshape(2, 4).tolist()
