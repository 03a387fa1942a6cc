"""Gaps found by running a large Warp library on mlwarp: an annotation array's assignable `shape` (Warp's
plain attribute) and a `@wp.func_native` whose snippet is only the block barrier (`WP_TILE_SYNC();`)."""

import numpy as np
import pytest

import mlwarp as wp


# -- an annotation's shape ------------------------------------------------------------------------
def test_annotation_shape_default_and_assignable():
    a = wp.array(ndim=2, dtype=wp.float32)
    assert a.shape == (0, 0)  # Warp's (0,) * ndim
    a.shape = ("nworld", "*")  # metadata, as libraries annotate their arrays
    assert a.shape == ("nworld", "*") and a.ndim == 2 and a.dtype is wp.float32


def test_annotation_with_shape_still_annotates_a_kernel():
    ann = wp.array(ndim=1, dtype=float)
    ann.shape = ("n",)

    @wp.kernel
    def twice(x: ann, y: ann):
        i = wp.tid()
        y[i] = 2.0 * x[i]

    x = wp.array(np.arange(4, dtype=np.float32), device="cpu")
    y = wp.zeros(4, dtype=float, device="cpu")
    wp.launch(twice, dim=4, inputs=[x, y], device="cpu")
    np.testing.assert_array_equal(y.numpy(), [0.0, 2.0, 4.0, 6.0])


def test_shape_of_an_array_with_data_cannot_be_assigned():
    a = wp.zeros(3, dtype=float, device="cpu")
    with pytest.raises(AttributeError, match="shape of an array with data"):
        a.shape = (4,)
    assert a.shape == (3,)


# -- @wp.func_native("WP_TILE_SYNC();") -------------------------------------------------------------
@wp.func_native(snippet="WP_TILE_SYNC();")
def block_sync():
    pass


@wp.kernel
def rotate_through_barrier(a: wp.array(dtype=int), b: wp.array(dtype=int)):
    _, lane = wp.tid()
    a[lane] = 10 * lane + 1
    block_sync()  # every lane's write above comes before any lane's read below
    b[lane] = a[(lane + 1) % 4]


@pytest.fixture
def cpu_blocks():
    saved = wp.config.enable_cpu_blocks
    wp.config.enable_cpu_blocks = True
    yield
    wp.config.enable_cpu_blocks = saved


def test_barrier_snippet_compiles_as_the_block_barrier(cpu_blocks):
    a = wp.zeros(4, dtype=int, device="cpu")
    b = wp.zeros(4, dtype=int, device="cpu")
    wp.launch_tiled(rotate_through_barrier, dim=1, inputs=[a, b], block_dim=4, device="cpu")
    np.testing.assert_array_equal(a.numpy(), [1, 11, 21, 31])
    np.testing.assert_array_equal(b.numpy(), [11, 21, 31, 1])  # each lane read its neighbour's write


def test_barrier_snippet_with_one_lane_per_block():
    @wp.kernel
    def one_lane(a: wp.array(dtype=int), b: wp.array(dtype=int)):
        i = wp.tid()
        a[i] = 10 * i + 1
        block_sync()  # Warp's CPU default: one lane per block, the barrier waits for nothing
        b[i] = a[i] + 1

    a = wp.zeros(4, dtype=int, device="cpu")
    b = wp.zeros(4, dtype=int, device="cpu")
    wp.launch(one_lane, dim=4, inputs=[a, b], device="cpu")
    np.testing.assert_array_equal(b.numpy(), [2, 12, 22, 32])


def test_cuda_syncthreads_snippet_is_a_barrier_too_and_others_stay_refused():
    @wp.func_native("__syncthreads();")
    def cuda_sync(): ...

    @wp.func_native("WP_TILE_SYNC(); x = 1;")
    def not_only_a_barrier(): ...

    assert cuda_sync._wp_native_barrier_ and block_sync._wp_native_barrier_
    assert not not_only_a_barrier._wp_native_barrier_

    @wp.kernel
    def calls_other(a: wp.array(dtype=int)):
        not_only_a_barrier()

    # any other snippet is C++ compiled with the kernel: here one naming an undeclared `x`
    with pytest.raises(wp.CompileError, match="the native snippet of 'not_only_a_barrier' does not compile"):
        wp.launch(calls_other, dim=1, inputs=[wp.zeros(1, dtype=int, device="cpu")], device="cpu")

    @wp.kernel
    def barrier_with_argument(a: wp.array(dtype=int)):
        cuda_sync(a[0])

    with pytest.raises(wp.CompileError, match="takes no arguments"):
        wp.launch(barrier_with_argument, dim=1, inputs=[wp.zeros(1, dtype=int, device="cpu")], device="cpu")


# -- wp.static(funcs[i])(...) in a loop unrolled over i ----------------------------------------------
@wp.func
def _add_one(x: float, out: wp.array(dtype=float)):
    out[0] = out[0] + x


@wp.func
def _add_two(x: float, out: wp.array(dtype=float)):
    out[1] = out[1] + 2.0 * x


def _dispatcher(funcs, kinds):
    @wp.kernel(module="unique")
    def dispatch(kind: wp.array(dtype=int), out: wp.array(dtype=float)):
        for i in range(wp.static(len(funcs))):
            k = wp.static(kinds[i])
            if k == kind[0]:
                wp.static(funcs[i])(1.5, out)

    return dispatch


@pytest.mark.parametrize("kind,expected", [(3, [1.5, 0.0]), (5, [0.0, 3.0]), (7, [0.0, 0.0])])
def test_static_callee_indexed_by_unrolled_loop_variable(kind, expected):
    k = _dispatcher([_add_one, _add_two], [3, 5])
    out = wp.zeros(2, dtype=float, device="cpu")
    wp.launch(k, dim=1, inputs=[wp.array([kind], dtype=int, device="cpu"), out], device="cpu")
    np.testing.assert_allclose(out.numpy(), expected)
