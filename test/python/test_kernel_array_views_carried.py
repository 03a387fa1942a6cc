"""Array views of a kernel's local arrays and of its arguments (`wp.array(ptr=local.ptr + offset, ...)`, slices,
views a @wp.func returns) chosen by branches, conditional expressions and loops, then read, written and passed
to @wp.func: each way Warp lets a kernel make one and carry it. Newton 1.8's multicontact narrow phase keeps
two vec2 polygons in one local buffer (`wp.zeros(shape=(10,), dtype=wp.vec2f)`, the second a pointer view
5 elements in) and picks which is the vertex and which the face polygon in nested branches. References are
numpy's, on the same data."""

import numpy as np
import pytest

import mlwarp as wp


@wp.func
def _append_unique(buf: wp.array(dtype=wp.vec2f), count: int, p: wp.vec2f):
    for i in range(count):
        if wp.length_sq(buf[i] - p) < 1.0e-12:
            return count, False
    buf[count] = p
    return count + 1, True


@wp.func
def _weighted_sum(buf: wp.array(dtype=wp.vec2f), count: int):
    s = wp.vec2f()
    for i in range(count):
        s += float(i + 1) * buf[i]
    return s


@wp.kernel
def _two_polygons_in_one_buffer(points: wp.array(dtype=wp.vec2f), face_on_b: wp.array(dtype=int),
                                buffers: wp.array2d(dtype=wp.vec2f), out: wp.array(dtype=wp.vec2f)):
    tid = wp.tid()
    for attempt in range(2):  # the views are made in a loop body, as Newton's per-pair loop makes them
        if attempt == 0:
            continue
        b_buffer = wp.zeros(shape=(10,), dtype=wp.vec2f)
        a_buffer = wp.array(ptr=b_buffer.ptr + wp.uint64(5 * 8), shape=(5,), dtype=wp.vec2f)
        a_count = int(0)
        b_count = int(0)
        for e in range(5):
            added = bool(False)
            a_count, added = _append_unique(a_buffer, a_count, points[e])
            b_count, added = _append_unique(b_buffer, b_count, points[5 + e])
        vertex_polygon = a_buffer
        vertex_count = a_count
        face_points = wp.array(ptr=b_buffer.ptr, shape=(5,), dtype=wp.vec2)
        face_count = b_count
        if face_on_b[tid] == 0:
            vertex_polygon = wp.array(ptr=b_buffer.ptr, shape=(5,), dtype=wp.vec2)
            vertex_count = b_count
            face_points = a_buffer
            face_count = a_count
        out[2 * tid] = _weighted_sum(vertex_polygon, vertex_count)
        out[2 * tid + 1] = _weighted_sum(face_points, face_count)
        for i in range(10):
            buffers[tid, i] = b_buffer[i]


def _unique(points):
    kept = []
    for p in points:
        if not any(np.sum((p - q) ** 2) < 1e-12 for q in kept):
            kept.append(p)
    return np.array(kept)


def test_pointer_views_of_a_local_buffer_picked_in_branches():
    points = np.array([[0, 1], [2, 3], [0, 1], [4, 5], [6, 7], [1, 1], [1, 1], [2, 2], [3, 3], [2, 2]], np.float32)
    buffers, out = wp.zeros((2, 10), dtype=wp.vec2f), wp.zeros(4, dtype=wp.vec2f)
    wp.launch(_two_polygons_in_one_buffer, dim=2,
              inputs=[wp.array(points, dtype=wp.vec2f), wp.array([1, 0], dtype=int), buffers, out])
    poly_a, poly_b = _unique(points[:5].astype(np.float64)), _unique(points[5:].astype(np.float64))
    expected_buffer = np.zeros((10, 2))
    expected_buffer[:len(poly_b)], expected_buffer[5:5 + len(poly_a)] = poly_b, poly_a

    def weighted(poly):
        return (np.arange(1, len(poly) + 1)[:, None] * poly).sum(axis=0)

    assert buffers.numpy().tolist() == [expected_buffer.tolist()] * 2
    expected = [weighted(poly_a), weighted(poly_b), weighted(poly_b), weighted(poly_a)]
    assert out.numpy().tolist() == np.array(expected).tolist()


@wp.func
def _second_half(buf: wp.array(dtype=float)):
    return wp.array(ptr=buf.ptr + wp.uint64(4 * 4), shape=(4,), dtype=float)


@wp.func
def _total(buf: wp.array(dtype=float)):
    s = float(0.0)
    for i in range(buf.shape[0]):
        s += buf[i]
    return s


@wp.kernel
def _views_carried(arg: wp.array(dtype=float), out: wp.array(dtype=float), flag: int):
    loc = wp.zeros(shape=(8,), dtype=float)
    for i in range(8):
        loc[i] = float(i + 1)
    v = loc if flag > 0 else arg  # a conditional expression: a local array or an argument
    out[0] = _total(v)
    out[1] = _total(_second_half(loc))  # a view a @wp.func returns
    u = arg
    n = int(0)
    while n < 2:  # a while loop carrying a view
        u = _second_half(u) if n == 0 else u[1:]
        n += 1
    out[2] = _total(u)
    m = wp.array(ptr=loc.ptr, shape=(2, 4), dtype=float)  # a 2-d view of a local array
    out[3] = _total(m[1])
    r = m[0]
    for _j in range(3):  # a for loop carrying a view
        r = r[1:]
    out[4] = r[0]
    g = arg[2:6]
    if flag > 1:  # a branch rebinding a slice of an argument to one of a local array
        g = loc[2:6]
    out[5] = _total(g)
    h = wp.array(ptr=arg.ptr, shape=(8,), dtype=float)
    h[0] = h[0] + 100.0  # a store through a view of an argument


@pytest.mark.parametrize("flag", [0, 1, 2])
def test_views_of_locals_and_arguments_through_branches_loops_and_calls(flag):
    a = np.arange(10.0, 18.0, dtype=np.float32)
    loc = np.arange(1.0, 9.0)
    arg, out = wp.array(a, dtype=float), wp.zeros(6, dtype=float)
    wp.launch(_views_carried, dim=1, inputs=[arg, out, flag])
    expected = [(loc if flag > 0 else a).sum(), loc[4:].sum(), a[4:][1:].sum(), loc.reshape(2, 4)[1].sum(),
                loc[3], (loc if flag > 1 else a)[2:6].sum()]
    assert out.numpy().tolist() == expected
    assert arg.numpy()[0] == a[0] + 100.0
