"""wp.bit_count: the set bits of an integer's fixed-width two's-complement pattern, in kernels and in
Python scope, checked against Python's int.bit_count of the unsigned pattern."""

import numpy as np
import pytest

import mlwarp as wp

INT_TYPES = [wp.int8, wp.uint8, wp.int16, wp.uint16, wp.int32, wp.uint32, wp.int64, wp.uint64]


def _patterns(dtype):
    np_dtype = np.dtype(wp.dtype_to_numpy(dtype))
    unsigned = np.dtype(f"uint{np_dtype.itemsize * 8}")
    rng = np.random.default_rng(3)
    edges = np.array([0, 1, 2, 3, np.iinfo(unsigned).max, np.iinfo(unsigned).max >> 1,
                      (np.iinfo(unsigned).max >> 1) + 1], dtype=unsigned)
    random = np.frombuffer(rng.bytes(64 * np_dtype.itemsize), dtype=unsigned)
    return np.concatenate([edges, random]), np_dtype


@pytest.mark.parametrize("dtype", INT_TYPES, ids=lambda t: t.__name__)
def test_bit_count_in_a_kernel_matches_the_unsigned_pattern(dtype):
    @wp.kernel
    def count(values: wp.array(dtype=dtype), out: wp.array(dtype=wp.int32)):
        i = wp.tid()
        out[i] = wp.bit_count(values[i])

    patterns, np_dtype = _patterns(dtype)
    values = wp.array(patterns.view(np_dtype), dtype=dtype)
    out = wp.empty(len(patterns), dtype=wp.int32)
    wp.launch(count, dim=len(patterns), inputs=[values, out])
    np.testing.assert_array_equal(out.numpy(), [int(p).bit_count() for p in patterns])


def test_bit_count_in_python_scope():
    for dtype in INT_TYPES:
        bits = np.dtype(wp.dtype_to_numpy(dtype)).itemsize * 8
        assert wp.bit_count(dtype(-1 if dtype.__name__.startswith("int") else (1 << bits) - 1)) == bits
        assert wp.bit_count(dtype(5)) == 2
        assert wp.bit_count(dtype(0)) == 0
    assert wp.bit_count(45) == 4  # a Python int is an int32
    assert wp.bit_count(-1) == 32
    assert wp.bit_count(wp.int64(-2)) == 63


@pytest.mark.parametrize("value", [wp.float32(0.0), wp.float64(0.0), wp.bool(False), wp.vec2i(0, 0)],
                         ids=["float32", "float64", "bool", "vec2i"])
def test_bit_count_rejects_non_integers_in_python_scope(value):
    expected = {wp.float32: "float32", wp.float64: "float64", wp.bool: "bool", wp.vec2i: "vec2i"}[type(value)]
    with pytest.raises(RuntimeError, match=rf"^Couldn't find a function 'bit_count' compatible with the arguments "
                                           rf"'{expected}'$"):
        wp.bit_count(value)


def test_bit_count_rejects_floats_in_a_kernel():
    @wp.kernel
    def count(value: wp.float32, out: wp.array(dtype=wp.int32)):
        out[0] = wp.bit_count(value)

    # Warp's kernel-scope wording (recorded from warp-lang 1.19: Python scope says "compatible with the arguments")
    with pytest.raises(wp.CompileTypeError, match=r"Couldn't find function overload for 'bit_count' that matched "
                                                  r"inputs with types: \[float32\]"):
        wp.launch(count, dim=1, inputs=[wp.float32(1.0), wp.empty(1, dtype=wp.int32)])
