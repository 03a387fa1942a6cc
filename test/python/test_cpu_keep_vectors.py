"""A kernel whose threads run a while loop keeps its vectors on the CPU (warp-cpu-keep-vectors: no LLVM
scalarizer); its results are the same as any kernel's, checked here against numpy."""

import numpy as np

import mlwarp as wp
from mlwarp.compiler.targets.cpu.keep_vectors import KEEP_VECTORS_ATTR


@wp.kernel
def halvings(xs: wp.array(dtype=wp.vec4), counts: wp.array(dtype=int), rest: wp.array(dtype=wp.vec4)):
    i = wp.tid()
    v = xs[i]
    n = int(0)
    while wp.max(v) > 1.0:
        v = v * 0.5
        n += 1
    counts[i] = n
    rest[i] = v


@wp.kernel
def squares(xs: wp.array(dtype=wp.vec4), rest: wp.array(dtype=wp.vec4)):
    i = wp.tid()
    v = xs[i]
    for _ in range(3):
        v = wp.cw_mul(v, v)
    rest[i] = v


def test_a_while_loop_kernel_is_marked_and_a_counted_loop_kernel_is_not():
    assert KEEP_VECTORS_ATTR in halvings.to_mlir("lowered")
    assert KEEP_VECTORS_ATTR not in squares.to_mlir("lowered")


def test_kept_vectors_give_numpys_results():
    xs = np.random.default_rng(3).uniform(0.0, 100.0, (1000, 4)).astype(np.float32)
    counts, rest = wp.zeros(1000, dtype=int), wp.zeros(1000, dtype=wp.vec4)
    wp.launch(halvings, dim=1000, inputs=[wp.array(xs, dtype=wp.vec4), counts, rest])
    want = np.maximum(np.ceil(np.log2(xs.max(1).astype(np.float64))), 0).astype(int)
    np.testing.assert_array_equal(counts.numpy(), want)
    np.testing.assert_array_equal(rest.numpy(), xs * np.float32(2.0) ** -want[:, None].astype(np.float32))
