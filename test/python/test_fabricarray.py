"""wp.fabricarray / wp.indexedfabricarray in kernels: element access across buckets of uneven (and empty) sizes,
writes, `a.size`, every atomic, vector and matrix elements, arrays of arrays (rows as 1-d arrays, a[i, j]),
generic and @wp.func parameters, gradients (Fabric memory is a constant, as in Warp), compile and launch errors,
and the CUDA build of the same kernels. References: numpy on the arrays the buckets split."""

from typing import Any

import numpy as np
import pytest

import mlwarp as wp

from fabric_util import fabric, index, rows_interface

# buckets of uneven sizes, with empty ones at the start, the middle and the end (what the bucket search skips)
SIZES = [0, 3, 1, 0, 4, 2, 0]


@wp.kernel
def _read_double_bump(a: wp.fabricarray[float], out: wp.array[float]):
    i = wp.tid()
    out[i] = a[i]
    a[i] = 2.0 * a[i]
    wp.atomic_add(a, i, 1.0)


def test_reads_and_writes_cross_buckets():
    values = np.linspace(-2.0, 7.0, 10).astype(np.float32)
    fa, data = fabric(values, sizes=SIZES)
    assert fa.shape == (10,) and fa.size == 10 and len(fa) == 10 and fa.ndim == 1 and fa.dtype is wp.float32
    out = wp.zeros(10)
    wp.launch(_read_double_bump, dim=10, inputs=[fa, out])
    np.testing.assert_array_equal(out.numpy(), values)
    np.testing.assert_array_equal(data.numpy(), 2 * values + 1)


def test_buckets_may_point_anywhere():
    # two buckets over two separate allocations, the second listed first: elements follow the bucket order
    first, second = wp.array([1.0, 2.0], dtype=float), wp.array([10.0, 20.0, 30.0], dtype=float)
    info = {"type": (True, "f4", 1, 0, ""), "access": 2, "pointers": [second.ptr, first.ptr], "counts": [3, 2]}
    fa = wp.fabricarray({"version": 1, "device": "cpu", "attribs": {"x": info}}, "x")
    out = wp.zeros(5)
    wp.launch(_read_double_bump, dim=5, inputs=[fa, out])
    np.testing.assert_array_equal(out.numpy(), [10, 20, 30, 1, 2])
    np.testing.assert_array_equal(first.numpy(), [3, 5])
    np.testing.assert_array_equal(second.numpy(), [21, 41, 61])


@wp.kernel
def _indexed_read_write(a: wp.indexedfabricarray[float], out: wp.array[float], sizes: wp.array[wp.uint64]):
    i = wp.tid()
    out[i] = a[i]
    a[i] = float(i) + 100.0
    sizes[i] = a.size


def test_indexed_reads_and_writes():
    values = np.arange(10, dtype=np.float32)
    fa, data = fabric(values, sizes=SIZES)
    picks = [9, 0, 4, 3]
    ifa = fa[index(picks)]
    assert ifa.shape == (4,) and ifa.size == 4 and ifa.dtype is wp.float32 and ifa.ndim == 1
    out, sizes = wp.zeros(4), wp.zeros(4, dtype=wp.uint64)
    wp.launch(_indexed_read_write, dim=4, inputs=[ifa, out, sizes])
    np.testing.assert_array_equal(out.numpy(), values[picks])
    expected = values.copy()
    expected[picks] = np.arange(4) + 100
    np.testing.assert_array_equal(data.numpy(), expected)
    assert sizes.numpy().tolist() == [4] * 4


@wp.kernel
def _size(a: wp.fabricarray[wp.int16], out: wp.array[wp.uint64]):
    out[0] = a.size


def test_size_is_a_uint64():
    fa, _ = fabric(np.arange(7), dtype=wp.int16, sizes=[5, 2])
    out = wp.zeros(1, dtype=wp.uint64)
    wp.launch(_size, dim=1, inputs=[fa, out])
    assert out.numpy().tolist() == [7]


@wp.kernel
def _all_atomics(a: wp.fabricarray[wp.int32], old: wp.array2d[wp.int32]):
    i = wp.tid()
    old[i, 0] = wp.atomic_max(a, wp.uint8(i), 3)
    old[i, 1] = wp.atomic_min(a, wp.int64(i), 10)
    old[i, 2] = wp.atomic_cas(a, wp.int16(i), 3, 33)
    old[i, 3] = wp.atomic_or(a, wp.uint32(i), 64)
    old[i, 4] = wp.atomic_xor(a, i, 1)
    old[i, 5] = wp.atomic_and(a, i, 0xFF)
    old[i, 6] = wp.atomic_sub(a, i, 2)
    old[i, 7] = wp.atomic_add(a, i, 5)
    old[i, 8] = wp.atomic_exch(a, i, -i)


def test_every_atomic_with_index_types():
    start = np.array([0, 1, 2, 3, 7, 12, 30], dtype=np.int32)
    fa, data = fabric(start, dtype=wp.int32, sizes=[2, 0, 4, 1])
    old = wp.zeros((7, 9), dtype=wp.int32)
    wp.launch(_all_atomics, dim=7, inputs=[fa, old])
    steps = [lambda v: np.maximum(v, 3), lambda v: np.minimum(v, 10), lambda v: np.where(v == 3, 33, v),
             lambda v: v | 64, lambda v: v ^ 1, lambda v: v & 0xFF, lambda v: v - 2, lambda v: v + 5,
             lambda v: -np.arange(7, dtype=np.int32)]
    v, expected_old = start.copy(), []
    for step in steps:
        expected_old.append(v)
        v = step(v)
    np.testing.assert_array_equal(old.numpy(), np.stack(expected_old, axis=1))
    np.testing.assert_array_equal(data.numpy(), v)


@wp.kernel
def _indexed_atomics(a: wp.indexedfabricarray[float], count: int):
    i = wp.tid()
    wp.atomic_add(a, i % count, 1.5)


def test_indexed_atomics_accumulate_on_the_picked_elements():
    fa, data = fabric(np.zeros(6), sizes=[2, 4])
    wp.launch(_indexed_atomics, dim=9, inputs=[fa[index([5, 1, 2])], 3])
    np.testing.assert_array_equal(data.numpy(), [0, 4.5, 4.5, 0, 0, 4.5])  # each picked: 1.5 three times


@wp.kernel
def _vector_members(a: wp.fabricarray[wp.vec3], m: wp.indexedfabricarray[wp.mat22]):
    i = wp.tid()
    a[i].y = 2.0
    a[i] += wp.vec3(1.0, 0.0, float(i))
    wp.atomic_add(a, i, wp.vec3(0.5))
    m[i] = m[i] * 2.0
    m[i][0, 1] = -1.0


def test_vector_and_matrix_elements():
    vectors = np.arange(15, dtype=np.float32).reshape(5, 3)
    fa, vdata = fabric(vectors, dtype=wp.vec3, sizes=[1, 0, 4])
    mats = np.arange(20, dtype=np.float32).reshape(5, 2, 2)
    fm, mdata = fabric(mats, dtype=wp.mat22, sizes=[3, 2])
    assert fa.dtype is wp.vec3 and fm.dtype is wp.mat22
    picks = [4, 0, 2, 1, 3]
    wp.launch(_vector_members, dim=5, inputs=[fa, fm[index(picks)]])
    expected = vectors.copy()
    expected[:, 1] = 2.0
    expected += np.stack([np.ones(5), np.zeros(5), np.arange(5)], axis=1) + 0.5
    np.testing.assert_array_equal(vdata.numpy(), expected)
    expected_m = mats * 2.0
    expected_m[:, 0, 1] = -1.0
    np.testing.assert_array_equal(mdata.numpy(), expected_m)


@wp.kernel
def _row_sums(a: wp.fabricarrayarray(dtype=Any), sums: wp.array[Any], lengths: wp.array[int]):
    i = wp.tid()
    row = a[i]
    lengths[i] = row.shape[0]
    for j in range(row.shape[0]):
        sums[i] = sums[i] + row[j]
    a[i, 0] = a[i, row.shape[0] - 1]


@wp.kernel
def _indexed_row_sums(a: wp.indexedfabricarrayarray(dtype=float), sums: wp.array[float]):
    i = wp.tid()
    row = a[i]
    for j in range(row.shape[0]):
        sums[i] += row[j] * a[i, j]
    row[0] = -1.0


@wp.kernel
def _row_component_store(a: wp.fabricarray[wp.vec3, 2]):
    row = a[1]
    row[0].x = 7.0
    a[0, 1].z = 3.0
    wp.atomic_add(a, 0, 0, wp.vec3(1.0, 2.0, 3.0))


def _rows(lengths, dtype=np.float32):
    return [np.arange(1, n + 1, dtype=dtype) * (k + 1) for k, n in enumerate(lengths)]


def test_arrays_of_arrays():
    lengths = [1, 3, 2, 5, 4, 1]
    host = _rows(lengths)
    rows = [wp.array(r) for r in host]
    faa = wp.fabricarrayarray(data=rows_interface(rows, "rows", [2, 0, 3, 1]), attrib="rows")
    assert faa.ndim == 2 and faa.shape == (6,) and faa.size == 6 and faa.dtype is wp.float32
    sums, got_lengths = wp.zeros(6), wp.zeros(6, dtype=int)
    wp.launch(_row_sums, dim=6, inputs=[faa, sums, got_lengths])
    np.testing.assert_array_equal(sums.numpy(), [r.sum() for r in host])
    assert got_lengths.numpy().tolist() == lengths
    for r, h in zip(rows, host):
        np.testing.assert_array_equal(r.numpy(), np.concatenate([h[-1:], h[1:]]))

    host = [r.numpy().copy() for r in rows]
    picks = [4, 0, 3]
    ifaa = faa[index(picks)]
    assert ifaa.ndim == 2 and ifaa.shape == (3,)
    sums = wp.zeros(3)
    wp.launch(_indexed_row_sums, dim=3, inputs=[ifaa, sums])
    np.testing.assert_array_equal(sums.numpy(), [float((host[k] ** 2).sum()) for k in picks])
    assert [r.numpy()[0] for r in rows] == [-1, host[1][0], host[2][0], -1, -1, host[5][0]]


def test_array_of_arrays_views_take_component_stores_and_atomics():
    rows = [wp.zeros(2, dtype=wp.vec3) for _ in range(2)]
    faa = wp.fabricarrayarray(data=rows_interface(rows, "v", [1, 1]), attrib="v")
    wp.launch(_row_component_store, dim=1, inputs=[faa])
    np.testing.assert_array_equal(rows[0].numpy(), [[1, 2, 3], [0, 0, 3]])
    np.testing.assert_array_equal(rows[1].numpy(), [[7, 0, 0], [0, 0, 0]])


@wp.kernel
def _doubled(a: Any, b: Any):
    i = wp.tid()
    b[i] = a[i] + a[i]


@wp.kernel
def _doubled_fabric(a: wp.fabricarray[Any], b: wp.indexedfabricarray[Any]):
    i = wp.tid()
    b[i] = a[i] + a[i]


@pytest.mark.parametrize("dtype", [wp.int8, wp.float16, wp.vec2i, wp.mat33d])
def test_generic_parameters_instantiate_per_type(dtype):
    n = 6
    shape = (n,) + tuple(getattr(dtype, "_shape_", ()))
    values = np.arange(int(np.prod(shape))).reshape(shape) % 50
    a, _ = fabric(values, dtype=dtype, sizes=[2, 0, 3, 1])
    b, out = fabric(np.zeros(shape), dtype=dtype, sizes=[4, 2])
    wp.launch(_doubled, dim=n, inputs=[a, b])
    np.testing.assert_array_equal(out.numpy(), 2 * values)
    out.zero_()
    picks = index([5, 2, 0])
    wp.launch(_doubled, dim=3, inputs=[a[picks], b[picks]])
    wp.launch(_doubled_fabric, dim=2, inputs=[a, b[index([1, 4])]])  # b[1] = 2 a[0], b[4] = 2 a[1]
    expected = np.zeros(shape)
    expected[[5, 2, 0]] = 2 * values[[5, 2, 0]]
    expected[[1, 4]] = 2 * values[[0, 1]]
    np.testing.assert_array_equal(out.numpy(), expected)


def test_overloads_of_fabric_annotations():
    for dtype in (wp.int64, wp.vec4):
        wp.overload(_doubled_fabric, [wp.fabricarray[dtype], wp.indexedfabricarray[dtype]])
        wp.overload(_doubled, [wp.fabricarray(dtype=dtype), wp.fabricarray(dtype=dtype)])
    a, _ = fabric(np.full((3, 4), 1.5), dtype=wp.vec4)
    b, out = fabric(np.zeros((3, 4)), dtype=wp.vec4, sizes=[1, 2])
    wp.launch(_doubled, dim=3, inputs=[a, b])
    np.testing.assert_array_equal(out.numpy(), np.full((3, 4), 3.0))


@wp.func
def _scaled(a: wp.fabricarray[float], i: int, s: float):
    return a[i] * s


@wp.func
def _bump(a: wp.indexedfabricarray(dtype=float), i: int):
    a[i] = a[i] + 1.0


@wp.kernel
def _through_functions(a: wp.fabricarray[float], ia: wp.indexedfabricarray[float], out: wp.array[float]):
    i = wp.tid()
    out[i] = _scaled(a, i, 3.0)
    _bump(ia, i)


def test_function_parameters():
    values = np.arange(4, dtype=np.float32) + 1
    fa, data = fabric(values, sizes=[1, 3])
    out = wp.zeros(4)
    wp.launch(_through_functions, dim=2, inputs=[fa, fa[index([3, 1])], out])
    np.testing.assert_array_equal(out.numpy()[:2], 3 * values[:2])
    np.testing.assert_array_equal(data.numpy(), values + [0, 1, 0, 1])


@wp.kernel
def _weighted_squares(a: wp.fabricarray[float], x: wp.array[float], loss: wp.array[float]):
    i = wp.tid()
    wp.atomic_add(loss, 0, a[i] * x[i] * x[i])


def test_gradients_treat_fabric_memory_as_constants():
    weights = np.array([0.5, -1.0, 2.0, 3.0], dtype=np.float32)
    fa, _ = fabric(weights, sizes=[3, 1])
    xs = np.array([1.0, 2.0, -3.0, 0.25], dtype=np.float32)
    x = wp.array(xs, requires_grad=True)
    loss = wp.zeros(1, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_weighted_squares, dim=4, inputs=[fa, x, loss])
    tape.backward(loss)
    assert loss.numpy()[0] == pytest.approx(float(np.sum(weights * xs * xs)))
    np.testing.assert_allclose(x.grad.numpy(), 2 * weights * xs)  # d/dx of w x^2
    assert fa.grad is None and not fa.requires_grad


@wp.kernel
def _weighted_cubes(a: wp.indexedfabricarray[float], x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    y[i] = a[i] * x[i] * x[i] * x[i]


def test_forward_mode_has_no_tangent_through_fabric_memory():
    weights = np.array([2.0, -1.0, 0.5], dtype=np.float32)
    fa, _ = fabric(weights, sizes=[2, 1])
    xs = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    dxs = np.array([0.5, 1.0, -2.0], dtype=np.float32)
    y, dy = wp.zeros(3), wp.zeros(3)
    picked = fa[index([2, 0, 1])]
    wp.jvp(_weighted_cubes, dim=3, inputs=[picked, wp.array(xs)], outputs=[y], tan_inputs=[None, wp.array(dxs)],
           tan_outputs=[dy])
    w = weights[[2, 0, 1]]
    np.testing.assert_allclose(y.numpy(), w * xs ** 3)
    np.testing.assert_allclose(dy.numpy(), 3 * w * xs ** 2 * dxs)


def test_debug_mode_reports_an_index_past_the_last_element():
    fa, _ = fabric(np.arange(5), sizes=[2, 0, 3])
    out = wp.zeros(6)
    wp.config.mode = "debug"
    try:
        with pytest.raises(wp.KernelBoundsError, match=r"index \[3\] is out of bounds reading an array of shape "
                                                        r"\(3,\) \(thread 5; "):
            wp.launch(_read_double_bump, dim=6, inputs=[fa, out])
            wp.synchronize()
    finally:
        wp.config.mode = "release"


# -- errors ------------------------------------------------------------------------------------------------
def _compile_error(kernel, args, match):
    with pytest.raises(wp.CompileError, match=match) as e:
        wp.launch(kernel, dim=1, inputs=args)
    assert __file__ in str(e.value)


@wp.kernel
def _uses_len(a: wp.fabricarray[float]):
    len(a)


@wp.kernel
def _uses_shape(a: wp.fabricarray[float]):
    a.shape[0]


@wp.kernel
def _two_indices(a: wp.fabricarray[float]):
    a[0, 1] = 1.0


def test_compile_errors_name_the_source_line():
    fa, _ = fabric([1.0, 2.0])
    _compile_error(_uses_len, [fa], r"Couldn't find function overload for 'len' that matched inputs with types: "
                                    r"\[fabricarray\(ndim=1, dtype=float32\)\]")
    _compile_error(_uses_shape, [fa], r"`shape` is not an attribute of 'a' \(fabricarray\(ndim=1, dtype=float32\)\)")
    _compile_error(_two_indices, [fa], "got 2 indices for a 1 dimensional array")


@pytest.mark.parametrize("value, message", [
    (lambda: wp.zeros(2), "expects an array of type fabricarray(ndim=1, dtype=float32), but passed value has type "
                          "array"),
    (lambda: fabric([1, 2], dtype=wp.float64)[0],
     "expects an array with dtype=<class 'mlwarp.types.float32'> but passed array has dtype=<class "
     "'mlwarp.types.float64'>"),
    (lambda: wp.fabricarrayarray(data=rows_interface([wp.zeros(1)], "r", [1]), attrib="r"),
     "expects an array with 1 dimension(s) but the passed array has 2 dimension(s)"),
    (lambda: fabric([1, 2])[0][index([0])], "expects an array of type fabricarray(ndim=1, dtype=float32), but "
                                            "passed value has type indexedfabricarray"),
])
def test_launch_argument_errors(value, message):
    with pytest.raises(wp.LaunchError) as e:
        wp.launch(_uses_len, dim=1, inputs=[value()])
    assert str(e.value) == f"Error launching kernel '_uses_len', argument 'a' {message}."


@wp.kernel
def _all_kinds(a: wp.fabricarray[float], b: wp.indexedfabricarray[wp.vec3], c: wp.fabricarrayarray(dtype=float),
               d: wp.indexedfabricarrayarray(dtype=float), out: wp.array[float]):
    i = wp.tid()
    wp.atomic_add(a, i, 1.0)
    b[i] = b[i] + wp.vec3(1.0)
    row = c[i]
    s = float(0.0)
    for j in range(row.shape[0]):
        s += row[j] + d[i, j]
    out[i] = s + float(a.size)


def test_kernels_build_for_cuda():
    from mlwarp.launching import cuda_compile
    from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path

    if cuda_compile.compiler_available() is False or ptxas_path() is None:
        pytest.skip("the CUDA build needs the MLIR compiler and ptxas")
    for k in (_all_kinds, _read_double_bump, _all_atomics):
        meta = cuda_compile.build(k, 90)
        assert meta["cubin"] == "kernel.cubin" and meta["arch"] == 90
