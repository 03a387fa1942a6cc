"""warp.optim's gradient-descent optimizers (mlwarp.optim.SGD, Adam) against numpy transcriptions of their
documented update rules (PyTorch's torch.optim.SGD / Adam, which Warp's follow), over several steps, for arrays
of scalars, vectors and matrices; their state handling and Warp's errors."""

import subprocess
import sys

import numpy as np
import pytest

import mlwarp as wp
import mlwarp.optim


def _sgd_reference(p, grads, lr, momentum, dampening, weight_decay, nesterov):
    """torch.optim.SGD's documented algorithm, in float64."""
    p = p.astype(np.float64).copy()
    b = None
    for g in grads:
        g = g.astype(np.float64) + weight_decay * p
        if momentum != 0.0:
            b = g.copy() if b is None else momentum * b + (1.0 - dampening) * g
            g = g + momentum * b if nesterov else b
        p -= lr * g
    return p


def _adam_reference(p, grads, lr, beta1, beta2, eps):
    """torch.optim.Adam's documented algorithm (no weight decay, no amsgrad), in float64."""
    p = p.astype(np.float64).copy()
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        g = g.astype(np.float64)
        m = beta1 * m + (1.0 - beta1) * g
        v = beta2 * v + (1.0 - beta2) * g * g
        p -= lr * (m / (1.0 - beta1**t)) / (np.sqrt(v / (1.0 - beta2**t)) + eps)
    return p


def _numpy_dtype(dtype):
    return {wp.float16: np.float16, wp.float64: np.float64}.get(wp.types.type_scalar_type(dtype), np.float32)


def _params_and_grads(dtype, count, steps, seed):
    rng = np.random.default_rng(seed)
    shape = (count, *getattr(dtype, "_shape_", ()))
    p0 = rng.uniform(-1.0, 1.0, shape).astype(_numpy_dtype(dtype))
    grads = [rng.uniform(-1.0, 1.0, shape).astype(_numpy_dtype(dtype)) for _ in range(steps)]
    return p0, grads


@pytest.mark.parametrize("momentum, dampening, weight_decay, nesterov", [
    (0.0, 0.0, 0.0, False), (0.9, 0.0, 0.0, False), (0.9, 0.3, 0.01, False), (0.8, 0.0, 0.05, True)])
@pytest.mark.parametrize("dtype", [wp.float32, wp.float64, wp.vec3, wp.mat22d])
def test_sgd_follows_the_documented_update(dtype, momentum, dampening, weight_decay, nesterov):
    p0, grads = _params_and_grads(dtype, 5, 4, seed=1)
    params = wp.array(p0, dtype=dtype)
    opt = mlwarp.optim.SGD([params], lr=0.1, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                           nesterov=nesterov)
    for g in grads:
        opt.step([wp.array(g, dtype=dtype)])
    expected = _sgd_reference(p0, grads, 0.1, momentum, dampening, weight_decay, nesterov)
    tolerance = 1e-12 if wp.types.type_scalar_type(dtype) == wp.float64 else 1e-6
    np.testing.assert_allclose(params.numpy(), expected, rtol=tolerance, atol=tolerance)
    assert opt.t == len(grads)


@pytest.mark.parametrize("dtype", [wp.float32, wp.float64, wp.vec3, wp.vec2d, wp.mat22])
def test_adam_follows_the_documented_update(dtype):
    p0, grads = _params_and_grads(dtype, 6, 5, seed=2)
    params = wp.array(p0, dtype=dtype)
    opt = mlwarp.optim.Adam([params], lr=0.05, betas=(0.8, 0.99), eps=1e-6)
    for g in grads:
        opt.step([wp.array(g, dtype=dtype)])
    expected = _adam_reference(p0, grads, 0.05, 0.8, 0.99, 1e-6)
    tolerance = 1e-12 if wp.types.type_scalar_type(dtype) == wp.float64 else 2e-6
    np.testing.assert_allclose(params.numpy(), expected, rtol=tolerance, atol=tolerance)


def test_adam_keeps_float32_moments_for_float16_parameters():
    p0, grads = _params_and_grads(wp.float16, 8, 3, seed=3)
    params = wp.array(p0, dtype=wp.float16)
    opt = mlwarp.optim.Adam([params], lr=0.01)
    assert opt.m[0].dtype == wp.float32 and opt.v[0].dtype == wp.float32
    for g in grads:
        opt.step([wp.array(g, dtype=wp.float16)])
    # the moments are exact float32 averages of the float16 gradients; the parameters are rounded to float16
    g = [x.astype(np.float64) for x in grads]
    m = sum(0.1 * 0.9 ** (len(g) - 1 - i) * g[i] for i in range(len(g)))
    np.testing.assert_allclose(opt.m[0].numpy(), m, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(params.numpy().astype(np.float64), _adam_reference(p0, grads, 0.01, 0.9, 0.999, 1e-8),
                               atol=2e-3)
    opt.set_params([params])  # the same parameters: the moments are kept, not re-zeroed
    np.testing.assert_allclose(opt.m[0].numpy(), m, rtol=1e-6, atol=1e-7)

    vec_opt = mlwarp.optim.Adam([wp.zeros(2, dtype=wp.vec3h)])
    assert vec_opt.m[0].dtype == wp.vec3f


def test_adam_minimizes_a_quadratic_through_a_tape():
    @wp.kernel
    def energy(x: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
        i = wp.tid()
        d = x[i] - wp.vec3(1.0, -2.0, 0.5)
        wp.atomic_add(out, 0, wp.dot(d, d))

    x = wp.zeros(4, dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    opt = mlwarp.optim.Adam([x], lr=0.05)
    for _ in range(300):
        out.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(energy, dim=4, inputs=[x, out])
        tape.backward(out)
        opt.step([x.grad])
        tape.zero()
    np.testing.assert_allclose(x.numpy(), np.tile([1.0, -2.0, 0.5], (4, 1)), atol=1e-3)


def test_reset_internal_state_restarts_the_run():
    p0, grads = _params_and_grads(wp.float32, 3, 2, seed=4)
    for opt_class, kwargs in ((mlwarp.optim.SGD, {"momentum": 0.9}), (mlwarp.optim.Adam, {})):
        params = wp.array(p0, dtype=float)
        opt = opt_class([params], lr=0.1, **kwargs)
        for g in grads:
            opt.step([wp.array(g, dtype=float)])
        params.assign(p0)
        opt.reset_internal_state()
        assert opt.t == 0
        opt.step([wp.array(grads[0], dtype=float)])
        if opt_class is mlwarp.optim.SGD:
            expected = _sgd_reference(p0, grads[:1], 0.1, 0.9, 0.0, 0.0, False)
        else:
            expected = _adam_reference(p0, grads[:1], 0.1, 0.9, 0.999, 1e-8)
        np.testing.assert_allclose(params.numpy(), expected, rtol=1e-6)


def test_set_params_keeps_fitting_buffers_and_replaces_others():
    a = wp.zeros(4, dtype=float)
    opt = mlwarp.optim.SGD([a], momentum=0.5)
    buffer = opt.b[0]
    opt.set_params([wp.zeros(4, dtype=float)])
    assert opt.b[0] is buffer
    opt.set_params([wp.zeros(5, dtype=float), wp.zeros(2, dtype=wp.vec3)])
    assert opt.b[0].shape == (5,) and opt.b[1].dtype == wp.vec3


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_optimizer_errors_are_warps(name):
    opt_class = getattr(mlwarp.optim, name)
    with pytest.raises(RuntimeError, match=rf"{name} parameters must be set before calling step\(\), got None"):
        opt_class().step([])
    opt = opt_class([wp.zeros(2, dtype=wp.float32)])
    with pytest.raises(TypeError, match=f"{name} gradient dtype must match parameter dtype float32, got int32"):
        opt.step([wp.zeros(2, dtype=wp.int32)])
    with pytest.raises(ValueError, match=rf"{name} gradient shape must match parameter shape \(2,\), got \(2, 1\)"):
        opt.step([wp.zeros((2, 1), dtype=wp.float32)])
    with pytest.raises(RuntimeError, match=f"Unsupported dtype for Warp {name} optimizer: int32"):
        o = opt_class([wp.zeros(2, dtype=wp.int32)])
        o.step([wp.zeros(2, dtype=wp.int32)])


def test_optimizer_rejects_non_contiguous_parameters():
    base = wp.zeros((4, 2), dtype=float)
    column = base[:, 0]
    opt = mlwarp.optim.SGD([column])
    with pytest.raises(ValueError, match="optimizer arrays must be contiguous"):
        opt.step([wp.zeros(4, dtype=float)])


def test_import_paths():
    assert wp.optim is mlwarp.optim
    assert wp.optim.linear.cg is mlwarp.optim.linear.cg
    # importing the package before anything else of mlwarp (its kernels must not need the loaded API)
    code = "import mlwarp.optim; from mlwarp.optim import Adam, SGD; from mlwarp.optim.linear import cg; print('ok')"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.stdout.strip() == "ok", result.stderr
