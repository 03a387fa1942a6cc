"""Backward/forward time ratio of a 1e6-element reduction, loss = sum(x^2 + sin x).

The forward kernel atomically adds each element's term into one loss value;
the backward is its adjoint launch (`adjoint=True`, what Tape.backward runs):
it reads adj_loss and writes adj_x[i] = adj_loss * (2 x + cos x). Times are
the best of several runs after a warm-up (compilation excluded). The gradient
is checked against the closed form before timing. Also prints numpy's time
for the same forward/gradient arithmetic, as a reference, and Warp's (the same
kernel and adjoint launch, warp-lang 1.19.0) when it is installed.

    python bench/grad_reduction.py [n]
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import emit_warp, print_table, run_warp, save_json, warp_mode  # noqa: E402

if warp_mode():
    import warp as wp

    wp.config.quiet = True
else:
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
    if warp_mode():
        return emit_warp({"forward_ms": t_fwd * 1e3, "backward_ms": t_bwd * 1e3})
    t_np_fwd = best_of(lambda: np.sum(xv * xv + np.sin(xv)))
    t_np_bwd = best_of(lambda: 2 * xv + np.cos(xv))
    print(f"n = {n}, threads = {wp.config.cpu_threads or 'all'}")
    print(f"forward  {t_fwd * 1e3:8.3f} ms   (numpy {t_np_fwd * 1e3:8.3f} ms, ratio numpy/mlwarp {t_np_fwd / t_fwd:5.2f})")
    print(f"backward {t_bwd * 1e3:8.3f} ms   (numpy {t_np_bwd * 1e3:8.3f} ms, ratio numpy/mlwarp {t_np_bwd / t_bwd:5.2f})")
    print(f"backward / forward time ratio: {t_bwd / t_fwd:.2f}")
    warp = run_warp(__file__, str(n)) or {}
    rows = [("forward: atomic sum of x^2 + sin x", t_fwd * 1e3, t_np_fwd * 1e3, warp.get("forward_ms")),
            ("backward: adjoint launch", t_bwd * 1e3, t_np_bwd * 1e3, warp.get("backward_ms"))]
    lines = print_table(f"Gradient of sum(x^2 + sin x), n = {n}", "ms", rows, higher_is_better=False)
    save_json("grad_reduction", {"table": lines, "data": {"rows": rows}})


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--warp"]
    main(int(float(args[0])) if args else 1_000_000)
