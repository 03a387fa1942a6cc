"""Generic kernels and functions (Warp's templates) and Warp 1.19's subscript array annotations.

References are numpy and hand-computed values."""

from typing import Any, Literal

import numpy as np
import pytest

import mlwarp as wp


# -- subscript annotations ------------------------------------------------------------------------------
def test_subscript_annotations_spell_array_annotations():
    cases = [(wp.array[float], wp.float32, 1), (wp.array[wp.vec3, 2], wp.vec3, 2),
             (wp.array[wp.float64, Literal[3]], wp.float64, 3), (wp.array1d[wp.int8], wp.int8, 1),
             (wp.array2d[wp.vec3], wp.vec3, 2), (wp.array3d[float], wp.float32, 3), (wp.array4d[int], wp.int32, 4)]
    for ann, dtype, ndim in cases:
        assert ann.is_annotation and ann.dtype is dtype and ann.ndim == ndim
    assert wp.array[Any].dtype is Any and wp.array[float, Any].ndim is Any


def test_fixed_rank_constructors_still_make_arrays():
    a = wp.array2d(np.ones((2, 3), dtype=np.float32))
    assert isinstance(a, wp.array) and a.shape == (2, 3)
    assert wp.array3d(shape=(1, 2, 3), dtype=float).shape == (1, 2, 3)
    assert wp.array1d(np.ones((2, 2))).shape == (2, 2)  # Warp ignores ndim beside data


@pytest.mark.parametrize("bad, exc, msg", [
    (lambda: wp.array[float, 2, 3], TypeError, "wp.array expects 1 or 2 type parameters, got 3"),
    (lambda: wp.array[float, "2"], TypeError, "ndim must be an integer, got '2'"),
    (lambda: wp.array[float, 5], ValueError, "ndim must be between 1 and 4, got 5"),
    (lambda: wp.array2d[float, 2], TypeError, r"wp.array2d expects a single type parameter \(dtype\), got 2"),
])
def test_bad_subscripts(bad, exc, msg):
    with pytest.raises(exc, match=msg):
        bad()


@wp.kernel
def _add_rows(a: wp.array2d[float], out: wp.array[float]):
    i, j = wp.tid()
    wp.atomic_add(out, i, a[i, j])


def test_kernel_with_subscript_annotations_runs():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = wp.zeros(3, dtype=float)
    wp.launch(_add_rows, (3, 4), [wp.array(x), out])
    np.testing.assert_allclose(out.numpy(), x.sum(axis=1))


# -- generic kernels ------------------------------------------------------------------------------------
@wp.kernel
def _scale(a: wp.array[Any], s: Any, out: wp.array(dtype=Any)):
    i = wp.tid()
    out[i] = a[i] * s


def test_generic_kernel_is_instantiated_from_launch_arguments():
    a = np.array([1.5, -2.0, 3.25], dtype=np.float32)
    out = wp.zeros(3, dtype=float)
    wp.launch(_scale, 3, [wp.array(a), 2.0, out])  # Python float: float32
    np.testing.assert_array_equal(out.numpy(), a * 2)
    d = np.array([0.1, 0.2], dtype=np.float64)
    out64 = wp.zeros(2, dtype=wp.float64)
    wp.launch(_scale, 2, [wp.array(d, dtype=wp.float64), wp.float64(3.0), out64])
    np.testing.assert_array_equal(out64.numpy(), d * 3.0)  # float64 throughout: exact
    v = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    outv = wp.zeros(2, dtype=wp.vec3)
    wp.launch(_scale, 2, [wp.array(v, dtype=wp.vec3), 0.5, outv])
    np.testing.assert_array_equal(outv.numpy(), v * 0.5)
    i = wp.array([1, 2, 3], dtype=wp.int32)
    outi = wp.zeros(3, dtype=wp.int32)
    wp.launch(_scale, 3, [i, 7, outi])  # Python int: int32
    np.testing.assert_array_equal(outi.numpy(), [7, 14, 21])
    assert _scale.is_generic and all(not k.is_generic for k in _scale.overloads.values())


def test_generic_instances_are_reused():
    out = wp.zeros(3, dtype=float)
    wp.launch(_scale, 3, [wp.ones(3, dtype=float), 1.0, out])
    n = len(_scale.overloads)
    wp.launch(_scale, 3, [wp.ones(3, dtype=float), 4.0, out])
    assert len(_scale.overloads) == n


def test_alternating_argument_kinds_each_run_their_own_instance():
    """A repeated launch finds its instance by its arguments' kinds: alternating ones must not reuse another's."""
    data = {wp.float32: np.array([1.5, -2.0], np.float32), wp.float64: np.array([0.1, 0.2], np.float64),
            wp.int32: np.array([3, -4], np.int32)}
    scales = {wp.float32: 2.5, wp.float64: wp.float64(0.3), wp.int32: 3}
    for _ in range(2):
        for dtype, values in data.items():
            out = wp.zeros(2, dtype=dtype)
            wp.launch(_scale, 2, [wp.array(values, dtype=dtype), scales[dtype], out])
            np.testing.assert_array_equal(out.numpy(), values * values.dtype.type(scales[dtype]))  # numpy's product
    a2 = wp.array(np.ones((2, 2), np.float32), dtype=float)  # same dtype, another ndim: not the 1-d instance
    with pytest.raises(TypeError, match=r"^Error launching kernel '_scale': Kernel _scale argument 'a' type mismatch: "
                                        r"expected array\(ndim=1, dtype=Any\), got array\(ndim=2, dtype=float32\)$"):
        wp.launch(_scale, 2, [a2, 1.0, wp.zeros(2, dtype=float)])


def test_overload_with_a_list_and_a_dict():
    k = wp.overload(_scale, [wp.array[wp.int64], wp.int64, wp.array[wp.int64]])
    assert not k.is_generic and k is wp.overload(_scale, [wp.array[wp.int64], wp.int64, wp.array[wp.int64]])
    out = wp.zeros(2, dtype=wp.int64)
    wp.launch(k, 2, [wp.array([2**40, 3], dtype=wp.int64), 2, out])
    np.testing.assert_array_equal(out.numpy(), [2**41, 6])
    k2 = wp.overload(_scale, {"a": wp.array[wp.float16], "s": wp.float16, "out": wp.array[wp.float16]})
    out16 = wp.zeros(1, dtype=wp.float16)
    wp.launch(k2, 1, [wp.array([1.5], dtype=wp.float16), wp.float16(2.0), out16])
    assert out16.numpy()[0] == np.float16(3.0)


@wp.kernel
def _square(a: wp.array(dtype=Any), out: wp.array(dtype=Any)):
    i = wp.tid()
    out[i] = a[i] * a[i]


@wp.overload
def _square(a: wp.array[wp.float64], out: wp.array[wp.float64]):
    """An instance declared ahead of its launch."""


def test_overload_stub_declares_an_instance_and_keeps_the_kernel():
    assert isinstance(_square, wp.Kernel) and _square.is_generic and len(_square.overloads) == 1
    out = wp.zeros(2, dtype=wp.float64)
    wp.launch(_square, 2, [wp.array([3.0, -0.5], dtype=wp.float64), out])
    np.testing.assert_array_equal(out.numpy(), [9.0, 0.25])
    assert len(_square.overloads) == 1


def test_overload_errors():
    with pytest.raises(RuntimeError, match="Only generic kernels can be overloaded.  Kernel _add_rows is not generic"):
        wp.overload(_add_rows, [wp.array2d[float], wp.array[float]])
    with pytest.raises(RuntimeError, match="Invalid argument name 'b' in overload of kernel _scale"):
        wp.overload(_scale, {"b": float})
    with pytest.raises(RuntimeError, match="Invalid number of arguments for kernel _scale"):
        wp.overload(_scale, [wp.array[float]])
    with pytest.raises(TypeError, match="Kernel _scale argument 's' cannot be generic, got Any"):
        wp.overload(_scale, [wp.array[float], Any, wp.array[float]])
    with pytest.raises(TypeError, match="Kernel _add_rows2 argument 'out' type mismatch: expected "
                                        r"array\(ndim=1, dtype=float32\), got array\(ndim=1, dtype=int32\)"):
        wp.overload(_add_rows2, [wp.array2d[float], wp.array[wp.int32]])
    with pytest.raises(TypeError, match="Kernel overload types must be given in a list or dict"):
        wp.overload(_scale, wp.float32)
    with pytest.raises(RuntimeError, match="wp.overload\\(\\) called with invalid argument!"):
        wp.overload(3)


@wp.kernel
def _add_rows2(a: wp.array2d[Any], out: wp.array[float]):
    i, j = wp.tid()
    out[i] = out[i] + float(a[i, j])


def test_overload_stub_errors():
    def _nobody(a: wp.array[float]):
        pass

    with pytest.raises(RuntimeError, match="Failed to find a kernel named '_nobody' in module"):
        wp.overload(_nobody)

    @wp.kernel
    def local(a: wp.array(dtype=Any)):
        a[0] = a.dtype(1)

    with pytest.raises(RuntimeError, match="Illegal statement in kernel overload definition"):
        @wp.overload
        def local(a: wp.array[wp.int32]):  # noqa: F811
            x = 1  # noqa: F841

    with pytest.raises(RuntimeError, match="Incomplete argument annotations on kernel overload local"):
        @wp.overload
        def local(a):  # noqa: F811
            ...

    with pytest.raises(TypeError, match="Return annotations are not allowed on @wp.overload stubs"):
        @wp.overload
        def local(a: wp.array[wp.int32]) -> int:  # noqa: F811
            ...

    @wp.overload
    def local(a: wp.array[wp.int8]):  # noqa: F811
        ...

    a = wp.zeros(2, dtype=wp.int8)
    wp.launch(local, 1, [a])
    assert a.numpy().tolist() == [1, 0] and len(local.overloads) == 1


def test_launching_with_an_uninferrable_argument():
    with pytest.raises(TypeError, match="Error launching kernel '_scale': Unable to infer the type of argument 's' "
                                        "from str"):
        wp.launch(_scale, 1, [wp.zeros(1), "x", wp.zeros(1)])
    with pytest.raises(TypeError, match="Error launching kernel '_scale': Kernel _scale argument 'out' type "
                                        r"mismatch: expected array\(ndim=1, dtype=Any\), got array\(ndim=2, "):
        wp.launch(_scale, 1, [wp.zeros(1), 1.0, wp.zeros((1, 1))])


# -- generic functions ----------------------------------------------------------------------------------
@wp.func
def _twice_at(a: wp.array(dtype=Any), i: int):
    return a[i] * a.dtype(2)


@wp.func
def _twice_at(a: float, i: int):  # noqa: F811  (an overload: not an array)
    return a * 3.0


@wp.kernel
def _use_twice(a: wp.array[float], b: wp.array[wp.float64], out: wp.array[float]):
    out[0] = _twice_at(a, 1) + float(_twice_at(b, 2)) + _twice_at(1.0, 0)


def test_generic_function_over_array_dtypes():
    a = wp.array([1.0, 2.0, 3.0], dtype=float)
    b = wp.array([1.0, 2.0, 5.0], dtype=wp.float64)
    out = wp.zeros(1, dtype=float)
    wp.launch(_use_twice, 1, [a, b, out])
    assert out.numpy()[0] == 2 * 2.0 + 2 * 5.0 + 3.0


# -- TypeVar annotations (wp.Float, wp.Int, wp.Scalar) ----------------------------------------------------------
@wp.func
def _double(x: wp.Float):
    return x + x


@wp.kernel
def _double_all(a: wp.array(dtype=wp.Float), out: wp.array(dtype=wp.Float)):
    i = wp.tid()
    out[i] = _double(a[i])


def test_typevar_parameters_take_their_constraints_only():
    out = wp.zeros(2, dtype=wp.float64)
    wp.launch(_double_all, 2, [wp.array([1.5, -2.25], dtype=wp.float64), out])
    np.testing.assert_array_equal(out.numpy(), [3.0, -4.5])
    with pytest.raises(TypeError, match=r"Kernel _double_all argument 'a' type mismatch: expected array\(ndim=1, "
                                        r"dtype=~Float\), got array\(ndim=1, dtype=int32\)"):
        wp.launch(_double_all, 2, [wp.array([1, 2], dtype=wp.int32), wp.zeros(2, dtype=wp.int32)])


def test_overload_stub_lookup_edge_cases():
    import types as pytypes

    def factory(x: Any):
        return

    wp.kernel(name="factory_a")(factory)
    wp.kernel(name="factory_b")(factory)
    with pytest.raises(RuntimeError, match="Ambiguous kernel lookup for overload .*'factory_a', 'factory_b'"):
        @wp.overload
        def factory(x: float):  # noqa: F811
            ...

    @wp.kernel
    def one(x: Any):
        return

    @wp.overload
    def one(x: float) -> pytypes.NoneType:  # noqa: F811  (None, as a type, is no return value)
        ...

    assert len(one.overloads) == 1


@wp.func
def _pick(a: Any, b: Any):
    return a + b


@wp.func
def _pick(a: int, b: int):  # noqa: F811  (defined after the generic one: still chosen for ints)
    return a * b


@wp.kernel
def _use_pick(out: wp.array(dtype=float), outi: wp.array(dtype=int)):
    out[0] = _pick(2.0, 3.0)
    outi[0] = _pick(2, 3)


def test_concrete_overloads_win_over_generic_ones():
    out, outi = wp.zeros(1, dtype=float), wp.zeros(1, dtype=int)
    wp.launch(_use_pick, 1, [out, outi])
    assert out.numpy()[0] == 5.0 and outi.numpy()[0] == 6


# -- type expressions: type(x), a.dtype, type(a).dtype, a.dtype.dtype ----------------------------------------
@wp.kernel
def _type_exprs(a: wp.array(dtype=Any), x: Any, out: wp.array(dtype=Any)):
    zero = type(a[0])()
    out[0] = (a.dtype(a[0]) + zero) * type(x)(2)


@wp.kernel
def _dtype_chain(a: wp.array(dtype=Any), out: wp.array(dtype=float)):
    v = type(a).dtype(a[0]) * a.dtype.dtype(2.0)
    out[0] = v[1]


def test_type_expressions_construct_values_of_generic_types():
    out = wp.zeros(1, dtype=wp.float64)
    wp.launch(_type_exprs, 1, [wp.array([1.5], dtype=wp.float64), wp.float64(1.0), out])
    assert out.numpy()[0] == 3.0
    outi = wp.zeros(1, dtype=wp.int32)
    wp.launch(_type_exprs, 1, [wp.array([7], dtype=wp.int32), 1, outi])
    assert outi.numpy()[0] == 14
    outv = wp.zeros(1, dtype=float)
    wp.launch(_dtype_chain, 1, [wp.array([[1.0, 2.0, 3.0]], dtype=wp.vec3), outv])
    assert outv.numpy()[0] == 4.0


@wp.kernel
def _type_from_argument(a: Any, out: wp.array(dtype=float)):
    v = wp.types.vector(length=2, dtype=type(a))  # a zero vector of a's type: its type's attributes read through it
    m = wp.identity(n=v.length, dtype=v.dtype) * a
    out[0] = float(wp.trace(m))
    out[1] = float(wp.quat().length + wp.transform().length)


wp.overload(_type_from_argument, [wp.float32, wp.array(dtype=float)])
wp.overload(_type_from_argument, [wp.float64, wp.array(dtype=float)])


@pytest.mark.parametrize("value", [2.0, wp.float64(-1.0)])
def test_generic_type_attributes_through_values(value):
    out = wp.zeros(2, dtype=float)
    wp.launch(_type_from_argument, 1, inputs=[value, out])
    np.testing.assert_array_equal(out.numpy(), [2.0 * float(value), 4.0 + 7.0])  # trace(a I2); quat 4, transform 7


def test_call_of_an_undefined_callee_is_a_key_error():
    @wp.kernel(module="unique")
    def misspelt():
        i = wp.tid()
        _ = typez(i)(0)  # noqa: F821

    with pytest.raises(KeyError, match="Referencing undefined symbol: typez"):
        wp.launch(misspelt, 1)
