"""Every scalar type in arrays and kernels, with Warp's conversion and arithmetic rules, and the
numpy dtype mapping (bfloat16 has no numpy dtype: its arrays hold uint16 bit patterns, as in Warp)."""

import numpy as np
import pytest

import mlwarp as wp

INT_TYPES = [wp.int8, wp.int16, wp.int32, wp.int64, wp.uint8, wp.uint16, wp.uint32, wp.uint64]
FLOAT_TYPES = [wp.float16, wp.float32, wp.float64]


def bf16_round(x):
    """float32 -> nearest bfloat16 (ties to even), as float32: an independent reference."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return r.astype(np.uint32).view(np.float32)


def _arith_kernel(T):
    @wp.kernel(enable_backward=False)
    def arith(a: wp.array(dtype=T), b: wp.array(dtype=T), s: T, add: wp.array(dtype=T), mul: wp.array(dtype=T),
              div: wp.array(dtype=T), mx: wp.array(dtype=T)):
        i = wp.tid()
        add[i] = a[i] + b[i]
        mul[i] = a[i] * s
        div[i] = a[i] / b[i]
        mx[i] = wp.max(a[i], b[i])

    return arith


def _run_arith(T, a, b, s):
    outs = [wp.zeros(len(a), dtype=T) for _ in range(4)]
    wp.launch(_arith_kernel(T), len(a), [wp.array(a, dtype=T), wp.array(b, dtype=T), T(s), *outs])
    return [o.numpy() for o in outs]


@pytest.mark.parametrize("T", INT_TYPES, ids=lambda t: t.__name__)
def test_integer_arithmetic_wraps_and_truncates_like_c(T):
    info = np.iinfo(T._np_)
    a = np.array([info.max, 7, info.min + 1 if info.min else 9, 100], dtype=T._np_)
    b = np.array([1, 2, 3, 7], dtype=T._np_)
    add, mul, div, mx = _run_arith(T, a, b, 3)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(add, a + b)  # wraps around
        np.testing.assert_array_equal(mul, a * T._np_(3))
    expected_div = np.array([int(x / y) if abs(int(x)) < 2 ** 52 else (abs(int(x)) // int(y)) * (1 if x >= 0 else -1)
                             for x, y in zip(a.tolist(), b.tolist())], dtype=T._np_)  # C: toward zero
    np.testing.assert_array_equal(div, expected_div)
    np.testing.assert_array_equal(mx, np.maximum(a, b))
    assert add.dtype == np.dtype(T._np_)


@pytest.mark.parametrize("T", FLOAT_TYPES, ids=lambda t: t.__name__)
def test_float_arithmetic_rounds_in_its_own_precision(T):
    a = np.array([1.0, 3.3, -2.7, 1e-3], dtype=T._np_)
    b = np.array([3.0, 0.7, 1.9, 7.0], dtype=T._np_)
    add, mul, div, mx = _run_arith(T, a, b, 1.1)
    np.testing.assert_array_equal(add, a + b)  # numpy also rounds float16 after each operation
    np.testing.assert_array_equal(mul, a * T._np_(1.1))
    np.testing.assert_array_equal(div, a / b)
    np.testing.assert_array_equal(mx, np.maximum(a, b))


def test_bfloat16_arrays_hold_bit_patterns_and_arithmetic_rounds_to_bfloat16():
    x = np.array([1.0, 2.5, 3.14159, -0.3], dtype=np.float32)
    a = wp.array(x, dtype=wp.bfloat16)
    assert np.asarray(a).dtype == np.uint16  # the memory (.numpy() shows ml_dtypes values when it can)
    np.testing.assert_array_equal(a.numpy().view(np.uint16).astype(np.uint32) << 16,
                                  bf16_round(x).view(np.uint32))

    @wp.kernel(enable_backward=False)
    def k(a: wp.array(dtype=wp.bfloat16), s: wp.bfloat16, out: wp.array(dtype=wp.bfloat16),
          f: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = a[i] * s + a[i]
        f[i] = float(a[i])

    out = wp.zeros(4, dtype=wp.bfloat16)
    f = wp.zeros(4, dtype=float)
    wp.launch(k, 4, [a, wp.bfloat16(1.5), out, f])
    av = bf16_round(x)
    expected = bf16_round(bf16_round(av * np.float32(1.5)) + av)
    got = (out.numpy().view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(f.numpy(), av)
    assert wp.bfloat16(3.14159).value == 3.140625


def test_casts_follow_c_rules():
    @wp.kernel(enable_backward=False)
    def k(x: wp.array(dtype=float), i8: wp.array(dtype=wp.int8), u16: wp.array(dtype=wp.uint16),
          i64: wp.array(dtype=wp.int64), h: wp.array(dtype=wp.float16), b: wp.array(dtype=wp.bool),
          fl: wp.array(dtype=wp.int32)):
        i = wp.tid()
        i8[i] = wp.int8(x[i])
        u16[i] = wp.uint16(wp.int32(x[i]))
        i64[i] = wp.int64(x[i] * 1000.0)
        h[i] = wp.float16(x[i])
        b[i] = wp.bool(x[i])
        fl[i] = int(x[i]) // 3

    x = np.array([-7.9, 0.0, 100.25, 3.5], dtype=np.float32)
    outs = [wp.zeros(4, dtype=t) for t in (wp.int8, wp.uint16, wp.int64, wp.float16, wp.bool, wp.int32)]
    wp.launch(k, 4, [wp.array(x, dtype=float), *outs])
    np.testing.assert_array_equal(outs[0].numpy(), [-7, 0, 100, 3])  # float -> int truncates
    np.testing.assert_array_equal(outs[1].numpy(), np.array([-7, 0, 100, 3]).astype(np.uint16))  # wraps
    np.testing.assert_array_equal(outs[2].numpy(), (x * np.float32(1000)).astype(np.int64))
    np.testing.assert_array_equal(outs[3].numpy(), x.astype(np.float16))
    np.testing.assert_array_equal(outs[4].numpy(), [True, False, True, True])
    np.testing.assert_array_equal(outs[5].numpy(), [-3, 0, 33, 1])  # // floors, as in Python and Warp


def test_bool_arrays_and_arguments():
    @wp.kernel(enable_backward=False)
    def k(flags: wp.array(dtype=wp.bool), on: wp.bool, out: wp.array(dtype=wp.int32)):
        i = wp.tid()
        if flags[i] and on:
            out[i] = 1

    out = wp.zeros(3, dtype=wp.int32)
    wp.launch(k, 3, [wp.array(np.array([True, False, True]), dtype=wp.bool), True, out])
    np.testing.assert_array_equal(out.numpy(), [1, 0, 1])


def test_dtype_to_and_from_numpy():
    for t in INT_TYPES + FLOAT_TYPES + [wp.bool]:
        assert wp.dtype_to_numpy(t) == t._np_
        assert wp.dtype_from_numpy(np.dtype(t._np_)) is t
    assert wp.dtype_to_numpy(wp.bfloat16) == np.uint16  # Warp's answer: the storage type
    assert wp.dtype_from_numpy(np.uint16) is wp.uint16
    with pytest.raises(TypeError, match="Cannot convert"):
        wp.dtype_to_numpy(wp.vec3)
    with pytest.raises(TypeError, match="Cannot convert numpy dtype"):
        wp.dtype_from_numpy(np.complex64)


def test_from_numpy_with_scalar_and_composite_dtypes():
    a = wp.from_numpy(np.arange(6, dtype=np.float64), dtype=wp.float32, shape=(2, 3))
    assert a.dtype is wp.float32 and a.shape == (2, 3)
    v = wp.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3), dtype=wp.vec3)
    assert v.dtype is wp.vec3 and v.shape == (2,) and v.numpy().shape == (2, 3)
    m = wp.from_numpy(np.arange(8, dtype=np.float32), dtype=wp.mat22, shape=(2,))
    assert m.shape == (2,)
    np.testing.assert_array_equal(m.numpy(), np.arange(8, dtype=np.float32).reshape(2, 2, 2))
    g = wp.from_numpy(np.ones((4, 3), dtype=np.float32), dtype=wp.vec3, requires_grad=True)
    assert g.requires_grad and g.grad.shape == (4,)


def test_type_helpers():
    assert wp.types.type_size_in_bytes(wp.mat33d) == 72 and wp.types.type_length(wp.mat33) == 9
    assert wp.types.type_length(wp.float32) == 1 and wp.types.type_scalar_type(wp.vec3h) is wp.float16
    assert wp.types.type_is_vector(wp.vec3) and not wp.types.type_is_vector(wp.quat)
    assert wp.types.type_is_matrix(wp.mat22) and wp.types.type_is_quaternion(wp.quatd)
    assert wp.types.type_is_transformation(wp.transform)
    assert wp.types.types_equal(float, wp.float32) and wp.types.types_equal(wp.vec(3, float), wp.vec3)
    assert not wp.types.types_equal(wp.vec3, wp.vec3d)
