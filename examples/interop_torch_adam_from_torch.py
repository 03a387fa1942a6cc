"""The interop guide's first optimisation example: PyTorch's Adam drives points to the origin, the loss
and its gradient come from a Warp kernel recorded on a wp.Tape; the optimisation variables are torch
tensors wrapped with wp.from_torch (their .grad is the Warp arrays' .grad).

    python examples/interop_torch_adam_from_torch.py
"""

import torch

import mlwarp as wp


@wp.kernel()
def loss(xs: wp.array(dtype=float, ndim=2), l: wp.array(dtype=float)):
    tid = wp.tid()
    wp.atomic_add(l, 0, xs[tid, 0] ** 2.0 + xs[tid, 1] ** 2.0)


def optimize(iterations=500, seed=0, verbose=False):
    """Returns the loss after each step (the guide's loop, with a seeded start)."""
    torch.manual_seed(seed)
    # indicate requires_grad so that Warp can accumulate gradients in the grad buffers
    xs = torch.randn(100, 2, requires_grad=True)
    l = torch.zeros(1, requires_grad=True)
    opt = torch.optim.Adam([xs], lr=0.1)

    wp_xs = wp.from_torch(xs)
    wp_l = wp.from_torch(l)

    tape = wp.Tape()
    with tape:
        # record the loss function kernel launch on the tape
        wp.launch(loss, dim=len(xs), inputs=[wp_xs], outputs=[wp_l], device=wp_xs.device)

    losses = [l.item()]
    for i in range(iterations):
        tape.zero()
        tape.backward(loss=wp_l)  # compute gradients: xs.grad is filled by Warp
        opt.step()  # update xs (and thereby wp_xs)

        # only needed to report the loss (the optimisation needs the gradient, not the loss value)
        wp_l.zero_()
        wp.launch(loss, dim=len(xs), inputs=[wp_xs], outputs=[wp_l], device=wp_xs.device)
        losses.append(l.item())
        if verbose and (i % 50 == 0 or i == iterations - 1):
            print(f"{i}\tloss: {l.item()}")
    return losses


if __name__ == "__main__":
    losses = optimize(verbose=True)
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.3g}")
