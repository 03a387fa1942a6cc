"""Tile shapes and offsets held in local tuples, as warp-nn's layers write them
(`shape_b = (wp.static(M), 1)`, `offset_b = (j * M, 0)`, then `wp.tile_load(a, shape=shape_b, offset=offset_b)`).
Expected values: numpy."""

import numpy as np
import pytest

import mlwarp as wp

TILE = (4, 3)


@wp.kernel
def add_bias_rows(x: wp.array2d(dtype=float), bias: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    shape = (wp.static(TILE[0]), wp.static(TILE[1]))
    shape_b = (wp.static(TILE[0]), 1)
    offset = (i * wp.static(TILE[0]), j * wp.static(TILE[1]))
    offset_b = (i * wp.static(TILE[0]), 0)
    t = wp.tile_load(x, shape=shape, offset=offset)
    t += wp.tile_broadcast(wp.tile_load(bias, shape=shape_b, offset=offset_b), shape=shape)
    wp.tile_store(out, t, offset=offset)


def test_shapes_and_offsets_from_local_tuples():
    x = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
    bias = np.arange(8, dtype=np.float32).reshape(8, 1) * 10.0
    out = wp.zeros((8, 6), dtype=float)
    wp.launch_tiled(add_bias_rows, dim=[2, 2], inputs=[wp.array(x), wp.array(bias), out], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), x + bias)


@wp.kernel
def offset_of_floats(x: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    offset = (1.0, 0)
    wp.tile_store(out, wp.tile_load(x, shape=(2, 2), offset=offset))


def test_offset_tuple_of_non_integers_is_refused():
    with pytest.raises(wp.CompileTypeError, match="tile offsets and indices must be integers, got float32"):
        wp.launch_tiled(offset_of_floats, dim=[1], inputs=[wp.zeros((4, 4), dtype=float), wp.zeros((4, 4), dtype=float)],
                        block_dim=1)
