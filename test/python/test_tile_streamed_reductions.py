"""Whole-tile reductions of loaded tiles (warp-stream-tile-reductions reads the array in the reduction's loop,
and warp-cpu-interchange-loops runs the blocks' chains side by side): each block's result against numpy's
sequential reduction of the same zero-padded tile, to the bit, with partial last tiles, 2-d tiles, ints,
launches of many blocks (several runtime threads) and the forms left alone."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp

TILE = wp.constant(4096)
ROWS = wp.constant(4)
COLS = wp.constant(8)


def _padded_blocks(x, size):
    blocks = -(-len(x) // size)
    padded = np.zeros(blocks * size, x.dtype)
    padded[:len(x)] = x
    return padded.reshape(blocks, size)


@wp.kernel
def block_sums(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.tile_store(out, wp.tile_sum(wp.tile_load(x, shape=TILE, offset=i * TILE)), offset=i)


@pytest.mark.parametrize("n", [4096, 4097, 100_000, 3_000_001])  # 3e6: 733 blocks, several runtime threads
def test_each_block_sums_in_warps_sequential_order(n):
    x0 = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    blocks = -(-n // 4096)
    out = wp.zeros(blocks, dtype=float)
    wp.launch_tiled(block_sums, dim=blocks, inputs=[wp.array(x0), out], block_dim=64)
    want = np.cumsum(_padded_blocks(x0, 4096), axis=1, dtype=np.float32)[:, -1]  # one add after another
    np.testing.assert_array_equal(out.numpy(), want)


@wp.kernel
def total(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.tile_atomic_add(out, wp.tile_sum(wp.tile_load(x, shape=TILE, offset=i * TILE)))


def test_the_documented_reduction_into_one_total():
    x0 = np.random.default_rng(1).random(1_000_003, dtype=np.float32)
    out = wp.zeros(1, dtype=float)
    wp.launch_tiled(total, dim=-(-len(x0) // 4096), inputs=[wp.array(x0), out], block_dim=64)
    want = float(np.sum(x0, dtype=np.float64))
    assert abs(float(out.numpy()[0]) - want) <= 1e-5 * want
    # its blocks' chains run side by side: warp-cpu-interchange-loops rewrote the thread loop (it marks the ones
    # it leaves), in blocks of 16 threads (each walks its own tile)
    forward = total.to_mlir("lowered").split("func.func @total_cpu(")[1].split("func.func")[0]
    assert "warp.thread_loop" not in forward and "arith.constant 16 : i64" in forward


@wp.kernel
def tile_extrema(a: wp.array2d(dtype=wp.int32), hi: wp.array(dtype=wp.int32), lo: wp.array(dtype=wp.int32),
                 prod: wp.array(dtype=wp.int32)):
    i, j = wp.tid()
    k = i * 16 + j
    wp.tile_store(hi, wp.tile_max(wp.tile_load(a, shape=(ROWS, COLS), offset=(i * ROWS, j * COLS))), offset=k)
    wp.tile_store(lo, wp.tile_min(wp.tile_load(a, shape=(ROWS, COLS), offset=(i * ROWS, j * COLS))), offset=k)
    wp.tile_store(prod, wp.tile_reduce(wp.mul, wp.tile_load(a, shape=(ROWS, COLS), offset=(i * ROWS, j * COLS))),
                  offset=k)


def test_max_min_and_product_of_2d_int_tiles_with_zero_padding():
    """A 10 x 20 array in 4 x 8 tiles: the last row and column of tiles reach past it and read zeros, which take
    part (a tile of negatives past the edge has max 0), as in Warp."""
    a0 = np.random.default_rng(2).integers(-9, -1, (10, 20)).astype(np.int32)
    a0[:4, :8] = np.random.default_rng(3).integers(1, 3, (4, 8))  # a positive tile: its product, exactly
    grid = (3, 3)
    hi, lo, prod = (wp.zeros(48, dtype=wp.int32) for _ in range(3))
    wp.launch_tiled(tile_extrema, dim=grid, inputs=[wp.array(a0), hi, lo, prod], block_dim=32)
    padded = np.zeros((12, 24), np.int32)
    padded[:10, :20] = a0
    tiles = padded.reshape(3, 4, 3, 8).transpose(0, 2, 1, 3).reshape(3, 3, 32)
    for i in range(3):
        for j in range(3):
            k = i * 16 + j
            assert hi.numpy()[k] == tiles[i, j].max() and lo.numpy()[k] == tiles[i, j].min()
            assert prod.numpy()[k] == np.prod(tiles[i, j].astype(np.int64)).astype(np.int32)
    assert hi.numpy()[2 * 16 + 2] == 0  # the corner tile: -9..-2 and zeros past the edge


@wp.kernel
def sum_and_copy(x: wp.array(dtype=float), y: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    wp.tile_store(y, t, offset=i * TILE)
    wp.tile_store(out, wp.tile_sum(t), offset=i)


def test_a_tile_also_stored_keeps_its_buffer_and_the_same_sums():
    x0 = np.random.default_rng(4).standard_normal(10_000).astype(np.float32)
    y, out = wp.zeros(3 * 4096, dtype=float), wp.zeros(3, dtype=float)
    wp.launch_tiled(sum_and_copy, dim=3, inputs=[wp.array(x0), y, out], block_dim=64)
    padded = _padded_blocks(x0, 4096)
    np.testing.assert_array_equal(y.numpy(), padded.reshape(-1))
    np.testing.assert_array_equal(out.numpy(), np.cumsum(padded, axis=1, dtype=np.float32)[:, -1])
    assert "warp.tile_reduce" in sum_and_copy.to_mlir("warp-opt")


def test_the_streamed_sum_has_no_tile_buffer_and_its_gradient_is_ones():
    forward = block_sums.to_mlir("tiles").split("func.func @block_sums(")[1].split("func.func")[0]
    assert "memref<4096xf32>" not in forward and "scf.for" in forward
    x = wp.array(np.random.default_rng(5).standard_normal(8192).astype(np.float32), requires_grad=True)
    out = wp.zeros(2, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(block_sums, dim=2, inputs=[x, out], block_dim=64)
    tape.backward(grads={out: wp.array(np.array([1.0, 2.0], np.float32))})
    np.testing.assert_array_equal(x.grad.numpy(), np.repeat(np.array([1.0, 2.0], np.float32), 4096))


WIDE = wp.constant(256)
NARROW = wp.constant(8)


@wp.kernel
def block_sums64(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.tile_store(out, wp.tile_sum(wp.tile_load(x, shape=WIDE, offset=i * WIDE)), offset=i)


@wp.kernel
def narrow_sums(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.tile_store(out, wp.tile_sum(wp.tile_load(x, shape=NARROW, offset=i * NARROW)), offset=i)


def _sequential_sums(x, size):
    return np.cumsum(_padded_blocks(x, size), axis=1, dtype=x.dtype)[:, -1]


@pytest.mark.parametrize("blocks", [1, 15, 16, 37])  # squares of 16 threads in a block of 16, and the rest
def test_float64_blocks_in_whole_squares_and_the_rest(blocks):
    """16 doubles a step: the block's threads load them in squares of 16 transposed in registers
    (warp-cpu-interchange-loops); a block of fewer threads loads them one thread after another."""
    x0 = np.random.default_rng(blocks).standard_normal(blocks * 256 - 5)  # the last tile runs past the end
    out = wp.zeros(blocks, dtype=wp.float64)
    wp.launch_tiled(block_sums64, dim=blocks, inputs=[wp.array(x0), out], block_dim=64)
    np.testing.assert_array_equal(out.numpy(), _sequential_sums(x0, 256))


def test_rows_of_8_in_squares_of_8():
    x0 = np.random.default_rng(8).standard_normal(8 * 53 + 3).astype(np.float32)
    blocks = -(-len(x0) // 8)
    out = wp.zeros(blocks, dtype=float)
    wp.launch_tiled(narrow_sums, dim=blocks, inputs=[wp.array(x0), out], block_dim=64)
    np.testing.assert_array_equal(out.numpy(), _sequential_sums(x0, 8))


def test_a_strided_view_is_read_element_by_element():
    """x[::3] is not contiguous: a step's 16 elements are not one vector load (the stride is checked once)."""
    base = np.random.default_rng(3).standard_normal(3 * 4096 * 5).astype(np.float32)
    view = wp.array(base)[::3]
    out = wp.zeros(5, dtype=float)
    wp.launch_tiled(block_sums, dim=5, inputs=[view, out], block_dim=64)
    np.testing.assert_array_equal(out.numpy(), _sequential_sums(base[::3], 4096))


def test_the_streamed_steps_are_vector_loads_transposed_in_registers():
    lowered = block_sums.to_mlir("lowered").split("func.func @block_sums_cpu(")[1].split("func.func")[0]
    assert "-> vector<16xf32>" in lowered and lowered.count("llvm.shufflevector") >= 64
