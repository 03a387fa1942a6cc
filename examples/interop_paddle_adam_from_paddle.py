"""The interop guide's first Paddle optimisation example: Paddle's Adam drives points to the origin, the loss
and its gradient come from a Warp kernel recorded on a wp.Tape; the optimisation variables are paddle tensors
wrapped with wp.from_paddle (their .grad is the Warp arrays' .grad). On the CPU, as the guide's code runs
wherever its tensors are.

    python examples/interop_paddle_adam_from_paddle.py
"""

import paddle

import mlwarp as wp

# init warp context at beginning (the guide's line: optional, mlwarp initialises itself lazily)
wp.context.init()


@wp.kernel()
def loss(xs: wp.array(dtype=float, ndim=2), l: wp.array(dtype=float)):
    tid = wp.tid()
    wp.atomic_add(l, 0, xs[tid, 0] ** 2.0 + xs[tid, 1] ** 2.0)


def optimize(iterations=500, seed=0, verbose=False):
    """Returns the points' start and end, and the loss after each step (the guide's loop, seeded)."""
    paddle.seed(seed)
    # indicate requires_grad so that Warp can accumulate gradients in the grad buffers
    xs = paddle.randn([100, 2])
    xs.stop_gradient = False
    l = paddle.zeros([1])
    l.stop_gradient = False
    opt = paddle.optimizer.Adam(learning_rate=0.1, parameters=[xs])
    start = xs.numpy().copy()

    wp_xs = wp.from_paddle(xs)
    wp_l = wp.from_paddle(l)

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
    return start, xs.numpy(), losses


if __name__ == "__main__":
    _, _, losses = optimize(verbose=True)
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.3g}")
