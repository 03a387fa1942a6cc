"""Tiles of unsigned ints (uint8..uint64, and vectors of them): loads and stores, unsigned arithmetic and
comparisons element by element, reductions and scans (their identities at the type's bounds), tile_sort's
uint32/uint64 keys, and per-lane uint values with Warp's CPU lanes. Expected values from numpy."""

import numpy as np
import pytest

import mlwarp as wp

N = 16


@wp.kernel
def unsigned_ops(a: wp.array2d(dtype=wp.uint32), scan_max: wp.array2d(dtype=wp.uint32),
                 scan_min: wp.array2d(dtype=wp.uint32), quotient: wp.array2d(dtype=wp.uint32),
                 stats: wp.array2d(dtype=wp.uint32)):
    i = wp.tid()
    t = wp.tile_load(a[i], shape=N)
    wp.tile_store(scan_max[i], wp.tile_scan_max_inclusive(t))
    wp.tile_store(scan_min[i], wp.tile_scan_min_inclusive(t))
    wp.tile_store(quotient[i], t / wp.uint32(3) + (t >> wp.uint32(28)))
    wp.tile_store(stats[i], wp.tile_max(t), offset=0)
    wp.tile_store(stats[i], wp.tile_min(t), offset=1)
    wp.tile_store(stats[i], wp.tile_sum(t), offset=2)


def test_uint32_tiles_against_numpy():
    info = np.iinfo(np.uint32)
    rng = np.random.default_rng(0)
    x = np.stack([np.full(N, info.min, np.uint32), np.full(N, info.max, np.uint32),
                  rng.integers(info.min, info.max, N, dtype=np.uint32, endpoint=True)])
    outs = [wp.zeros((3, N), dtype=wp.uint32) for _ in range(3)] + [wp.zeros((3, 3), dtype=wp.uint32)]
    wp.launch_tiled(unsigned_ops, dim=[3], inputs=[wp.array(x, dtype=wp.uint32), *outs], block_dim=1)
    np.testing.assert_array_equal(outs[0].numpy(), np.maximum.accumulate(x, axis=1))
    np.testing.assert_array_equal(outs[1].numpy(), np.minimum.accumulate(x, axis=1))
    np.testing.assert_array_equal(outs[2].numpy(), x // 3 + (x >> 28))  # unsigned division and shift
    stats = outs[3].numpy()
    np.testing.assert_array_equal(stats[:, 0], x.max(axis=1))
    np.testing.assert_array_equal(stats[:, 1], x.min(axis=1))
    np.testing.assert_array_equal(stats[:, 2], x.sum(axis=1, dtype=np.uint64).astype(np.uint32))  # wraps


@pytest.mark.parametrize("dtype", [wp.uint8, wp.uint16, wp.uint64])
def test_other_widths_round_trip_and_compare(dtype):
    @wp.kernel(module="unique")
    def larger(a: wp.array(dtype=dtype), b: wp.array(dtype=dtype), out: wp.array(dtype=dtype)):
        x = wp.tile_load(a, shape=N)
        y = wp.tile_load(b, shape=N)
        wp.tile_store(out, wp.tile_map(wp.max, x, y))

    np_dtype = {wp.uint8: np.uint8, wp.uint16: np.uint16, wp.uint64: np.uint64}[dtype]
    info = np.iinfo(np_dtype)
    rng = np.random.default_rng(1)
    a = rng.integers(0, info.max, N, dtype=np_dtype, endpoint=True)
    b = rng.integers(0, info.max, N, dtype=np_dtype, endpoint=True)
    a[0], b[0] = info.max, 1  # the top bit set: a signed compare would pick 1
    out = wp.zeros(N, dtype=dtype)
    wp.launch_tiled(larger, dim=[1], inputs=[wp.array(a, dtype=dtype), wp.array(b, dtype=dtype), out], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), np.maximum(a, b))


@wp.kernel
def sort_unsigned(keys: wp.array(dtype=wp.uint32), values: wp.array(dtype=int)):
    k = wp.tile_load(keys, shape=N)
    v = wp.tile_load(values, shape=N)
    wp.tile_sort(k, v)
    wp.tile_store(keys, k)
    wp.tile_store(values, v)


def test_sort_with_uint32_keys():
    keys = np.random.default_rng(2).integers(0, 2 ** 32 - 1, N, dtype=np.uint32, endpoint=True)
    keys[:2] = [2 ** 32 - 1, 0]
    k, v = wp.array(keys, dtype=wp.uint32), wp.array(np.arange(N, dtype=np.int32))
    wp.launch_tiled(sort_unsigned, dim=[1], inputs=[k, v], block_dim=1)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(k.numpy(), keys[order])
    np.testing.assert_array_equal(v.numpy(), order)


@wp.kernel
def lane_bits(out: wp.array(dtype=wp.uint32)):
    i, lane = wp.tid()
    bit = wp.uint32(1) << wp.uint32(lane + 24)  # lanes 4..7: the top bits
    t = wp.tile(bit)
    wp.tile_store(out, wp.tile_max(t), offset=i)


def test_lane_values_of_unsigned_type_with_cpu_lanes():
    wp.config.enable_cpu_blocks = True
    try:
        out = wp.zeros(2, dtype=wp.uint32)
        wp.launch_tiled(lane_bits, dim=[2], inputs=[out], block_dim=8)
    finally:
        wp.config.enable_cpu_blocks = False
    np.testing.assert_array_equal(out.numpy(), [1 << 31, 1 << 31])
