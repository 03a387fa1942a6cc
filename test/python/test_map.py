"""wp.map: functions, builtins and lambdas mapped over arrays with numpy broadcasting, against numpy."""

import importlib
import re

import numpy as np
import pytest

import mlwarp as wp

map_module = importlib.import_module("mlwarp.algorithms.map")


@wp.struct
class Pair:
    a: float
    b: float


@wp.func
def pair_sum(x: Pair, y: Pair):
    s = Pair()
    s.a = x.a + y.a
    s.b = x.b + y.b
    return s


@wp.func
def affine(x: float, scale: float):
    return scale * x - 1.0


@wp.func
def split(x: float):
    return x + 2.0, x * 3.0, wp.vec3(x, x + 1.0, x + 2.0)


@wp.func
def only_int(i: int):
    return 2 * i


@wp.func
def nothing(x: float):
    pass


def _f32(a):
    return wp.array(np.asarray(a, dtype=np.float32))


@pytest.mark.parametrize("sa, sb", [((1, 3, 1, 4), (5, 4)), ((5, 4), (1, 3, 1, 4)), ((3, 1), (3,)), ((4,), (4,)),
                                    ((2, 1, 3), (1, 4, 1))])
def test_broadcasting_matches_numpy(sa, sb):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(sa).astype(np.float32)
    y = rng.standard_normal(sb).astype(np.float32)
    out = wp.map(wp.add, _f32(x), _f32(y))
    expected = x + y
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


def test_three_inputs_and_a_scalar():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    z = np.array([[10.0], [20.0]], dtype=np.float32)
    out = wp.map(lambda a, b, c, d: a * b + c - d, _f32(x), _f32(y), _f32(z), 0.25)
    np.testing.assert_allclose(out.numpy(), x * y + z - 0.25, rtol=1e-6)


@pytest.mark.parametrize("dtype", [wp.float64, wp.int32, wp.int64, wp.float16])
def test_output_dtype_follows_the_inputs(dtype):
    np_dtype = wp.dtype_to_numpy(dtype)
    x = np.arange(1, 7, dtype=np_dtype)
    y = np.arange(7, 13, dtype=np_dtype)
    out = wp.map(wp.mul, wp.array(x, dtype=dtype), wp.array(y, dtype=dtype))
    assert out.dtype is dtype
    np.testing.assert_array_equal(out.numpy(), x * y)


def test_builtins_with_scalar_arguments():
    xs = np.array([-10.0, -0.2, 0.3, 8.0], dtype=np.float32)
    np.testing.assert_array_equal(wp.map(wp.clamp, _f32(xs), -0.5, 0.5).numpy(), np.clip(xs, -0.5, 0.5))
    conds = wp.array([True, False, True], dtype=bool)
    np.testing.assert_array_equal(wp.map(wp.where, conds, 1.0, 0.0).numpy(), [1.0, 0.0, 1.0])
    np.testing.assert_allclose(wp.map(wp.sin, _f32(xs)).numpy(), np.sin(xs), rtol=1e-6)


def test_vector_results_and_composite_arguments():
    pts = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)
    lengths = wp.map(wp.length, wp.array(pts, dtype=wp.vec3))
    assert lengths.dtype is wp.float32
    np.testing.assert_allclose(lengths.numpy(), np.linalg.norm(pts, axis=1), rtol=1e-6)
    # a transform passed to every element: a pure translation moves every point by it
    tf = wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat_identity())
    moved = wp.map(wp.transform_point, tf, wp.array(pts, dtype=wp.vec3))
    assert moved.dtype is wp.vec3
    np.testing.assert_allclose(moved.numpy(), pts + [1.0, 2.0, 3.0], rtol=1e-6)


def test_wp_func_lambda_closure_and_python_function():
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_allclose(wp.map(affine, _f32(x), 3.0).numpy(), 3.0 * x - 1.0)
    offset = 4.0
    np.testing.assert_allclose(wp.map(lambda a: a + offset, _f32(x)).numpy(), x + 4.0)
    offset = -1.5  # the same lambda code with another captured value
    np.testing.assert_allclose(wp.map(lambda a: a + offset, _f32(x)).numpy(), x - 1.5)

    def cube_plus(a, b):
        return a * a * a + b

    np.testing.assert_allclose(wp.map(cube_plus, _f32(x), 1.0).numpy(), x ** 3 + 1.0)
    # a multi-line lambda calling builtins
    out = wp.map(lambda a: (
        wp.length(wp.vec3(a, a + 1.0, a + 2.0))  # a comment inside
        + wp.clamp(a, 0.5, 1.5)), _f32(x))
    expected = np.sqrt(x ** 2 + (x + 1) ** 2 + (x + 2) ** 2) + np.clip(x, 0.5, 1.5)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_tuple_results_fill_several_outputs():
    x = np.arange(4, dtype=np.float32)
    r0, r1, r2 = wp.map(split, _f32(x))
    np.testing.assert_array_equal(r0.numpy(), x + 2.0)
    np.testing.assert_array_equal(r1.numpy(), x * 3.0)
    assert r2.dtype is wp.vec3
    np.testing.assert_array_equal(r2.numpy(), np.stack([x, x + 1.0, x + 2.0], axis=1))
    o0, o1 = wp.empty(4, dtype=wp.float32), wp.empty(4, dtype=wp.float32)
    got = wp.map(lambda a: (a - 1.0, a * a), _f32(x), out=[o0, o1])
    assert got[0] is o0 and got[1] is o1
    np.testing.assert_array_equal(o0.numpy(), x - 1.0)
    np.testing.assert_array_equal(o1.numpy(), x * x)


def test_structs():
    xs = wp.array([Pair(a=1.0, b=2.0), Pair(a=3.0, b=4.0)], dtype=Pair)
    ys = wp.array([Pair(a=10.0, b=20.0), Pair(a=30.0, b=40.0)], dtype=Pair)
    zs = wp.map(pair_sum, xs, ys)
    assert zs.dtype is Pair
    got = zs.numpy()
    np.testing.assert_array_equal(got["a"], [11.0, 33.0])
    np.testing.assert_array_equal(got["b"], [22.0, 44.0])


def test_out_in_place():
    xs = _f32([-1.0, 0.0, 1.0])
    same = wp.map(wp.clamp, xs, -0.5, 0.5, out=xs)
    assert same is xs
    np.testing.assert_array_equal(xs.numpy(), [-0.5, 0.0, 0.5])


def test_gradients_through_a_tape():
    a = wp.array(np.arange(5, dtype=np.float32), requires_grad=True)
    tape = wp.Tape()
    with tape:
        out = wp.map(affine, a, 2.0)
    assert out.requires_grad
    out.grad.fill_(1.0)
    tape.backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full(5, 2.0, dtype=np.float32))
    ints = wp.map(wp.bit_and, wp.array([1, 2, 3], dtype=wp.int32, requires_grad=True), 1)
    assert not ints.requires_grad  # int outputs are not differentiable


def test_return_kernel_launches_with_inputs_then_outputs():
    kernel = wp.map(lambda a: a + 2.0, _f32(np.zeros(3)), return_kernel=True)
    assert isinstance(kernel, wp.Kernel)
    b = wp.zeros(7, dtype=wp.float32)
    out = wp.empty_like(b)
    wp.launch(kernel, dim=7, inputs=[b], outputs=[out])
    np.testing.assert_array_equal(out.numpy(), np.full(7, 2.0, dtype=np.float32))


def test_debug_mode():
    saved = wp.config.mode
    wp.config.mode = "debug"
    try:
        out = wp.map(lambda a, b: a - b, _f32([3.0, 4.0]), _f32([1.0]))
    finally:
        wp.config.mode = saved
    np.testing.assert_array_equal(out.numpy(), [2.0, 3.0])


def test_cache_reuse():
    f = lambda a, b: a * b + a  # noqa: E731
    wp.map(f, _f32([1.0, 2.0]), _f32([3.0, 4.0]))
    n = len(map_module.map_cache)
    wp.map(f, _f32([1.0, 2.0, 3.0]), _f32([3.0, 4.0, 5.0]))  # other shapes, same ranks and types
    wp.map(f, _f32([1.0, 2.0]), _f32([3.0, 4.0]), out=wp.empty(2, dtype=wp.float32))
    assert len(map_module.map_cache) == n
    wp.map(f, wp.array([1.0], dtype=wp.float64), wp.array([2.0], dtype=wp.float64))  # other dtypes
    assert len(map_module.map_cache) == n + 1
    wp.map(f, _f32([[1.0], [2.0]]), _f32([3.0, 4.0]))  # another broadcasting pattern
    assert len(map_module.map_cache) == n + 2


def test_broadcast_shapes():
    assert map_module.broadcast_shapes([(3, 1, 4), (5, 4)]) == (3, 5, 4)
    assert map_module.broadcast_shapes([(1,), (2, 3), (4, 1, 1)]) == (4, 2, 3)


def _raises(cls, message):
    return pytest.raises(cls, match="^" + re.escape(message) + "$")


def test_input_errors():
    a = wp.empty(3, dtype=wp.float32)
    with _raises(TypeError, "The provided function must return a value"):
        wp.map(nothing, a)
    with _raises(TypeError, "Number of input arguments (1) does not match expected number of function "
                            "arguments (2)"):
        wp.map(affine, a)  # affine takes 2
    with _raises(TypeError, "Number of input arguments (2) does not match expected number of function "
                            "arguments (1)"):
        wp.map(only_int, a, a)
    with _raises(TypeError, "Function only_int does not support the provided argument types float32"):
        wp.map(only_int, a)
    with _raises(TypeError, "Function add does not support the provided argument types float32, vec3f"):
        wp.map(wp.add, a, wp.empty(3, dtype=wp.vec3))
    with _raises(ValueError, "Shapes (3, 2, 1) and (3, 3, 2) are not broadcastable"):
        wp.map(wp.add, wp.zeros((3, 2, 1), dtype=float), wp.zeros((3, 3, 2), dtype=float))
    with _raises(ValueError, "Shapes (3,) and (5,) are not broadcastable"):
        wp.map(lambda x, y, z: x + y * z, 0.0, wp.zeros(3, dtype=float), wp.zeros(5, dtype=float))
    with _raises(ValueError, "map requires at least one warp.array input"):
        wp.map(lambda x, y: x * y, 2.0, 0.5)
    with _raises(TypeError, "func must be a callable function or a warp.Function"):
        wp.map(3, a)


def test_output_errors():
    xs, ys = wp.zeros(3, dtype=wp.float32), wp.ones(3, dtype=wp.float32)
    with _raises(TypeError, "Output array shape (2,) does not match expected shape (3,)"):
        wp.map(wp.sub, xs, ys, out=wp.empty(2, dtype=wp.float32))
    with _raises(TypeError, "Output array shape (3, 1) does not match expected shape (3,)"):
        wp.map(wp.sub, xs, ys, out=wp.empty((3, 1), dtype=wp.float32))
    with _raises(TypeError, "Output array dtype int32 does not match expected dtype float32"):
        wp.map(wp.sub, xs, ys, out=wp.empty(3, dtype=wp.int32))
    with _raises(TypeError, "Invalid output provided, expected 2 Warp arrays with shape (3,) and dtypes "
                            "(float32, float32)"):
        wp.map(lambda x, y: (x, y), xs, ys, out=wp.empty((2, 3), dtype=wp.float32))
    with _raises(TypeError, "Output array 1 dtype int32 does not match expected dtype float32"):
        wp.map(lambda x, y: (x, y), xs, ys, out=[wp.empty(3, dtype=wp.float32), wp.empty(3, dtype=wp.int32)])
    with _raises(TypeError, "Number of provided output arrays (3) does not match expected number of function "
                            "outputs (2)"):
        wp.map(lambda x, y: (x, y), xs, ys, out=[wp.empty(3, dtype=wp.float32)] * 3)
    with _raises(TypeError, "Output array 1 shape (3, 1) does not match expected shape (3,)"):
        wp.map(lambda x, y: (x, y), xs, ys,
               out=[wp.empty(3, dtype=wp.float32), wp.empty((3, 1), dtype=wp.float32)])


def test_array_operators_match_numpy():
    x = np.arange(10, dtype=np.float32)
    y = np.arange(1, 11, dtype=np.float32)
    a, b = _f32(x), _f32(y)
    np.testing.assert_array_equal((+a).numpy(), x)
    np.testing.assert_array_equal((-a).numpy(), -x)
    np.testing.assert_array_equal((a + b).numpy(), x + y)
    np.testing.assert_array_equal((a - 2.0).numpy(), x - 2.0)
    np.testing.assert_array_equal((2.0 - a).numpy(), 2.0 - x)
    np.testing.assert_array_equal((2.0 * a).numpy(), 2.0 * x)
    np.testing.assert_array_equal((a / b).numpy(), x / y)
    np.testing.assert_array_equal((2.0 / b).numpy(), 2.0 / y)
    np.testing.assert_array_equal((a // 3.0).numpy(), x // 3.0)
    np.testing.assert_allclose((a ** 2.0).numpy(), x ** 2.0)
    np.testing.assert_allclose((a % 3.0).numpy(), np.fmod(x, 3.0))
    xi, yi = np.arange(10, dtype=np.int32), np.arange(1, 11, dtype=np.int32)
    q = wp.array(xi * 7) / wp.array(yi)
    assert q.dtype is wp.int32  # as in Warp: integer division of int arrays
    np.testing.assert_array_equal(q.numpy(), (xi * 7) // yi)
    v = wp.array(np.stack([x, y, x], axis=1), dtype=wp.vec3)
    np.testing.assert_array_equal((v * 2.0).numpy(), np.stack([x, y, x], axis=1) * 2.0)
    np.testing.assert_array_equal((-v).numpy(), -np.stack([x, y, x], axis=1))
    c = _f32(x)
    c += 1.0
    c *= b
    np.testing.assert_array_equal(c.numpy(), (x + 1.0) * y)
    c -= 1.0
    c /= 2.0
    np.testing.assert_array_equal(c.numpy(), ((x + 1.0) * y - 1.0) / 2.0)


def test_list_gives_warp_values():
    x = np.arange(3, dtype=np.float32)
    r0, r1, r2 = wp.map(split, _f32(x))
    assert r0.list() == [2.0, 3.0, 4.0]
    vecs = r2.list()
    assert all(type(v) is wp.vec3 for v in vecs)
    assert [list(v) for v in vecs] == [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]
    pairs = wp.map(pair_sum, wp.array([Pair(a=1.0, b=2.0)], dtype=Pair), wp.array([Pair(a=0.5, b=4.0)],
                                                                                  dtype=Pair)).list()
    assert type(pairs[0]) is Pair and (pairs[0].a, pairs[0].b) == (1.5, 6.0)
    m = wp.array(np.arange(8, dtype=np.float32).reshape(2, 2, 2), dtype=wp.mat22).list()
    assert type(m[1]) is wp.mat22 and m[1][1][0] == 6.0


def test_result_types_of_builtins_and_annotated_functions_need_no_compiler():
    import subprocess
    import sys

    code = ("import sys\nimport numpy as np\nimport mlwarp as wp\n"
            "@wp.func\ndef f(x: float, y: float) -> float:\n    return x * y\n"
            "a = wp.array(np.arange(3, dtype=np.float32))\n"
            "k1 = wp.map(wp.add, a, a, return_kernel=True)\n"
            "k2 = wp.map(f, a, 2.0, return_kernel=True)\n"
            "k3 = wp.map(wp.length, wp.zeros(3, dtype=wp.vec3), return_kernel=True)\n"
            "print(isinstance(k3, wp.Kernel), 'mlir' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "False"]


def test_indexed_arrays_in_and_out():
    data = np.arange(10, dtype=np.float32)
    arr = wp.array(data)
    iarr = wp.indexedarray1d(arr, [wp.array([1, 3, 5, 7, 9], dtype=wp.int32)])
    out = wp.map(lambda x: x * 10.0, iarr)
    assert type(out) is wp.array
    np.testing.assert_array_equal(out.numpy(), data[1::2] * 10.0)
    same = wp.map(lambda x: x + 0.5, iarr, out=iarr)
    assert same is iarr
    expected = data.copy()
    expected[1::2] += 0.5
    np.testing.assert_array_equal(arr.numpy(), expected)  # through the indices, into the data
    scaled = 2.0 * iarr
    assert type(scaled) is wp.array
    np.testing.assert_array_equal(scaled.numpy(), expected[1::2] * 2.0)
    iarr += 1.0
    assert isinstance(iarr, wp.indexedarray)
    np.testing.assert_array_equal(iarr.numpy(), expected[1::2] + 1.0)


def test_lambda_without_source():
    f = eval("lambda x: x + 1.0")  # noqa: S307  (no file to read it from)
    with _raises(ValueError, "Could not extract lambda source code"):
        wp.map(f, wp.zeros(2, dtype=float))


def test_a_captured_value_of_another_type_changes_the_result_type():
    x = np.arange(3, dtype=np.float32)
    shift = 1.0
    out = wp.map(lambda a: a * shift, _f32(x))
    assert out.dtype is wp.float32
    shift = wp.vec2(1.0, -1.0)
    out = wp.map(lambda a: a * shift, _f32(x))
    assert out.dtype is wp.vec2
    np.testing.assert_array_equal(out.numpy(), np.stack([x, -x], axis=1))


def test_a_function_defined_anew_shares_its_kernel():
    def make(k):
        def scaled(a):
            return a * k
        return scaled

    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(wp.map(make(2.0), _f32(x)).numpy(), x * 2.0)
    n = len(map_module.map_cache)
    np.testing.assert_array_equal(wp.map(make(-3.0), _f32(x)).numpy(), x * -3.0)
    assert len(map_module.map_cache) == n


def test_a_lambda_compile_error_says_where_the_lambda_is():
    with pytest.raises(wp.CompileError,
                       match="Referencing undefined symbol: undefined_function") as info:
        wp.map(lambda x: undefined_function(x), wp.zeros(2, dtype=float))  # noqa: F821
    line = test_a_lambda_compile_error_says_where_the_lambda_is.__code__.co_firstlineno + 3
    assert f"(the lambda passed to wp.map at {__file__}:{line})" in info.value.__notes__
