"""An element-wise tile op fused into the op that reads it (linalg-fuse-elementwise-ops) runs once: its effects
(an atomic in a tile_map'd function) happen once per element, as Warp's one evaluation per element does; a tile_map
whose result nothing reads still runs (warp-tag-fusion-producers / warp-erase-fused-producers)."""

import numpy as np

import mlwarp as wp


@wp.func
def doubled_and_counted(x: float, counter: wp.array(dtype=int)):
    wp.atomic_add(counter, 0, 1)
    return x * 2.0


@wp.func
def plus_one(x: float):
    return x + 1.0


@wp.kernel
def map_then_sum(a: wp.array(dtype=float), counter: wp.array(dtype=int), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=16)
    wp.tile_store(out, wp.tile_sum(wp.tile_map(doubled_and_counted, t, counter)))


@wp.kernel
def chain_then_sum(a: wp.array(dtype=float), counter: wp.array(dtype=int), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=16)
    m = wp.tile_map(plus_one, wp.tile_map(doubled_and_counted, t, counter)) * 3.0
    wp.tile_store(out, wp.tile_sum(m))
    unread = wp.tile_map(doubled_and_counted, t, counter)  # noqa: F841 (kept for its atomic)


def run(kernel, blocks=3):
    a0 = np.arange(16, dtype=np.float32)
    counter, out = wp.zeros(1, dtype=int), wp.zeros(1, dtype=float)
    wp.launch_tiled(kernel, dim=blocks, inputs=[wp.array(a0), counter, out], block_dim=16)
    return a0, int(counter.numpy()[0]), float(out.numpy()[0])


def test_a_mapped_function_fused_into_a_sum_runs_once_per_element():
    a0, count, total = run(map_then_sum)
    assert count == 3 * 16  # 3 blocks x 16 elements, not twice that
    assert total == float((2 * a0).sum())


def test_a_chain_of_maps_runs_each_once_and_an_unread_map_still_runs():
    a0, count, total = run(chain_then_sum)
    assert count == 3 * (16 + 16)  # the chain's first map and the unread map, once per element each
    assert total == float((3 * (2 * a0 + 1)).sum())
