"""The interop guide's four PyTorch optimisation examples (examples/interop_torch_*.py) converge, and the
Rosenbrock ones follow, step for step, the same Adam run with the function written in PyTorch."""

import importlib.util
import os

import numpy as np
import torch

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _example(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _torch_rosenbrock_adam(iterations, num_points=1500, learning_rate=5e-2, seed=42):
    """The reference: the guide's loop with the Rosenbrock function in PyTorch itself."""
    rng = np.random.default_rng(seed)
    xy = torch.tensor(rng.normal(size=(num_points, 2)), dtype=torch.float32, requires_grad=True)
    opt = torch.optim.Adam([xy], lr=learning_rate)
    for _ in range(iterations):
        opt.zero_grad()
        z = (1.0 - xy[:, 0]) ** 2.0 + 100.0 * (xy[:, 1] - xy[:, 0] ** 2.0) ** 2.0
        z.backward(torch.ones_like(z))
        opt.step()
    return xy.detach().numpy()


def _rosenbrock(p):
    return (1.0 - p[:, 0]) ** 2 + 100.0 * (p[:, 1] - p[:, 0] ** 2) ** 2


def test_adam_on_from_torch_arrays_with_tape():
    losses = _example("interop_torch_adam_from_torch").optimize(iterations=200)
    assert losses[0] > 100.0  # 100 random points: about 2 per point
    assert losses[-1] < 1e-5
    assert all(b < a for a, b in zip(losses[:50], losses[1:51]))  # steady descent at the start


def test_adam_on_to_torch_variant():
    losses = _example("interop_torch_adam_to_torch").optimize(iterations=200)
    assert losses[0] > 100.0
    assert losses[-1] < 1e-5


def test_autograd_function_gradient_matches_torch():
    ex = _example("interop_torch_autograd_function")
    xy = torch.tensor([[0.5, -1.0], [2.0, 3.0], [1.0, 1.0]], requires_grad=True)
    z = ex.Rosenbrock.apply(xy, 3)
    z.backward(torch.tensor([1.0, 2.0, 3.0]))
    ref = xy.detach().clone().requires_grad_(True)
    zr = (1.0 - ref[:, 0]) ** 2.0 + 100.0 * (ref[:, 1] - ref[:, 0] ** 2.0) ** 2.0
    zr.backward(torch.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(z.detach().numpy(), zr.detach().numpy(), rtol=1e-6)
    # Twice the gradient, exactly as Warp 1.19 gives for this example: from_torch(xy, requires_grad=True)
    # makes xy.grad the array's grad, the adjoint launch accumulates into it, and the tensor that backward
    # returns aliases xy.grad, so autograd adds it to itself. Adam is scale-invariant: it still converges.
    np.testing.assert_allclose(xy.grad.numpy(), 2.0 * ref.grad.numpy(), rtol=1e-6)


def test_autograd_function_optimisation_converges_like_torch():
    points = _example("interop_torch_autograd_function").optimize(iterations=300)
    np.testing.assert_allclose(points, _torch_rosenbrock_adam(300), atol=1e-5)
    start = np.random.default_rng(42).normal(size=(1500, 2))
    assert _rosenbrock(start).mean() > 300.0
    assert _rosenbrock(points).mean() < 1.0  # towards the minimum at (1, 1)
    assert np.linalg.norm(points - 1.0, axis=1).mean() < 0.5 * np.linalg.norm(start - 1.0, axis=1).mean()


def test_custom_op_under_torch_compile_converges_like_torch():
    points = _example("interop_torch_custom_op").optimize(iterations=60)
    np.testing.assert_allclose(points, _torch_rosenbrock_adam(60), atol=1e-5)
    start = np.random.default_rng(42).normal(size=(1500, 2))
    assert _rosenbrock(points).mean() < _rosenbrock(start).mean() / 10.0
