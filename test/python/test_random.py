"""Random numbers: Warp's PCG stream, checked against an independent numpy implementation of
native/rand.h (rand_pcg, rand_init, randi/randu/randf/randn and the sampling helpers)."""

import numpy as np
import pytest

import mlwarp as wp

U32 = np.uint32


def pcg(state):
    with np.errstate(over="ignore"):
        b = U32(state) * U32(747796405) + U32(2891336453)
        c = ((b >> ((b >> U32(28)) + U32(4))) ^ b) * U32(277803737)
        return (c >> U32(22)) ^ c


class Stream:
    """The reference generator: the state advances by one PCG step per number."""

    def __init__(self, seed, offset):  # rand_init(seed, offset)
        with np.errstate(over="ignore"):
            self.state = pcg(U32(np.int32(seed).view(np.uint32)) + pcg(U32(offset)))

    def u32(self):
        self.state = pcg(self.state)
        return self.state

    def f32(self):
        return np.float32(self.u32() >> U32(8)) * np.float32(1.0 / 16777216.0)


@wp.kernel
def draws(seed: int, ints: wp.array(dtype=wp.int32), uints: wp.array(dtype=wp.uint32),
          floats: wp.array(dtype=float)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    ints[tid * 2] = wp.randi(state)
    ints[tid * 2 + 1] = wp.randi(state, -5, 7)
    uints[tid] = wp.randu(state, wp.uint32(3), wp.uint32(1000))
    floats[tid * 3] = wp.randf(state)
    floats[tid * 3 + 1] = wp.randf(state, -2.0, 3.0)
    floats[tid * 3 + 2] = wp.randn(state)


def test_the_stream_is_warps_pcg():
    n, seed = 64, 42
    ints, uints, floats = wp.zeros(2 * n, dtype=wp.int32), wp.zeros(n, dtype=wp.uint32), wp.zeros(3 * n, dtype=float)
    wp.launch(draws, n, [seed, ints, uints, floats])
    for tid in range(n):
        r = Stream(seed, tid)
        assert ints.numpy()[2 * tid] == np.int32(r.u32().view(np.int32))
        assert ints.numpy()[2 * tid + 1] == np.int32(r.u32() % U32(12)) - 5
        assert uints.numpy()[tid] == r.u32() % U32(997) + U32(3)
        assert floats.numpy()[3 * tid] == r.f32()
        assert floats.numpy()[3 * tid + 1] == np.float32(5.0) * r.f32() + np.float32(-2.0)
        u1, u2 = r.f32(), r.f32()
        normal = np.sqrt(np.float32(-2.0) * np.log(u1 + np.float32(5.96e-8))) * \
            np.cos(np.float32(2.0) * np.float32(np.pi) * u2)
        assert floats.numpy()[3 * tid + 2] == pytest.approx(normal, rel=1e-6, abs=1e-6)


def test_known_values():
    # rand_pcg(42 + rand_pcg(0)) and its successors: fixed numbers that any change of algorithm breaks
    ints = wp.zeros(2, dtype=wp.int32)
    wp.launch(draws, 1, [42, ints, wp.zeros(1, dtype=wp.uint32), wp.zeros(3, dtype=float)])
    assert ints.numpy().tolist() == [-575632308, 5]


@wp.kernel
def samples(seed: int, v3: wp.array(dtype=wp.vec3), v2: wp.array(dtype=wp.vec2)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    v3[tid * 5] = wp.sample_unit_sphere(state)
    v3[tid * 5 + 1] = wp.sample_unit_sphere_surface(state)
    v3[tid * 5 + 2] = wp.sample_unit_hemisphere(state)
    v3[tid * 5 + 3] = wp.sample_unit_hemisphere_surface(state)
    v3[tid * 5 + 4] = wp.sample_unit_cube(state)
    v2[tid * 4] = wp.sample_unit_disk(state)
    v2[tid * 4 + 1] = wp.sample_unit_ring(state)
    v2[tid * 4 + 2] = wp.sample_unit_square(state)
    v2[tid * 4 + 3] = wp.sample_triangle(state)


def test_samples_lie_in_their_domains_and_follow_the_stream():
    n = 2000
    v3, v2 = wp.zeros(5 * n, dtype=wp.vec3), wp.zeros(4 * n, dtype=wp.vec2)
    wp.launch(samples, n, [7, v3, v2])
    a3, a2 = v3.numpy().reshape(n, 5, 3), v2.numpy().reshape(n, 4, 2)
    r3 = np.linalg.norm(a3, axis=2)
    assert (r3[:, 0] <= 1 + 1e-6).all() and np.allclose(r3[:, 1], 1, atol=1e-6)
    assert (r3[:, 2] <= 1 + 1e-6).all() and (a3[:, 2, 2] >= 0).all()
    assert np.allclose(r3[:, 3], 1, atol=1e-6) and (a3[:, 3, 2] >= 0).all()
    assert (np.abs(a3[:, 4]) <= 0.5).all()
    assert (np.linalg.norm(a2[:, 0], axis=1) <= 1 + 1e-6).all()
    assert np.allclose(np.linalg.norm(a2[:, 1], axis=1), 1, atol=1e-6)
    assert (np.abs(a2[:, 2]) <= 0.5).all()
    assert (a2[:, 3] >= 0).all() and (a2[:, 3].sum(axis=1) <= 1 + 1e-6).all()
    # the first sample of thread 0 from the reference stream: phi, theta, r as in rand.h
    r = Stream(7, 0)
    phi = np.arccos(np.float32(1.0) - np.float32(2.0) * r.f32())
    theta = np.float32(2.0) * np.float32(np.pi) * r.f32()
    rad = np.float32(r.f32()) ** np.float32(1.0 / 3.0)
    expected = [rad * np.cos(theta) * np.sin(phi), rad * np.sin(theta) * np.sin(phi), rad * np.cos(phi)]
    assert np.allclose(a3[0, 0], expected, atol=1e-6)


def test_a_state_expression_is_a_copy():
    """As Warp (whose state parameter is a reference, bound to a temporary here): `wp.randf(wp.rand_init(3))`
    draws from a copy of the state, whose advance is dropped."""

    @wp.kernel
    def draws(out: wp.array(dtype=float)):
        out[0] = wp.randf(wp.rand_init(3))
        out[1] = wp.randf(wp.rand_init(3))
        s = wp.rand_init(3)
        out[2] = wp.randf(s)
        out[3] = wp.randf(s)

    out = wp.zeros(4, dtype=float)
    wp.launch(draws, 1, [out])
    a = out.numpy()
    assert a[0] == a[1] == a[2] and a[3] != a[2]


def test_wrong_argument_count():
    @wp.kernel
    def bad(out: wp.array(dtype=float)):
        s = wp.rand_init(3)
        out[0] = wp.randf(s, 1.0)

    with pytest.raises(wp.CompileTypeError, match=r"wp\.randf\(\) takes 1 or 3 positional argument\(s\)"):
        wp.launch(bad, 1, [wp.zeros(1, dtype=float)])


@wp.kernel
def draws_in_a_loop(seed: int, count: int, out: wp.array(dtype=float)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    for j in range(count):
        out[tid * count + j] = wp.randf(state)  # the state advances across iterations (it is loop-carried)


def test_the_state_advances_across_loop_iterations():
    n, count = 4, 5
    out = wp.zeros(n * count, dtype=float)
    wp.launch(draws_in_a_loop, n, [11, count, out])
    for tid in range(n):
        r = Stream(11, tid)
        assert out.numpy()[tid * count:(tid + 1) * count].tolist() == [float(r.f32()) for _ in range(count)]


@wp.kernel
def draws_in_conditional_expressions(seed: int, x: wp.array(dtype=float), out: wp.array(dtype=float)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    hit = 0.0
    if x[tid] > 0.0 and wp.randf(state) >= 0.0:  # short-circuits: draws only where x > 0
        hit = 1.0
    a = wp.randf(state) if x[tid] > 1.0 else -1.0  # draws only where x > 1
    out[tid * 3] = hit
    out[tid * 3 + 1] = a
    out[tid * 3 + 2] = wp.randf(state)  # the next number of each thread's own stream


def test_the_state_advances_only_where_conditional_operands_run():
    x = np.array([2.0, 0.5, -1.0], np.float32)
    out = wp.zeros(9, dtype=float)
    wp.launch(draws_in_conditional_expressions, 3, [5, wp.array(x), out])
    expected = []
    for tid, xv in enumerate(x):
        r = Stream(5, tid)
        hit = 1.0 if xv > 0 and r.f32() >= 0 else 0.0
        a = float(r.f32()) if xv > 1 else -1.0
        expected += [hit, a, float(r.f32())]
    assert out.numpy().tolist() == expected


@wp.kernel
def poisson_counts(seed: int, lams: wp.array(dtype=float), out: wp.array(dtype=wp.uint32)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    for j in range(lams.shape[0]):
        out[tid * lams.shape[0] + j] = wp.poisson(state, lams[j])


def test_poisson_small_rates_follow_knuths_method_on_the_stream():
    lams = np.array([0.0, 0.5, 3.0], dtype=np.float32)
    n = 50
    out = wp.zeros(n * 3, dtype=wp.uint32)
    wp.launch(poisson_counts, n, [5, wp.array(lams, dtype=float), out])
    for tid in range(n):
        r = Stream(5, tid)
        expected = []
        for lam in lams:
            x, prod, enlam = 0, np.float32(1.0), np.exp(np.float32(-lam))
            while lam != 0:
                prod = np.float32(prod * r.f32())
                if prod <= enlam:
                    break
                x += 1
            expected.append(x)
        assert out.numpy()[3 * tid:3 * tid + 3].tolist() == expected


def test_poisson_large_rates_have_the_right_mean_and_variance():
    lams = np.array([25.0, 300.0], dtype=np.float32)
    n = 4000
    out = wp.zeros(n * 2, dtype=wp.uint32)
    wp.launch(poisson_counts, n, [9, wp.array(lams, dtype=float), out])
    counts = out.numpy().reshape(n, 2).astype(np.float64)
    # 4000 samples: the standard error of the mean is sqrt(lam / 4000), so 5 of them is a wide but failing bound
    for j, lam in enumerate(lams):
        assert abs(counts[:, j].mean() - lam) < 5 * np.sqrt(lam / n)
        assert abs(counts[:, j].var() / lam - 1) < 0.15


@wp.kernel
def noisy_scale(seed: int, x: wp.array(dtype=float), out: wp.array(dtype=float)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    acc = float(0.0)
    for j in range(3):
        acc += x[tid] * wp.randf(state)  # a uint32 state carried through a loop the adjoint replays
    out[tid] = acc


def test_gradients_flow_through_kernels_that_draw_random_numbers():
    n = 4
    x = wp.array(np.ones(n, dtype=np.float32), dtype=float, requires_grad=True)
    out = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(noisy_scale, n, [3, x, out])
    tape.backward(grads={out: wp.array(np.ones(n, dtype=np.float32), dtype=float)})
    for tid in range(n):
        r = Stream(3, tid)
        draws = [r.f32() for _ in range(3)]
        assert x.grad.numpy()[tid] == pytest.approx(float(np.float32(draws[0]) + draws[1] + draws[2]), rel=1e-6)
        assert out.numpy()[tid] == pytest.approx(float(sum(draws)), rel=1e-6)
