"""A tile made inside a loop under a branch (a tile_load each iteration, as in Warp's
example_tile_block_cholesky.py) takes one stack buffer for the whole launch (warp-hoist-tile-buffers), not new
stack each iteration: 40000 iterations of a 64x64 float tile would need 640 MB of stack otherwise."""

import numpy as np

import mlwarp as wp

T = 64


@wp.kernel
def accumulate_blocks(a: wp.array2d[float], out: wp.array2d[float], n: int):
    acc = wp.tile_zeros(shape=(T, T), dtype=float)
    for k in range(n):
        if k % 2 == 0:
            t = wp.tile_load(a, shape=(T, T))
            acc += t * 0.5
    wp.tile_store(out, acc)


def test_tiles_loaded_in_a_long_loop_reuse_their_buffer():
    a = np.random.default_rng(3).random((T, T), dtype=np.float32)
    out = wp.zeros((T, T), dtype=float, device="cpu")
    n = 40000
    wp.launch_tiled(accumulate_blocks, dim=1, inputs=[wp.array(a, device="cpu"), out, n], block_dim=1, device="cpu")
    # n / 2 additions of a * 0.5, in float32 as the kernel adds them
    expected = np.zeros((T, T), dtype=np.float32)
    half = (a * np.float32(0.5)).astype(np.float32)
    for _ in range(n // 2):
        expected += half
    np.testing.assert_array_equal(out.numpy(), expected)


def test_tile_accumulated_under_a_branch_takes_no_heap_per_iteration():
    # one-shot-bufferize gave `acc += ...` under the `if` a new heap buffer each iteration that nothing freed (320 MB
    # a launch here); warp-carry-tile-buffers copies it into the loop's carried buffer, which then lives on the stack
    tiles_ir = accumulate_blocks.to_mlir("tiles")
    assert "memref.alloc(" not in tiles_ir
    assert "memref.alloca(" in tiles_ir


@wp.kernel
def swap_under_branch(a: wp.array[float], b: wp.array[float], out_a: wp.array[float], out_b: wp.array[float], n: int):
    x = wp.tile_load(a, shape=8)
    y = wp.tile_load(b, shape=8)
    for k in range(n):
        if k % 3 != 0:
            x, y = y * 2.0, x + 1.0
    wp.tile_store(out_a, x)
    wp.tile_store(out_b, y)


def test_tiles_swapped_under_a_branch_in_a_loop():
    rng = np.random.default_rng(5)
    a, b = rng.random(8, dtype=np.float32), rng.random(8, dtype=np.float32)
    out_a, out_b = wp.zeros(8, dtype=float, device="cpu"), wp.zeros(8, dtype=float, device="cpu")
    n = 7
    wp.launch_tiled(swap_under_branch, dim=1, block_dim=1, device="cpu",
                    inputs=[wp.array(a, device="cpu"), wp.array(b, device="cpu"), out_a, out_b, n])
    x, y = a.copy(), b.copy()  # numpy's float32 steps, the kernel's order
    for k in range(n):
        if k % 3 != 0:
            x, y = y * np.float32(2.0), x + np.float32(1.0)
    np.testing.assert_array_equal(out_a.numpy(), x)
    np.testing.assert_array_equal(out_b.numpy(), y)
