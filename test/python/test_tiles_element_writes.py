"""Per-element tile writes (`t[i, j] = v`, `t[i, j] += v`, a vector's component `t[i, c] = v`) inside loops,
while loops, branches and lanes, against numpy: each write must reach the tile the kernel stores afterwards (a
write inside a loop rebinds the tile local, which the loop then carries). The padding of Warp's
example_tile_block_cholesky.py is the motivating case (its rows past the active size stayed as loaded)."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.launching import cuda_compile
from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path

N = 4


@pytest.fixture
def cpu_blocks():
    wp.config.enable_cpu_blocks = True
    yield
    wp.config.enable_cpu_blocks = False


def _launch(kernel, a, *extra, shape=(N, N), dtype=float, block_dim=1):
    out = wp.zeros(shape, dtype=dtype, device="cpu")
    wp.launch_tiled(kernel, dim=1, inputs=[wp.array(a, dtype=dtype, device="cpu"), out, *extra],
                    block_dim=block_dim, device="cpu")
    return out.numpy()


A = np.arange(N * N, dtype=np.float32).reshape(N, N) + 10.0


@wp.kernel
def write_in_for(a: wp.array2d[float], out: wp.array2d[float], m: int):
    t = wp.tile_load(a, shape=(N, N))
    for i in range(m):
        t[i, 0] = 99.0
    wp.tile_store(out, t)


@wp.kernel
def write_in_while(a: wp.array2d[float], out: wp.array2d[float], m: int):
    t = wp.tile_load(a, shape=(N, N))
    i = int(0)
    while i < m:
        t[i, 1] = float(i) * 10.0
        i += 1
    wp.tile_store(out, t)


@wp.kernel
def update_with_break_continue(a: wp.array2d[float], out: wp.array2d[float], m: int):
    t = wp.tile_load(a, shape=(N, N))
    for i in range(N):
        if i == m:
            break
        if i == 1:
            continue
        t[i, 2] += 100.0
    wp.tile_store(out, t)


@wp.kernel
def write_in_nested_branches(a: wp.array2d[float], out: wp.array2d[float], m: int):
    t = wp.tile_zeros(shape=(N, N), dtype=float)
    for i in range(m):
        for j in range(m):
            if (i + j) % 2 == 0:
                t[i, j] = a[i, j]
            else:
                t[i, j] -= 1.0
    wp.tile_store(out, t)


def test_writes_inside_loops_reach_the_tile():
    expected = A.copy()
    expected[:3, 0] = 99.0
    np.testing.assert_array_equal(_launch(write_in_for, A, 3), expected)

    expected = A.copy()
    expected[:3, 1] = [0.0, 10.0, 20.0]
    np.testing.assert_array_equal(_launch(write_in_while, A, 3), expected)

    expected = A.copy()
    expected[[0, 2], 2] += 100.0  # i = 1 skipped, the loop left at i == 3
    np.testing.assert_array_equal(_launch(update_with_break_continue, A, 3), expected)

    i, j = np.meshgrid(np.arange(N), np.arange(N), indexing="ij")
    expected = np.where((i < 3) & (j < 3), np.where((i + j) % 2 == 0, A, -1.0), 0.0)
    np.testing.assert_array_equal(_launch(write_in_nested_branches, A, 3), expected)


@wp.kernel
def vector_components(a: wp.array[wp.vec3], out: wp.array[wp.vec3], m: int):
    t = wp.tile_load(a, shape=(N,))
    for i in range(m):
        t[i, 1] = 7.0  # component 1 of element i (Warp's one extra index)
        t[i] = t[i] * 2.0
        t[i][2] = t[i, 2] + 0.5
    wp.tile_store(out, t)


@wp.kernel
def matrix_rows_and_entries(a: wp.array[wp.mat22], out: wp.array[wp.mat22], rows: wp.array[wp.vec2]):
    t = wp.tile_load(a, shape=(N,))
    for i in range(N):
        rows[i] = t[i, 1]  # row 1 of element i
        t[i, 0, 1] = -1.0  # entry (0, 1)
        t[i, 1] = wp.vec2(5.0, 6.0)
    wp.tile_store(out, t)


def test_component_reads_and_writes_in_loops():
    v = np.arange(N * 3, dtype=np.float32).reshape(N, 3)
    expected = v.copy()
    expected[:3, 1] = 7.0
    expected[:3] *= 2.0
    expected[:3, 2] += 0.5
    np.testing.assert_array_equal(_launch(vector_components, v, 3, shape=N, dtype=wp.vec3), expected)

    m = np.arange(N * 4, dtype=np.float32).reshape(N, 2, 2)
    rows = wp.zeros(N, dtype=wp.vec2, device="cpu")
    out = _launch(matrix_rows_and_entries, m, rows, shape=N, dtype=wp.mat22)
    np.testing.assert_array_equal(rows.numpy(), m[:, 1, :])
    expected = m.copy()
    expected[:, 0, 1] = -1.0
    expected[:, 1] = [5.0, 6.0]
    np.testing.assert_array_equal(out, expected)


@wp.kernel
def pad_block(a: wp.array2d[float], out: wp.array2d[float], active: wp.array[int]):
    # example_tile_block_cholesky.py's padding: the lanes split the elements, each rewrites its own
    _b, lane = wp.tid()
    lanes = wp.block_dim()
    m = active[0]
    t = wp.tile_load(a, shape=(N, N), storage="shared")
    if N > m:
        for it in range((N * N + lanes - 1) // lanes):
            e = (lane + it * lanes) % (N * N)
            row = e // N
            col = e % N
            value = t[row, col]
            if row >= m or col >= m:
                value = wp.where(row == col, float(1), float(0))
            t[row, col] = value
    wp.tile_store(out, t)


def _padded(m):
    expected = A.copy()
    expected[m:, :] = 0.0
    expected[:, m:] = 0.0
    for k in range(m, N):
        expected[k, k] = 1.0
    return expected


def test_padding_of_the_block_cholesky_example_one_lane():
    np.testing.assert_array_equal(_launch(pad_block, A, wp.array([3], dtype=int, device="cpu"), block_dim=8),
                                  _padded(3))


@pytest.mark.parametrize("lanes", [3, 8, 32])
def test_padding_of_the_block_cholesky_example_with_lanes(cpu_blocks, lanes):
    np.testing.assert_array_equal(_launch(pad_block, A, wp.array([2], dtype=int, device="cpu"), block_dim=lanes),
                                  _padded(2))


@wp.kernel
def lanes_write_their_elements(a: wp.array2d[float], out: wp.array2d[float], m: int):
    _b, lane = wp.tid()
    lanes = wp.block_dim()
    t = wp.tile_load(a, shape=(N, N))
    for it in range((N * N + lanes - 1) // lanes):
        e = lane + it * lanes
        if e < N * N:
            if e // N < m:
                t[e // N, e % N] = t[e // N, e % N] * 2.0 + float(lane)
    if lane == 0:
        for i in range(m):
            t[i, N - 1] = -1.0  # one lane's writes (lane 0), after the others'
    wp.tile_store(out, t)


def test_each_lane_writes_its_own_elements(cpu_blocks):
    lanes = 4
    expected = A.copy()
    lane_of = (np.arange(N * N) % lanes).reshape(N, N)
    expected[:3] = A[:3] * 2.0 + lane_of[:3]
    expected[:3, N - 1] = -1.0
    np.testing.assert_array_equal(_launch(lanes_write_their_elements, A, 3, block_dim=lanes), expected)


@wp.kernel
def lane_elements(out: wp.array2d[float]):
    _b, lane = wp.tid()
    t = wp.tile_zeros(shape=(4, 8), dtype=float)
    t[lane // 8, lane % 8] = float(lane) * 2.0  # each lane its own element (Warp's tile_element_assign)
    wp.tile_store(out, t)


def test_every_lane_writes_its_element_with_cpu_lanes(cpu_blocks):
    out = wp.zeros((4, 8), dtype=float, device="cpu")
    wp.launch_tiled(lane_elements, dim=1, inputs=[out], block_dim=32, device="cpu")
    np.testing.assert_array_equal(out.numpy(), np.arange(32, dtype=np.float32).reshape(4, 8) * 2.0)


needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not installed (scripts/setup-env.sh)")
needs_gpu = pytest.mark.skipif(not wp.is_cuda_available(), reason="no CUDA GPU on this machine")


@needs_ptxas
def test_element_writes_compile_for_cuda():
    """The cooperative path (tiles in shared memory): each lane stores its own element between barriers; the
    kernels that read wp.block_dim() keep one thread per block. All assemble for sm_90."""
    meta = cuda_compile.build(lane_elements, 90)
    assert meta["cubin"] == "kernel.cubin" and meta["tile_launch"]["cooperative"]
    ptx = cuda_compile.to_mlir(lane_elements, "ptx", 90)
    assert "st.shared" in ptx and "bar.sync" in ptx
    for kernel in (write_in_for, write_in_while, update_with_break_continue, vector_components, pad_block):
        assert cuda_compile.build(kernel, 90)["cubin"] == "kernel.cubin"


@needs_gpu
def test_every_lane_writes_its_element_on_cuda():
    out = wp.zeros((4, 8), dtype=float, device="cuda")
    wp.launch_tiled(lane_elements, dim=1, inputs=[out], block_dim=32, device="cuda")
    np.testing.assert_array_equal(out.numpy(), np.arange(32, dtype=np.float32).reshape(4, 8) * 2.0)
