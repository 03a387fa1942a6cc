"""The interop guide's third optimisation example: a torch.autograd.Function wraps the Warp kernel that
evaluates the Rosenbrock function; its backward launches the kernel's adjoint (adjoint=True). Adam
moves 1500 points towards the minimum at (1, 1).

    python examples/interop_torch_autograd_function.py [iterations]
"""

import sys

import numpy as np
import torch

import mlwarp as wp


# Define the Rosenbrock function
@wp.func
def rosenbrock(x: float, y: float):
    return (1.0 - x) ** 2.0 + 100.0 * (y - x**2.0) ** 2.0


@wp.kernel
def eval_rosenbrock(
    xs: wp.array(dtype=wp.vec2),
    # outputs
    z: wp.array(dtype=float),
):
    i = wp.tid()
    x = xs[i]
    z[i] = rosenbrock(x[0], x[1])


class Rosenbrock(torch.autograd.Function):
    @staticmethod
    def forward(ctx, xy, num_points):
        ctx.xy = wp.from_torch(xy, dtype=wp.vec2, requires_grad=True)
        ctx.num_points = num_points

        # allocate output
        ctx.z = wp.zeros(num_points, requires_grad=True)

        wp.launch(kernel=eval_rosenbrock, dim=ctx.num_points, inputs=[ctx.xy], outputs=[ctx.z])

        return wp.to_torch(ctx.z)

    @staticmethod
    def backward(ctx, adj_z):
        # map incoming Torch grads to our output variables
        ctx.z.grad = wp.from_torch(adj_z)

        wp.launch(
            kernel=eval_rosenbrock,
            dim=ctx.num_points,
            inputs=[ctx.xy],
            outputs=[ctx.z],
            adj_inputs=[ctx.xy.grad],
            adj_outputs=[ctx.z.grad],
            adjoint=True,
        )

        # return adjoint w.r.t. inputs
        return (wp.to_torch(ctx.xy.grad), None)


def optimize(iterations=10000, num_points=1500, learning_rate=5e-2, seed=42):
    """Returns the points after `iterations` Adam steps (a numpy (num_points, 2) array)."""
    torch_device = wp.device_to_torch(wp.get_device())

    rng = np.random.default_rng(seed)
    xy = torch.tensor(rng.normal(size=(num_points, 2)), dtype=torch.float32, requires_grad=True,
                      device=torch_device)
    opt = torch.optim.Adam([xy], lr=learning_rate)

    for _ in range(iterations):
        # step
        opt.zero_grad()
        z = Rosenbrock.apply(xy, num_points)
        z.backward(torch.ones_like(z))

        opt.step()
    return xy.numpy(force=True)


if __name__ == "__main__":
    xy_np = optimize(int(sys.argv[1]) if len(sys.argv) > 1 else 10000)
    # minimum at (1, 1)
    print(np.mean(xy_np, axis=0))
