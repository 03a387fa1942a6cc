"""Cooperative tiles on CUDA (warp-gpu-cooperative-tiles): a Warp block is a CUDA block of block_dim lanes, its
tiles in shared memory, each tile op split over the lanes with barriers between. Compiled and assembled here
(ptxas, sm_90); run where there is a GPU. Kernels the pass does not handle keep one thread per block, with the
reason in their metadata; each refusal is checked against its exact text."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.launching import cuda_compile
from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path
from mlwarp.library.tiles import tile_launch_dims

TM = wp.constant(16)
TN = wp.constant(8)
TK = wp.constant(8)
TILE = wp.constant(64)
BLOCK = 64

needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not installed (scripts/setup-env.sh)")
needs_gpu = pytest.mark.skipif(not wp.is_cuda_available(), reason="no CUDA GPU on this machine")


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@wp.kernel
def coop_gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    # the GEMM of Warp's tile documentation
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TM, TN), dtype=wp.float32)
    count = int(A.shape[1] / TK)
    for k in range(0, count):
        a = wp.tile_load(A, shape=(TM, TK), offset=(i * TM, k * TK))
        b = wp.tile_load(B, shape=(TK, TN), offset=(k * TK, j * TN))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * TM, j * TN))


@wp.kernel
def coop_block_sum(a: wp.array(dtype=float), total: wp.array(dtype=float), sums: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(a, shape=TILE, offset=i * TILE)
    s = wp.tile_sum(t * t)
    wp.tile_atomic_add(total, s)  # once per block
    sums[i] = s[0]  # every lane reads the block's sum (after the barrier) and writes the same value


@wp.kernel
def coop_maps(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float), out: wp.array2d(dtype=float),
              col: wp.array2d(dtype=float)):
    i = wp.tid()
    a = wp.tile_load(x, shape=(4, TILE), offset=(i * 4, 0))
    b = wp.tile_load(y, shape=(4, TILE), offset=(i * 4, 0))
    r = wp.tile_map(wp.sin, a) * 2.0 + b + wp.tile_ones(shape=(4, TILE), dtype=float) + \
        wp.tile_full(shape=(4, TILE), value=0.5, dtype=float)
    wp.tile_store(out, r, offset=(i * 4, 0))
    wp.tile_atomic_add(col, wp.tile_transpose(a), offset=(0, i * 4))  # a 2-d tile added element by element


@wp.kernel
def coop_lanes(a: wp.array(dtype=float), out: wp.array(dtype=float), lanes: wp.array(dtype=int)):
    i, lane = wp.tid()  # a 1-d tiled launch: the block's index and the lane
    t = wp.tile_load(a, shape=TILE, offset=i * TILE)
    wp.tile_store(out, t * 3.0, offset=i * TILE)
    lanes[i * BLOCK + lane] = lane


@wp.kernel
def lane_branch(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i, lane = wp.tid()
    if lane == 0:  # the tile ops under a branch on the lane: not every lane reaches the barriers
        t = wp.tile_load(a, shape=TILE, offset=i * TILE)
        wp.tile_store(out, t, offset=i * TILE)


@wp.kernel
def atomic_branch(a: wp.array(dtype=float), out: wp.array(dtype=float), counter: wp.array(dtype=int)):
    i = wp.tid()
    if wp.atomic_add(counter, 0, 1) < 4:  # a different value on each lane
        wp.tile_store(out, wp.tile_load(a, shape=TILE, offset=i * TILE), offset=i * TILE)


@wp.kernel
def while_tiles(a: wp.array(dtype=float), out: wp.array(dtype=float), n: int):
    i = wp.tid()
    k = int(0)
    while k < n:
        wp.tile_store(out, wp.tile_load(a, shape=TILE, offset=k * TILE), offset=k * TILE)
        k += 1


@wp.kernel
def lane_tile(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile(a[i])  # a tile of the lanes' values: shape (1,) with one lane per block
    wp.tile_store(out, t, offset=i)


@wp.kernel
def big_tiles(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    t = wp.tile_load(a, shape=(128, 128))
    wp.tile_store(out, t)


def _forward_ptx(kernel) -> str:
    """The PTX of the kernel's forward entry (its adjoint, on lane 0 of each block, keeps local tiles)."""
    ptx = cuda_compile.to_mlir(kernel, "ptx", 90)
    start = ptx.index(f".entry {kernel.key}_cuda(")
    end = ptx.find(".entry", start + 1)
    return ptx[start:end if end > 0 else len(ptx)]


# -- compiled here: PTX assembled by ptxas for sm_90 ---------------------------------------------------------
@needs_ptxas
@pytest.mark.parametrize("kernel", [coop_gemm, coop_block_sum], ids=["documentation_gemm", "block_sum_atomic_add"])
def test_gemm_and_reduction_share_tiles_in_shared_memory(kernel):
    meta = cuda_compile.build(kernel, 90)
    assert meta["cubin"] == "kernel.cubin" and meta["tile_launch"]["cooperative"] is True, meta
    ptx = _forward_ptx(kernel)
    # the tiles are shared-memory arrays (ld/st.shared), the ops separated by barriers; no local tile buffers
    assert "ld.shared" in ptx and "st.shared" in ptx and "bar.sync" in ptx and ".local" not in ptx
    assert ".shared .align 16 .b8 __tile_shared_" + kernel.key in cuda_compile.to_mlir(kernel, "ptx", 90)


@needs_ptxas
def test_elementwise_maps_share_tiles():
    launch = cuda_compile.build(coop_maps, 90)["tile_launch"]
    # x, y (fast and guarded paths), the map's result, the transposed tile: 4-byte floats, 16-byte aligned
    assert launch == {"cooperative": True, "shared_bytes": 6 * 4 * 64 * 4, "lane_divergent_tid_positions": []}
    ptx = _forward_ptx(coop_maps)
    # (its .local: the 28 bytes of sin's range reduction, not a tile)
    assert "st.shared" in ptx and "ld.shared" in ptx and "bar.sync" in ptx


def test_shared_bytes_are_the_forward_kernels_tile_buffers():
    # the GEMM's float32 tiles: acc (16x8, 512 bytes), a (16x8) and b (8x8) on the fast and the guarded path
    meta = cuda_compile.build(coop_gemm, 90)
    assert meta["tile_launch"]["shared_bytes"] == 512 + 2 * 512 + 2 * 256


def test_launch_shape_of_cooperative_and_one_thread_kernels():
    gemm = cuda_compile.build(coop_gemm, 90)
    assert tile_launch_dims(gemm, "coop_gemm", [4, 4], 64) == [4, 4, 64]
    assert tile_launch_dims(cuda_compile.build(coop_block_sum, 90), "coop_block_sum", [5], 32) == [5, 32]
    assert tile_launch_dims(cuda_compile.build(lane_tile, 90), "lane_tile", [5], 32) == [5, 1]
    assert tile_launch_dims({}, "no_tiles", [3, 2], 32) == [3, 2, 1]


def test_tile_ops_under_a_branch_on_the_lane_are_refused_at_launch():
    meta = cuda_compile.build(lane_branch, 90)
    assert meta["tile_launch"]["cooperative"] is True
    assert meta["tile_launch"]["lane_divergent_tid_positions"] == [1]
    with pytest.raises(RuntimeError) as e:
        tile_launch_dims(meta, "lane_branch", [4], 64)
    assert str(e.value) == (
        "kernel 'lane_branch' runs tile operations under control flow that depends on wp.tid() index 1, the lane "
        "index of a tiled launch over 1 dimension(s): every lane of a block must reach each tile operation; launch "
        "it over 2 dimensions or keep the tile operations out of lane-dependent branches and loops")
    # over two dimensions, wp.tid()'s index 1 is the block's second index: the same in every lane
    assert tile_launch_dims(meta, "lane_branch", [4, 1], 64) == [4, 1, 64]


@pytest.mark.parametrize("kernel, reason", [
    (atomic_branch, "kernel 'atomic_branch': a tile operation under control flow that depends on an atomic's result"),
    (while_tiles, "kernel 'while_tiles': a tile operation inside scf.while"),
    (lane_tile, "tile assumes one lane per block"),
    (big_tiles, "131072 bytes of tiles in shared memory (more than 49152)"),
], ids=["atomic_branch", "while_loop", "wp_tile", "over_48_KiB"])
def test_kernels_the_pass_does_not_handle_keep_one_thread_per_block(kernel, reason):
    meta = cuda_compile.build(kernel, 90)
    assert meta["tile_launch"] == {"cooperative": False, "reason": reason}
    assert meta["cubin"] == ("kernel.cubin" if ptxas_path() else None)
    assert "bar.sync" not in cuda_compile.to_mlir(kernel, "ptx", 90)


# -- the CPU keeps one lane per block ------------------------------------------------------------------------
def _check_all(device):
    m, n, k = 64, 32, 48
    a0, b0 = _rand((m, k), 1), _rand((k, n), 2)
    c = wp.zeros((m, n), dtype=float, device=device)
    wp.launch_tiled(coop_gemm, dim=(m // TM, n // TN), inputs=[wp.array(a0, device=device),
                    wp.array(b0, device=device), c], block_dim=BLOCK, device=device)
    np.testing.assert_allclose(c.numpy(), a0.astype(np.float64) @ b0, rtol=1e-4, atol=1e-4)

    x0 = _rand(300, 3)  # 5 blocks, the last one padded with zeros by tile_load
    total, sums = wp.zeros(1, dtype=float, device=device), wp.zeros(5, dtype=float, device=device)
    wp.launch_tiled(coop_block_sum, dim=5, inputs=[wp.array(x0, device=device), total, sums], block_dim=BLOCK,
                    device=device)
    padded = np.zeros(320, np.float64)
    padded[:300] = x0
    np.testing.assert_allclose(total.numpy(), [np.sum(padded ** 2)], rtol=1e-5)
    np.testing.assert_allclose(sums.numpy(), (padded ** 2).reshape(5, 64).sum(1), rtol=1e-5)

    x1, y1 = _rand((8, 64), 4), _rand((8, 64), 5)
    out = wp.zeros((8, 64), dtype=float, device=device)
    col = wp.zeros((64, 8), dtype=float, device=device)
    wp.launch_tiled(coop_maps, dim=2, inputs=[wp.array(x1, device=device), wp.array(y1, device=device), out, col],
                    block_dim=BLOCK, device=device)
    np.testing.assert_allclose(out.numpy(), 2 * np.sin(x1) + y1 + 1.5, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(col.numpy(), x1.T, rtol=1e-6)


def test_the_kernels_on_the_cpu():
    _check_all("cpu")


# -- run where there is a GPU ----------------------------------------------------------------------------------
@needs_gpu
def test_cooperative_gemm_reduction_and_maps_on_cuda():
    _check_all("cuda:0")


@needs_gpu
def test_every_lane_runs_the_lane_local_code_on_cuda():
    a0 = _rand(3 * 64, 6)
    out = wp.zeros(3 * 64, dtype=float, device="cuda:0")
    lanes = wp.zeros(3 * BLOCK, dtype=int, device="cuda:0")
    wp.launch_tiled(coop_lanes, dim=3, inputs=[wp.array(a0, device="cuda:0"), out, lanes], block_dim=BLOCK,
                    device="cuda:0")
    np.testing.assert_allclose(out.numpy(), 3 * a0, rtol=1e-6)
    np.testing.assert_array_equal(lanes.numpy(), np.tile(np.arange(BLOCK), 3))


@needs_gpu
def test_gradient_of_a_cooperative_kernel_on_cuda():
    x0 = _rand(128, 7)
    x = wp.array(x0, requires_grad=True, device="cuda:0")
    total = wp.zeros(1, dtype=float, requires_grad=True, device="cuda:0")
    sums = wp.zeros(2, dtype=float, requires_grad=True, device="cuda:0")
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(coop_block_sum, dim=2, inputs=[x, total, sums], block_dim=BLOCK, device="cuda:0")
    tape.backward(loss=total)  # the adjoint: on lane 0 of each block
    np.testing.assert_allclose(x.grad.numpy(), 2 * x0, rtol=1e-6)


@needs_gpu
def test_a_launch_whose_lane_controls_tile_ops_is_refused_on_cuda():
    a = wp.zeros(4 * 64, dtype=float, device="cuda:0")
    with pytest.raises(RuntimeError, match="wp.tid\\(\\) index 1, the lane index"):
        wp.launch_tiled(lane_branch, dim=4, inputs=[a, a], block_dim=BLOCK, device="cuda:0")
