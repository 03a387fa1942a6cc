"""wp.closest_point_edge_edge (and the other geometric builtins of python/mlwarp/library/intersect.py) against brute-force
numpy references: the distance against a dense sampling of both segments, the weights against the
closed form of each branch, the gradient of the distance against central differences of a float64
numpy forward."""

import numpy as np
import pytest

import mlwarp as wp


def _np_closest(p1, q1, p2, q2, eps=1.0e-6):
    """The clamped closest points of two segments in float64 (Ericson's algorithm), as (s, t, d)."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = d1 @ d1, d2 @ d2, d2 @ r
    s = t = 0.0
    if a <= eps and e <= eps:
        pass
    elif a <= eps:
        t = np.clip(f / e, 0.0, 1.0)
    elif e <= eps:
        s = np.clip(-(d1 @ r) / a, 0.0, 1.0)
    else:
        c, b = d1 @ r, d1 @ d2
        denom = a * e - b * b
        s = np.clip((b * f - c * e) / denom, 0.0, 1.0) if denom > 0 else 0.0
        t = (b * s + f) / e
        if t < 0.0:
            t, s = 0.0, np.clip(-c / a, 0.0, 1.0)
        elif t > 1.0:
            t, s = 1.0, np.clip((b - c) / a, 0.0, 1.0)
    return np.array([s, t, np.linalg.norm((p2 + t * d2) - (p1 + s * d1))])


@wp.kernel
def _edge_edge(p1: wp.array(dtype=wp.vec3), q1: wp.array(dtype=wp.vec3), p2: wp.array(dtype=wp.vec3),
               q2: wp.array(dtype=wp.vec3), eps: float, out: wp.array(dtype=wp.vec3), dist: wp.array(dtype=float)):
    i = wp.tid()
    r = wp.closest_point_edge_edge(p1[i], q1[i], p2[i], q2[i], eps)
    out[i] = r
    dist[i] = r[2]


def _run(points, eps=1.0e-6, grad=False):
    n = len(points[0])
    arrays = [wp.array(p.astype(np.float32), dtype=wp.vec3, requires_grad=grad) for p in points]
    out = wp.zeros(n, dtype=wp.vec3)
    dist = wp.zeros(n, dtype=float, requires_grad=grad)
    tape = wp.Tape()
    with tape:
        wp.launch(_edge_edge, dim=n, inputs=[*arrays, eps, out, dist])
    if not grad:
        return out.numpy()
    tape.backward(grads={dist: wp.ones(n, dtype=float)})
    return out.numpy(), [a.grad.numpy() for a in arrays]


def test_distance_is_the_sampled_minimum_and_weights_give_it():
    rng = np.random.default_rng(11)
    points = [rng.standard_normal((64, 3)) for _ in range(4)]
    out = _run(points)
    grid = np.linspace(0.0, 1.0, 801)
    for i in range(len(out)):
        p1, q1, p2, q2 = (p[i].astype(np.float32).astype(np.float64) for p in points)
        a = p1 + grid[:, None] * (q1 - p1)
        b = p2 + grid[:, None] * (q2 - p2)
        sampled = np.linalg.norm(a[:, None] - b[None], axis=-1).min()
        s, t, d = out[i]
        assert 0.0 <= s <= 1.0 and 0.0 <= t <= 1.0
        assert d <= sampled + 1e-5
        assert d >= sampled - 2e-3 * max(np.linalg.norm(q1 - p1), np.linalg.norm(q2 - p2)) - 1e-5
        np.testing.assert_allclose(d, np.linalg.norm((p2 + t * (q2 - p2)) - (p1 + s * (q1 - p1))), atol=1e-5)
        np.testing.assert_allclose(out[i], _np_closest(p1, q1, p2, q2), atol=1e-4)


@pytest.mark.parametrize("case, expected", [
    # crossing at both middles, one unit apart
    (([0, 0, 0], [1, 0, 0], [0.5, 1, 1], [0.5, 1, -1]), [0.5, 0.5, 1.0]),
    # parallel, overlapping: s = 0 and t corrects
    (([0, 0, 0], [2, 0, 0], [-1, 1, 0], [3, 1, 0]), [0.0, 0.25, 1.0]),
    # parallel, disjoint: the end of the first meets the start of the second
    (([0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]), [1.0, 0.0, 1.0]),
    # both segments points
    (([1, 2, 3], [1, 2, 3], [1, 2, 5], [1, 2, 5]), [0.0, 0.0, 2.0]),
    # the first a point: projected onto the second and clamped
    (([0, 10, 0], [0, 10, 0], [-1, 0, 0], [1, 0, 0]), [0.0, 0.5, 10.0]),
    (([5, 1, 0], [5, 1, 0], [-1, 0, 0], [1, 0, 0]), [0.0, 1.0, np.sqrt(17.0)]),
    # the second a point
    (([-1, 0, 0], [1, 0, 0], [0, 3, 4], [0, 3, 4]), [0.5, 0.0, 5.0]),
    # perpendicular, t clamped to 1
    (([0, 0, 0], [1, 0, 0], [-2, 1, 0], [-2, 3, 0]), [0.0, 0.0, np.sqrt(5.0)]),
])
def test_branches_hand_computed(case, expected):
    out = _run([np.array([p], dtype=np.float64) for p in case])
    np.testing.assert_allclose(out[0], expected, atol=1e-6)


def test_python_scope_call():
    r = wp.closest_point_edge_edge(wp.vec3(0.0, 0.0, 0.0), wp.vec3(1.0, 0.0, 0.0), wp.vec3(0.5, 1.0, 1.0),
                                   wp.vec3(0.5, 1.0, -1.0), 1.0e-6)
    np.testing.assert_allclose(np.array(r), [0.5, 0.5, 1.0], atol=1e-6)


def test_distance_gradient_matches_central_differences():
    rng = np.random.default_rng(5)
    points = [rng.standard_normal((200, 3)) for _ in range(4)]
    _, grads = _run(points, grad=True)
    h = 1e-4
    checked = 0
    for i in range(200):
        base = [p[i].astype(np.float32).astype(np.float64) for p in points]
        d1, d2 = base[1] - base[0], base[3] - base[2]
        sin2 = 1.0 - (d1 @ d2) ** 2 / ((d1 @ d1) * (d2 @ d2))
        if sin2 < 1e-2:
            continue  # near-parallel: the adjoint is damped there on purpose
        fd = np.zeros((4, 3))
        for k in range(4):
            for j in range(3):
                plus = [b.copy() for b in base]
                minus = [b.copy() for b in base]
                plus[k][j] += h
                minus[k][j] -= h
                fd[k, j] = (_np_closest(*plus)[2] - _np_closest(*minus)[2]) / (2 * h)
        got = np.array([g[i] for g in grads])
        np.testing.assert_allclose(got, fd, atol=2e-3)
        checked += 1
    assert checked > 150


def test_near_parallel_gradients_stay_bounded():
    rng = np.random.default_rng(9)
    n = 200
    p1 = rng.standard_normal((n, 3))
    d1 = rng.standard_normal((n, 3))
    amp = 10.0 ** rng.uniform(-7.0, -2.0, n)
    d2 = d1 * rng.uniform(0.5, 2.0, n)[:, None] + amp[:, None] * rng.standard_normal((n, 3))
    p2 = p1 + rng.standard_normal((n, 3))
    _, grads = _run([p1, p1 + d1, p2, p2 + d2], grad=True)
    for g in grads:
        assert np.all(np.isfinite(g))
        assert np.abs(g).max() < 10.0  # |d dist / d point| <= 1 geometrically
