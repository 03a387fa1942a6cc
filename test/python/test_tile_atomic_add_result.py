"""wp.tile_atomic_add's result (Warp 1.19): the tile of the array's elements before the add, zero past the array's
upper extent (where nothing is added). References: numpy; the gradients are warp-lang 1.19's (recorded: the updated
region's adjoint goes to the added tile, the returned tile carries none and reads zero in the replay)."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.launching import cuda_compile
from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path


@wp.kernel
def add_2d(a: wp.array2d(dtype=float), src: wp.array2d(dtype=float), previous: wp.array2d(dtype=float)):
    i, j = wp.tid()
    t = wp.tile_load(src, shape=(2, 4), offset=(i * 2, j * 4))
    p = wp.tile_atomic_add(a, t, offset=(i * 2 + 1, j * 4))
    wp.tile_store(previous, p, offset=(i * 2, j * 4))


def test_previous_values_of_a_2d_add_and_zero_past_the_extent():
    a0 = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)
    src = np.random.default_rng(1).random((6, 8), dtype=np.float32)
    a, previous = wp.array(a0, device="cpu"), wp.zeros((6, 8), dtype=float, device="cpu")
    wp.launch_tiled(add_2d, dim=(3, 2), inputs=[a, wp.array(src, device="cpu"), previous], block_dim=1,
                    device="cpu")
    # block (i, j) adds rows 2i..2i+1 of src at rows 2i+1..2i+2 of a: rows never overlap between blocks
    expected_a, expected_previous = a0.copy(), np.zeros_like(a0)
    for i in range(3):
        for r in range(2):
            row = 2 * i + 1 + r
            if row < 6:
                expected_previous[2 * i + r] = a0[row]
                expected_a[row] += src[2 * i + r]
    np.testing.assert_array_equal(previous.numpy(), expected_previous)
    np.testing.assert_array_equal(a.numpy(), expected_a)


@wp.kernel
def add_each_dtype(i32: wp.array(dtype=wp.int32), u32: wp.array(dtype=wp.uint32), i64: wp.array(dtype=wp.int64),
                   u64: wp.array(dtype=wp.uint64), f16: wp.array(dtype=wp.float16), f64: wp.array(dtype=wp.float64),
                   v3: wp.array(dtype=wp.vec3), m22: wp.array(dtype=wp.mat22d),
                   p_i32: wp.array(dtype=wp.int32), p_u32: wp.array(dtype=wp.uint32), p_i64: wp.array(dtype=wp.int64),
                   p_u64: wp.array(dtype=wp.uint64), p_f16: wp.array(dtype=wp.float16),
                   p_f64: wp.array(dtype=wp.float64), p_v3: wp.array(dtype=wp.vec3), p_m22: wp.array(dtype=wp.mat22d)):
    wp.tile_store(p_i32, wp.tile_atomic_add(i32, wp.tile_arange(4, dtype=wp.int32), offset=1))
    wp.tile_store(p_u32, wp.tile_atomic_add(u32, wp.tile_ones(4, dtype=wp.uint32), offset=1))
    wp.tile_store(p_i64, wp.tile_atomic_add(i64, wp.tile_full(4, wp.int64(-3), dtype=wp.int64), offset=1))
    wp.tile_store(p_u64, wp.tile_atomic_add(u64, wp.tile_full(4, wp.uint64(5), dtype=wp.uint64), offset=1))
    wp.tile_store(p_f16, wp.tile_atomic_add(f16, wp.tile_full(4, wp.float16(0.5), dtype=wp.float16), offset=1))
    wp.tile_store(p_f64, wp.tile_atomic_add(f64, wp.tile_full(4, 0.25, dtype=wp.float64), offset=1))
    wp.tile_store(p_v3, wp.tile_atomic_add(v3, wp.tile_full(4, wp.vec3(1.0, 2.0, 3.0), dtype=wp.vec3), offset=1))
    wp.tile_store(p_m22, wp.tile_atomic_add(m22, wp.tile_ones(4, dtype=wp.mat22d), offset=1))


def test_previous_values_of_every_atomic_dtype():
    # arrays of 4 elements added at offset 1: the tile's last element lies past the extent (previous value zero)
    base = np.array([10, 20, 30, 40])
    adds = {"i32": np.arange(4), "u32": np.ones(4), "i64": np.full(4, -3), "u64": np.full(4, 5),
            "f16": np.full(4, 0.5), "f64": np.full(4, 0.25)}
    scalars = {"i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "f16": np.float16,
               "f64": np.float64}
    arrays = {k: wp.array(base.astype(t), dtype=t, device="cpu") for k, t in scalars.items()}
    v0 = np.arange(12, dtype=np.float32).reshape(4, 3)
    m0 = np.arange(16, dtype=np.float64).reshape(4, 2, 2)
    arrays["v3"] = wp.array(v0, dtype=wp.vec3, device="cpu")
    arrays["m22"] = wp.array(m0, dtype=wp.mat22d, device="cpu")
    previous = {k: wp.zeros(4, dtype=a.dtype, device="cpu") for k, a in arrays.items()}
    wp.launch_tiled(add_each_dtype, dim=1, inputs=[*arrays.values(), *previous.values()], block_dim=1, device="cpu")
    for k, t in scalars.items():
        start = base.astype(t)
        np.testing.assert_array_equal(previous[k].numpy(), np.concatenate([start[1:], [0]]).astype(t), err_msg=k)
        np.testing.assert_array_equal(arrays[k].numpy(), np.concatenate([start[:1], start[1:] + adds[k][:3].astype(t)]),
                                      err_msg=k)
    np.testing.assert_array_equal(previous["v3"].numpy(), np.concatenate([v0[1:], np.zeros((1, 3))]))
    np.testing.assert_array_equal(arrays["v3"].numpy()[1:], v0[1:] + [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(previous["m22"].numpy(), np.concatenate([m0[1:], np.zeros((1, 2, 2))]))
    np.testing.assert_array_equal(arrays["m22"].numpy()[1:], m0[1:] + 1.0)


@wp.kernel
def add_and_read(a: wp.array(dtype=float), src: wp.array(dtype=float), x: wp.array(dtype=float),
                 out: wp.array(dtype=float)):
    t = wp.tile_load(src, shape=4)
    p = wp.tile_atomic_add(a, t * 2.0, offset=1)
    xt = wp.tile_load(x, shape=4)
    wp.tile_store(out, p * xt)


def test_gradient_goes_to_the_added_tile_and_not_through_the_previous_values():
    a = wp.array(np.arange(6, dtype=np.float32), requires_grad=True, device="cpu")
    src = wp.array(np.array([1, 2, 3, 4], np.float32), requires_grad=True, device="cpu")
    x = wp.array(np.array([5, 6, 7, 8], np.float32), requires_grad=True, device="cpu")
    out = wp.zeros(4, dtype=float, requires_grad=True, device="cpu")
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(add_and_read, dim=1, inputs=[a, src, x, out], block_dim=1, device="cpu")
    a.grad = wp.array(np.array([1, 10, 100, 1000, 10000, 100000], np.float32), device="cpu")
    out.grad = wp.full(4, 7.0, dtype=float, device="cpu")
    tape.backward()
    # recorded from warp-lang 1.19 (CPU), the same kernel and seeds
    np.testing.assert_array_equal(out.numpy(), [5, 12, 21, 32])
    np.testing.assert_array_equal(a.numpy(), [0, 3, 6, 9, 12, 5])
    np.testing.assert_array_equal(src.grad.numpy(), [20, 200, 2000, 20000])
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0, 0])
    np.testing.assert_array_equal(a.grad.numpy(), [1, 10, 100, 1000, 10000, 100000])


@wp.kernel
def lanes_add(a: wp.array(dtype=float), previous: wp.array(dtype=float)):
    i = wp.tid()
    p = wp.tile_atomic_add(a, wp.tile_ones(8, dtype=float), offset=i * 8)
    wp.tile_store(previous, p, offset=i * 8)


def test_previous_values_with_cpu_lanes():
    saved = wp.config.enable_cpu_blocks
    wp.config.enable_cpu_blocks = True
    try:
        a0 = np.arange(16, dtype=np.float32)
        a, previous = wp.array(a0, device="cpu"), wp.zeros(16, dtype=float, device="cpu")
        wp.launch_tiled(lanes_add, dim=2, inputs=[a, previous], block_dim=4, device="cpu")
    finally:
        wp.config.enable_cpu_blocks = saved
    np.testing.assert_array_equal(previous.numpy(), a0)
    np.testing.assert_array_equal(a.numpy(), a0 + 1.0)


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not installed (scripts/setup-env.sh)")
def test_cuda_kernel_reading_previous_values_keeps_one_thread_per_block():
    meta = cuda_compile.build(add_2d, 90)
    assert meta["cubin"] == "kernel.cubin"
    assert meta["tile_launch"] == {"cooperative": False,
                                   "reason": "tile_atomic_add's result assumes one lane per block"}


@wp.kernel
def add_indexed(a: wp.array2d(dtype=float), src: wp.array2d(dtype=float), idx: wp.array(dtype=int),
                previous: wp.array2d(dtype=float)):
    t = wp.tile_load(src, shape=(4, 3))
    p = wp.tile_atomic_add_indexed(a, indices=wp.tile_load(idx, shape=4), t=t, axis=0)
    wp.tile_store(previous, p * 2.0)


def test_atomic_add_indexed_returns_previous_rows_and_its_gradient():
    a0 = np.arange(15, dtype=np.float32).reshape(5, 3)
    a = wp.array(a0, requires_grad=True, device="cpu")
    src = wp.array(np.full((4, 3), 10, np.float32), requires_grad=True, device="cpu")
    idx = np.array([4, 0, 7, 2], np.int32)  # row 7 lies past the array: skipped, its previous row zero
    previous = wp.zeros((4, 3), dtype=float, requires_grad=True, device="cpu")
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(add_indexed, dim=1, inputs=[a, src, wp.array(idx, dtype=int, device="cpu"), previous],
                        block_dim=1, device="cpu")
    a.grad = wp.array(a0 + 100, device="cpu")
    previous.grad = wp.ones((4, 3), dtype=float, device="cpu")
    tape.backward()
    expected_a, expected_previous = a0.copy(), np.zeros((4, 3), np.float32)
    for r, i in enumerate(idx):
        if i < 5:
            expected_previous[r] = a0[i]
            expected_a[i] += 10
    np.testing.assert_array_equal(a.numpy(), expected_a)
    np.testing.assert_array_equal(previous.numpy(), expected_previous * 2)
    # recorded from warp-lang 1.19: the updated rows' adjoints go to the tile; the previous values carry none
    np.testing.assert_array_equal(src.grad.numpy(), [[112, 113, 114], [100, 101, 102], [0, 0, 0], [106, 107, 108]])
