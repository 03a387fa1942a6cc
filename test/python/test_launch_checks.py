"""wp.launch refuses bad arguments before anything runs; each error names the kernel and the argument."""

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def add_n(a: wp.array(dtype=float), n: int, x: float):
    i = wp.tid()
    a[i] = a[i] + x + float(n)


@wp.kernel
def set_u8(a: wp.array(dtype=wp.uint8), v: wp.uint8, big: wp.int64):
    i = wp.tid()
    a[i] = v


def _untouched(a):
    return a.numpy().tolist() == [0.0] * len(a)


def _raises(msg, *args, **kwargs):
    a = kwargs.pop("target", None)
    with pytest.raises(wp.LaunchError, match=msg):
        wp.launch(*args, **kwargs)
    if a is not None:
        assert _untouched(a)


def test_good_launch():
    a = wp.zeros(4)
    wp.launch(add_n, 4, inputs=[a, 1, 0.5])
    assert a.numpy().tolist() == [1.5] * 4
    wp.launch(add_n, dim=(2,), inputs=[a, np.int64(1), np.float32(0.5)])  # numpy scalars
    assert a.numpy().tolist() == [3.0, 3.0, 1.5, 1.5]
    wp.launch(add_n, 4, inputs=[a, True, 1])  # bool for int, int for float: accepted as in Warp
    assert a.numpy().tolist() == [5.0, 5.0, 3.5, 3.5]


def test_wrong_count():
    a = wp.zeros(4)
    _raises(r"^Error launching kernel 'add_n', passed 2 arguments but kernel requires 3\.$",
            add_n, 4, inputs=[a, 1], target=a)
    _raises(r"passed 4 arguments but kernel requires 3", add_n, 4, inputs=[a, 1], outputs=[2.0, 3.0], target=a)


def test_float64_numpy_for_float32_array():
    n = np.zeros(4)
    with pytest.raises(wp.LaunchError, match=r"^Error launching kernel 'add_n', argument 'a' expects an array "
                                             r"with dtype=float32 but passed array has dtype=float64\.$"):
        wp.launch(add_n, 4, inputs=[n, 1, 2.0])
    assert n.tolist() == [0.0] * 4


def test_wrong_dtype_wp_array():
    a = wp.zeros(4, dtype=wp.float64)
    _raises(r"argument 'a' expects an array with dtype=float32 but passed array has dtype=float64\.",
            add_n, 4, inputs=[a, 1, 2.0])
    i = wp.zeros(4, dtype=wp.int32)
    _raises(r"argument 'a' expects an array with dtype=float32 but passed array has dtype=int32\.",
            add_n, 4, inputs=[i, 1, 2.0])


def test_wrong_ndim():
    a = wp.zeros((2, 2))
    _raises(r"^Error launching kernel 'add_n', argument 'a' expects an array with 1 dimension\(s\) but the passed "
            r"array has 2 dimension\(s\)\.$", add_n, 4, inputs=[a, 1, 2.0])


@pytest.mark.parametrize("value, tname", [(3.0, "float"), ([1.0, 2.0], "list"),
                                          ("abc", "str")])
def test_non_array_for_array(value, tname):
    _raises(rf"^Error launching kernel 'add_n', argument 'a' expects an array of type array\(ndim=1, "
            rf"dtype=float32\), but passed value has type {tname}\.$", add_n, 4, inputs=[value, 1, 2.0])


@pytest.mark.parametrize("value, shown", [(1.5, r"float \(1\.5\)"), (2.0, r"float \(2\.0\)"),
                                          (np.float32(3), r"float \(3\.0\)"), ("1", r"str \('1'\)"),
                                          (wp.float32(1.0), r"float \(1\.0\)")])
def test_float_for_int(value, shown):
    a = wp.zeros(4)
    _raises(rf"^Error launching kernel 'add_n', argument 'n' expects int32, but passed value has type {shown}\.$",
            add_n, 4, inputs=[a, value, 2.0], target=a)


def test_non_number_for_float():
    a = wp.zeros(4)
    _raises(r"argument 'x' expects float32, but passed value has type str \('x'\)\.", add_n, 4,
            inputs=[a, 1, "x"], target=a)
    _raises(r"argument 'x' expects float32, but passed value has type ndarray", add_n, 4,
            inputs=[a, 1, np.zeros(1)], target=a)


def test_zero_dim_arrays_for_scalars():
    # Warp 1.19 packs a 0-d numpy array as the scalar it holds (recorded with warp-lang: np.array(2.5) and
    # np.array(2.5, dtype=np.float32) pass, np.array([4.5]) is refused); JAX's FFI attributes arrive so
    a = wp.zeros(4)
    wp.launch(add_n, 4, inputs=[a, np.array(2), np.array(0.5)])
    wp.launch(add_n, 4, inputs=[a, np.array(1, dtype=np.int64), np.array(0.25, dtype=np.float32)])
    np.testing.assert_array_equal(a.numpy(), np.full(4, 3.75, np.float32))


@pytest.mark.parametrize("value", [2 ** 31, -2 ** 31 - 1, 2 ** 40])
def test_out_of_range_int(value):
    a = wp.zeros(4)
    _raises(rf"^Error launching kernel 'add_n', argument 'n': value {value} is out of range for int32 "
            rf"\[-2147483648, 2147483647\]\.$", add_n, 4, inputs=[a, value, 2.0], target=a)


def test_out_of_range_small_and_unsigned():
    a = wp.zeros(2, dtype=wp.uint8)
    _raises(r"argument 'v': value 256 is out of range for uint8 \[0, 255\]", set_u8, 2, inputs=[a, 256, 0])
    _raises(r"argument 'v': value -1 is out of range for uint8 \[0, 255\]", set_u8, 2, inputs=[a, -1, 0])
    _raises(r"argument 'big': value 9223372036854775808 is out of range for int64", set_u8, 2,
            inputs=[a, 1, 2 ** 63])
    wp.launch(set_u8, 2, inputs=[a, 255, 2 ** 63 - 1])
    assert a.numpy().tolist() == [255, 255]


@pytest.mark.parametrize("dim, msg", [
    (-1, r"launch dimensions must be non-negative, got -1"),
    ((4, -2), r"launch dimensions must be non-negative, got \(4, -2\)"),
    (2.0, r"dim must be an int or a tuple of 1 to 4 ints, got 2\.0"),
    ((2, 1.5), r"dim must be an int or a tuple of 1 to 4 ints, got \(2, 1\.5\)"),
    ((1, 1, 1, 1, 1), r"dim must be an int or a tuple of 1 to 4 ints, got \(1, 1, 1, 1, 1\)"),
    ((), r"dim must be an int or a tuple of 1 to 4 ints, got \(\)"),
    (True, r"dim must be an int or a tuple of 1 to 4 ints, got True"),
    (None, r"dim must be an int or a tuple of 1 to 4 ints, got None"),
])
def test_bad_dims(dim, msg):
    a = wp.zeros(4)
    _raises(rf"^Error launching kernel 'add_n': {msg}$", add_n, dim, inputs=[a, 1, 2.0], target=a)


def test_dim_zero_runs_nothing():
    a = wp.zeros(4)
    wp.launch(add_n, 0, inputs=[a, 1, 2.0])
    wp.launch(add_n, (3, 0), inputs=[a, 1, 2.0])
    assert _untouched(a)


def test_unknown_device():
    a = wp.zeros(4)
    _raises(r"^Error launching kernel 'add_n': Invalid device identifier: 'tpu'$", add_n, 4, inputs=[a, 1, 2.0],
            device="tpu", target=a)


class _CudaOnly:
    """A CuPy-like array: only __cuda_array_interface__."""

    __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (1 << 20, False), "version": 3,
                                "strides": None}


def test_array_on_other_device():
    a = wp.zeros(4)
    _raises(r"^Error launching kernel 'add_n', argument 'a' is an array on device 'cuda' but the kernel is "
            r"launched on device 'cpu'\.$", add_n, 4, inputs=[_CudaOnly(), 1, 2.0])
    import torch  # a test dependency (pyproject test extra)
    _raises(r"argument 'a' is an array on device 'meta' but the kernel is launched on device 'cpu'", add_n, 4,
            inputs=[torch.zeros(4, device="meta"), 1, 2.0], target=a)


def test_checks_run_before_any_argument_is_used():
    # the first argument is fine, the last is bad: nothing runs, nothing is written
    a = wp.zeros(4)
    _raises(r"argument 'x'", add_n, 4, inputs=[a, 1, None], target=a)


def test_not_a_kernel():
    with pytest.raises(wp.LaunchError, match=r"wp.launch expects a @wp.kernel, got function"):
        wp.launch(lambda: None, 1)


@wp.struct
class _LaunchParams:
    a: float


@wp.kernel
def _k_struct_param(params: _LaunchParams):
    pass


@wp.kernel
def _k_vec3_param(v: wp.vec3):
    pass


@wp.kernel
def _k_mat22_param(m: wp.mat22):
    pass


@pytest.mark.parametrize("value,tname", [(123, "int"), (1.5, "float"), (wp.float32(1.5), "float32"),
                                         (wp.int32(2), "int32")])
def test_single_value_for_a_composite_is_warps_error(value, tname):
    for k, name, t in ((_k_vec3_param, "v", "vec3f"), (_k_mat22_param, "m", "mat22f")):
        with pytest.raises(wp.LaunchError) as e:
            wp.launch(k, 1, inputs=[value])
        assert str(e.value) == (f"Error launching kernel '{k.key}', argument '{name}' expects {t} but got a single "
                                f"value of type {tname}. Construct the value explicitly, e.g.: {t}(...).")


def test_sequences_still_convert_and_none_is_warps_value_error():
    for value in ((1.0, 2.0, 3.0), [1.0, 2.0, 3.0], np.array([1.0, 2.0, 3.0]), wp.vec3(1.0, 2.0, 3.0)):
        wp.launch(_k_vec3_param, 1, inputs=[value])
    with pytest.raises(ValueError) as e:
        wp.launch(_k_vec3_param, 1, inputs=[None])
    assert str(e.value) == "Failed to convert argument for param v to vec3f"
    with pytest.raises(wp.LaunchError) as e:
        wp.launch(_k_struct_param, 1, inputs=[None])
    assert str(e.value) == "Error launching kernel '_k_struct_param', argument 'params' expects _LaunchParams but got None."
