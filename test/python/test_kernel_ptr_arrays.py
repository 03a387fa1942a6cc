"""`a.ptr` and `wp.array(ptr=..., shape=..., dtype=...)` inside kernels (compiler/frontend/ptr_arrays.py):
a C-contiguous array over existing memory, as Warp; results checked against hand values."""

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def _through_ptr(orig: wp.array2d(dtype=wp.float32)):
    arr = wp.array(ptr=orig.ptr, shape=(2, 3), dtype=wp.float32)
    arr[0, 0] = 1.0
    arr[0, 1] = 2.0
    arr[1, 2] = 3.0


def test_array_over_an_arguments_memory():
    a = wp.zeros((2, 3))
    wp.launch(_through_ptr, dim=1, inputs=[a])
    assert a.numpy().tolist() == [[1.0, 2.0, 0.0], [0.0, 0.0, 3.0]]


@wp.struct
class _Abc:
    a: wp.float32
    b: wp.float32
    c: wp.float32


@wp.kernel
def _struct_ptr(orig: wp.array(dtype=_Abc)):
    arr = wp.array(ptr=orig.ptr, shape=(2,), dtype=_Abc)
    arr[0].a = 1.0
    arr[1].b = 5.0
    arr[1].c = 6.0


def test_struct_elements_use_the_c_layout():
    a = wp.zeros(2, dtype=_Abc)
    wp.launch(_struct_ptr, dim=1, inputs=[a])
    assert a.numpy().tolist() == [(1.0, 0.0, 0.0), (0.0, 5.0, 6.0)]


@wp.kernel
def _variable_shape(ptr: wp.uint64, nx: int, ny: int, out: wp.array(dtype=int)):
    arr = wp.array(ptr=ptr, shape=(nx, ny), dtype=wp.float64)
    arr[0, 0] = wp.float64(1.0)
    arr[nx - 1, ny - 1] = wp.float64(2.0)  # row-major strides from the run-time shape
    out[0] = arr.shape[1]


@pytest.mark.parametrize("nx, ny", [(2, 2), (3, 4)])
def test_run_time_shape_and_a_uint64_address(nx, ny):
    a = wp.zeros(12, dtype=wp.float64)
    out = wp.zeros(1, dtype=int)
    wp.launch(_variable_shape, dim=1, inputs=[a.ptr, nx, ny, out])
    expected = np.zeros(12)
    expected[0], expected[nx * ny - 1] = 1.0, 2.0
    assert a.numpy().tolist() == expected.tolist() and out.numpy().tolist() == [ny]


def test_bad_arguments():
    @wp.kernel
    def positional(a: wp.array(dtype=float)):
        b = wp.array(a.ptr, (2,))  # noqa: F841

    # positional arguments are Warp's too (test_builtin_overloads_more.py); without a dtype Warp finds no overload
    with pytest.raises(wp.CompileError, match=r"in 'positional': Couldn't find function overload for 'array' that "
                                              r"matched inputs with types: \[uint64, tuple\(int32\)\]"):
        wp.launch(positional, dim=1, inputs=[wp.zeros(2)])

    @wp.kernel
    def float_address(a: wp.array(dtype=float)):
        b = wp.array(ptr=1.5, shape=(2,), dtype=float)  # noqa: F841

    with pytest.raises(wp.CompileError, match=r"in 'float_address': wp\.array\(ptr=\.\.\.\) takes an integer "
                                              r"address, got float32"):
        wp.launch(float_address, dim=1, inputs=[wp.zeros(2)])
