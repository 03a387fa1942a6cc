"""PyTorch interop on the CPU: zero-copy wp.from_torch / wp.to_torch, gradients shared, dtype and device
maps, tensors passed straight to wp.launch. torch is a test dependency (pyproject `test` extra)."""

import gc

import numpy as np
import pytest
import torch

import mlwarp as wp


@wp.kernel
def axpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def rows_plus_cols(m: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    out[i, j] = m[i, j] + float(i * 10 + j)


# -- dtypes and devices -------------------------------------------------------------
@pytest.mark.parametrize("tdt, wdt", [(torch.float16, wp.float16), (torch.float32, wp.float32),
                                      (torch.float64, wp.float64), (torch.int8, wp.int8), (torch.uint8, wp.uint8),
                                      (torch.int16, wp.int16), (torch.int32, wp.int32), (torch.int64, wp.int64),
                                      (torch.bool, wp.bool), (torch.bfloat16, wp.bfloat16)])
def test_dtype_from_and_to_torch(tdt, wdt):
    assert wp.dtype_from_torch(tdt) is wdt
    assert wp.dtype_to_torch(wdt) == tdt


@pytest.mark.parametrize("wdt, tdt", [(wp.uint16, torch.int16), (wp.uint32, torch.int32), (wp.uint64, torch.int64),
                                      (float, torch.float32), (int, torch.int32)])
def test_unsigned_map_to_same_width_signed(wdt, tdt):
    assert wp.dtype_to_torch(wdt) == tdt


@pytest.mark.parametrize("tdt, msg", [
    (torch.uint16, r"^Cannot convert torch.uint16 to a Warp type$"),
    (torch.uint32, r"^Cannot convert torch.uint32 to a Warp type$"),
    (torch.uint64, r"^Cannot convert torch.uint64 to a Warp type$"),
    (torch.complex64, r"^Cannot convert torch.complex64 to a Warp type \(complex numbers have no Warp type\)$"),
    (torch.complex128, r"complex numbers have no Warp type"),
])
def test_dtype_from_torch_errors(tdt, msg):
    with pytest.raises(TypeError, match=msg):
        wp.dtype_from_torch(tdt)


def test_dtype_to_torch_error():
    with pytest.raises(TypeError, match=r"^Cannot convert vec3f to a Torch type$"):
        wp.dtype_to_torch(wp.vec3)


def test_devices():
    assert wp.device_from_torch("cpu") is wp.get_device("cpu")
    assert wp.device_from_torch(torch.device("cpu")) is wp.get_device("cpu")
    assert wp.device_to_torch("cpu") == "cpu"
    assert wp.device_to_torch(None) == "cpu"
    assert wp.device_to_torch(wp.get_device()) == "cpu"
    with pytest.raises(RuntimeError, match=r"^Torch device meta has no Warp device$"):
        wp.device_from_torch("meta")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the errors of a machine without CUDA")
def test_streams_need_cuda():
    with pytest.raises(RuntimeError, match=r"^stream_from_torch: CUDA streams need a CUDA device; torch has none here$"):
        wp.stream_from_torch()
    with pytest.raises(RuntimeError, match=r"^stream_from_torch: CUDA streams need a CUDA device; torch has none here$"):
        wp.stream_from_torch("cuda:0")
    with pytest.raises(RuntimeError, match=r"^stream_to_torch: CUDA streams need a CUDA device, got 'cpu'$"):
        wp.stream_to_torch("cpu")


@pytest.mark.skipif(not torch.cuda.is_available() or not wp.is_cuda_available(), reason="needs a CUDA device")
def test_streams_round_trip_on_cuda():
    torch_stream = torch.cuda.Stream()
    warp_stream = wp.stream_from_torch(torch_stream)
    assert warp_stream.cuda_stream == torch_stream.cuda_stream
    assert wp.stream_to_torch(warp_stream).cuda_stream == torch_stream.cuda_stream
    assert wp.stream_from_torch("cuda:0").cuda_stream == torch.cuda.current_stream(0).cuda_stream


# -- from_torch -----------------------------------------------------------------------
def test_from_torch_shares_memory_both_ways():
    t = torch.arange(6, dtype=torch.float32)
    a = wp.from_torch(t)
    assert a.dtype is wp.float32 and a.shape == (6,) and a.strides == (4,) and a.ptr == t.data_ptr()
    assert not a.requires_grad and a.grad is None
    t[0] = 10.0
    assert a.numpy()[0] == 10.0
    a.numpy()[1] = 20.0
    assert t[1].item() == 20.0


def test_from_torch_strided_and_transposed():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    col = wp.from_torch(t[:, 1])
    assert col.shape == (3,) and col.strides == (16,) and col.numpy().tolist() == [1.0, 5.0, 9.0]
    tt = wp.from_torch(t.T)
    assert tt.shape == (4, 3) and tt.strides == (4, 16)
    assert tt.numpy().tolist() == t.T.tolist()


def test_from_torch_keeps_tensor_alive():
    a = wp.from_torch(torch.full((1000,), 3.0))
    gc.collect()
    junk = [torch.zeros(1000) for _ in range(20)]
    assert a.numpy().tolist() == [3.0] * 1000
    del junk


def test_from_torch_dtype_argument():
    v = wp.from_torch(torch.arange(12, dtype=torch.float32).reshape(4, 3), dtype=wp.vec3)
    assert v.dtype is wp.vec3 and v.shape == (4,)
    assert v.numpy()[1].tolist() == [3.0, 4.0, 5.0]
    with pytest.raises(RuntimeError, match=r"^Cannot convert Torch type torch.float32 to Warp type float64$"):
        wp.from_torch(torch.zeros(4), dtype=wp.float64)
    with pytest.raises(RuntimeError, match=r"Could not convert PyTorch tensor with shape \(4, 2\) to Warp array with "
                                           r"dtype=vec3f, ensure that source inner shape is \(3,\)"):
        wp.from_torch(torch.zeros(4, 2), dtype=wp.vec3)


def test_from_torch_errors():
    with pytest.raises(TypeError, match=r"^from_torch expects a torch.Tensor, got ndarray$"):
        wp.from_torch(np.zeros(3))
    with pytest.raises(TypeError, match=r"Cannot convert torch.complex64 to a Warp type"):
        wp.from_torch(torch.zeros(3, dtype=torch.complex64))


def test_from_torch_zero_dim_and_bfloat16():
    s = wp.from_torch(torch.tensor(2.5))
    assert s.shape == (1,) and s.numpy().tolist() == [2.5]
    b = wp.from_torch(torch.tensor([1.5, -2.0], dtype=torch.bfloat16))
    assert b.dtype is wp.bfloat16
    assert wp.to_torch(b).tolist() == [1.5, -2.0]


def test_from_torch_grad_is_the_tensors_grad():
    t = torch.zeros(3, requires_grad=True)
    a = wp.from_torch(t)
    assert a.requires_grad
    assert t.grad is not None and a.grad.ptr == t.grad.data_ptr()  # allocated as zeros, then shared
    a.grad.numpy()[:] = [1.0, 2.0, 3.0]
    assert t.grad.tolist() == [1.0, 2.0, 3.0]
    existing = wp.from_torch(t)
    assert existing.grad.ptr == t.grad.data_ptr()


def test_from_torch_requires_grad_and_grad_arguments():
    t = torch.zeros(3, requires_grad=True)
    a = wp.from_torch(t, requires_grad=False)
    assert not a.requires_grad and a.grad is None and t.grad is None
    plain = torch.zeros(3)
    b = wp.from_torch(plain, requires_grad=True)
    assert b.requires_grad and plain.grad is not None and b.grad.ptr == plain.grad.data_ptr()
    g = torch.ones(3)
    c = wp.from_torch(torch.zeros(3), grad=g)
    assert c.grad.ptr == g.data_ptr() and c.grad.numpy().tolist() == [1.0, 1.0, 1.0]
    gw = wp.full(3, 4.0)
    d = wp.from_torch(torch.zeros(3), requires_grad=True, grad=gw)
    assert d.grad is gw


def test_from_torch_return_ctype_launches():
    x = torch.arange(4, dtype=torch.float32)
    y = torch.ones(4)
    xc = wp.from_torch(x, return_ctype=True)
    yc = wp.from_torch(y, return_ctype=True)
    assert xc.data == x.data_ptr() and list(xc.shape) == [4] and list(xc.strides) == [4]
    wp.launch(axpy, 4, inputs=[xc, yc, 2.0])
    assert y.tolist() == [1.0, 3.0, 5.0, 7.0]
    with pytest.raises(wp.LaunchError, match=r"argument 'x' expects an array of type array\(ndim=1, dtype=float32\), "
                                             r"but passed value is a array2d_t descriptor"):
        wp.launch(axpy, 4, inputs=[wp.from_torch(torch.zeros(2, 2), return_ctype=True), yc, 2.0])


def test_from_torch_return_ctype_records_the_gradient_address():
    # Warp's array_t: `grad` is the gradient's address (0 without one), `ndim` the array's
    plain = wp.from_torch(torch.zeros(5, dtype=torch.float16), return_ctype=True)
    assert plain.grad == 0 and plain.ndim == 1 and list(plain.strides) == [2]
    t = torch.zeros(2, 3, requires_grad=True)
    d = wp.from_torch(t, return_ctype=True)
    assert d.ndim == 2 and t.grad is not None and d.grad == t.grad.data_ptr()
    g = wp.zeros((2, 3), dtype=float)
    assert wp.from_torch(torch.zeros(2, 3), grad=g, return_ctype=True).grad == g.ptr
    with pytest.raises(RuntimeError, match=r"Gradient strides must match array strides, expected \(12, 4\)"):
        wp.from_torch(torch.zeros(2, 3), grad=wp.zeros((3, 2), dtype=float), return_ctype=True)


# -- to_torch -------------------------------------------------------------------------
def test_to_torch_shares_memory_both_ways():
    a = wp.array(np.arange(4, dtype=np.float32))
    t = wp.to_torch(a)
    assert t.dtype == torch.float32 and t.shape == (4,) and t.data_ptr() == a.ptr and not t.requires_grad
    t += 1.0
    assert a.numpy().tolist() == [1.0, 2.0, 3.0, 4.0]
    a.numpy()[0] = -1.0
    assert t[0].item() == -1.0


def test_to_torch_layouts_and_dtypes():
    base = wp.array(np.arange(8, dtype=np.float32))
    assert wp.to_torch(base[::2]).stride() == (2,)
    assert wp.to_torch(wp.zeros(4, dtype=wp.vec3)).shape == (4, 3)
    u = wp.to_torch(wp.array(np.array([1, 2**32 - 1], dtype=np.uint32)))
    assert u.dtype == torch.int32 and u.tolist() == [1, -1]  # same bits, signed view
    assert wp.to_torch(wp.zeros(2, dtype=wp.bool)).dtype == torch.bool
    with pytest.raises(RuntimeError, match=r"PyTorch tensors cannot have negative strides"):
        wp.to_torch(base[::-1])
    with pytest.raises(TypeError, match=r"^to_torch expects a wp.array, got Tensor$"):
        wp.to_torch(torch.zeros(2))


def test_to_torch_grad_is_the_arrays_grad():
    a = wp.zeros(3, requires_grad=True)
    t = wp.to_torch(a)
    assert t.requires_grad and t.is_leaf
    assert t.grad.data_ptr() == a.grad.ptr
    a.grad.numpy()[:] = 5.0
    assert t.grad.tolist() == [5.0, 5.0, 5.0]
    assert not wp.to_torch(a, requires_grad=False).requires_grad
    b = wp.zeros(2)
    tb = wp.to_torch(b, requires_grad=True)  # allocates the array's grad and shares it
    assert b.requires_grad and tb.grad.data_ptr() == b.grad.ptr


def test_round_trip_keeps_pointer():
    t = torch.arange(5, dtype=torch.int32)
    assert wp.to_torch(wp.from_torch(t)).data_ptr() == t.data_ptr()


# -- tensors straight to wp.launch ----------------------------------------------------
def test_tensors_straight_to_launch():
    x = torch.arange(8, dtype=torch.float32)
    y = torch.ones(8, dtype=torch.float32)
    wp.launch(axpy, 8, inputs=[x, y, 1.0], device="cpu")
    assert y.tolist() == [float(i + 1) for i in range(8)]


def test_tensor_requiring_grad_straight_to_launch():
    x = torch.ones(4, requires_grad=True)
    y = torch.zeros(4)
    wp.launch(axpy, 4, inputs=[x, y, 3.0])
    assert y.tolist() == [3.0] * 4


def test_strided_and_transposed_tensors_to_launch():
    x = torch.arange(10, dtype=torch.float32)
    y = torch.zeros(10)
    wp.launch(axpy, 5, inputs=[x[::2], y[1::2], 1.0])
    assert y.tolist() == [0, 0, 0, 2, 0, 4, 0, 6, 0, 8]
    m = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    out = torch.zeros(3, 2)
    wp.launch(rows_plus_cols, (3, 2), inputs=[m.T, out])
    expected = m.T + torch.tensor([[i * 10.0 + j for j in range(2)] for i in range(3)])
    assert out.tolist() == expected.tolist()


def test_wrong_tensor_dtype_to_launch():
    with pytest.raises(wp.LaunchError, match=r"^Error launching kernel 'axpy', argument 'x' expects an array with "
                                             r"dtype=float32 but passed array has dtype=float64\.$"):
        wp.launch(axpy, 2, inputs=[torch.zeros(2, dtype=torch.float64), torch.zeros(2), 1.0])


def test_wp_array_from_tensor_copies_even_when_it_requires_grad():
    t = torch.arange(3, dtype=torch.float32, requires_grad=True)
    a = wp.array(t)
    assert a.dtype is wp.float32 and a.numpy().tolist() == [0.0, 1.0, 2.0]
    assert a.ptr != t.data_ptr()  # wp.array(data) copies, as for numpy data
    shared = wp.array(t, copy=False)
    assert shared.ptr == t.data_ptr()


@pytest.mark.parametrize("tdt, wdt", [(torch.int64, wp.uint64), (torch.int32, wp.uint32), (torch.int16, wp.uint16),
                                      (torch.int8, wp.uint8), (torch.uint8, wp.int8), (torch.bool, wp.uint8),
                                      (torch.bool, wp.int8)])
def test_integer_tensors_alias_as_the_other_signedness(tdt, wdt):
    t = torch.tensor([1, 0, 1], dtype=tdt) if tdt is torch.bool else torch.tensor([-1, 2, 3], dtype=tdt)
    a = wp.from_torch(t, wdt)
    assert a.dtype is wdt and a.ptr == t.data_ptr()
    np.testing.assert_array_equal(a.numpy(), t.numpy().view(a.numpy().dtype))


def test_float_tensor_does_not_alias_as_integers():
    with pytest.raises(RuntimeError, match="Cannot convert Torch type torch.float32 to Warp type int32"):
        wp.from_torch(torch.zeros(2), wp.int32)


def test_view_capacity_is_the_rest_of_the_storage():
    base = torch.arange(24, dtype=torch.float32).reshape((4, 6))
    row = torch.arange(6, dtype=torch.float32).reshape((1, 6))
    # bytes from the view's first element to the end of its storage: (storage - offset) * 4
    for view, offset, total in ((row[:, 3:], 3, 6), (base[1:3, 2:5], 8, 24), (base[2:, 1::2], 13, 24), (base, 0, 24)):
        assert wp.from_torch(view).capacity == (total - offset) * 4


def test_composites_from_tensors():
    assert list(wp.vec3(torch.tensor([1.0, 2.0, 3.0]))) == [1.0, 2.0, 3.0]
    v = wp.vec4()
    v[1:] = torch.tensor([1.0, 2.0, 3.0])
    assert list(v) == [0.0, 1.0, 2.0, 3.0]
    assert list(wp.quat(torch.tensor([1.0, 2.0, 3.0, 4.0]))) == [1.0, 2.0, 3.0, 4.0]
    m = wp.mat22(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    assert (m[0, 0], m[0, 1], m[1, 0], m[1, 1]) == (1.0, 2.0, 3.0, 4.0)
    m2 = wp.mat22()
    m2[1, 0:2] = torch.tensor([7.0, 8.0])
    assert (m2[1, 0], m2[1, 1]) == (7.0, 8.0)
    assert wp.mat22(torch.tensor([[1.0, 2.0], [3.0, 4.0]])) == wp.mat22(1.0, 2.0, 3.0, 4.0)
    t = wp.transform(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0, 5.0, 6.0, 7.0]))
    assert list(t) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
