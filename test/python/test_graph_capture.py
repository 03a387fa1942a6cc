"""Graph capture on the CPU (wp.capture_begin/end/launch, wp.ScopedCapture, wp.capture_if/capture_while): a
capture records without running, a replay runs every recorded operation in order on the arrays' contents at
replay time with the scalar values of capture time; conditional nodes read their condition at replay. Results
against hand-computed values and numpy; bad uses against Warp's messages."""

import threading

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def add_value(a: wp.array(dtype=float), value: float):
    i = wp.tid()
    a[i] = a[i] + value


@wp.kernel
def scale_into(src: wp.array(dtype=float), factor: float, dst: wp.array(dtype=float)):
    i = wp.tid()
    dst[i] = src[i] * factor


@wp.kernel
def count_down(counter: wp.array(dtype=wp.int32), steps: wp.array(dtype=float)):
    counter[0] = counter[0] - 1
    steps[0] = steps[0] + 1.0


@wp.kernel
def sum_into(values: wp.array(dtype=float), total: wp.array(dtype=float)):
    wp.atomic_add(total, 0, values[wp.tid()])


@wp.kernel
def square_sum(x: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, x[i] * x[i])


def test_capture_records_without_running_and_replays_in_order():
    a = wp.zeros(4, dtype=float, device="cpu")
    b = wp.zeros(4, dtype=float, device="cpu")
    wp.capture_begin(device="cpu")
    assert wp.get_device("cpu").is_capturing
    wp.launch(add_value, dim=4, inputs=[a, 1.0], device="cpu")  # a += 1
    wp.copy(b, a)  # b = a
    a.fill_(3.0)  # a = 3
    wp.launch(scale_into, dim=4, inputs=[a, 2.0, b], device="cpu")  # would make b = 6: b is copied again below
    wp.copy(b, a, dest_offset=1, count=2)  # b[1:3] = 3
    graph = wp.capture_end(device="cpu")
    assert not wp.get_device("cpu").is_capturing
    assert isinstance(graph, wp.Graph)
    # nothing ran at capture time
    np.testing.assert_array_equal(a.numpy(), 0.0)
    np.testing.assert_array_equal(b.numpy(), 0.0)
    wp.capture_launch(graph)
    np.testing.assert_array_equal(a.numpy(), [3.0, 3.0, 3.0, 3.0])
    np.testing.assert_array_equal(b.numpy(), [6.0, 3.0, 3.0, 6.0])
    # replays work on the arrays' current contents
    a.assign(np.array([10.0, 20.0, 30.0, 40.0], dtype=np.float32))
    wp.capture_launch(graph)
    np.testing.assert_array_equal(a.numpy(), 3.0)
    np.testing.assert_array_equal(b.numpy(), [6.0, 3.0, 3.0, 6.0])


def test_replay_reads_array_contents_at_replay_and_values_at_capture():
    src = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32), device="cpu")
    dst = wp.zeros(3, dtype=float, device="cpu")
    factor = 2.0
    with wp.ScopedCapture(device="cpu") as capture:
        wp.launch(scale_into, dim=3, inputs=[src, factor, dst], device="cpu")
    factor = 100.0  # a Python value is captured as it was
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(dst.numpy(), [2.0, 4.0, 6.0])
    src.assign([5.0, 6.0, 7.0])  # an array is captured by reference
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(dst.numpy(), [10.0, 12.0, 14.0])
    assert factor == 100.0


def test_recorded_launch_in_a_capture_keeps_the_parameters_of_capture_time():
    a = wp.zeros(2, dtype=float, device="cpu")
    cmd = wp.launch(add_value, dim=2, inputs=[a, 1.0], device="cpu", record_cmd=True)
    with wp.ScopedCapture(device="cpu") as capture:
        cmd.launch()
        cmd.set_param_at_index(1, 10.0)  # after the recorded launch: the graph keeps 1.0 for it
        cmd.launch()
    np.testing.assert_array_equal(a.numpy(), 0.0)
    cmd.set_param_at_index(1, 1000.0)
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(a.numpy(), [11.0, 11.0])


def test_assigned_numpy_values_are_kept_as_captured():
    a = wp.zeros(3, dtype=float, device="cpu")
    values = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    with wp.ScopedCapture(device="cpu") as capture:
        a.assign(values)
    values[:] = -7.0  # the caller's array changes after the capture: the graph keeps what it was given
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(a.numpy(), [1.0, 2.0, 3.0])


def test_fill_values_are_kept_per_graph():
    vecs = wp.zeros(3, dtype=wp.vec3, device="cpu")
    graphs = []
    for value in (1.0, 2.0):
        with wp.ScopedCapture(device="cpu") as capture:
            vecs.fill_(wp.vec3(value, -value, 0.5))
        graphs.append(capture.graph)
    wp.capture_launch(graphs[1])
    np.testing.assert_array_equal(vecs.numpy(), np.tile([2.0, -2.0, 0.5], (3, 1)))
    wp.capture_launch(graphs[0])
    np.testing.assert_array_equal(vecs.numpy(), np.tile([1.0, -1.0, 0.5], (3, 1)))
    with wp.ScopedCapture(device="cpu") as capture:
        vecs.zero_()
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(vecs.numpy(), 0.0)


def test_arrays_zeroed_by_wp_zeros_in_a_capture_are_zeroed_at_each_replay():
    values = wp.array(np.arange(1.0, 6.0, dtype=np.float32), device="cpu")  # 1 + 2 + 3 + 4 + 5 = 15
    with wp.ScopedCapture(device="cpu") as capture:
        total = wp.zeros(1, dtype=float, device="cpu")
        wp.launch(sum_into, dim=5, inputs=[values, total], device="cpu")
    for _ in range(3):  # an accumulator, not a running sum across replays
        wp.capture_launch(capture.graph)
        assert total.numpy()[0] == 15.0


def test_capture_while_loops_until_the_condition_reads_zero_at_replay():
    counter = wp.array([3], dtype=wp.int32, device="cpu")
    steps = wp.zeros(1, dtype=float, device="cpu")
    with wp.ScopedCapture(device="cpu") as capture:
        wp.capture_while(counter, lambda: wp.launch(count_down, dim=1, inputs=[counter, steps], device="cpu"))
    assert counter.numpy()[0] == 3 and steps.numpy()[0] == 0.0  # recorded once, not run
    wp.capture_launch(capture.graph)
    assert counter.numpy()[0] == 0 and steps.numpy()[0] == 3.0
    wp.capture_launch(capture.graph)  # the condition is 0 already: the body does not run
    assert steps.numpy()[0] == 3.0
    counter.fill_(5)
    wp.capture_launch(capture.graph)
    assert counter.numpy()[0] == 0 and steps.numpy()[0] == 8.0


def test_capture_while_passes_kwargs_and_runs_directly_outside_a_capture():
    counter = wp.array([4], dtype=wp.int32, device="cpu")
    steps = wp.zeros(1, dtype=float, device="cpu")

    def body(counter, steps):
        wp.launch(count_down, dim=1, inputs=[counter, steps], device="cpu")

    wp.capture_while(counter, body, counter=counter, steps=steps)
    assert counter.numpy()[0] == 0 and steps.numpy()[0] == 4.0


def test_capture_if_picks_its_branch_at_replay():
    flag = wp.array([1], dtype=wp.int32, device="cpu")
    a = wp.zeros(2, dtype=float, device="cpu")
    with wp.ScopedCapture(device="cpu") as capture:
        wp.capture_if(flag, on_true=lambda: a.fill_(7.0), on_false=lambda: a.fill_(-1.0))
    np.testing.assert_array_equal(a.numpy(), 0.0)
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(a.numpy(), 7.0)
    flag.zero_()
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(a.numpy(), -1.0)
    with wp.ScopedCapture(device="cpu") as only_true:
        wp.capture_if(flag, on_true=lambda: a.fill_(9.0))
    wp.capture_launch(only_true.graph)  # flag is 0 and there is no on_false: nothing
    np.testing.assert_array_equal(a.numpy(), -1.0)
    wp.capture_if(flag, on_false=lambda: a.fill_(2.0))  # outside a capture: at once
    np.testing.assert_array_equal(a.numpy(), 2.0)


def test_graphs_as_branches_and_inside_other_captures():
    a = wp.zeros(1, dtype=float, device="cpu")
    with wp.ScopedCapture(device="cpu") as inner:
        wp.launch(add_value, dim=1, inputs=[a, 1.0], device="cpu")
    with wp.ScopedCapture(device="cpu") as outer:
        wp.capture_launch(inner.graph)  # recorded as a child graph
        wp.launch(add_value, dim=1, inputs=[a, 10.0], device="cpu")
        wp.capture_launch(inner.graph)
    assert a.numpy()[0] == 0.0
    wp.capture_launch(outer.graph)
    assert a.numpy()[0] == 12.0
    flag = wp.array([1], dtype=wp.int32, device="cpu")
    with wp.ScopedCapture(device="cpu") as conditional:
        wp.capture_if(flag, on_true=inner.graph)
    wp.capture_launch(conditional.graph)
    assert a.numpy()[0] == 13.0


def test_captured_tape_backward_and_zero():
    n = 5
    x = wp.array(np.arange(n, dtype=np.float32), device="cpu", requires_grad=True)
    loss = wp.zeros(1, dtype=float, device="cpu", requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square_sum, dim=n, inputs=[x, loss], device="cpu")
    with wp.ScopedCapture(device="cpu") as backward:
        tape.backward(loss)
    with wp.ScopedCapture(device="cpu") as zero:
        tape.zero()
    np.testing.assert_array_equal(x.grad.numpy(), 0.0)  # the backward was recorded, not run
    for values in (np.arange(n, dtype=np.float32), np.array([1.5, -2.0, 0.25, 3.0, -1.0], dtype=np.float32)):
        x.assign(values)
        wp.capture_launch(backward.graph)
        np.testing.assert_allclose(x.grad.numpy(), 2.0 * values)  # d/dx sum(x^2)
        wp.capture_launch(zero.graph)
        np.testing.assert_array_equal(x.grad.numpy(), 0.0)
        np.testing.assert_array_equal(loss.grad.numpy(), 0.0)


def test_captured_forward_and_backward_of_a_recording_tape():
    x = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32), device="cpu", requires_grad=True)
    y = wp.zeros(3, dtype=float, device="cpu", requires_grad=True)
    loss = wp.zeros(1, dtype=float, device="cpu", requires_grad=True)
    with wp.ScopedCapture(device="cpu") as capture:
        tape = wp.Tape()
        with tape:
            wp.launch(scale_into, dim=3, inputs=[x, 3.0, y], device="cpu")
            wp.copy(loss, y, count=1)  # loss = y[0] = 3 x[0]
        tape.backward(loss)
    np.testing.assert_array_equal(y.numpy(), 0.0)
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(y.numpy(), [3.0, 6.0, 9.0])
    assert loss.numpy()[0] == 3.0
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0, 0.0])


def test_pause_runs_work_at_once():
    a = wp.zeros(1, dtype=float, device="cpu")
    wp.capture_begin(device="cpu")
    wp.launch(add_value, dim=1, inputs=[a, 1.0], device="cpu")
    graph = wp.capture_pause(device="cpu")
    wp.launch(add_value, dim=1, inputs=[a, 100.0], device="cpu")  # not captured: runs now
    assert a.numpy()[0] == 100.0
    wp.capture_resume(graph, device="cpu")
    wp.launch(add_value, dim=1, inputs=[a, 10.0], device="cpu")
    assert wp.capture_end(device="cpu") is graph
    wp.capture_launch(graph)
    assert a.numpy()[0] == 111.0


def test_scoped_capture_ends_the_capture_when_its_body_raises():
    with pytest.raises(ValueError, match="^inside$"):
        with wp.ScopedCapture(device="cpu"):
            raise ValueError("inside")
    assert not wp.get_device("cpu").is_capturing
    with wp.ScopedCapture(device="cpu") as capture:  # a new capture can begin
        pass
    wp.capture_launch(capture.graph)  # an empty graph replays as nothing


def test_bad_uses_raise_warps_messages():
    cpu = wp.get_device("cpu")
    with wp.ScopedCapture(device=cpu):
        with pytest.raises(RuntimeError, match="^Graph capture already in progress$"):
            wp.capture_begin(device=cpu)
        with pytest.raises(RuntimeError, match="^Graph capture already in progress$"):
            with wp.ScopedCapture(device=cpu):
                pass
    with pytest.raises(RuntimeError, match="^Graph capture is not active on this device$"):
        wp.capture_end(device=cpu)
    floats = wp.zeros(1, dtype=float, device=cpu)
    message = "^Condition must be a Warp array of int32 with a single element$"
    with pytest.raises(TypeError, match=message):
        wp.capture_while(floats, lambda: None)
    with pytest.raises(TypeError, match=message):
        wp.capture_if(np.ones(1, dtype=np.int32), on_true=lambda: None)
    with pytest.raises(TypeError, match=message):
        wp.capture_while(wp.zeros(0, dtype=wp.int32, device=cpu), lambda: None)
    with pytest.raises(TypeError, match="^while_body must be a Callable or a Graph$"):
        wp.capture_while(wp.ones(1, dtype=wp.int32, device=cpu), 3)
    with pytest.raises(TypeError, match=r"^capture_launch\(\) expects a wp\.Graph \(from wp\.capture_end\), got int$"):
        wp.capture_launch(3)
    assert wp.is_conditional_graph_supported() is False
    with pytest.raises(NotImplementedError, match=r"^wp\.capture_save\(\) is not implemented in mlwarp"):
        wp.capture_save(wp.Graph("cpu"), "graph.wrp")


def test_a_launch_error_in_a_capture_raises_at_capture_time():
    a = wp.zeros(2, dtype=float, device="cpu")
    with wp.ScopedCapture(device="cpu") as capture:
        with pytest.raises(wp.LaunchError, match="add_value"):
            wp.launch(add_value, dim=2, inputs=[a], device="cpu")  # one argument missing
        wp.launch(add_value, dim=2, inputs=[a, 2.0], device="cpu")
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(a.numpy(), 2.0)


def test_delaunay_flip_in_a_capture_runs_at_replay():
    # the thin quad: edge (0, 1) is not Delaunay (apex 2 lies inside the circumcircle of (1, 0, 3))
    points = wp.array(np.array([[-3.0, 0.0], [3.0, 0.0], [0.0, 1.0], [0.0, -1.0]], dtype=np.float32),
                      dtype=wp.vec2, device="cpu")
    tris_before = np.array([[0, 1, 2], [1, 0, 3]], dtype=np.int32)
    indices = wp.array(tris_before, dtype=wp.int32, device="cpu")
    with wp.ScopedCapture(device="cpu") as capture:
        total = wp.geometry.delaunay_edge_flip(points, indices)
        neighbours, _ = wp.geometry.tri_tri_adjacency(indices, vertex_count=4)
        with pytest.raises(RuntimeError, match="^`tri_tri_adjacency` requires `vertex_count` to be set for use in "
                                               "graph capture$"):
            wp.geometry.tri_tri_adjacency(indices)
    np.testing.assert_array_equal(indices.numpy(), tris_before)  # untouched until the replay
    wp.capture_launch(capture.graph)
    flipped = indices.numpy()
    assert total.numpy()[0] == 1
    # the flip replaces edge (0, 1) by edge (2, 3): both triangles now hold vertices 2 and 3
    assert all({2, 3} <= set(t) for t in flipped.tolist())
    assert sorted(set(flipped.ravel().tolist())) == [0, 1, 2, 3]
    np.testing.assert_array_equal(np.sort(neighbours.numpy(), axis=1), [[-1, -1, 1], [-1, -1, 0]])
    wp.capture_launch(capture.graph)  # Delaunay already: no flip
    assert total.numpy()[0] == 0
    np.testing.assert_array_equal(indices.numpy(), flipped)


def test_sorts_and_run_length_encoding_in_a_capture_run_at_replay():
    n = 6
    keys = wp.zeros(2 * n, dtype=wp.int32, device="cpu")
    values = wp.zeros(2 * n, dtype=wp.int32, device="cpu")
    run_values = wp.zeros(n, dtype=wp.int32, device="cpu")
    run_lengths = wp.zeros(n, dtype=wp.int32, device="cpu")
    run_count = wp.zeros(1, dtype=wp.int32, device="cpu")
    with wp.ScopedCapture(device="cpu") as capture:
        wp.utils.radix_sort_pairs(keys, values, n)
        wp.utils.runlength_encode(keys, run_values, run_lengths, run_count=run_count, value_count=n)
        with pytest.raises(RuntimeError, match=r"^runlength_encode\(\) returns the number of runs on the host: pass "
                                               r"a run_count array to use it in a graph capture$"):
            wp.utils.runlength_encode(keys, run_values, run_lengths, value_count=n)
    for k in ([5, 1, 5, 3, 1, 1], [2, 2, 2, 9, 0, 9]):
        keys.assign(np.array(k + [0] * n, dtype=np.int32))
        values.assign(np.arange(2 * n, dtype=np.int32))
        wp.capture_launch(capture.graph)
        order = np.argsort(np.array(k), kind="stable")
        np.testing.assert_array_equal(keys.numpy()[:n], np.array(k)[order])
        np.testing.assert_array_equal(values.numpy()[:n], order)
        sorted_keys = sorted(k)
        runs = [[v, sorted_keys.count(v)] for v in sorted(set(k))]  # by hand: each distinct key and its count
        count = run_count.numpy()[0]
        assert count == len(runs)
        np.testing.assert_array_equal(np.stack([run_values.numpy()[:count], run_lengths.numpy()[:count]], 1), runs)


@wp.kernel
def boxes_hit(bvh: wp.uint64, lower: wp.vec3, upper: wp.vec3, hits: wp.array(dtype=int)):
    query = wp.bvh_query_aabb(bvh, lower, upper)
    i = int(0)
    while wp.bvh_query_next(query, i):
        hits[i] += 1


@wp.kernel
def neighbour_counts(grid: wp.uint64, points: wp.array(dtype=wp.vec3), r: float, counts: wp.array(dtype=int)):
    tid = wp.tid()
    p = points[tid]
    query = wp.hash_grid_query(grid, p, r)
    index = int(0)
    n = int(0)
    while wp.hash_grid_query_next(query, index):
        if wp.length(points[index] - p) <= r:
            n += 1
    counts[tid] = n


def test_bvh_refit_and_hash_grid_build_in_a_capture_follow_the_arrays_at_replay():
    lowers_np = np.array([[0, 0, 0], [5, 5, 5], [10, 0, 0]], dtype=np.float32)
    lowers = wp.array(lowers_np, dtype=wp.vec3, device="cpu")
    uppers = wp.array(lowers_np + 1.0, dtype=wp.vec3, device="cpu")
    bvh = wp.Bvh(lowers, uppers)
    hits = wp.zeros(3, dtype=int, device="cpu")
    with wp.ScopedCapture(device="cpu") as capture:
        bvh.refit()
        hits.zero_()
        wp.launch(boxes_hit, dim=1, inputs=[bvh.id, wp.vec3(-0.5), wp.vec3(1.5), hits], device="cpu")
    moved = lowers_np.copy()
    moved[2] = [0.25, 0.25, 0.25]  # box 2 moves into the query box [-0.5, 1.5]^3
    lowers.assign(moved)
    uppers.assign(moved + 1.0)
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(hits.numpy(), [1, 0, 1])

    rng = np.random.default_rng(3)
    points_np = rng.uniform(0.0, 4.0, size=(40, 3)).astype(np.float32)
    points = wp.array(points_np, dtype=wp.vec3, device="cpu")
    grid = wp.HashGrid(8, 8, 8, device="cpu")
    counts = wp.zeros(40, dtype=int, device="cpu")
    r = 0.9
    with wp.ScopedCapture(device="cpu") as capture:
        grid.build(points, r)
        wp.launch(neighbour_counts, dim=40, inputs=[grid.id, points, r, counts], device="cpu")
    for scale in (1.0, 0.5):  # the grid is built from the points as they are at each replay
        points.assign(points_np * scale)
        wp.capture_launch(capture.graph)
        p = points_np.astype(np.float64) * scale
        distances = np.linalg.norm(p[:, None, :] - p[None, :, :], axis=-1)
        np.testing.assert_array_equal(counts.numpy(), (distances <= r).sum(axis=1))


@wp.kernel
def double_tiles(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float)):
    i, j = wp.tid()
    t = wp.tile_load(a, shape=(2, 2), offset=(i * 2, j * 2))
    wp.tile_store(b, t + t, offset=(i * 2, j * 2))


def test_tiled_launches_and_clones_in_a_capture():
    a = wp.array(np.arange(16, dtype=np.float32).reshape(4, 4), device="cpu")
    b = wp.zeros((4, 4), dtype=float, device="cpu")
    with wp.ScopedCapture(device="cpu") as capture:
        wp.launch_tiled(double_tiles, dim=(2, 2), inputs=[a, b], block_dim=4, device="cpu")
        snapshot = wp.clone(b)  # filled at replay, from b as the tiled launch left it
    np.testing.assert_array_equal(b.numpy(), 0.0)
    a.assign(np.full((4, 4), 1.5, dtype=np.float32))
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(b.numpy(), 3.0)
    np.testing.assert_array_equal(snapshot.numpy(), 3.0)


def test_indexed_array_writes_in_a_capture_use_the_indices_of_replay_time():
    data = wp.zeros(5, dtype=float, device="cpu")
    indices = wp.array([0, 2], dtype=wp.int32, device="cpu")
    view = wp.indexedarray(data, [indices])
    source = wp.array([4.0, 8.0], dtype=float, device="cpu")
    with wp.ScopedCapture(device="cpu") as capture:
        view.fill_(1.0)
        view.assign(source)
        wp.copy(data, data, dest_offset=4, src_offset=0, count=1)  # data[4] = data[0]
    indices.assign([1, 3])
    source.assign([5.0, 6.0])
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(data.numpy(), [0.0, 5.0, 0.0, 6.0, 0.0])


def test_strided_views_fill_and_copy_in_a_capture():
    # Warp 1.19 refuses these in a CPU capture (NotImplementedError, no recording path); mlwarp records them
    grid = wp.zeros((3, 3), dtype=wp.int32, device="cpu")
    source = wp.array(np.arange(9, dtype=np.int32).reshape(3, 3), device="cpu")
    with wp.ScopedCapture(device="cpu") as capture:
        grid[:, 0].fill_(7)
        wp.copy(grid[:, 2], source[:, 1])
    source.assign(np.arange(9, dtype=np.int32).reshape(3, 3) * 10)
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(grid.numpy(), [[7, 0, 10], [7, 0, 40], [7, 0, 70]])


def test_only_the_capturing_threads_work_is_recorded():
    a = wp.zeros(1, dtype=float, device="cpu")
    b = wp.zeros(1, dtype=float, device="cpu")
    with wp.ScopedCapture(device="cpu") as capture:
        wp.launch(add_value, dim=1, inputs=[a, 1.0], device="cpu")
        other = threading.Thread(target=lambda: wp.launch(add_value, dim=1, inputs=[b, 5.0], device="cpu"))
        other.start()
        other.join()
        assert b.numpy()[0] == 5.0  # another thread's launch ran at once (Warp's thread-local capture mode)
        cmd = wp.launch(add_value, dim=1, inputs=[a, 100.0], device="cpu", record_cmd=True)  # returned, not recorded
    wp.capture_launch(capture.graph)
    assert a.numpy()[0] == 1.0 and b.numpy()[0] == 5.0
    cmd.launch()
    assert a.numpy()[0] == 101.0


def test_a_body_that_raises_leaves_the_capture_usable():
    flag = wp.ones(1, dtype=wp.int32, device="cpu")
    a = wp.zeros(1, dtype=float, device="cpu")

    def failing():
        a.fill_(5.0)
        raise RuntimeError("body failed")

    with wp.ScopedCapture(device="cpu") as capture:
        with pytest.raises(RuntimeError, match="^body failed$"):
            wp.capture_while(flag, failing)
        a.fill_(2.0)  # recorded in the graph itself, not in the abandoned body
    wp.capture_launch(capture.graph)
    assert a.numpy()[0] == 2.0


def test_reductions_in_a_capture_write_out_at_replay_and_refuse_host_results():
    values = wp.array(np.array([1.0, 2.0, 4.0], dtype=np.float32), device="cpu")
    total = wp.zeros(1, dtype=float, device="cpu")
    inner = wp.zeros(1, dtype=float, device="cpu")
    with wp.ScopedCapture(device="cpu") as capture:
        wp.utils.array_sum(values, out=total)
        wp.utils.array_inner(values, values, out=inner)
        for operation, args in (("array_sum", (values,)), ("array_inner", (values, values))):
            with pytest.raises(RuntimeError, match=rf"^{operation}\(\) returns its result on the host when out is "
                                                   r"None: pass an out array to use it in a graph capture$"):
                getattr(wp.utils, operation)(*args)
    values.assign([3.0, 0.5, -1.0])
    wp.capture_launch(capture.graph)
    assert total.numpy()[0] == 2.5  # 3 + 0.5 - 1
    assert inner.numpy()[0] == 10.25  # 9 + 0.25 + 1


def test_iso_surface_extraction_refuses_a_capture():
    field = wp.zeros((3, 3, 3), dtype=float, device="cpu")
    cells = wp.array(np.zeros((1, 3), dtype=np.int32), dtype=wp.vec3i, device="cpu")
    with wp.ScopedCapture(device="cpu"):
        for operation, call in (
                ("Marching cubes", lambda: wp.geometry.IsoSurfaceMarchingCubes.extract(field, 0.5)),
                ("Surface nets", lambda: wp.geometry.IsoSurfaceNets.extract(field, 0.5)),
                ("sparse_marching_cubes_from_cells",
                 lambda: wp.geometry.sparse_marching_cubes_from_cells(cells, np.zeros(8, np.float32), device="cpu"))):
            with pytest.raises(RuntimeError, match=f"^{operation} reads its input on the host to size its outputs, "
                                                   "so it cannot be recorded in a graph capture: run it outside the "
                                                   "capture$"):
                call()


def test_hash_grid_reserve_and_savable_builds_refuse_a_capture():
    grid = wp.HashGrid(4, 4, 4, device="cpu")
    points = wp.array(np.zeros((2, 3), dtype=np.float32), dtype=wp.vec3, device="cpu")
    with wp.ScopedCapture(device="cpu"):
        with pytest.raises(NotImplementedError, match=r"^HashGrid\.reserve\(\) cannot be called during CPU graph "
                                                      r"capture; reserve before capture$"):
            grid.reserve(8)
    with wp.ScopedCapture(device="cpu", apic=True) as capture:
        with pytest.raises(NotImplementedError, match=r"^HashGrid\.build\(\) cannot be used in a saveable APIC "
                                                      r"capture because HashGrid serialization is not yet supported; "
                                                      r"use apic=False or build outside capture$"):
            grid.build(points, 1.0)
    assert capture.graph.apic is True


def test_a_tapes_recorded_function_in_a_captured_backward_is_recorded_op_by_op():
    x = wp.array(np.array([1.0, 2.0], dtype=np.float32), device="cpu", requires_grad=True)
    y = wp.zeros(2, dtype=float, device="cpu", requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scale_into, dim=2, inputs=[x, 1.0, y], device="cpu", record_tape=False)

        def backward():  # y = x: the gradient of x is y's, scaled by 4 here to tell it from a plain copy
            wp.launch(scale_into, dim=2, inputs=[y.grad, 4.0, x.grad], device="cpu")

        tape.record_func(backward, arrays=[x, y])
    seed = wp.array(np.array([1.0, -1.0], dtype=np.float32), device="cpu")
    with wp.ScopedCapture(device="cpu") as capture:
        tape.backward(grads={y: seed})
    np.testing.assert_array_equal(x.grad.numpy(), 0.0)
    for values in ([1.0, -1.0], [0.5, 3.0]):
        seed.assign(values)
        wp.capture_launch(capture.graph)
        np.testing.assert_array_equal(x.grad.numpy(), 4.0 * np.array(values))
