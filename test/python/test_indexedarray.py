"""wp.indexedarray: construction, Python-scope values (against numpy fancy indexing), kernels that read, write,
update atomically and view indexed arrays (1-4 d), @wp.func and generic parameters, struct fields, gradients."""

from typing import Any, Literal

import numpy as np
import pytest

import mlwarp as wp


def _ix(data: np.ndarray, indices) -> np.ndarray:
    """numpy's view of wp.indexedarray(data, indices): per-dimension fancy indexing (None: the whole axis)."""
    axes = [np.asarray(indices[d]) if d < len(indices) and indices[d] is not None else np.arange(data.shape[d])
            for d in range(data.ndim)]
    return data[np.ix_(*axes)]


def _idx(values):
    return wp.array(np.asarray(values, dtype=np.int32), dtype=wp.int32)


# -- construction -----------------------------------------------------------------------------------------
def test_construction_shape_and_values_match_numpy_fancy_indexing():
    values = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    data = wp.array(values)
    for pattern in ([[1]], [None, [2, 0]], [[0, 1], None, [3, 1, 1]], [None, None, [2]], [[1, 0], [2, 1], [0, 3]]):
        a = wp.indexedarray(data, [None if p is None else _idx(p) for p in pattern])
        expected = _ix(values, pattern)
        assert a.shape == expected.shape
        assert a.size == expected.size
        assert a.ndim == 3 and a.dtype is wp.float32
        np.testing.assert_array_equal(a.numpy(), expected)
        assert a.list() == wp.array(expected).list()  # as the contiguous copy's


def test_single_index_array_and_nd_constructors():
    values = np.arange(12, dtype=np.int32).reshape(3, 4)
    data = wp.array(values)
    a = wp.indexedarray2d(data, _idx([2, 0]))
    np.testing.assert_array_equal(a.numpy(), values[[2, 0]])
    assert len(a) == 2
    with pytest.raises(ValueError, match=r"^Requested dimensionality \(1\) does not match dimensionality of data "
                                         r"array \(2\)$"):
        wp.indexedarray1d(data, [_idx([0])])


@pytest.mark.parametrize("make, message", [
    (lambda d: wp.indexedarray(np.zeros(3)), "Indexed array data must be a Warp array"),
    (lambda d: wp.indexedarray(d, dtype=wp.float64),
     "Requested dtype (<class 'mlwarp.types.float64'>) does not match dtype of data array "
     "(<class 'mlwarp.types.float32'>)"),
    (lambda d: wp.indexedarray(d, [None, None, None]),
     "Number of indices provided (3) exceeds number of dimensions (2)"),
    (lambda d: wp.indexedarray(d, [wp.zeros((2, 2), dtype=wp.int32)]), "Index array must be one-dimensional, got 2"),
    (lambda d: wp.indexedarray(d, [wp.zeros(2, dtype=wp.int64)]),
     "Index array must use int32, got dtype <class 'mlwarp.types.int64'>"),
    (lambda d: wp.indexedarray(d, [[0, 1]]), "Indices must be a Warp array, got <class 'list'>"),
    (lambda d: wp.indexedarray(d, 3), "Indices must be a single Warp array or a list of Warp arrays"),
])
def test_construction_errors(make, message):
    data = wp.zeros((2, 3), dtype=wp.float32)
    with pytest.raises(ValueError) as e:
        make(data)
    assert str(e.value) == message


def test_array_getitem_with_index_arrays_makes_an_indexedarray():
    values = np.arange(5 * 6 * 7, dtype=np.int32).reshape(5, 6, 7)
    data = wp.array(values)
    I, J = [4, 0, 2], [5, 5]
    a = data[_idx(I)]
    assert type(a) is wp.indexedarray and not isinstance(a, wp.array)
    np.testing.assert_array_equal(a.numpy(), values[I])
    np.testing.assert_array_equal(data[:, _idx(J)].numpy(), values[:, J])
    np.testing.assert_array_equal(data[_idx(I), :, _idx(J)].numpy(), _ix(values, [I, None, J]))
    # slices apply first, then the index arrays index the slice
    np.testing.assert_array_equal(data[1:4, _idx([2, 0]), ::2].numpy(), values[1:4][:, [2, 0]][:, :, ::2])
    assert type(data[1:3, 0:2]) is wp.array
    with pytest.raises(RuntimeError, match="^Cannot mix integer indices and index arrays when indexing an array$"):
        data[1, _idx([0])]


def test_annotations():
    ann = wp.indexedarray[float]
    assert not isinstance(ann, wp.indexedarray)
    assert ann.dtype is wp.float32 and ann.ndim == 1
    assert repr(ann) == "wp.indexedarray[wp.float32]"
    assert repr(wp.indexedarray[wp.float64, Literal[3]]) == "wp.indexedarray[wp.float64, Literal[3]]"
    assert wp.indexedarray[wp.float32, 2] == wp.indexedarray[float, Literal[2]]
    assert hash(wp.indexedarray[float]) == hash(wp.indexedarray[wp.float32])
    assert wp.indexedarray[float] != wp.indexedarray[float, 2]
    assert wp.indexedarray[Any].dtype is Any
    with pytest.raises(ValueError, match="^ndim must be between 1 and 4, got 5$"):
        wp.indexedarray[float, 5]
    with pytest.raises(TypeError, match="^wp.indexedarray expects 1 or 2 type parameters, got 3$"):
        wp.indexedarray[float, 1, 2]
    typed = wp.indexedarray(dtype=wp.float64, ndim=2)
    assert typed.is_annotation and typed.ndim == 2 and typed.shape == (0, 0)


# -- Python-scope writes ------------------------------------------------------------------------------------
def test_fill_zero_assign_and_copy_write_only_the_indexed_elements():
    values = np.arange(4 * 5, dtype=np.float32).reshape(4, 5)
    data = wp.array(values)
    I, J = [3, 1], [0, 4, 2]
    a = wp.indexedarray(data, [_idx(I), _idx(J)])
    expected = values.copy()

    a.fill_(7.5)
    expected[np.ix_(I, J)] = 7.5
    np.testing.assert_array_equal(data.numpy(), expected)

    a.zero_()
    expected[np.ix_(I, J)] = 0
    np.testing.assert_array_equal(data.numpy(), expected)

    src = np.arange(6, dtype=np.float32).reshape(2, 3) + 100
    a.assign(src)
    expected[np.ix_(I, J)] = src
    np.testing.assert_array_equal(data.numpy(), expected)

    out = wp.clone(a)
    assert type(out) is wp.array
    np.testing.assert_array_equal(out.numpy(), src)
    wp.copy(a, wp.array(-src))
    expected[np.ix_(I, J)] = -src
    np.testing.assert_array_equal(data.numpy(), expected)
    with pytest.raises(RuntimeError, match=r"^Cannot assign 5 values to an indexed array of 6 elements \(shape "
                                           r"\(2, 3\)\)$"):
        a.assign(np.zeros(5))


def test_fill_vectors_matrices_and_structs():
    v3 = wp.types.vector(3, wp.float16)
    data = wp.zeros(5, dtype=v3)
    a = data[_idx([4, 1])]
    a.fill_(v3(1.0, 2.0, 3.0))
    np.testing.assert_array_equal(data.numpy(), [[0, 0, 0], [1, 2, 3], [0, 0, 0], [0, 0, 0], [1, 2, 3]])

    m23 = wp.types.matrix((2, 3), wp.float32)
    mdata = wp.zeros(3, dtype=m23)
    mdata[_idx([2])].fill_(np.arange(6))  # a flat sequence of the matrix's size: its rows
    np.testing.assert_array_equal(mdata.numpy()[2], [[0, 1, 2], [3, 4, 5]])
    np.testing.assert_array_equal(mdata.numpy()[:2], 0)

    @wp.struct
    class Pair:
        a: int
        b: float

    sdata = wp.zeros(3, dtype=Pair)
    s = Pair()
    s.a, s.b = 4, 0.5
    sdata[_idx([0, 2])].fill_(s)
    assert sdata.numpy()["a"].tolist() == [4, 0, 4] and sdata.numpy()["b"].tolist() == [0.5, 0.0, 0.5]
    with pytest.raises(ValueError, match="^Invalid initializer value for struct Pair, expected struct instance or 0$"):
        sdata[_idx([0])].fill_(3)


def test_empty_indexedarray():
    data = wp.zeros((2, 3), dtype=wp.float32)
    a = data[wp.zeros(0, dtype=wp.int32)]
    assert a.shape == (0, 3) and a.size == 0
    a.fill_(1.0)
    a.zero_()
    assert a.numpy().shape == (0, 3) and a.list() == []


# -- kernels ------------------------------------------------------------------------------------------------
@wp.kernel
def _rw1(a: wp.indexedarray[float], out: wp.array[float]):
    i = wp.tid()
    out[i] = a[i]
    a[i] = 2.0 * a[i]
    wp.atomic_add(a, i, 1.0)
    a[i] += 0.5


def test_kernel_1d_read_write_atomic():
    values = np.arange(10, dtype=np.float32)
    data = wp.array(values)
    I = [9, 2, 5]
    out = wp.zeros(3, dtype=float)
    wp.launch(_rw1, dim=3, inputs=[data[_idx(I)], out])
    np.testing.assert_array_equal(out.numpy(), values[I])
    expected = values.copy()
    expected[I] = 2 * values[I] + 1.5
    np.testing.assert_array_equal(data.numpy(), expected)


@wp.kernel
def _copy2(a: wp.indexedarray[float, Literal[2]], out: wp.array2d[float], shape: wp.array[int]):
    i, j = wp.tid()
    out[i, j] = a[i, j] + 10.0 * (a[i][j] - a[i, j])  # a[i] is the i-th row, itself indexed
    a[i, j] = -a[i, j]
    shape[0] = a.shape[0]
    shape[1] = a.shape[1]
    shape[2] = len(a[i])


@wp.kernel
def _copy3(a: wp.indexedarray[float, Literal[3]], out: wp.array3d[float]):
    i, j, k = wp.tid()
    out[i, j, k] = a[i, j, k]
    wp.atomic_sub(a, i, j, k, 1.0)


@wp.kernel
def _copy4(a: wp.indexedarray[wp.int32, Literal[4]], out: wp.array4d[wp.int32]):
    i, j, k, l = wp.tid()
    out[i, j, k, l] = a[i, j, k, l]
    row = a[i, j]  # a 2-d indexed view
    out[i, j, k, l] += row[k, l] * 1000


@pytest.mark.parametrize("pattern", [[[2, 0], None], [None, [3, 0, 1]], [[1], [0, 2]]])
def test_kernel_2d(pattern):
    values = np.arange(3 * 4, dtype=np.float32).reshape(3, 4)
    data = wp.array(values)
    a = wp.indexedarray(data, [None if p is None else _idx(p) for p in pattern])
    expected = _ix(values, pattern)
    out = wp.zeros(a.shape, dtype=float)
    shape = wp.zeros(3, dtype=int)
    wp.launch(_copy2, dim=a.shape, inputs=[a, out, shape])
    np.testing.assert_array_equal(out.numpy(), expected)
    assert shape.numpy().tolist() == [expected.shape[0], expected.shape[1], expected.shape[1]]
    np.testing.assert_array_equal(a.numpy(), -expected)


def test_kernel_3d_and_4d():
    values = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    data = wp.array(values)
    pattern = [[2, 0], None, [4, 1, 2]]
    a = wp.indexedarray(data, [None if p is None else _idx(p) for p in pattern])
    out = wp.zeros(a.shape, dtype=float)
    wp.launch(_copy3, dim=a.shape, inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), _ix(values, pattern))
    expected = values.copy()
    np.subtract.at(expected, np.ix_(*[np.asarray(p) if p is not None else np.arange(4) for p in pattern]), 1.0)
    np.testing.assert_array_equal(data.numpy(), expected)

    v4 = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(2, 3, 4, 5)
    pattern4 = [None, [2, 0], None, [4, 0, 3]]
    a4 = wp.indexedarray(wp.array(v4), [None if p is None else _idx(p) for p in pattern4])
    out4 = wp.zeros(a4.shape, dtype=wp.int32)
    wp.launch(_copy4, dim=a4.shape, inputs=[a4, out4])
    np.testing.assert_array_equal(out4.numpy(), _ix(v4, pattern4) * 1001)


@wp.func
def _get(a: wp.indexedarray[float], i: int):
    return a[i]


@wp.func
def _scale(a: Any, i: int, s: float):
    a[i] = a[i] * s


@wp.kernel
def _through_funcs(a: wp.indexedarray[float], out: wp.array[float]):
    i = wp.tid()
    out[i] = _get(a, i)
    _scale(a, i, 3.0)


def test_funcs_take_indexed_arrays():
    values = np.arange(6, dtype=np.float32) + 1
    data = wp.array(values)
    I = [5, 0]
    out = wp.zeros(2, dtype=float)
    wp.launch(_through_funcs, dim=2, inputs=[data[_idx(I)], out])
    np.testing.assert_array_equal(out.numpy(), values[I])
    expected = values.copy()
    expected[I] *= 3
    np.testing.assert_array_equal(data.numpy(), expected)


@wp.kernel
def _inc(a: Any):
    i, j = wp.tid()
    a[i, j] = a[i, j] + 1


def test_generic_kernel_instances_for_arrays_and_indexed_arrays():
    data = wp.zeros((4, 4), dtype=int)
    wp.launch(_inc, dim=data.shape, inputs=[data])
    a = wp.indexedarray(data, [_idx([0, 3]), _idx([1])])
    wp.launch(_inc, dim=a.shape, inputs=[a])
    expected = np.ones((4, 4), dtype=np.int32)
    expected[[0, 3], 1] = 2
    np.testing.assert_array_equal(data.numpy(), expected)
    overload = wp.overload(_inc, [wp.indexedarray[int, Literal[2]]])
    wp.launch(overload, dim=a.shape, inputs=[a])
    expected[[0, 3], 1] = 3
    np.testing.assert_array_equal(data.numpy(), expected)


@wp.struct
class _Holder:
    iarr: wp.indexedarray[float]
    scale: float


@wp.kernel
def _from_struct(s: _Holder, out: wp.array[float]):
    i = wp.tid()
    out[i] = s.iarr[i] * s.scale
    s.iarr[i] = 0.0


def test_struct_field():
    values = np.arange(5, dtype=np.float32)
    data = wp.array(values)
    s = _Holder()
    s.iarr = data[_idx([4, 1])]
    s.scale = 2.0
    out = wp.zeros(2, dtype=float)
    wp.launch(_from_struct, dim=2, inputs=[s, out])
    np.testing.assert_array_equal(out.numpy(), [8.0, 2.0])
    np.testing.assert_array_equal(data.numpy(), [0, 0, 2, 3, 0])
    holders = wp.array([s], dtype=_Holder)
    assert holders.numpy().shape == (1,)


@wp.kernel
def _sum_squares(a: wp.indexedarray[float], loss: wp.array[float]):
    i = wp.tid()
    wp.atomic_add(loss, 0, a[i] * a[i])


def test_gradient_reaches_the_indexed_elements_of_the_data():
    values = np.arange(6, dtype=np.float32)
    x = wp.array(values, requires_grad=True)
    I = [1, 4, 4]
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_sum_squares, dim=3, inputs=[x[_idx(I)], loss])
    tape.backward(loss)
    assert loss.numpy()[0] == float(np.sum(values[I] ** 2))
    expected = np.zeros(6, dtype=np.float32)
    np.add.at(expected, I, 2 * values[I])
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_adjoint_launch_without_gradients_writes_no_null_pointer():
    x = wp.array(np.arange(3, dtype=np.float32))  # no grad: the adjoint gets a zero scratch data array
    loss = wp.zeros(1, dtype=float)
    wp.launch(_sum_squares, dim=2, inputs=[x[_idx([0, 2])], loss], adjoint=True, adj_inputs=[None, loss])
    np.testing.assert_array_equal(x.numpy(), [0, 1, 2])


def test_plain_array_fill_takes_vector_and_matrix_instances_by_value():
    # what indexed fills reuse: a float16 vector's storage is bit patterns, a matrix instance is its rows
    v2h = wp.types.vector(2, wp.float16)
    a = wp.zeros(2, dtype=v2h)
    a.fill_(v2h(17.0, 42.0))
    np.testing.assert_array_equal(a.numpy(), [[17, 42], [17, 42]])
    m22 = wp.types.matrix((2, 2), wp.float32)
    b = wp.zeros(2, dtype=m22)
    b.fill_(m22(1.0, 2.0, 3.0, 4.0))
    np.testing.assert_array_equal(b.numpy(), [[[1, 2], [3, 4]]] * 2)
    b.fill_([5, 6, 7, 8])
    np.testing.assert_array_equal(b.numpy(), [[[5, 6], [7, 8]]] * 2)


@wp.struct
class _VecHolder:
    ia: wp.indexedarray[wp.vec3]
    w: float


@wp.kernel
def _weighted_norms(h: _VecHolder, loss: wp.array[float]):
    i = wp.tid()
    v = h.ia[i]
    wp.atomic_add(loss, 0, wp.dot(v, v) * h.w)


def test_gradient_through_a_struct_field_of_vectors():
    values = np.arange(12, dtype=np.float32).reshape(4, 3)
    x = wp.array(values, dtype=wp.vec3, requires_grad=True)
    h = _VecHolder()
    h.ia, h.w = x[_idx([3, 1])], 2.0
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_weighted_norms, dim=2, inputs=[h, loss])
    tape.backward(loss)
    assert loss.numpy()[0] == 2.0 * float(np.sum(values[[3, 1]] ** 2))
    expected = np.zeros_like(values)
    expected[[3, 1]] = 4.0 * values[[3, 1]]  # d/dx of w * |x|^2
    np.testing.assert_array_equal(x.grad.numpy(), expected)


@wp.kernel
def _atomics(a: wp.indexedarray[int], out: wp.array[int]):
    i = wp.tid()
    wp.atomic_max(a, i, 5)
    out[i] = wp.atomic_cas(a, i, 5, 9)
    wp.atomic_sub(a, i, 2)


def test_atomic_kinds():
    d = wp.array(np.array([1, 7, 3], dtype=np.int32))
    out = wp.zeros(2, dtype=int)
    wp.launch(_atomics, dim=2, inputs=[d[_idx([2, 1])], out])
    # d[2]: max(3, 5) = 5, cas 5 -> 9 (returns 5), - 2 = 7; d[1]: max(7, 5) = 7, cas fails (returns 7), - 2 = 5
    assert d.numpy().tolist() == [1, 5, 7] and out.numpy().tolist() == [5, 7]


@wp.kernel
def _read_shifted(a: wp.indexedarray[float], out: wp.array[float]):
    i = wp.tid()
    out[i] = a[i + 1]


def test_debug_mode_checks_the_index_array_bounds():
    wp.config.mode = "debug"
    try:
        with pytest.raises(wp.KernelBoundsError, match=r"index \[2\] is out of bounds reading argument 'a.i0' of "
                                                        r"shape \(2,\)"):
            wp.launch(_read_shifted, dim=2, inputs=[wp.zeros(4)[_idx([0, 1])], wp.zeros(2)])
            wp.synchronize()
    finally:
        wp.config.mode = "release"


@pytest.mark.parametrize("value, message", [
    (lambda: wp.zeros(3), "expects an array of type indexedarray(ndim=1, dtype=float32), but passed value has type "
                          "array"),
    (lambda: wp.indexedarray(wp.zeros(3, dtype=wp.float64)),
     "expects an array with dtype=<class 'mlwarp.types.float32'> but passed array has dtype=<class "
     "'mlwarp.types.float64'>"),
    (lambda: wp.indexedarray(wp.zeros((3, 2))), "expects an array with 1 dimension(s) but the passed array has 2 "
                                                "dimension(s)"),
])
def test_launch_argument_errors(value, message):
    with pytest.raises(wp.LaunchError) as e:
        wp.launch(_read_shifted, dim=1, inputs=[value(), wp.zeros(2)])
    assert str(e.value) == f"Error launching kernel '_read_shifted', argument 'a' {message}."


@wp.kernel
def _squares(a: wp.indexedarray[float], y: wp.array[float]):
    i = wp.tid()
    y[i] = a[i] * a[i]


def test_jvp_tangent_is_an_indexed_array_over_the_data_tangent():
    values = np.arange(5, dtype=np.float32)
    x = wp.array(values)
    I = [4, 1]
    dx = wp.array(np.linspace(0.5, 2.5, 5, dtype=np.float32))
    y, dy = wp.zeros(2), wp.zeros(2)
    wp.jvp(_squares, dim=2, inputs=[x[_idx(I)]], outputs=[y], tan_inputs=[dx[_idx(I)]], tan_outputs=[dy])
    np.testing.assert_array_equal(y.numpy(), values[I] ** 2)
    np.testing.assert_array_equal(dy.numpy(), 2 * values[I] * dx.numpy()[I])
    dy.zero_()
    wp.jvp(_squares, dim=2, inputs=[x[_idx(I)]], outputs=[y], tan_outputs=[dy])  # no tangent: zero
    np.testing.assert_array_equal(dy.numpy(), [0, 0])


@wp.kernel
def _gather_any(port: wp.indexedarray(dtype=Any), out: wp.array(dtype=Any)):
    i = wp.tid()
    out[i] = port[i]


def test_call_form_annotation_with_any_dtype_is_generic():
    # `wp.indexedarray(dtype=Any)` (Newton's controllers) leaves the dtype open as `wp.indexedarray[Any]` does
    for dtype in (wp.float32, wp.vec3):
        wp.overload(_gather_any, {"port": wp.indexedarray(dtype=dtype), "out": wp.array(dtype=dtype)})
    values = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = wp.zeros(2, dtype=wp.vec3)
    wp.launch(_gather_any, dim=2, inputs=[wp.indexedarray(wp.array(values, dtype=wp.vec3), [_idx([3, 1])]), out])
    np.testing.assert_array_equal(out.numpy(), values[[3, 1]])
    scalars = wp.array(np.arange(5, dtype=np.float64))
    out64 = wp.zeros(3, dtype=wp.float64)
    wp.launch(_gather_any, dim=3, inputs=[scalars[_idx([4, 0, 2])], out64])
    np.testing.assert_array_equal(out64.numpy(), [4.0, 0.0, 2.0])


def test_call_form_any_annotation_refuses_a_plain_array():
    with pytest.raises(TypeError) as e:
        wp.overload(_gather_any, {"port": wp.array(dtype=float), "out": wp.array(dtype=float)})
    assert str(e.value) == ("Kernel _gather_any argument 'port' type mismatch: expected indexedarray(ndim=1, "
                            "dtype=Any), got array(ndim=1, dtype=float32)")
