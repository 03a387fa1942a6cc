"""Tile views and slices as Warp's "Tiles" page documents them, against numpy's indexing: `t[i]` (a row),
`t[a:b, :]`, `t[::2, ::-1]`, `t[-1, :]`, `t[i, 3]`-style collapsed dimensions, chained subscripts, `t[indices, :]`
(a gather by an int tile), `wp.tile_view` in its offset-only, offset-and-shape and slice() forms; writes through
subscripts and through view locals (a view aliases its tile: it sees the tile's later writes, and writes to it
reach the tile); gradients through all of them (numpy's adjoint of the same indexing); Warp's refusals."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.launching import cuda_compile
from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path

M, N = 8, 6
rng = np.random.default_rng(7)
A = rng.random((M, N), dtype=np.float32)


def _run(kernel, out_shape, *extra, src=A, grad=None):
    a = wp.array(src, dtype=float, requires_grad=grad is not None, device="cpu")
    out = wp.zeros(out_shape, dtype=float, requires_grad=grad is not None, device="cpu")
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(kernel, dim=1, inputs=[a, *extra, out], block_dim=4, device="cpu")
    if grad is None:
        return out.numpy()
    out.grad = wp.array(grad, dtype=float, device="cpu")
    tape.backward()
    return out.numpy(), a.grad.numpy()


def _adjoint(index, grad, shape=A.shape):
    """numpy's adjoint of out = A[index]: each output element's gradient added back where it was read."""
    g = np.zeros(shape, dtype=np.float32)
    np.add.at(g, index, grad)
    return g


@wp.kernel
def rows_block(a: wp.array2d[float], out: wp.array2d[float]):
    t = wp.tile_load(a, shape=(M, N))
    wp.tile_store(out, t[2:6, :])


@wp.kernel
def strided_reversed(a: wp.array2d[float], out: wp.array2d[float]):
    t = wp.tile_load(a, shape=(M, N))
    wp.tile_store(out, t[::2, ::-1])


@wp.kernel
def negative_bounds(a: wp.array2d[float], out: wp.array2d[float]):
    t = wp.tile_load(a, shape=(M, N))
    wp.tile_store(out, t[-2:1:-3, -1:])


@wp.kernel
def column(a: wp.array2d[float], out: wp.array[float]):
    t = wp.tile_load(a, shape=(M, N))
    wp.tile_store(out, t[:, 3])


@wp.kernel
def last_row(a: wp.array2d[float], i: int, out: wp.array[float]):
    t = wp.tile_load(a, shape=(M, N))
    wp.tile_store(out, t[i])  # a run-time index: negative counts from the end


@wp.kernel
def chained(a: wp.array2d[float], out: wp.array[float]):
    t = wp.tile_load(a, shape=(M, N))
    wp.tile_store(out, t[::-1][1][1:5:2])


@pytest.mark.parametrize("kernel,index,shape", [
    (rows_block, (slice(2, 6), slice(None)), (4, N)),
    (strided_reversed, (slice(None, None, 2), slice(None, None, -1)), (M // 2, N)),
    (negative_bounds, (slice(-2, 1, -3), slice(-1, None)), (2, 1)),
    (column, (slice(None), 3), (M,)),
])
def test_slices_read_as_numpy_and_their_gradients(kernel, index, shape):
    grad = rng.random(shape, dtype=np.float32)
    out, a_grad = _run(kernel, shape, grad=grad)
    np.testing.assert_array_equal(out, A[index])
    rows, cols = np.meshgrid(np.arange(M), np.arange(N), indexing="ij")
    np.testing.assert_array_equal(a_grad, _adjoint((rows[index], cols[index]), grad))


def test_rows_by_run_time_index_and_chains():
    for i in (3, -1, -M):
        np.testing.assert_array_equal(_run(last_row, N, i), A[i])
    np.testing.assert_array_equal(_run(chained, 2), A[::-1][1][1:5:2])


@wp.kernel
def gather_rows(a: wp.array2d[float], idx: wp.array[int], out: wp.array2d[float]):
    t = wp.tile_load(a, shape=(M, N))
    i = wp.tile_load(idx, shape=4)
    wp.tile_store(out, t[i, :])


@wp.kernel
def gather_columns_of_a_view(a: wp.array2d[float], idx: wp.array[int], out: wp.array2d[float]):
    t = wp.tile_load(a, shape=(M, N))
    i = wp.tile_load(idx, shape=4)
    wp.tile_store(out, t[1:4][:, i])


def test_gather_by_an_index_tile_with_repeats_and_negatives():
    idx = np.array([5, -1, 0, 5], dtype=np.int32)
    grad = rng.random((4, N), dtype=np.float32)
    out, a_grad = _run(gather_rows, (4, N), wp.array(idx, device="cpu"), grad=grad)
    np.testing.assert_array_equal(out, A[idx])
    np.testing.assert_allclose(a_grad, _adjoint(idx % M, grad), rtol=1e-6)  # repeated rows add up

    cols = np.array([0, 5, -2, 1], dtype=np.int32)
    np.testing.assert_array_equal(_run(gather_columns_of_a_view, (3, 4), wp.array(cols, device="cpu")),
                                  A[1:4][:, cols])


@wp.kernel
def gather_by_name(a: wp.array2d[float], idx: wp.array[int], out: wp.array2d[float]):
    t = wp.tile_load(a, shape=(M, N))
    i = wp.tile_load(idx, shape=4)
    wp.tile_store(out, wp.tile_slice_indexed(t, (i,)))  # Warp's builtin behind t[i, :]


@wp.kernel
def gather_columns_by_name(a: wp.array2d[float], idx: wp.array[int], out: wp.array2d[float]):
    t = wp.tile_load(a, shape=(M, N))
    i = wp.tile_load(idx, shape=4)
    wp.tile_store(out, wp.tile_slice_indexed(t, (slice(0, M), i)))


@wp.kernel
def gather_without_an_index_tile(a: wp.array2d[float], out: wp.array2d[float]):
    t = wp.tile_load(a, shape=(M, N))
    wp.tile_store(out, wp.tile_slice_indexed(t, (0, slice(0, N))))


def test_tile_slice_indexed_by_name():
    idx = np.array([5, -1, 0, 5], dtype=np.int32)
    grad = rng.random((4, N), dtype=np.float32)
    out, a_grad = _run(gather_by_name, (4, N), wp.array(idx, device="cpu"), grad=grad)
    np.testing.assert_array_equal(out, A[idx])
    np.testing.assert_allclose(a_grad, _adjoint(idx % M, grad), rtol=1e-6)
    cols = np.array([0, 5, -2, 1], dtype=np.int32)
    np.testing.assert_array_equal(_run(gather_columns_by_name, (M, 4), wp.array(cols, device="cpu")), A[:, cols])
    with pytest.raises(wp.CompileError, match=r"in 'gather_without_an_index_tile': Tile indexing requires an integer "
                                              r"index tile\.\n"):
        _run(gather_without_an_index_tile, (1, N))


@wp.kernel
def explicit_views(a: wp.array2d[float], i: int, out: wp.array2d[float]):
    t = wp.tile_load(a, shape=(M, N))
    o = wp.tile_zeros(shape=(4, N), dtype=float)
    o[0] = wp.tile_view(t, offset=(i,))  # row i
    wp.tile_assign(o, wp.tile_view(t, offset=(i, 1), shape=(2, 3)), offset=(1, 0))  # a 2x3 block at (i, 1)
    o[3, 2:5] = wp.tile_view(t, offset=(slice(7, 2, -2), 4))  # rows 7, 5, 3 of column 4
    wp.tile_store(out, o)


def test_tile_view_forms():
    out = _run(explicit_views, (4, N), 2)
    expected = np.zeros((4, N), dtype=np.float32)
    expected[0] = A[2]
    expected[1:3, 0:3] = A[2:4, 1:4]
    expected[3, 2:5] = A[7:2:-2, 4]
    np.testing.assert_array_equal(out, expected)


@wp.kernel
def slice_and_row_writes(a: wp.array2d[float], b: wp.array2d[float], out: wp.array2d[float]):
    t = wp.tile_load(a, shape=(M, N))
    s = wp.tile_load(b, shape=(2, N))
    t[1:5:2, :] = s  # rows 1 and 3
    t[0] = s[1]  # a row from a row
    t[:, -1] = t[:, 0]  # a column from a column
    t[6:, 1:] = t[5:7, :-1]  # overlapping source and destination: the source read first
    wp.tile_store(out, t)


def test_writes_through_subscripts_and_their_gradients():
    b = rng.random((2, N), dtype=np.float32)
    bw = wp.array(b, requires_grad=True, device="cpu")
    grad = rng.random((M, N), dtype=np.float32)
    out, a_grad = _run(slice_and_row_writes, (M, N), bw, grad=grad)
    expected = A.copy()
    expected[1:5:2, :] = b
    expected[0] = b[1]
    expected[:, -1] = expected[:, 0]
    expected[6:, 1:] = expected[5:7, :-1].copy()
    np.testing.assert_array_equal(out, expected)

    # the adjoint of the same writes, in reverse, by hand: each overwritten element's gradient moves to its source
    g = grad.copy()
    gs = g[6:, 1:].copy()
    g[6:, 1:] = 0.0
    g[5:7, :-1] += gs
    gc = g[:, -1].copy()
    g[:, -1] = 0.0
    g[:, 0] += gc
    gb = np.zeros_like(b)
    gb[1] += g[0]
    g[0] = 0.0
    gb += g[1:5:2, :]
    g[1:5:2, :] = 0.0
    np.testing.assert_allclose(a_grad, g, rtol=1e-6)
    np.testing.assert_allclose(bw.grad.numpy(), gb, rtol=1e-6)


@wp.kernel
def view_locals_alias(a: wp.array2d[float], out: wp.array2d[float]):
    t = wp.tile_load(a, shape=(M, N))
    rows = wp.tile_view(t, offset=(2, 0), shape=(2, N))  # Warp's documented example: writes reach t
    wp.tile_assign(rows, wp.tile_reshape(wp.tile_arange(100.0, 112.0, 1.0, dtype=float), shape=(2, N)))
    col = t[:, 1]
    col[0] = -1.0  # an element of the view: t[0, 1]
    t[7, 1] = -7.0  # a write to t that the view sees
    inner = col[4:]  # a view of a view: t[4:, 1]
    inner[1] = col[7] * 2.0  # t[5, 1] = t[7, 1] * 2
    for k in range(3):
        r = t[k + 4]  # a view bound in a loop: the loop carries t
        r[0] = float(k)
    wp.tile_store(out, t)


def test_view_locals_alias_their_tile():
    expected = A.copy()
    expected[2:4] = np.arange(100.0, 112.0).reshape(2, N)
    expected[0, 1] = -1.0
    expected[7, 1] = -7.0
    expected[5, 1] = -14.0
    expected[4:7, 0] = [0.0, 1.0, 2.0]
    np.testing.assert_array_equal(_run(view_locals_alias, (M, N)), expected)


@wp.kernel(module="unique")
def gather_with_partial_slice():
    t = wp.tile_ones(shape=(M, N), dtype=float)
    idx = wp.tile_arange(0, 4, dtype=int)
    fidx = wp.tile_arange(0.0, 4.0, 1.0, dtype=float)
    r = t[idx, 1:3]

@wp.kernel(module="unique")
def gather_by_floats():
    t = wp.tile_ones(shape=(M, N), dtype=float)
    idx = wp.tile_arange(0, 4, dtype=int)
    fidx = wp.tile_arange(0.0, 4.0, 1.0, dtype=float)
    r = t[fidx, :]

@wp.kernel(module="unique")
def scalar_into_slice():
    t = wp.tile_ones(shape=(M, N), dtype=float)
    idx = wp.tile_arange(0, 4, dtype=int)
    fidx = wp.tile_arange(0.0, 4.0, 1.0, dtype=float)
    t[0:4, :] = 1.0

@wp.kernel(module="unique")
def augmented_slice():
    t = wp.tile_ones(shape=(M, N), dtype=float)
    idx = wp.tile_arange(0, 4, dtype=int)
    fidx = wp.tile_arange(0.0, 4.0, 1.0, dtype=float)
    t[0:4, :] += wp.tile_ones(shape=(4, N), dtype=float)

@wp.kernel(module="unique")
def augmented_row():
    t = wp.tile_ones(shape=(M, N), dtype=float)
    idx = wp.tile_arange(0, 4, dtype=int)
    fidx = wp.tile_arange(0.0, 4.0, 1.0, dtype=float)
    t[0] += wp.tile_ones(shape=(N,), dtype=float)

@wp.kernel(module="unique")
def slice_shape_mismatch():
    t = wp.tile_ones(shape=(M, N), dtype=float)
    idx = wp.tile_arange(0, 4, dtype=int)
    fidx = wp.tile_arange(0.0, 4.0, 1.0, dtype=float)
    t[0:4, :] = wp.tile_ones(shape=(5, N), dtype=float)

@wp.kernel(module="unique")
def gather_assignment():
    t = wp.tile_ones(shape=(M, N), dtype=float)
    idx = wp.tile_arange(0, 4, dtype=int)
    fidx = wp.tile_arange(0.0, 4.0, 1.0, dtype=float)
    t[idx, :] = wp.tile_ones(shape=(4, N), dtype=float)

@wp.kernel(module="unique")
def index_out_of_bounds():
    t = wp.tile_ones(shape=(M, N), dtype=float)
    idx = wp.tile_arange(0, 4, dtype=int)
    fidx = wp.tile_arange(0.0, 4.0, 1.0, dtype=float)
    r = t[100, :]

@wp.kernel(module="unique")
def empty_slice():
    t = wp.tile_ones(shape=(M, N), dtype=float)
    idx = wp.tile_arange(0, 4, dtype=int)
    fidx = wp.tile_arange(0.0, 4.0, 1.0, dtype=float)
    r = t[4:4, :]

@wp.kernel(module="unique")
def float_index():
    t = wp.tile_ones(shape=(M, N), dtype=float)
    idx = wp.tile_arange(0, 4, dtype=int)
    fidx = wp.tile_arange(0.0, 4.0, 1.0, dtype=float)
    r = t[1.5, :]

@wp.kernel(module="unique")
def negative_view_offset():
    t = wp.tile_ones(shape=(M, N), dtype=float)
    idx = wp.tile_arange(0, 4, dtype=int)
    fidx = wp.tile_arange(0.0, 4.0, 1.0, dtype=float)
    r = wp.tile_view(t, offset=(-1,))

@wp.kernel(module="unique")
def shape_with_slice():
    t = wp.tile_ones(shape=(M, N), dtype=float)
    idx = wp.tile_arange(0, 4, dtype=int)
    fidx = wp.tile_arange(0.0, 4.0, 1.0, dtype=float)
    r = wp.tile_view(t, offset=(slice(0, 2, 1),), shape=(2, N))

@wp.kernel(module="unique")
def reshape_strided():
    t = wp.tile_ones(shape=(M, N), dtype=float)
    idx = wp.tile_arange(0, 4, dtype=int)
    fidx = wp.tile_arange(0.0, 4.0, 1.0, dtype=float)
    r = wp.tile_reshape(t[::2, :], shape=(4 * N,))

@pytest.mark.parametrize("kernel,match", [
    (gather_with_partial_slice, r"requires ':' on all other axes"),
    (gather_by_floats, r"integer index tile"),
    (scalar_into_slice, r"requires a tile of matching shape"),
    (augmented_slice, r"Compound assignment to a tile view"),
    (augmented_row, r"Compound assignment to a tile view"),
    (slice_shape_mismatch, r"shape mismatch"),
    (gather_assignment, r"Advanced-index assignment"),
    (index_out_of_bounds, r"Tile index 100 is out of bounds for axis 0 with size 8"),
    (empty_slice, r"empty tile"),
    (float_index, r"must be integers or slices"),
    (negative_view_offset, r"out of bounds"),
    (shape_with_slice, r"'shape' together with a slice"),
    (reshape_strided, r"requires a contiguous tile"),
])
def test_refusals(kernel, match):
    with pytest.raises(wp.CompileError, match=match):
        wp.launch_tiled(kernel, dim=1, inputs=[], block_dim=4, device="cpu")


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not installed (scripts/setup-env.sh)")
def test_views_compile_for_cuda():
    """Views, slices, gathers and writes through them compile for sm_90 and pass ptxas (their kernels keep one
    thread per block: tile_insert_view and tile_gather are not spread over the lanes)."""
    for kernel in (rows_block, strided_reversed, column, chained, gather_rows, explicit_views, slice_and_row_writes,
                   view_locals_alias):
        meta = cuda_compile.build(kernel, 90)
        assert meta["cubin"] == "kernel.cubin"
        assert not meta["tile_launch"]["cooperative"]
