"""Warp's CPU lanes for tile kernels (wp.config.enable_cpu_blocks): block_dim lanes per block, lane-local code once
per lane, tile operations once per block (compiler/targets/cpu/block_lanes.py, python/mlwarp/launching/cpu_lanes.py). Expected
values are computed by hand or with numpy from Warp's semantics."""

import numpy as np
import pytest

import mlwarp as wp

CAP = wp.constant(32)
LANES = 8


@pytest.fixture
def cpu_blocks():
    wp.config.enable_cpu_blocks = True
    yield
    wp.config.enable_cpu_blocks = False


@wp.kernel
def gather_sum(a: wp.array(dtype=float), out: wp.array(dtype=float), width: wp.array(dtype=int)):
    i, lane = wp.tid()
    x = a[i * LANES + lane] * 2.0
    t = wp.tile(x)
    s = wp.tile_sum(t)
    out[i * LANES + lane] = wp.untile(t) + s[0]
    if lane == 0:
        width[i] = wp.block_dim()


def test_tile_of_lane_values_and_untile(cpu_blocks):
    a = np.arange(3 * LANES, dtype=np.float32)
    out = wp.zeros(3 * LANES, dtype=float, device="cpu")
    width = wp.zeros(3, dtype=int, device="cpu")
    wp.launch_tiled(gather_sum, dim=[3], inputs=[wp.array(a, device="cpu"), out, width], block_dim=LANES,
                    device="cpu")
    x = (a * 2.0).reshape(3, LANES)
    np.testing.assert_array_equal(out.numpy(), (x + x.sum(axis=1, keepdims=True)).ravel())
    np.testing.assert_array_equal(width.numpy(), [LANES] * 3)


def test_one_lane_without_enable_cpu_blocks():
    """The default keeps one lane per block: wp.block_dim() is 1 and only lane 0 runs."""
    a = np.arange(3 * LANES, dtype=np.float32)
    out = wp.zeros(3 * LANES, dtype=float, device="cpu")
    width = wp.zeros(3, dtype=int, device="cpu")
    wp.launch_tiled(gather_sum, dim=[3], inputs=[wp.array(a, device="cpu"), out, width], block_dim=LANES,
                    device="cpu")
    expected = np.zeros(3 * LANES, dtype=np.float32)
    expected[0::LANES] = a[0::LANES] * 4.0  # wp.tile(x) of one lane: x + sum([x])
    np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(width.numpy(), [1, 1, 1])


@wp.kernel
def push_pop(values: wp.array(dtype=int), slots: wp.array(dtype=int), counts: wp.array(dtype=int)):
    i, lane = wp.tid()
    s = wp.tile_stack(capacity=CAP, dtype=int)
    wp.tile_stack_push(s, lane * 10 + i, lane < 5)
    counts[i * LANES + lane] = wp.tile_stack_count(s)
    v, slot = wp.tile_stack_pop(s)
    values[i * LANES + lane] = v
    slots[i * LANES + lane] = slot


def test_stack_lanes_push_and_pop_in_lane_order(cpu_blocks):
    n = 2 * LANES
    values, slots, counts = (wp.full(n, -7, dtype=int, device="cpu") for _ in range(3))
    wp.launch_tiled(push_pop, dim=[2], inputs=[values, slots, counts], block_dim=LANES, device="cpu")
    # lanes 0..4 push (slots 0..4) and every lane sees 5 after the push; the pops in lane order take slots 4..0,
    # then the stack is empty: slot -1, value 0
    for i in range(2):
        np.testing.assert_array_equal(counts.numpy()[i * LANES:(i + 1) * LANES], [5] * LANES)
        np.testing.assert_array_equal(slots.numpy()[i * LANES:(i + 1) * LANES], [4, 3, 2, 1, 0, -1, -1, -1])
        np.testing.assert_array_equal(values.numpy()[i * LANES:(i + 1) * LANES],
                                      [40 + i, 30 + i, 20 + i, 10 + i, i, 0, 0, 0])


@wp.kernel
def survivors(out: wp.array(dtype=int)):
    tid = wp.tid()
    lane = tid % LANES
    if lane % 3 == 0:
        return
    s = wp.tile_stack(capacity=CAP, dtype=int)
    wp.tile_stack_push(s, lane, True)
    out[tid] = wp.tile_stack_count(s)


def test_early_return_and_partial_block(cpu_blocks):
    """wp.launch over 13 threads in blocks of 8: the second block has 5 lanes; lanes that returned take no part."""
    out = wp.full(13, -1, dtype=int, device="cpu")
    wp.launch(survivors, dim=13, inputs=[out], block_dim=LANES, device="cpu")
    # block 0: lanes 1 2 4 5 7 survive (5); block 1 (lanes 0..4): 1 2 4 survive (3)
    np.testing.assert_array_equal(out.numpy(), [-1, 5, 5, -1, 5, 5, -1, 5, -1, 3, 3, -1, 3])


@wp.kernel
def scatter_and_count(out: wp.array(dtype=float), calls: wp.array(dtype=int)):
    _i, lane = wp.tid()
    t = wp.tile_zeros(shape=4, dtype=float)
    wp.tile_scatter_add(t, lane % 4, 1.0 + float(lane), True)
    wp.atomic_add(calls, 0, 1)  # lane-local code: once per lane
    wp.tile_store(out, t)


def test_scatter_add_from_every_lane(cpu_blocks):
    out = wp.zeros(4, dtype=float, device="cpu")
    calls = wp.zeros(1, dtype=int, device="cpu")
    wp.launch_tiled(scatter_and_count, dim=[1], inputs=[out, calls], block_dim=LANES, device="cpu")
    # lane l adds 1 + l at l % 4: index 0 gets 1 + 5, 1 gets 2 + 6, ...
    np.testing.assert_array_equal(out.numpy(), [6.0, 8.0, 10.0, 12.0])
    assert calls.numpy()[0] == LANES


@wp.kernel
def tile_in_loop(x: wp.array2d(dtype=float), out: wp.array2d(dtype=float), calls: wp.array(dtype=int)):
    acc = wp.tile_zeros(shape=(1, LANES), dtype=float)
    ones = wp.tile_ones(shape=(1, 1), dtype=float)
    for k in range(x.shape[0]):
        wp.tile_matmul(ones, wp.tile_load(x, shape=(1, LANES), offset=(k, 0)), acc)  # acc += row k
        wp.atomic_add(calls, 0, 1)  # lane-local code in the loop: once per lane and iteration
    wp.tile_store(out, acc)


def test_tile_operations_in_a_loop(cpu_blocks):
    """A loop around tile operations runs once per block (its bound the same on every lane), its lane-local code
    on every lane."""
    x = np.arange(3 * LANES, dtype=np.float32).reshape(3, LANES)
    out = wp.zeros((1, LANES), dtype=float, device="cpu")
    calls = wp.zeros(1, dtype=int, device="cpu")
    wp.launch_tiled(tile_in_loop, dim=[1], inputs=[wp.array(x, device="cpu"), out, calls], block_dim=LANES,
                    device="cpu")
    np.testing.assert_array_equal(out.numpy()[0], x.sum(axis=0))
    assert calls.numpy()[0] == 3 * LANES


@wp.kernel
def lane_sum_in_loop(n: int, out: wp.array(dtype=float)):
    _i, lane = wp.tid()
    s = float(0.0)
    for _k in range(n):
        s += wp.tile_sum(wp.tile(float(lane)))[0]
    out[lane] = s


def test_lane_value_carried_by_a_cooperative_loop_is_refused(cpu_blocks):
    out = wp.zeros(LANES, dtype=float, device="cpu")
    with pytest.raises(Exception) as e:
        wp.launch_tiled(lane_sum_in_loop, dim=[1], inputs=[3, out], block_dim=LANES, device="cpu")
    assert "kernel 'lane_sum_in_loop' at " in str(e.value)
    assert ("a tile operation inside a loop that carries a lane value is not supported with Warp's CPU lanes "
            "(wp.config.enable_cpu_blocks, block_dim=8)") in str(e.value)


def test_adjoint_of_lane_values_in_tiles(cpu_blocks):
    """out[l] = 2 a[l] + sum_k 2 a[k] over the block: d(sum out)/d a[j] = 2 (its own lane) + 2 * LANES (every lane's
    read of the sum), each lane's read of s[0] adding its adjoint (Warp 1.19 gives the same)."""
    a = wp.array(np.arange(2 * LANES, dtype=np.float32), requires_grad=True, device="cpu")
    out = wp.zeros(2 * LANES, dtype=float, requires_grad=True, device="cpu")
    width = wp.zeros(2, dtype=int, device="cpu")
    with wp.Tape() as tape:
        wp.launch_tiled(gather_sum, dim=[2], inputs=[a, out, width], block_dim=LANES, device="cpu")
    out.grad = wp.ones_like(out)
    tape.backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full(2 * LANES, 2.0 + 2.0 * LANES, dtype=np.float32))


@wp.kernel
def scatter_sum(inp: wp.array(dtype=float), out: wp.array(dtype=float)):
    _i, lane = wp.tid()
    t = wp.tile_zeros(shape=1, dtype=float)
    wp.tile_scatter_add(t, 0, inp[lane] * float(lane + 1), True)
    out[lane] = wp.tile_extract(t, 0)


def test_adjoint_of_scatter_from_every_lane(cpu_blocks):
    """Every lane adds (k + 1) inp[k] into t[0] and reads the sum back: d(sum of out)/d inp[k] = LANES (k + 1)
    (Warp's too). The adjoint of the add leaves t's adjoint as it is (each lane reads all of it)."""
    inp = wp.array(np.ones(LANES, dtype=np.float32), requires_grad=True, device="cpu")
    out = wp.zeros(LANES, dtype=float, requires_grad=True, device="cpu")
    with wp.Tape() as tape:
        wp.launch_tiled(scatter_sum, dim=[1], inputs=[inp, out], block_dim=LANES, device="cpu")
    np.testing.assert_array_equal(out.numpy(), np.full(LANES, sum(range(1, LANES + 1)), dtype=np.float32))
    out.grad = wp.ones_like(out)
    tape.backward()
    np.testing.assert_array_equal(inp.grad.numpy(), LANES * np.arange(1, LANES + 1, dtype=np.float32))


@wp.kernel
def assign_lanes(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    _i, j = wp.tid()
    a = wp.tile_zeros(shape=LANES, dtype=float)
    a[j] = x[j] * float(j + 1)
    wp.tile_atomic_add(y, a)


def test_adjoint_of_lanes_writing_their_own_elements(cpu_blocks):
    """Each lane writes its own element (a[j] = (j + 1) x[j]): y = that tile, x.grad[j] = (j + 1) y.grad[j]."""
    x = wp.array(np.ones(LANES, dtype=np.float32), requires_grad=True, device="cpu")
    y = wp.zeros(LANES, dtype=float, requires_grad=True, device="cpu")
    with wp.Tape() as tape:
        wp.launch_tiled(assign_lanes, dim=[1], inputs=[x, y], block_dim=LANES, device="cpu")
    y.grad = wp.array(np.full(LANES, 2.0, dtype=np.float32), device="cpu")
    tape.backward()
    np.testing.assert_array_equal(y.numpy(), np.arange(1, LANES + 1, dtype=np.float32))
    np.testing.assert_array_equal(x.grad.numpy(), 2.0 * np.arange(1, LANES + 1, dtype=np.float32))


@wp.kernel
def read_on_lane_zero(inp: wp.array(dtype=float), out: wp.array(dtype=float)):
    _i, lane = wp.tid()
    t = wp.tile_load(inp, shape=LANES)
    if lane == 0:
        out[0] = wp.tile_extract(t, 3)


def test_adjoint_of_a_lane_branch_reading_a_tile_is_refused(cpu_blocks):
    inp = wp.array(np.ones(LANES, dtype=np.float32), requires_grad=True, device="cpu")
    out = wp.zeros(1, dtype=float, requires_grad=True, device="cpu")
    with wp.Tape() as tape:
        wp.launch_tiled(read_on_lane_zero, dim=[1], inputs=[inp, out], block_dim=LANES, device="cpu")
    out.grad = wp.ones_like(out)
    with pytest.raises(Exception) as e:
        tape.backward()
    assert "kernel 'read_on_lane_zero_adj' at " in str(e.value)
    assert ("a tile operation under a lane-dependent branch that has results is not supported with Warp's CPU "
            "lanes (wp.config.enable_cpu_blocks, block_dim=8)") in str(e.value)


@wp.kernel
def column_sums(x: wp.array2d(dtype=float), y: wp.array(dtype=float), calls: wp.array(dtype=int)):
    a = wp.tile_load(x, shape=(4, 3))
    wp.tile_store(y, wp.tile_sum(a, axis=0) * 2.0)
    wp.atomic_add(calls, 0, 1)


def test_adjoint_of_tile_operations(cpu_blocks):
    """The adjoint of tile operations runs once per block too: each x.grad element gets 2 * y.grad of its column
    once (not once per lane)."""
    x = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3), requires_grad=True, device="cpu")
    y = wp.zeros(3, dtype=float, requires_grad=True, device="cpu")
    calls = wp.zeros(1, dtype=int, device="cpu")
    with wp.Tape() as tape:
        wp.launch_tiled(column_sums, dim=[1], inputs=[x, y, calls], block_dim=LANES, device="cpu")
    y.grad = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32), device="cpu")
    tape.backward()
    np.testing.assert_array_equal(y.numpy(), 2.0 * np.arange(12, dtype=np.float32).reshape(4, 3).sum(axis=0))
    np.testing.assert_array_equal(x.grad.numpy(), np.tile([2.0, 4.0, 6.0], (4, 1)))
    assert calls.numpy()[0] == LANES


SUM_N = 100


@wp.kernel
def whole_sum(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    wp.tile_store(out, wp.tile_sum(wp.tile_load(a, shape=SUM_N)))


def _fold(values):
    total = np.float32(values[0])
    for v in values[1:]:
        total = np.float32(total + np.float32(v))
    return total


@pytest.mark.parametrize("lanes", [8, 7, 128])
def test_whole_tile_sum_in_warps_lane_order(cpu_blocks, lanes):
    """Warp's CPU sum with several lanes: lane l folds elements l, l + lanes, ..., then the lanes' partials are
    folded in lane order (the same bits as Warp 1.19 with enable_cpu_blocks); 128 lanes > 100 elements: row-major."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(SUM_N) * np.exp(rng.uniform(-8, 8, SUM_N))).astype(np.float32)
    out = wp.zeros(1, dtype=float, device="cpu")
    wp.launch_tiled(whole_sum, dim=[1], inputs=[wp.array(x, device="cpu"), out], block_dim=lanes, device="cpu")
    expected = _fold([_fold(x[lane::lanes]) for lane in range(min(lanes, SUM_N))])
    assert out.numpy()[0] == expected


@wp.kernel
def column_sums_added(x: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    wp.tile_atomic_add(y, wp.tile_sum(wp.tile_load(x, shape=(4, 3)), axis=0) * 2.0)


def test_lane_build_has_its_own_adjoint():
    """A kernel differentiated with one lane first, then with lanes: the lane build's adjoint is its own (the
    one-lane library's would run the block once per lane: 8 times the gradient)."""
    def run():
        x = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3), requires_grad=True, device="cpu")
        y = wp.zeros(3, dtype=float, requires_grad=True, device="cpu")
        with wp.Tape() as tape:
            wp.launch_tiled(column_sums_added, dim=[1], inputs=[x, y], block_dim=LANES, device="cpu")
        y.grad = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32), device="cpu")
        tape.backward()
        return x.grad.numpy()

    np.testing.assert_array_equal(run(), np.tile([2.0, 4.0, 6.0], (4, 1)))  # one lane per block
    wp.config.enable_cpu_blocks = True
    try:
        grad = run()
    finally:
        wp.config.enable_cpu_blocks = False
    np.testing.assert_array_equal(grad, np.tile([2.0, 4.0, 6.0], (4, 1)))


@wp.kernel
def partial_block(x: wp.array(dtype=float), m: wp.array2d(dtype=float), total: wp.array(dtype=float),
                  low: wp.array(dtype=float), columns: wp.array(dtype=float), copy: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=16)
    wp.tile_store(total, wp.tile_sum(t))
    wp.tile_store(low, wp.tile_min(t))
    wp.tile_store(columns, wp.tile_sum(wp.tile_load(m, shape=(4, 4)), axis=0))
    wp.tile_store(copy, t)


def test_partial_block_leaves_missing_lanes_elements_out(cpu_blocks):
    """wp.launch of 5 threads in a block of 8: element e belongs to lane e % 8, and lanes 5..7 are missing, so
    their elements take no part in reductions and are not stored (Warp's CPU tile semantics)."""
    x = np.arange(1, 17, dtype=np.float32)
    m = np.arange(16, dtype=np.float32).reshape(4, 4)
    present = (np.arange(16) % LANES) < 5
    outs = [wp.full(n, -1.0, dtype=float, device="cpu") for n in (1, 1, 4, 16)]
    wp.launch(partial_block, dim=5, inputs=[wp.array(x, device="cpu"), wp.array(m, device="cpu"), *outs],
              block_dim=LANES, device="cpu")
    total, low, columns, copy = (o.numpy() for o in outs)
    assert total[0] == x[present].sum()
    assert low[0] == x[present].min()
    np.testing.assert_array_equal(columns, np.where(present.reshape(4, 4), m, 0.0).sum(axis=0))
    np.testing.assert_array_equal(copy, np.where(present, x, -1.0))


def _pcg(state: int) -> int:
    """Warp's rand_pcg (native/rand.h), on Python ints modulo 2**32."""
    b = (state * 747796405 + 2891336453) & 0xFFFFFFFF
    c = (((b >> ((b >> 28) + 4)) ^ b) * 277803737) & 0xFFFFFFFF
    return (c >> 22) ^ c


@wp.kernel
def random_tiles(seed: int, x: wp.array(dtype=int)):
    rng = wp.rand_init(seed, 3)
    wp.tile_store(x, wp.tile_randi(shape=15, rng=rng))


@pytest.mark.parametrize("lanes", [4, 32])
def test_random_tiles_per_lane_generators(cpu_blocks, lanes):
    """Warp's tile_randi with lanes: lane l draws from rand_pcg(rng + l) the elements l, l + lanes, ... in turn."""
    x = wp.zeros(15, dtype=int, device="cpu")
    wp.launch_tiled(random_tiles, dim=[1], inputs=[7, x], block_dim=lanes, device="cpu")
    rng = _pcg((7 + _pcg(3)) & 0xFFFFFFFF)
    expected = np.zeros(15, dtype=np.int64)
    for lane in range(min(lanes, 15)):
        state = _pcg((rng + lane) & 0xFFFFFFFF)
        for e in range(lane, 15, lanes):
            state = _pcg(state)
            expected[e] = state - (1 << 32) if state >= 1 << 31 else state
    np.testing.assert_array_equal(x.numpy(), expected)


# -- tile operations whose operands differ between lanes: each lane computes the elements it owns (e % block_dim) --
OPS_LANES = 4
ROW = wp.constant(8)


@wp.kernel
def full_of_lane_values(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i, lane = wp.tid()
    t = wp.tile_full(shape=ROW, value=a[lane], dtype=float)
    wp.tile_store(out, t, offset=i * ROW)


@wp.kernel
def scaled_by_lane(a: wp.array(dtype=float), s: wp.array(dtype=float), out: wp.array(dtype=float)):
    i, lane = wp.tid()
    t = wp.tile_load(a, shape=ROW, offset=i * ROW)
    wp.tile_store(out, t * s[lane] + wp.tile_ones(shape=ROW, dtype=float), offset=i * ROW)


@wp.kernel
def store_at_lane_offsets(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i, lane = wp.tid()
    t = wp.tile_load(a, shape=ROW, offset=i * ROW)
    wp.tile_store(out, t, offset=i * 2 * ROW + lane * 2)


@wp.kernel
def load_at_lane_offsets(a: wp.array(dtype=float), out: wp.array(dtype=float), sums: wp.array(dtype=float)):
    i, lane = wp.tid()
    t = wp.tile_load(a, shape=ROW, offset=lane + i)
    wp.tile_store(out, t, offset=i * ROW)
    wp.tile_store(sums, wp.tile_sum(t), offset=i)


@wp.kernel
def lane_one_leaves(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i, lane = wp.tid()
    if lane == 1:
        return
    t = wp.tile_full(shape=ROW, value=a[lane] + 10.0, dtype=float)
    wp.tile_store(out, t, offset=i * ROW)


@wp.kernel
def add_at_lane_offsets(out: wp.array(dtype=float)):
    i, lane = wp.tid()
    t = wp.tile_full(shape=4, value=float(lane + 1), dtype=float)
    wp.tile_atomic_add(out, t, offset=lane)


def _owner():
    return np.arange(ROW) % OPS_LANES  # the lane that computes element e of a tile


def _launch(kernel, n_out, *inputs, blocks=2):
    out = wp.zeros(n_out, dtype=float, device="cpu")
    wp.launch_tiled(kernel, dim=[blocks], inputs=[wp.array(np.asarray(x, np.float32), device="cpu") for x in inputs]
                    + [out], block_dim=OPS_LANES, device="cpu")
    return out.numpy()


LANE_SCALES = np.array([1.0, 10.0, 100.0, 1000.0], np.float32)


def test_tile_full_of_a_lane_value_holds_each_owners_value(cpu_blocks):
    # Warp 1.19 on the CPU (enable_cpu_blocks): [1 2 3 4 1 2 3 4] for each block
    np.testing.assert_array_equal(_launch(full_of_lane_values, 2 * ROW, LANE_SCALES),
                                  np.tile(LANE_SCALES[_owner()], 2))


def test_elementwise_operator_with_a_lane_scalar(cpu_blocks):
    a = np.arange(2 * ROW, dtype=np.float32)
    expected = a * np.tile(LANE_SCALES[_owner()], 2) + 1.0
    np.testing.assert_array_equal(_launch(scaled_by_lane, 2 * ROW, a, LANE_SCALES), expected)


def test_store_at_each_lanes_offset_writes_that_lanes_elements(cpu_blocks):
    a = np.arange(2 * ROW, dtype=np.float32)
    expected = np.zeros(4 * ROW, np.float32)
    for block in range(2):
        for lane in range(OPS_LANES):  # in lane order: a later lane's element wins where two land
            start = block * 2 * ROW + lane * 2
            for e in np.flatnonzero(_owner() == lane):
                expected[start + e] = a[block * ROW + e]
    np.testing.assert_array_equal(_launch(store_at_lane_offsets, 4 * ROW, a), expected)


def test_load_at_each_lanes_offset_and_the_sum_of_the_owned_elements(cpu_blocks):
    a = np.arange(24, dtype=np.float32)
    rows = np.array([[a[lane + block + e] for e, lane in enumerate(_owner())] for block in range(2)])
    out = wp.zeros(2 * ROW, dtype=float, device="cpu")
    sums = wp.zeros(2, dtype=float, device="cpu")
    wp.launch_tiled(load_at_lane_offsets, dim=[2], inputs=[wp.array(a, device="cpu"), out, sums],
                    block_dim=OPS_LANES, device="cpu")
    np.testing.assert_array_equal(out.numpy(), rows.ravel())
    np.testing.assert_array_equal(sums.numpy(), rows.sum(axis=1))


def test_lanes_that_returned_compute_no_elements(cpu_blocks):
    expected = np.where(_owner() == 1, 0.0, LANE_SCALES[_owner()] + 10.0)
    np.testing.assert_array_equal(_launch(lane_one_leaves, 2 * ROW, LANE_SCALES), np.tile(expected, 2))


def test_atomic_add_at_each_lanes_offset(cpu_blocks):
    expected = np.zeros(12, np.float32)
    for block in range(2):
        for lane in range(OPS_LANES):
            for e in range(4):
                if e % OPS_LANES == lane:
                    expected[lane + e] += lane + 1.0
    np.testing.assert_array_equal(_launch(add_at_lane_offsets, 12), expected)


# -- wp.tile_from_thread: one lane's value in every element -------------------------------------------------------
@wp.kernel
def from_last_lane(output: wp.array(dtype=int)):
    idx = wp.tid()
    t = wp.tile_from_thread(shape=(1,), value=idx * 10, thread_idx=wp.block_dim() - 1, storage="shared")
    output[idx] = wp.tile_extract(t, 0) + idx


FROM_SIZE = wp.constant(8)


@wp.kernel
def from_lane_five(output: wp.array(dtype=float)):
    i, j = wp.tid()
    t = wp.tile_from_thread(shape=FROM_SIZE, value=float(j) * 3.0 + 7.0, thread_idx=5)
    wp.tile_store(output, t, offset=i * FROM_SIZE)


@wp.kernel
def from_lane_vector(output: wp.array(dtype=wp.vec3)):
    i, j = wp.tid()
    t = wp.tile_from_thread(shape=2, value=wp.vec3(float(j), 1.0, -float(j)), thread_idx=2)
    wp.tile_store(output, t, offset=i * 2)


def test_tile_from_thread_broadcasts_that_lanes_value(cpu_blocks):
    out = wp.zeros(16, dtype=int, device="cpu")
    wp.launch(from_last_lane, dim=[16], inputs=[out], block_dim=16, device="cpu")
    np.testing.assert_array_equal(out.numpy(), 15 * 10 + np.arange(16))
    out = wp.zeros(16, dtype=float, device="cpu")
    wp.launch_tiled(from_lane_five, dim=[2], inputs=[out], block_dim=8, device="cpu")
    np.testing.assert_array_equal(out.numpy(), np.full(16, 5 * 3.0 + 7.0))
    out = wp.zeros(6, dtype=wp.vec3, device="cpu")
    wp.launch_tiled(from_lane_vector, dim=[3], inputs=[out], block_dim=4, device="cpu")
    np.testing.assert_array_equal(out.numpy(), np.tile([2.0, 1.0, -2.0], (6, 1)))


def test_tile_from_thread_with_one_lane_is_the_value():
    out = wp.zeros(16, dtype=float, device="cpu")
    wp.launch_tiled(from_lane_five, dim=[2], inputs=[out], block_dim=8, device="cpu")  # block_dim resolves to 1
    np.testing.assert_array_equal(out.numpy(), np.full(16, 7.0))  # lane 0's j is 0


def test_tile_from_thread_errors():
    @wp.kernel
    def bad_storage(out: wp.array(dtype=float)):
        t = wp.tile_from_thread(shape=2, value=1.0, thread_idx=0, storage="global")
        wp.tile_store(out, t)

    @wp.kernel
    def bad_value(out: wp.array(dtype=float)):
        t = wp.tile_from_thread(shape=2, value=out, thread_idx=0)
        wp.tile_store(out, t)

    @wp.kernel
    def bad_index(out: wp.array(dtype=float)):
        t = wp.tile_from_thread(shape=2, value=1.0, thread_idx=0.5)
        wp.tile_store(out, t)

    out = wp.zeros(2, dtype=float, device="cpu")
    with pytest.raises(ValueError, match=r"wp\.tile_from_thread\(\): storage must be 'register' or 'shared', got "
                                         r"'global'"):
        wp.launch_tiled(bad_storage, dim=[1], inputs=[out], block_dim=1, device="cpu")
    with pytest.raises(TypeError, match=r"wp\.tile_from_thread\(\): mlwarp's tiles hold scalars .*, got array"):
        wp.launch_tiled(bad_value, dim=[1], inputs=[out], block_dim=1, device="cpu")
    with pytest.raises(TypeError, match=r"wp\.tile_from_thread\(\): thread_idx must be an int, got float32"):
        wp.launch_tiled(bad_index, dim=[1], inputs=[out], block_dim=1, device="cpu")


# -- a stack passed to a @wp.func: by reference, as Warp's ---------------------------------------------------------
@wp.func
def push_scaled(s: wp.tile_stack(capacity=CAP, dtype=int), value: int):
    wp.tile_stack_push(s, value * 10, True)


@wp.func
def count_of(s: wp.tile_stack(capacity=CAP, dtype=int)) -> int:
    return wp.tile_stack_count(s)


@wp.kernel
def push_in_a_function(out: wp.array(dtype=int), counts: wp.array(dtype=int)):
    i, lane = wp.tid()
    s = wp.tile_stack(capacity=CAP, dtype=int)
    push_scaled(s, lane + i)
    counts[i * wp.block_dim() + lane] = count_of(s)
    value, slot = wp.tile_stack_pop(s)
    if slot != -1:
        out[i * wp.block_dim() + slot] = value


@pytest.mark.parametrize("lanes", [1, LANES])
def test_a_stack_passed_to_a_function_is_updated_in_place(lanes):
    wp.config.enable_cpu_blocks = lanes > 1
    try:
        out, counts = wp.full(2 * lanes, -1, dtype=int, device="cpu"), wp.zeros(2 * lanes, dtype=int, device="cpu")
        wp.launch_tiled(push_in_a_function, dim=[2], inputs=[out, counts], block_dim=LANES, device="cpu")
    finally:
        wp.config.enable_cpu_blocks = False
    for i in range(2):  # each lane pushed (lane + i) * 10; the pops in lane order take the slots from the top
        block = slice(i * lanes, (i + 1) * lanes)
        np.testing.assert_array_equal(counts.numpy()[block], [lanes] * lanes)
        np.testing.assert_array_equal(np.sort(out.numpy()[block]), (np.arange(lanes) + i) * 10)


def test_stack_annotation_errors():
    with pytest.raises(ValueError, match=r"^wp\.tile_stack\(\) requires capacity to be a positive integer, got 0$"):
        wp.tile_stack(capacity=0, dtype=int)

    @wp.func
    def wants_a_float_stack(s: wp.tile_stack(capacity=CAP, dtype=float)):
        wp.tile_stack_push(s, 1.0, True)

    @wp.kernel
    def passes_an_int_stack(out: wp.array(dtype=int)):
        s = wp.tile_stack(capacity=CAP, dtype=int)
        wants_a_float_stack(s)

    with pytest.raises(wp.errors.CompileTypeError, match=r"Couldn't find function overload for 'wants_a_float_stack'"):
        wp.launch_tiled(passes_an_int_stack, dim=[1], inputs=[wp.zeros(1, dtype=int, device="cpu")], block_dim=1,
                        device="cpu")


# -- t[i] op= x from every lane: Warp's atomic update of the block's element, between barriers ------------------
@wp.kernel
def every_lane_updates(a: wp.array(dtype=wp.uint32), bits: wp.array(dtype=wp.uint32), sums: wp.array(dtype=float)):
    i, lane = wp.tid()
    s = wp.tile_zeros(shape=1, dtype=wp.uint32)
    s[0] = a[i]  # every lane writes the same value first
    s[0] |= wp.uint32(1) << wp.uint32(lane)
    t = wp.tile_zeros(shape=2, dtype=float)
    t[1] += float(lane) + 0.5
    t[1] -= 0.25
    if lane == 0:
        bits[i] = s[0]
        sums[i] = t[1]


def test_in_place_element_updates_from_every_lane(cpu_blocks):
    a = np.array([0x10000000, 0x00F00000], np.uint32)
    bits, sums = wp.zeros(2, dtype=wp.uint32, device="cpu"), wp.zeros(2, dtype=float, device="cpu")
    wp.launch_tiled(every_lane_updates, dim=[2], inputs=[wp.array(a, dtype=wp.uint32, device="cpu"), bits, sums],
                    block_dim=LANES, device="cpu")
    np.testing.assert_array_equal(bits.numpy(), a | np.uint32((1 << LANES) - 1))  # every lane's bit (Warp 1.19's)
    np.testing.assert_array_equal(sums.numpy(), [sum(l + 0.25 for l in range(LANES))] * 2)
