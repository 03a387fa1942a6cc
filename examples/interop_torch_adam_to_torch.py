"""The interop guide's second optimisation example: the optimisation variables are Warp arrays; one
wp.to_torch call hands them to PyTorch's Adam, which reads the Warp gradients through the shared .grad.

    python examples/interop_torch_adam_to_torch.py
"""

import numpy as np
import torch

import mlwarp as wp


@wp.kernel()
def loss(xs: wp.array(dtype=float, ndim=2), l: wp.array(dtype=float)):
    tid = wp.tid()
    wp.atomic_add(l, 0, xs[tid, 0] ** 2.0 + xs[tid, 1] ** 2.0)


def optimize(iterations=500, seed=0, verbose=False):
    """Returns the loss after each step."""
    rng = np.random.default_rng(seed)
    # initialize the optimization variables in Warp
    xs = wp.array(rng.standard_normal((100, 2)), dtype=wp.float32, requires_grad=True)
    l = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    # just a single wp.to_torch call is needed, Adam optimizes using the Warp array gradients
    opt = torch.optim.Adam([wp.to_torch(xs)], lr=0.1)

    tape = wp.Tape()
    with tape:
        wp.launch(loss, dim=len(xs), inputs=[xs], outputs=[l], device=xs.device)

    losses = [float(l.numpy()[0])]
    for i in range(iterations):
        tape.zero()
        tape.backward(loss=l)
        opt.step()

        l.zero_()
        wp.launch(loss, dim=len(xs), inputs=[xs], outputs=[l], device=xs.device)
        losses.append(float(l.numpy()[0]))
        if verbose and (i % 50 == 0 or i == iterations - 1):
            print(f"{i}\tloss: {l.numpy()[0]}")
    return losses


if __name__ == "__main__":
    losses = optimize(verbose=True)
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.3g}")
