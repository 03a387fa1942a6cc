"""wp.zeros(shape, dtype) inside kernels and @wp.func: Warp's fixed-size arrays on the thread's stack
(wp.fixedarray). Values are checked against numpy / hand-computed results."""

import numpy as np
import pytest

import mlwarp as wp

ROWS = 3  # a captured constant is a constant shape


@wp.func
def _fill_rows(arr: wp.array2d[int]):
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i][j] = i * arr.shape[1] + j


@wp.kernel
def _table(out: wp.array2d[int]):
    t = wp.tid()
    arr = wp.zeros(shape=(2, 3), dtype=int)
    _fill_rows(arr)  # a @wp.func taking wp.array2d writes it
    row = arr[1]
    out[t, 0] = arr[0, 1] + row[2] * 10 + t * 100
    out[t, 1] = arr.shape[0] * 10 + arr.shape[1]
    out[t, 2] = len(row)


def test_zeros_in_a_kernel_is_a_per_thread_array():
    out = wp.zeros((8, 3), dtype=int)
    wp.launch(_table, dim=8, inputs=[out])
    np.testing.assert_array_equal(out.numpy()[:, 0], 1 + 50 + 100 * np.arange(8))
    np.testing.assert_array_equal(out.numpy()[:, 1], 23)
    np.testing.assert_array_equal(out.numpy()[:, 2], 3)


@wp.kernel
def _vectors(out: wp.array[wp.vec3]):
    t = wp.tid()
    acc = wp.zeros(4, dtype=wp.vec3)
    acc[t % 4] = wp.vec3(1.0, 2.0, 3.0)
    wp.atomic_add(acc, 0, wp.vec3(1.0, 1.0, 1.0))
    acc[1] += wp.vec3(0.5, 0.5, 0.5)
    out[t] = acc[0] + acc[1] * 10.0


def test_vector_elements_and_atomics_stay_in_the_thread():
    out = wp.zeros(8, dtype=wp.vec3)
    wp.launch(_vectors, dim=8, inputs=[out])
    expected = []
    for t in range(8):
        acc = np.zeros((4, 3), dtype=np.float32)
        acc[t % 4] = [1, 2, 3]
        acc[0] += 1
        acc[1] += 0.5
        expected.append(acc[0] + acc[1] * 10)
    np.testing.assert_array_equal(out.numpy(), np.array(expected, dtype=np.float32))


@wp.kernel
def _rezeroed_in_loops(x: wp.array[float], out: wp.array[float]):
    t = wp.tid()
    s = float(0.0)
    for r in range(20):
        buf = wp.zeros(shape=(ROWS, 4), dtype=float)  # zero again each iteration
        buf[r % ROWS, 3] += x[t]
        s += buf[r % ROWS, 3] + buf[(r + 1) % ROWS, 3]
    out[t] = s


def test_zeroed_at_each_call_and_many_threads_do_not_exhaust_the_stack():
    n = 300_000  # each thread's array is released when it finishes (its stack pointer is restored)
    x = wp.array(np.arange(n, dtype=np.float32) % 7)
    out = wp.zeros(n)
    wp.launch(_rezeroed_in_loops, dim=n, inputs=[x, out])
    np.testing.assert_array_equal(out.numpy(), 20 * (np.arange(n, dtype=np.float32) % 7))


@wp.func
def _sum_of(arr: wp.fixedarray(shape=4, dtype=float)):
    s = float(0.0)
    for i in range(arr.shape[0]):
        s += arr[i]
    return s


@wp.kernel
def _annotated(out: wp.array[float]):
    t = wp.tid()
    a = wp.zeros(4, dtype=float)
    for i in range(4):
        a[i] = float(t + i)
    out[t] = _sum_of(a)


def test_fixedarray_annotation_is_an_array_parameter():
    out = wp.zeros(3)
    wp.launch(_annotated, dim=3, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), [6, 10, 14])
    ann = wp.fixedarray(shape=(2, 3), dtype=int)
    assert ann.shape == (2, 3) and ann.ndim == 2 and ann.dtype is wp.int32


@wp.kernel
def _overrun(out: wp.array[float]):
    t = wp.tid()
    buf = wp.zeros(3, dtype=float)
    buf[t] = 1.0
    out[0] = buf[0]


def test_debug_mode_checks_bounds():
    wp.config.mode = "debug"
    try:
        with pytest.raises(wp.KernelBoundsError, match=r"index \[3\] is out of bounds writing an array of shape "
                                                        r"\(3,\) \(thread 3\)"):
            wp.launch(_overrun, dim=4, inputs=[wp.zeros(1)])
            wp.synchronize()
    finally:
        wp.config.mode = "release"


def _compile_error(kernel, *inputs):
    with pytest.raises(wp.CompileError) as e:
        wp.launch(kernel, dim=1, inputs=list(inputs))
    return str(e.value)


def test_shape_must_be_constant():
    @wp.kernel
    def runtime_shape(out: wp.array[int]):
        t = wp.tid()
        wp.zeros(shape=(t,), dtype=int)

    assert _compile_error(runtime_shape, wp.zeros(1, dtype=int)).endswith(
        "the `shape` argument must be specified as a constant when zero-initializing an array")


def test_bad_arguments():
    @wp.kernel
    def struct_dtype(out: wp.array[int]):
        wp.zeros(2, dtype=wp.array)

    @wp.kernel
    def extra(out: wp.array[int]):
        wp.zeros(2, dtype=int, device="cpu")

    assert _compile_error(struct_dtype, wp.zeros(1, dtype=int)).endswith(
        "wp.zeros() in a kernel needs a scalar, vector, matrix or struct dtype")
    assert _compile_error(extra, wp.zeros(1, dtype=int)).endswith(
        "wp.zeros() in a kernel takes shape and dtype, not 'device'")


@wp.kernel
def _squared(x: wp.array[float], loss: wp.array[float]):
    t = wp.tid()
    buf = wp.zeros(2, dtype=float)
    buf[0] = x[t] * x[t]
    wp.atomic_add(loss, 0, buf[0])


def test_forward_runs_and_the_adjoint_says_why_it_cannot_be_built():
    x = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32), requires_grad=True)
    loss = wp.zeros(1, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_squared, dim=3, inputs=[x, loss])
    assert loss.numpy()[0] == 14.0
    with pytest.raises(wp.CompileError, match="cannot differentiate an access to an array that is neither a kernel "
                                              "argument nor a field of a struct argument"):
        tape.backward(loss)


def test_cuda_keeps_stack_arrays_in_local_memory():
    from mlwarp.launching import cuda_compile

    if cuda_compile.compiler_available() is False:
        pytest.skip("the MLIR compiler is not installed")
    ptx = cuda_compile.to_mlir(_vectors, "ptx", 90)
    # the array's accesses and its atomics stay thread-local (no global address space), the output is global
    assert "stacksave" in ptx and "st.local" in ptx and "ld.local" in ptx
    assert "atom." not in ptx
    assert "st.global" in ptx  # out[t] = ...


@wp.func
def _counting(n_unused: int):
    arr = wp.zeros(shape=2, dtype=int)
    for i in range(arr.shape[0]):
        arr[i] = i + 7
    return arr


@wp.func
def _grid() -> wp.fixedarray(shape=(2, 3), dtype=int):
    arr = wp.zeros(shape=(2, 3), dtype=int)
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i][j] = i * arr.shape[1] + j
    return arr


@wp.kernel
def _returned(out: wp.array[int]):
    a = _counting(0)
    b = _grid()
    out[0] = a[0] * 100 + a[1]
    out[1] = b[1, 2] * 10 + b[0, 1]


def test_a_func_returns_its_fixed_size_array():
    out = wp.zeros(2, dtype=int)
    wp.launch(_returned, dim=1, inputs=[out])
    assert out.numpy().tolist() == [708, 51]


@wp.struct
class _Rec:
    offset: int
    dist: float
    v: wp.vec3
    h: wp.float16
    d: wp.float64  # 8-aligned after the 22 bytes before it: the element is 32 bytes, as ctypes lays it out


@wp.func
def _records():
    arr = wp.zeros(shape=(2, 3), dtype=_Rec)
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i][j].offset = i * arr.shape[1] + j
            arr[i][j].dist = float(arr[i][j].offset) / 5.0
            arr[i][j].d = wp.float64(arr[i][j].offset) * wp.float64(2.0)
    return arr


@wp.kernel
def _read_records(out: wp.array[float], d: wp.array[wp.float64]):
    arr = _records()
    for i in range(2):
        for j in range(3):
            out[i * 3 + j] = arr[i][j].dist + float(arr[i][j].offset) * 10.0 + arr[i, j].v[1]
            d[i * 3 + j] = arr[i, j].d


def test_struct_elements():
    out, d = wp.zeros(6), wp.zeros(6, dtype=wp.float64)
    wp.launch(_read_records, dim=1, inputs=[out, d])
    k = np.arange(6)
    np.testing.assert_allclose(out.numpy(), (k / 5.0).astype(np.float32) + k * 10, rtol=1e-6)
    np.testing.assert_array_equal(d.numpy(), 2.0 * k)


def test_returning_it_as_a_wp_array_is_refused_as_in_warp():
    # Warp's words (warp-lang 1.19): its stack storage would die with the function
    @wp.func
    def as_array2d() -> wp.array2d[int]:
        arr = wp.zeros(shape=(2, 3), dtype=int)
        return arr

    @wp.func
    def as_array_ndim() -> wp.array(ndim=2, dtype=wp.vec3):
        return wp.zeros(shape=(2, 3), dtype=wp.vec3)

    @wp.kernel(module="unique")
    def first():
        as_array2d()

    @wp.kernel(module="unique")
    def second():
        as_array_ndim()

    for kernel, name, dtype in [(first, "as_array2d", "int32"), (second, "as_array_ndim", "vec3f")]:
        with pytest.raises(wp.WarpCodegenError) as info:
            wp.launch(kernel, 1)
        assert str(info.value).endswith(f"The function `{name}` returns a fixed-size array whereas it has its return "
                                        f"type annotated as `Array[{dtype}]`.")
