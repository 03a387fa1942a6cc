"""A kernel whose threads run a while loop computing on vec4s keeps its vectors on the CPU (warp-cpu-keep-vectors:
no LLVM scalarizer), one whose while loop computes on vec3s does not; their results are the same as any
kernel's, checked here against numpy."""

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


@wp.kernel
def halvings3(xs: wp.array(dtype=wp.vec3), counts: wp.array(dtype=int), rest: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    v = xs[i]
    n = int(0)
    while wp.dot(v, v) > 1.0:
        v = v * 0.5
        n += 1
    counts[i] = n
    rest[i] = v


def test_a_while_loop_kernel_is_marked_and_a_counted_loop_kernel_is_not():
    assert KEEP_VECTORS_ATTR in halvings.to_mlir("lowered")
    assert KEEP_VECTORS_ATTR not in squares.to_mlir("lowered")


def test_a_while_loop_on_vec3s_is_split():
    # LLVM's vec3 is a 4-lane register with a dead lane, its dot products horizontal adds: split scalars are faster
    assert KEEP_VECTORS_ATTR not in halvings3.to_mlir("lowered")
    xs = np.random.default_rng(5).uniform(0.0, 100.0, (1000, 3)).astype(np.float32)
    counts, rest = wp.zeros(1000, dtype=int), wp.zeros(1000, dtype=wp.vec3)
    wp.launch(halvings3, dim=1000, inputs=[wp.array(xs, dtype=wp.vec3), counts, rest])
    # numpy's loop in float32, as the kernel's: halving is exact, the test v . v > 1 rounds as float32 does
    want_counts = np.zeros(1000, int)
    want = xs.copy()
    for i in range(1000):
        v = xs[i].copy()
        while np.float32(np.float32(v[0] * v[0] + v[1] * v[1]) + v[2] * v[2]) > 1.0:
            v = v * np.float32(0.5)
            want_counts[i] += 1
        want[i] = v
    np.testing.assert_array_equal(counts.numpy(), want_counts)
    np.testing.assert_array_equal(rest.numpy(), want)


def test_kept_vectors_give_numpys_results():
    xs = np.random.default_rng(3).uniform(0.0, 100.0, (1000, 4)).astype(np.float32)
    counts, rest = wp.zeros(1000, dtype=int), wp.zeros(1000, dtype=wp.vec4)
    wp.launch(halvings, dim=1000, inputs=[wp.array(xs, dtype=wp.vec4), counts, rest])
    want = np.maximum(np.ceil(np.log2(xs.max(1).astype(np.float64))), 0).astype(int)
    np.testing.assert_array_equal(counts.numpy(), want)
    np.testing.assert_array_equal(rest.numpy(), xs * np.float32(2.0) ** -want[:, None].astype(np.float32))


@wp.kernel
def long_body(xs: wp.array(dtype=wp.vec4), rest: wp.array(dtype=wp.vec4)):
    i = wp.tid()
    v = xs[i]
    for k in range(1500):  # unrolled (wp.static reads k): 1,500 copies of the body in one block
        v = wp.vec4(v[1], v[2], v[3], v[0] * wp.static(0.5 * float(1 << (k % 3))))  # exact: powers of two
    rest[i] = v


def test_a_very_large_kernel_keeps_its_vectors():
    # past LARGE_ENTRY_OPS the split and the vectoriser cost LLVM several times the compile time
    assert KEEP_VECTORS_ATTR in long_body.to_mlir("lowered")
    xs = np.random.default_rng(4).uniform(0.5, 1.0, (64, 4)).astype(np.float32)
    rest = wp.zeros(64, dtype=wp.vec4)
    wp.launch(long_body, dim=64, inputs=[wp.array(xs, dtype=wp.vec4), rest])
    want = xs.copy()
    for k in range(1500):
        want = np.concatenate([want[:, 1:], want[:, :1] * np.float32(0.5 * (1 << (k % 3)))], axis=1)
    np.testing.assert_array_equal(rest.numpy(), want)
