"""bfloat16 atomic add / sub / min / max (a compare-and-swap loop on the bits; they failed to compile)."""
import numpy as np

import mlwarp as wp


def _bf16_to_f32(bits):
    a = np.asarray(bits)
    a = a if a.dtype == np.uint16 else a.view(np.uint16)  # the raw bits, whichever numpy dtype carries them
    return (a.astype(np.uint32) << 16).view(np.float32)


@wp.kernel
def _rmw(acc: wp.array(dtype=wp.bfloat16), v: wp.array(dtype=wp.bfloat16)):
    i = wp.tid()
    wp.atomic_add(acc, 0, v[i])
    wp.atomic_sub(acc, 1, v[i])
    wp.atomic_min(acc, 2, v[i])
    wp.atomic_max(acc, 3, v[i])


@wp.kernel
def _returns(acc: wp.array(dtype=wp.bfloat16), v: wp.array(dtype=wp.bfloat16), old: wp.array(dtype=wp.bfloat16)):
    i = wp.tid()
    old[i] = wp.atomic_max(acc, i, v[i])


def test_bf16_atomic_kinds_over_many_threads():
    n = 256
    vals = np.array([(k % 8) - 3.0 for k in range(n)], dtype=np.float32)  # small integers: exact sums in bf16
    v = wp.array(vals, dtype=wp.bfloat16)
    acc = wp.array(np.array([0.0, 0.0, 100.0, -100.0], dtype=np.float32), dtype=wp.bfloat16)
    wp.launch(_rmw, n, inputs=[acc, v])
    # 32 copies of -3..4 sum to 32 * 4 = 128
    np.testing.assert_array_equal(_bf16_to_f32(acc.numpy()), [128.0, -128.0, -3.0, 4.0])


def test_bf16_atomic_returns_the_previous_value():
    acc = wp.array(np.array([1.0, 5.0, -2.0], dtype=np.float32), dtype=wp.bfloat16)
    v = wp.array(np.array([2.0, 3.0, -1.5], dtype=np.float32), dtype=wp.bfloat16)
    old = wp.zeros(3, dtype=wp.bfloat16)
    wp.launch(_returns, 3, inputs=[acc, v, old])
    np.testing.assert_array_equal(_bf16_to_f32(old.numpy()), [1.0, 5.0, -2.0])
    np.testing.assert_array_equal(_bf16_to_f32(acc.numpy()), [2.0, 5.0, -1.5])


@wp.kernel
def _degrees(a: wp.array(dtype=wp.bfloat16), d: wp.array(dtype=wp.bfloat16), r: wp.array(dtype=wp.bfloat16)):
    i = wp.tid()
    d[i] = wp.degrees(a[i])
    r[i] = wp.radians(a[i])


def test_bf16_through_double_math():
    # degrees/radians compute in double: bfloat16 <-> f64 goes through f32 (it failed to compile)
    a = wp.array(np.array([1.0, 3.0, 90.0], dtype=np.float32), dtype=wp.bfloat16)
    d, r = wp.zeros_like(a), wp.zeros_like(a)
    wp.launch(_degrees, 3, inputs=[a, d, r])
    # 57.2958 -> 57.25, 171.887 -> 172, 5156.6 -> 5152 (8 significant bits); 1.5708 -> 1.5703125
    np.testing.assert_array_equal(_bf16_to_f32(d.numpy()), [57.25, 172.0, 5152.0])
    np.testing.assert_array_equal(_bf16_to_f32(r.numpy())[2], 1.5703125)
