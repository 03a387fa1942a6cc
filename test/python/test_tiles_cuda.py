"""Cooperative tiles on CUDA (warp-gpu-cooperative-tiles): a Warp block is a CUDA block of block_dim lanes, its
tiles in shared memory, each tile op split over the lanes with barriers between. Compiled and assembled here
(ptxas, sm_90); run where there is a GPU. Kernels the pass does not handle keep one thread per block, with the
reason in their metadata; each refusal is checked against its exact text."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp import cuda_compile
from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path
from mlwarp.tiles import tile_launch_dims

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
