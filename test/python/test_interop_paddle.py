"""Paddle interop on the CPU, the Paddle section of Warp's interop guide snippet by snippet: zero-copy
wp.from_paddle / wp.to_paddle with shared gradients, return_ctype descriptors, dtype, device and stream maps,
tensors passed straight to wp.launch (written through their memory), the DLPack lines, the two optimisation
examples (examples/interop_paddle_*.py). paddle is a test dependency (pyproject `test` extra). Values are checked
against numpy, and the optimisations against the same Adam run with the loss written in paddle."""

import importlib.util
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

with warnings.catch_warnings():  # paddle warns on import that ccache (for its C++ extensions) is missing
    warnings.simplefilter("ignore")
    import paddle
    import paddle.utils.dlpack

import mlwarp as wp

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


@wp.kernel
def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def rows_plus_cols(m: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    out[i, j] = m[i, j] + float(i * 10 + j)


@wp.kernel
def squares(xs: wp.array(dtype=wp.vec2), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.dot(xs[i], xs[i])


# -- the section's first snippet ------------------------------------------------------
def test_to_paddle_and_back_share_memory():
    w = wp.array([1.0, 2.0, 3.0], dtype=float, device="cpu")
    # convert to Paddle tensor
    t = wp.to_paddle(w)
    # convert from Paddle tensor
    w2 = wp.from_paddle(t)
    assert t.dtype == paddle.float32 and list(t.shape) == [3] and t.data_ptr() == w.ptr
    assert w2.ptr == w.ptr and w2.dtype is wp.float32 and w2.device is wp.get_device("cpu")
    t[1] = 20.0  # paddle writes, both arrays see it
    np.testing.assert_array_equal(w.numpy(), [1.0, 20.0, 3.0])
    np.testing.assert_array_equal(w2.numpy(), [1.0, 20.0, 3.0])
    wp.launch(saxpy, 3, [w2, w2, 1.0])  # a kernel writes, the tensor sees it
    np.testing.assert_array_equal(t.numpy(), [2.0, 40.0, 6.0])


# -- dtypes ---------------------------------------------------------------------------
@pytest.mark.parametrize("pdt, wdt", [(paddle.float16, wp.float16), (paddle.float32, wp.float32),
                                      (paddle.float64, wp.float64), (paddle.int8, wp.int8),
                                      (paddle.uint8, wp.uint8), (paddle.int16, wp.int16), (paddle.int32, wp.int32),
                                      (paddle.int64, wp.int64), (paddle.bool, wp.bool),
                                      (paddle.bfloat16, wp.bfloat16)])
def test_dtype_from_and_to_paddle(pdt, wdt):
    assert wp.dtype_from_paddle(pdt) is wdt
    assert wp.dtype_to_paddle(wdt) == pdt


@pytest.mark.parametrize("wdt, pdt", [(wp.uint16, paddle.int16), (wp.uint32, paddle.int32),
                                      (wp.uint64, paddle.int64), (float, paddle.float32), (int, paddle.int32)])
def test_unsigned_map_to_same_width_signed(wdt, pdt):
    assert wp.dtype_to_paddle(wdt) == pdt


@pytest.mark.parametrize("pdt, msg", [
    (paddle.complex64, r"^Cannot convert paddle.complex64 to a Warp type \(complex numbers have no Warp type\)$"),
    (paddle.complex128, r"complex numbers have no Warp type"),
    (paddle.uint32, r"^Cannot convert paddle.uint32 to a Warp type$"),
])
def test_dtype_from_paddle_errors(pdt, msg):
    with pytest.raises(TypeError, match=msg):
        wp.dtype_from_paddle(pdt)


def test_dtype_to_paddle_error():
    with pytest.raises(TypeError, match=r"^Cannot convert vec3f to a Paddle type$"):
        wp.dtype_to_paddle(wp.vec3)


# -- devices and streams -------------------------------------------------------------
def test_devices():
    cpu = wp.get_device("cpu")
    assert wp.device_from_paddle("cpu") is cpu
    assert wp.device_from_paddle(paddle.CPUPlace()) is cpu
    assert wp.device_from_paddle(paddle.ones([1]).place) is cpu  # a tensor's Place
    assert wp.device_to_paddle(cpu) == "cpu" and wp.device_to_paddle("cpu") == "cpu"
    assert isinstance(wp.device_from_paddle("cpu"), wp.context.Device)  # the guide's return type


def test_device_errors():
    with pytest.raises(TypeError, match=r"^device_from_paddle\(\) received an invalid argument - got 3\(<class "
                                        r"'int'>\), but expected one of:\n\* paddle\.base\.libpaddle\.Place"):
        wp.device_from_paddle(3)
    if not wp.is_cuda_available():
        with pytest.raises(RuntimeError, match=r"^Unsupported Paddle device gpu:0"):
            wp.device_from_paddle("gpu:0")


@pytest.mark.skipif(paddle.device.is_compiled_with_cuda(), reason="paddle's CPU build only")
def test_stream_from_paddle_needs_a_gpu():
    # Warp's error type: paddle's own TypeError for a device without CUDA streams
    with pytest.raises(TypeError, match=r"^stream_from_paddle: paddle has CUDA streams only on GPU devices "
                                        r"\('gpu', 'gpu:N', paddle\.CUDAPlace\), got 'cpu'"):
        wp.stream_from_paddle()
    with pytest.raises(TypeError, match=r"got 'cpu'"):
        wp.stream_from_paddle("cpu")


def test_context_init_is_the_guides_line():
    wp.context.init()  # (Warp 1.19 has no wp.context: AttributeError)
    assert wp.context.get_device("cpu") is wp.get_device("cpu")


# -- from_paddle ------------------------------------------------------------------------
def test_from_paddle_views_strides_and_vectors():
    t = paddle.arange(12, dtype=paddle.float32).reshape([3, 4])
    column = wp.from_paddle(t[:, 1])  # a strided view: its own offset and strides
    assert column.strides == (16,) and column.ptr == t.data_ptr() + 4
    np.testing.assert_array_equal(column.numpy(), [1.0, 5.0, 9.0])
    pts = wp.from_paddle(paddle.to_tensor(np.arange(6, dtype=np.float32).reshape(3, 2)), dtype=wp.vec2)
    assert pts.shape == (3,) and pts.dtype is wp.vec2
    out = wp.zeros(3, dtype=float)
    wp.launch(squares, 3, [pts, out])
    ref = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_allclose(out.numpy(), (ref ** 2).sum(axis=1))
    one = wp.from_paddle(paddle.to_tensor(2.5))  # a 0-d tensor: a 1-element array
    assert one.shape == (1,) and one.numpy()[0] == 2.5


@pytest.mark.parametrize("pdt, wdt", [(paddle.int32, wp.uint32), (paddle.int8, wp.uint8), (paddle.uint8, wp.int8),
                                      (paddle.bool, wp.uint8), (paddle.int64, wp.uint64)])
def test_from_paddle_integer_aliases(pdt, wdt):
    t = paddle.to_tensor(np.array([1, 0, 1], dtype=np.int64)).astype(pdt)
    a = wp.from_paddle(t, dtype=wdt)
    assert a.dtype is wdt and a.ptr == t.data_ptr()
    np.testing.assert_array_equal(a.numpy(), [1, 0, 1])


def test_from_paddle_errors():
    with pytest.raises(RuntimeError, match=r"^Cannot convert Paddle type paddle.float32 to Warp type int32$"):
        wp.from_paddle(paddle.ones([2]), dtype=wp.int32)
    with pytest.raises(RuntimeError, match=r"^Could not convert Paddle tensor with shape \[4, 2\] to Warp array "
                                           r"with dtype=vec3f, ensure that source inner shape is \(3,\)$"):
        wp.from_paddle(paddle.ones([4, 2]), dtype=wp.vec3)
    with pytest.raises(RuntimeError, match=r"because the source inner strides are not contiguous$"):
        wp.from_paddle(paddle.ones([4, 4])[:, ::2], dtype=wp.vec2)
    with pytest.raises(TypeError, match=r"^from_paddle expects a paddle.Tensor, got ndarray$"):
        wp.from_paddle(np.ones(2))
    with pytest.raises(ValueError):  # (Warp's: retain_grad needs an array that requires a gradient)
        wp.from_paddle(paddle.ones([2]), retain_grad=True)


def test_from_paddle_gradients():
    t = paddle.to_tensor(np.array([1.0, 2.0], dtype=np.float32))
    assert not wp.from_paddle(t).requires_grad  # stop_gradient=True: no gradient
    t.stop_gradient = False
    assert t.grad is None
    a = wp.from_paddle(t)  # allocates t.grad (zeros) and shares it
    assert a.requires_grad and a.grad.ptr == t.grad.data_ptr()
    np.testing.assert_array_equal(t.grad.numpy(), [0.0, 0.0])
    a.grad.fill_(3.0)
    np.testing.assert_array_equal(t.grad.numpy(), [3.0, 3.0])
    again = wp.from_paddle(t)  # an existing t.grad is wrapped, not replaced
    assert again.grad.ptr == a.grad.ptr
    g = paddle.full([2], 7.0)
    given = wp.from_paddle(paddle.ones([2]), grad=g)
    assert given.grad.ptr == g.data_ptr()
    wg = wp.zeros(2)
    assert wp.from_paddle(paddle.ones([2]), grad=wg, requires_grad=True).grad is wg


def test_from_paddle_gradient_through_a_tape():
    @wp.kernel
    def sum_squares(x: wp.array(dtype=float), loss: wp.array(dtype=float)):
        wp.atomic_add(loss, 0, x[wp.tid()] * x[wp.tid()])

    x = paddle.to_tensor(np.array([1.0, -2.0, 0.5], dtype=np.float32))
    x.stop_gradient = False
    loss = paddle.zeros([1])
    loss.stop_gradient = False
    wx, wl = wp.from_paddle(x), wp.from_paddle(loss)
    tape = wp.Tape()
    with tape:
        wp.launch(sum_squares, 3, [wx, wl])
    tape.backward(loss=wl)
    assert loss.item() == pytest.approx(5.25)
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * np.array([1.0, -2.0, 0.5]))


# -- to_paddle ---------------------------------------------------------------------------
def test_to_paddle_views_and_types():
    a = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    col = wp.to_paddle(a[:, 1])
    assert list(col.shape) == [3] and col.strides == [4] and col.data_ptr() == a.ptr + 4
    np.testing.assert_array_equal(col.numpy(), [1.0, 5.0, 9.0])
    tr = wp.to_paddle(a.transpose())
    np.testing.assert_array_equal(tr.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4).T)
    v = wp.to_paddle(wp.array(np.ones((2, 3), dtype=np.float32), dtype=wp.vec3))
    assert list(v.shape) == [2, 3]  # vectors as a trailing dimension
    u = wp.to_paddle(wp.array([1, 2, 65535], dtype=wp.uint16))  # the signed type of the width, same bits
    assert u.dtype == paddle.int16
    np.testing.assert_array_equal(u.numpy(), np.array([1, 2, 65535], dtype=np.uint16).view(np.int16))
    u32 = wp.to_paddle(wp.array([1, 2**32 - 1], dtype=wp.uint32))
    assert u32.dtype == paddle.int32 and u32.numpy().tolist() == [1, -1]
    b = wp.to_paddle(wp.array([1.5, -2.0], dtype=wp.bfloat16))
    assert b.dtype == paddle.bfloat16
    np.testing.assert_array_equal(b.astype(paddle.float32).numpy(), [1.5, -2.0])
    flags = wp.to_paddle(wp.array([True, False], dtype=wp.bool))
    assert flags.dtype == paddle.bool and flags.numpy().tolist() == [True, False]


def test_to_paddle_errors():
    with pytest.raises(RuntimeError, match=r"^to_paddle: Paddle tensors cannot have negative strides; call "
                                           r"\.contiguous\(\) first$"):
        wp.to_paddle(wp.array(np.arange(4, dtype=np.float32))[::-1])

    @wp.struct
    class Pair:
        a: float
        b: int

    with pytest.raises(RuntimeError, match=r"^Cannot convert structured Warp arrays to Paddle\.$"):
        wp.to_paddle(wp.zeros(2, dtype=Pair))
    with pytest.raises(TypeError, match=r"^to_paddle expects a wp.array, got ndarray$"):
        wp.to_paddle(np.ones(2))


def test_to_paddle_gradients():
    a = wp.array([1.0, 2.0], dtype=float)
    t = wp.to_paddle(a)
    assert t.stop_gradient and t.grad is None
    g = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
    tg = wp.to_paddle(g)
    assert not tg.stop_gradient and tg.grad.data_ptr() == g.grad.ptr
    g.grad.fill_(4.0)
    np.testing.assert_array_equal(tg.grad.numpy(), [4.0, 4.0])
    forced = wp.to_paddle(a, requires_grad=True)  # allocates the array's gradient
    assert a.requires_grad and forced.grad.data_ptr() == a.grad.ptr


def test_script_holding_to_paddle_tensors_exits_cleanly(tmp_path):
    script = tmp_path / "hold.py"
    script.write_text(
        "import warnings\nwarnings.simplefilter('ignore')\nimport paddle\nimport mlwarp as wp\n"
        "xs = wp.array([1.0, 2.0, 3.0], dtype=float, requires_grad=True)\n"
        "t = wp.to_paddle(xs)\nback = wp.from_paddle(t)\nopt = paddle.optimizer.Adam(parameters=[t])\n"
        "print(float(t.sum()), back.ptr == xs.ptr)\n")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(os.path.join(ROOT, "python")))
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["6.0", "True"]


# -- tensors straight into wp.launch --------------------------------------------------
def test_launch_writes_reach_paddle_tensors():
    # paddle's __array__ is a copy in memory paddle frees: launches must write the tensor's own memory
    n = 8
    x = paddle.arange(n, dtype=paddle.float32)
    y = paddle.ones([n], dtype=paddle.float32)
    for _ in range(10):
        wp.launch(saxpy, dim=n, inputs=[x, y, 1.0])
    np.testing.assert_array_equal(y.numpy(), 1.0 + 10.0 * np.arange(n))
    m = paddle.arange(12, dtype=paddle.float32).reshape([3, 4])
    out = paddle.zeros([4, 3]).T  # a transposed view: strides (4, 12)
    wp.launch(rows_plus_cols, (3, 4), [m, out])
    i, j = np.indices((3, 4))
    np.testing.assert_array_equal(out.numpy(), np.arange(12).reshape(3, 4) + i * 10 + j)
    ys = paddle.zeros([8])
    wp.launch(saxpy, 4, [x[::2], ys[1::2], 2.0])  # strided views with an offset
    np.testing.assert_array_equal(ys.numpy(), [0, 0, 0, 4, 0, 8, 0, 12])
    grads = paddle.ones([n])
    grads.stop_gradient = False  # tensors that require grad too
    wp.launch(saxpy, n, [x, grads, 1.0])
    np.testing.assert_array_equal(grads.numpy(), 1.0 + np.arange(n))


def test_launch_checks_paddle_tensors():
    with pytest.raises(wp.LaunchError, match=r"argument 'x' expects an array with dtype=float32 but passed array "
                                             r"has dtype=float64\.$"):
        wp.launch(saxpy, 2, [paddle.ones([2], dtype=paddle.float64), paddle.ones([2]), 1.0])
    with pytest.raises(wp.LaunchError, match=r"argument 'x' expects an array with 1 dimension\(s\) but the passed "
                                             r"array has 2 dimension\(s\)\.$"):
        wp.launch(saxpy, 2, [paddle.ones([2, 1]), paddle.ones([2]), 1.0])


def test_wp_array_of_a_paddle_tensor_copies_its_values():
    t = paddle.arange(6, dtype=paddle.float32).reshape([2, 3])
    a = wp.array(t[:, 1:])
    np.testing.assert_array_equal(a.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3)[:, 1:])
    t[0, 1] = 50.0
    assert a.numpy()[0, 0] == 1.0  # a copy


# -- the performance notes' four ways to pass tensors -----------------------------------
def _tensors(n, device):
    x_t = paddle.arange(n, dtype=paddle.float32).to(device=wp.device_to_paddle(device))
    y_t = paddle.ones([n], dtype=paddle.float32).to(device=wp.device_to_paddle(device))
    return x_t, y_t


def test_performance_notes_snippets():
    device, n = wp.get_device("cpu"), 16
    expected = 1.0 + 10.0 * np.arange(n)

    x_t, y_t = _tensors(n, device)  # converting in every iteration
    for i in range(10):
        x_w = wp.from_paddle(x_t)
        y_w = wp.from_paddle(y_t)
        wp.launch(saxpy, dim=n, inputs=[x_w, y_w, 1.0], device=device)
    np.testing.assert_array_equal(y_t.numpy(), expected)

    x_t, y_t = _tensors(n, device)  # converting once
    x_w = wp.from_paddle(x_t)
    y_w = wp.from_paddle(y_t)
    for i in range(10):
        wp.launch(saxpy, dim=n, inputs=[x_w, y_w, 1.0], device=device)
    np.testing.assert_array_equal(y_t.numpy(), expected)

    for n in range(1, 10):  # descriptors: return_ctype=True
        x_t, y_t = _tensors(n, device)
        x_ctype = wp.from_paddle(x_t, return_ctype=True)
        y_ctype = wp.from_paddle(y_t, return_ctype=True)
        wp.launch(saxpy, dim=n, inputs=[x_ctype, y_ctype, 1.0], device=device)
        np.testing.assert_array_equal(y_t.numpy(), 1.0 + np.arange(n))

    n = 16
    x, y = _tensors(n, device)  # tensors passed straight to the kernel
    for i in range(10):
        wp.launch(saxpy, dim=n, inputs=[x, y, 1.0], device=device)
    np.testing.assert_array_equal(y.numpy(), expected)


def test_return_ctype_descriptor_of_a_strided_view():
    t = paddle.arange(8, dtype=paddle.float32)
    out = paddle.zeros([4])
    wp.launch(saxpy, 4, [wp.from_paddle(t[1::2], return_ctype=True), wp.from_paddle(out, return_ctype=True), 3.0])
    np.testing.assert_array_equal(out.numpy(), 3.0 * np.arange(1, 8, 2))


# -- the DLPack section's Paddle lines ----------------------------------------------------
def test_dlpack_lines():
    warp_array = wp.array(np.arange(4, dtype=np.float32))
    paddle_tensor = paddle.utils.dlpack.from_dlpack(warp_array)  # the protocol
    assert paddle_tensor.data_ptr() == warp_array.ptr
    np.testing.assert_array_equal(paddle_tensor.numpy(), np.arange(4))
    warp_array3 = wp.from_dlpack(paddle.utils.dlpack.to_dlpack(paddle_tensor))  # capsules
    assert warp_array3.ptr == warp_array.ptr
    paddle_tensor2 = paddle.utils.dlpack.from_dlpack(wp.to_dlpack(warp_array))
    paddle_tensor2[0] = 9.0
    assert warp_array.numpy()[0] == 9.0
    t = paddle.arange(6, dtype=paddle.int32).reshape([2, 3])
    direct = wp.from_dlpack(t)  # a producer whose __dlpack_device__ gives None as the CPU's id
    assert direct.ptr == t.data_ptr() and direct.dtype is wp.int32
    np.testing.assert_array_equal(direct.numpy(), np.arange(6).reshape(2, 3))


# -- the two optimisation examples ---------------------------------------------------------
def _example(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _paddle_adam(start, iterations):
    """The reference: the guide's loop with the loss written in paddle (autograd's gradient)."""
    xs = paddle.to_tensor(start)
    xs.stop_gradient = False
    opt = paddle.optimizer.Adam(learning_rate=0.1, parameters=[xs])
    for _ in range(iterations):
        opt.clear_grad()
        (xs ** 2).sum().backward()
        opt.step()
    return xs.numpy()


@pytest.mark.parametrize("name", ["interop_paddle_adam_from_paddle", "interop_paddle_adam_to_paddle"])
def test_optimisation_examples_converge_like_paddle(name):
    start, end, losses = _example(name).optimize(iterations=200)
    assert losses[0] == pytest.approx(float((start.astype(np.float64) ** 2).sum()), rel=1e-5)
    assert losses[0] > 100.0 and losses[-1] < 1e-5  # 100 random points, about 2 each, to the origin
    assert all(b < a for a, b in zip(losses[:50], losses[1:51]))  # steady descent at the start
    np.testing.assert_allclose(end, _paddle_adam(start, 200), atol=1e-5)
