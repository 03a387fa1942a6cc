"""Backward/forward time ratio of a 1e6-element reduction, loss = sum(x^2 + sin x).

The forward kernel atomically adds each element's term into one loss value;
the backward is its adjoint launch (`adjoint=True`, what Tape.backward runs):
it reads adj_loss and writes adj_x[i] = adj_loss * (2 x + cos x). Times are
the best of several runs after a warm-up (compilation excluded). The gradient
is checked against the closed form before timing. Also prints numpy's time
for the same forward/gradient arithmetic, as a reference.

    python bench/grad_reduction.py [n]
"""

from __future__ import annotations

import sys
import time

import numpy as np

import mlwarp as wp


@wp.kernel
def loss_kernel(x: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    wp.atomic_add(loss, 0, v * v + wp.sin(v))


def best_of(fn, repeats=7):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(n: int = 1_000_000):
    rng = np.random.default_rng(0)
    xv = rng.uniform(-1, 1, n).astype(np.float32)
    x = wp.array(xv, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)

    def forward():
        loss.zero_()
        wp.launch(loss_kernel, dim=n, inputs=[x], outputs=[loss])

    def backward():
        x.grad.zero_()
        loss.grad.fill_(1.0)
        wp.launch(loss_kernel, dim=n, inputs=[x], outputs=[loss], adj_inputs=[x.grad], adj_outputs=[loss.grad],
                  adjoint=True)

    forward()
    backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * xv + np.cos(xv), rtol=1e-5, atol=1e-6)
    t_fwd = best_of(forward)
    t_bwd = best_of(backward)
    t_np_fwd = best_of(lambda: np.sum(xv * xv + np.sin(xv)))
    t_np_bwd = best_of(lambda: 2 * xv + np.cos(xv))
    print(f"n = {n}, threads = {wp.config.cpu_threads or 'all'}")
    print(f"forward  {t_fwd * 1e3:8.3f} ms   (numpy {t_np_fwd * 1e3:8.3f} ms, ratio numpy/mlwarp {t_np_fwd / t_fwd:5.2f})")
    print(f"backward {t_bwd * 1e3:8.3f} ms   (numpy {t_np_bwd * 1e3:8.3f} ms, ratio numpy/mlwarp {t_np_bwd / t_bwd:5.2f})")
    print(f"backward / forward time ratio: {t_bwd / t_fwd:.2f}")


if __name__ == "__main__":
    main(int(float(sys.argv[1])) if len(sys.argv) > 1 else 1_000_000)
