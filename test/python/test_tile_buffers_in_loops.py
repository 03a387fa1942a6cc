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
