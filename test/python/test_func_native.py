"""@wp.func_native: C++ snippets compiled with the kernel (CPU: the host's C++ compiler) and their adjoints, against
numpy references and closed forms; the compile error of a bad snippet; the kernel cache and snippet redefinition.
CUDA compile checks are in test_func_native_cuda.py."""

import os

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.compiler.native.toolchain import host_compiler

SAXPY = "out[tid] = a * x[tid] + y[tid];"
SAXPY_ADJ = """
    adj_a += x[tid] * adj_out[tid];
    adj_x[tid] += a * adj_out[tid];
    adj_y[tid] += adj_out[tid];
"""


@wp.func_native(SAXPY, SAXPY_ADJ)
def native_saxpy(a: wp.float32, x: wp.array[wp.float32], y: wp.array[wp.float32], out: wp.array[wp.float32],
                 tid: int): ...


@wp.kernel
def saxpy_kernel(a: wp.float32, x: wp.array[wp.float32], y: wp.array[wp.float32], out: wp.array[wp.float32]):
    tid = wp.tid()
    native_saxpy(a, x, y, out, tid)


def test_saxpy_forward_and_adjoint_snippets():
    rng = np.random.default_rng(1)
    xs, ys, g = (rng.standard_normal(64).astype(np.float32) for _ in range(3))
    x = wp.array(xs, requires_grad=True)
    y = wp.array(ys, requires_grad=True)
    out = wp.zeros(64, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(saxpy_kernel, dim=64, inputs=[1.5, x, y, out])
    np.testing.assert_allclose(out.numpy(), 1.5 * xs + ys, rtol=1e-6)
    tape.backward(grads={out: wp.array(g)})
    # d(a x + y)/dx = a, d/dy = 1 (the adjoint snippet's rules)
    np.testing.assert_allclose(x.grad.numpy(), 1.5 * g, rtol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), g, rtol=1e-6)


@wp.func_native("float sq = x * x;\nreturn sq;", "adj_x += 2 * x * adj_ret;")
def native_square(x: float) -> float: ...


@wp.kernel
def square_kernel(i: wp.array[float], o: wp.array[float]):
    tid = wp.tid()
    o[tid] = native_square(i[tid]) + 2.0 * native_square(1.5)  # (a literal converts to the parameter's float32)


def test_returned_value_and_adj_ret():
    xs = np.linspace(-2.0, 2.0, 9).astype(np.float32)
    x = wp.array(xs, requires_grad=True)
    y = wp.zeros_like(x)
    tape = wp.Tape()
    with tape:
        wp.launch(square_kernel, dim=9, inputs=[x, y])
    np.testing.assert_allclose(y.numpy(), xs * xs + 4.5, rtol=1e-6)
    y.grad = wp.ones(9, dtype=float)
    tape.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * xs, rtol=1e-6)


@wp.func_native("return wp::vec_t<3, wp::float32>(x, 2.0f * x, wp::length(v)) + wp::cross(v, u);")
def native_vec(x: wp.float32, v: wp.vec3, u: wp.vec3) -> wp.vec3: ...


@wp.func_native("return m * wp::transpose(m) + wp::mat_t<2, 2, wp::float32>(x, 1.0f, 2.0f, x);")
def native_mat(x: wp.float32, m: wp.mat22) -> wp.mat22: ...


@wp.func_native("return wp::transform_point(t, p) + wp::quat_rotate(q, p) + wp::vec3(q[3], t.q.w, t[0]);")
def native_transform(t: wp.transform, q: wp.quat, p: wp.vec3) -> wp.vec3: ...


@wp.kernel
def composite_kernel(x: wp.array[float], v: wp.array[wp.vec3], m: wp.array[wp.mat22], t: wp.array[wp.transform],
                     q: wp.array[wp.quat], ov: wp.array[wp.vec3], om: wp.array[wp.mat22], ot: wp.array[wp.vec3]):
    i = wp.tid()
    ov[i] = native_vec(x[i], v[i], wp.vec3(0.0, 0.0, 1.0))
    om[i] = native_mat(x[i], m[i])
    ot[i] = native_transform(t[i], q[i], v[i])


def _quat_rotate(q, p):
    u, w = q[:3], q[3]
    return p * (2 * w * w - 1) + np.cross(u, p) * w * 2 + u * np.dot(u, p) * 2


def test_vector_matrix_quaternion_transform_layouts():
    rng = np.random.default_rng(2)
    n = 5
    xs = rng.standard_normal(n).astype(np.float32)
    vs = rng.standard_normal((n, 3)).astype(np.float32)
    ms = rng.standard_normal((n, 2, 2)).astype(np.float32)
    qs = rng.standard_normal((n, 4)).astype(np.float32)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    ts = np.concatenate([rng.standard_normal((n, 3)), qs[::-1]], axis=1).astype(np.float32)
    ov, om, ot = wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.mat22), wp.zeros(n, dtype=wp.vec3)
    wp.launch(composite_kernel, n, [wp.array(xs), wp.array(vs, dtype=wp.vec3), wp.array(ms, dtype=wp.mat22),
                                    wp.array(ts, dtype=wp.transform), wp.array(qs, dtype=wp.quat), ov, om, ot])
    z = np.array([0.0, 0.0, 1.0])
    want_v = np.stack([xs, 2 * xs, np.linalg.norm(vs, axis=1)], axis=1) + np.cross(vs, z)
    np.testing.assert_allclose(ov.numpy(), want_v, rtol=1e-5, atol=1e-6)
    want_m = ms @ ms.transpose(0, 2, 1) + np.stack([np.stack([xs, np.ones(n)], 1), np.stack([2 * np.ones(n), xs], 1)],
                                                   1)
    np.testing.assert_allclose(om.numpy(), want_m, rtol=1e-5, atol=1e-6)
    want_t = np.stack([ts[i, :3] + _quat_rotate(ts[i, 3:], vs[i]) + _quat_rotate(qs[i], vs[i])
                       + np.array([qs[i, 3], ts[i, 6], ts[i, 0]]) for i in range(n)])
    np.testing.assert_allclose(ot.numpy(), want_t, rtol=1e-5, atol=1e-5)


@wp.func_native("""
    for (int j = 0; j < a.shape[1]; ++j) {
        wp::index(a, i, j) = wp::index(a, i, j) * 2.0f + float(a.ndim);
        wp::atomic_add(total, 0, wp::index(a, i, j));
    }
    *wp::address(rows, i) = a.shape[1] + a.strides[0] / int(sizeof(float));
""")
def native_rows(a: wp.array2d[float], total: wp.array[float], rows: wp.array[wp.int32], i: int): ...


@wp.kernel
def rows_kernel(a: wp.array2d[float], total: wp.array[float], rows: wp.array[wp.int32]):
    native_rows(a, total, rows, wp.tid())


def test_arrays_index_address_atomic_and_strides():
    rng = np.random.default_rng(3)
    base = rng.standard_normal((6, 8)).astype(np.float32)
    full = wp.array(base)
    view = full[1:5, ::2]  # a strided view: rows 1..4, every other column (stride 8 floats, then 2)
    total = wp.zeros(1, dtype=float)
    rows = wp.zeros(4, dtype=wp.int32)
    wp.launch(rows_kernel, 4, [view, total, rows])
    want = base.copy()
    want[1:5, ::2] = base[1:5, ::2] * 2 + 2
    np.testing.assert_allclose(full.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(total.numpy()[0], want[1:5, ::2].sum(), rtol=1e-5)
    np.testing.assert_array_equal(rows.numpy(), [4 + 8] * 4)


@wp.func_native("x = x + 5;")
def native_add_to_ref(x: wp.ref[wp.int32]): ...


@wp.kernel(enable_backward=False)
def ref_kernel(result: wp.array[wp.int32]):
    local = wp.int32(10)
    native_add_to_ref(local)
    result[0] = local
    native_add_to_ref(result[1])
    for _ in range(3):  # a loop carries the local the snippet changes
        native_add_to_ref(local)
    result[2] = local


def test_ref_parameters_write_back():
    result = wp.zeros(3, dtype=wp.int32)
    wp.launch(ref_kernel, 1, [result])
    np.testing.assert_array_equal(result.numpy(), [15, 5, 30])


@wp.func_native("x = y * 2.0f;", adj_snippet="adj_y += 2.0f * adj_x;\nadj_x = 0.0f;")
def native_store_double(x: wp.ref[wp.float32], y: wp.float32): ...


@wp.kernel
def ref_adjoint_kernel(x: wp.array[wp.float32], out: wp.array[wp.float32], dst: wp.array[wp.float32]):
    i = wp.tid()
    tmp = wp.float32(0.0)
    native_store_double(tmp, x[i])
    out[i] = tmp * tmp
    native_store_double(dst[i], x[i])


def test_ref_parameter_adjoints():
    xs = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    x = wp.array(xs, requires_grad=True)
    out = wp.zeros(3, dtype=wp.float32, requires_grad=True)
    dst = wp.zeros(3, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(ref_adjoint_kernel, 3, [x], [out, dst])
    np.testing.assert_allclose(out.numpy(), (2 * xs) ** 2)
    np.testing.assert_allclose(dst.numpy(), 2 * xs)
    tape.backward(grads={out: wp.ones(3, dtype=wp.float32), dst: wp.full(3, 10.0, dtype=wp.float32)})
    # d(out)/dx = 8 x; d(dst)/dx = 2, weighted 10; the adjoint snippet clears dst's own adjoint
    np.testing.assert_allclose(x.grad.numpy(), 8 * xs + 20.0, rtol=1e-6)


def test_ref_parameter_without_adj_snippet_refuses_a_backward_pass():
    @wp.func_native("x = x + 1.0f;")
    def native_no_adj(x: wp.ref[wp.float32]): ...

    @wp.kernel(module="unique")
    def with_backward(arr: wp.array[wp.float32]):
        native_no_adj(arr[wp.tid()])

    with pytest.raises(wp.CompileError, match=r"test_func_native\.py:\d+: in 'with_backward': the native function "
                                              r"'native_no_adj' takes a wp\.ref\[T\] parameter and has no "
                                              r"adj_snippet"):
        wp.launch(with_backward, 1, [wp.zeros(1, dtype=wp.float32, requires_grad=True)])

    forward_only = wp.kernel(with_backward.func, module="unique", enable_backward=False)
    arr = wp.zeros(2, dtype=wp.float32)
    wp.launch(forward_only, 2, [arr])
    np.testing.assert_array_equal(arr.numpy(), [1.0, 1.0])


@wp.func_native("y[tid] = powf(x[tid], 2.0f);", adj_snippet="adj_x[tid] += 2.0f * adj_y[tid];",
                replay_snippet="y[tid] = x[tid];")
def native_square_replayed(x: wp.array[float], y: wp.array[float], tid: int): ...


@wp.kernel
def replay_kernel(x: wp.array[float], y: wp.array[float], z: wp.array[float]):
    tid = wp.tid()
    native_square_replayed(x, y, tid)
    z[tid] = wp.log(y[tid])


def test_replay_snippet_runs_in_the_adjoint_replay():
    """Warp's test_replay_simplification: the replay leaves y = x (not x^2), so d log(y)/dy = 1/x and the adjoint
    snippet gives 2 / x."""
    xs = 1.0 + np.arange(8, dtype=np.float32)
    x = wp.array(xs, requires_grad=True)
    y, z = wp.zeros_like(x), wp.zeros_like(x)
    tape = wp.Tape()
    with tape:
        wp.launch(replay_kernel, 8, [x, y], [z])
    np.testing.assert_allclose(z.numpy(), np.log(xs ** 2), rtol=1e-6)
    tape.backward(grads={z: wp.ones(8, dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), 2.0 / xs, rtol=1e-6)


@wp.func_native("""
#if defined(__CUDA_ARCH__)
    return __fsqrt_rn(x) + (float)__shfl_sync(0xffffffffu, 0, 0);
#else
    volatile float r = ::sqrtf(x);
    return r + 1000.0f;
#endif
""")
def native_fallback(x: float) -> float: ...


@wp.func_native("""
uint32_t i = reinterpret_cast<uint32_t&>(f);
uint32_t mask = (uint32_t)(-(int)(i >> 31)) | 0x80000000;
return i ^ mask;
""")
def native_float_flip(f: float) -> wp.uint32: ...


@wp.func_native("return static_cast<int32_t>(packed & 0xFFFFFFFFull) + (int32_t)h;")
def native_low_bits(packed: wp.uint64, h: wp.float16) -> int: ...


@wp.func
def through_a_func(x: float) -> float:
    return native_fallback(x) * 2.0


@wp.kernel
def scalar_kernel(f: wp.array[float], packed: wp.array[wp.uint64], flipped: wp.array[wp.uint32],
                  low: wp.array[int], roots: wp.array[float]):
    i = wp.tid()
    flipped[i] = native_float_flip(f[i])
    low[i] = native_low_bits(packed[i], wp.float16(3.0))
    roots[i] = through_a_func(wp.abs(f[i]))


def test_cpu_fallback_of_cuda_snippets_and_integer_types():
    fs = np.array([4.0, -1.0, 0.0, 2.5], dtype=np.float32)
    packed = np.array([2**40 + 7, 5, 2**33, 2**32 - 1], dtype=np.uint64)
    flipped, low, roots = wp.zeros(4, dtype=wp.uint32), wp.zeros(4, dtype=int), wp.zeros(4, dtype=float)
    wp.launch(scalar_kernel, 4, [wp.array(fs), wp.array(packed, dtype=wp.uint64), flipped, low, roots])
    bits = fs.view(np.uint32)
    np.testing.assert_array_equal(flipped.numpy(), np.where(bits >> 31, ~bits, bits | 0x80000000).astype(np.uint32))
    np.testing.assert_array_equal(low.numpy(), (packed & 0xFFFFFFFF).astype(np.uint32).view(np.int32) + 3)
    np.testing.assert_allclose(roots.numpy(), (np.sqrt(np.abs(fs)) + 1000.0) * 2.0, rtol=1e-6)


@wp.func_native("return a + 2.0f;", adj_snippet="adj_a += adj_ret;")
def native_add_two(a: float) -> float: ...


@wp.func
def calls_native_with_custom_grad(x: float):
    return native_add_two(x) * 3.0


@wp.func_grad(calls_native_with_custom_grad)
def adj_calls_native_with_custom_grad(x: float, adj_ret: float):
    wp.adjoint[x] += native_add_two(1.0) * adj_ret  # 3.0, from the snippet


@wp.kernel
def custom_grad_kernel(inputs: wp.array[float], outputs: wp.array[float]):
    i = wp.tid()
    outputs[i] = calls_native_with_custom_grad(inputs[i])


def test_native_calls_inside_a_function_with_a_custom_gradient():
    xs = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    x = wp.array(xs, requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(custom_grad_kernel, 3, [x], [y])
    np.testing.assert_allclose(y.numpy(), (xs + 2) * 3)
    tape.backward(grads={y: wp.ones(3, dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0, 3.0])


def test_snippet_compile_error_names_the_users_line():
    @wp.func_native("""
    float y = x * 2.0f;
    return y + undefined_name;
""")
    def broken(x: float) -> float: ...

    @wp.kernel(module="unique")
    def calls_broken(a: wp.array[float]):
        a[0] = broken(a[0])

    line = broken.func.__code__.co_firstlineno + 2  # the decorator's line, the `float y` line, then this one
    with pytest.raises(wp.CompileError) as info:
        wp.launch(calls_broken, 1, [wp.zeros(1, dtype=float)])
    e = info.value
    assert (e.filename, e.lineno, e.function) == (__file__, line, "broken")
    tool = os.path.basename(host_compiler())
    reason = {"clang++": "use of undeclared identifier 'undefined_name'"}.get(
        tool, "'undefined_name' was not declared in this scope")  # (gcc's words, in the C locale)
    first, *rest = str(e).splitlines()
    assert first == f"{__file__}:{line}: in 'broken': the native snippet of 'broken' does not compile ({tool}): {reason}"
    assert any(r.startswith(f"{__file__}:{line}:") for r in rest)  # the compiler's own output follows


def test_unsupported_parameter_and_return_types():
    @wp.struct
    class Pair:
        x: wp.float32
        y: wp.float32

    @wp.func_native("return {};")
    def make_pair(a: wp.float32) -> Pair: ...

    @wp.func_native("return p.x;")
    def take_pair(p: Pair) -> float: ...

    @wp.kernel(module="unique")
    def returns_struct(a: wp.array[wp.float32]):
        p = make_pair(a[0])
        a[0] = p.x

    @wp.kernel(module="unique")
    def takes_struct(a: wp.array[wp.float32]):
        a[0] = take_pair(Pair())

    with pytest.raises(wp.CompileError, match=r"in 'returns_struct': the native function 'make_pair' has an "
                                              r"unsupported return type Pair"):
        wp.launch(returns_struct, 1, [wp.zeros(1, dtype=float)])
    with pytest.raises(wp.CompileError, match=r"in 'takes_struct': parameter 'p' of the native function 'take_pair' "
                                              r"has type Pair, which mlwarp cannot pass to C\+\+"):
        wp.launch(takes_struct, 1, [wp.zeros(1, dtype=float)])


def test_redefined_snippet_recompiles_and_the_cache_key_holds_the_snippet():
    @wp.func_native("out[tid] = x[tid] + 1;")
    def increment(x: wp.array[wp.int32], out: wp.array[wp.int32], tid: int): ...

    first = increment

    @wp.kernel  # (in this file's module, which a redefinition marks modified: Warp's test_recompile_snippet)
    def inc_kernel(x: wp.array[wp.int32], out: wp.array[wp.int32]):
        tid = wp.tid()
        increment(x, out, tid)

    x = wp.array(np.arange(4, dtype=np.int32))
    out = wp.zeros(4, dtype=wp.int32)
    wp.launch(inc_kernel, 4, [x, out])
    np.testing.assert_array_equal(out.numpy(), [1, 2, 3, 4])
    key = inc_kernel.cache_key("cpu")

    @wp.func_native("out[tid] = x[tid] + 2;")
    def increment(x: wp.array[wp.int32], out: wp.array[wp.int32], tid: int): ...  # noqa: F811

    assert first._wp_fingerprint_() != increment._wp_fingerprint_()
    wp.launch(inc_kernel, 4, [x, out])
    np.testing.assert_array_equal(out.numpy(), [2, 3, 4, 5])
    assert inc_kernel.cache_key("cpu") != key


@wp.func_native("*(float*)ptr += 1.0f;")
def native_increment_at(ptr: wp.uint64): ...


@wp.struct
class Box:
    value: wp.float32
    other: wp.int32


@wp.kernel(enable_backward=False)
def address_kernel(arr: wp.array[wp.float32], result: wp.array[wp.float32]):
    i = wp.tid()
    native_increment_at(wp.address_of(arr[i]))  # an element's own address
    x = wp.float32(10.0)
    native_increment_at(wp.address_of(x))  # a local's: the address of its copy, read back after the call
    box = Box()
    box.value = wp.float32(4.0)
    native_increment_at(wp.address_of(box.value))
    v = wp.vec3(1.0, 2.0, 3.0)
    native_increment_at(wp.address_of(v.y))
    result[i] = x * 1000.0 + box.value * 100.0 + v.y * 10.0 + v.z


def test_address_of_arguments():
    arr = wp.array([1.0, 2.0, 3.0], dtype=wp.float32)
    result = wp.zeros(3, dtype=wp.float32)
    wp.launch(address_kernel, 3, [arr, result])
    np.testing.assert_allclose(arr.numpy(), [2.0, 3.0, 4.0])
    np.testing.assert_allclose(result.numpy(), [11000.0 + 500.0 + 30.0 + 3.0] * 3)
