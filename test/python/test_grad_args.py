"""Gradients of kernels with by-value composite and struct arguments, of wp.copy under a Tape, and of arrays
given requires_grad after creation. References are independent of mlwarp: closed forms written out below and
central differences of numpy forwards (float64).

Semantics (Warp 1.19.0): the adjoint (wp.launch(..., adjoint=True)) or tangent (wp.jvp) of a vector, matrix,
quaternion, transform or struct argument is a value of the argument's type, zero when not given; the adjoint
of a by-value argument is not returned (it is passed by value), but a struct's array fields are references:
Tape.backward passes a struct whose array fields are their `.grad`s, so they receive gradients."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.core.errors import LaunchError

from grad_util import kernel_from_source

TYPES = {  # precision -> (scalar, vec3, mat33, quat, transform, numpy dtype, rtol of the closed forms)
    "float32": ("wp.float32", "wp.vec3", "wp.mat33", "wp.quat", "wp.transform", np.float32, 1e-5),
    "float64": ("wp.float64", "wp.vec3d", "wp.mat33d", "wp.quatd", "wp.transformd", np.float64, 1e-12),
}

# y[i] = dot(g, x[i]) + s.inner.scale * x[i].y + s.inner.w[i] * x[i].x^2 + s.bias[i]^2
STRUCT_SOURCE = """
import mlwarp as wp

@wp.struct
class Scaled:
    scale: {s}
    w: wp.array(dtype={s})

@wp.struct
class Outer:
    inner: Scaled
    bias: wp.array(dtype={s})

@wp.kernel
def k(x: wp.array(dtype={v}), g: {v}, s: Outer, y: wp.array(dtype={s})):
    i = wp.tid()
    p = x[i]
    y[i] = wp.dot(g, p) + s.inner.scale * p.y + s.inner.w[i] * p.x * p.x + s.bias[i] * s.bias[i]
"""


class StructCase:
    """The kernel of STRUCT_SOURCE in one precision, its inputs, and their closed-form derivatives."""

    def __init__(self, tmp_path, precision, n=5, seed=0):
        s, v, _, _, _, self.np_dtype, self.rtol = TYPES[precision]
        self.kernel = kernel_from_source(tmp_path, STRUCT_SOURCE.format(s=s, v=v))
        module = __import__(self.kernel.func.__module__)
        self.Outer, self.Scaled = module.Outer, module.Scaled
        self.vec = eval(v)
        rng = np.random.default_rng(seed)
        self.n = n
        self.x_np = rng.normal(size=(n, 3))
        self.g_np = rng.normal(size=3)
        self.scale_np = 0.75
        self.w_np = rng.normal(size=n)
        self.bias_np = rng.normal(size=n)
        self.seed_np = rng.normal(size=n)  # incoming adjoint of y

    def arrays(self, requires_grad=True):
        dt = self.np_dtype
        self.x = wp.array(self.x_np.astype(dt), dtype=self.vec, requires_grad=requires_grad)
        self.w = wp.array(self.w_np.astype(dt), requires_grad=requires_grad)
        self.bias = wp.array(self.bias_np.astype(dt), requires_grad=requires_grad)
        self.y = wp.zeros(self.n, dtype=self.w.dtype, requires_grad=requires_grad)
        self.g = self.vec(*self.g_np)
        inner = self.Scaled()
        inner.scale = self.scale_np
        inner.w = self.w
        self.s = self.Outer()
        self.s.inner = inner
        self.s.bias = self.bias
        return [self.x, self.g, self.s], [self.y]

    # -- independent references ----------------------------------------------------------------------------
    def y_ref(self):
        x = self.x_np
        return x @ self.g_np + self.scale_np * x[:, 1] + self.w_np * x[:, 0] ** 2 + self.bias_np ** 2

    def grads_ref(self):
        """d sum(seed * y) / d x, w, bias, written out."""
        c, x = self.seed_np, self.x_np
        dx = np.tile(self.g_np, (self.n, 1))
        dx[:, 1] += self.scale_np
        dx[:, 0] += 2 * self.w_np * x[:, 0]
        return dx * c[:, None], c * x[:, 0] ** 2, c * 2 * self.bias_np

    def seed(self):
        return wp.array(self.seed_np.astype(self.np_dtype))


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_tape_gradients_reach_x_and_struct_array_fields(tmp_path, precision):
    case = StructCase(tmp_path, precision)
    inputs, outputs = case.arrays()
    tape = wp.Tape()
    with tape:
        wp.launch(case.kernel, dim=case.n, inputs=inputs, outputs=outputs)
    np.testing.assert_allclose(case.y.numpy(), case.y_ref(), rtol=case.rtol, atol=case.rtol)
    tape.backward(grads={case.y: case.seed()})
    dx, dw, dbias = case.grads_ref()
    np.testing.assert_allclose(case.x.grad.numpy(), dx, rtol=case.rtol, atol=case.rtol)
    np.testing.assert_allclose(case.w.grad.numpy(), dw, rtol=case.rtol, atol=case.rtol)
    np.testing.assert_allclose(case.bias.grad.numpy(), dbias, rtol=case.rtol, atol=case.rtol)
    assert case.w in tape.gradients and case.bias in tape.gradients
    tape.zero()  # the struct's field gradients are the tape's too
    assert not case.w.grad.numpy().any() and not case.bias.grad.numpy().any() and not case.x.grad.numpy().any()


def test_struct_array_field_without_grad_is_skipped(tmp_path):
    """An array field without requires_grad gets a scratch adjoint; the other fields' gradients are right."""
    case = StructCase(tmp_path, "float64")
    inputs, outputs = case.arrays()
    case.s.bias = wp.array(case.bias_np)  # no gradient
    tape = wp.Tape()
    with tape:
        wp.launch(case.kernel, dim=case.n, inputs=inputs, outputs=outputs)
    tape.backward(grads={case.y: case.seed()})
    dx, dw, _ = case.grads_ref()
    np.testing.assert_allclose(case.x.grad.numpy(), dx, rtol=1e-12)
    np.testing.assert_allclose(case.w.grad.numpy(), dw, rtol=1e-12)
    assert case.s.bias.grad is None


@pytest.mark.parametrize("adj_g", [None, "given"])
def test_adjoint_launch_with_vec_adjoint_given_or_not(tmp_path, adj_g):
    """The adjoint of the by-value vec3 is a vec3 (zero when None); what is passed does not change the
    arrays' gradients. The struct's adjoint holds the arrays receiving its fields' gradients."""
    case = StructCase(tmp_path, "float32")
    inputs, outputs = case.arrays(requires_grad=False)
    adj_x, adj_w = wp.zeros_like(case.x), wp.zeros_like(case.w)
    adj_s = case.Outer()
    adj_s.inner = case.Scaled()
    adj_s.inner.w = adj_w  # adj_s.bias left None: a scratch array
    g_adj = None if adj_g is None else wp.vec3(5.0, -1.0, 2.0)
    wp.launch(case.kernel, dim=case.n, inputs=inputs, outputs=outputs, adjoint=True,
              adj_inputs=[adj_x, g_adj, adj_s], adj_outputs=[case.seed()])
    dx, dw, _ = case.grads_ref()
    np.testing.assert_allclose(adj_x.numpy(), dx, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(adj_w.numpy(), dw, rtol=1e-5, atol=1e-5)
    assert not case.y.numpy().any()  # the adjoint does not run the forward's stores


def test_adjoint_launch_bad_adjoints_name_the_argument(tmp_path):
    case = StructCase(tmp_path, "float32")
    inputs, outputs = case.arrays(requires_grad=False)

    def launch(adj_g, adj_s):
        wp.launch(case.kernel, dim=case.n, inputs=inputs, outputs=outputs, adjoint=True,
                  adj_inputs=[None, adj_g, adj_s], adj_outputs=[None])

    with pytest.raises(LaunchError) as e:
        launch(1.0, None)
    assert str(e.value) == ("Error launching kernel 'k', argument 'adj_g' expects vec3f but got a single value of type "
                            "float. Construct the value explicitly, e.g.: vec3f(...).")
    with pytest.raises(LaunchError) as e:
        launch(wp.vec3d(1.0, 2.0, 3.0), None)
    assert str(e.value) == ("Error launching kernel 'k', argument 'adj_g' expects vec3f, but passed value has type "
                            "vec3d.")
    with pytest.raises(LaunchError) as e:
        launch(None, 2.0)
    assert str(e.value) == ("Error launching kernel 'k', argument 'adj_s' expects a struct Outer, but passed value "
                            "has type float.")
    bad = case.Outer()
    bad.inner = case.Scaled()
    bad.inner.w = wp.zeros(case.n - 1, dtype=float)
    with pytest.raises(LaunchError) as e:
        launch(None, bad)
    assert str(e.value) == ("Error launching kernel 'k', argument 'adj_s.inner.w': its shape (4,) differs from the "
                            "shape (5,) of 's.inner.w'")
    for run in (lambda: wp.launch(case.kernel, dim=case.n, inputs=[case.x, case.g, 1.0], outputs=outputs,
                                  adjoint=True),
                lambda: wp.jvp(case.kernel, case.n, inputs=[case.x, case.g, 1.0], outputs=outputs)):
        with pytest.raises(LaunchError) as e:  # the argument itself is checked before its adjoint or tangent
            run()
        assert str(e.value) == ("Error launching kernel 'k', argument 's' expects a struct Outer, but passed value "
                                "has type float.")


def test_jvp_tangents_of_vec_and_struct_arguments(tmp_path):
    """dy = dot(dg, x) + dscale * x.y + dw * x.x^2 + 2 bias dbias + (g + scale e_y + 2 w x.x e_x) . dx"""
    case = StructCase(tmp_path, "float64")
    inputs, outputs = case.arrays(requires_grad=False)
    rng = np.random.default_rng(7)
    dx_np, dg_np, dw_np, dbias_np = rng.normal(size=(case.n, 3)), rng.normal(size=3), rng.normal(size=case.n), \
        rng.normal(size=case.n)
    dscale = -0.5
    x = case.x_np
    jac_x = np.tile(case.g_np, (case.n, 1))
    jac_x[:, 1] += case.scale_np
    jac_x[:, 0] += 2 * case.w_np * x[:, 0]
    expected = x @ dg_np + dscale * x[:, 1] + dw_np * x[:, 0] ** 2 + 2 * case.bias_np * dbias_np + \
        np.sum(jac_x * dx_np, axis=1)
    tan_s = case.Outer()
    tan_s.inner = case.Scaled()
    tan_s.inner.scale = dscale
    tan_s.inner.w = wp.array(dw_np)
    tan_s.bias = wp.array(dbias_np)
    dy = wp.zeros(case.n, dtype=wp.float64)
    wp.jvp(case.kernel, case.n, inputs=inputs, outputs=outputs,
           tan_inputs=[wp.array(dx_np, dtype=wp.vec3d), wp.vec3d(*dg_np), tan_s], tan_outputs=[dy])
    np.testing.assert_allclose(dy.numpy(), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(case.y.numpy(), case.y_ref(), rtol=1e-12)
    # None tangents are zero: only the vec3's tangent moves y
    dy.zero_()
    wp.jvp(case.kernel, case.n, inputs=inputs, outputs=outputs, tan_inputs=[None, wp.vec3d(*dg_np), None],
           tan_outputs=[dy])
    np.testing.assert_allclose(dy.numpy(), x @ dg_np, rtol=1e-12, atol=1e-12)
    with pytest.raises(LaunchError) as e:
        wp.jvp(case.kernel, case.n, inputs=inputs, outputs=outputs, tan_inputs=[None, None, case.g],
               tan_outputs=[dy])
    assert str(e.value) == ("Error launching kernel 'k', argument 'tan_s' expects a struct Outer, but passed value "
                            "has type vec3d.")


# -- matrices, quaternions, transforms by value: central differences of a numpy forward --------------------
# y[i] = dot(m x, quat_rotate(q, x)) + |transform_point(t, x)|^2
BY_VALUE_SOURCE = """
import mlwarp as wp

@wp.kernel
def k(x: wp.array(dtype={v}), m: {m}, q: {q}, t: {t}, y: wp.array(dtype={s})):
    i = wp.tid()
    p = x[i]
    y[i] = wp.dot(wp.mul(m, p), wp.quat_rotate(q, p)) + wp.length_sq(wp.transform_point(t, p))
"""


def quat_rotate_np(q, v):
    """Warp's documented formula (exact for any q, a rotation for unit q): v (2w^2 - 1) + 2w u x v + 2u (u.v)."""
    u, w = q[:3], q[3]
    return v * (2 * w * w - 1) + 2 * w * np.cross(u, v) + 2 * np.outer(v @ u, u)


def by_value_forward(x, m, q, tp, tq):
    return np.sum((x @ m.T) * quat_rotate_np(q, x), axis=1) + np.sum((quat_rotate_np(tq, x) + tp) ** 2, axis=1)


def by_value_inputs(precision, rng):
    s, v, m, q, t, np_dtype, _ = TYPES[precision]
    x = rng.normal(size=(4, 3))
    mat = rng.normal(size=(3, 3))
    quat = rng.normal(size=4)  # not unit: the formula's derivative is checked in every direction
    tp, tq = rng.normal(size=3), rng.normal(size=4)
    tq /= np.linalg.norm(tq)
    return x, mat, quat, tp, tq


def central(f, x0, h=1e-6):
    g = np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        e = np.zeros_like(x0)
        e[idx] = h
        g[idx] = np.sum(f(x0 + e) - f(x0 - e)) / (2 * h)
    return g


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_mat_quat_transform_arguments_gradient_and_tangent(tmp_path, precision):
    s, v, m, q, t, np_dtype, _ = TYPES[precision]
    k = kernel_from_source(tmp_path, BY_VALUE_SOURCE.format(s=s, v=v, m=m, q=q, t=t))
    vec, mat_t, quat_t, xform_t = eval(v), eval(m), eval(q), eval(t)
    rng = np.random.default_rng(3)
    x, mat, quat, tp, tq = by_value_inputs(precision, rng)
    tol = dict(rtol=2e-4, atol=2e-4) if precision == "float32" else dict(rtol=1e-7, atol=1e-8)
    args = [mat_t(*mat.reshape(-1)), quat_t(*quat), xform_t(vec(*tp), quat_t(*tq))]
    xa = wp.array(x.astype(np_dtype), dtype=vec, requires_grad=True)
    y = wp.zeros(len(x), dtype=eval(s), requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k, dim=len(x), inputs=[xa] + args, outputs=[y])
    np.testing.assert_allclose(y.numpy(), by_value_forward(x, mat, quat, tp, tq), **tol)
    tape.backward(grads={y: wp.ones(len(x), dtype=eval(s))})
    np.testing.assert_allclose(xa.grad.numpy(), central(lambda z: by_value_forward(z, mat, quat, tp, tq), x), **tol)

    # adjoint launch: adjoints of the by-value arguments given (values of their types) or not
    for adj_values in ([None, None, None], [mat_t(*np.ones(9)), quat_t(1.0, 2.0, 3.0, 4.0),
                                            xform_t(vec(1.0, 1.0, 1.0), quat_t(0.0, 0.0, 0.0, 1.0))]):
        adj_x = wp.zeros_like(xa, requires_grad=False)
        wp.launch(k, dim=len(x), inputs=[xa] + args, outputs=[y], adjoint=True, adj_inputs=[adj_x] + adj_values,
                  adj_outputs=[wp.ones(len(x), dtype=eval(s))])
        np.testing.assert_allclose(adj_x.numpy(), xa.grad.numpy(), rtol=1e-6 if precision == "float32" else 1e-14)

    # tangents along each by-value argument: the directional derivative of the numpy forward
    dmat, dquat, dtp, dtq = rng.normal(size=(3, 3)), rng.normal(size=4), rng.normal(size=3), rng.normal(size=4)
    h = 1e-6
    expected = (by_value_forward(x, mat + h * dmat, quat + h * dquat, tp + h * dtp, tq + h * dtq)
                - by_value_forward(x, mat - h * dmat, quat - h * dquat, tp - h * dtp, tq - h * dtq)) / (2 * h)
    dy = wp.zeros(len(x), dtype=eval(s))
    wp.jvp(k, len(x), inputs=[xa] + args, outputs=[wp.zeros_like(y)],
           tan_inputs=[None, mat_t(*dmat.reshape(-1)), quat_t(*dquat), xform_t(vec(*dtp), quat_t(*dtq))],
           tan_outputs=[dy])
    np.testing.assert_allclose(dy.numpy(), expected, **tol)


# -- wp.copy under a Tape ------------------------------------------------------------------------------------
SQ_SOURCE = """
import mlwarp as wp

@wp.kernel
def sq(b: wp.array(dtype={s}), l: wp.array(dtype={s})):
    i = wp.tid()
    wp.atomic_add(l, 0, b[i] * b[i])

@wp.kernel
def scale3(a: wp.array(dtype={s}), b: wp.array(dtype={s})):
    i = wp.tid()
    b[i] = {s}(3.0) * a[i]

@wp.kernel
def norms(v: wp.array(dtype={v}), l: wp.array(dtype={s})):
    i = wp.tid()
    wp.atomic_add(l, 0, wp.length_sq(v[i]))
"""


def copy_kernels(tmp_path, precision):
    s, v = TYPES[precision][:2]
    src = SQ_SOURCE.format(s=s, v=v)
    return [kernel_from_source(tmp_path, src, name) for name in ("sq", "scale3", "norms")]


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_copy_chain_gradient_reaches_src(tmp_path, precision):
    """a -(copy)-> b -(copy, offsets)-> c -(kernel)-> loss = sum(c^2): d loss / d a = 2a on the copied window."""
    sq, _, _ = copy_kernels(tmp_path, precision)
    dt = TYPES[precision][5]
    a_np = np.array([1.0, -2.0, 3.0, 0.5, 4.0, -1.5])
    a = wp.array(a_np.astype(dt), requires_grad=True)
    b = wp.zeros(6, dtype=a.dtype, requires_grad=True)
    c = wp.zeros(4, dtype=a.dtype, requires_grad=True)
    loss = wp.zeros(1, dtype=a.dtype, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.copy(b, a)
        wp.copy(c, b, dest_offset=1, src_offset=2, count=3)  # c = [0, a2, a3, a4]
        wp.launch(sq, dim=4, inputs=[c], outputs=[loss])
    assert loss.numpy()[0] == pytest.approx(np.sum(a_np[2:5] ** 2))
    tape.backward(loss)
    expected = np.zeros(6)
    expected[2:5] = 2 * a_np[2:5]
    np.testing.assert_allclose(a.grad.numpy(), expected)
    # the copies overwrote b and c: their copied windows hand the gradient on and are cleared
    np.testing.assert_allclose(b.grad.numpy(), 0.0)
    np.testing.assert_allclose(c.grad.numpy(), 0.0)
    tape.zero()
    assert not a.grad.numpy().any()


def test_copy_over_a_kernel_output_cuts_its_gradient(tmp_path):
    """b = 3 a0 (kernel), then wp.copy(b, a1) overwrites b; loss = sum(b^2) depends on a1 only."""
    sq, scale3, _ = copy_kernels(tmp_path, "float64")
    a0 = wp.array([1.0, 2.0], dtype=wp.float64, requires_grad=True)
    a1 = wp.array([-3.0, 0.25], dtype=wp.float64, requires_grad=True)
    b = wp.zeros(2, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scale3, dim=2, inputs=[a0], outputs=[b])
        wp.copy(b, a1)
        wp.launch(sq, dim=2, inputs=[b], outputs=[loss])
    tape.backward(loss)
    np.testing.assert_allclose(a1.grad.numpy(), [-6.0, 0.5])
    np.testing.assert_allclose(a0.grad.numpy(), [0.0, 0.0])


def test_copy_of_vectors_and_grad_copied_forward(tmp_path):
    _, _, norms = copy_kernels(tmp_path, "float32")
    v_np = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], dtype=np.float32)
    v = wp.array(v_np, dtype=wp.vec3, requires_grad=True)
    w = wp.zeros(2, dtype=wp.vec3, requires_grad=True)
    v.grad.fill_(0.5)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.copy(w, v)
        np.testing.assert_array_equal(w.grad.numpy(), 0.5)  # as in Warp, the copy copies the gradient too
        wp.launch(norms, dim=2, inputs=[w], outputs=[loss])
    tape.backward(loss)
    # w.grad = 0.5 + 2v, then added into v.grad (0.5): 1 + 2v
    np.testing.assert_allclose(v.grad.numpy(), 1.0 + 2 * v_np)


def test_clone_and_assign_are_copies_on_the_tape(tmp_path):
    """As in Warp, wp.clone and array.assign copy through wp.copy: b = clone(a); c.assign(b); loss = sum(c^2)
    gives d loss / d a = 2a."""
    sq, _, _ = copy_kernels(tmp_path, "float32")
    a_np = np.array([1.0, -2.0, 3.0])
    a = wp.array(a_np, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        b = wp.clone(a)
        c = wp.zeros(3, dtype=float, requires_grad=True)
        c.assign(b)
        wp.launch(sq, dim=3, inputs=[c], outputs=[loss])
    assert b.requires_grad and len(tape.launches) == 3
    tape.backward(loss)
    np.testing.assert_allclose(a.grad.numpy(), 2 * a_np)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "vec3d", "int32", "bool"])
def test_copy_backward_per_dtype(dtype):
    """The copy's backward adds dest.grad's window into src.grad and clears it (numbers, vectors; bfloat16
    added as floats); bool gradients cannot be added: they are copied back, as Warp does."""
    t = getattr(wp, dtype)
    shape = (4, 3) if dtype == "vec3d" else (4,)
    seed_np = {"bool": np.array([True, False, True, True]), "int32": np.array([2, -3, 0, 7])}.get(
        dtype, np.array([1.5, -2.0, 0.5, 3.0]))
    seed_np = np.repeat(seed_np[:, None], 3, axis=1) if dtype == "vec3d" else seed_np
    a = wp.zeros(4, dtype=t, requires_grad=True)
    b = wp.zeros(4, dtype=t, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.copy(b, a)
    a.grad.fill_(1)  # a gradient from elsewhere, which the copy's adds to (bfloat16: 1.0, not the bits 0x0001)
    seed = wp.array(seed_np, dtype=t)
    tape.backward(grads={b: seed})
    if dtype == "bool":
        np.testing.assert_array_equal(a.grad.numpy(), seed_np)
        np.testing.assert_array_equal(b.grad.numpy(), seed_np)
        return
    got = a.grad.numpy()
    if dtype == "bfloat16":  # bit patterns: 1 + seed is exact in bfloat16
        got = (got.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(got.reshape(shape), 1 + seed_np.reshape(shape))
    assert not b.grad.numpy().any()


def test_copy_outside_a_tape_or_without_gradients_records_nothing():
    a = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
    b = wp.zeros(2)
    tape = wp.Tape()
    with tape:
        wp.copy(b, a)  # b has no gradient: nothing to propagate
    assert tape.launches == []
    c = wp.zeros(2, requires_grad=True)
    wp.copy(c, a)
    assert tape.launches == []
    np.testing.assert_array_equal(c.numpy(), [1.0, 2.0])


# -- requires_grad on an existing array ------------------------------------------------------------------------
def test_requires_grad_set_later_allocates_grad_and_backward_fills_it(tmp_path):
    sq, _, norms = copy_kernels(tmp_path, "float32")
    a = wp.array([1.0, -2.0, 3.0], dtype=float)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    assert a.grad is None and a.requires_grad is False
    a.requires_grad = True
    assert a.requires_grad is True
    assert a.grad.shape == a.shape and a.grad.dtype is a.dtype and a.grad.device == a.device
    np.testing.assert_array_equal(a.grad.numpy(), 0.0)
    tape = wp.Tape()
    with tape:
        wp.launch(sq, dim=3, inputs=[a], outputs=[loss])
    tape.backward(loss)
    np.testing.assert_allclose(a.grad.numpy(), [2.0, -4.0, 6.0])
    kept = a.grad
    a.requires_grad = True  # already has one: kept
    assert a.grad is kept
    a.requires_grad = False  # as in Warp: the gradient array is dropped
    assert a.grad is None and a.requires_grad is False
    tape.zero()
    tape.backward(loss)  # skips `a` without an error
    assert a.grad is None
    v = wp.zeros(2, dtype=wp.mat22d)
    v.requires_grad = True
    assert v.grad.dtype is wp.mat22d and v.grad.numpy().shape == (2, 2, 2)


def test_bfloat16_fill_ones_assign_and_int_data_store_bfloat16_values():
    """fill_/ones/full/assign and int data of a bfloat16 array store the values' bfloat16 bits (Warp: 1.5 ->
    0x3fc0), not the values truncated to integers (which read back as denormals: a bfloat16 loss's seed of 1
    was 9e-41). Read as bits: .numpy() shows them as ml_dtypes.bfloat16 values where that is installed."""
    assert wp.ones(2, dtype=wp.bfloat16).numpy().view(np.uint16).tolist() == [0x3F80, 0x3F80]
    assert wp.full(2, -1.5, dtype=wp.bfloat16).numpy().view(np.uint16).tolist() == [0xBFC0, 0xBFC0]
    a = wp.zeros(3, dtype=wp.bfloat16)
    a.fill_(1.0 + 2.0 ** -9)  # halfway between 1 and the next bfloat16: rounds to even (1.0)
    assert a.numpy().view(np.uint16).tolist() == [0x3F80] * 3
    # numbers of any kind are values, uint16 data are bit patterns (what .numpy() gives back without ml_dtypes), as in Warp
    assert wp.array([1, 2], dtype=wp.bfloat16).numpy().view(np.uint16).tolist() == [0x3F80, 0x4000]
    assert wp.array(np.array([0x3FC0], dtype=np.uint16), dtype=wp.bfloat16).numpy().view(np.uint16).tolist() == [0x3FC0]
    b = wp.zeros(2, dtype=wp.bfloat16)
    b.assign([1.5, 2.0])
    assert b.numpy().view(np.uint16).tolist() == [0x3FC0, 0x4000]
    b.assign(np.array([1, -2], dtype=np.int32))
    assert b.numpy().view(np.uint16).tolist() == [0x3F80, 0xC000]
    b.assign(np.array([0x3FC0, 0x4000], dtype=np.uint16))
    assert b.numpy().view(np.uint16).tolist() == [0x3FC0, 0x4000]


def test_grad_assignment_checks_and_sets_requires_grad():
    a = wp.zeros(3)
    g = wp.ones(3)
    a.grad = g
    assert a.requires_grad is True and a.grad is g
    a.grad = None
    assert a.requires_grad is False and a.grad is None
    with pytest.raises(ValueError) as e:
        a.grad = wp.ones(4)
    assert str(e.value) == "The given gradient array is incompatible: expected shape (3,), got (4,)"
    with pytest.raises(ValueError) as e:
        a.grad = wp.ones(3, dtype=wp.float64)
    assert str(e.value) == "The given gradient array is incompatible: expected dtype float32, got float64"
    with pytest.raises(ValueError) as e:
        a.grad = np.ones(3, dtype=np.float32)
    assert str(e.value) == "The given gradient array is incompatible: expected a wp.array, got ndarray"
    assert a.grad is None


# -- struct array fields reached through a @wp.func, a copy with a field replaced, loops, branches ----------
FLOW_SOURCE = """
import mlwarp as wp

@wp.struct
class S:
    scale: float
    w: wp.array(dtype=float)

@wp.func
def term(s: S, i: int, v: float):
    return s.w[i] * v * s.scale

@wp.kernel
def through_func(x: wp.array(dtype=float), s: S, other: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = term(s, i, x[i])

@wp.kernel
def field_replaced(x: wp.array(dtype=float), s: S, other: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    q = s
    q.scale = 3.0
    r = s
    r.w = other
    y[i] = q.w[i] * x[i] * q.scale + r.w[i] * r.scale

@wp.kernel
def in_loop(x: wp.array(dtype=float), s: S, other: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    acc = float(0.0)
    for j in range(3):
        acc += s.w[j] * x[i]
    y[i] = acc

@wp.kernel
def loop_carried(x: wp.array(dtype=float), s: S, other: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    q = s
    acc = float(0.0)
    for j in range(other.shape[0] - 1):  # a dynamic loop carrying q
        q.scale = q.scale * 2.0
        acc += q.w[i] * x[i]
    y[i] = acc + q.w[i] * q.scale * x[i]

@wp.kernel
def while_carried(x: wp.array(dtype=float), s: S, other: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    q = s
    while q.scale < 10.0:  # 2 -> 4 -> 8 -> 16
        q.scale = q.scale * 2.0
    y[i] = q.w[i] * q.scale * x[i]

@wp.kernel
def branch_merged(x: wp.array(dtype=float), s: S, other: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    q = s
    if x[i] > 1.5:
        q.scale = 10.0
    y[i] = q.w[i] * q.scale * x[i]
"""

X_NP, W_NP, OTHER_NP, SCALE = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0]), np.array([4.0, -2.0, 1.0]), 2.0
BRANCH = np.where(X_NP > 1.5, 10.0, SCALE)  # branch_merged's scale per thread
FLOW_REFERENCES = {  # kernel -> (y, dsum(y)/dx, dsum(y)/dw, dsum(y)/dother, dy along a tangent dw), written out
    "through_func": (W_NP * X_NP * SCALE, W_NP * SCALE, X_NP * SCALE, np.zeros(3), lambda dw: dw * X_NP * SCALE),
    "field_replaced": (W_NP * X_NP * 3.0 + OTHER_NP * SCALE, W_NP * 3.0, X_NP * 3.0, np.full(3, SCALE),
                       lambda dw: dw * X_NP * 3.0),
    "in_loop": (np.sum(W_NP) * X_NP, np.full(3, np.sum(W_NP)), np.full(3, np.sum(X_NP)), np.zeros(3),
                lambda dw: np.sum(dw) * X_NP),
    # two iterations: acc = 2 w x, then scale = 4 * SCALE = 8
    "loop_carried": (10.0 * W_NP * X_NP, 10.0 * W_NP, 10.0 * X_NP, np.zeros(3), lambda dw: 10.0 * dw * X_NP),
    "while_carried": (16.0 * W_NP * X_NP, 16.0 * W_NP, 16.0 * X_NP, np.zeros(3), lambda dw: 16.0 * dw * X_NP),
    "branch_merged": (BRANCH * W_NP * X_NP, BRANCH * W_NP, BRANCH * X_NP, np.zeros(3), lambda dw: BRANCH * dw * X_NP),
}


@pytest.mark.parametrize("name", sorted(FLOW_REFERENCES))
def test_struct_array_field_gradients_through_funcs_copies_and_loops(tmp_path, name):
    k = kernel_from_source(tmp_path, FLOW_SOURCE, name)
    S = __import__(k.func.__module__).S
    y_ref, dx, dw, dother, along = FLOW_REFERENCES[name]
    x, w, other = (wp.array(a, dtype=float, requires_grad=True) for a in (X_NP, W_NP, OTHER_NP))
    y = wp.zeros(3, dtype=float, requires_grad=True)
    s = S(scale=SCALE, w=w)
    tape = wp.Tape()
    with tape:
        wp.launch(k, dim=3, inputs=[x, s, other], outputs=[y])
    np.testing.assert_allclose(y.numpy(), y_ref, rtol=1e-6)
    tape.backward(grads={y: wp.ones(3, dtype=float)})
    for got, want in ((x.grad, dx), (w.grad, dw), (other.grad, dother)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    # forward mode along w (the struct's array field): dy = (d y / d w) . dw, per thread
    dw_dir = np.array([1.0, -0.5, 0.25])
    tan_s = S(w=wp.array(dw_dir, dtype=float))
    dy = wp.zeros(3, dtype=float)
    wp.jvp(k, 3, inputs=[x, s, other], outputs=[wp.zeros(3, dtype=float)], tan_inputs=[None, tan_s, None],
           tan_outputs=[dy])
    np.testing.assert_allclose(dy.numpy(), along(dw_dir), rtol=1e-6)


OUTPUT_FIELD_SOURCE = """
import mlwarp as wp

@wp.struct
class Buf:
    out: wp.array(dtype=wp.vec3d, ndim=2)
    k: wp.float64

@wp.struct
class Holder:
    buf: Buf

@wp.kernel
def fill(x: wp.array(dtype=wp.float64), h: Holder):
    i, j = wp.tid()
    h.buf.out[i, j] = wp.vec3d(x[i], x[i] * x[i], h.buf.k * x[i]) * wp.float64(float(j + 1))

@wp.kernel
def loss(o: wp.array(dtype=wp.vec3d, ndim=2), l: wp.array(dtype=wp.float64)):
    i, j = wp.tid()
    wp.atomic_add(l, 0, wp.dot(o[i, j], wp.vec3d(1.0, 2.0, 3.0)))
"""


def test_gradient_through_a_nested_struct_output_field(tmp_path):
    """fill writes h.buf.out[i, j] = (j + 1) (x, x^2, k x); loss = sum dot(out, (1, 2, 3)).
    d loss / d x = sum_j (j + 1) (1 + 4x + 3k) = 3 (1 + 3k + 4x) for 2 columns; tangents written out."""
    fill, loss = (kernel_from_source(tmp_path, OUTPUT_FIELD_SOURCE, n) for n in ("fill", "loss"))
    module = __import__(fill.func.__module__)
    x_np, k = np.array([0.5, -1.0, 2.0]), 4.0
    x = wp.array(x_np, dtype=wp.float64, requires_grad=True)
    out = wp.zeros((3, 2), dtype=wp.vec3d, requires_grad=True)
    h = module.Holder(buf=module.Buf(out=out, k=k))
    total = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(fill, dim=(3, 2), inputs=[x, h])
        wp.launch(loss, dim=(3, 2), inputs=[out], outputs=[total])
    column = np.stack([x_np, x_np ** 2, k * x_np], axis=1)
    np.testing.assert_allclose(out.numpy(), np.stack([column, 2 * column], axis=1), rtol=1e-15)
    tape.backward(total)
    np.testing.assert_allclose(x.grad.numpy(), 3 * (1 + 3 * k + 4 * x_np), rtol=1e-14)
    dx, dk = np.array([1.0, 0.0, -1.0]), 1.0
    tan_out = wp.zeros((3, 2), dtype=wp.vec3d)
    wp.jvp(fill, (3, 2), inputs=[x, h],
           tan_inputs=[wp.array(dx, dtype=wp.float64), module.Holder(buf=module.Buf(out=tan_out, k=dk))])
    tangent = np.stack([dx, 2 * x_np * dx, k * dx + dk * x_np], axis=1)
    np.testing.assert_allclose(tan_out.numpy(), np.stack([tangent, 2 * tangent], axis=1), rtol=1e-15)


SWAP_SOURCE = """
import mlwarp as wp

@wp.struct
class S:
    scale: float
    w: wp.array(dtype=float)

@wp.kernel
def k(s: S, t: S, n: int, y: wp.array(dtype=float)):
    i = wp.tid()
    r = s
    r.w = t.w
    acc = float(0.0)
    for j in range(n):
        acc += r.w[i]
        r.w = s.w
    y[i] = acc + r.w[i] * t.scale
"""


def test_array_field_swapped_by_a_loop_runs_forward_and_refuses_its_adjoint(tmp_path):
    """Which array r.w is changes with the iteration: the kernel runs (forward values against numpy), and its
    adjoint is refused with a message naming the read, instead of a wrong gradient."""
    k = kernel_from_source(tmp_path, SWAP_SOURCE)
    S = __import__(k.func.__module__).S
    sw, tw = np.array([1.0, 2.0, 3.0]), np.array([100.0, 200.0, 300.0])
    s = S(scale=1.0, w=wp.array(sw, dtype=float, requires_grad=True))
    t = S(scale=10.0, w=wp.array(tw, dtype=float, requires_grad=True))
    y = wp.zeros(3, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k, dim=3, inputs=[s, t, 2], outputs=[y])
    np.testing.assert_array_equal(y.numpy(), tw + sw + 10.0 * sw)  # t.w, then s.w, then s.w * 10
    with pytest.raises(wp.CompileError) as e:
        tape.backward(grads={y: wp.ones(3, dtype=float)})
    path = k.func.__code__.co_filename  # line 18: the read after the loop, the first the reverse sweep meets
    assert str(e.value) == (f"kernel 'k' cannot be differentiated: loc(\"{path}\":18:18): cannot differentiate an "
                            f"access to an array that is neither a kernel argument nor a field of a struct argument "
                            f"(a field that a loop or branch sets to another array has no single adjoint array)")
