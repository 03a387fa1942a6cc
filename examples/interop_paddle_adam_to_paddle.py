"""The interop guide's second Paddle optimisation example: the optimisation variables are Warp arrays; one
wp.to_paddle call hands them to Paddle's Adam, which reads the Warp gradients through the shared .grad.

    python examples/interop_paddle_adam_to_paddle.py
"""

import numpy as np
import paddle

import mlwarp as wp

# init warp context at beginning (the guide's line: optional, mlwarp initialises itself lazily)
wp.context.init()


@wp.kernel()
def loss(xs: wp.array(dtype=float, ndim=2), l: wp.array(dtype=float)):
    tid = wp.tid()
    wp.atomic_add(l, 0, xs[tid, 0] ** 2.0 + xs[tid, 1] ** 2.0)


def optimize(iterations=500, seed=0, verbose=False):
    """Returns the points' start and end, and the loss after each step."""
    # initialize the optimization variables in Warp
    xs = wp.array(np.random.default_rng(seed).standard_normal((100, 2)), dtype=wp.float32, requires_grad=True)
    l = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    start = xs.numpy().copy()
    # just a single wp.to_paddle call is needed, Adam optimizes using the Warp array gradients
    opt = paddle.optimizer.Adam(learning_rate=0.1, parameters=[wp.to_paddle(xs)])

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
    return start, xs.numpy().copy(), losses


if __name__ == "__main__":
    _, _, losses = optimize(verbose=True)
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.3g}")
