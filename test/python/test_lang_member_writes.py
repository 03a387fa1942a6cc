"""Writes to members of composite and struct locals (`u[j] = ...`, `v.y += ...`, `m[r, c] = ...`,
`s.field = ...`) inside loops and branches: a composite local is an SSA value, so each such write rebinds
the local, which loops must carry and branches must merge. Each kernel is checked against numpy (or
hand-computed values); gradients against central differences of the numpy forward."""

import numpy as np

import mlwarp as wp


@wp.struct
class Body:
    mass: float
    vel: wp.vec3


def run1(kernel, *inputs, dtype=float, n=8):
    out = wp.zeros(n, dtype=dtype)
    wp.launch(kernel, dim=1, inputs=[*inputs, out])
    return out.numpy()


@wp.kernel
def static_range_component_writes(out: wp.array(dtype=wp.vec3)):
    u = wp.vec3(1.0, 2.0, 3.0)
    for j in range(3):
        u[j] = u[j] * float(j + 1)
    out[0] = u


def test_static_range_component_writes():
    np.testing.assert_array_equal(run1(static_range_component_writes, dtype=wp.vec3, n=1)[0], [1.0, 4.0, 9.0])


@wp.kernel
def dynamic_range_attribute_and_augmented(n: int, out: wp.array(dtype=wp.vec3)):
    v = wp.vec3(0.0)
    for j in range(n):
        v.y = v.y + 1.0
        v[0] += 2.0
        v.z *= 0.5
    out[0] = v


def test_dynamic_range_attribute_and_augmented_writes():
    got = run1(dynamic_range_attribute_and_augmented, 3, dtype=wp.vec3, n=1)[0]
    np.testing.assert_array_equal(got, [6.0, 3.0, 0.0])


@wp.kernel
def while_and_nested_matrix_writes(out: wp.array(dtype=wp.mat33)):
    m = wp.mat33(0.0)
    r = int(0)
    while r < 3:
        for c in range(3):
            m[r, c] = float(r * 3 + c)
        m[r][r] += 10.0
        r += 1
    out[0] = m


def test_while_and_nested_loop_matrix_writes():
    expected = np.arange(9, dtype=np.float32).reshape(3, 3) + 10 * np.eye(3, dtype=np.float32)
    np.testing.assert_array_equal(run1(while_and_nested_matrix_writes, dtype=wp.mat33, n=1)[0], expected)


@wp.kernel
def struct_local_fields_in_loop(n: int, out: wp.array(dtype=float)):
    b = Body()
    for j in range(n):
        b.mass = b.mass + 1.0
        b.vel.z = b.vel.z + 0.5
        b.vel[0] -= 1.0
    out[0] = b.mass
    out[1] = b.vel[0]
    out[2] = b.vel.z


def test_struct_local_fields_in_loop():
    np.testing.assert_array_equal(run1(struct_local_fields_in_loop, 4, n=3), [4.0, -4.0, 2.0])


@wp.kernel
def writes_in_branches_inside_loop(n: int, out: wp.array(dtype=wp.vec3)):
    w = wp.vec3(1.0)
    for j in range(n):
        if j % 2 == 0:
            w.y = w.y * 2.0
        else:
            w[0] -= 1.0
        if j == 3:
            w.z = 7.0
    out[0] = w


def test_writes_in_branches_inside_loop():
    # j = 0..4: y doubles at 0, 2, 4; x drops at 1, 3; z set at 3
    np.testing.assert_array_equal(run1(writes_in_branches_inside_loop, 5, dtype=wp.vec3, n=1)[0], [-1.0, 8.0, 7.0])


@wp.kernel
def loop_with_break_and_continue(out: wp.array(dtype=wp.vec4)):
    v = wp.vec4(0.0)
    for j in range(10):
        if j == 1:
            continue
        if j == 5:
            break
        v[j % 4] = float(j)
    out[0] = v


def test_member_writes_in_loop_with_break_and_continue():
    # j = 0, 2, 3, 4 write; v[0] is overwritten by j = 4
    np.testing.assert_array_equal(run1(loop_with_break_and_continue, dtype=wp.vec4, n=1)[0], [4.0, 0.0, 2.0, 3.0])


@wp.func
def scaled_components(v: wp.vec3, n: int):
    u = v
    k = int(0)
    while k < n:
        u[k % 3] = u[k % 3] * 2.0
        k += 1
    return u


@wp.kernel
def member_writes_in_func(out: wp.array(dtype=wp.vec3)):
    out[0] = scaled_components(wp.vec3(1.0, 1.0, 1.0), 4)


def test_member_writes_in_a_func_while_loop():
    np.testing.assert_array_equal(run1(member_writes_in_func, dtype=wp.vec3, n=1)[0], [4.0, 2.0, 2.0])


@wp.kernel
def transform_setter_in_loop(n: int, out: wp.array(dtype=wp.transform)):
    t = wp.transform_identity()
    for j in range(n):
        wp.transform_set_translation(t, wp.vec3(float(j), 0.0, 0.0))
    out[0] = t


def test_transform_setter_in_loop():
    got = run1(transform_setter_in_loop, 3, dtype=wp.transform, n=1)[0]
    np.testing.assert_array_equal(got, [2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


@wp.kernel
def array_element_field_write_in_loop(bodies: wp.array(dtype=Body), n: int):
    i = wp.tid()
    for j in range(n):
        bodies[i].vel.x = bodies[i].vel.x + 1.0
        bodies[i].mass = bodies[i].mass * 2.0


def test_array_element_writes_in_loop_go_to_memory():
    bodies = wp.zeros(3, dtype=Body)
    wp.launch(array_element_field_write_in_loop, dim=3, inputs=[bodies, 4])
    got = bodies.numpy()
    np.testing.assert_array_equal(got["vel"][:, 0], [4.0, 4.0, 4.0])
    np.testing.assert_array_equal(got["mass"], [0.0, 0.0, 0.0])


# -- gradients through member writes in loops, against central differences of a numpy forward ----------------
@wp.kernel
def component_recurrence(x: wp.array(dtype=wp.vec3), n: int, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    u = wp.vec3d(x[i])
    for j in range(n):
        u[j % 3] = u[j % 3] * u[(j + 1) % 3] + wp.float64(0.5)
    m = wp.mat22d(wp.float64(0.0))
    for r in range(2):
        m[r, r] += u[r]
    y[i] = u[0] + wp.float64(2.0) * u[1] + wp.float64(3.0) * u[2] + m[0, 0] * m[1, 1]


def component_recurrence_np(x, n):
    u = np.array(x, np.float64)
    for j in range(n):
        u[j % 3] = u[j % 3] * u[(j + 1) % 3] + 0.5
    return u[0] + 2 * u[1] + 3 * u[2] + u[0] * u[1]


def test_gradient_through_component_writes_in_loop():
    rng = np.random.default_rng(7)
    xs = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
    n = 5
    x = wp.array(xs, dtype=wp.vec3, requires_grad=True)
    y = wp.zeros(5, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(component_recurrence, dim=5, inputs=[x, n, y])
    np.testing.assert_allclose(y.numpy(), [component_recurrence_np(v, n) for v in xs], rtol=1e-12)
    tape.backward(grads={y: wp.ones(5, dtype=wp.float64)})
    eps = 1e-6
    fd = np.zeros((5, 3))
    for i in range(5):
        for c in range(3):
            hi, lo = xs[i].astype(np.float64), xs[i].astype(np.float64)
            hi[c] += eps
            lo[c] -= eps
            fd[i, c] = (component_recurrence_np(hi, n) - component_recurrence_np(lo, n)) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), fd, rtol=1e-5, atol=1e-6)


@wp.kernel
def struct_field_accumulation(x: wp.array(dtype=float), n: int, y: wp.array(dtype=float)):
    i = wp.tid()
    b = Body()
    b.mass = x[i]
    for j in range(n):
        b.vel.y = b.vel.y + b.mass * float(j)
        b.mass = b.mass * 0.5
    y[i] = b.vel.y * b.vel.y


def test_gradient_through_struct_field_writes_in_loop():
    # vel.y = x * sum_j j / 2^j, so y = (c x)^2 and dy/dx = 2 c^2 x
    n = 4
    c = sum(j / 2.0 ** j for j in range(n))
    xs = np.array([0.5, -1.0, 2.0], np.float32)
    x = wp.array(xs, requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(struct_field_accumulation, dim=3, inputs=[x, n, y])
    np.testing.assert_allclose(y.numpy(), (c * xs) ** 2, rtol=1e-6)
    tape.backward(grads={y: wp.ones(3, dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), 2 * c * c * xs, rtol=1e-6)
